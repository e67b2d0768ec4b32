"""Exercises of 07_softmax."""

from __future__ import annotations

import math

import torch

from . import Feedback, check_tensor, check_value, checker


@checker
def check_softmax_row(answer: object, scores: torch.Tensor | None = None) -> Feedback:
    """softmax of one row of scores ``scores`` [T] (default ``[2, 1, 0, -inf]``); the answer is [T] too."""
    if scores is None:
        scores = torch.tensor([2.0, 1.0, 0.0, float("-inf")])
    expected = torch.softmax(scores.double(), dim=-1)
    return check_tensor(
        answer,
        expected,
        f"exp(s − max) / Σ exp(s − max) = {[round(v, 4) for v in expected.tolist()]}; the −inf entry gets exactly 0.",
        "subtract the row max, exponentiate (exp(−inf) = 0) and divide by the sum of the row.",
    )


@checker
def check_uniform_entropy(answer: object, n: int = 16) -> Feedback:
    """The entropy (nats) of a row that spreads its weight evenly over ``n`` keys."""
    expected = math.log(n)
    return check_value(
        answer,
        expected,
        f"−Σ (1/{n}) log(1/{n}) = log {n} ≈ {expected:.4f} nats, the largest entropy {n} keys allow.",
        "every weight is 1/n, so the entropy is −n · (1/n) · log(1/n).",
        tolerance=1e-4,
    )


@checker
def check_temperature_limit(answer: object) -> Feedback:
    """Which key wins all the weight as τ → 0 for scores ``[0.5, 2.0, 1.9, -1.0]`` (index)."""
    return check_value(
        answer,
        1,
        "as τ → 0 the gaps between scores are multiplied by 1/τ and the largest score (2.0, index 1) takes all.",
        "dividing by a tiny τ stretches the differences: the largest score wins. Answer with its index.",
    )
