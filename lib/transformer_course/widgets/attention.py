"""The attention-map explorer (08_v_attention), reused for a trained model in 12_generation.

Plain functions do the work and are tested without a browser:

* :func:`weights_from_qk` — recompute the weights [..., H, T, T] with the mask and the
  1/√D scale switched on or off (the explorer's knobs in 08);
* :func:`attention_map_figure` — heatmaps of weights [H, T, S] or [L, H, T, S], one head or
  every head of a layer as a grid, labelled with the tokens on both axes;
* :func:`attention_row_table` — the exact weights of one query row as a pandas table;
* :func:`attention_map_html` — the same heatmaps as HTML with the exact weight under the
  mouse: what the live explorers show, because it redraws in milliseconds;
* :func:`head_split_figure` — which columns of a [T, C] tensor go to which head (04, 08).
* :class:`AttentionMapView` — the matplotlib heatmaps kept in one figure and updated in place
  (``set_data``/``set_clim``, titles, tick labels) instead of rebuilt; :class:`AttentionExplorer`
  — 08's knobs in, one redraw out, with the weights cached per (row, mask, scale);
  :func:`figure_png` — a figure's PNG without the inline backend's second, "tight" render.

:func:`attention_explorer` (queries and keys, 08) and :func:`weights_explorer` (ready
weights, e.g. of a trained model, 12) are thin ipywidgets wrappers around them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from .. import attention
from ..viz import to_numpy

HEAD_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def token_label(token: str) -> str:
    """A token made visible on an axis: newlines and tabs escaped, an empty token shown as ∅."""
    text = token.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text if text.strip() else (repr(text) if text else "∅")


def weights_from_qk(q: torch.Tensor, k: torch.Tensor, *, causal: bool = True, scaled: bool = True) -> torch.Tensor:
    """Attention weights [..., H, T, T] from queries and keys [..., H, T, D] (08_v_attention).

    ``causal`` switches the causal mask on; ``scaled`` divides the scores by √D (off: scale 1).
    """
    if not isinstance(q, torch.Tensor) or not isinstance(k, torch.Tensor) or q.shape != k.shape or q.dim() < 2:
        raise ValueError(
            "q and k must be tensors of the same shape [..., H, T, D], got "
            f"{tuple(getattr(q, 'shape', ()))} and {tuple(getattr(k, 'shape', ()))}"
        )
    T = q.shape[-2]
    mask = attention.causal_mask(T, device=q.device) if causal else None  # (T, T)
    with torch.no_grad():
        return attention.attention_weights(q, k, mask=mask, scale=None if scaled else 1.0)  # (..., H, T, T)


def _as_layers(weights) -> np.ndarray:
    """[H, T, S] or [L, H, T, S] -> a float array [L, H, T, S]."""
    data = to_numpy(weights)
    if data.ndim == 3:
        return data[None]
    if data.ndim == 4:
        return data
    raise ValueError(f"weights must have shape [H, T, S] or [L, H, T, S], got {tuple(data.shape)}")


def _check_choice(name: str, value: int | None, count: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < count:
        accepted = f"0..{count - 1}" + (" or None (all heads)" if allow_none else "")
        raise ValueError(f"{name} must be one of {accepted}, got {value!r}")


def _labels(tokens: Sequence[str] | None, count: int, what: str) -> list[str]:
    if tokens is None:
        return [str(i) for i in range(count)]
    if len(tokens) != count:
        raise ValueError(f"{what} must have {count} entries (one per position), got {len(tokens)}")
    return [token_label(str(t)) for t in tokens]


def _grid_shape(n_panels: int) -> tuple[int, int]:
    ncols = n_panels if n_panels <= 4 else math.ceil(math.sqrt(n_panels))
    return math.ceil(n_panels / ncols), ncols


@dataclass
class _MapParts:
    """The artists of one attention-map figure, kept so that a redraw only updates them."""

    figure: Figure
    axes: np.ndarray  # (nrows, ncols) of Axes
    images: list  # one AxesImage per panel
    n_panels: int
    annotations: list = field(default_factory=list)  # Text per cell of a single panel, made lazily
    suptitle: object = None


def _build_map(figure_factory, n_panels: int, T: int, S: int, row_chars: int, col_chars: int,
               titled: bool, cmap: str) -> _MapParts:
    """The layout of the heatmap figure: axes, one image per panel, a colorbar — no data yet."""
    nrows, ncols = _grid_shape(n_panels)
    single = n_panels == 1
    fontsize = 8 if single else 6
    panel = 4.6 if single else 2.5  # inches per heatmap
    # Fixed margins sized from the longest label: constrained layout would measure every
    # tick label on each redraw, which made the explorer feel sluggish (benchmarks/).
    char = fontsize / 72 * 0.62  # inches per character, roughly
    left = 0.45 + char * row_chars
    bottom = 0.45 + char * col_chars
    gap = 0.25
    head_room = 0.75 if titled else 0.4
    width = left + ncols * panel + (ncols - 1) * gap + 1.0
    height = bottom + nrows * panel + (nrows - 1) * (gap + 0.15) + head_room
    fig = figure_factory(figsize=(width, height))
    axes = fig.subplots(
        nrows,
        ncols,
        squeeze=False,
        sharex=True,
        sharey=True,
        gridspec_kw={
            "left": left / width,
            "right": (width - 1.0) / width,
            "bottom": bottom / height,
            "top": 1 - head_room / height,
            "wspace": gap / panel,
            "hspace": (gap + 0.15) / panel,
        },
    )
    images = []
    placeholder = np.zeros((T, S))  # (T, S) replaced by the first update
    for index, ax in enumerate(axes.flat):
        if index >= n_panels:
            ax.axis("off")
            continue
        images.append(ax.imshow(placeholder, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest"))
    # Shared axes: set the ticks once, label only the outer edges.
    axes[0, 0].set_xticks(range(S))
    axes[0, 0].set_yticks(range(T))
    for index, ax in enumerate(axes.flat):
        c = index % ncols
        below_is_empty = index + ncols >= n_panels
        ax.tick_params(labelbottom=below_is_empty, labelleft=c == 0, labelsize=fontsize, length=2)
        if below_is_empty:
            ax.set_xlabel("key (attended to)", fontsize=8)
        if c == 0:
            ax.set_ylabel("query (attending)", fontsize=8)
    grid_height = nrows * panel + (nrows - 1) * (gap + 0.15)
    colorbar_axes = fig.add_axes(((width - 0.85) / width, bottom / height, 0.15 / width, grid_height / height))
    fig.colorbar(images[-1], cax=colorbar_axes, label="attention weight")
    return _MapParts(fig, axes, images, n_panels)


def _fill_map(parts: _MapParts, layers: np.ndarray, rows: list[str], cols: list[str], *, head: int | None,
              layer: int, title: str | None, annotate: bool, vmax: float | None) -> Figure:
    """Put the data, titles and tick labels of one view into an existing layout."""
    L, H, T, S = layers.shape
    heads = list(range(H)) if head is None else [head]
    maps = layers[layer, heads]  # (N, T, S)
    top = float(np.nanmax(maps)) if vmax is None else float(vmax)
    top = top if top > 0 else 1.0
    for image, h, values in zip(parts.images, heads, maps):
        image.set_data(values)
        image.set_clim(0.0, top)  # the colorbar follows the image
        image.axes.set_title(f"layer {layer} · head {h}" if L > 1 else f"head {h}", fontsize=9)
    ncols = parts.axes.shape[1]
    for index, ax in enumerate(parts.axes.flat[: parts.n_panels]):
        if index + ncols >= parts.n_panels:
            ax.set_xticklabels(cols, rotation=90)
        if index % ncols == 0:
            ax.set_yticklabels(rows)
    want_numbers = annotate and parts.n_panels == 1
    if want_numbers and not parts.annotations:
        ax = parts.images[0].axes
        parts.annotations = [ax.text(j, i, "", ha="center", va="center", fontsize=6) for i in range(T) for j in range(S)]
    for n, text in enumerate(parts.annotations):
        value = maps[0, n // S, n % S]
        text.set_visible(want_numbers)
        text.set_text(f"{value:.2f}")
        text.set_color("black" if value > 0.6 * top else "white")
    if title:
        parts.suptitle = parts.figure.suptitle(title)
    return parts.figure


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
    weight shown), shared by every panel. Builds a new figure each call. The explorers draw
    the same panels as HTML (:func:`attention_map_html`), fast enough to follow a slider;
    :class:`AttentionMapView` keeps one figure and updates it in place (the benchmark compares).
    """
    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _check_choice("layer", layer, L)
    _check_choice("head", head, H, allow_none=True)
    rows = _labels(tokens, T, "tokens")
    cols = _labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")
    n_panels = H if head is None else 1
    parts = _build_map(plt.figure, n_panels, T, S, max(map(len, rows)), max(map(len, cols)), bool(title), cmap)
    return _fill_map(parts, layers, rows, cols, head=head, layer=layer, title=title, annotate=annotate, vmax=vmax)


