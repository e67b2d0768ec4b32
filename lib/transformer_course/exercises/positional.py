"""Exercises of 03_positional_encoding."""

from __future__ import annotations

import math

from . import Feedback, check_value, checker


@checker
def check_pe_value(answer: object, pos: int = 3, dim: int = 2, d_model: int = 64) -> Feedback:
    """PE(pos, dim) for a table with ``d_model`` columns, to 4 decimals."""
    angle = pos / 10000 ** (2 * (dim // 2) / d_model)
    expected = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    func = "sin" if dim % 2 == 0 else "cos"
    return check_value(
        answer,
        expected,
        f"PE({pos}, {dim}) = {func}({pos} / 10000^({2 * (dim // 2)}/{d_model})) = {expected:.4f}.",
        f"column {dim} is {'even: a sine' if dim % 2 == 0 else 'odd: a cosine'} with i = {dim // 2}; "
        "use pos / 10000 ** (2 * i / d_model) as the angle (in radians).",
        tolerance=1e-4,
    )


@checker
def check_wavelength(answer: object, dim: int = 10, d_model: int = 64) -> Feedback:
    """The wavelength (in positions) of column ``dim`` of a ``d_model``-wide table."""
    expected = 2 * math.pi * 10000 ** (2 * (dim // 2) / d_model)
    return check_value(
        answer,
        expected,
        f"2π · 10000^({2 * (dim // 2)}/{d_model}) ≈ {expected:.2f} positions.",
        "a sine of pos · ω repeats every 2π / ω positions, with ω = 1 / 10000^(2i/d_model) and i = dim // 2.",
        tolerance=max(1e-2, expected * 1e-4),
    )


@checker
def check_self_dot(answer: object, d_model: int = 64) -> Feedback:
    """PE(pos) · PE(pos) for any position, in a ``d_model``-wide table."""
    return check_value(
        answer,
        d_model / 2,
        f"each of the {d_model // 2} (sin, cos) pairs contributes sin² + cos² = 1, so {d_model // 2}.",
        "group the columns in (sin, cos) pairs with the same angle and use sin² + cos² = 1.",
        tolerance=1e-4,
    )
