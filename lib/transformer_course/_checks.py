"""Argument checks shared by the library's public functions and constructors (private module).

API.md promises that a bad argument raises :class:`TypeError` (wrong type) or
:class:`ValueError` (right type, wrong value) with a message that names the argument, says
what it accepts and what was given. Each check here writes that message once; a module lists
its rules in a few calls and keeps only the cross-argument rules that teach something
(n_heads divides d_model, RoPE needs an even head size) in its own words.

Every check returns the value (converted where it says so), so it can be used inline.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

from .i18n import _


def _kind(value: object) -> str:
    return type(value).__name__


def _what(value: object) -> str:
    """What was passed instead of integer token ids: a tensor's dtype, or the type of anything else."""
    if isinstance(value, torch.Tensor):
        return _("dtype {dtype}").format(dtype=value.dtype)
    return _("{kind}, not a torch.Tensor").format(kind=_kind(value))


def integer(name: str, value: object, minimum: int | None = 1, maximum: int | None = None) -> int:
    """An int (not a bool) in ``minimum`` … ``maximum``; None leaves that side open."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(
            _("{name} must be an int (a whole number such as 4), got {kind} {value!r}").format(
                name=name, kind=_kind(value), value=value
            )
        )
    if minimum is not None and value < minimum:
        raise ValueError(
            _("{name} must be at least {minimum}, got {value}").format(
                name=name, minimum=minimum, value=value
            )
        )
    if maximum is not None and value > maximum:
        raise ValueError(
            _("{name} must be at most {maximum}, got {value}").format(
                name=name, maximum=maximum, value=value
            )
        )
    return value


def _range(above, minimum, maximum, below) -> str:
    """The accepted range in words, in the learner's language: "positive", "≥ 0",
    "greater than 1", "in (0, 1]"."""
    low = above if above is not None else minimum
    high = below if below is not None else maximum
    if low is not None and high is not None:
        interval = f"{'(' if above is not None else '['}{low:g}, {high:g}"
        interval += ")" if below is not None else "]"
        return _("in {interval}").format(interval=interval)
    if above == 0:
        return "positive"
    if low is not None:
        if above is not None:
            return _("greater than {low:g}").format(low=low)
        return f"≥ {low:g}"
    if high is not None:
        return _("below {high:g}").format(high=high) if below is not None else f"≤ {high:g}"
    return ""


def number(
    name: str,
    value: object,
    *,
    above: float | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    hint: str = "",
    finite: bool = True,
) -> float:
    """A finite real number (int or float, not a bool) within the given bounds, as a float.

    ``above``/``below`` are strict bounds, ``minimum``/``maximum`` inclusive ones; ``hint``
    is appended to the range in the message (e.g. "(0 = greedy)"). ``finite=False`` lets
    inf and NaN through (a loss that diverged is still a loss)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            _("{name} must be a number, got {kind} {value!r}; pass a float such as 0.5").format(
                name=name, kind=_kind(value), value=value
            )
        )
    ok = (
        (math.isfinite(value) or not finite)
        and (above is None or value > above)
        and (minimum is None or value >= minimum)
        and (maximum is None or value <= maximum)
        and (below is None or value < below)
    )
    if not ok:
        bounds = _range(above, minimum, maximum, below)
        wanted = (
            _("a positive finite number")
            if bounds == "positive"
            else _("a finite number {bounds}").format(bounds=bounds).strip()
        )
        # hint is declared with N_() by the caller and translated here, when it is shown.
        wanted += f" {_(hint)}" if hint else ""
        raise ValueError(
            _("{name} must be {wanted}, got {value!r}").format(
                name=name, wanted=wanted, value=value
            )
        )
    return float(value)


