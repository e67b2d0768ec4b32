"""Exercises of 00_setup."""

from __future__ import annotations

import torch

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_shape


@checker
def check_corpus_characters(answer: object, text: str) -> Feedback:
    """How many characters does the corpus have?"""
    return check_value(
        answer,
        len(text),
        f"the corpus has {len(text):,} characters.",
        "count characters with len(text), not bytes or lines.",
    )


@checker
def check_matmul_shape(answer: object) -> Feedback:
    """What shape has (4, 16, 64) @ (64, 8)?"""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a tuple such as (2, 3).", answered=False)
    expected = tuple(torch.empty(4, 16, 64).matmul(torch.empty(64, 8)).shape)
    given, problem = read_shape(answer)
    if problem:
        return report(False, "", problem)
    return report(
        given == expected,
        f"the leading dimensions ride along and the last one changes: {expected}.",
        "the matmul acts on the last dimension; the batch dimensions (4, 16) are kept.",
    )
