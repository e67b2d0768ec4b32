"""Exercises of 04_qkv."""

from __future__ import annotations

import torch

from .. import attention
from ..i18n import N_, _
from . import Feedback, check_value, checker, give_hint
from .build import build_exercise, hard_case
from .solutions.qkv import merge_heads, split_heads


@checker(
    hint=N_("""
        four numbers: the batch stays first, then one axis per head, then time, then the
        columns each head gets (C shared out among the H heads).
    """)
)
def check_split_shape(
    answer: object, B: int = 2, T: int = 10, C: int = 96, H: int = 8, hint: bool = False
) -> Feedback:
    """The shape of split_heads on a [B, T, C] tensor with H heads: (B, H, T, C // H)."""
    expected = (B, H, T, C // H)
    return check_value(
        answer,
        expected,
        _("({B}, {T}, {C}) → ({B}, {T}, {H}, {D}) → {expected}: D = {C} / {H} = {D}.").format(
            B=B, T=T, C=C, H=H, D=C // H, expected=expected
        ),
        _(
            "the head axis moves in front of time: (B, T, C) → (B, T, H, D) → (B, H, T, D) with D = C // H."
        ),
    )


@checker
def check_head_of_column(
    answer: object, column: int = 37, d_model: int = 64, n_heads: int = 4, hint: bool = False
) -> Feedback:
    """Which head receives column ``column`` of Q after the split."""
    D = d_model // n_heads
    if hint:
        return give_hint(
            _(
                "each head gets one block of D = {D} consecutive columns; count the blocks (from 0)."
            ).format(D=D)
        )
    expected = column // D
    return check_value(
        answer,
        expected,
        _(
            "each head owns a block of D = {D} consecutive columns, so column {column} belongs to head {column} // {D} = {expected}."
        ).format(D=D, column=column, expected=expected),
        _("head h gets columns h·D … (h+1)·D − 1, with D = d_model // n_heads = {D}.").format(D=D),
    )


@checker(
    hint=N_("""
        count one nn.Linear(d_model, d_model): a weight matrix and a bias vector; then there
        are three of them. `sum(p.numel() for p in w_q.parameters())` counts one.
    """)
)
def check_projection_params(answer: object, d_model: int = 64, hint: bool = False) -> Feedback:
    """The number of parameters of W_Q, W_K and W_V together (each a Linear(d_model, d_model) with bias)."""
    expected = 3 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        _(
            "3 × ({d_model}·{d_model} weights + {d_model} biases) = {expected}; the number of heads does not change it."
        ).format(d_model=d_model, expected=expected),
        _(
            "each of the three maps is a d_model × d_model matrix plus a bias of d_model numbers; "
            "splitting into heads adds no parameters."
        ),
    )


# ---- build exercises --------------------------------------------------------------------


def _sizes(generator: torch.Generator) -> tuple[int, int, int, int]:
    """B, T, H, D from 1 to 6; in four trials of five 2 ≤ T ≠ H, H ≥ 2 and D ≠ T, where a view
    without the transpose, or T and D mixed up, moves the numbers."""
    B, T, H, D = (int(n) for n in torch.randint(1, 7, (4,), generator=generator))
    if hard_case(generator, 5) != 0:
        T, H = max(T, 2), max(H, 2)
        H = H + 1 if H == T else H
        D = D + 1 if D == T else D
    return B, T, H, D


def _batch_and_heads(generator: torch.Generator) -> tuple[torch.Tensor, int]:
    # Sizes from 1 up, drawn apart: a split that mixes up T and H (a view straight to
    # (B, H, T, D)) keeps the right shape but moves the numbers, and the values show it.
    B, T, H, D = _sizes(generator)
    return torch.randn(B, T, H * D, generator=generator), H  # (B, T, C), H


def _heads(generator: torch.Generator) -> tuple[torch.Tensor]:
    B, T, H, D = _sizes(generator)
    return (torch.randn(B, H, T, D, generator=generator),)  # (B, H, T, D)


def _view_straight_to_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    return x.view(B, n_heads, T, C // n_heads)  # (B, H, T, D): the right shape, the wrong numbers


def _view_without_transpose(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    return x.view(B, T, n_heads, C // n_heads)  # (B, T, H, D): time still in front of the heads


def _merge_without_transpose(x: torch.Tensor) -> torch.Tensor:
    B, H, T, D = x.shape
    return x.reshape(B, T, H * D)  # (B, H, T, D) read in memory order: heads and time mixed


check_split_heads = build_exercise(
    notebook="04_qkv",
    solution=split_heads,
    hint=N_("""
        two steps: `.view(B, T, n_heads, D)` cuts the last axis into n_heads blocks of D
        columns, then `.transpose(1, 2)` moves the head axis in front of time. A single
        `.view(B, n_heads, T, D)` has the right shape but the wrong numbers in it.
    """),
    success=N_("""
        Head h now holds columns h·D … (h+1)·D − 1 of every token, as
        `attention.split_heads` does.
    """),
    reference=attention.split_heads,
    make_inputs=_batch_and_heads,
    slips={
        N_(
            "`.view(B, n_heads, T, D)` without the transpose (a view straight to the final shape "
            "keeps the memory order, so each 'head' gets a slice of the time steps, not D columns)"
        ): (_view_straight_to_heads),
        N_(
            "the `.view(B, T, n_heads, D)` without the `.transpose(1, 2)` (time is still in front "
            "of the heads)"
        ): _view_without_transpose,
    },
)


check_merge_heads = build_exercise(
    notebook="04_qkv",
    solution=merge_heads,
    hint=N_("""
        undo split_heads in reverse order: first move time back in front of the heads
        (`.transpose(1, 2)` gives (B, T, H, D)), then glue the heads' columns side by side
        into H·D. After a transpose the memory is no longer in order, so use `.reshape`, not
        `.view`.
    """),
    success=N_("""
        merge_heads(split_heads(x, H)) gives x back; notebook 08 merges the heads' outputs
        this way.
    """),
    reference=attention.merge_heads,
    make_inputs=_heads,
    slips={
        N_(
            "a `.reshape(B, T, H * D)` without the `.transpose(1, 2)` first (it reads the heads "
            "in memory order and mixes heads with time steps)"
        ): _merge_without_transpose,
    },
)