class AttentionMapView:
    """One attention-map figure kept alive and updated in place (the explorers of 08 and 12).

    :func:`attention_map_figure` builds a figure, axes, heatmaps and a colorbar per call. A view
    builds that layout once per (one head | all heads) and, on :meth:`update`, only swaps the
    image data (``AxesImage.set_data``), the colour limits, titles and tick labels. Its figures
    are not registered with pyplot, so Jupyter's inline backend never shows them by itself.

    ``row_chars`` / ``col_chars`` reserve room for the longest query / key label the view will
    get (pass the longest over every batch row, so changing the row keeps the layout).
    """

    def __init__(self, *, row_chars: int = 1, col_chars: int | None = None, title: bool = False,
                 cmap: str = "viridis") -> None:
        self.row_chars = row_chars
        self.col_chars = row_chars if col_chars is None else col_chars
        self.titled = title
        self.cmap = cmap
        self._parts: dict[tuple[int, int, int], _MapParts] = {}  # (panels, T, S) -> layout

    def update(
        self,
        weights,
        tokens: Sequence[str] | None = None,
        *,
        head: int | None = None,
        layer: int = 0,
        key_tokens: Sequence[str] | None = None,
        title: str | None = None,
        annotate: bool = False,
        vmax: float | None = None,
    ) -> Figure:
        """Show ``weights`` [H, T, S] or [L, H, T, S] with the knobs of :func:`attention_map_figure`;
        returns the (reused) figure."""
        layers = _as_layers(weights)  # (L, H, T, S)
        L, H, T, S = layers.shape
        _check_choice("layer", layer, L)
        _check_choice("head", head, H, allow_none=True)
        rows = _labels(tokens, T, "tokens")
        cols = _labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")
        if title and not self.titled:
            self.titled, self._parts = True, {}  # a title needs head room: lay out again
        self.row_chars = max(self.row_chars, *map(len, rows))
        self.col_chars = max(self.col_chars, *map(len, cols))
        key = (H if head is None else 1, T, S)
        parts = self._parts.get(key)
        if parts is None or self._margins(parts) != (self.row_chars, self.col_chars):
            parts = _build_map(Figure, key[0], T, S, self.row_chars, self.col_chars, self.titled, self.cmap)
            parts.figure._course_margins = (self.row_chars, self.col_chars)
            self._parts[key] = parts
        return _fill_map(parts, layers, rows, cols, head=head, layer=layer, title=title, annotate=annotate, vmax=vmax)

    @staticmethod
    def _margins(parts: _MapParts) -> tuple[int, int]:
        return parts.figure._course_margins


