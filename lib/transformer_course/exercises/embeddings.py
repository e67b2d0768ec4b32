"""Exercises of 02_embeddings."""

from __future__ import annotations

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_shape


@checker
def check_table_parameters(answer: object, vocab_size: int = 100_070, d_model: int = 512) -> Feedback:
    """How many numbers does an embedding table with ``vocab_size`` rows and ``d_model`` columns hold?"""
    expected = vocab_size * d_model
    return check_value(
        answer,
        expected,
        f"{vocab_size:,} rows × {d_model} columns = {expected:,} parameters.",
        "one row of d_model numbers per token id: multiply the number of rows by the number of columns.",
    )


@checker
def check_lookup_shape(answer: object, batch_size: int = 8, context_length: int = 32, d_model: int = 128) -> Feedback:
    """Shape of ``embedding(ids)`` for ids of shape [batch_size, context_length]."""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a tuple such as (2, 3, 4).", answered=False)
    expected = (batch_size, context_length, d_model)
    given, problem = read_shape(answer)
    if problem:
        return report(False, "", problem)
    return report(
        given == expected,
        f"every id becomes a row of {d_model} numbers: {expected}.",
        "the lookup keeps the shape of the ids and appends one axis of length d_model.",
    )


@checker
def check_rows_needed(answer: object, max_id: int = 100_069) -> Feedback:
    """How many rows must a table have so that id ``max_id`` can be looked up?"""
    return check_value(
        answer,
        max_id + 1,
        f"ids run from 0 to {max_id:,}, which is {max_id + 1:,} different rows.",
        "row numbers start at 0: the largest id must be a valid row index.",
    )
