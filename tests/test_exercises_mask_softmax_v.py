"""The build exercises of 06_mask, 07_softmax and 08_v_attention catch the slips a learner makes,
and their solutions agree with PyTorch itself (the generic checks are in test_build_exercises.py)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from transformer_course.exercises.mask import check_padding_mask
from transformer_course.exercises.softmax import check_stable_softmax, check_temperature_softmax
from transformer_course.exercises.solutions.softmax import stable_softmax
from transformer_course.exercises.solutions.v_attention import causal_attention
from transformer_course.exercises.v_attention import (
    check_causal_attention,
    check_mha_params,
    check_multi_head_attention,
)


def _rejected(feedback) -> bool:
    return feedback.answered and not feedback.correct and "seed=" in feedback.message


def test_padding_mask_slips_are_caught():
    def off_by_one(lengths, S):
        return (torch.arange(S)[None, :] <= lengths[:, None])[:, None, None, :]  # (B, 1, 1, S)

    def flat(lengths, S):
        return torch.arange(S)[None, :] < lengths[:, None]  # (B, S): the two middle axes missing

    def as_float(lengths, S):
        return (torch.arange(S)[None, :] < lengths[:, None]).float()[:, None, None, :]

    for slip in (off_by_one, flat, as_float):
        assert _rejected(check_padding_mask(slip, seed=0)), slip.__name__
    assert "shape" in check_padding_mask(flat, seed=0).message
    assert "dtype" in check_padding_mask(as_float, seed=0).message


def test_stable_softmax_slips_are_caught():
    def textbook(scores):
        return torch.exp(scores) / torch.exp(scores).sum(-1, keepdim=True)  # overflows

    def torch_softmax(scores):
        return torch.softmax(scores, dim=-1)  # NaN on the fully masked row

    for slip in (textbook, torch_softmax):
        feedback = check_stable_softmax(slip, seed=0)
        assert _rejected(feedback) and "NaN" in feedback.message
    big = torch.tensor([[1000.0, 999.0, float("-inf")], [float("-inf")] * 3])  # (2, 3)
    torch.testing.assert_close(stable_softmax(big)[0], torch.softmax(big[0], -1))
    assert torch.equal(stable_softmax(big)[1], torch.zeros(3))


def test_temperature_softmax_slips_are_caught():
    def multiplies(scores, temperature):
        return torch.softmax(scores * temperature, dim=-1)

    def textbook(scores, temperature):
        e = torch.exp(scores / temperature)
        return e / e.sum(-1, keepdim=True)  # overflows at τ = 0.01

    def ignores_temperature(scores, temperature):
        return torch.softmax(scores, dim=-1)

    for slip in (multiplies, textbook, ignores_temperature):
        assert _rejected(check_temperature_softmax(slip, seed=0)), slip.__name__


def test_attention_solutions_equal_pytorch():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 7, generator=g) for _ in range(3))  # 3 × (B, H, T, D)
    torch.testing.assert_close(
        causal_attention(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True)
    )


def test_attention_slips_are_caught():
    def no_mask(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v

    def wrong_scale(q, k, v):
        return F.scaled_dot_product_attention(
            q, k, v, is_causal=True, scale=1 / math.sqrt(q.shape[-2])
        )

    def no_output_projection(layer, x):
        return (
            F.scaled_dot_product_attention(
                *(
                    p(x).view(*x.shape[:2], layer.n_heads, -1).transpose(1, 2)
                    for p in (layer.q_proj, layer.k_proj, layer.v_proj)
                ),
                is_causal=True,
            )
            .transpose(1, 2)
            .reshape(x.shape)
        )

    assert _rejected(check_causal_attention(no_mask, seed=0))
    assert _rejected(check_causal_attention(wrong_scale, seed=0))
    assert _rejected(check_multi_head_attention(no_output_projection, seed=0))


def test_mha_params_does_not_depend_on_heads():
    assert check_mha_params(16_640, d_model=64, n_heads=8).correct
    assert not check_mha_params(2 * 16_640, d_model=64, n_heads=8).correct
    assert check_mha_params(..., hint=True).is_hint
