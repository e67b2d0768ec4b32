"""The build exercises of 03_positional_encoding, 04_qkv and 05_scale: their references are right
(checked against the definitions, not against the solutions), and the slips a learner makes are
caught with a message that says what differs. (Solutions, stubs, hints and odd answers are
covered for every build exercise by test_build_exercises.py and test_exercise_answers.py.)"""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course import attention, positional
from transformer_course.exercises import positional as pe_ex
from transformer_course.exercises import qkv as qkv_ex
from transformer_course.exercises import scale as scale_ex


@pytest.mark.parametrize("k", [-7, 0, 1, 13])
def test_the_shift_reference_moves_rows_k_positions_on(k):
    table = positional.sinusoidal_encoding(64, 10)  # (64, C)
    positions = torch.tensor([7, 9, 20, 40])  # (N,)
    shifted = pe_ex._shift_by_rope(table[positions], k)  # (N, C)
    torch.testing.assert_close(shifted, table[positions + k], atol=1e-5, rtol=0)


def test_the_variance_reference_measures_d_k():
    generator = torch.Generator().manual_seed(0)
    # (N, d_k) each
    q, k = (torch.randn(20_000, 64, generator=generator, dtype=torch.float64) for _ in range(2))
    assert scale_ex._variance_by_einsum(q, k, False) == pytest.approx(64, rel=0.05)
    assert scale_ex._variance_by_einsum(q, k, True) == pytest.approx(1, rel=0.05)


def _sines_then_cosines(context_length, d_model):
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (C/2,)
    angles = positions / 10000 ** (two_i / d_model)  # (T, C/2)
    return torch.cat([angles.sin(), angles.cos()], dim=1).float()  # (T, C) not interleaved


SLIPS = [
    (pe_ex.check_sinusoidal_table, _sines_then_cosines, "entries differ"),
    (
        pe_ex.check_sinusoidal_table,
        lambda T, d: positional.sinusoidal_encoding(T, d).double(),
        None,
    ),
    (pe_ex.check_shift_encoding, lambda pe, k: pe_ex.shift_encoding(pe, -k), "entries differ"),
    (
        qkv_ex.check_split_heads,
        lambda x, h: x.view(x.shape[0], h, x.shape[1], -1),
        "entries differ",
    ),
    (qkv_ex.check_split_heads, lambda x, h: x.view(*x.shape[:2], h, -1), "has shape"),
    (
        qkv_ex.check_merge_heads,
        lambda x: x.transpose(1, 2).view(x.shape[0], x.shape[2], -1),
        "raised RuntimeError",
    ),
    (qkv_ex.check_merge_heads, lambda x: x.reshape(x.shape[0], x.shape[2], -1), "entries differ"),
    (
        scale_ex.check_scaled_attention_weights,
        lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1], dim=-1),
        "entries differ",
    ),
    (
        scale_ex.check_scaled_attention_weights,
        lambda q, k: torch.softmax(q @ k.transpose(-2, -1), dim=-1),
        "differ",
    ),
    (
        scale_ex.check_score_variance_function,
        lambda q, k, scaled: (q * k).sum(-1).var().item(),
        "expected",
    ),
]


@pytest.mark.parametrize("check, slip, message", SLIPS)
def test_slips_are_caught_or_a_float64_table_is_fine(check, slip, message):
    feedback = check(slip, seed=0)
    # A float64 table is the same table: the kind (floating point) is what counts.
    if message is None:
        assert feedback.correct, str(feedback)
    else:
        assert not feedback.correct and message in feedback.message, str(feedback)


def test_split_and_merge_solutions_are_inverse():
    x = torch.randn(2, 5, 12)  # (B, T, C)
    torch.testing.assert_close(qkv_ex.merge_heads(qkv_ex.split_heads(x, 3)), x)
    torch.testing.assert_close(qkv_ex.split_heads(x, 3), attention.split_heads(x, 3))


def test_the_concept_checkers_keep_their_answers():
    assert pe_ex.check_wavelength(2 * math.pi * 10000 ** (10 / 64))
    assert qkv_ex.check_head_of_column(3, column=37, d_model=96, n_heads=8)
    assert qkv_ex.check_split_shape((2, 8, 10, 12))
    assert scale_ex.check_score_variance(100)
    for check in (
        pe_ex.check_wavelength,
        qkv_ex.check_head_of_column,
        qkv_ex.check_split_shape,
        qkv_ex.check_projection_params,
        scale_ex.check_score_variance,
    ):
        assert check(..., hint=True).is_hint


def test_the_projected_variance_question():
    assert scale_ex.check_projected_variance("below")
    assert scale_ex.check_projected_variance("Below 1")
    for wrong in ("about 1", "above"):
        feedback = scale_ex.check_projected_variance(wrong)
        assert feedback.answered and not feedback.correct
    for odd in (0.23, True, ["below"], "below or above", "no idea"):
        feedback = scale_ex.check_projected_variance(odd)
        assert not feedback.correct and "one of" in feedback.message
    assert not scale_ex.check_projected_variance(...).answered
    assert scale_ex.check_projected_variance(..., hint=True).is_hint
