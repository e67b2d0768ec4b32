"""Attention diagrams: multi-head attention step by step (04–08) and the attention formula with
every symbol's shape (04, 05), drawn by ``make images`` (see ``diagrams.py``); and one query row
through scores → scale → mask → softmax → weighted sum with the course's numbers, growing across
04–08 (:func:`query_row_steps`, shown by ``diagrams.show_query_row``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .base import (
    EDGE,
    MONO,
    PALETTE,
    SHAPE_COLOUR,
    Box,
    arrow,
    badge,
    box,
    canvas,
    drawing,
    note,
    title,
)
from .numbers import COURSE, CourseNumbers


def _badge(ax, b: Box, tag: str) -> None:
    badge(ax, b.x - b.w / 2 + 0.08, b.y + b.h / 2 - 0.08, tag)


def _mask_icon(ax, x0: float, y0: float, size: float = 0.16, n: int = 5) -> None:
    """A small n × n causal mask: white where a query may look, grey (−∞) above the diagonal."""
    for row in range(n):
        for col in range(n):
            blocked = col > row
            ax.add_patch(
                Rectangle(
                    (x0 + col * size, y0 - (row + 1) * size),
                    size,
                    size,
                    facecolor="#9a9a9a" if blocked else "white",
                    edgecolor=EDGE,
                    linewidth=0.5,
                    zorder=2,
                )
            )
    ax.text(
        x0 + n * size / 2,
        y0 - n * size - 0.12,
        "grey = −∞",
        ha="center",
        va="top",
        fontsize=8.5,
        zorder=2,
    )


def _projections(ax, n: CourseNumbers, xs: tuple[float, float, float]) -> list[Box]:
    x_in = box(ax, xs[1], 11.0, 3.2, 0.5, f"x {n.shape('B', 'T', 'C')}", PALETTE["data"])
    heads = []
    for x, name in zip(xs, ("Q", "K", "V"), strict=True):
        proj, split = (
            box(ax, x, y, 2.9, 0.6, text, PALETTE["attention"], fontsize=10.5)
            for y, text in (
                (9.85, f"{name} = x W_{name}\nLinear {n.C} → {n.C}"),
                (8.5, f"split {name} into heads\nview + transpose"),
            )
        )
        for drawn in (proj, split):
            _badge(ax, drawn, "04")
        arrow(
            ax, x_in.bottom, proj.top, n.shape("B", "T", "C") if name == "Q" else None, side="left"
        )
        arrow(ax, proj.bottom, split.top, n.shape("B", "T", "C"))
        heads.append(split)
    return heads


def _score_chain(ax, x: float, n: CourseNumbers, q: Box, k: Box) -> Box:
    """QKᵀ → scale → mask → softmax, fed by the Q and K heads; returns the softmax box."""
    heads = n.shape("B", "H", "T", "D")
    square = n.shape("B", "H", "T", "T")
    steps = [
        ("05", "scores = Q Kᵀ\n(every query · every key)", PALETTE["attention"], square),
        ("05", f"scale: ÷ √D = ÷ {int(n.D**0.5)}", PALETTE["attention"], square),
        ("06", "causal mask: −∞ where key > query", PALETTE["attention"], square),
        ("07", "softmax over the keys\n(each row sums to 1)", PALETTE["output"], square),
    ]
    ys = [6.95, 5.75, 4.6, 3.4]
    drawn = []
    for (tag, text, colour, _), y in zip(steps, ys, strict=True):
        b = box(ax, x, y, 3.4, 0.65 if "\n" in text else 0.5, text, colour, fontsize=10.5)
        _badge(ax, b, tag)
        drawn.append(b)
    arrow(ax, q.bottom, (drawn[0].x - 0.8, drawn[0].top[1]), heads, side="left")
    arrow(ax, k.bottom, (drawn[0].x + 0.8, drawn[0].top[1]), heads + " → Kᵀ", side="right")
    for (a, b), (_, _, _, shape) in zip(zip(drawn, drawn[1:]), steps, strict=False):
        arrow(ax, a.bottom, b.top, shape)
    return drawn[-1]


def _mix_and_project(ax, n: CourseNumbers, x: float, softmax_box: Box, v: Box) -> None:
    """The last steps of :func:`multi_head_attention_steps`: weights @ V, concatenate, W_O."""
    heads = n.shape("B", "H", "T", "D")
    square = n.shape("B", "H", "T", "T")
    weighted = box(
        ax,
        7.2,
        2.1,
        3.4,
        0.65,
        "weights @ V\n(mix the values)",
        PALETTE["attention"],
        fontsize=10.5,
    )
    _badge(ax, weighted, "08")
    arrow(
        ax,
        softmax_box.bottom,
        (weighted.x - 1.0, weighted.top[1]),
        "weights " + square,
        side="left",
        label_at=(x, 2.78),
        offset=0.15,
    )
    arrow(
        ax,
        v.bottom,
        (weighted.x + 1.0, weighted.top[1]),
        heads,
        side="right",
        connection="arc3,rad=0.0",
    )
    concat = box(ax, 7.2, 1.05, 3.4, 0.5, "concatenate heads", PALETTE["attention"], fontsize=10.5)
    _badge(ax, concat, "08")
    arrow(ax, weighted.bottom, concat.top, heads)
    out = box(
        ax,
        11.6,
        1.05,
        2.6,
        0.6,
        f"W_O: Linear {n.C} → {n.C}\nout {n.shape('B', 'T', 'C')}",
        PALETTE["attention"],
        fontsize=10,
    )
    _badge(ax, out, "08")
    arrow(ax, concat.right, out.left, n.shape("B", "T", "C"), side="above", offset=0.08)


def multi_head_attention_steps(numbers: CourseNumbers = COURSE) -> Figure:
    """(c) Multi-head attention step by step, the shape after every step (seed 000's empty
    headings 6.2–6.6 as one picture): project, split heads, QKᵀ, scale, mask, softmax, @V,
    concatenate, W_O."""
    n = numbers
    fig, ax = canvas(13.0, 12.2)
    title(ax, 6.5, 11.8, f"Multi-head attention step by step (H = {n.H} heads, D = C / H = {n.D})")
    q, k, v = _projections(ax, n, (2.4, 6.5, 10.6))
    x = 4.45
    softmax_box = _score_chain(ax, x, n, q, k)
    _mask_icon(ax, x + 1.95, 4.95)
    _mix_and_project(ax, n, x, softmax_box, v)
    note(
        ax,
        0.4,
        1.6,
        "every head does the same steps\non its own D = 16 columns;\nbadges = the notebook of each step",
        fontsize=10,
    )
    return fig


def _math_row(ax, fig: Figure, pieces: list[str], x: float, y: float, fontsize: float) -> list[Box]:
    """Write math pieces side by side from (x, y); return each piece's box in inches."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = []
    for piece in pieces:
        with drawing():
            text = ax.text(x, y, piece, ha="left", va="baseline", fontsize=fontsize, zorder=3)
            extent = text.get_window_extent(renderer)
        w, h = extent.width / fig.dpi, extent.height / fig.dpi
        y0 = extent.y0 / fig.dpi
        boxes.append(Box(x + w / 2, y0 + h / 2, w, h))
        x += w + 0.08
    return boxes


