"""Draw every course diagram into images/; refresh the roadmap cell, the Colab link and the
folding of every notebook.

    python tools/images.py                 # what `make images` runs: every notebook
    python tools/images.py NB [NB ...]     # only these notebooks (images/ is always redrawn)
    python tools/images.py --check         # change nothing; exit 1 and list what is stale

Idempotent: a second run changes no byte. Diagrams come from ``transformer_course.diagrams``
(SVG + PNG for the six diagrams, PNG for the roadmap strips; byte-stable for one matplotlib).
A picture counts as changed only when what it shows changed (``diagrams.base.same_picture``
compares the meaning ``render`` writes into each file), so another matplotlib release, which
rasterises the same figure with other bytes, neither rewrites images/ nor fails ``--check``. Each notebook gets
one *code* cell right after its setup cell (the first code cell, which installs the library in
Colab) that shows its roadmap strip and its topic's diagram (``diagrams.TOPIC_DIAGRAMS``) with
``diagrams.show_roadmap``: the picture is a stored cell output, so it shows in an offline JupyterLab,
in Colab, on GitHub and on the website (why: the DESIGN note of ``transformer_course/diagrams.py``).
The cell's output is written here exactly as a fresh kernel run prints it (tests/test_diagrams.py
runs one to check), so no notebook needs a kernel run afterwards; the execution counts after it
are renumbered as a fresh run numbers them. The cell is found by its first line, :data:`MARKER`;
an old markdown roadmap cell (:data:`OLD_MARKER`) is removed. The first cell's Colab badge
becomes ``tools/nbtool.py``'s text link (an image from colab.research.google.com does not load
offline). Every "Going deeper" section is folded (``tools/nbtool.py fold``, the same function).
Cells are numbered c000, c001, … as ``tools/nbtool.py`` numbers them. Markdown images
that load from another machine are listed (exit 1): they need a hand-made fix.
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
sys.path.insert(0, str(REPO / "tools"))
from course_sections import fold  # noqa: E402
from nbtool import colab_badge  # noqa: E402

from transformer_course.diagrams import NOTEBOOKS, TOPIC_DIAGRAMS, all_diagrams  # noqa: E402
from transformer_course.diagrams.base import render, same_picture  # noqa: E402
from transformer_course.i18n import in_language  # noqa: E402

IMAGES = REPO / "images"
NOTEBOOK_DIR = REPO / "notebooks"
MARKER = "# roadmap: drawn by tools/images.py (make images); edits here are overwritten"
OLD_MARKER = "<!-- roadmap: drawn by tools/images.py"
#: The old badge: an image from colab.research.google.com (any link target).
OLD_BADGE = re.compile(
    r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)"
)
#: Images in markdown that the browser would fetch from another machine.
REMOTE_IMAGE = re.compile(r"""<img[^>]*\bsrc=["']https?://[^"']*|!\[[^\]]*\]\(https?://[^)\s]*""")
FORMATS = ("svg", "png")
#: The languages besides English whose diagrams images/<short>/ holds (PNG only: what a page shows).
LANGUAGE_FOLDERS = ("zh",)
#: Roadmaps are only ever shown as PNG (in notebooks); an SVG of each would only add bytes.
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
    """The source of notebook ``number``'s roadmap cell."""
    if number == "00":
        lines = [
            f"# The course in {len(NOTEBOOKS)} notebooks; further down, this notebook draws the "
            "whole model."
        ]
    else:
        lines = [
            f"# You are here: {number} · {NOTEBOOKS[number]}, among the course's "
            f"{len(NOTEBOOKS)} notebooks."
        ]
    for _name, caption in TOPIC_DIAGRAMS.get(number, ()):
        lines.append(f"# Below it, this notebook's diagram: {caption}.")
    return "\n".join(
        [
            MARKER,
            *lines,
            "from transformer_course.diagrams import show_roadmap",
            "",
            f'show_roadmap("{number}")',
        ]
    )


def roadmap_outputs(number: str, drawn: dict[str, bytes]) -> list:
    """What a fresh run of the roadmap cell prints: one PNG per diagram, as IPython sends it."""
    names = [f"roadmap_{number}", *(stem for stem, _ in TOPIC_DIAGRAMS.get(number, ()))]
    return [
        nbformat.v4.new_output(
            "display_data",
            data={
                "image/png": base64.b64encode(drawn[f"{name}.png"]).decode("ascii"),
                "text/plain": "<IPython.core.display.Image object>",
            },
        )
        for name in names
    ]


def same_outputs(first: list, second: list) -> bool:
    """True when two cells' outputs show the same thing: PNG pictures compared by meaning
    (``same_picture``: another matplotlib release draws the same diagram with other bytes),
    everything else exactly."""
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        a_png, b_png = a.get("data", {}).get("image/png"), b.get("data", {}).get("image/png")
        if (a_png is None) != (b_png is None):
            return False
        if a_png is not None and not same_picture(base64.b64decode(a_png), base64.b64decode(b_png)):
            return False
        if _without_png(a) != _without_png(b):
            return False
    return True


def _without_png(output) -> dict:
    data = {k: v for k, v in output.get("data", {}).items() if k != "image/png"}
    return {**output, "data": data} if "data" in output else dict(output)


def is_roadmap(cell) -> bool:
    return (cell.cell_type == "code" and cell.source.startswith(MARKER)) or (
        cell.cell_type == "markdown" and cell.source.startswith(OLD_MARKER)
    )


def refresh_roadmap(nb, number: str, drawn: dict[str, bytes] | None = None) -> bool:
    """Put the current roadmap cell right after the setup cell; True when ``nb`` changed."""
    drawn = drawn if drawn is not None else diagram_files()
    source, outputs = roadmap_source(number), roadmap_outputs(number, drawn)
    others = [c for c in nb.cells if not is_roadmap(c)]
    setup = next((i for i, c in enumerate(others) if c.cell_type == "code"), len(others) - 1)
    found = [i for i, c in enumerate(nb.cells) if is_roadmap(c)]
    if found == [setup + 1]:
        cell = nb.cells[setup + 1]
        if (
            cell.cell_type == "code"
            and cell.source == source
            and same_outputs(cell.outputs, outputs)
        ):
            return False
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = outputs
    nb.cells = [*others[: setup + 1], cell, *others[setup + 1 :]]
    number_cells(nb)
    number_executions(nb)
    return True


def number_executions(nb) -> bool:
    """Execution counts 1, 2, … in cell order, as a fresh run numbers them; True when one
    changed. A notebook with a cell never run keeps its counts (nbval and the anatomy test
    report it)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    if any(c.execution_count is None for c in code if not c.source.startswith(MARKER)):
        return False
    changed = False
    for count, cell in enumerate(code, start=1):
        if cell.execution_count != count:
            cell.execution_count, changed = count, True
        for output in cell.outputs:
            if output.output_type == "execute_result" and output.execution_count != count:
                output.execution_count, changed = count, True
    return changed


def refresh_badge(nb, name: str) -> bool:
    """The first cell's Colab link as ``tools/nbtool.py`` writes it; True when it changed."""
    first = nb.cells[0]
    new = OLD_BADGE.sub(lambda _match: colab_badge(name), first.source)
    changed, first.source = new != first.source, new
    return changed


def remote_images(nb) -> list[str]:
    """Markdown images that a browser would load from another machine: ``cell id: tag``."""
    return [
        f"{cell.get('id')}: {match[:100]}"
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for match in REMOTE_IMAGE.findall(cell.source)
    ]


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
    """Every file images/ must hold, name -> bytes: the English pictures, whatever language the
    environment chooses, and under images/zh/ the Chinese PNG of each diagram (README.zh-CN.md
    and the Chinese site show its course map; ``tools/i18n.py build`` draws the pictures of
    notebooks/zh/ into their cells)."""
    files = {}
    with in_language("en"):
        for stem, draw in all_diagrams().items():
            fig = draw()
            for fmt in ROADMAP_FORMATS if stem.startswith("roadmap_") else FORMATS:
                files[f"{stem}.{fmt}"] = render(fig, fmt)
    for short in LANGUAGE_FOLDERS:
        with in_language(short):
            for stem, draw in all_diagrams().items():
                if not stem.startswith("roadmap_"):
                    files[f"{short}/{stem}.png"] = render(draw(), "png")
    return files


def refresh_notebook(path: Path, drawn: dict[str, bytes], check: bool) -> list[str]:
    """Refresh one notebook (``check``: only report); returns what was stale, and its remote images."""
    nb = nbformat.read(path, as_version=4)
    changed = fold(nb)  # first: a Going-deeper heading cell may split in two
    changed |= refresh_roadmap(nb, notebook_number(path), drawn)
    changed |= refresh_badge(nb, path.name) | number_cells(nb)
    changed |= fold(nb)  # again: Colab's collapsed sections name the cells' final ids
    stale = [f"notebooks/{path.name} (roadmap cell, Colab link or folding)"] if changed else []
    if changed and not check:
        nbformat.write(nb, path)
    return stale + [f"notebooks/{path.name}: remote image {r}" for r in remote_images(nb)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; fail when something is stale"
    )
    args = parser.parse_args(argv)
    stale = []
    IMAGES.mkdir(exist_ok=True)
    drawn = diagram_files()
    for name, data in drawn.items():
        path = IMAGES / name
        if not path.exists() or path.read_bytes() != data:
            stale.append(f"images/{name}")
            if not args.check:
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(data)
    for path in args.notebooks or sorted(NOTEBOOK_DIR.glob("[0-9][0-9]*.ipynb")):
        stale += refresh_notebook(path, drawn, args.check)
    remote = [s for s in stale if ": remote image " in s]
    verb = "stale" if args.check else "updated"
    print(f"{len(stale) - len(remote)} {verb}" + "".join(f"\n  {s}" for s in stale))
    return 1 if ((args.check and stale) or remote) else 0


if __name__ == "__main__":
    raise SystemExit(main())
