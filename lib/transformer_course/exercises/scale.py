"""Exercises of 05_scale."""

from __future__ import annotations

import math

from . import Feedback, check_value, checker


@checker
def check_scale_factor(answer: object, d_model: int = 64, n_heads: int = 4) -> Feedback:
    """The factor the scores of one head are multiplied by: 1 / √(d_model / n_heads)."""
    d_k = d_model // n_heads
    expected = 1 / math.sqrt(d_k)
    return check_value(
        answer,
        expected,
        f"each head works in d_k = {d_model} / {n_heads} = {d_k} dimensions, so the factor is 1/√{d_k} = {expected:g}.",
        "d_k is the size of one head (d_model // n_heads), not d_model; the factor is 1 / √d_k.",
        tolerance=1e-6,
    )


@checker
def check_score_variance(answer: object, d_k: int = 256) -> Feedback:
    """The variance of q·k for random q, k with d_k independent unit-variance entries (unscaled)."""
    return check_value(
        answer,
        d_k,
        f"q·k is a sum of {d_k} independent products of variance 1, so its variance is {d_k}; "
        f"dividing by √{d_k} brings it back to 1.",
        "each product q_i k_i has mean 0 and variance 1, and variances of independent terms add up.",
        tolerance=1e-6,
    )


@checker
def check_scaled_std(answer: object, d_k: int = 256) -> Feedback:
    """The standard deviation of q·k / √d_k for the same random vectors."""
    return check_value(
        answer,
        1.0,
        "Var(q·k / √d_k) = d_k / d_k = 1, so the standard deviation is 1 whatever d_k is.",
        f"dividing by √{d_k} divides the variance ({d_k}) by {d_k}.",
        tolerance=1e-6,
    )
