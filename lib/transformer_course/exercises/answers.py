"""Read what a learner typed as a number, a shape or a tensor — or say plainly why it is not one.

Learners answer with whatever is at hand: ``12``, ``12.0``, ``np.int64(12)``, ``torch.tensor(12)``,
``x.shape``, ``np.array(x.shape)``, ``[2, 3]``, but also ``"12"``, ``True``, a whole mask row
instead of its count, a function instead of its result. Every ``check_*`` helper reads the answer
through one of the readers below, which return ``(value, None)`` or ``(None, problem)``; the
problem is a sentence for the learner ("True is a yes/no, not a number: …"). Nothing here raises
for any input — a checker must answer with feedback, never with a traceback from its own inside.

Used by every exercise module (00–14); see ``tests/test_exercise_answers.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..i18n import _

#: Numbers beyond this are answers nobody means (and beyond float range for ints like 10**400).
_LARGEST = 1e300


def _type_name(answer: object) -> str:
    return type(answer).__name__


def _is_array_like(answer: object) -> bool:
    # torch tensors and numpy arrays both carry a shape and a dtype; numpy scalars too (shape ()).
    return hasattr(answer, "shape") and hasattr(answer, "dtype") and not isinstance(answer, type)


def _size(answer: object) -> int | None:
    try:
        return math.prod(int(n) for n in answer.shape)  # type: ignore[attr-defined]
    except Exception:
        return None


def _is_complex(answer: object) -> bool:
    dtype = getattr(answer, "dtype", None)
    if isinstance(dtype, torch.dtype):
        return dtype.is_complex
    return getattr(dtype, "kind", "") == "c"


def _only_element(array: Any) -> tuple[object, str | None]:
    """The one element of a one-element tensor or array, or why there is not exactly one."""
    size = _size(array)
    if size == 0:
        return None, _("that array or tensor is empty: answer with one number.")
    if size != 1:
        shape = tuple(int(n) for n in array.shape)
        return None, _(
            "got {size} values (shape {shape}), not one number: reduce them first "
            "(for example .sum(), len(...) or indexing), then answer with the result."
        ).format(size=size, shape=shape)
    try:
        return (array.detach().cpu() if isinstance(array, torch.Tensor) else array).item(), None
    except Exception as error:  # a broken array-like object
        return None, _("could not read a number from this {kind} ({error}).").format(
            kind=_type_name(array), error=error
        )


def read_number(answer: object) -> tuple[float | int | None, str | None]:
    """One real, finite number from ``answer``, or ``(None, why not)``.

    Accepts Python ints and floats, numpy scalars and one-element arrays, one-element tensors of
    any dtype and device. Refuses booleans, text, complex numbers, NaN/inf, collections and
    functions, each with its own sentence.
    """
    if isinstance(answer, bool) or _type_name(answer) == "bool_":
        return None, _("{answer} is a yes/no value, not a number: answer with a number.").format(
            answer=answer
        )
    if isinstance(answer, str):
        try:
            float(answer)
        except ValueError:
            return None, _("answer with a number, not the text {answer!r}.").format(answer=answer)
        return (
            None,
            _(
                "{answer!r} is text (it is in quotes): write the number without quotes, {answer}."
            ).format(answer=answer),
        )
    if isinstance(answer, complex) or _is_complex(answer):
        return None, _("answer with a real number, not a complex one.")
    if callable(answer) and not _is_array_like(answer):
        return None, _("that is a function: call it and answer with the number it returns.")
    if _is_array_like(answer):
        element, problem = _only_element(answer)
        return (None, problem) if problem else read_number(element)
    if isinstance(answer, (list, tuple, set, frozenset, dict)):
        return None, _("got a {kind} of {n} items, not one number.").format(
            kind=_type_name(answer), n=len(answer)
        )
    if isinstance(answer, int):
        if abs(answer) > _LARGEST:
            return None, _("that number is far too large to be the answer.")
        return answer, None
    try:
        value = float(answer)  # type: ignore[arg-type]
    except Exception:
        return None, _("answer with a number, got a {kind}.").format(kind=_type_name(answer))
    if not math.isfinite(value):
        return None, _("{value} is not a finite number: answer with an ordinary number.").format(
            value=value
        )
    return value, None


def read_bool(answer: object) -> tuple[bool | None, str | None]:
    """A yes/no from ``True``/``False``, 0/1, or a one-element bool tensor or array."""
    if _is_array_like(answer):
        if _size(answer) != 1:
            return None, _("answer with one True or False, not a whole tensor of them.")
        try:
            answer = answer.item()  # type: ignore[attr-defined]
        except Exception:
            return None, _("could not read True or False from this {kind}.").format(
                kind=_type_name(answer)
            )
    if isinstance(answer, bool):
        return answer, None
    if isinstance(answer, int) and answer in (0, 1):
        return bool(answer), None
    return None, _("answer with True or False, got {answer!r}.").format(answer=answer)


def read_shape(answer: object) -> tuple[tuple[int, ...] | None, str | None]:
    """A shape (a tuple of whole numbers) from a tuple, list, ``torch.Size`` or 1-D integer array."""
    if isinstance(answer, torch.Tensor) and answer.dim() > 1:
        return (
            None,
            _("that is a tensor: answer with its shape (for example x.shape), not its values."),
        )
    if _is_array_like(answer) and not isinstance(answer, torch.Tensor):
        if len(getattr(answer, "shape", ())) != 1:
            return None, _("answer with a shape such as (2, 3): a tuple of sizes.")
        answer = answer.tolist()  # type: ignore[attr-defined]
    elif isinstance(answer, torch.Tensor):
        if answer.is_floating_point() or answer.is_complex() or answer.dtype == torch.bool:
            return None, _("answer with a shape such as (2, 3): a tuple of sizes.")
        answer = answer.tolist()
    if not isinstance(answer, (tuple, list)):
        return (
            None,
            _("answer with a shape such as (2, 3), a tuple of sizes; got a {kind}.").format(
                kind=_type_name(answer)
            ),
        )
    sizes = []
    for item in answer:
        value, problem = read_number(item)
        if problem is not None or value != int(value) or value < 0:
            return None, _("every size in a shape is a whole number ≥ 0; {item!r} is not.").format(
                item=item
            )
        sizes.append(int(value))
    return tuple(sizes), None


def read_tensor(answer: object, dtype: torch.dtype) -> tuple[torch.Tensor | None, str | None]:
    """A CPU tensor of ``dtype`` (float64 or bool) from a tensor, a numpy array or nested lists."""
    if _is_complex(answer) or isinstance(answer, complex):
        return None, _("answer with real numbers, not complex ones.")
    if isinstance(answer, str) or (callable(answer) and not _is_array_like(answer)):
        return None, _("answer with a torch.Tensor, got a {kind}.").format(kind=_type_name(answer))
    try:
        given = torch.as_tensor(answer)
    except Exception:
        return (
            None,
            _("answer with a torch.Tensor (or a list of numbers), got a {kind}.").format(
                kind=_type_name(answer)
            ),
        )
    given = given.detach().cpu()
    if dtype == torch.bool and given.dtype != torch.bool:
        return None, _("answer with a bool tensor (True/False), got dtype {dtype}.").format(
            dtype=given.dtype
        )
    if dtype != torch.bool and given.dtype == torch.bool:
        return None, _("answer with numbers, not True/False values.")
    return given.to(dtype), None


def first_difference(given: torch.Tensor, expected: torch.Tensor, atol: float) -> str:
    """Where two same-shape tensors differ: the first differing row and the largest error."""
    if expected.dtype == torch.bool:
        wrong = given != expected
    else:
        wrong = ~torch.isclose(given, expected, atol=atol, rtol=1e-4, equal_nan=False)
    if not bool(wrong.any()):
        return _("The values agree but the infinities do not.")
    index = tuple(int(i) for i in wrong.nonzero()[0])
    counts = dict(n=int(wrong.sum()), total=wrong.numel(), index=index)
    if expected.dtype == torch.bool:
        return _(
            "{n} of {total} entries differ, first at index {index}: yours {yours}, expected {expected}."
        ).format(yours=given[index].item(), expected=expected[index].item(), **counts)
    values = dict(yours=f"{given[index].item():.4g}", expected=f"{expected[index].item():.4g}")
    finite = torch.isfinite(given) & torch.isfinite(expected)
    largest = (given - expected).abs()[finite].max().item() if finite.any() else float("nan")
    if not largest > 0:  # only infinities or NaNs differ: an error size would say nothing
        return _(
            "{n} of {total} entries differ, first at index {index}: yours {yours}, expected {expected}."
        ).format(**values, **counts)
    return _(
        "{n} of {total} entries differ, first at index {index}: yours {yours}, expected {expected}; "
        "largest error {largest}."
    ).format(largest=f"{largest:.3g}", **values, **counts)


def call_learner(function: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call a learner's function; an exception becomes a sentence instead of a traceback."""
    if not callable(function):
        return None, _("expected a function, got a {kind}.").format(kind=_type_name(function))
    try:
        return function(*args), None
    except Exception as error:
        return None, _("your function raised {kind}: {error}").format(
            kind=type(error).__name__, error=error
        )
