"""Auto-checked exercises. Each notebook's ``check_*`` helpers live in a module
named after the notebook's topic (e.g. ``exercises.setup`` for 00_setup) and
report through :func:`report`, which says right or wrong and why.

A ``check_*`` helper returns a :class:`Feedback` and prints nothing: end the
exercise cell with the call and Jupyter shows the verdict. (Printing plus a
trailing ``;`` would not do: nbval runs cells without history, where IPython
ignores the ``;``.) An unanswered exercise (the learner left ``...`` in place)
gets a gentle reminder rather than a "wrong", so a fresh notebook shows the
same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Feedback:
    """The verdict of a ``check_*`` helper; ``str()`` is what the learner sees."""

    correct: bool
    message: str
    answered: bool = True

    def __str__(self) -> str:
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


def check_value(answer: object, expected: object, success: str, hint: str, *, tolerance: float | None = None) -> Feedback:
    """The common case: compare an answer with the expected value (numbers within ``tolerance``)."""
    if unanswered(answer):
        return report(False, success, "replace the `...` with your answer and run the cell again.", answered=False)
    if tolerance is not None:
        try:
            ok = abs(float(answer) - float(expected)) <= tolerance
        except (TypeError, ValueError):
            ok = False
    else:
        ok = answer == expected
    return report(ok, success, hint)
