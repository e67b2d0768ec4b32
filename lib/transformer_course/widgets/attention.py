"""The attention-map explorer (08_v_attention), reused for a trained model in 12_generation.

Plain functions do the work and are tested without a browser:

* :func:`weights_from_qk` — recompute the weights [..., H, T, T] with the mask and the
  1/√D scale switched on or off (the explorer's knobs in 08);
* :func:`attention_map_figure` — heatmaps of weights [H, T, S] or [L, H, T, S], one head or
  every head of a layer as a grid, labelled with the tokens on both axes;
* :func:`attention_row_table` — the exact weights of one query row as a pandas table;
* :func:`head_split_figure` — which columns of a [T, C] tensor go to which head (04, 08).

:func:`attention_explorer` (queries and keys, 08) and :func:`weights_explorer` (ready
weights, e.g. of a trained model, 12) are thin ipywidgets wrappers around them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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
    weight shown), shared by every panel.
    """
    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _check_choice("layer", layer, L)
    _check_choice("head", head, H, allow_none=True)
    rows = _labels(tokens, T, "tokens")
    cols = _labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")
    heads = list(range(H)) if head is None else [head]
    maps = layers[layer, heads]  # (N, T, S)
    top = float(np.nanmax(maps)) if vmax is None else float(vmax)
    top = top if top > 0 else 1.0

    ncols = len(heads) if len(heads) <= 4 else math.ceil(math.sqrt(len(heads)))
    nrows = math.ceil(len(heads) / ncols)
    single = len(heads) == 1
    fontsize = 8 if single else 6
    panel = 4.6 if single else 2.5  # inches per heatmap
    # Fixed margins sized from the longest label: constrained layout would measure every
    # tick label on each redraw, which made the explorer feel sluggish (benchmarks/).
    char = fontsize / 72 * 0.62  # inches per character, roughly
    left = 0.45 + char * max(map(len, rows))
    bottom = 0.45 + char * max(map(len, cols))
    gap = 0.25
    width = left + ncols * panel + (ncols - 1) * gap + 1.0
    height = bottom + nrows * panel + (nrows - 1) * (gap + 0.15) + (0.75 if title else 0.4)
    fig = plt.figure(figsize=(width, height))
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
            "top": 1 - (0.75 if title else 0.4) / height,
            "wspace": gap / panel,
            "hspace": (gap + 0.15) / panel,
        },
    )
    image = None
    for index, ax in enumerate(axes.flat):
        if index >= len(heads):
            ax.axis("off")
            continue
        image = ax.imshow(maps[index], cmap=cmap, vmin=0.0, vmax=top, aspect="auto", interpolation="nearest")
        ax.set_title(f"layer {layer} · head {heads[index]}" if L > 1 else f"head {heads[index]}", fontsize=9)
        if annotate and single:
            for i in range(T):
                for j in range(S):
                    value = maps[index, i, j]
                    colour = "black" if value > 0.6 * top else "white"
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6, color=colour)
    # Shared axes: set the ticks once, label only the outer edges.
    first = axes[0, 0]
    first.set_xticks(range(S))
    first.set_yticks(range(T))
    for index, ax in enumerate(axes.flat):
        r, c = divmod(index, ncols)
        below_is_empty = index + ncols >= len(heads)
        ax.tick_params(labelbottom=below_is_empty, labelleft=c == 0, labelsize=fontsize, length=2)
        if below_is_empty:
            ax.set_xticklabels(cols, rotation=90)
            ax.set_xlabel("key (attended to)", fontsize=8)
        if c == 0:
            ax.set_yticklabels(rows)
            ax.set_ylabel("query (attending)", fontsize=8)
    grid_height = nrows * panel + (nrows - 1) * (gap + 0.15)
    colorbar_axes = fig.add_axes(((width - 0.85) / width, bottom / height, 0.15 / width, grid_height / height))
    fig.colorbar(image, cax=colorbar_axes, label="attention weight")
    if title:
        fig.suptitle(title)
    return fig


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
    whole.set_yticks(range(T), labels, fontsize=6)
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


ALL_HEADS = -1  # the head dropdown's value for "every head": None is "no selection" to ipywidgets


def _head_options(n_heads: int) -> list[tuple[str, int]]:
    return [("all heads", ALL_HEADS)] + [(f"head {h}", h) for h in range(n_heads)]


def _show(fig: Figure, table) -> None:
    from IPython.display import display

    display(fig)
    plt.close(fig)  # displayed once, here; the inline backend must not show it again
    display(table)


def attention_explorer(q: torch.Tensor, k: torch.Tensor, tokens: Sequence[Sequence[str]]):
    """The explorer of 08_v_attention: q, k [B, H, T, D] and the tokens [B][T] of the batch.

    Knobs: batch row, head (or all heads), causal mask on/off, 1/√D scale on/off, and the
    query row whose exact weights the table lists. Returns the widget to display.
    """
    import ipywidgets as widgets

    if not isinstance(q, torch.Tensor) or q.dim() != 4 or q.shape != k.shape:
        raise ValueError(f"q and k must both have shape [B, H, T, D], got {tuple(q.shape)} and {tuple(k.shape)}")
    B, H, T, _ = q.shape
    row = widgets.IntSlider(value=0, min=0, max=B - 1, description="batch row")
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description="head")
    masked = widgets.Checkbox(value=True, description="causal mask")
    scaled = widgets.Checkbox(value=True, description="scale by 1/√D")
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description="table: query")
    caption = widgets.HTML()

    def show(row, head, masked, scaled, query):
        head = None if head == ALL_HEADS else head
        try:
            weights = weights_from_qk(q[row], k[row], causal=masked, scaled=scaled)  # (H, T, T)
            fig = attention_map_figure(weights, tokens[row], head=head, annotate=False)
            table = attention_row_table(weights, tokens[row], query=query, head=head)
        except ValueError as error:
            caption.value = f"<b style='color:#b00'>Cannot draw this: {error}</b>"
            return
        caption.value = (
            f"query {query} = <code>{token_label(tokens[row][query])}</code>; "
            f"mask {'on' if masked else 'off'}, scale {'1/√D' if scaled else '1'}"
        )
        _show(fig, table)

    out = widgets.interactive_output(show, {"row": row, "head": head, "masked": masked, "scaled": scaled, "query": query})
    return widgets.VBox([widgets.HBox([row, head, query]), widgets.HBox([masked, scaled]), caption, out])


def weights_explorer(weights, tokens: Sequence[str], key_tokens: Sequence[str] | None = None):
    """The explorer for ready weights [H, T, S] or [L, H, T, S], e.g. of a trained model (12).

    Knobs: layer, head (or all heads of the layer) and the query row of the table.
    """
    import ipywidgets as widgets
    from IPython.display import display

    layers = _as_layers(weights)  # (L, H, T, S)
    L, H, T, _ = layers.shape
    layer = widgets.IntSlider(value=L - 1, min=0, max=L - 1, description="layer")
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description="head")
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description="table: query")

    def show(layer, head, query):
        head = None if head == ALL_HEADS else head
        try:
            fig = attention_map_figure(layers, tokens, head=head, layer=layer, key_tokens=key_tokens)
            table = attention_row_table(layers, tokens, query=query, head=head, layer=layer, key_tokens=key_tokens)
        except ValueError as error:
            display(widgets.HTML(f"<b style='color:#b00'>Cannot draw this: {error}</b>"))
            return
        _show(fig, table)

    out = widgets.interactive_output(show, {"layer": layer, "head": head, "query": query})
    return widgets.VBox([widgets.HBox([layer, head, query]), out])
