"""Exercises of 00_setup."""

from __future__ import annotations

import math

from ..i18n import N_, _
from . import NOT_ANSWERED, Feedback, checker, report, unanswered
from .answers import read_number


@checker(
    hint=N_("""
        one entry of a @ b is a sum of d products x·y. Each product of two independent N(0,
        1) numbers has mean 0 and variance 1, and variances of independent terms add up.
    """)
)
def check_dot_product_std(answer: object, d: int = 256, hint: bool = False) -> Feedback:
    """Predict: the standard deviation of one entry of ``a @ b`` when the inner size is ``d``.

    Every entry is a sum of ``d`` products of independent N(0, 1) numbers; each product has
    variance 1, so the sum has variance ``d`` and standard deviation √d. A prediction within 10 %
    counts (the measured value of one draw wanders by about that much at these sizes).
    """
    if unanswered(answer):
        return report(False, "", _(NOT_ANSWERED), answered=False)
    value, problem = read_number(answer)
    if problem:
        return report(False, "", problem)
    expected = math.sqrt(d)
    return report(
        abs(value - expected) <= 0.1 * expected,
        _(
            "√{d} = {expected:g}: the variance grows with d, the standard deviation with √d — with d = 64 "
            "the cell above measured about 8. Notebook 05 divides attention scores by √d_k for exactly this reason."
        ).format(d=d, expected=expected),
        _(
            "{value:g} is not it. The cell above measured about 8 for d = 64; how does that grow with d? "
            "Try `check_dot_product_std(..., hint=True)`, or change 64 to 256 in the cell above and run it."
        ).format(value=value),
    )
