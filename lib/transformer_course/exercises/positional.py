"""Exercises of 03_positional_encoding."""

from __future__ import annotations

import math

import torch

from .. import positional
from ..i18n import N_, _
from . import Feedback, check_value, checker, give_hint
from .build import build_exercise
from .solutions.positional import shift_encoding, sinusoidal_table


@checker
def check_wavelength(
    answer: object, dim: int = 10, d_model: int = 64, hint: bool = False
) -> Feedback:
    """The wavelength (in positions) of column ``dim`` of a ``d_model``-wide table."""
    if hint:
        return give_hint(
            _(
                "column {dim} belongs to the pair i = {dim} // 2; a wave sin(ω·pos) repeats when ω·pos grows by 2π."
            ).format(dim=dim)
        )
    expected = 2 * math.pi * 10000 ** (2 * (dim // 2) / d_model)
    return check_value(
        answer,
        expected,
        _("2π · 10000^({exponent}/{d_model}) ≈ {expected:.2f} positions.").format(
            exponent=2 * (dim // 2), d_model=d_model, expected=expected
        ),
        _(
            "a sine of pos · ω repeats every 2π / ω positions, with ω = 1 / 10000^(2i/d_model) and i = dim // 2."
        ),
        tolerance=max(1e-2, expected * 1e-4),
    )


# ---- build exercises --------------------------------------------------------------------


def _table_sizes(generator: torch.Generator) -> tuple[int, int]:
    # T = 1 (a single row) and widths whose half is odd (d = 2, 6, 10 …) catch a table that
    # puts all sines first and all cosines after, or that assumes T > 1 or d divisible by 4.
    T = int(torch.randint(1, 40, (1,), generator=generator))
    d_model = 2 * int(torch.randint(1, 40, (1,), generator=generator))
    return T, d_model


def _table_sines_then_cosines(context_length: int, d_model: int) -> torch.Tensor:
    """Slip: all sines first, then all cosines (torch.cat), instead of interleaved columns."""
    table = positional.sinusoidal_encoding(context_length, d_model)  # (T, C)
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)  # (T, C)


def _table_cos_first(context_length: int, d_model: int) -> torch.Tensor:
    """Slip: cosines in the even columns and sines in the odd ones."""
    table = positional.sinusoidal_encoding(context_length, d_model)  # (T, C)
    return table.view(context_length, d_model // 2, 2).flip(-1).reshape(context_length, d_model)


def _table_column_index_exponent(context_length: int, d_model: int) -> torch.Tensor:
    """Slip: the exponent 2j/d_model with j the column index (0, 2, 4 …), i.e. 4i/d_model."""
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # (T, 1)
    columns = torch.arange(0, d_model, 2, dtype=torch.float64)  # (C/2,) j = 2i
    angles = positions / 10000.0 ** (2 * columns / d_model)  # (T, C/2)
    table = torch.empty(context_length, d_model, dtype=torch.float64)  # (T, C)
    table[:, 0::2], table[:, 1::2] = angles.sin(), angles.cos()
    return table.float()


check_sinusoidal_table = build_exercise(
    notebook="03_positional_encoding",
    solution=sinusoidal_table,
    hint=N_("""
        make positions (T, 1) and the even column indices 2i (d_model/2,) with torch.arange,
        the angles pos / 10000 ** (2i / d_model) by broadcasting to (T, d_model/2), then
        fill an empty (T, d_model) table: sines into the even columns (table[:, 0::2]) and
        cosines into the odd ones (table[:, 1::2]). Sines first and cosines after
        (torch.cat) is a different table.
    """),
    success=N_("""
        That is `positional.sinusoidal_encoding`, the table the course adds to every input.
    """),
    reference=positional.sinusoidal_encoding,
    make_inputs=_table_sizes,
    slips={
        N_(
            "all sines first and all cosines after (torch.cat): they interleave, sin in column 2i, "
            "cos in 2i + 1"
        ): _table_sines_then_cosines,
        N_("sines and cosines swapped (sin goes into the even columns)"): _table_cos_first,
        N_("the exponent 2j/d_model with j the column index (it is 2i/d_model with i = j // 2)"): (
            _table_column_index_exponent
        ),
    },
)


def _shift_by_rope(pe: torch.Tensor, k: int) -> torch.Tensor:
    """The reference, by another route: the library's RoPE (13_modern_blocks) rotated by −k.

    RoPE turns each pair (x_2i, x_2i+1) into (x_2i·c − x_2i+1·s, x_2i·s + x_2i+1·c) with c, s the
    cosine and sine of its angle; at the angle −k·ω_i that is (sin·c + cos·s, cos·c − sin·s) for a
    (sin, cos) pair of the table: the angle-sum formulas of a shift by +k.
    """
    return positional.apply_rope(pe, positions=torch.full((pe.shape[0],), -k))  # (N, C)


def _rows_and_shift(generator: torch.Generator) -> tuple[torch.Tensor, int]:
    # Rows at scattered positions (not a contiguous block, so nothing can be read off the row
    # index), shifts from −20 to 20 (0 and negative ones included), widths from 2 to 64.
    k = int(torch.randint(-20, 21, (1,), generator=generator))
    d_model = 2 * int(torch.randint(1, 33, (1,), generator=generator))
    n_rows = int(torch.randint(1, 20, (1,), generator=generator))
    positions = torch.randint(max(0, -k), 200, (n_rows,), generator=generator)  # (N,) pos + k ≥ 0
    table = positional.sinusoidal_encoding(200, d_model)  # (200, C)
    return table[positions], k  # (N, C), k


def _shift_backwards(pe: torch.Tensor, k: int) -> torch.Tensor:
    """Slip: the rotation by −k (the sin·s and cos·s terms with the wrong sign): PE[pos − k]."""
    return positional.apply_rope(pe, positions=torch.full((pe.shape[0],), k))  # (N, C)


check_shift_encoding = build_exercise(
    notebook="03_positional_encoding",
    solution=shift_encoding,
    hint=N_("""
        you do not know the positions, only the rows: use the angle-sum formulas. For pair
        i, with c = cos(k·ω_i) and s = sin(k·ω_i), the new sine column is sin·c + cos·s and
        the new cosine column is cos·c − sin·s. pe[:, 0::2] and pe[:, 1::2] give all sine
        and all cosine columns at once, and the (d_model/2,) vectors c, s broadcast over the
        rows.
    """),
    success=N_("""
        The same k-dependent rotation works for every row: that is the M_k of section 4.3,
        applied pair by pair. RoPE (notebook 13) rotates queries and keys the same way.
    """),
    reference=_shift_by_rope,
    make_inputs=_rows_and_shift,
    slips={
        N_(
            "a shift the wrong way, to PE[pos − k] (the sin·s terms have the wrong sign: "
            "sin(a + b) = sin a cos b + cos a sin b)"
        ): _shift_backwards,
    },
)
