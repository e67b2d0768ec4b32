"""Block diagrams: pre-norm beside post-norm (09), classic beside LLaMA-style (13), and the
encoder-decoder with cross-attention (14). Drawn by ``make images``; see ``diagrams.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure

from ..i18n import _
from .base import (
    PALETTE,
    Box,
    arrow,
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


@dataclass(frozen=True)
class Step:
    """One element of a vertical stack: a box, a residual branch point or a residual ⊕."""

    kind: str  # "box" | "branch" | "add" | "out"
    text: str = ""
    colour: str = PALETTE["data"]
    height: float = 0.55
    label: str | None = None  # the shape written on the arrow that leaves this element


def stack(
    ax,
    x: float,
    y: float,
    steps: Sequence[Step],
    *,
    width: float = 3.0,
    gap: float = 0.42,
    rail: float | None = None,
) -> dict[str, Box]:
    """Draw ``steps`` top to bottom from ``y``; each "branch" opens a residual that the next
    "add" closes through a rail ``rail`` inches to the left. Returns the boxes by text."""
    rail = width / 2 + 0.3 if rail is None else rail
    boxes: dict[str, Box] = {}
    previous: tuple[Box | None, str | None] = (None, None)
    branch_y: float | None = None
    for step in steps:
        if step.kind == "branch":
            branch_y = y + gap / 2 if previous[0] is not None else y
            continue
        if step.kind == "add":
            node = plus(ax, x, y - 0.16)
            current = node
            if branch_y is None:
                raise ValueError("an 'add' step needs a 'branch' step above it")
            line(ax, [(x, branch_y), (x - rail, branch_y), (x - rail, node.y), node.left])
            branch_y = None
            y -= 0.32
        else:
            current = box(
                ax,
                x,
                y - step.height / 2,
                width if step.kind == "box" else width * 0.8,
                step.height,
                step.text,
                step.colour,
                fontsize=10.5,
            )
            y -= step.height
        if previous[0] is not None:
            arrow(ax, previous[0].bottom, current.top, previous[1])
        boxes[step.text or f"add{len(boxes)}"] = current
        previous = (current, step.label)
        y -= gap
    return boxes


def _sublayers(n: CourseNumbers, placement: str) -> list[Step]:
    shape = n.shape("B", "T", "C")
    ln = Step("box", "LayerNorm", PALETTE["norm"], 0.5, shape)
    attn = Step(
        "box",
        _("masked multi-head attention\n(H = {H}, D = {D})").format(H=n.H, D=n.D),
        PALETTE["attention"],
        0.75,
        shape,
    )
    ffn_text = _("feed-forward {C} → {d_ff} → {C}\n(ReLU)").format(C=n.C, d_ff=n.d_ff)
    ffn = Step("box", ffn_text, PALETTE["ffn"], 0.75, shape)
    add = Step("add", label=shape)
    x_in = Step("out", f"x {shape}", PALETTE["data"], 0.5, shape)
    x_out = Step("out", _("to the next block {shape}").format(shape=shape), PALETTE["data"], 0.5)
    if placement == "pre":
        return [x_in, Step("branch"), ln, attn, add, Step("branch"), ln, ffn, add, x_out]
    return [x_in, Step("branch"), attn, add, ln, Step("branch"), ffn, add, ln, x_out]


@localised
def block_norms(numbers: CourseNumbers = COURSE) -> Figure:
    """(b) One Transformer block, pre-norm (the course's GPT, 09) beside post-norm (2017 paper, 14)."""
    fig, ax = canvas(12.0, 10.6)
    title(ax, 6.0, 10.2, _("One Transformer block: pre-norm beside post-norm"))
    for x, placement, heading, caption in (
        (
            3.4,
            "pre",
            _("pre-norm (GPT-2, this course's GPT)"),
            _("norm → sub-layer → add: the residual path\nfrom input to output is a plain sum"),
        ),
        (
            9.0,
            "post",
            _("post-norm (the 2017 paper, notebook 14)"),
            _("sub-layer → add → norm: every sum is\nnormalised; deep stacks need warm-up"),
        ),
    ):
        note(
            ax, x - 0.4, 9.55, heading, ha="center", style="normal", fontsize=12, fontweight="bold"
        )
        stack(ax, x, 9.1, _sublayers(numbers, placement), width=3.3)
        note(ax, x - 0.4, 0.55, caption, ha="center", fontsize=10)
    ax.plot([6.05, 6.05], [0.9, 9.7], color="#cccccc", linewidth=1.0, zorder=0)
    return fig


def _residual_block(
    shape: str, entry: str, entry_colour: str, boxes: list[tuple[str, str, float]]
) -> list[Step]:
    """Entry, then two residual pairs (norm box, sub-layer box, ⊕), then the output.
    ``boxes`` holds (text, colour, height) for norm 1, sub-layer 1, norm 2, sub-layer 2."""
    steps = [Step("out", f"{entry} {shape}", entry_colour, 0.5, shape)]
    for norm, layer in (boxes[:2], boxes[2:]):
        steps += [
            Step("branch"),
            Step("box", *norm, label=shape),
            Step("box", *layer, label=shape),
            Step("add", label=shape),
        ]
    return [*steps, Step("out", _("out {shape}").format(shape=shape), PALETTE["data"], 0.5)]


def _classic_steps(n: CourseNumbers) -> list[Step]:
    attention = _("multi-head attention\n{H} query heads, {H} K/V heads").format(H=n.H)
    ffn = f"FFN {n.C} → {n.d_ff} → {n.C}, ReLU"
    boxes = [
        (_("LayerNorm (mean and variance)"), PALETTE["norm"], 0.5),
        (attention, PALETTE["attention"], 0.75),
        ("LayerNorm", PALETTE["norm"], 0.5),
        (ffn, PALETTE["ffn"], 0.55),
    ]
    return _residual_block(
        n.shape("B", "T", "C"), _("x + sinusoidal positions"), PALETTE["embed"], boxes
    )


def _llama_steps(n: CourseNumbers) -> list[Step]:
    swiglu_hidden = -(-8 * n.C // 3)  # ⌈8C/3⌉, GPTConfig's default for SwiGLU
    attention = _(
        "grouped-query attention, RoPE on Q, K\n{H} query heads share 2 K/V heads"
    ).format(H=n.H)
    swiglu = _("SwiGLU: SiLU(x W₁) ⊙ (x W₃), then W₂") + f"\n{n.C} → {swiglu_hidden} → {n.C}"
    modern = PALETTE["modern"]
    boxes = [
        (_("RMSNorm (root mean square only)"), modern, 0.5),
        (attention, modern, 0.75),
        ("RMSNorm", modern, 0.5),
        (swiglu, modern, 0.75),
    ]
    entry = _("x (no position table)")
    return _residual_block(n.shape("B", "T", "C"), entry, PALETTE["embed"], boxes)


@localised
def llama_vs_classic(numbers: CourseNumbers = COURSE) -> Figure:
    """(f) The classic block of the course beside the LLaMA-style block of 13 (RoPE, RMSNorm,
    SwiGLU, grouped-query attention with 2 K/V heads for 4 query heads)."""
    fig, ax = canvas(13.0, 10.4)
    title(ax, 6.5, 10.0, _("The classic block beside a LLaMA-style block (notebook 13)"))
    for x, steps, heading in (
        (3.5, _classic_steps(numbers), _("classic (the course's GPT, notebooks 09–12)")),
        (9.7, _llama_steps(numbers), _("LLaMA style (notebook 13)")),
    ):
        note(ax, x - 0.4, 9.4, heading, ha="center", style="normal", fontsize=12, fontweight="bold")
        stack(ax, x + 0.15, 8.95, steps, width=3.9)
    ax.plot([6.55, 6.55], [0.7, 9.6], color="#cccccc", linewidth=1.0, zorder=0)
    note(
        ax,
        6.5,
        0.45,
        _("yellow = what LLaMA changes; both keep pre-norm residuals and the causal mask"),
        ha="center",
        fontsize=10,
    )
    return fig


def _column_head(
    ax, x: float, width: float, ids: tuple[str, str], stack: str, frame_at: tuple[float, ...]
) -> Box:
    """Ids → embedding above the frame of "× 2 ``stack`` blocks"; ``frame_at`` is the frame's
    (left of x, bottom, right of x). Returns the embedding box."""
    text, shape = ids
    ids_box = box(ax, x, 9.15, width, 0.5, f"{text} {shape}", PALETTE["data"])
    emb = box(ax, x, 8.25, width, 0.6, _("embedding + sinusoidal positions"), PALETTE["embed"])
    arrow(ax, ids_box.bottom, emb.top, shape)
    left, bottom, right = frame_at
    frame(ax, x - left, bottom, x + right, 7.45)
    label = _("× 2 {stack} blocks").format(stack=stack)
    style = dict(ha="right", style="normal", fontweight="bold", fontsize=10.5)
    note(ax, x + right - 0.1, bottom + 0.18, label, **style)
    return emb


def _residual_column(
    ax,
    x: float,
    width: float,
    entry: tuple[Box, str],
    sublayers: list[tuple[str, str]],
    places: list[tuple[float, float, float, float]],
    *,
    rail: float,
) -> list[Box]:
    """Post-norm sub-layers top to bottom, each followed by its ⊕ and the residual line that
    skips it ``rail`` to the left. ``sublayers``: (text, PALETTE key); ``places``: (box y, box
    height, ⊕ y, where the residual leaves the trunk). Returns the boxes and ⊕ alternately."""
    drawn: list[Box] = []
    for (text, colour), (y, height, plus_y, _top_y) in zip(sublayers, places, strict=True):
        size = 11 if colour == "ffn" else 10  # the attention boxes hold two or three lines
        drawn += [box(ax, x, y, width, height, text, PALETTE[colour], fontsize=size)]
        drawn += [plus(ax, x, plus_y)]
    entry_box, entry_shape = entry
    arrow(ax, entry_box.bottom, drawn[0].top, entry_shape, label_at=(x, 7.68))
    for above, below in zip(drawn, drawn[1:]):
        arrow(ax, above.bottom, below.top)
    for (*_box, top_y), node in zip(places, drawn[1::2], strict=True):
        line(ax, [(x, top_y), (x - rail, top_y), (x - rail, node.y), node.left])
    return drawn


def _encoder_column(ax, x: float, n: CourseNumbers) -> Box:
    src_shape = "(B, S, 64)"
    emb = _column_head(ax, x, 3.4, (_("source ids"), "(B, S)"), _("encoder"), (2.35, 4.15, 2.0))
    *_earlier, add2 = _residual_column(
        ax,
        x,
        3.4,
        (emb, src_shape),
        [
            (_("self-attention, no causal mask\n(every source token sees all)"), "attention"),
            (_("feed-forward"), "ffn"),
        ],
        [(6.6, 0.75, 5.85, 7.2), (5.15, 0.5, 4.5, 5.6)],
        rail=2.05,
    )
    memory = box(ax, x, 2.9, 3.4, 0.6, _("encoder output (memory)"), PALETTE["embed"])
    arrow(ax, add2.bottom, memory.top, src_shape)
    return memory


def _decoder_column(ax, x: float, memory: Box) -> Box:
    """The decoder stack of :func:`encoder_decoder`; returns its last ⊕."""
    emb = _column_head(
        ax, x, 3.6, (_("target ids so far"), "(B, T)"), _("decoder"), (2.45, 2.5, 2.1)
    )
    _self, _add1, cross, _add2, _ffn, add3 = _residual_column(
        ax,
        x,
        3.6,
        (emb, "(B, T, 64)"),
        [
            (_("masked self-attention\n(causal: only earlier targets)"), "attention"),
            (_("cross-attention\nQ from the decoder,\nK and V from the memory"), "output"),
            (_("feed-forward"), "ffn"),
        ],
        [(6.6, 0.75, 5.85, 7.2), (5.0, 0.85, 4.2, 5.6), (3.5, 0.5, 2.85, 3.95)],
        rail=2.2,
    )
    arrow(ax, memory.right, cross.left, None, connection="arc3,rad=0.25")
    note(
        ax,
        5.75,
        3.55,
        "K, V: (B, S, 64)",
        fontsize=9.5,
        style="normal",
        family=mono_family(),
        colour="#1f4e8c",
    )
    return add3


@localised
def encoder_decoder(numbers: CourseNumbers = COURSE) -> Figure:
    """(e) The encoder-decoder of notebook 14: the decoder's cross-attention takes its queries
    from the decoder and its keys and values from the encoder's output (memory)."""
    n = numbers
    fig, ax = canvas(13.0, 10.4)
    title(ax, 6.5, 10.0, _("Encoder-decoder with cross-attention (notebook 14, C = 64, H = 4)"))
    note(
        ax,
        6.5,
        9.62,
        _(
            "both stacks are post-norm, as in the 2017 paper: every ⊕ is followed by a LayerNorm"
            " (not drawn)"
        ),
        ha="center",
        fontsize=10,
    )
    memory = _encoder_column(ax, 3.2, n)
    x = 9.6
    add3 = _decoder_column(ax, x, memory)
    tgt = "(B, T, 64)"
    head = box(ax, x, 1.55, 3.6, 0.55, _("linear to the vocabulary"), PALETTE["output"])
    arrow(ax, add3.bottom, head.top, tgt)
    out = box(ax, x, 0.55, 3.6, 0.5, _("next target token"), PALETTE["output"])
    arrow(ax, head.bottom, out.top, _("logits {shape}").format(shape="(B, T, V)"))
    note(
        ax,
        3.2,
        1.4,
        _("S = source length, T = target length;\nthe cross-attention map is (B, H, T, S)"),
        ha="center",
        fontsize=10,
    )
    return fig
