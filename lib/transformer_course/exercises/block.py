"""Exercises of 09_transformer_block."""

from __future__ import annotations

import torch

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_tensor


@checker
def check_ffn_parameters(answer: object, d_model: int = 64, d_ff: int = 256) -> Feedback:
    """How many parameters has FeedForward(d_model, d_ff) (weights and biases of both layers)?"""
    expected = d_model * d_ff + d_ff + d_ff * d_model + d_model
    return check_value(
        answer,
        expected,
        f"{d_model}·{d_ff} + {d_ff} (W1, b1) + {d_ff}·{d_model} + {d_model} (W2, b2) = {expected:,}.",
        "count both weight matrices AND both bias vectors: W1 is d_model × d_ff with d_ff biases, "
        "W2 is d_ff × d_model with d_model biases.",
    )


@checker
def check_layernorm_by_hand(answer: object, x=(1.0, 2.0, 3.0, 4.0), eps: float = 1e-5) -> Feedback:
    """LayerNorm (gain 1, shift 0) of the vector ``x``, as a list or tensor of 4 numbers."""
    if unanswered(answer):
        return report(
            False, "", "replace the `...` with a list of 4 numbers or a tensor.", answered=False
        )
    vector = torch.tensor(x, dtype=torch.float64)
    expected = (vector - vector.mean()) / torch.sqrt(vector.var(unbiased=False) + eps)
    given, problem = read_tensor(answer, torch.float64)
    if problem:
        return report(False, "", problem)
    given = given.flatten()
    ok = (
        given is not None
        and given.shape == expected.shape
        and torch.allclose(given, expected, atol=1e-3)
    )
    shown = ", ".join(f"{v:.4f}" for v in expected.tolist())
    hint = (
        "subtract the mean (2.5), then divide by the square root of the variance + eps; the variance "
        "divides by d = 4 (unbiased=False), not by d − 1."
    )
    if given is not None and given.shape == expected.shape:
        unbiased = (vector - vector.mean()) / torch.sqrt(vector.var(unbiased=True) + eps)
        if torch.allclose(given, unbiased, atol=1e-3):
            hint = "close: LayerNorm's variance divides by d = 4, not d − 1 (torch.var's default)."
    return report(ok, f"[{shown}]: mean 0, variance 1 (up to eps).", hint)


@checker
def check_dropout_scale(answer: object, p: float = 0.1) -> Feedback:
    """In training, by what factor does dropout(p) multiply the entries it keeps?"""
    expected = 1 / (1 - p)
    return check_value(
        answer,
        expected,
        f"1 / (1 − {p}) = {expected:.4f}: the kept entries are scaled up so the expected value is unchanged.",
        "a fraction p of the entries becomes 0; scale the others so that the average stays the same.",
        tolerance=1e-3,
    )


@checker
def check_block_parameters(answer: object, d_model: int = 64, d_ff: int = 256) -> Feedback:
    """Parameters of one pre-norm Block at d_model (attention with biases, FFN, two LayerNorms)."""
    attention = 4 * (d_model * d_model + d_model)
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    norms = 2 * 2 * d_model
    expected = attention + ffn + norms
    return check_value(
        answer,
        expected,
        f"attention 4·({d_model}² + {d_model}) = {attention:,}, feed-forward {ffn:,}, "
        f"two LayerNorms 2·2·{d_model} = {norms}: {expected:,} in all.",
        "add up the four attention projections (Q, K, V, output; each with a bias), the "
        "feed-forward network and the weight and bias of both LayerNorms.",
    )
