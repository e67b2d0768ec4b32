"""One query row through scores → scale → mask → softmax → weighted sum, with the numbers the
library computes on the course's batch, growing across 04–08 (:func:`query_row_steps`, shown by
``diagrams.show_query_row``; introduced in 04_qkv).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from matplotlib.figure import Figure

from .. import _checks as check
from ..i18n import _
from .base import EDGE, PALETTE, arrow, badge, box, canvas, localised, mono_family, note, title
from .numbers import ATTENTION_EXAMPLE

#: The steps of one query row, in course order, each with the notebook that adds it.
QUERY_ROW_STAGES: dict[str, str] = {
    "scores": "04",
    "scale": "05",
    "mask": "06",
    "softmax": "07",
    "weighted_sum": "08",
}


@dataclass(frozen=True)
class QueryRow:
    """One query row of one head, step by step, on the first ``len(keys)`` keys of a window.

    ``scores`` = q·kⱼ, ``scaled`` = scores / √d_k, ``masked`` (−inf after the query),
    ``weights`` = softmax over *all* T keys of the window (the hidden ones are 0, so when every
    visible key is shown the shown weights sum to 1), ``values`` = the first ``n_dims`` numbers of
    each vⱼ and ``output`` the first ``n_dims`` of o = Σⱼ wⱼ vⱼ."""

    keys: list[str]
    query: int
    head: int
    d_k: int
    scores: torch.Tensor  # (n_keys,)
    scaled: torch.Tensor  # (n_keys,)
    masked: torch.Tensor  # (n_keys,)
    weights: torch.Tensor  # (n_keys,)
    values: torch.Tensor  # (n_keys, n_dims)
    output: torch.Tensor  # (n_dims,)
    window: int = ATTENTION_EXAMPLE.T  # T, the tokens of the window the row was computed on


def query_row(
    *, query: int = 3, head: int = 0, n_keys: int = 6, n_dims: int = 3, seed: int = 0
) -> QueryRow:
    """The numbers of the query-row schematic, computed by the library on the course's batch.

    The same tensors as notebooks 04–08: ``embedding.course_batch(seed).crop(12)`` (windows of
    T = 12 tokens, :data:`.numbers.ATTENTION_EXAMPLE`), window 0, and
    W_Q, W_K, W_V drawn as three ``nn.Linear(64, 64)`` right after ``torch.manual_seed(seed)``,
    split into 4 heads. The global random state is left as it was."""
    from torch import nn

    from .. import attention, embedding

    batch = embedding.course_batch(seed=seed).crop(ATTENTION_EXAMPLE.T)
    x = batch.inputs[:1]  # (1, T, C) window 0
    T, C = x.shape[1], x.shape[2]
    n_heads = ATTENTION_EXAMPLE.H
    if not 0 <= query < T or not 0 < n_keys <= T or not 0 <= head < n_heads:
        raise ValueError(
            _("need 0 <= query < {T}, 0 < n_keys <= {T}, 0 <= head < {n_heads}").format(
                T=T, n_heads=n_heads
            )
        )
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        w_q, w_k, w_v = nn.Linear(C, C), nn.Linear(C, C), nn.Linear(C, C)  # 3 × (C -> C), as in 04
        q, k, v = (
            attention.split_heads(w(x), n_heads)[0, head] for w in (w_q, w_k, w_v)
        )  # 3 × (T, D)
    d_k = q.shape[-1]
    scores = k @ q[query]  # (T, D) @ (D,) -> (T,) q·kⱼ for every key j
    scaled = scores / math.sqrt(d_k)  # (T,)
    masked = scaled.masked_fill(
        ~attention.causal_mask(T)[query], float("-inf")
    )  # (T,) future -> -inf
    weights = attention.softmax(masked)  # (T,) sums to 1
    shown = slice(0, n_keys)
    return QueryRow(
        keys=batch.tokens[0][shown],
        query=query,
        head=head,
        d_k=d_k,
        scores=scores[shown],
        scaled=scaled[shown],
        masked=masked[shown],
        weights=weights[shown],
        values=v[shown, :n_dims],
        output=(weights @ v)[:n_dims],  # (T,) @ (T, D) -> (D,) first n_dims numbers
        window=T,
    )


def _number(value: float) -> str:
    return "−∞" if value == float("-inf") else f"{value:.2f}".replace("-", "−")


#: The layout of the query-row schematic, in inches.
_CELL, _LABEL_W, _ROW_H = 1.05, 2.9, 0.62


@localised
def query_row_steps(stage: str = "weighted_sum", row: QueryRow | None = None) -> Figure:
    """One query row through scores → scale → mask → softmax → weighted sum of V, with the
    course's numbers (04–08: each notebook's ``stage`` adds its row under the earlier ones).

    ``stage`` is a key of :data:`QUERY_ROW_STAGES`; ``row`` defaults to :func:`query_row`."""
    check.choice("stage", stage, QUERY_ROW_STAGES)
    r = row or query_row()
    stages = list(QUERY_ROW_STAGES)[: list(QUERY_ROW_STAGES).index(stage) + 1]
    n = len(r.keys)
    width = _LABEL_W + n * _CELL + (2.6 if "weighted_sum" in stages else 0.3)
    rows_h = [_ROW_H * (1.9 if name == "weighted_sum" else 1.0) for name in stages]
    height = 1.55 + sum(rows_h) + 0.15 * len(stages)
    fig, ax = canvas(width, height)
    xs = _query_row_header(ax, r, width, height)
    y = height - 1.3
    for name, h in zip(stages, rows_h, strict=True):
        y -= h / 2
        _query_row_stage(ax, r, name, xs, y, h, current=name == stage)
        y -= h / 2 + 0.15
    return fig


def _query_row_header(ax, r: QueryRow, width: float, height: float) -> list[float]:
    """The title and the key tokens above the columns; returns the columns' x positions."""
    from ..viz import token_label

    n = len(r.keys)
    q_token = f"“{token_label(r.keys[r.query]).strip()}”" if r.query < n else f"#{r.query}"
    title(
        ax,
        width / 2,
        height - 0.3,
        _(
            "One query row: window 0 (T = {T} tokens), head {head} (D = {D}), "
            "query {query} {token}, keys 0–{last}"
        ).format(T=r.window, head=r.head, D=r.d_k, query=r.query, token=q_token, last=n - 1),
        fontsize=12.5,
    )
    xs = [_LABEL_W + _CELL * (j + 0.5) for j in range(n)]
    header_y = height - 0.85
    for j, x in enumerate(xs):
        ax.text(
            x,
            header_y + 0.1,
            _("key {j}").format(j=j),
            ha="center",
            va="center",
            fontsize=9,
            color="#555555",
        )
        ax.text(
            x,
            header_y - 0.15,
            token_label(r.keys[j]),
            ha="center",
            va="center",
            fontsize=9.5,
            family=mono_family(),
        )
    return xs


