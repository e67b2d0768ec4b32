"""The attention-map explorer (08_v_attention), reused for a trained model in 12_generation.

Plain functions do the work and are tested without a browser:

* :func:`weights_from_qk` — recompute the weights [..., H, T, T] with the mask and the
  1/√D scale switched on or off (the explorer's knobs in 08);
* :func:`attention_row_table` — the exact weights of one query row as a pandas table;
* the pictures — :func:`attention_map_figure`, :func:`attention_map_html` and
  :func:`head_split_figure` — live in :mod:`.attention_maps` and are imported here, where
  the notebooks have always found them.

:func:`attention_explorer` (queries and keys, 08) and :func:`weights_explorer` (ready
weights, e.g. of a trained model, 12) are thin ipywidgets wrappers around them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .. import _checks, attention
from ..i18n import _
from ..viz import token_label  # token_label lived here; notebooks 05-08 and 12 import it
from .attention_maps import (  # noqa: F401  (the pictures: the notebooks import them from here)
    as_layers,
    attention_map_figure,
    attention_map_html,
    head_split_figure,
    position_labels,
)


def weights_from_qk(
    q: torch.Tensor, k: torch.Tensor, *, causal: bool = True, scaled: bool = True
) -> torch.Tensor:
    """Attention weights [..., H, T, T] from queries and keys [..., H, T, D] (08_v_attention).

    ``causal`` switches the causal mask on; ``scaled`` divides the scores by √D (off: scale 1).
    """
    if (
        not isinstance(q, torch.Tensor)
        or not isinstance(k, torch.Tensor)
        or q.shape != k.shape
        or q.dim() < 2
    ):
        raise ValueError(
            _(
                "q and k must be tensors of the same shape [..., H, T, D], got {q_shape} and "
                "{k_shape}"
            ).format(q_shape=tuple(getattr(q, "shape", ())), k_shape=tuple(getattr(k, "shape", ())))
        )
    T = q.shape[-2]
    mask = attention.causal_mask(T, device=q.device) if causal else None  # (T, T)
    with torch.no_grad():
        # (..., H, T, T)
        return attention.attention_weights(q, k, mask=mask, scale=None if scaled else 1.0)


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

    layers = as_layers(weights)  # (L, H, T, S)
    L, H, T, S = layers.shape
    _checks.integer("layer", layer, 0, L - 1)
    if head is not None:  # None: every head
        _checks.integer("head", head, 0, H - 1)
    _checks.integer("query", query, 0, T - 1)
    position_labels(tokens, T, "tokens")
    cols = position_labels(key_tokens if key_tokens is not None else tokens, S, "key_tokens")
    heads = list(range(H)) if head is None else [head]
    values = layers[layer, heads, query, :].T.astype(np.float64)  # (S, N)
    names = [_("head {h}").format(h=h) for h in heads] if head is None else [_("weight")]
    table = pd.DataFrame(np.round(values, decimals), columns=names)
    table.insert(0, _("key token"), cols)
    table.index.name = _("key")
    sums = pd.DataFrame(
        [[_("(row sum)"), *np.round(values.sum(0), decimals)]],
        columns=table.columns,
        index=[_("sum")],
    )
    return pd.concat([table, sums])


def _table_html(table) -> str:
    return (
        "<style>.tc-tab td,.tc-tab th{padding:1px 6px;border-bottom:1px solid #ddd;font:11px "
        "monospace;"
        "white-space:pre}</style>" + table.to_html(classes="tc-tab", border=0)
    )


ALL_HEADS = -1  # the head dropdown's value for "every head": None is "no selection" to ipywidgets


def _head_options(n_heads: int) -> list[tuple[str, int]]:
    return [(_("all heads"), ALL_HEADS)] + [(_("head {h}").format(h=h), h) for h in range(n_heads)]


def _error_html(error: Exception) -> str:
    import html

    message = _("Cannot draw this: {error}").format(error=str(error))
    return f"<b style='color:#b00'>{html.escape(message)}</b>"


def _row_table_html(heading: str, rows) -> str:
    """The exact weights of one query row (:func:`attention_row_table`) under a bold heading."""
    return "<b>" + heading + "</b>" + _table_html(rows)


def _token_code(token: str) -> str:
    """A token as it appears in a heading: visible (:func:`token_label`), escaped, in code type."""
    import html

    return f"<code>{html.escape(token_label(token))}</code>"


def _check_batched_qk(q, k) -> None:
    if (
        not isinstance(q, torch.Tensor)
        or q.dim() != 4
        or not isinstance(k, torch.Tensor)
        or q.shape != k.shape
    ):
        raise ValueError(
            _("q and k must both have shape [B, H, T, D], got {q_shape} and {k_shape}").format(
                q_shape=tuple(getattr(q, "shape", ())), k_shape=tuple(getattr(k, "shape", ()))
            )
        )


def attention_explorer(q: torch.Tensor, k: torch.Tensor, tokens: Sequence[Sequence[str]]):
    """The explorer of 08_v_attention: q, k [B, H, T, D] and the tokens [B][T] of the batch.

    Knobs: batch row, head (or all heads), causal mask on/off, 1/√D scale on/off, and the
    query row whose exact weights the table lists. The heatmaps are HTML (hover a cell for
    its weight) so a redraw is fast enough to follow a dragged slider. Returns the widget.
    """
    import ipywidgets as widgets

    _check_batched_qk(q, k)
    B, H, T, _D = q.shape
    row = widgets.IntSlider(value=0, min=0, max=B - 1, description=_("batch row"))
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description=_("head"))
    masked = widgets.Checkbox(value=True, description=_("causal mask"))
    scaled = widgets.Checkbox(value=True, description=_("scale by 1/√D"))
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description=_("table: query"))
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
        caption.value = _("window {row}; causal mask {mask}; scale {scale}").format(
            row=row,
            mask=_("on") if masked else _("off"),
            scale="1/√D" if scaled else _("1 (none)"),
        )
        heatmap.value = view
        heading = _("exact weights of query {query} = {token}").format(
            query=query, token=_token_code(tokens[row][query])
        )
        table.value = _row_table_html(heading, rows)

    out = widgets.interactive_output(
        show, {"row": row, "head": head, "masked": masked, "scaled": scaled, "query": query}
    )
    knobs = [widgets.HBox([row, head, query]), widgets.HBox([masked, scaled])]
    return widgets.VBox([*knobs, caption, heatmap, table, out])


def weights_explorer(weights, tokens: Sequence[str], key_tokens: Sequence[str] | None = None):
    """The explorer for ready weights [H, T, S] or [L, H, T, S], e.g. of a trained model (12).

    Knobs: layer, head (or all heads of the layer) and the query row of the table.
    """
    import ipywidgets as widgets

    layers = as_layers(weights)  # (L, H, T, S)
    L, H, T, _S = layers.shape
    layer = widgets.IntSlider(value=L - 1, min=0, max=L - 1, description=_("layer"))
    head = widgets.Dropdown(options=_head_options(H), value=ALL_HEADS, description=_("head"))
    query = widgets.IntSlider(value=T - 1, min=0, max=T - 1, description=_("table: query"))
    heatmap, table = widgets.HTML(), widgets.HTML()

    def show(layer, head, query):
        head = None if head == ALL_HEADS else head
        try:
            view = attention_map_html(layers, tokens, head=head, layer=layer, key_tokens=key_tokens)
            rows = attention_row_table(
                layers, tokens, query=query, head=head, layer=layer, key_tokens=key_tokens
            )
        except ValueError as error:
            heatmap.value, table.value = _error_html(error), ""
            return
        heatmap.value = view
        heading = _("exact weights of query {query} = {token} in layer {layer}").format(
            query=query, token=_token_code(tokens[query]), layer=layer
        )
        table.value = _row_table_html(heading, rows)

    out = widgets.interactive_output(show, {"layer": layer, "head": head, "query": query})
    return widgets.VBox([widgets.HBox([layer, head, query]), heatmap, table, out])
