"""Pictures of attention weights (04_qkv, 08_v_attention; 12_generation for a trained model).

* :func:`attention_map_figure` — heatmaps of weights [H, T, S] or [L, H, T, S], one head or
  every head of a layer as a grid, labelled with the tokens on both axes. Drawn by
  :func:`..viz.show_heatmaps` (seaborn), like every heatmap of the course.
* :func:`attention_map_html` — the same heatmaps as HTML with the exact weight under the
  mouse: what the live explorers (:mod:`.attention`) show, because it redraws in milliseconds
  where a figure takes a few hundred (``benchmarks/bench_attention.py`` measures both).
* :func:`head_split_figure` — which columns of a [T, C] tensor go to which head (04, 08).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .. import _checks, viz
from ..i18n import N_, _
from ..viz import to_numpy, token_label

HEAD_COLOURS = (
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:olive",
)


def as_layers(weights) -> np.ndarray:
    """[H, T, S] or [L, H, T, S] -> a float array [L, H, T, S] (shared with the explorers)."""
    data = to_numpy(weights)
    if data.ndim == 3:
        return data[None]
    if data.ndim == 4:
        return data
    raise ValueError(
        _("weights must have shape [H, T, S] or [L, H, T, S], got {shape}").format(
            shape=tuple(data.shape)
        )
    )


def position_labels(tokens: Sequence[str] | None, count: int, what: str) -> list[str]:
    """The ``count`` axis labels of a map: the tokens made visible (:func:`..viz.token_label`),
    or the positions 0..count−1 when there are none; a ValueError names ``what`` on a mismatch."""
    if tokens is None:
        return [str(i) for i in range(count)]
    if len(tokens) != count:
        raise ValueError(
            _("{what} must have {count} entries (one per position), got {n_tokens}").format(
                what=what, count=count, n_tokens=len(tokens)
            )
        )
    return [token_label(str(t)) for t in tokens]


def _grid_shape(n_panels: int) -> tuple[int, int]:
    ncols = n_panels if n_panels <= 4 else math.ceil(math.sqrt(n_panels))
    return math.ceil(n_panels / ncols), ncols


def _figure_size(
    n_panels: int, row_chars: int, col_chars: int, titled: bool
) -> tuple[float, float]:
    """Inches for a grid of ``n_panels`` heatmaps with room for the longest query and key labels
    (a single head is drawn larger, so its written-in weights can be read)."""
    nrows, ncols = _grid_shape(n_panels)
    single = n_panels == 1
    panel = 4.6 if single else 2.5  # inches per heatmap
    char = (8 if single else 6) / 72 * 0.62  # inches per character of a tick label, roughly
    gap = 0.25
    width = 0.45 + char * row_chars + ncols * panel + (ncols - 1) * gap + 1.0
    height = (
        0.45
        + char * col_chars
        + nrows * panel
        + (nrows - 1) * (gap + 0.15)
        + (0.75 if titled else 0.4)
    )
    return width, height


@dataclass
class _Selection:
    """The panels one view shows: ``maps`` [N, T, S] of the chosen heads, their titles, the
    query and key labels, and the top of the colour scale (0 … top)."""

    maps: np.ndarray
    titles: list[str]
    rows: list[str]
    cols: list[str]
    top: float


def _select(
    weights,
    tokens,
    key_tokens,
    head: int | None,
    layer: int,
    vmax: float | None,
) -> _Selection:
    """The panels to draw, titled in the learner's language (figures draw Chinese with the
    package's CJK font, which ``setup_notebook(lang="zh")`` puts behind matplotlib's)."""
    layers = as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _checks.integer("layer", layer, 0, L - 1)
    if head is not None:  # None: every head
        _checks.integer("head", head, 0, H - 1)
    heads = list(range(H)) if head is None else [head]
    maps = layers[layer, heads]  # (N, T, S)
    top = float(np.nanmax(maps)) if vmax is None else float(vmax)
    template = _("layer {layer} · head {h}") if L > 1 else _("head {h}")
    return _Selection(
        maps,
        [template.format(layer=layer, h=h) for h in heads],
        position_labels(tokens, T, "tokens"),
        position_labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens"),
        top if top > 0 else 1.0,
    )


def attention_map_figure(
    weights,
    tokens: Sequence[str] | None = None,
    *,
    head: int | None = None,
    layer: int = 0,
    key_tokens: Sequence[str] | None = None,
    title: str | None = None,
    annotate: bool = False,
    vmax: float | None = None,
    cmap: str = "viridis",
) -> Figure:
    """Heatmaps of attention weights (08_v_attention; 12_generation for a trained model).

    ``weights`` is [H, T, S] (one layer) or [L, H, T, S]; rows are queries, columns keys.
    ``head=None`` draws every head of ``layer`` as a grid, an int draws that head alone,
    larger, with its exact values written in the cells when ``annotate`` is true.
    ``tokens`` label the queries (and the keys unless ``key_tokens`` is given, as in
    cross-attention). The colour scale runs from 0 to ``vmax`` (default: the largest
    weight shown), shared by every panel. Drawn by :func:`..viz.show_heatmaps`; the explorers
    draw the same panels as HTML (:func:`attention_map_html`), fast enough to follow a slider.
    """
    view = _select(weights, tokens, key_tokens, head, layer, vmax)
    n_panels = len(view.maps)
    fig = viz.show_heatmaps(
        view.maps,
        titles=view.titles,
        ncols=_grid_shape(n_panels)[1],
        suptitle=title,
        figsize=_figure_size(
            n_panels, max(map(len, view.rows)), max(map(len, view.cols)), bool(title)
        ),
        outer_labels=True,
        xticklabels=view.cols,
        yticklabels=view.rows,
        xlabel=_("key (attended to)"),
        ylabel=_("query (attending)"),
        vmin=0.0,
        vmax=view.top,
        cmap=cmap,
        annotate=annotate and n_panels == 1,
    )
    fig.axes[-1].set_ylabel(_("attention weight"))  # the shared colour bar
    return fig


def head_split_figure(
    matrix, n_heads: int, *, title: str | None = None, tokens: Sequence[str] | None = None
) -> Figure:
    """Which columns of a [T, C] matrix (e.g. Q of one sequence) go to which head (04_qkv, 08).

    Left: the whole matrix with a coloured band per head; right: the H blocks [T, C/H] that
    the head split hands to each head.
    """
    data = to_numpy(matrix)
    if data.ndim != 2:
        raise ValueError(
            _("matrix must be 2-D [T, C], got shape {shape}").format(shape=tuple(data.shape))
        )
    T, C = data.shape
    _checks.integer("n_heads", n_heads)
    _checks.divides("n_heads", n_heads, "C", C, N_("so every head gets C // n_heads columns"))
    D = C // n_heads
    limit = float(np.abs(data).max()) or 1.0
    fig = plt.figure(figsize=(11, 4.2), layout="constrained")
    grid = fig.add_gridspec(2, 2 * n_heads, height_ratios=[1, 12])
    whole = fig.add_subplot(grid[1, :n_heads])
    whole.imshow(
        data, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest"
    )
    _mark_heads(whole, n_heads, D)
    whole.set_xlabel(_("column (C = {C})").format(C=C))
    whole.set_yticks(range(T), position_labels(tokens, T, "tokens"), fontsize=8)
    whole.set_ylabel(_("position"))
    for h in range(n_heads):
        ax = fig.add_subplot(grid[1, n_heads + h])
        ax.imshow(
            data[:, h * D : (h + 1) * D],
            cmap="RdBu_r",
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(
            _("head {h}: [{T}, {D}]").format(h=h, T=T, D=D), fontsize=8, color=HEAD_COLOURS[h % 8]
        )
        ax.set_xticks([0, D - 1], [str(h * D), str((h + 1) * D - 1)], fontsize=6)
        ax.set_yticks([])
    fig.suptitle(title or f"(T, C) = ({T}, {C}) → (H, T, D) = ({n_heads}, {T}, {D})")
    return fig


def _mark_heads(ax, n_heads: int, D: int) -> None:
    """A coloured band, a name and the column range above each head's D columns, and a line
    between neighbouring heads."""
    for h in range(n_heads):
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        ax.axvspan(h * D - 0.5, (h + 1) * D - 0.5, ymin=1.0, ymax=1.04, color=colour, clip_on=False)
        if h:
            ax.axvline(h * D - 0.5, color="black", linewidth=1.5)
        label = _("head {h}\ncols {first}–{last}").format(h=h, first=h * D, last=(h + 1) * D - 1)
        ax.text(
            (h + 0.5) * D - 0.5, -1.3, label, ha="center", va="bottom", fontsize=7, color=colour
        )


def attention_map_html(
    weights,
    tokens: Sequence[str] | None = None,
    *,
    head: int | None = None,
    layer: int = 0,
    key_tokens: Sequence[str] | None = None,
    vmax: float | None = None,
    annotate: bool | None = None,
    cmap: str = "viridis",
) -> str:
    """The heatmaps of :func:`attention_map_figure` as an HTML string (the explorers' live view).

    ``weights`` is [H, T, S] or [L, H, T, S]; same arguments and colours as the figure; hovering a cell shows its exact weight, and a
    single head (``annotate`` defaults to true then) writes the weights in the cells. Building
    the HTML takes milliseconds where a matplotlib redraw takes a few hundred, which is what
    lets the explorer follow a dragged slider (``benchmarks/bench_attention.py`` measures both).
    """
    import html

    view = _select(weights, tokens, key_tokens, head, layer, vmax)
    rows, cols = [html.escape(r) for r in view.rows], [html.escape(c) for c in view.cols]
    annotate = len(view.maps) == 1 if annotate is None else annotate
    lut = plt.get_cmap(cmap)(np.linspace(0.0, 1.0, 256))[:, :3]  # (256, 3) one colour per level
    colours = _Colours(
        ["#{:02x}{:02x}{:02x}".format(*(round(c * 255) for c in rgb)) for rgb in lut],
        list((lut @ np.array([0.299, 0.587, 0.114])) < 0.55),  # (256,) white text on dark cells
    )
    # (N, T, S) each weight's colour level 0 … 255
    levels = np.round(np.clip(np.nan_to_num(view.maps / view.top), 0.0, 1.0) * 255).astype(int)
    panels = [
        _html_panel(title, values, level, rows, cols, colours, annotate)
        for title, values, level in zip(view.titles, view.maps, levels)
    ]
    stops = ", ".join(colours.hex[i] for i in range(0, 256, 32)) + ", " + colours.hex[255]
    legend = (
        "<div style='font:10px sans-serif;display:flex;align-items:center;gap:4px'>0"
        f"<div style='width:160px;height:10px;background:linear-gradient(to right, {stops})'></div>"
        f"{view.top:.2f} · "
        + html.escape(
            _("rows: query (attending) · columns: key (attended to) · hover a cell for its weight")
        )
        + "</div>"
    )
    body = "".join(panels)
    return f"{_html_css(annotate)}<div style='display:flex;flex-wrap:wrap;align-items:flex-start'>{body}</div>{legend}"


@dataclass
class _Colours:
    hex: list[str]  # 256 background colours, one per level
    dark: list[bool]  # whether white text reads better on each


def _html_css(annotate: bool) -> str:
    width, height = (30, 18) if annotate else (14, 14)  # pixels per cell
    return (
        "<style>.tc-att{border-collapse:collapse;font:10px sans-serif;margin:0 12px 8px "
        "0;line-height:1}"
        f".tc-att td.w{{width:{width}px;min-width:{width}px;max-width:{width}px;height:{height}px;"
        "padding:0;text-align:center;font-size:8px}"
        ".tc-att th{font-weight:normal;padding:0 4px 0 0;white-space:pre;text-align:right}"
        ".tc-att th.k{writing-mode:vertical-rl;transform:rotate(180deg);padding:4px 0 0 0;"
        f"width:{width}px;max-width:{width}px}}"
        ".tc-att caption{font-weight:bold;padding-bottom:2px}</style>"
    )


def _html_panel(
    name: str,
    values: np.ndarray,
    levels: np.ndarray,
    rows: list[str],
    cols: list[str],
    colours: _Colours,
    annotate: bool,
) -> str:
    """One head's table: values and colour levels [T, S], escaped labels, a tooltip per cell."""
    import html

    lines = [f"<table class='tc-att'><caption>{html.escape(name)}</caption>"]
    tip = html.escape(_("{name} · query {i} {row} → key {j} {col}: {value}"), quote=True)
    for i, row in enumerate(rows):
        cells = []
        for j, col in enumerate(cols):
            value, level = values[i, j], levels[i, j]
            text = f"{value:.2f}" if annotate else ""
            colour = "#fff" if colours.dark[level] else "#000"
            cells.append(
                f"<td class='w' style='background:{colours.hex[level]};color:{colour}' "
                f"title='{tip.format(name=name, i=i, row=row, j=j, col=col, value=f'{value:.4f}')}'>"
                f"{text}</td>"
            )
        lines.append(f"<tr><th>{row}</th>{''.join(cells)}</tr>")
    lines.append(
        "<tr><th></th>" + "".join(f"<th class='k'>{c}</th>" for c in cols) + "</tr></table>"
    )
    return "".join(lines)
