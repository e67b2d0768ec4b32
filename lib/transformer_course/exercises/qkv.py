"""Exercises of 04_qkv."""

from __future__ import annotations

from . import Feedback, check_value, checker


@checker
def check_split_shape(answer: object, B: int = 2, T: int = 10, C: int = 96, H: int = 8) -> Feedback:
    """The shape of split_heads on a [B, T, C] tensor with H heads: (B, H, T, C // H)."""
    expected = (B, H, T, C // H)
    return check_value(
        answer,
        expected,
        f"({B}, {T}, {C}) → ({B}, {T}, {H}, {C // H}) → {expected}: D = {C} / {H} = {C // H}.",
        "the head axis moves in front of time: (B, T, C) → (B, T, H, D) → (B, H, T, D) with D = C // H.",
    )


@checker
def check_head_of_column(
    answer: object, column: int = 37, d_model: int = 64, n_heads: int = 4
) -> Feedback:
    """Which head receives column ``column`` of Q after the split."""
    D = d_model // n_heads
    expected = column // D
    return check_value(
        answer,
        expected,
        f"each head owns a block of D = {D} consecutive columns, so column {column} belongs to head "
        f"{column} // {D} = {expected}.",
        f"head h gets columns h·D … (h+1)·D − 1, with D = d_model // n_heads = {D}.",
    )


@checker
def check_projection_params(answer: object, d_model: int = 64) -> Feedback:
    """The number of parameters of W_Q, W_K and W_V together (each a Linear(d_model, d_model) with bias)."""
    expected = 3 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        f"3 × ({d_model}·{d_model} weights + {d_model} biases) = {expected}; the number of heads does not change it.",
        "each of the three maps is a d_model × d_model matrix plus a bias of d_model numbers; "
        "splitting into heads adds no parameters.",
    )