def probability(name: str, value: object) -> float:
    """A dropout-style probability in [0, 1), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            _(
                "{name} must be a probability in [0, 1) given as a number (e.g. 0.1), "
                "got {kind} {value!r}"
            ).format(name=name, kind=_kind(value), value=value)
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(
            _("{name} must be a probability in [0, 1), got {value!r}").format(
                name=name, value=value
            )
        )
    return float(value)


def boolean(name: str, value: object) -> bool:
    """Exactly True or False (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise TypeError(
            _("{name} must be True or False, got {kind} {value!r}").format(
                name=name, kind=_kind(value), value=value
            )
        )
    return value


def instance(
    name: str,
    value: object,
    kind: type,
    *,
    expected: str = "",
    hint: str = "",
    optional: bool = False,
) -> object:
    """An instance of ``kind`` (or None, when ``optional``). ``expected`` names it in the message
    (default: the class's name, e.g. "torch.nn.Module" for nn.Module); ``hint``, declared with
    N_() by the caller, says where one comes from (e.g. "(from repeated_tokens)")."""
    if isinstance(value, kind) or (optional and value is None):
        return value
    wanted = expected or kind.__name__
    wanted += f" {_(hint)}" if hint else ""
    message = (
        _("{name} must be a {expected} or None, got {kind}")
        if optional
        else _("{name} must be a {expected}, got {kind}")
    )
    raise TypeError(message.format(name=name, expected=wanted, kind=_kind(value)))


def choice(name: str, value: object, choices: Iterable[object]) -> object:
    """One of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(
            _("{name} must be one of {choices}, got {value!r}").format(
                name=name, choices=", ".join(map(repr, choices)), value=value
            )
        )
    return value


def divides(name: str, value: int, of_name: str, of: int, why: str = "") -> None:
    """``value`` (argument ``name``) divides ``of`` (argument ``of_name``) with no remainder;
    ``why`` (e.g. "so every head gets the same number of features") joins the message."""
    if of % value:
        options = [d for d in range(1, of + 1) if of % d == 0]
        if why:  # declared with N_() by the caller and translated here, when it is shown
            message = _(
                "{name} ({value}) must divide {of_name} ({of}) {why}; possible {name}: {options}"
            )
        else:
            message = _("{name} ({value}) must divide {of_name} ({of}); possible {name}: {options}")
        raise ValueError(
            message.format(
                name=name,
                value=value,
                of_name=of_name,
                of=of,
                why=_(why) if why else "",
                options=options,
            )
        )


def tensor(
    name: str, value: object, min_dims: int = 0, *, floating: bool = False, shape: str = ""
) -> torch.Tensor:
    """A :class:`torch.Tensor` with at least ``min_dims`` dimensions, of a floating-point dtype
    when ``floating``; ``shape`` (e.g. "[B, T, C]") is named in the messages."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            _("{name} must be a torch.Tensor{shape}, got {kind}").format(
                name=name, shape=" " + shape if shape else "", kind=_kind(value)
            )
        )
    if value.dim() < min_dims:
        wanted = shape or _("at least {n} dimensions").format(n=min_dims)
        raise ValueError(
            _("{name} must have shape {wanted}, got {shape}").format(
                name=name, wanted=wanted, shape=tuple(value.shape)
            )
        )
    if floating and not value.is_floating_point():
        raise TypeError(
            _(
                "{name} must be a floating-point tensor, got dtype {dtype}; call .float() first"
            ).format(name=name, dtype=value.dtype)
        )
    return value


#: The dtypes of token ids (``torch.long`` and the narrower integers, which are widened to it).
INTEGER_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def token_ids(name: str, value: object, vocab_size: int, *, shape: str = "[B, T]") -> torch.Tensor:
    """A non-empty 2-D integer tensor of token ids in 0 … vocab_size − 1, as torch.long. Every
    forward pass calls it, so the passing case is one expression; the explanation is built only
    when it fails (:func:`_reject_token_ids`)."""
    fits = isinstance(value, torch.Tensor) and value.dtype in INTEGER_DTYPES and value.dim() == 2
    if not (fits and value.numel() > 0 and 0 <= int(value.min()) <= int(value.max()) < vocab_size):
        _reject_token_ids(name, value, vocab_size, shape)
    return value.long()


def _reject_token_ids(name: str, value: object, vocab_size: int, shape: str) -> None:
    """Raise the error that says why ``value`` is not a batch of token ids (see :func:`token_ids`)."""
    if not isinstance(value, torch.Tensor) or value.dtype not in INTEGER_DTYPES:
        raise TypeError(
            _("{name} must hold integer token ids {shape}, got {what}").format(
                name=name, shape=shape, what=_what(value)
            )
        )
    if value.dim() != 2 or value.numel() == 0:
        raise ValueError(
            _("{name} must have shape {wanted} with T ≥ 1, got {shape}").format(
                name=name, wanted=shape, shape=tuple(value.shape)
            )
        )
    low, high = int(value.min()), int(value.max())
    raise ValueError(
        _("{name} has ids in [{low}, {high}] but vocab_size is {vocab_size}").format(
            name=name, low=low, high=high, vocab_size=vocab_size
        )
    )