def _annotate(ax, target: Box, label: str, at: tuple[float, float], above: bool) -> None:
    end = target.top if above else target.bottom
    end = (end[0], end[1] + (0.06 if above else -0.06))
    ax.annotate(
        label,
        xy=end,
        xytext=at,
        ha="center",
        va="bottom" if above else "top",
        fontsize=10.5,
        family=MONO,
        color=SHAPE_COLOUR,
        zorder=3,
        arrowprops={
            "arrowstyle": "-|>",
            "color": EDGE,
            "linewidth": 1.0,
            "shrinkA": 2,
            "shrinkB": 0,
        },
        bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "#cccccc"},
    )


#: softmax(QKᵀ/√d_k + M) V, one mathtext piece per symbol :func:`attention_formula` labels.
_FORMULA = (
    r"$\mathrm{Attention}(Q, K, V)$",
    r"$=$",
    r"$\mathrm{softmax}\,($",
    r"$Q$",
    r"$K^{\top}$",
    r"$/$",
    r"$\sqrt{d_k}$",
    r"$+$",
    r"$M$",
    r"$)$",
    r"$V$",
)


def attention_formula(numbers: CourseNumbers = COURSE) -> Figure:
    """(d) softmax(QKᵀ/√d_k + M) V with every symbol annotated with its shape in the course's
    numbers (introduced in 04_qkv, computed step by step in 05–08)."""
    n = numbers
    fig, ax = canvas(14.0, 7.4)
    title(
        ax,
        7.0,
        7.0,
        "The attention formula, every symbol with its shape (one block, all heads at once)",
    )
    b = _math_row(ax, fig, list(_FORMULA), 2.0, 3.55, 30)
    out, _, soft, q, kt, _, root, _, mask, _, v = b
    hs = n.shape("B", "H", "T", "D")
    scores = n.shape("B", "H", "T", "T")
    labels = [  # (symbol, text, where the label sits, above the formula?)
        (out, f"result {hs};\nheads concatenated:\n{n.shape('B', 'T', 'C')}", (2.3, 5.2), True),
        (
            q,
            f"Q: queries {hs}\n= x W_Q, split into heads;\nQ Kᵀ = scores {scores}",
            (6.2, 5.2),
            True,
        ),
        (
            root,
            f"d_k = D = C / H = {n.D}\n√d_k = {int(n.D**0.5)} (a constant > 1)",
            (10.3, 5.2),
            True,
        ),
        (v, f"V: values\n{hs}", (12.9, 5.2), True),
        (
            kt,
            f"Kᵀ: keys {hs},\nlast two axes swapped:\n(B, H, D, T) = {n.shape('B', 'H', 'D', 'T')}",
            (7.6, 2.4),
            False,
        ),
        (
            mask,
            f"M: causal mask (T, T) = ({n.T}, {n.T})\n0 on/below the diagonal, −∞ above",
            (11.3, 2.4),
            False,
        ),
        (
            soft,
            "softmax over the last axis:\nevery row of the (B, H, T, T)\nweights sums to 1",
            (3.5, 1.0),
            False,
        ),
    ]
    for symbol, text, at, above in labels:
        _annotate(ax, symbol, text, at, above=above)
    return fig


