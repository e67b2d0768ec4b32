"""The "you are here" roadmap strip at the top of every notebook (introduced in 00_setup): the
course's notebooks as chips, the current one highlighted. Drawn by ``make images``.
"""

from __future__ import annotations

import contextlib

import matplotlib as mpl
from matplotlib.figure import Figure

from ..i18n import N_, NC_, _, in_language, language, pgettext
from .base import EDGE, PALETTE, box, canvas, font_family, note
from .numbers import NOTEBOOKS

#: The roadmap strip's chip for each notebook: a short name (the catalog translates it under the
#: context "roadmap chip") and the colour of its kind of stage.
STRIP_LABELS: dict[str, tuple[str, str]] = {
    "00": (NC_("roadmap chip", "Setup"), "muted"),
    "01": (NC_("roadmap chip", "Tokens"), "data"),
    "01b": (NC_("roadmap chip", "Byte BPE"), "data"),
    "02": (NC_("roadmap chip", "Embeddings"), "embed"),
    "02b": (NC_("roadmap chip", "word2vec"), "embed"),
    "03": (NC_("roadmap chip", "Positions"), "embed"),
    "04": (NC_("roadmap chip", "Q, K, V"), "attention"),
    "05": (NC_("roadmap chip", "Scale"), "attention"),
    "06": (NC_("roadmap chip", "Causal mask"), "attention"),
    "07": (NC_("roadmap chip", "Softmax"), "attention"),
    "08": (NC_("roadmap chip", "Weights @ V"), "attention"),
    "09": (NC_("roadmap chip", "Block"), "norm"),
    "10": (NC_("roadmap chip", "Logits, loss"), "output"),
    "11": (NC_("roadmap chip", "Training"), "output"),
    "12": (NC_("roadmap chip", "Generation"), "output"),
    "13": (NC_("roadmap chip", "Modern"), "modern"),
    "14": (NC_("roadmap chip", "Enc-decoder"), "modern"),
    "15": (NC_("roadmap chip", "FlashAttention"), "modern"),
    "16": (NC_("roadmap chip", "Induction"), "modern"),
}
#: The strip's texts: heading (whole course), heading (here), right-hand note.
TEXTS = (
    N_("The course in {count} notebooks (00 shows the whole model)"),
    N_("You are here: {number} · {title}"),
    N_("the whole model: notebook 00"),
)


def notebook_title(number: str) -> str:
    """Notebook ``number``'s name (:data:`NOTEBOOKS`) in the current language: the roadmap's
    heading (introduced in 00_setup), the title of the notebook's first cell, and the name every
    link to it uses."""
    return pgettext("notebook title", NOTEBOOKS[number])


def _chip_label(number: str) -> str:
    """Notebook ``number``'s chip on the strip, in the current language."""
    return pgettext("roadmap chip", STRIP_LABELS[number][0])


def chinese_text() -> str:
    """Every character the Chinese roadmap draws (what the subset font must hold)."""
    with in_language("zh"):
        parts = [
            *(_chip_label(number) for number in NOTEBOOKS),
            *(notebook_title(number) for number in NOTEBOOKS),
            *(_(text) for text in TEXTS),
        ]
    return "".join(sorted(set("".join(parts))))


def roadmap_strip(here: str | None = None, lang: str | None = None) -> Figure:
    """The course as a strip of chips in rows of at most 8, ``here`` highlighted, in the learner's
    language (``setup_notebook(lang=...)``); ``lang`` ("en" or "zh") draws it in that language
    instead (``make images`` draws the English strips of images/)."""
    with contextlib.nullcontext() if lang is None else in_language(lang):
        shown = language()
        with mpl.rc_context({"font.family": font_family(shown)}):
            return _roadmap_strip(here, shown)


def _strip_heading(fig: Figure, ax, here: str | None, margin: float, y: float) -> None:
    """The strip's top line at height ``y``: where the reader is (or the whole course) on the
    left, the pointer to the whole model on the right."""
    whole, you_are_here, whole_model = (_(text) for text in TEXTS)
    heading = (
        whole.format(count=len(NOTEBOOKS))
        if here in (None, "00")
        else you_are_here.format(number=here, title=notebook_title(here))
    )
    note(
        ax,
        margin,
        y,
        heading,
        fontsize=12,
        style="normal",
        fontweight="bold",
        colour="black",
    )
    note(
        ax,
        fig.get_figwidth() - margin,
        y,
        whole_model,
        ha="right",
        fontsize=9,
        style="italic",
    )


def _roadmap_strip(here: str | None, lang: str) -> Figure:
    """The course as a strip of chips in rows of at most 8, ``here`` highlighted: the roadmap at the
    top of every notebook. Drawn at the size it is shown (about 1,000 px wide: a notebook's
    width), so its 10-point labels stay readable; 00's :func:`gpt_overview` is the full map."""
    if here is not None and here not in NOTEBOOKS:
        raise ValueError(
            _("here must be a notebook number {notebooks} or None, got {here!r}").format(
                notebooks=list(NOTEBOOKS), here=here
            )
        )
    if set(STRIP_LABELS) != set(NOTEBOOKS):
        raise ValueError("STRIP_LABELS must name every notebook of NOTEBOOKS")
    # At most 8 chips a row, the rows filled evenly, at a notebook's width (about 1,000 px).
    rows = -(-len(NOTEBOOKS) // 8)
    per_row, height, gap, margin, pitch = -(-len(NOTEBOOKS) // rows), 0.42, 0.07, 0.1, 0.52
    width = (9.92 - (per_row - 1) * gap) / per_row
    top_row = 0.30 + (rows - 1) * pitch
    fig, ax = canvas(margin * 2 + per_row * width + (per_row - 1) * gap, top_row + 0.68)
    _strip_heading(fig, ax, here, margin, top_row + 0.48)
    for index, number in enumerate(NOTEBOOKS):
        row, column = divmod(index, per_row)
        x = margin + column * (width + gap) + width / 2
        y = top_row - row * pitch
        kind = STRIP_LABELS[number][1]
        is_here = number == here
        box(
            ax,
            x,
            y,
            width,
            height,
            f"{number} {_chip_label(number)}",
            PALETTE["highlight"] if is_here else PALETTE[kind],
            fontsize=10 if lang == "en" else 9,  # "09 Transformer 块" fits its chip at 9 points
            bold=is_here,
            # A dark outline tells "you are here" apart from the orange of the attention stages.
            edge=EDGE if is_here else None,
            linewidth=3 if is_here else 0.8,
        )
    return fig
