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
import seaborn
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..i18n import _
from .labels import label as label  # re-exported: viz.label(...) in notebook cells
from .ticks import set_ticks

#: The colour of masked (−∞) cells: light grey, distinct from every colour map the course uses.
_MASKED_GREY = "#d9d9d9"


def to_numpy(values) -> np.ndarray:
    """A float NumPy copy of a tensor / array / nested list (detached, on the CPU)."""
    if isinstance(values, torch.Tensor):
        return values.detach().to("cpu", torch.float32).numpy()
    return np.asarray(values, dtype=np.float32)


def token_label(token: str) -> str:
    """A token made visible on an axis (introduced in 04_qkv; used through 12_generation): newlines and
    tabs escaped, a blank token shown quoted, an empty token shown as ∅."""
    text = token.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text if text.strip() else (repr(text) if text else "∅")


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


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
    """Draw one 2-D matrix [rows, cols] as a heatmap (introduced in 02_embeddings).

    ``seaborn.heatmap`` draws the cells, the colour bar and the annotations (``annotate=True``, or a
    format such as ``".2f"``; seaborn picks light or dark text for each cell's colour). Masked
    ``-inf`` entries are left out of the colour scale and drawn grey with a "−∞", so a causal mask
    is visible. The tick labels are ours, not seaborn's ``"auto"``: we label as many as fit, at
    round steps (0, 8, 16 …), and every token of a 16-token axis, where the automatic choice
    labels every second one (measured in reviews/code.md §3.3).
    """
    data = to_numpy(matrix)
    if data.ndim != 2:
        raise ValueError(
            _("show_heatmap needs a 2-D matrix, got shape {shape}").format(shape=data.shape)
        )
    fig, ax = _new_axes(ax, figsize)
    _draw_cells(ax, data, cmap=cmap, vmin=vmin, vmax=vmax, colorbar=colorbar, annotate=annotate)
    rows, cols = data.shape
    # Token labels run vertically on the x axis; numbers lie flat and need their width.
    set_ticks(ax, xticklabels, cols, "x", max_ticks, colorbar)
    set_ticks(ax, yticklabels, rows, "y", max_ticks, colorbar)
    ax.set(title=title or "", xlabel=xlabel or "", ylabel=ylabel or "")
    return fig


def _draw_cells(
    ax: Axes,
    data: np.ndarray,
    *,
    cmap: str,
    vmin: float | None,
    vmax: float | None,
    colorbar: bool,
    annotate: bool | str,
) -> None:
    """The cells of one heatmap, its colour bar and its annotations, drawn by seaborn without
    tick labels. ``-inf`` and NaN cells stay out of the colour scale; an annotated ``-inf``
    cell reads "−∞"."""
    minus_infinity = np.isneginf(data)
    ax.set_facecolor(_MASKED_GREY)  # masked cells are not drawn: the axes' background shows
    seaborn.heatmap(
        data,
        mask=minus_infinity | np.isnan(data),
        ax=ax,
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        cbar=colorbar,
        cbar_kws={"shrink": 0.85},
        annot=bool(annotate),
        fmt=annotate if isinstance(annotate, str) else ".2f",
        annot_kws={"fontsize": 7},
        xticklabels=False,
        yticklabels=False,
    )
    if annotate:
        for r, c in zip(*np.nonzero(minus_infinity)):
            ax.text(c + 0.5, r + 0.5, "−∞", ha="center", va="center", fontsize=7, color="black")


