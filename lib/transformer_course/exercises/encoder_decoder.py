"""Exercises of 14_encoder_decoder."""

from __future__ import annotations

import torch

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_shape


@checker
def check_cross_attention_shape(
    answer: object, B: int = 2, H: int = 4, T: int = 9, S: int = 8
) -> Feedback:
    """Shape of the cross-attention weights for B sources of S tokens, H heads, T decoder tokens."""
    expected = (B, H, T, S)
    given, _ = read_shape(answer)
    hint = (
        "the queries come from the decoder (T of them) and the keys from the encoder (S of them): "
        "the weights are [B, H, queries, keys]."
    )
    if given == (B, H, S, T):
        hint = (
            "rows and columns swapped: each ROW is one decoder query, each COLUMN one source key."
        )
    return check_value(
        answer,
        expected,
        f"{expected}: one row per decoder query, one column per source token.",
        hint,
    )


@checker
def check_reversal_alignment(answer: object, n: int = 7, k: int = 1) -> Feedback:
    """Reversing an n-digit source: which source position (0-based) holds answer digit k?"""
    expected = n - 1 - k
    return check_value(
        answer,
        expected,
        f"answer digit {k} is source digit n − 1 − k = {expected}: the anti-diagonal of the map.",
        "the answer's first digit (k = 0) is the source's LAST digit (position n − 1); count back from there.",
    )


@checker
def check_encoder_mask(answer: object, T: int = 5) -> Feedback:
    """The boolean self-attention mask of an encoder over T real tokens (True = may attend)."""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a [5, 5] boolean tensor.", answered=False)
    if not isinstance(answer, torch.Tensor) or answer.shape != (T, T) or answer.dtype != torch.bool:
        return report(False, "", f"give a torch.bool tensor of shape ({T}, {T}).")
    expected = torch.ones(T, T, dtype=torch.bool)
    hint = "an encoder reads the whole source at once: nothing is hidden from any token."
    if torch.equal(answer, expected.tril()):
        hint = "that is the DECODER's causal mask; the encoder is bidirectional, nothing is masked."
    return report(
        torch.equal(answer, expected),
        "all True: every source token sees every other (bidirectional).",
        hint,
    )
