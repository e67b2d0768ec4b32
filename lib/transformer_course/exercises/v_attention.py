"""Exercises of 08_v_attention."""

from __future__ import annotations

import torch

from . import Feedback, check_tensor, check_value, checker


@checker
def check_mha_params(answer: object, d_model: int = 64) -> Feedback:
    """The parameter count of MultiHeadAttention(d_model, n_heads) with biases (any n_heads)."""
    expected = 4 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        f"W_Q, W_K, W_V and W_O, each {d_model}·{d_model} + {d_model}: {expected}.",
        "four Linear(d_model, d_model) layers with biases; the number of heads does not change the count.",
    )


@checker
def check_attention_output(answer: object, weights: torch.Tensor, v: torch.Tensor) -> Feedback:
    """The output of one head: ``weights`` [T, T] @ ``v`` [T, D]."""
    expected = weights @ v  # (T, T) @ (T, D) -> (T, D)
    return check_tensor(
        answer,
        expected,
        f"row i is the weighted average Σ_j w_ij v_j: a {tuple(expected.shape)} tensor.",
        "multiply the weight matrix by V (weights @ v), rows of weights against the rows of V.",
    )


@checker
def check_merged_shape(
    answer: object, B: int = 4, H: int = 4, T: int = 16, D: int = 16
) -> Feedback:
    """The shape of merge_heads on a [B, H, T, D] tensor."""
    expected = (B, T, H * D)
    return check_value(
        answer,
        expected,
        f"(B, H, T, D) → (B, T, H, D) → (B, T, H·D) = {expected}.",
        "move the head axis back behind time and glue the heads' columns side by side.",
    )