def show_heatmaps(
    matrices,
    *,
    titles: Sequence[str] | None = None,
    ncols: int | None = None,
    suptitle: str | None = None,
    cell_size: float = 2.6,
    share_scale: bool = True,
    figsize: tuple[float, float] | None = None,
    outer_labels: bool = False,
    **heatmap_kwargs,
) -> Figure:
    """Draw a grid of heatmaps, e.g. one per attention head ([H, T, T]) or per
    layer × head ([L, H, T, T]) (introduced in 03_positional_encoding).

    ``ncols`` wraps [N, rows, cols] into rows of that many panels (the last row may be short);
    ``figsize`` overrides the size from ``cell_size``; ``outer_labels`` keeps the tick and
    axis labels on the left column and the bottom panels only (every panel has the same ones).
    """
    grid, panels = _panel_grid(to_numpy(matrices), ncols)
    nrows, ncols_ = grid.shape[:2]
    if figsize is None:
        figsize = (cell_size * ncols_ + 1.0, cell_size * nrows + 0.4)
    fig, axes = plt.subplots(nrows, ncols_, figsize=figsize, squeeze=False, layout="constrained")
    finite = grid[np.isfinite(grid)]
    if share_scale and finite.size:
        heatmap_kwargs.setdefault("vmin", float(finite.min()))
        heatmap_kwargs.setdefault("vmax", float(finite.max()))
    heatmap_kwargs.setdefault("max_ticks", 16)
    for index, ax in enumerate(axes.flat):
        if index >= panels:
            ax.axis("off")
            continue
        r, c = divmod(index, ncols_)
        title = titles[index] if titles is not None and index < len(titles) else None
        # Without a shared scale every panel needs its own colour bar, or its values cannot be read.
        show_heatmap(grid[r, c], ax=ax, title=title, colorbar=not share_scale, **heatmap_kwargs)
        if outer_labels:
            _keep_outer_labels(ax, left=c == 0, bottom=index + ncols_ >= panels)
    if share_scale and finite.size:
        fig.colorbar(axes.flat[0].collections[0], ax=axes, shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def _panel_grid(data: np.ndarray, ncols: int | None) -> tuple[np.ndarray, int]:
    """The panels of :func:`show_heatmaps` as a grid [R, C, rows, cols], and how many are real:
    [N, rows, cols] wraps into rows of ``ncols`` (all N when None), and NaN panels complete the
    last row; [R, C, rows, cols] is a grid already."""
    if data.ndim == 3:
        per_row = len(data) if ncols is None else ncols
        shortfall = -len(data) % per_row  # empty panels that complete the last row
        padding = np.full((shortfall, *data.shape[-2:]), np.nan, dtype=data.dtype)
        return np.concatenate([data, padding]).reshape(-1, per_row, *data.shape[-2:]), len(data)
    if data.ndim == 4:
        return data, data.shape[0] * data.shape[1]
    raise ValueError(
        _("show_heatmaps needs [N, rows, cols] or [R, C, rows, cols], got shape {shape}").format(
            shape=data.shape
        )
    )


def _keep_outer_labels(ax: Axes, left: bool, bottom: bool) -> None:
    """Hide the y labels of a panel that is not in the left column, the x labels of one that
    has another panel below it."""
    if not left:
        ax.set_ylabel("")
        ax.tick_params(labelleft=False)
    if not bottom:
        ax.set_xlabel("")
        ax.tick_params(labelbottom=False)


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
    """Draw named curves on one axes (introduced in 01_tokenization).

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
    ax.set_xlabel(_("step") if xlabel == "step" else xlabel)  # the default, translated
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(curves) > 2:  # three or more curves leave no empty corner: keep the key off the data
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    elif len(curves) == 2:
        ax.legend()
    ax.grid(alpha=0.3)
    return fig


def plot_distributions(
    samples: Mapping[str, object],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    bins: int = 60,
    figsize: tuple[float, float] = (6.5, 3.8),
) -> Figure:
    """Overlay the histograms of named samples as densities, one outline each (introduced in
    05_scale), with ``seaborn.histplot``: each sample is normalised on its own, so a narrow and a
    wide distribution can be compared on one axis."""
    fig, ax = _new_axes(ax, figsize)
    frames = [(name, to_numpy(values).ravel()) for name, values in samples.items()]
    low = min(float(values.min()) for _name, values in frames)
    high = max(float(values.max()) for _name, values in frames)
    edges = np.linspace(low, high, bins + 1)  # shared bins: widths comparable across samples
    for name, values in frames:
        seaborn.histplot(
            values,
            bins=edges,
            stat="density",
            element="step",
            fill=True,
            alpha=0.3,
            label=name,
            ax=ax,
        )
    ax.set(title=title or "", xlabel=xlabel or "", ylabel=_("density"))
    ax.legend()
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
    if max(map(len, names), default=0) > 8:  # long names: slant them, each ending under its bar
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right", rotation_mode="anchor")
    return fig


def plot_untrained_loss(
    sweep: tuple[Sequence[float], Sequence[float]],
    models: Mapping[str, tuple[float, float]],
    *,
    ax: Axes | None = None,
    figsize: tuple[float, float] = (6.5, 3.8),
) -> Figure:
    """Untrained loss above ln V against the logit standard deviation σ (introduced in 10_logits_and_loss).

    Draws the approximation σ²/2 as a curve, ``sweep`` = (σs, measured loss − ln V) as small
    dots, and each of ``models`` (name -> (σ, loss − ln V)) as a larger point with its name.
    """
    sigmas, excess = to_numpy(sweep[0]), to_numpy(sweep[1])
    if sigmas.shape != excess.shape:
        raise ValueError(
            _("sweep needs as many σ values as losses: {n} σ, {m} losses").format(
                n=sigmas.size, m=excess.size
            )
        )
    fig, ax = _new_axes(ax, figsize)
    points = np.array(list(models.values()), dtype=float).reshape(-1, 2)  # (n_models, 2)
    right = max(float(sigmas.max(initial=0.0)), float(points[:, 0].max(initial=0.0))) * 1.05 or 1.0
    curve = np.linspace(0.0, right, 200)  # σ from 0 to past the last point
    ax.plot(curve, curve**2 / 2, color="black", label=label("σ²/2"))
    ax.scatter(
        sigmas,
        excess,
        s=14,
        color="tab:grey",
        label=label("output layer drawn at other scales (measured)"),
        zorder=3,
    )
    for (name, (sigma, gap)), colour in zip(
        models.items(), seaborn.color_palette("deep", len(models)), strict=True
    ):
        ax.scatter([sigma], [gap], s=60, color=colour, edgecolor="black", label=name, zorder=4)
    ax.set_xlabel(label("logit standard deviation σ"))
    ax.set_ylabel(label("untrained loss − ln V (nats)"))
    ax.set_title(label("ln V + σ²/2: the untrained loss against the spread of the logits"))
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return fig


#: Where a label may sit next to its point, in points (dx, dy, horizontal alignment), nearest first.
_LABEL_SPOTS = [
    (4, 3, "left"),
    (4, -10, "left"),
    (-4, 3, "right"),
    (-4, -10, "right"),
    (0, 8, "center"),
    (0, -16, "center"),
]


def scatter_labelled(
    points,
    labels: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 6.0),
) -> Figure:
    """Scatter ``points`` of shape [N, 2] with a text label each, coloured by group
    (introduced in 01_tokenization).

    Labels are placed one by one at the first spot around their point (further out if needed)
    where they overlap no label placed before; a label moved away gets a thin line to its point.
    """
    xy = to_numpy(points)  # (N, 2)
    if xy.ndim != 2 or xy.shape[1] != 2 or len(xy) != len(labels):
        raise ValueError(
            _(
                "scatter_labelled needs points of shape [N, 2] and N labels, got {shape} and "
                "{n_labels}"
            ).format(shape=xy.shape, n_labels=len(labels))
        )
    fig, ax = _new_axes(ax, figsize)
    _scatter_groups(ax, xy, groups)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.margins(0.08)
    texts = [
        ax.annotate(
            point_label,
            (x, y),
            xytext=_LABEL_SPOTS[0][:2],
            textcoords="offset points",
            fontsize=8,
            arrowprops={
                "arrowstyle": "-",
                "color": "0.55",
                "linewidth": 0.5,
                "shrinkA": 0,
                "shrinkB": 3,
            },
        )
        for point_label, (x, y) in zip(labels, xy.tolist())
    ]
    _spread_labels(fig, texts)
    return fig


def _scatter_groups(ax: Axes, xy: np.ndarray, groups: Sequence[str] | None) -> None:
    """The points [N, 2], one colour per group in order of first appearance, with a legend
    beside the axes when there are groups."""
    names = list(dict.fromkeys(groups)) if groups is not None else [None]
    palette = plt.get_cmap("tab10").colors
    for index, name in enumerate(names):
        members = [i for i in range(len(xy)) if groups is None or groups[i] == name]
        ax.scatter(
            xy[members, 0],
            xy[members, 1],
            s=25,
            color=palette[index % len(palette)],
            label=name,
            zorder=3,
        )
    if groups is not None:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _spread_labels(fig: Figure, texts: list) -> None:
    """Move each annotation to the nearest candidate spot inside the axes that overlaps no label
    placed before and no other point."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()  # lay the figure out once, so window extents are final
    ax = texts[0].axes if texts else None
    frame = ax.get_window_extent(renderer) if ax is not None else None
    radius = 3.0 * fig.dpi / 72  # a marker of size 25 is about 5 points across
    dots = [ax.transData.transform(text.xy) for text in texts] if ax is not None else []
    dot_boxes = [Bbox.from_extents(x - radius, y - radius, x + radius, y + radius) for x, y in dots]
    placed = []
    for index, text in enumerate(texts):
        other_dots = [box for j, box in enumerate(dot_boxes) if j != index]
        # A spot clear of labels and points; in a dense cluster, one clear of labels only.
        chosen = _free_spot(text, renderer, frame, placed + other_dots) or _free_spot(
            text, renderer, frame, placed
        )
        if chosen is None:  # crowded everywhere: keep the nearest spot
            text.xyann = _LABEL_SPOTS[0][:2]
            text.set_horizontalalignment(_LABEL_SPOTS[0][2])
            chosen = (1, _text_box(text, renderer))
        text.arrow_patch.set_visible(chosen[0] > 1)
        placed.append(chosen[1])


def _free_spot(text, renderer, frame, obstacles: list):
    """Put ``text`` at the nearest spot inside ``frame`` clear of ``obstacles``: (reach, box) or None."""
    for reach in range(1, 7):
        for dx, dy, align in _LABEL_SPOTS:
            text.xyann = (dx * reach, dy * reach)
            text.set_horizontalalignment(align)
            box = _text_box(text, renderer).expanded(1.05, 1.1)
            inside = frame is None or (
                box.x0 >= frame.x0
                and box.x1 <= frame.x1
                and box.y0 >= frame.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(other) for other in obstacles):
                return reach, box
    return None


def _text_box(text, renderer):
    """The window extent of an annotation's text alone (Annotation's own includes its line)."""
    from matplotlib.text import Text

    return Text.get_window_extent(text, renderer)
