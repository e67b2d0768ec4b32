"""Tick labels for heatmap axes (private to :mod:`.viz`): every token where it fits, else as
many labels as fit at round steps.

``seaborn.heatmap``'s own ``"auto"`` labels every second token of a 16-token axis; the course
needs every key of a token × token map (measured in reviews/code.md §3.3), so it keeps this.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.font_manager import FontProperties


def _round_step(needed: int) -> int:
    """The smallest of 1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 80, 100, … that is at least ``needed``:
    ticks at 0, 20, 40 read better than at 0, 11, 22."""
    scale = 1
    while True:
        for base in (1, 2, 4, 5, 8) if scale == 1 else (1, 2, 2.5, 4, 5, 8):
            if base * scale >= needed:
                return int(base * scale)
        scale *= 10


def _thin_ticks(
    labels: Sequence[str] | None, count: int, max_ticks: int
) -> tuple[list[int], list[str]]:
    step = _round_step(int(np.ceil(count / max(max_ticks, 1))))
    positions = list(range(0, count, step))
    names = [str(labels[i]) if labels is not None else str(i) for i in positions]
    return positions, names


def _labels_that_fit(
    ax: Axes,
    labels: Sequence[str] | None,
    count: int,
    axis: str,
    fontsize: float | None = None,
    colorbar: bool = True,
) -> int:
    """How many tick labels fit along an axis without touching (from the axes' size before layout,
    less a margin for the colour bar when there is one); numbers on the x axis lie flat and need
    their width."""
    fig = ax.figure
    # The grid cell, not the axes' current box: seaborn draws the figure after each panel, and the
    # layout that draw runs would shrink later panels and give them fewer labels than the first.
    spec = ax.get_subplotspec()
    box = spec.get_position(fig) if spec is not None else ax.get_position()
    if fontsize is None:
        fontsize = FontProperties(size=plt.rcParams[f"{axis}tick.labelsize"]).get_size_in_points()
    if axis == "x":
        length = (0.85 if colorbar else 1.0) * 72 * box.width * fig.get_figwidth()
        widest = max(
            (len(str(labels[i]) if labels is not None else str(i)) for i in range(count)), default=1
        )
        per_label = 1.25 * fontsize if labels is not None else (0.62 * widest + 1.2) * fontsize
    else:
        length = 0.85 * 72 * box.height * fig.get_figheight()
        per_label = 1.3 * fontsize
    return max(2, int(length // per_label))


#: Token labels may shrink to this size (points) before some are left out: a reader of a
#: token × token map needs every key, and 6 pt still reads on screen.
_SMALLEST_TOKEN_FONT = 6.0


def set_ticks(
    ax: Axes, labels: Sequence[str] | None, count: int, axis: str, max_ticks: int, colorbar: bool
) -> None:
    """Label an axis of ``count`` cells: every token if it fits at a smaller font, else as many as
    fit at round steps. Cell centres sit at i + 0.5 (seaborn's mesh)."""
    fontsize = FontProperties(size=plt.rcParams[f"{axis}tick.labelsize"]).get_size_in_points()
    fits = _labels_that_fit(ax, labels, count, axis, fontsize, colorbar)
    if labels is not None and fits < count <= max_ticks:
        fontsize = max(_SMALLEST_TOKEN_FONT, fontsize * fits / count)
        fits = _labels_that_fit(ax, labels, count, axis, fontsize, colorbar)
    positions, names = _thin_ticks(labels, count, min(max_ticks, fits))
    rotation = 90 if (labels is not None and axis == "x") else 0
    setter = ax.set_xticks if axis == "x" else ax.set_yticks
    setter([p + 0.5 for p in positions], names, rotation=rotation, fontsize=fontsize)