# ---- one query row through the five steps (04–08) ---------------------------------------------

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


def query_row(
    *, query: int = 3, head: int = 0, n_keys: int = 6, n_dims: int = 3, seed: int = 0
) -> QueryRow:
    """The numbers of the query-row schematic, computed by the library on the course's batch.

    The same tensors as notebooks 04–08: ``embedding.course_batch(seed)``, window 0, and
    W_Q, W_K, W_V drawn as three ``nn.Linear(64, 64)`` right after ``torch.manual_seed(seed)``,
    split into 4 heads. The global random state is left as it was."""
    from torch import nn

    from .. import attention, embedding

    batch = embedding.course_batch(seed=seed)
    x = batch.inputs[:1]  # (1, T, C) window 0
    T, C = x.shape[1], x.shape[2]
    n_heads = COURSE.H
    if not 0 <= query < T or not 0 < n_keys <= T or not 0 <= head < n_heads:
        raise ValueError(f"need 0 <= query < {T}, 0 < n_keys <= {T}, 0 <= head < {n_heads}")
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
    )


def _number(value: float) -> str:
    return "−∞" if value == float("-inf") else f"{value:.2f}".replace("-", "−")


#: The layout of the query-row schematic, in inches.
_CELL, _LABEL_W, _ROW_H = 1.05, 2.9, 0.62


def query_row_steps(stage: str = "weighted_sum", row: QueryRow | None = None) -> Figure:
    """One query row through scores → scale → mask → softmax → weighted sum of V, with the
    course's numbers (04–08: each notebook's ``stage`` adds its row under the earlier ones).

    ``stage`` is a key of :data:`QUERY_ROW_STAGES`; ``row`` defaults to :func:`query_row`."""
    if stage not in QUERY_ROW_STAGES:
        raise ValueError(f"stage must be one of {list(QUERY_ROW_STAGES)}, got {stage!r}")
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
        f"One query row: window 0, head {r.head}, query {r.query} {q_token}, keys 0–{n - 1}",
        fontsize=12.5,
    )
    xs = [_LABEL_W + _CELL * (j + 0.5) for j in range(n)]
    header_y = height - 0.85
    for j, x in enumerate(xs):
        ax.text(
            x, header_y + 0.1, f"key {j}", ha="center", va="center", fontsize=9, color="#555555"
        )
        ax.text(
            x,
            header_y - 0.15,
            token_label(r.keys[j]),
            ha="center",
            va="center",
            fontsize=9.5,
            family=MONO,
        )
    return xs


def _query_row_stage(
    ax, r: QueryRow, name: str, xs: list[float], y: float, h: float, *, current: bool
) -> None:
    """One stage's row: its label and notebook badge, one box per key, and its extras."""
    labels = {
        "scores": "scores  q·kⱼ",
        "scale": f"÷ √d_k = ÷ {math.sqrt(r.d_k):g}",
        "mask": "causal mask",
        "softmax": "softmax → weights",
        "weighted_sum": f"vⱼ ({r.values.shape[1]} of {r.d_k} numbers)",
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
    right = xs[-1] + _CELL / 2
    if name == "softmax":
        note(ax, right + 0.1, y, f"sum {float(r.weights.sum()):.2f}", fontsize=9)
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
