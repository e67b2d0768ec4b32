"""(a) The decoder-only GPT end to end (00_setup) and the training loop as a cycle (11_training).
Drawn by ``make images``; see the package's docstring.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from ..i18n import _
from .base import (
    PALETTE,
    Box,
    arrow,
    badge,
    box,
    canvas,
    frame,
    line,
    localised,
    mono_family,
    note,
    plus,
    title,
)
from .numbers import COURSE, CourseNumbers


class _Tagged:
    """Draws boxes, each with a badge naming the notebooks that build it, and plain arrows."""

    def __init__(self, ax):
        self.ax = ax

    def box(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        text: str,
        colour: str,
        tags: tuple[str, ...],
        **kw,
    ) -> Box:
        drawn = box(self.ax, x, y, w, h, text, colour, **kw)
        self.badge(x - w / 2 + 0.08, y + h / 2 - 0.08, tags)
        return drawn

    def badge(self, x: float, y: float, tags: tuple[str, ...]) -> None:
        label = (
            tags[0]
            if len(tags) == 1
            else f"{tags[0]}–{tags[-1]}"
            if len(tags) > 2
            else " ".join(tags)
        )
        badge(self.ax, x, y, label, "#555555")

    def arrow(self, start, end, label=None, **kw) -> None:
        arrow(self.ax, start, end, label, **kw)


def _draw_embedding_stack(r: _Tagged, x: float, n: CourseNumbers) -> Box:
    ax = r.ax
    text = r.box(
        x, 14.55, 4.0, 0.6, '"Chapter 1: Building Rapport and …"', PALETTE["data"], ("01",)
    )
    tok = r.box(x, 13.35, 4.0, 0.6, _("tokenizer (cl100k_base BPE)"), PALETTE["data"], ("01",))
    r.arrow(text.bottom, tok.top, _("text"))
    emb = r.box(
        x,
        12.1,
        4.0,
        0.75,
        _("token embedding table\nV × C = V × {C}").format(C=n.C),
        PALETTE["embed"],
        ("02", "02b"),
    )
    r.arrow(tok.bottom, emb.top, _("ids {shape}").format(shape=n.shape("B", "T")))
    add = plus(ax, x, 10.95)
    r.arrow(emb.bottom, add.top, n.shape("B", "T", "C"))
    # The token rows are multiplied by √C before the positions are added (GPT.embed, 11_training).
    note(
        ax,
        x - 0.12,
        11.5,
        f"× √C = × {math.isqrt(n.C)}",
        ha="right",
        fontsize=9.5,
        style="normal",
        colour="#444444",
    )
    pos = r.box(x + 3.3, 10.95, 2.2, 0.75, _("positional\nencoding"), PALETTE["embed"], ("03",))
    r.arrow(pos.left, add.right, n.shape("T", "C"), side="above", offset=0.05)
    note(
        ax,
        x + 2.1,
        12.1,
        _("V = {compact} (compact)\nor {full} (full)").format(
            compact=f"{n.V_compact:,}", full=f"{n.V_full:,}"
        ),
        fontsize=9,
        style="normal",
    )
    return add


def _draw_block(r: _Tagged, x: float, add: Box, n: CourseNumbers) -> tuple[Box, Box]:
    ax, tags = r.ax, ("09",)
    frame(ax, x - 2.6, 4.85, x + 2.35, 10.35, PALETTE["block"], dashed=False, edge="#333333")
    r.badge(x - 2.5, 10.27, tags)
    note(
        ax,
        x + 2.25,
        10.12,
        _("× {n_layers} blocks").format(n_layers=n.n_layers),
        fontsize=11,
        ha="right",
        style="normal",
        fontweight="bold",
    )
    ln1 = r.box(x, 9.55, 3.0, 0.5, "LayerNorm", PALETTE["norm"], tags)
    mha = r.box(
        x,
        8.55,
        3.4,
        0.75,
        _("masked multi-head attention\nH = {H} heads of D = {D}").format(H=n.H, D=n.D),
        PALETTE["attention"],
        ("04", "05", "06", "07", "08"),
    )
    add1 = plus(ax, x, 7.6)
    ln2 = r.box(x, 6.85, 3.0, 0.5, "LayerNorm", PALETTE["norm"], tags)
    ffn = r.box(
        x,
        5.95,
        3.4,
        0.7,
        _("feed-forward\n{C} → {d_ff} → {C}").format(C=n.C, d_ff=n.d_ff),
        PALETTE["ffn"],
        tags,
    )
    add2 = plus(ax, x, 5.2)
    shape = n.shape("B", "T", "C")
    r.arrow(add.bottom, ln1.top, shape, label_at=(x, 10.6))
    r.arrow(ln1.bottom, mha.top, shape)
    r.arrow(mha.bottom, add1.top, shape)
    r.arrow(add1.bottom, ln2.top, shape)
    r.arrow(ln2.bottom, ffn.top, shape)
    r.arrow(ffn.bottom, add2.top, shape)
    for top_y, node in ((10.05, add1), (7.3, add2)):
        line(ax, [(x, top_y), (x - 2.25, top_y), (x - 2.25, node.y), node.left])
    note(ax, x - 2.2, 8.55, _("residual"), fontsize=8.5, rotation=90)
    return mha, add2


def _attention_steps(n: CourseNumbers) -> list[tuple[str, str, str]]:
    """The steps inside one attention layer: (the notebook that builds it, what it does, the
    shape it leaves, in the course's numbers)."""
    return [
        ("04", _("project: Q, K, V = x W_Q, x W_K, x W_V"), n.shape("B", "T", "C") + " × 3"),
        ("04", _("split heads (view + transpose)"), n.shape("B", "H", "T", "D")),
        (
            "05",
            _("scores Q Kᵀ, scaled by 1/√D = 1/{root}").format(root=math.isqrt(n.D)),
            n.shape("B", "H", "T", "T"),
        ),
        ("06", _("causal mask: −∞ above the diagonal"), n.shape("B", "H", "T", "T")),
        ("07", _("softmax over keys (rows sum to 1)"), n.shape("B", "H", "T", "T")),
        ("08", _("weights @ V, concatenate heads"), n.shape("B", "T", "C")),
        ("08", _("output projection W_O"), n.shape("B", "T", "C")),
    ]


def _draw_attention_detail(r: _Tagged, x: float, mha: Box, n: CourseNumbers) -> None:
    ax = r.ax
    steps = _attention_steps(n)
    top, gap = 10.0, 0.93
    frame(
        ax,
        x - 2.45,
        top - gap * (len(steps) - 1) - 0.55,
        x + 2.45,
        top + 0.75,
        "#fffaf3",
        dashed=True,
    )
    note(
        ax,
        x,
        top + 0.5,
        _("inside the attention (one block)"),
        ha="center",
        style="normal",
        fontsize=10.5,
        fontweight="bold",
    )
    for (x0, y0), (x1, y1) in (
        ((mha.right[0], mha.y + 0.2), (x - 2.45, top + 0.75)),
        ((mha.right[0], mha.y - 0.2), (x - 2.45, top - gap * (len(steps) - 1) - 0.55)),
    ):
        ax.plot([x0, x1], [y0, y1], color="#bbbbbb", linewidth=0.9, linestyle=":", zorder=0.4)
    previous = None
    for i, (tag, text, shape) in enumerate(steps):
        y = top - i * gap
        b = r.box(x, y, 4.4, 0.5, text, PALETTE["attention"], (tag,), fontsize=10)
        if previous is not None:
            r.arrow(previous.bottom, b.top, None)
        ax.text(
            b.right[0] - 0.05,
            y - 0.38,
            shape,
            ha="right",
            va="center",
            fontsize=8.5,
            family=mono_family(),
            color="#1f4e8c",
            zorder=3,
        )
        previous = b


def _draw_output(r: _Tagged, x: float, block_out: Box, n: CourseNumbers) -> None:
    fln = r.box(x, 4.15, 3.0, 0.5, _("final LayerNorm"), PALETTE["norm"], ("10",))
    r.arrow(block_out.bottom, fln.top, n.shape("B", "T", "C"))
    head = r.box(
        x,
        3.15,
        3.4,
        0.6,
        _("linear to the vocabulary\n(C → V, tied to the table)"),
        PALETTE["output"],
        ("10",),
    )
    r.arrow(fln.bottom, head.top, n.shape("B", "T", "C"))
    soft = r.box(x, 2.0, 3.0, 0.5, "softmax", PALETTE["output"], ("07", "10"))
    r.arrow(head.bottom, soft.top, _("logits {shape}").format(shape=n.shape("B", "T", "V")))
    loss = r.box(
        x - 1.45,
        0.55,
        2.6,
        0.7,
        _("cross-entropy loss\nvs the next ids"),
        PALETTE["output"],
        ("10", "11"),
    )
    gen = r.box(
        x + 1.45,
        0.55,
        2.6,
        0.7,
        _("pick the next token\n(greedy, top-k, …)"),
        PALETTE["output"],
        ("12",),
    )
    r.arrow(
        (soft.x - 0.6, soft.bottom[1]),
        loss.top,
        n.shape("B", "T", "V"),
        side="left",
    )
    r.arrow((soft.x + 0.6, soft.bottom[1]), gen.top, _("last row (1, V)"))


def _draw_side_roads(r: _Tagged, x: float) -> None:
    modern = r.box(
        x,
        2.15,
        4.6,
        0.8,
        _("a LLaMA-style block instead:\nRoPE, RMSNorm, SwiGLU, GQA"),
        PALETTE["modern"],
        ("13",),
    )
    encdec = r.box(
        x,
        0.9,
        4.6,
        0.8,
        _("add an encoder: cross-attention\n(a tiny seq2seq task)"),
        PALETTE["modern"],
        ("14",),
    )
    r.arrow(modern.left, (5.95, 6.0), None, connection="arc3,rad=-0.25")
    note(r.ax, encdec.x, 0.3, _("the same library, other architectures"), ha="center", fontsize=8.5)


@localised
def gpt_overview(numbers: CourseNumbers = COURSE) -> Figure:
    """(a) The decoder-only GPT end to end, the shape on every arrow, each stage tagged with the
    notebook that builds it: the course map of 00_setup."""
    fig, ax = canvas(12.5, 16.2)
    r = _Tagged(ax)
    title(ax, 6.25, 15.75, _("The course's tiny GPT, end to end"), fontsize=17)
    note(
        ax,
        6.25,
        15.3,
        _(
            "badges = notebooks; blue = tensor shapes (B={B} windows, T={T} tokens, C={C},"
            " V = vocabulary)"
        ).format(B=numbers.B, T=numbers.T, C=numbers.C),
        ha="center",
        fontsize=9.5,
        style="normal",
    )
    add = _draw_embedding_stack(r, 3.5, numbers)
    mha, block_out = _draw_block(r, 3.5, add, numbers)
    _draw_attention_detail(r, 9.75, mha, numbers)
    _draw_output(r, 3.5, block_out, numbers)
    _draw_side_roads(r, 9.75)
    return fig


@localised
def training_loop(numbers: CourseNumbers = COURSE) -> Figure:
    """The training step as a cycle (11_training): batch → forward → loss → backward → clip and
    AdamW step → zero_grad → the next batch, with the course's shapes (compact vocabulary)."""
    n = numbers
    fig, ax = canvas(10.0, 5.2)
    title(ax, 5.0, 4.95, _("One training step, repeated (train.train_step)"))
    w, h, top, bottom = 2.4, 0.8, 3.7, 1.0
    xs = (1.5, 5.0, 8.5)
    # Six stations on a ring, clockwise from the top left; the text says what the code does.
    stations = [
        (xs[0], top, _("1  batch") + "\nx, y = get_batch(train_ids)", PALETTE["data"]),
        (xs[1], top, _("2  forward") + "\nlogits = model(x)", PALETTE["attention"]),
        (xs[2], top, _("3  loss") + "\n" + _("cross-entropy(logits, y)"), PALETTE["output"]),
        (xs[2], bottom, _("4  backward") + "\nloss.backward()", PALETTE["norm"]),
        (xs[1], bottom, _("5  step") + "\n" + _("clip, optimizer.step()"), PALETTE["ffn"]),
        (xs[0], bottom, _("6  clear") + "\noptimizer.zero_grad()", PALETTE["embed"]),
    ]
    boxes = [box(ax, x, y, w, h, text, colour, fontsize=10.5) for x, y, text, colour in stations]

    def between(a: float, b: float, y: float) -> tuple[float, float]:
        return ((a + b) / 2, y)

    above, below = top + h / 2 + 0.08, bottom - h / 2 - 0.08
    arrow(ax, boxes[0].right, boxes[1].left, f"x, y: {n.shape('B', 'T')}", side="above",
          offset=0, label_at=between(xs[0], xs[1], above))  # fmt: skip
    arrow(ax, boxes[1].right, boxes[2].left, f"logits: {n.shape('B', 'T', 'V_compact')}", side="above",
          offset=0, label_at=between(xs[1], xs[2], above))  # fmt: skip
    arrow(ax, boxes[2].bottom, boxes[3].top, _("loss: shape ()"), side="right", offset=0.12)
    arrow(ax, boxes[3].left, boxes[4].right, _("p.grad: one per weight, its shape"), side="below",
          offset=0, label_at=between(xs[1], xs[2], below))  # fmt: skip
    arrow(ax, boxes[4].left, boxes[5].right, _("AdamW moved the weights (lr_t)"), side="below",
          offset=0, label_at=between(xs[0], xs[1], below))  # fmt: skip
    arrow(ax, boxes[5].top, boxes[0].bottom, "p.grad = None", side="right", offset=0.12)
    note(
        ax,
        5.0,
        (top + bottom) / 2,
        _(
            "backward adds to p.grad: without step 6 the next\nstep would use this batch's gradient too"
        ),
        ha="center",
    )
    return fig
