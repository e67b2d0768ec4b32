"""Auto-checked exercises. Each notebook's ``check_*`` helpers live in a module
named after the notebook's topic (e.g. ``exercises.setup`` for 00_setup) and
report through :func:`report`, which says right or wrong and why.

A ``check_*`` helper returns a :class:`Feedback` and prints nothing: end the
exercise cell with the call and Jupyter shows the verdict. (Printing plus a
trailing ``;`` would not do: nbval runs cells without history, where IPython
ignores the ``;``.) An unanswered exercise (the learner left ``...`` in place)
gets a gentle reminder rather than a "wrong", so a fresh notebook shows the
same thing everywhere. Every checker takes ``hint=True`` and then shows a hint
(:func:`.build.give_hint`) instead of a verdict.

Two kinds of exercise: questions (predict, then run; answers read by
:mod:`.answers`) and build exercises, where the learner writes a function that
is run on fresh random inputs against the library's (:mod:`.build`; solutions in
:mod:`.solutions`).

Whatever a learner types, a checker answers with feedback: answers are read
through :mod:`.answers` (numbers, shapes, tensors of any kind), and
:func:`checker` turns anything a checker still could not handle into a
"could not read your answer" verdict instead of a traceback.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .answers import first_difference, read_number, read_shape, read_tensor

NOT_ANSWERED = "replace the `...` with your answer and run the cell again."


@dataclass(frozen=True)
class Feedback:
    """The verdict of a ``check_*`` helper; ``str()`` is what the learner sees."""

    correct: bool
    message: str
    answered: bool = True
    is_hint: bool = False

    def __str__(self) -> str:
        if self.is_hint:
            return f"💡 Hint: {self.message}"
        if not self.answered:
            return f"✏️  Not answered yet: {self.message}"
        return f"{'✅ Correct' if self.correct else '❌ Not quite'}: {self.message}"

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.correct


def unanswered(answer: object) -> bool:
    """True when the learner left the placeholder (``...`` or ``None``) in place."""
    return answer is Ellipsis or answer is None


def report(correct: bool, success: str, hint: str, answered: bool = True) -> Feedback:
    """The feedback for a checked answer: ``success`` when right, ``hint`` when not."""
    return Feedback(correct=bool(correct) and answered, message=success if correct else hint, answered=answered)


def checker(check: Callable[..., Feedback]) -> Callable[..., Feedback]:
    """Decorate a ``check_*`` helper so that it can never show the learner a traceback.

    The readers in :mod:`.answers` already turn odd answers into sentences; this is the net under
    them, for an answer object that breaks even those (its ``__eq__`` or ``__len__`` raises).
    """

    @functools.wraps(check)
    def guarded(answer: object, *args: object, **kwargs: object) -> Feedback:
        try:
            return check(answer, *args, **kwargs)
        except Exception as error:
            cause = f"{type(error).__name__}: {error}"
            return report(
                False,
                "",
                f"the checker could not judge this {type(answer).__name__} ({cause[:300]}). "
                "Answer with a plain number, tuple, string or tensor, as the exercise asks.",
            )

    return guarded


def _same(answer: object, expected: object) -> bool:
    # A learner's object may compare to anything (an array compares element-wise): insist on a
    # plain True.
    return (answer == expected) is True


def check_value(answer: object, expected: object, success: str, hint: str, *, tolerance: float | None = None) -> Feedback:
    """The common case: compare an answer with the expected value.

    A number is compared as a number (within ``tolerance`` when given), a tuple as a shape, and
    anything else (a string, a pair of strings) by equality. An answer of the wrong kind gets a
    sentence that says what kind was expected.
    """
    if unanswered(answer):
        return report(False, success, NOT_ANSWERED, answered=False)
    if isinstance(expected, tuple) and all(isinstance(v, int) for v in expected):
        shape, problem = read_shape(answer)
        return report(False, success, problem) if problem else report(shape == expected, success, hint)
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        value, problem = read_number(answer)
        if problem:
            return report(False, success, problem)
        if tolerance is not None:
            return report(abs(value - expected) <= tolerance, success, hint)
        return report(math.isclose(value, expected, rel_tol=1e-12, abs_tol=0.0), success, hint)
    if isinstance(expected, tuple) and isinstance(answer, list):
        answer = tuple(answer)
    return report(_same(answer, expected), success, hint)


def check_tensor(
    answer: object, expected: torch.Tensor, success: str, hint: str, *, atol: float = 1e-4
) -> Feedback:
    """Compare a tensor answer with ``expected``: shape, then values (``atol``), then infinities."""
    if unanswered(answer):
        return report(False, success, NOT_ANSWERED, answered=False)
    want = expected.detach().to(torch.bool if expected.dtype == torch.bool else torch.float64)
    given, problem = read_tensor(answer, want.dtype)
    if problem:
        return report(False, success, f"{problem} {hint}")
    if tuple(given.shape) != tuple(want.shape):
        return report(False, success, f"expected shape {tuple(want.shape)}, got {tuple(given.shape)}. {hint}")
    if want.dtype == torch.bool:
        ok = bool(torch.equal(given, want))
    else:
        ok = bool(torch.allclose(given, want, atol=atol, rtol=1e-4, equal_nan=False)) and bool(
            torch.equal(torch.isinf(given), torch.isinf(want))
        )
    return report(ok, success, hint if ok else f"{first_difference(given, want, atol)} {hint}")
