"""The "you are here" roadmap strip at the top of every notebook (introduced in 00_setup): the 16
notebooks as chips, the current one highlighted. Drawn by ``make images``.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from .base import PALETTE, box, canvas, note
from .numbers import NOTEBOOKS

#: The roadmap strip's chip for each notebook: a short name and the colour of its kind of stage.
STRIP_LABELS: dict[str, tuple[str, str]] = {
    "00": ("Setup", "muted"),
    "01": ("Tokens", "data"),
    "02": ("Embeddings", "embed"),
    "02b": ("word2vec", "embed"),
    "03": ("Positions", "embed"),
    "04": ("Q, K, V", "attention"),
    "05": ("Scale", "attention"),
    "06": ("Causal mask", "attention"),
    "07": ("Softmax", "attention"),
    "08": ("Weights @ V", "attention"),
    "09": ("Block", "norm"),
    "10": ("Logits, loss", "output"),
    "11": ("Training", "output"),
    "12": ("Generation", "output"),
    "13": ("Modern", "modern"),
    "14": ("Enc-decoder", "modern"),
}


def roadmap_strip(here: str | None = None) -> Figure:
    """The course as a strip of 16 chips in two rows, ``here`` highlighted: the roadmap at the
    top of every notebook. Drawn at the size it is shown (about 1,000 px wide: a notebook's
    width), so its 10-point labels stay readable; 00's :func:`gpt_overview` is the full map."""
    if here is not None and here not in NOTEBOOKS:
        raise ValueError(f"here must be a notebook number {list(NOTEBOOKS)} or None, got {here!r}")
    if set(STRIP_LABELS) != set(NOTEBOOKS):
        raise ValueError("STRIP_LABELS must name every notebook of NOTEBOOKS")
    here = None if here == "00" else here
    per_row, width, height, gap, margin = 8, 1.24, 0.42, 0.07, 0.1
    fig, ax = canvas(margin * 2 + per_row * width + (per_row - 1) * gap, 1.5)
    heading = (
        "The course in 16 notebooks (00 shows the whole model)"
        if here is None
        else f"You are here: {here} · {NOTEBOOKS[here]}"
    )
    note(ax, margin, 1.3, heading, fontsize=12, style="normal", fontweight="bold", colour="black")
    note(
        ax,
        fig.get_figwidth() - margin,
        1.3,
        "the whole model: notebook 00",
        ha="right",
        fontsize=9,
        style="italic",
    )
    for index, number in enumerate(NOTEBOOKS):
        row, column = divmod(index, per_row)
        x = margin + column * (width + gap) + width / 2
        y = 0.82 - row * (height + 0.1)
        label, kind = STRIP_LABELS[number]
        is_here = number == here
        box(
            ax,
            x,
            y,
            width,
            height,
            f"{number} {label}",
            PALETTE["highlight"] if is_here else PALETTE[kind],
            fontsize=10,
            bold=is_here,
            edge=PALETTE["highlight"] if is_here else None,
            linewidth=2.5 if is_here else 0.8,
        )
    return fig
