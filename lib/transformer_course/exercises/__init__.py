"""Auto-checked exercises. Each notebook's ``check_*`` helpers live in a module
named after the notebook's topic (e.g. ``exercises.setup`` for 00_setup) and
report through :func:`report`, which says right or wrong and why.

A ``check_*`` helper returns a :class:`Feedback` and prints nothing: end the
exercise cell with the call and Jupyter shows the verdict. (Printing plus a
trailing ``;`` would not do: nbval runs cells without history, where IPython
ignores the ``;``.) An unanswered exercise (the learner left ``...`` in place)
gets a gentle reminder rather than a "wrong", so a fresh notebook shows the
same thing everywhere. Every checker takes ``hint=True`` and then shows a hint
(:func:`give_hint`) instead of a verdict; most name their hint in the decorator,
``@checker(hint=N_("…"))``, so that their body only judges. A multiple-choice
("predict") question judges its word with :func:`check_choice`.

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
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..i18n import N_, _
from .answers import first_difference, read_number, read_shape, read_tensor

#: Declared in English (``N_``); whoever shows it translates it: ``_(NOT_ANSWERED)``.
NOT_ANSWERED = N_("replace the `...` with your answer and run the cell again.")


@dataclass(frozen=True)
class Feedback:
    """The verdict of a ``check_*`` helper; ``str()`` is what the learner sees."""

    correct: bool
    message: str
    answered: bool = True
    is_hint: bool = False

    def __str__(self) -> str:
        # The label is shown in the learner's language (``setup_notebook(lang=...)``); the
        # message was translated when the checker made it. The emoji stay first: the progress
        # table reads the verdict from them.
        if self.is_hint:
            return _("💡 Hint: {message}").format(message=self.message)
        if not self.answered:
            return _("✏️  Not answered yet: {message}").format(message=self.message)
        if self.correct:
            return _("✅ Correct: {message}").format(message=self.message)
        return _("❌ Not quite: {message}").format(message=self.message)

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.correct


def unanswered(answer: object) -> bool:
    """True when the learner left the placeholder (``...`` or ``None``) in place."""
    return answer is Ellipsis or answer is None


def report(correct: bool, success: str, hint: str, answered: bool = True) -> Feedback:
    """The feedback for a checked answer: ``success`` when right, ``hint`` when not."""
    return Feedback(
        correct=bool(correct) and answered, message=success if correct else hint, answered=answered
    )


def prose(text: str) -> str:
    """A hint or message as the learner reads it: one line, single spaces.

    Exercise modules write their prose as indented triple-quoted blocks, wrapped like a docstring.
    """
    return " ".join(text.split())


def give_hint(text: str) -> Feedback:
    """The feedback a ``check_*(…, hint=True)`` call shows: the hint, not a verdict."""
    return Feedback(correct=False, message=text, answered=False, is_hint=True)


def checker(
    check: Callable[..., Feedback] | None = None, *, hint: str | None = None
) -> Callable[..., Feedback] | Callable[[Callable[..., Feedback]], Callable[..., Feedback]]:
    """Decorate a ``check_*`` helper so that it can never show the learner a traceback.

    The readers in :mod:`.answers` already turn odd answers into sentences; this is the net under
    them, for an answer object that breaks even those (its ``__eq__`` or ``__len__`` raises).

    ``@checker(hint=N_("…"))`` also answers a call with ``hint=True`` by that hint, before the
    body runs: the helper keeps ``hint: bool = False`` in its signature and its body only judges.
    The hint is declared in English (``N_``) and translated when it is shown, then made one line
    by :func:`prose`.
    """
    if check is None:
        return functools.partial(checker, hint=hint)
    signature = inspect.signature(check)

    def asks_for_hint(*args: object, **kwargs: object) -> bool:
        # `hint` may come by keyword or by position; the other arguments need not all be there.
        return hint is not None and bool(
            signature.bind_partial(*args, **kwargs).arguments.get("hint")
        )

    @functools.wraps(check)
    def guarded(answer: object, *args: object, **kwargs: object) -> Feedback:
        try:
            if asks_for_hint(answer, *args, **kwargs):
                return give_hint(prose(_(hint)))
            return check(answer, *args, **kwargs)
        except Exception as error:
            cause = f"{type(error).__name__}: {error}"
            return report(
                False,
                "",
                _(
                    "the checker could not judge this {kind} ({cause}). "
                    "Answer with a plain number, tuple, string or tensor, as the exercise asks."
                ).format(kind=type(answer).__name__, cause=cause[:300]),
            )

    return guarded


@dataclass(frozen=True)
class Option:
    """One kind of answer to a multiple-choice question: the words that mean it (``matches`` gets
    the answer stripped and lower-cased), whether it is right, and what the learner is told."""

    matches: Callable[[str], bool]
    correct: bool
    message: str


def check_choice(
    answer: object,
    choices: Sequence[str],
    options: Sequence[Option],
    *,
    noun: str | None = None,
    not_text: str | None = None,
    unknown: str | None = None,
    not_answered: str | None = None,
) -> Feedback:
    """A multiple-choice ("predict") question: the first of ``options`` that matches gives the verdict.

    An unanswered question gets ``not_answered`` (by default :data:`NOT_ANSWERED`); an answer that
    is not a ``str`` gets ``not_text`` (by default "answer with one of the ``noun`` [choices] as a
    string, got a …"; ``noun`` defaults to "words"); a word no option matches gets ``unknown`` (by
    default "answer with one of [choices]."). The caller's texts (options' messages included) are
    shown as they are: translate them where they are written, ``_("…")``.
    """
    if unanswered(answer):
        return report(False, "", not_answered or _(NOT_ANSWERED), answered=False)
    if not isinstance(answer, str):
        return report(
            False,
            "",
            not_text
            or _("answer with one of the {noun} {choices} as a string, got a {kind}.").format(
                noun=noun or _("words"), choices=list(choices), kind=type(answer).__name__
            ),
        )
    word = answer.strip().lower()
    for option in options:
        if option.matches(word):
            return report(option.correct, option.message, option.message)
    return report(
        False, "", unknown or _("answer with one of {choices}.").format(choices=list(choices))
    )


def _same(answer: object, expected: object) -> bool:
    # A learner's object may compare to anything (an array compares element-wise): insist on a
    # plain True.
    return (answer == expected) is True


def check_value(
    answer: object, expected: object, success: str, hint: str, *, tolerance: float | None = None
) -> Feedback:
    """The common case: compare an answer with the expected value.

    A number is compared as a number (within ``tolerance`` when given), a tuple as a shape, and
    anything else (a string, a pair of strings) by equality. An answer of the wrong kind gets a
    sentence that says what kind was expected.
    """
    if unanswered(answer):
        return report(False, success, _(NOT_ANSWERED), answered=False)
    if isinstance(expected, tuple) and all(isinstance(v, int) for v in expected):
        shape, problem = read_shape(answer)
        return (
            report(False, success, problem) if problem else report(shape == expected, success, hint)
        )
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
        return report(False, success, _(NOT_ANSWERED), answered=False)
    want = expected.detach().to(torch.bool if expected.dtype == torch.bool else torch.float64)
    given, problem = read_tensor(answer, want.dtype)
    if problem:
        return report(False, success, f"{problem} {hint}")
    if tuple(given.shape) != tuple(want.shape):
        return report(
            False,
            success,
            _("expected shape {expected}, got {given}.").format(
                expected=tuple(want.shape), given=tuple(given.shape)
            )
            + f" {hint}",
        )
    if want.dtype == torch.bool:
        ok = bool(torch.equal(given, want))
    else:
        ok = bool(torch.allclose(given, want, atol=atol, rtol=1e-4, equal_nan=False)) and bool(
            torch.equal(torch.isinf(given), torch.isinf(want))
        )
    return report(ok, success, hint if ok else f"{first_difference(given, want, atol)} {hint}")
