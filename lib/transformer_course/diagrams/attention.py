"""Attention diagrams: multi-head attention step by step (04–08) and the attention formula with
every symbol's shape (04, 05), drawn by ``make images`` (see the package's docstring), in the
numbers of 04–08's running example (:data:`.numbers.ATTENTION_EXAMPLE`: T = 12 ≠ D = 16).
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..i18n import _
from .base import (
    EDGE,
    PALETTE,
    SHAPE_COLOUR,
    Box,
    arrow,
    badge,
    box,
    canvas,
    drawing,
    localised,
    mono_family,
    note,
    title,
)
from .numbers import ATTENTION_EXAMPLE, CourseNumbers


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
        _("grey = −∞"),
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
                (8.5, _("split {name} into heads\nview + transpose").format(name=name)),
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
        ("05", _("scores = Q Kᵀ\n(every query · every key)"), PALETTE["attention"], square),
        (
            "05",
            _("scale: ÷ √D = ÷ {root}").format(root=int(n.D**0.5)),
            PALETTE["attention"],
            square,
        ),
        ("06", _("causal mask: −∞ where key > query"), PALETTE["attention"], square),
        ("07", _("softmax over the keys\n(each row sums to 1)"), PALETTE["output"], square),
    ]
    ys = [6.95, 5.75, 4.6, 3.4]
    drawn = []
    for (tag, text, colour, _shape), y in zip(steps, ys, strict=True):
        b = box(ax, x, y, 3.4, 0.65 if "\n" in text else 0.5, text, colour, fontsize=10.5)
        _badge(ax, b, tag)
        drawn.append(b)
    arrow(ax, q.bottom, (drawn[0].x - 0.8, drawn[0].top[1]), heads, side="left")
    arrow(ax, k.bottom, (drawn[0].x + 0.8, drawn[0].top[1]), heads + " → Kᵀ", side="right")
    for (a, b), (*_step, shape) in zip(zip(drawn, drawn[1:]), steps, strict=False):
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
        _("weights @ V\n(mix the values)"),
        PALETTE["attention"],
        fontsize=10.5,
    )
    _badge(ax, weighted, "08")
    arrow(
        ax,
        softmax_box.bottom,
        (weighted.x - 1.0, weighted.top[1]),
        _("weights {shape}").format(shape=square),
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
    concat = box(
        ax, 7.2, 1.05, 3.4, 0.5, _("concatenate heads"), PALETTE["attention"], fontsize=10.5
    )
    _badge(ax, concat, "08")
    arrow(ax, weighted.bottom, concat.top, heads)
    out = box(
        ax,
        11.6,
        1.05,
        2.6,
        0.6,
        f"W_O: Linear {n.C} → {n.C}\n" + _("out {shape}").format(shape=n.shape("B", "T", "C")),
        PALETTE["attention"],
        fontsize=10,
    )
    _badge(ax, out, "08")
    arrow(ax, concat.right, out.left, n.shape("B", "T", "C"), side="above", offset=0.08)


@localised
def multi_head_attention_steps(numbers: CourseNumbers = ATTENTION_EXAMPLE) -> Figure:
    """(c) Multi-head attention step by step, the shape after every step (seed 000's empty
    headings 6.2–6.6 as one picture): project, split heads, QKᵀ, scale, mask, softmax, @V,
    concatenate, W_O."""
    n = numbers
    fig, ax = canvas(13.0, 12.2)
    title(
        ax,
        6.5,
        11.8,
        _("Multi-head attention step by step (H = {H} heads, D = C / H = {D})").format(
            H=n.H, D=n.D
        ),
    )
    q, k, v = _projections(ax, n, (2.4, 6.5, 10.6))
    x = 4.45
    softmax_box = _score_chain(ax, x, n, q, k)
    _mask_icon(ax, x + 1.95, 4.95)
    _mix_and_project(ax, n, x, softmax_box, v)
    note(
        ax,
        0.4,
        1.6,
        _(
            "every head does the same steps\non its own D = {D} columns;\n"
            "badges = the notebook of each step"
        ).format(D=n.D),
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
        family=mono_family(),
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


def _formula_labels(n: CourseNumbers, symbols: list) -> list:
    """The label of each annotated symbol of the attention formula, in the course's numbers:
    (symbol, text, where the label sits, above the formula?)."""
    out, _equals, soft, q, kt, _divide, root, _plus, mask, _close, v = symbols
    return _labels_above(n, out, q, root, v) + _labels_below(n, kt, mask, soft)


def _labels_above(n: CourseNumbers, out, q, root, v) -> list:
    """The labels above the formula (of the result, Q, √d_k and V), as in :func:`_formula_labels`."""
    hs = n.shape("B", "H", "T", "D")
    scores = n.shape("B", "H", "T", "T")
    return [
        (
            out,
            _("result {heads};\nheads concatenated:\n{shape}").format(
                heads=hs, shape=n.shape("B", "T", "C")
            ),
            (2.3, 5.2),
            True,
        ),
        (
            q,
            _("Q: queries {heads}\n= x W_Q, split into heads;\nQ Kᵀ = scores {scores}").format(
                heads=hs, scores=scores
            ),
            (6.2, 5.2),
            True,
        ),
        (
            root,
            _("d_k = D = C / H = {D}\n√d_k = {root} (a constant > 1)").format(
                D=n.D, root=int(n.D**0.5)
            ),
            (10.3, 5.2),
            True,
        ),
        (v, _("V: values\n{heads}").format(heads=hs), (12.9, 5.2), True),
    ]


def _labels_below(n: CourseNumbers, kt, mask, soft) -> list:
    """The labels below the formula (of Kᵀ, M and softmax), as in :func:`_formula_labels`."""
    hs = n.shape("B", "H", "T", "D")
    return [
        (
            kt,
            _("Kᵀ: keys {heads},\nlast two axes swapped:\n(B, H, D, T) = {shape}").format(
                heads=hs, shape=n.shape("B", "H", "D", "T")
            ),
            (7.6, 2.4),
            False,
        ),
        (
            mask,
            _("M: causal mask (T, T) = ({T}, {T})\n0 on/below the diagonal, −∞ above").format(
                T=n.T
            ),
            (11.3, 2.4),
            False,
        ),
        (
            soft,
            _("softmax over the last axis:\nevery row of the (B, H, T, T)\nweights sums to 1"),
            (3.5, 1.0),
            False,
        ),
    ]


@localised
def attention_formula(numbers: CourseNumbers = ATTENTION_EXAMPLE) -> Figure:
    """(d) softmax(QKᵀ/√d_k + M) V with every symbol annotated with its shape in the course's
    numbers (introduced in 04_qkv, computed step by step in 05–08)."""
    n = numbers
    fig, ax = canvas(14.0, 7.4)
    title(
        ax,
        7.0,
        7.0,
        _("The attention formula, every symbol with its shape (one block, all heads at once)"),
    )
    symbols = _math_row(ax, fig, list(_FORMULA), 2.0, 3.55, 30)
    for symbol, text, at, above in _formula_labels(n, symbols):
        _annotate(ax, symbol, text, at, above=above)
    return fig
