"""The exercises of 09_transformer_block and 10_logits_and_loss beyond what
tests/test_build_exercises.py checks for every build exercise: the typical wrong answers are
caught with a message that helps, and the questions accept the right number only."""

from __future__ import annotations

import math

import torch

from transformer_course.exercises.block import (
    check_layer_norm_from_scratch,
    check_post_norm_warmup,
    check_pre_norm_block,
)
from transformer_course.exercises.logits import (
    check_cross_entropy,
    check_cross_entropy_loss,
    check_logit_std,
    check_tied_logits,
    check_uniform_loss,
)
from transformer_course.model import GPT, GPTConfig


def _centred(x):
    return x - x.mean(dim=-1, keepdim=True)


def test_layer_norm_mistakes_are_caught():
    def unbiased(x, gamma, beta, eps):
        return gamma * _centred(x) / torch.sqrt(x.var(dim=-1, keepdim=True) + eps) + beta

    def eps_outside(x, gamma, beta, eps):
        return gamma * _centred(x) / (x.std(dim=-1, unbiased=False, keepdim=True) + eps) + beta

    # E[x²] − E[x]² loses digits when the mean is large
    def one_pass_variance(x, gamma, beta, eps):
        var = x.pow(2).mean(dim=-1, keepdim=True) - x.mean(dim=-1, keepdim=True) ** 2
        return gamma * _centred(x) / torch.sqrt(var + eps) + beta

    def without_gain(x, gamma, beta, eps):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps)

    for wrong in (unbiased, eps_outside, one_pass_variance, without_gain):
        feedback = check_layer_norm_from_scratch(wrong, seed=3)
        assert not feedback and "largest error" in feedback.message, (wrong.__name__, feedback)

    def fused(x, gamma, beta, eps):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], gamma, beta, eps)

    assert check_layer_norm_from_scratch(fused, seed=3)


def test_pre_norm_block_mistakes_are_caught():
    def not_causal(block, x):
        x = x + block.attn(block.norm1(x))
        return x + block.ffn(block.norm2(x))

    def post_norm(block, x):
        x = block.norm1(x + block.attn(x, causal=True))
        return block.norm2(x + block.ffn(x))

    def norms_swapped(block, x):
        x = x + block.attn(block.norm2(x), causal=True)
        return x + block.ffn(block.norm1(x))

    def norm_on_the_residual(block, x):
        x = block.norm1(x) + block.attn(block.norm1(x), causal=True)
        return x + block.ffn(block.norm2(x))

    for wrong in (not_causal, post_norm, norms_swapped, norm_on_the_residual):
        assert not check_pre_norm_block(wrong, seed=0), wrong.__name__


def test_cross_entropy_mistakes_are_caught():
    def log_of_softmax(logits, targets):  # log(0) = −inf once the logits reach ±100
        probs = torch.softmax(logits, dim=-1)
        return -torch.log(probs.gather(-1, targets.unsqueeze(-1))).mean()

    def summed(logits, targets):
        return -torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).sum()

    def python_float(logits, targets):
        return float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten()))

    assert not any(check_cross_entropy_loss(log_of_softmax, seed=seed) for seed in range(4))
    assert not check_cross_entropy_loss(summed, seed=0)
    feedback = check_cross_entropy_loss(python_float, seed=0)
    assert not feedback and "torch.Tensor" in feedback.message


def test_tied_logits_mistakes_are_caught():
    def without_final_norm(model, idx):
        h = model.embed(idx)
        for block in model.blocks:
            h = block(h)
        return h @ model.token_embedding.weight.T

    def without_positions(model, idx):
        h = model.token_embedding(idx)
        for block in model.blocks:
            h = block(h)
        return model.final_norm(h) @ model.token_embedding.weight.T

    assert not any(check_tied_logits(without_final_norm, seed=seed) for seed in range(3))
    assert not any(check_tied_logits(without_positions, seed=seed) for seed in range(3))


def test_questions():
    assert check_uniform_loss(math.log(3771)) and not check_uniform_loss(math.log10(3771))
    assert check_cross_entropy(-math.log(0.25)) and not check_cross_entropy(0.25)
    assert check_logit_std(0.16) and not check_logit_std(0.02) and not check_logit_std(0.02 * 64)
    assert not check_logit_std(...).answered
    assert check_post_norm_warmup("trains") and check_post_norm_warmup(" Trains ")
    assert not check_post_norm_warmup("stalls") and not check_post_norm_warmup(True)
    assert not check_post_norm_warmup("yes") and not check_post_norm_warmup(...).answered
    for check in (check_uniform_loss, check_cross_entropy, check_logit_std, check_post_norm_warmup):
        assert check(..., hint=True).is_hint


def test_logit_std_matches_an_untrained_gpt():
    """The number check_logit_std expects is what an untrained GPT's logits show (notebook 10)."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=5000, tie_weights=False)).eval()
    logits, _ = model(torch.randint(0, 5000, (4, 16)))
    assert check_logit_std(round(logits.std().item(), 2))
