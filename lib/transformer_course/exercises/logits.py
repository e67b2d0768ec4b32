"""Exercises of 10_logits_and_loss."""

from __future__ import annotations

import math

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_shape


@checker
def check_logits_shape(
    answer: object, batch_size: int = 4, context_length: int = 16, vocab_size: int = 100_070
) -> Feedback:
    """The shape of the logits for a [batch_size, context_length] batch, as a tuple."""
    if unanswered(answer):
        return report(
            False, "", "replace the `...` with a tuple such as (2, 3, 5).", answered=False
        )
    expected = (batch_size, context_length, vocab_size)
    given, problem = read_shape(answer)
    if problem:
        return report(False, "", problem)
    return report(
        given == expected,
        f"{expected}: one score per vocabulary entry, at every position of every window.",
        "every position of every window gets a score for every token of the vocabulary: (B, T, V).",
    )


@checker
def check_uniform_loss(answer: object, vocab_size: int = 3771) -> Feedback:
    """The cross-entropy of a model that gives every one of ``vocab_size`` tokens the same probability."""
    expected = math.log(vocab_size)
    return check_value(
        answer,
        expected,
        f"−log(1/{vocab_size}) = ln {vocab_size} ≈ {expected:.4f}.",
        "every token gets probability 1/V, and the loss is −log of the target's probability (natural log).",
        tolerance=1e-3,
    )


@checker
def check_cross_entropy(answer: object, probability: float = 0.25) -> Feedback:
    """The loss at one position where the model gives the true next token ``probability``."""
    expected = -math.log(probability)
    return check_value(
        answer,
        expected,
        f"−ln {probability} ≈ {expected:.4f}; only the true token's probability matters.",
        "cross-entropy at one position is −log p(true next token), with the natural logarithm.",
        tolerance=1e-3,
    )


@checker
def check_tying_saving(answer: object, vocab_size: int = 100_070, d_model: int = 64) -> Feedback:
    """How many parameters does weight tying save (the output layer has no bias)?"""
    expected = vocab_size * d_model
    return check_value(
        answer,
        expected,
        f"the whole {vocab_size:,} × {d_model} output matrix: {expected:,} parameters.",
        "with tying the output layer reuses the embedding table, so its own V × C matrix disappears.",
    )
