"""Draw every course diagram into images/ and refresh the roadmap cell of every notebook.

    python tools/images.py            # what `make images` runs
    python tools/images.py --check    # change nothing; exit 1 and list what is missing or stale

Idempotent: a second run changes no byte. Diagrams come from ``transformer_course.diagrams``
(SVG + PNG for the six diagrams, PNG for the roadmaps; byte-stable). Each notebook gets one
markdown cell right after its header that shows ``images/roadmap_NN.png`` (and its topic's
diagram, :data:`TOPIC_DIAGRAMS`) by absolute URL (why: see the DESIGN note of
``transformer_course/diagrams.py``). The cell is found by its first line, the marker
:data:`MARKER` (a tag would not survive ``tools/nbtool.py``'s percent-script round trip), updated
in place when it differs, inserted when missing (the cells are then numbered c000, c001, … as
``tools/nbtool.py`` numbers them); no other cell or output is touched, and no kernel is started.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
from transformer_course.diagrams import NOTEBOOKS, all_diagrams, image_url  # noqa: E402
from transformer_course.diagrams.base import render  # noqa: E402

IMAGES = REPO / "images"
NOTEBOOK_DIR = REPO / "notebooks"
MARKER = "<!-- roadmap: drawn by tools/images.py (make images); edits here are overwritten -->"
ROADMAP_WIDTH = 640  # pixels shown; 00 also draws the map full size in a cell output
TOPIC_WIDTH = 900
#: The diagrams each notebook's topic needs, shown under its roadmap (04 and 00 draw theirs in
#: cell outputs, next to the prose that explains them).
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
FORMATS = ("svg", "png")
#: Roadmaps are only ever shown as PNG (in notebooks); an SVG of each would add ~3 MB to the repository.
ROADMAP_FORMATS = ("png",)


def notebook_number(path: Path) -> str:
    """``notebooks/04_qkv.ipynb`` -> ``"04"``; ``02b_word2vec`` -> ``"02b"``."""
    number = path.stem.split("_", 1)[0]
    if number not in NOTEBOOKS:
        raise ValueError(
            f"{path.name}: notebook number {number!r} is not in diagrams.NOTEBOOKS; add it there"
        )
    return number


def roadmap_source(number: str) -> str:
    """The markdown of notebook ``number``'s roadmap cell."""
    if number == "00":
        lead = (
            "**The course on one page.** Every box is a step of the tiny GPT this course builds; its "
            "badge names the notebook that builds it, and the blue labels are the tensor shapes."
        )
        alt = "Course map: the tiny GPT end to end, each stage labelled with its notebook"
    else:
        lead = (
            f"**You are here:** the stages of notebook {number} are highlighted in orange on the "
            "course map ([00 · Setup](00_setup.ipynb) shows the whole map)."
        )
        alt = f"Course map: you are here, {number} · {NOTEBOOKS[number]}"
    # An <img> rather than ![](): the map is 1250 px wide, and a width keeps it to a glance
    # (JupyterLab, Colab and GitHub's preview all keep the attribute).
    src = image_url(f"roadmap_{number}.png")
    parts = [f'{MARKER}\n{lead}\n\n<img src="{src}" alt="{alt}" width="{ROADMAP_WIDTH}">']
    for stem, caption in TOPIC_DIAGRAMS.get(number, ()):
        topic = image_url(f"{stem}.png")
        parts.append(
            f'**This notebook\'s diagram:** {caption}.\n\n<img src="{topic}" alt="{caption}" width="{TOPIC_WIDTH}">'
        )
    return "\n\n".join(parts)


def is_roadmap(cell) -> bool:
    return cell.cell_type == "markdown" and cell.source.startswith(MARKER)


def refresh_roadmap(nb, number: str) -> bool:
    """Put the current roadmap cell right after the header; True when ``nb`` changed."""
    source = roadmap_source(number)
    found = [i for i, cell in enumerate(nb.cells) if is_roadmap(cell)]
    if found == [1] and nb.cells[1].source == source:
        return False
    for i in reversed(found):
        del nb.cells[i]
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(source))
    number_cells(nb)
    return True


def number_cells(nb) -> bool:
    """Give every cell the id ``tools/nbtool.py`` gives it (c000, c001, …); True when one changed.

    The same rule in both tools keeps a notebook's ids unchanged by a build after `make images`.
    """
    changed = False
    for index, cell in enumerate(nb.cells):
        if cell.get("id") != f"c{index:03d}":
            cell.id, changed = f"c{index:03d}", True
    return changed


def diagram_files() -> dict[str, bytes]:
    """Every file images/ must hold, name -> bytes."""
    files = {}
    for stem, draw in all_diagrams().items():
        fig = draw()
        for fmt in ROADMAP_FORMATS if stem.startswith("roadmap_") else FORMATS:
            files[f"{stem}.{fmt}"] = render(fig, fmt)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--check", action="store_true", help="change nothing; fail when something is stale"
    )
    args = parser.parse_args(argv)
    stale = []
    IMAGES.mkdir(exist_ok=True)
    for name, data in diagram_files().items():
        path = IMAGES / name
        if not path.exists() or path.read_bytes() != data:
            stale.append(f"images/{name}")
            if not args.check:
                path.write_bytes(data)
    for path in sorted(NOTEBOOK_DIR.glob("[0-9][0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if refresh_roadmap(nb, notebook_number(path)) | number_cells(nb):
            stale.append(f"notebooks/{path.name} (roadmap cell)")
            if not args.check:
                nbformat.write(nb, path)
    verb = "stale" if args.check else "updated"
    print(f"{len(stale)} {verb}" + "".join(f"\n  {s}" for s in stale))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