def _query_row_stage(
    ax, r: QueryRow, name: str, xs: list[float], y: float, h: float, *, current: bool
) -> None:
    """One stage's row: its label and notebook badge, one box per key, and its extras."""
    labels = {
        "scores": _("scores  q·kⱼ"),
        "scale": f"÷ √d_k = ÷ {math.sqrt(r.d_k):g}",
        "mask": _("causal mask"),
        "softmax": _("softmax → weights"),
        "weighted_sum": _("vⱼ ({shown} of {d_k} numbers)").format(
            shown=r.values.shape[1], d_k=r.d_k
        ),
    }
    edge = PALETTE["highlight"] if current else EDGE
    line = 2.2 if current else 1.0
    weight = "bold" if current else "normal"
    ax.text(0.15, y, labels[name], ha="left", va="center", fontsize=10.5, fontweight=weight)
    badge(ax, _LABEL_W - 0.55, y + 0.12, QUERY_ROW_STAGES[name])
    for j, x in enumerate(xs):
        text, colour, fontsize = _query_row_cell(r, name, j)
        box(
            ax,
            x,
            y,
            _CELL - 0.12,
            h - 0.12,
            text,
            colour,
            fontsize=fontsize,
            edge=edge,
            linewidth=line,
        )
    _query_row_extras(ax, r, name, xs[-1] + _CELL / 2, y, h, edge=edge, line=line)


def _query_row_extras(
    ax, r: QueryRow, name: str, right: float, y: float, h: float, *, edge: str, line: float
) -> None:
    """What a stage shows right of its last key box (at x = ``right``): the weights' sum after
    softmax, the output vector o after the weighted sum; the other stages show nothing."""
    if name == "softmax":
        note(
            ax,
            right + 0.1,
            y,
            _("sum {total:.2f}").format(total=float(r.weights.sum())),
            fontsize=9,
        )
    if name == "weighted_sum":
        output = "o = Σⱼ wⱼ vⱼ\n" + "\n".join(_number(float(value)) for value in r.output) + "\n…"
        out = box(
            ax,
            right + 1.35,
            y,
            2.2,
            h - 0.12,
            output,
            PALETTE["output"],
            fontsize=9,
            edge=edge,
            linewidth=line,
        )
        arrow(ax, (right - 0.02, y), out.left)


def _query_row_cell(r: QueryRow, name: str, j: int) -> tuple[str, str, float]:
    """The text, fill colour and font size of key j's box in stage ``name``."""
    if name == "weighted_sum":
        return "\n".join(_number(float(value)) for value in r.values[j]), PALETTE["data"], 8.5
    numbers = {"scores": r.scores, "scale": r.scaled, "mask": r.masked, "softmax": r.weights}
    value = float(numbers[name][j])
    if value == float("-inf"):
        colour = "#bdbdbd"
    elif name == "softmax":
        colour = _weight_colour(value)
    else:
        colour = PALETTE["attention"]
    return _number(value), colour, 9.5


def _weight_colour(weight: float) -> str:
    """White for weight 0, the attention orange for weight 1."""
    low, high = (255, 255, 255), (253, 174, 107)
    mix = [round(a + (b - a) * min(max(weight, 0.0), 1.0)) for a, b in zip(low, high, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*mix)
