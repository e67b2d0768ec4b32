"""The course's architecture diagrams, drawn from code in the course's own numbers.

Introduced in 00_setup (the course map) and shown at the top of every notebook (the "you are
here" roadmap strip); ``make images`` (``tools/images.py``) writes them all into ``images/``
and each notebook's roadmap cell.

DESIGN
------
*Tool.* Plain matplotlib patches (:mod:`.base`): matplotlib is already a dependency, draws
the same bytes every run once the SVG hash salt, the metadata and the fonts are fixed (DejaVu,
shipped inside matplotlib), and renders LaTeX-like math for the attention formula. A diagram
library from the registry (graphviz, schemdraw, diagrams) would add a system binary or a
dependency, lay boxes out by itself (so "the shape on every arrow" and side-by-side
comparisons are hard to keep readable) and its output would differ between its releases.

*Languages.* Every word a diagram draws comes through the library catalog (``_``), so a
diagram drawn while the language is Chinese (``setup_notebook(lang="zh")``,
``i18n.in_language("zh")``) is Chinese; :func:`.base.localised` puts the package's CJK subset
font (``fonts/``, made by ``tools/cjk_font.py``) behind DejaVu for it. Shapes, code and token
strings stay as they are. ``make images`` writes the Chinese diagrams into ``images/zh/``
(README.zh-CN.md's course map); ``tools/i18n.py build`` draws the Chinese roadmap cells.

*Numbers.* Every shape comes from :data:`COURSE` (B=4, T=16, C=64, H=4, D=16, 8 blocks,
V = 3,771 compact or 100,070 full), the numbers the notebooks print; the attention diagrams of
04–08 from :data:`ATTENTION_EXAMPLE` (the same but T = 12, so T ≠ D).

*How notebooks show pictures (the choice).* Every picture a notebook shows is a stored
*cell output*: the roadmap cell right after each notebook's setup cell runs
:func:`show_roadmap` (the notebook's roadmap strip, then its topic's diagrams), and the
prose that explains a diagram calls :func:`show`. ``make images`` (``tools/images.py``) writes
that cell *with its output* (the PNG bytes of ``images/``, exactly what a fresh kernel prints),
so it needs no kernel run. A stored output shows in an offline JupyterLab, in Colab (a
notebook opened alone from GitHub shows its stored outputs; re-run, the cell draws again with
the pip-installed library, after the setup cell has installed it), on GitHub and on the
website. Markdown holds no picture that loads from elsewhere (the Colab link is text), and the
browser test fails on any request that leaves the machine. Why not the others:

- a relative ``../images/…`` path does not resolve in Colab (the notebook is alone there) and
  leaves JupyterLab's root when ``make lab`` serves ``notebooks/``;
- an absolute ``raw.githubusercontent.com`` URL is a broken image offline, and on a branch
  shows ``main``'s picture;
- a markdown *attachment* is not shown by Colab (googlecolab/colabtools#3836), nor by MyST-NB
  (executablebooks/MyST-NB#492), and the percent-script round trip of ``tools/nbtool.py``
  drops it.

The price: each notebook stores its roadmap (about 25 kB) and topic diagram as PNG, and a
changed diagram means ``make images`` rewrites the outputs (``tests/test_diagrams.py`` fails
until it has).
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from .. import _checks as check
from .attention import attention_formula, multi_head_attention_steps
from .base import render
from .blocks import block_norms, encoder_decoder, llama_vs_classic
from .flash_tiles import flash_tile_grid
from .gpt import gpt_overview, training_loop
from .induction import k_composition
from .numbers import ATTENTION_EXAMPLE, COURSE, NOTEBOOKS, CourseNumbers
from .query_row import query_row_steps
from .roadmap import roadmap_strip

__all__ = [
    "ATTENTION_EXAMPLE",
    "COURSE",
    "NOTEBOOKS",
    "CourseNumbers",
    "all_diagrams",
    "TOPIC_DIAGRAMS",
    "gpt_overview",
    "roadmap",
    "show",
    "show_flash_tiles",
    "show_query_row",
    "show_roadmap",
    "training_loop",
]


def roadmap(notebook: str) -> Figure:
    """The roadmap strip at the top of every notebook: every notebook of the course, ``notebook``
    highlighted (00 highlights none), in the learner's language (``setup_notebook(lang=...)``). Compact and
    readable at a notebook's width; :func:`gpt_overview` is the full course map, drawn in
    00_setup."""
    return roadmap_strip(here=notebook)


def show(name: str):
    """Diagram ``name`` (a key of :func:`all_diagrams`) as an inline PNG for a notebook cell
    (introduced in 00_setup); a cell output renders offline, in Colab and on GitHub."""
    from IPython.display import Image  # IPython only where a notebook shows a picture

    drawers = all_diagrams()
    check.choice("name", name, sorted(drawers))
    return Image(data=render(drawers[name](), "png"))


#: The diagrams each notebook's topic needs, shown under its roadmap by :func:`show_roadmap`
#: (04 and 00 draw theirs next to the prose that explains them).
TOPIC_DIAGRAMS: dict[str, tuple[tuple[str, str], ...]] = {
    "05": (("attention_formula", "the attention formula, every symbol with its shape"),),
    "06": (("attention_formula", "the attention formula: M is this notebook's mask"),),
    "07": (
        (
            "attention_formula",
            "the attention formula: softmax turns each row of scores into weights",
        ),
    ),
    "08": (
        (
            "multi_head_attention",
            "multi-head attention step by step: this notebook does @V, concatenate, W_O",
        ),
    ),
    "09": (("block_pre_post_norm", "one Transformer block, pre-norm beside post-norm"),),
    "13": (("llama_vs_classic", "the classic block beside the LLaMA-style block"),),
    "14": (("encoder_decoder", "the encoder-decoder with cross-attention"),),
}


def show_roadmap(notebook: str) -> None:
    """Show ``notebook``'s roadmap strip, then its topic's diagrams (:data:`TOPIC_DIAGRAMS`), as
    cell outputs: the roadmap cell of every notebook (written by ``make images``). The strip and
    the diagrams are drawn in the learner's language (``setup_notebook(lang="zh")`` in
    notebooks/zh/)."""
    from IPython.display import display

    check.choice("notebook", notebook, NOTEBOOKS)
    topic = [name for name, _caption in TOPIC_DIAGRAMS.get(notebook, ())]
    display(*(show(name) for name in [f"roadmap_{notebook}", *topic]))


def show_query_row(stage: str):
    """The query-row schematic up to ``stage`` ("scores" in 04, "scale" 05, "mask" 06, "softmax"
    07, "weighted_sum" 08) as an inline PNG: one query of the course's batch, step by step, with
    the numbers the library computes (introduced in 04_qkv)."""
    from IPython.display import Image  # IPython only where a notebook shows a picture

    return Image(data=render(query_row_steps(stage), "png"))


def show_flash_tiles(T: int | None = None, block_q: int = 4, block_k: int = 4):
    """The tile grid of a causal FlashAttention pass (:func:`.flash_tiles.flash_tile_grid`) as an
    inline PNG (introduced in 15_flash_attention)."""
    from IPython.display import Image  # IPython only where a notebook shows a picture

    return Image(data=render(flash_tile_grid(T, block_q, block_k), "png"))


def all_diagrams() -> dict[str, Callable[[], Figure]]:
    """Every diagram ``make images`` writes: file stem -> function that draws it."""
    diagrams: dict[str, Callable[[], Figure]] = {
        "gpt_overview": gpt_overview,
        "block_pre_post_norm": block_norms,
        "multi_head_attention": multi_head_attention_steps,
        "attention_formula": attention_formula,
        "encoder_decoder": encoder_decoder,
        "llama_vs_classic": llama_vs_classic,
        "training_loop": training_loop,
        "induction_k_composition": k_composition,
    }
    for number in NOTEBOOKS:
        diagrams[f"roadmap_{number}"] = lambda number=number: roadmap(number)
    return diagrams
