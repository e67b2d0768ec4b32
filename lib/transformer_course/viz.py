"""Plotting helpers shared by all notebooks (d2l style: notebooks never paste plot code).

Every helper draws on a new figure (or the ``ax`` given), returns the
``matplotlib.figure.Figure`` and never calls ``plt.show()``: Jupyter's inline
backend shows the figure when the cell ends. In a notebook, *assign* the result
(``fig = viz.show_heatmap(...)``) rather than ending a cell with the bare call,
or the figure is shown twice; a trailing ``;`` does not help under nbval, which
runs cells without history. Long axes (more than ``max_ticks`` labels) are thinned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def to_numpy(values) -> np.ndarray:
    """A float NumPy copy of a tensor / array / nested list (detached, on the CPU)."""
    if isinstance(values, torch.Tensor):
        return values.detach().to("cpu", torch.float32).numpy()
    return np.asarray(values, dtype=np.float32)


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def _thin_ticks(labels: Sequence[str] | None, count: int, max_ticks: int) -> tuple[list[int], list[str]]:
    step = max(1, int(np.ceil(count / max_ticks)))
    positions = list(range(0, count, step))
    names = [str(labels[i]) if labels is not None else str(i) for i in positions]
    return positions, names


def show_heatmap(
    matrix,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    annotate: bool | str = False,
    max_ticks: int = 32,
    figsize: tuple[float, float] = (6.0, 4.5),
) -> Figure:
    """Draw one 2-D matrix [rows, cols] as a heatmap (introduced in 03_positional_encoding).

    ``annotate=True`` (or a format such as ``".2f"``) writes each value in its cell;
    masked ``-inf`` entries are drawn in grey so a causal mask is visible.
    """
    data = to_numpy(matrix)
    if data.ndim != 2:
        raise ValueError(f"show_heatmap needs a 2-D matrix, got shape {data.shape}")
    fig, ax = _new_axes(ax, figsize)
    masked = np.ma.masked_invalid(np.where(np.isneginf(data), np.nan, data))
    colormap = plt.get_cmap(cmap).with_extremes(bad="#d9d9d9")
    image = ax.imshow(masked, cmap=colormap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    rows, cols = data.shape
    xpos, xnames = _thin_ticks(xticklabels, cols, max_ticks)
    ypos, ynames = _thin_ticks(yticklabels, rows, max_ticks)
    ax.set_xticks(xpos, xnames, rotation=90 if xticklabels is not None else 0)
    ax.set_yticks(ypos, ynames)
    if annotate:
        fmt = annotate if isinstance(annotate, str) else ".2f"
        threshold = np.nanmean(masked.filled(np.nan)) if masked.count() else 0.0
        for r in range(rows):
            for c in range(cols):
                value = data[r, c]
                text = "−∞" if np.isneginf(value) else format(value, fmt)
                colour = "white" if np.isfinite(value) and value < threshold else "black"
                ax.text(c, r, text, ha="center", va="center", fontsize=7, color=colour)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if colorbar:
        fig.colorbar(image, ax=ax, shrink=0.85)
    return fig


def show_heatmaps(
    matrices,
    *,
    titles: Sequence[str] | None = None,
    ncols: int | None = None,
    suptitle: str | None = None,
    cell_size: float = 2.6,
    share_scale: bool = True,
    **heatmap_kwargs,
) -> Figure:
    """Draw a grid of heatmaps, e.g. one per attention head ([H, T, T]) or per
    layer × head ([L, H, T, T]) (introduced in 05_scale)."""
    data = to_numpy(matrices)
    if data.ndim == 3:
        grid = data[None] if ncols is None else data.reshape(-1, ncols, *data.shape[-2:])
    elif data.ndim == 4:
        grid = data
    else:
        raise ValueError(f"show_heatmaps needs [N, rows, cols] or [R, C, rows, cols], got shape {data.shape}")
    nrows, ncols_ = grid.shape[:2]
    fig, axes = plt.subplots(
        nrows, ncols_, figsize=(cell_size * ncols_ + 1.0, cell_size * nrows + 0.4), squeeze=False, layout="constrained"
    )
    finite = grid[np.isfinite(grid)]
    if share_scale and finite.size:
        heatmap_kwargs.setdefault("vmin", float(finite.min()))
        heatmap_kwargs.setdefault("vmax", float(finite.max()))
    heatmap_kwargs.setdefault("max_ticks", 16)
    for index, ax in enumerate(axes.flat):
        r, c = divmod(index, ncols_)
        title = titles[index] if titles is not None and index < len(titles) else None
        show_heatmap(grid[r, c], ax=ax, title=title, colorbar=False, **heatmap_kwargs)
    if share_scale and finite.size:
        fig.colorbar(axes.flat[0].images[0], ax=axes, shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_curves(
    curves: Mapping[str, Sequence[float] | tuple[Sequence[float], Sequence[float]]],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "step",
    ylabel: str | None = None,
    logy: bool = False,
    figsize: tuple[float, float] = (6.5, 3.8),
) -> Figure:
    """Draw named curves on one axes (introduced in 05_scale).

    Each value is either ``ys`` (plotted against 0..n−1) or an ``(xs, ys)`` pair.
    """
    fig, ax = _new_axes(ax, figsize)
    for name, values in curves.items():
        if isinstance(values, tuple) and len(values) == 2:
            xs, ys = to_numpy(values[0]), to_numpy(values[1])
        else:
            ys = to_numpy(values)
            xs = np.arange(len(ys))
        ax.plot(xs, ys, label=name, marker="o" if len(ys) <= 20 else None, markersize=3)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return fig


def bar_chart(
    values: Mapping[str, float],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    ylabel: str | None = None,
    logy: bool = False,
    figsize: tuple[float, float] = (6.5, 3.5),
) -> Figure:
    """Draw one bar per named value (introduced in 01_tokenization)."""
    fig, ax = _new_axes(ax, figsize)
    names = list(values)
    ax.bar(names, [float(values[n]) for n in names], color="tab:blue")
    if logy:
        ax.set_yscale("log")
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.tick_params(axis="x", rotation=30 if max(map(len, names), default=0) > 8 else 0)
    return fig
