"""The course's architecture diagrams, drawn from code in the course's own numbers.

Introduced in 00_setup (the course map) and shown at the top of every notebook (the "you are
here" roadmap); ``make images`` (``tools/images.py``) writes them all into ``images/``.

DESIGN
------
*Tool.* Plain matplotlib patches (``diagrams_base``): matplotlib is already a dependency, draws
the same bytes every run once the SVG hash salt, the metadata and the fonts are fixed (DejaVu,
shipped inside matplotlib), and renders LaTeX-like math for the attention formula. A diagram
library from the registry (graphviz, schemdraw, diagrams) would add a system binary or a
dependency, lay boxes out by itself (so "the shape on every arrow" and side-by-side
comparisons are hard to keep readable) and its output would differ between its releases.

*Numbers.* Every shape comes from :data:`COURSE` (B=4, T=16, C=64, H=4, D=16, 8 blocks,
V = 3,771 compact or 100,070 full), the numbers the notebooks print.

*How notebooks show the roadmap.* A markdown cell right after the header holds
``<img src="https://raw.githubusercontent.com/<owner>/<repo>/main/images/roadmap_NN.png" width="640">``,
an absolute URL built from the one ``REPOSITORY`` constant (:func:`image_url`); ``tools/images.py``
writes it. Why not the others:

- a relative ``images/…`` path does not load in Colab (a notebook opened from GitHub is alone);
- a markdown *attachment* has long not been shown by GitHub's notebook preview
  (jupyter/notebook#4853), and ``tools/nbtool.py``'s percent-script round trip, which authors
  edit with, drops it;
- a code-cell *output* needs a kernel run of every notebook to refresh, and shifts the
  execution counts that strict nbval and the anatomy test check.

The URL survives every editing route, needs no kernel, renders in JupyterLab, Colab and GitHub
(PNG: SVG from raw.githubusercontent.com has not always rendered in GitHub's notebook preview),
and the browser test answers it from the local ``images/`` folder. Offline, JupyterLab shows the
alt text, which names the notebook's stage. The price: a branch shows ``main``'s picture until
it is merged. A notebook's *topic* diagrams are cell outputs of :func:`show` instead (drawn by
the kernel the notebook runs anyway), so they also render offline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from matplotlib.figure import Figure

from . import REPOSITORY


@dataclass(frozen=True)
class CourseNumbers:
    """The sizes every diagram writes on its arrows (the course's model, notebooks 02–12)."""

    B: int = 4
    T: int = 16
    C: int = 64
    H: int = 4
    D: int = 16
    d_ff: int = 256
    n_layers: int = 8
    V_compact: int = 3_771
    V_full: int = 100_070

    def shape(self, *dims: object) -> str:
        """``shape('B', 'T', 'C')`` -> ``'(4, 16, 64)'``; ints and other strings pass through."""
        return (
            "("
            + ", ".join(
                f"{getattr(self, d):,}" if isinstance(d, str) and hasattr(self, d) else str(d)
                for d in dims
            )
            + ")"
        )


COURSE = CourseNumbers()

#: Every notebook and its short name, in course order (the roadmap's banner uses them).
NOTEBOOKS: dict[str, str] = {
    "00": "Setup",
    "01": "Tokenization",
    "02": "Embeddings",
    "02b": "word2vec",
    "03": "Positional encoding",
    "04": "Queries, keys and values",
    "05": "Scaled scores",
    "06": "The causal mask",
    "07": "Softmax",
    "08": "Weighted sum of V, output projection",
    "09": "The Transformer block",
    "10": "Logits and loss",
    "11": "Training",
    "12": "Generation",
    "13": "Modern blocks",
    "14": "Encoder-decoder",
}


def image_url(name: str) -> str:
    """The absolute URL of ``images/<name>`` on the course's main branch (renders in Colab too)."""
    if not name or "/" in name:
        raise ValueError(f"name must be a file name inside images/, got {name!r}")
    path = REPOSITORY.removeprefix("https://github.com/")
    return f"https://raw.githubusercontent.com/{path}/main/images/{name}"


def gpt_overview(here: str | None = None, numbers: CourseNumbers = COURSE) -> Figure:
    """(a) The decoder-only GPT end to end, the shape on every arrow, each stage tagged with the
    notebook that builds it; ``here`` ("04") highlights one notebook's stages (00_setup)."""
    from .diagrams_gpt import gpt_overview as draw

    return draw(here, numbers)


def roadmap(notebook: str) -> Figure:
    """The course map with ``notebook``'s stages highlighted (00 shows the whole course)."""
    return gpt_overview(here=notebook)


def show(name: str):
    """Diagram ``name`` (a key of :func:`all_diagrams`) as an inline PNG for a notebook cell
    (introduced in 04_qkv); a cell output renders offline, in Colab and on GitHub."""
    from IPython.display import Image

    from .diagrams_base import render

    drawers = all_diagrams()
    if name not in drawers:
        raise ValueError(f"name must be one of {sorted(drawers)}, got {name!r}")
    return Image(data=render(drawers[name](), "png"))


def show_query_row(stage: str):
    """The query-row schematic up to ``stage`` ("scores" in 04, "scale" 05, "mask" 06, "softmax"
    07, "weighted_sum" 08) as an inline PNG: one query of the course's batch, step by step, with
    the numbers the library computes (introduced in 04_qkv)."""
    from IPython.display import Image

    from .diagrams_attention import query_row_steps
    from .diagrams_base import render

    return Image(data=render(query_row_steps(stage), "png"))


def all_diagrams() -> dict[str, Callable[[], Figure]]:
    """Every diagram ``make images`` writes: file stem -> function that draws it."""
    from .diagrams_attention import attention_formula, multi_head_attention_steps
    from .diagrams_blocks import block_norms, encoder_decoder, llama_vs_classic

    diagrams: dict[str, Callable[[], Figure]] = {
        "gpt_overview": gpt_overview,
        "block_pre_post_norm": block_norms,
        "multi_head_attention": multi_head_attention_steps,
        "attention_formula": attention_formula,
        "encoder_decoder": encoder_decoder,
        "llama_vs_classic": llama_vs_classic,
    }
    for number in NOTEBOOKS:
        diagrams[f"roadmap_{number}"] = lambda number=number: roadmap(number)
    return diagrams
