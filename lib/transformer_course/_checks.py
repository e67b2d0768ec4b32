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


def _kind(value: object) -> str:
    return type(value).__name__


def _what(value: object) -> str:
    """What was passed instead of integer token ids: a tensor's dtype, or the type of anything else."""
    if isinstance(value, torch.Tensor):
        return f"dtype {value.dtype}"
    return f"{_kind(value)}, not a torch.Tensor"


def integer(name: str, value: object, minimum: int | None = 1, maximum: int | None = None) -> int:
    """An int (not a bool) in ``minimum`` … ``maximum``; None leaves that side open."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(
            f"{name} must be an int (a whole number such as 4), got {_kind(value)} {value!r}"
        )
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def _range(above, minimum, maximum, below) -> str:
    """The accepted range in words: "positive", "≥ 0", "greater than 1", "in (0, 1]"."""
    low = above if above is not None else minimum
    high = below if below is not None else maximum
    if low is not None and high is not None:
        return f"in {'(' if above is not None else '['}{low:g}, {high:g}{')' if below is not None else ']'}"
    if above == 0:
        return "positive"
    if low is not None:
        return f"greater than {low:g}" if above is not None else f"≥ {low:g}"
    if high is not None:
        return f"below {high:g}" if below is not None else f"≤ {high:g}"
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
            f"{name} must be a number, got {_kind(value)} {value!r}; pass a float such as 0.5"
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
            "a positive finite number"
            if bounds == "positive"
            else f"a finite number {bounds}".strip()
        )
        wanted += f" {hint}" if hint else ""
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return float(value)


def probability(name: str, value: object) -> float:
    """A dropout-style probability in [0, 1), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{name} must be a probability in [0, 1) given as a number (e.g. 0.1), "
            f"got {_kind(value)} {value!r}"
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
    return float(value)


def boolean(name: str, value: object) -> bool:
    """Exactly True or False (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {_kind(value)} {value!r}")
    return value


def choice(name: str, value: object, choices: Iterable[object]) -> object:
    """One of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def divides(name: str, value: int, of_name: str, of: int, why: str = "") -> None:
    """``value`` (argument ``name``) divides ``of`` (argument ``of_name``) with no remainder;
    ``why`` (e.g. "so every head gets the same number of features") joins the message."""
    if of % value:
        options = [d for d in range(1, of + 1) if of % d == 0]
        reason = f" {why}" if why else ""
        raise ValueError(
            f"{name} ({value}) must divide {of_name} ({of}){reason}; possible {name}: {options}"
        )


def tensor(
    name: str, value: object, min_dims: int = 0, *, floating: bool = False, shape: str = ""
) -> torch.Tensor:
    """A :class:`torch.Tensor` with at least ``min_dims`` dimensions, of a floating-point dtype
    when ``floating``; ``shape`` (e.g. "[B, T, C]") is named in the messages."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor{' ' + shape if shape else ''}, got {_kind(value)}"
        )
    if value.dim() < min_dims:
        wanted = shape or f"at least {min_dims} dimensions"
        raise ValueError(f"{name} must have shape {wanted}, got {tuple(value.shape)}")
    if floating and not value.is_floating_point():
        raise TypeError(
            f"{name} must be a floating-point tensor, got dtype {value.dtype}; call .float() first"
        )
    return value


#: The dtypes of token ids (``torch.long`` and the narrower integers, which are widened to it).
INTEGER_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def token_ids(name: str, value: object, vocab_size: int, *, shape: str = "[B, T]") -> torch.Tensor:
    """A non-empty 2-D integer tensor of token ids in 0 … vocab_size − 1, as torch.long."""
    if not isinstance(value, torch.Tensor) or value.dtype not in INTEGER_DTYPES:
        raise TypeError(f"{name} must hold integer token ids {shape}, got {_what(value)}")
    if value.dim() != 2 or value.shape[1] == 0:
        raise ValueError(f"{name} must have shape {shape} with T ≥ 1, got {tuple(value.shape)}")
    low, high = int(value.min()), int(value.max())
    if low < 0 or high >= vocab_size:
        raise ValueError(f"{name} has ids in [{low}, {high}] but vocab_size is {vocab_size}")
    return value.long()
