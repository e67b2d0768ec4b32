"""The tile grid of FlashAttention on the course's numbers: which (query tile, key tile) pairs a
causal pass computes in full, computes with a mask, or skips (introduced in 15_flash_attention;
drawn in the style of the query-row schematic of 04–08)."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..attention.flash import tile_grid
from ..i18n import _
from .base import EDGE, PALETTE, box, canvas, localised, note, title
from .numbers import COURSE

#: The layout in inches: one tile's box, the width of the row labels.
_TILE, _LABEL_W = 1.15, 2.2


@localised
def flash_tile_grid(T: int | None = None, block_q: int = 4, block_k: int = 4) -> Figure:
    """The tiles of a causal pass over T queries and T keys (default: the course's T = 16) with ``block_q`` × ``block_k`` tiles: full tiles in orange, tiles that cross the
    diagonal (masked inside) in yellow, tiles wholly in the future grey and skipped."""
    T = COURSE.T if T is None else T
    grid = tile_grid(T, block_q, block_k, causal=True)  # (rows, cols) 0 skip, 1 mask, 2 full
    rows, cols = grid.shape
    width, height = _LABEL_W + cols * _TILE + 0.4, 2.0 + rows * _TILE
    fig, ax = canvas(width, height)
    title(
        ax,
        width / 2,
        height - 0.3,
        _("Causal FlashAttention, T = {T}: {computed} of {total} tiles computed").format(
            T=T, computed=int((grid > 0).sum()), total=rows * cols
        ),
        fontsize=12.5,
    )
    top = height - 1.15
    for j in range(cols):
        last = min((j + 1) * block_k, T) - 1
        x = _LABEL_W + _TILE * (j + 0.5)
        note(
            ax,
            x,
            top + 0.25,
            _("keys {first}–{last}").format(first=j * block_k, last=last),
            ha="center",
            style="normal",
        )
    _tile_rows(ax, grid, T, block_q, top)
    note(
        ax,
        0.15,
        0.35,
        _(
            "each tile: S = Q_i K_jᵀ/√d ({bq} × {bk}), then m, l and O of its queries are updated"
        ).format(bq=block_q, bk=block_k),
    )
    return fig


def _tile_rows(ax, grid, T: int, block_q: int, top: float) -> None:
    """One row of boxes per query tile, each labelled skipped, masked or full."""
    labels = {0: _("skipped"), 1: _("masked"), 2: _("full")}
    colours = {0: "#bdbdbd", 1: PALETTE["modern"], 2: PALETTE["attention"]}
    rows, cols = grid.shape
    for i in range(rows):
        y = top - _TILE * (i + 0.5)
        last = min((i + 1) * block_q, T) - 1
        ax.text(
            0.15,
            y,
            _("queries {first}–{last}").format(first=i * block_q, last=last),
            ha="left",
            va="center",
            fontsize=10,
        )
        for j in range(cols):
            kind = int(grid[i, j])
            box(
                ax,
                _LABEL_W + _TILE * (j + 0.5),
                y,
                _TILE - 0.1,
                _TILE - 0.1,
                labels[kind],
                colours[kind],
                fontsize=9.5,
                edge=EDGE,
            )
