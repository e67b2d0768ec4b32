"""The exercises of 09_transformer_block and 10_logits_and_loss beyond what
tests/test_build_exercises.py checks for every build exercise: the typical wrong answers are
caught with a message that helps, the questions accept the right number only, and the
capstone's checker names the first stage of the learner's GPT that differs."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course.exercises.block import (
    check_layer_norm_from_scratch,
    check_post_norm_warmup,
    check_pre_norm_block,
)
from transformer_course.exercises.build import show_solution
from transformer_course.exercises.logits import (
    check_cross_entropy,
    check_cross_entropy_loss,
    check_logit_std,
    check_tied_logits,
    check_untrained_loss,
)
from transformer_course.exercises.my_gpt import check_my_gpt, check_your_gpt_trains
from transformer_course.exercises.solutions.my_gpt import MyGPT
from transformer_course.exercises.solutions.training import one_training_step
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
    assert check_untrained_loss(8.49) and not check_untrained_loss(math.log10(3771))
    assert check_cross_entropy(-math.log(0.25)) and not check_cross_entropy(0.25)
    assert check_logit_std(0.16) and not check_logit_std(0.02) and not check_logit_std(0.02 * 64)
    assert not check_logit_std(...).answered
    assert check_post_norm_warmup("trains") and check_post_norm_warmup(" Trains ")
    assert not check_post_norm_warmup("stalls") and not check_post_norm_warmup(True)
    assert not check_post_norm_warmup("yes") and not check_post_norm_warmup(...).answered
    for check in (
        check_untrained_loss,
        check_cross_entropy,
        check_logit_std,
        check_post_norm_warmup,
    ):
        assert check(..., hint=True).is_hint


def test_logit_std_matches_an_untrained_gpt():
    """The number check_logit_std expects is what an untrained GPT's logits show (notebook 10)."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=5000, tie_weights=False)).eval()
    logits, _ = model(torch.randint(0, 5000, (4, 16)))
    assert check_logit_std(round(logits.std().item(), 2))


def test_untrained_loss_accepts_the_notebooks_reasoning():
    """ln V + σ²/2 (8.49 for V = 3,771, σ = 0.71) and the measured start (8.51) pass; ln V alone is
    told that it is a uniform model's loss."""
    for right in (8.49, 8.51, 8.53, math.log(3771) + 0.25):
        assert check_untrained_loss(right), right
    uniform = check_untrained_loss(math.log(3771))
    assert not uniform and "same probability" in uniform.message
    assert not check_untrained_loss(math.log(100_070)) and not check_untrained_loss(8.24 + 0.71)
    assert not check_untrained_loss(...).answered


def test_untrained_loss_matches_an_untrained_tied_gpt():
    """The number the question expects is what notebook 10 measures on the default tied model."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=3771)).eval()
    ids = torch.randint(0, 3771, (8, 17), generator=torch.Generator().manual_seed(0))
    _, loss = model(ids[:, :-1], ids[:, 1:])
    assert check_untrained_loss(round(loss.item(), 2)), loss.item()


class _Stub(torch.nn.Module):
    """The notebook's stub: a constructor and a forward whose bodies are `...`."""

    def __init__(self, vocab_size, context_length, d_model, n_heads, n_layers):
        super().__init__()
        ...

    def forward(self, idx, targets=None): ...


def test_my_gpt_solution_passes_and_stub_is_not_answered():
    for seed in (0, 1, 12345):
        assert check_my_gpt(MyGPT, seed=seed), seed
    for stub in (_Stub, ..., None):
        feedback = check_my_gpt(stub)
        assert not feedback.answered and "Not answered yet" in str(feedback)
    assert "class MyGPT" in show_solution(check_my_gpt)
    assert check_my_gpt(MyGPT, hint=True).is_hint


class _NoPositions(MyGPT):
    def add_positions(self, h):
        return h


class _PostNorm(MyGPT):
    def attention_step(self, k, h):
        norm = self.blocks[k]["norm1"]
        attended = super().attention_step(k, h) - h  # the sub-layer's output, on LayerNorm(h)
        return torch.nn.functional.layer_norm(h + attended, h.shape[-1:], norm.weight, norm.bias)


class _NoFinalNorm(MyGPT):
    def final_layer_norm(self, h):
        return h


class _UnscaledTokens(MyGPT):
    def token_vectors(self, idx):
        return self.token_embedding(idx)


class _FeedForwardWithoutNorm(MyGPT):
    def feed_forward_step(self, k, h):
        ffn = self.blocks[k]["ffn"]
        return h + ffn["down"](torch.relu(ffn["up"](h)))


class _HeadWithBias(MyGPT):
    def output_logits(self, h):
        return super().output_logits(h) + 0.1


class _ForwardSkipsFinalNorm(MyGPT):
    def forward(self, idx, targets=None):
        h = self.add_positions(self.token_vectors(idx))
        for k in range(len(self.blocks)):
            h = self.feed_forward_step(k, self.attention_step(k, h))
        logits = self.output_logits(h)
        loss = (
            None
            if targets is None
            else torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        )
        return logits, loss


@pytest.mark.parametrize(
    "wrong, stage",
    [
        (_UnscaledTokens, "the first stage that differs is embedding"),
        (_NoPositions, "the first stage that differs is + positions"),
        (_PostNorm, "the first stage that differs is block 0 attention"),
        (_FeedForwardWithoutNorm, "the first stage that differs is block 0 feed-forward"),
        (_NoFinalNorm, "the first stage that differs is final norm"),
        (_HeadWithBias, "the first stage that differs is head"),
        (_ForwardSkipsFinalNorm, "every stage matches, but forward's logits"),
    ],
)
def test_my_gpt_names_the_first_stage_that_differs(wrong, stage):
    feedback = check_my_gpt(wrong, seed=0)
    assert not feedback and stage in feedback.message and "seed=0" in feedback.message, feedback


def test_my_gpt_says_which_parameter_name_is_missing():
    class Renamed(MyGPT):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.last_norm = self.final_norm
            del self.final_norm

    feedback = check_my_gpt(Renamed, seed=0)
    assert not feedback and "no parameter named 'final_norm.weight'" in feedback.message, feedback


def _periodic_stream(n: int, period: int = 7) -> torch.Tensor:
    return torch.arange(n) % period  # (n,) a text whose next token is always predictable


def test_your_gpt_trains_with_your_step():
    kwargs = dict(
        train_ids=_periodic_stream(2000),
        val_ids=_periodic_stream(300),
        vocab_size=7,
        decode=lambda ids: " ".join(map(str, ids)),
        prompt=[0, 1, 2],
        steps=60,
    )
    feedback = check_your_gpt_trains(MyGPT, one_training_step, **kwargs)
    assert feedback and "3 4 5 6 0" in feedback.message, feedback

    def no_update(model, optimizer, x, y, lr, grad_clip):
        return model(x, y)[1].item()  # forward only: the weights never change

    stalled = check_your_gpt_trains(MyGPT, no_update, **kwargs)
    assert not stalled and stalled.answered and "should fall" in stalled.message, stalled
    assert not check_your_gpt_trains(_Stub, one_training_step, **kwargs).answered
    assert not check_your_gpt_trains(MyGPT, ..., **kwargs).answered