def figure_png(fig: Figure, dpi: float | None = None) -> bytes:
    """The PNG bytes of a figure, as the explorers send it to the browser (08, 12).

    Unlike Jupyter's inline display this skips ``bbox_inches="tight"``, which renders the
    figure twice; the view's margins are already fitted to its labels.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


@dataclass
class ExplorerFrame:
    """What one redraw of :class:`AttentionExplorer` shows: the figure, the table, the caption."""

    figure: Figure
    table: object  # pandas DataFrame, see attention_row_table
    caption: str


class AttentionExplorer:
    """The explorer of 08_v_attention as a plain object: knob values in, one redraw out.

    Holds q, k [B, H, T, D] and the tokens [B][T]. The weights [H, T, T] are computed once per
    (row, mask, scale) and cached, so the head and query knobs cost no attention at all; the
    heatmaps live in one :class:`AttentionMapView`, updated in place. No browser needed: the
    tests and ``benchmarks/bench_attention.py`` call :meth:`update` directly.
    """

    def __init__(self, q: torch.Tensor, k: torch.Tensor, tokens: Sequence[Sequence[str]]) -> None:
        if not isinstance(q, torch.Tensor) or not isinstance(k, torch.Tensor) or q.dim() != 4 or q.shape != k.shape:
            raise ValueError(
                "q and k must both have shape [B, H, T, D], got "
                f"{tuple(getattr(q, 'shape', ()))} and {tuple(getattr(k, 'shape', ()))}"
            )
        B, _, T, _ = q.shape
        if len(tokens) != B:
            raise ValueError(f"tokens must have {B} rows (one per batch row), got {len(tokens)}")
        self.q, self.k, self.tokens = q, k, tokens
        longest = max(len(label) for row in tokens for label in _labels(row, T, "tokens"))
        self.view = AttentionMapView(row_chars=longest)
        self._weights: dict[tuple[int, bool, bool], torch.Tensor] = {}

    def weights(self, row: int, masked: bool, scaled: bool) -> torch.Tensor:
        """The weights [H, T, T] of batch row ``row`` for the mask/scale knobs (cached)."""
        _check_choice("row", row, self.q.shape[0])
        key = (int(row), bool(masked), bool(scaled))
        if key not in self._weights:
            self._weights[key] = weights_from_qk(self.q[row], self.k[row], causal=masked, scaled=scaled)  # (H, T, T)
        return self._weights[key]

    def update(self, row: int, head: int | None, masked: bool, scaled: bool, query: int) -> ExplorerFrame:
        """One redraw for the knobs (``head=None``: every head); bad knobs raise ValueError."""
        weights = self.weights(row, masked, scaled)  # (H, T, T)
        table = attention_row_table(weights, self.tokens[row], query=query, head=head)
        fig = self.view.update(weights, self.tokens[row], head=head)
        caption = (
            f"query {query} = <code>{token_label(self.tokens[row][query])}</code>; "
            f"mask {'on' if masked else 'off'}, scale {'1/√D' if scaled else '1'}"
        )
        return ExplorerFrame(fig, table, caption)


def attention_row_table(
    weights,
    tokens: Sequence[str] | None = None,
    *,
    query: int,
    head: int | None = None,
    layer: int = 0,
    key_tokens: Sequence[str] | None = None,
    decimals: int = 4,
):
    """The exact weights of one query row as a pandas DataFrame (08_v_attention, 12_generation).

    One row per key position with its token, and one column per head (``head=None``) or a
    single ``weight`` column; the last row holds the column sums (1 unless the row is masked).
    """
    import pandas as pd

    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _check_choice("layer", layer, L)
    _check_choice("head", head, H, allow_none=True)
    _check_choice("query", query, T)
    _labels(tokens, T, "tokens")
    cols = _labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")
    heads = list(range(H)) if head is None else [head]
    values = layers[layer, heads, query, :].T.astype(np.float64)  # (S, N)
    names = [f"head {h}" for h in heads] if head is None else ["weight"]
    table = pd.DataFrame(np.round(values, decimals), columns=names)
    table.insert(0, "key token", cols)
    table.index.name = "key"
    sums = pd.DataFrame([["(row sum)", *np.round(values.sum(0), decimals)]], columns=table.columns, index=["sum"])
    return pd.concat([table, sums])


def head_split_figure(matrix, n_heads: int, *, title: str | None = None, tokens: Sequence[str] | None = None) -> Figure:
    """Which columns of a [T, C] matrix (e.g. Q of one sequence) go to which head (04_qkv, 08).

    Left: the whole matrix with a coloured band per head; right: the H blocks [T, C/H] that
    the head split hands to each head.
    """
    data = to_numpy(matrix)
    if data.ndim != 2:
        raise ValueError(f"matrix must be 2-D [T, C], got shape {tuple(data.shape)}")
    T, C = data.shape
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or C % n_heads:
        raise ValueError(f"n_heads must be a positive divisor of C = {C}, got {n_heads!r}")
    D = C // n_heads
    limit = float(np.abs(data).max()) or 1.0
    fig = plt.figure(figsize=(11, 4.2), layout="constrained")
    grid = fig.add_gridspec(2, 2 * n_heads, height_ratios=[1, 12])
    whole = fig.add_subplot(grid[1, :n_heads])
    whole.imshow(data, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    for h in range(n_heads):
        whole.axvspan(h * D - 0.5, (h + 1) * D - 0.5, ymin=1.0, ymax=1.04, color=HEAD_COLOURS[h % 8], clip_on=False)
        if h:
            whole.axvline(h * D - 0.5, color="black", linewidth=1.5)
        whole.text((h + 0.5) * D - 0.5, -1.3, f"head {h}\ncols {h * D}–{(h + 1) * D - 1}", ha="center", va="bottom",
                   fontsize=7, color=HEAD_COLOURS[h % 8])
    whole.set_xlabel(f"column (C = {C})")
    labels = _labels(tokens, T, "tokens") if tokens is not None else [str(i) for i in range(T)]
    whole.set_yticks(range(T), labels, fontsize=8)
    whole.set_ylabel("position")
    for h in range(n_heads):
        ax = fig.add_subplot(grid[1, n_heads + h])
        ax.imshow(data[:, h * D : (h + 1) * D], cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto",
                  interpolation="nearest")
        ax.set_title(f"head {h}: [{T}, {D}]", fontsize=8, color=HEAD_COLOURS[h % 8])
        ax.set_xticks([0, D - 1], [str(h * D), str((h + 1) * D - 1)], fontsize=6)
        ax.set_yticks([])
    fig.suptitle(title or f"(T, C) = ({T}, {C}) → (H, T, D) = ({n_heads}, {T}, {D})")
    return fig


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

    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _check_choice("layer", layer, L)
    _check_choice("head", head, H, allow_none=True)
    rows = [html.escape(label) for label in _labels(tokens, T, "tokens")]
    cols = [html.escape(label) for label in _labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")]
    heads = list(range(H)) if head is None else [head]
    maps = layers[layer, heads]  # (N, T, S)
    top = float(np.nanmax(maps)) if vmax is None else float(vmax)
    top = top if top > 0 else 1.0
    annotate = len(heads) == 1 if annotate is None else annotate
    colormap = plt.get_cmap(cmap)
    lut = colormap(np.linspace(0.0, 1.0, 256))[:, :3]  # (256, 3) one colour per level
    lut_hex = ["#{:02x}{:02x}{:02x}".format(*(round(c * 255) for c in rgb)) for rgb in lut]
    lut_dark = (lut @ np.array([0.299, 0.587, 0.114])) < 0.55  # (256,) white text on dark cells
    levels = np.round(np.clip(np.nan_to_num(maps / top), 0.0, 1.0) * 255).astype(int)  # (N, T, S)
    width, height = (30, 18) if annotate else (14, 14)  # pixels per cell
    css = (
        "<style>.tc-att{border-collapse:collapse;font:10px sans-serif;margin:0 12px 8px 0;line-height:1}"
        f".tc-att td.w{{width:{width}px;min-width:{width}px;max-width:{width}px;height:{height}px;"
        "padding:0;text-align:center;font-size:8px}"
        ".tc-att th{font-weight:normal;padding:0 4px 0 0;white-space:pre;text-align:right}"
        ".tc-att th.k{writing-mode:vertical-rl;transform:rotate(180deg);padding:4px 0 0 0;"
        f"width:{width}px;max-width:{width}px}}"
        ".tc-att caption{font-weight:bold;padding-bottom:2px}</style>"
    )
    panels = []
    for n, h in enumerate(heads):
        name = f"layer {layer} · head {h}" if L > 1 else f"head {h}"
        lines = [f"<table class='tc-att'><caption>{name}</caption>"]
        for i in range(T):
            cells = []
            for j in range(S):
                value = maps[n, i, j]
                text = f"{value:.2f}" if annotate else ""
                level = levels[n, i, j]
                colour = "#fff" if lut_dark[level] else "#000"
                cells.append(
                    f"<td class='w' style='background:{lut_hex[level]};color:{colour}' "
                    f"title='{name} · query {i} {rows[i]} → key {j} {cols[j]}: {value:.4f}'>{text}</td>"
                )
            lines.append(f"<tr><th>{rows[i]}</th>{''.join(cells)}</tr>")
        lines.append("<tr><th></th>" + "".join(f"<th class='k'>{c}</th>" for c in cols) + "</tr></table>")
        panels.append("".join(lines))
    stops = ", ".join(lut_hex[i] for i in range(0, 256, 32)) + ", " + lut_hex[255]
    legend = (
        "<div style='font:10px sans-serif;display:flex;align-items:center;gap:4px'>0"
        f"<div style='width:160px;height:10px;background:linear-gradient(to right, {stops})'></div>"
        f"{top:.2f} · rows: query (attending) · columns: key (attended to) · hover a cell for its weight</div>"
    )
    return f"{css}<div style='display:flex;flex-wrap:wrap;align-items:flex-start'>{''.join(panels)}</div>{legend}"


def _table_html(table) -> str:
    return (
        "<style>.tc-tab td,.tc-tab th{padding:1px 6px;border-bottom:1px solid #ddd;font:11px monospace;"
        "white-space:pre}</style>" + table.to_html(classes="tc-tab", border=0)
    )


ALL_HEADS = -1  # the head dropdown's value for "every head": None is "no selection" to ipywidgets


def _head_options(n_heads: int) -> list[tuple[str, int]]:
    return [("all heads", ALL_HEADS)] + [(f"head {h}", h) for h in range(n_heads)]


def _error_html(error: Exception) -> str:
    import html

    return f"<b style='color:#b00'>Cannot draw this: {html.escape(str(error))}</b>"


def attention_explorer(q: torch.Tensor, k: torch.Tensor, tokens: Sequence[Sequence[str]]):
    """The explorer of 08_v_attention: q, k [B, H, T, D] and the tokens [B][T] of the batch.

    Knobs: batch row, head (or all heads), causal mask on/off, 1/√D scale on/off, and the
    query row whose exact weights the table lists. The heatmaps are HTML (hover a cell for
    its weight) so a redraw is fast enough to follow a dragged slider. Returns the widget.
    """
    import html

    import ipywidgets as widgets

    if not isinstance(q, torch.Tensor) or q.dim() != 4 or not isinstance(k, torch.Tensor) or q.shape != k.shape:
        raise ValueError(
            f"q and k must both have shape [B, H, T, D], got {tuple(getattr(q, 'shape', ()))} "
            f"and {tuple(getattr(k, 'shape', ()))}"
        )
    B, H, T, _ = q.shape
    row = widgets.IntSlider(value=0, min=0, max=B - 1, description="batch row")
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description="head")
    masked = widgets.Checkbox(value=True, description="causal mask")
    scaled = widgets.Checkbox(value=True, description="scale by 1/√D")
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description="table: query")
    caption, heatmap, table = widgets.HTML(), widgets.HTML(), widgets.HTML()

    def show(row, head, masked, scaled, query):
        head = None if head == ALL_HEADS else head
        try:
            weights = weights_from_qk(q[row], k[row], causal=masked, scaled=scaled)  # (H, T, T)
            view = attention_map_html(weights, tokens[row], head=head)
            rows = attention_row_table(weights, tokens[row], query=query, head=head)
        except (ValueError, IndexError) as error:
            caption.value, heatmap.value, table.value = _error_html(error), "", ""
            return
        caption.value = (
            f"window {row}; causal mask {'on' if masked else 'off'}; scale {'1/√D' if scaled else '1 (none)'}"
        )
        heatmap.value = view
        table.value = (
            f"<b>exact weights of query {query} = <code>{html.escape(token_label(tokens[row][query]))}</code></b>"
            + _table_html(rows)
        )

    out = widgets.interactive_output(show, {"row": row, "head": head, "masked": masked, "scaled": scaled, "query": query})
    return widgets.VBox(
        [widgets.HBox([row, head, query]), widgets.HBox([masked, scaled]), caption, heatmap, table, out]
    )


def weights_explorer(weights, tokens: Sequence[str], key_tokens: Sequence[str] | None = None):
    """The explorer for ready weights [H, T, S] or [L, H, T, S], e.g. of a trained model (12).

    Knobs: layer, head (or all heads of the layer) and the query row of the table.
    """
    import html

    import ipywidgets as widgets

    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, _ = layers.shape
    layer = widgets.IntSlider(value=L - 1, min=0, max=L - 1, description="layer")
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description="head")
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description="table: query")
    heatmap, table = widgets.HTML(), widgets.HTML()

    def show(layer, head, query):
        head = None if head == ALL_HEADS else head
        try:
            view = attention_map_html(layers, tokens, head=head, layer=layer, key_tokens=key_tokens)
            rows = attention_row_table(layers, tokens, query=query, head=head, layer=layer, key_tokens=key_tokens)
        except ValueError as error:
            heatmap.value, table.value = _error_html(error), ""
            return
        heatmap.value = view
        table.value = (
            f"<b>exact weights of query {query} = <code>{html.escape(token_label(tokens[query]))}</code>"
            f" in layer {layer}</b>" + _table_html(rows)
        )

    out = widgets.interactive_output(show, {"layer": layer, "head": head, "query": query})
    return widgets.VBox([widgets.HBox([layer, head, query]), heatmap, table, out])
