"""Author, run and export the course notebooks.

    python tools/nbtool.py build SRC.py notebooks/NN_topic.ipynb   # percent-format script -> executed notebook
    python tools/nbtool.py run notebooks/NN_topic.ipynb [...]       # re-execute in place (fresh kernel)
    python tools/nbtool.py export notebooks/NN_topic.ipynb SRC.py   # notebook -> percent-format script
    python tools/nbtool.py fold [notebooks/NN_topic.ipynb ...]      # fold the Going-deeper sections
    python tools/nbtool.py fold --check                             # change nothing; exit 1 if unfolded

The committed notebooks are the single source; the percent-format script is a
convenient way to edit one, converted on demand (no paired files): ``export`` and
``build`` read and write it with jupytext, the ecosystem's tool for that format
(``# %%`` starts a code cell, ``# %% [markdown]`` a markdown cell whose lines start
with ``# ``; jupytext comments magics such as ``%pip`` out in the script and back in
the notebook). What nbtool adds to jupytext: stable cell ids (``c000``, ``c001``, ...),
the Colab badge and install placeholders, the folding of every "Going deeper" section
(JupyterLab's collapsed headings and Colab's collapsed sections, from the headings alone:
``tools/course_sections.py``; ``build`` and ``run`` fold too), and a fresh-kernel run under the
reproducibility pins. Execution runs in ``notebooks/``
with the environment's ``python3`` kernel — the same one nbval uses — so the
stored outputs are what ``make test`` will see; it goes through the library's one notebook
runner (``transformer_course.exercises.notebook_runner``), as ``check --run``, ``grade`` and
the Colab stage do. Cell ids are made stable so
re-running a notebook changes only what really changed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
from transformer_course import REPOSITORY  # noqa: E402
from transformer_course.exercises.notebook_runner import run_notebook  # noqa: E402
from transformer_course.i18n import STRICT_ENVIRONMENT  # noqa: E402
from transformer_course.machine import reproducible_cpu_environment  # noqa: E402
from transformer_course.notebook import colab_install_command  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from course_sections import check_folding, fold, split_headings  # noqa: E402

#: The script format, and what it carries beyond sources: no YAML header, cell tags only.
PERCENT = "py:percent"
#: A "Going deeper" heading cell keeps JupyterLab's collapsed flag, so the section opens folded.
KEPT_CELL_METADATA = ("tags", "jp-MarkdownHeadingCollapsed")
SCRIPT_FILTERS = {
    "notebook_metadata_filter": "-all",
    "cell_metadata_filter": ",".join(KEPT_CELL_METADATA) + ",-all",
}
BADGE_PLACEHOLDER = "{{COLAB_BADGE}}"


def colab_badge(notebook_name: str) -> str:
    """The Open-in-Colab link of a notebook, built from the one repository address.

    A text link, not Colab's badge picture: that picture loads from colab.research.google.com,
    so an offline JupyterLab would show a broken image (every picture must load offline).
    """
    path = REPOSITORY.removeprefix("https://github.com/")
    url = f"https://colab.research.google.com/github/{path}/blob/main/notebooks/{notebook_name}"
    return f"**[Open in Colab ↗]({url})**"


INSTALL_PLACEHOLDER = "{{COLAB_INSTALL}}"


def colab_install_block() -> str:
    """The first lines of every setup cell: in Colab only, install the course library."""
    return (
        "# In Colab only: install the course library (Colab's torch, numpy and ipywidgets are kept).\n"
        "import sys\n\n"
        'if "google.colab" in sys.modules:\n'
        f"    %{colab_install_command(REPOSITORY)}"
    )


def parse_percent(text: str) -> list[nbformat.NotebookNode]:
    """The cells of a percent-format script (jupytext reads it; ids are set by normalise)."""
    return jupytext.reads(text, fmt=PERCENT).cells


def to_percent(nb: nbformat.NotebookNode) -> str:
    """A notebook as a percent-format script, without outputs, header or metadata but tags."""
    script = nbformat.from_dict(nb)  # a copy: the caller's notebook keeps its metadata
    script.metadata = {**script.metadata, "jupytext": dict(SCRIPT_FILTERS)}
    return jupytext.writes(script, fmt=PERCENT)


def normalise(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    language = nb.metadata.get("language")  # a translated notebook's (notebooks/zh: "zh-CN")
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    if language:
        nb.metadata["language"] = language
    nb.nbformat, nb.nbformat_minor = 4, 5
    split_headings(nb)  # before numbering: a Going-deeper heading gets a cell of its own
    for index, cell in enumerate(nb.cells):
        cell.id = f"c{index:03d}"
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in KEPT_CELL_METADATA}
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(BADGE_PLACEHOLDER, colab_badge(name))
        else:
            cell.source = cell.source.replace(INSTALL_PLACEHOLDER, colab_install_block())
    fold(nb)
    return nb


def execute(
    nb: nbformat.NotebookNode, timeout: int = 1800, folder: Path = REPO / "notebooks"
) -> nbformat.NotebookNode:
    """Run ``nb`` in place, from cleared outputs, in ``folder`` (where nbval runs it: its own)."""
    # The same pinned CPU kernels and single thread as the test suite (see conftest.py), so
    # the stored outputs are computed exactly as nbval recomputes them on any x86-64 machine;
    # strict i18n: a Chinese notebook never prints English feedback. Set variables win.
    env = {**reproducible_cpu_environment(), STRICT_ENVIRONMENT: "1", **os.environ}
    return run_notebook(nb, timeout=timeout, cwd=folder, env=env)


def run(path: Path) -> float:
    nb = normalise(nbformat.read(path, as_version=4), path.name)
    start = time.perf_counter()
    execute(nb, folder=path.resolve().parent)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def fold_files(paths: list[Path], check: bool = False) -> int:
    """Fold the Going-deeper sections of ``paths`` in place (``check``: only report)."""
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if check:
            stale += [f"{path.name}: {problem}" for problem in check_folding(nb)]
        elif fold(nb):
            nbformat.write(nb, path)
            stale.append(f"{path.name}: folded")
    print("\n".join(stale) or "every Going-deeper section is folded")
    return 1 if (check and stale) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="percent-format script -> executed notebook")
    build.add_argument("source", type=Path)
    build.add_argument("notebook", type=Path)
    build.add_argument("--no-execute", action="store_true")
    runner = sub.add_parser("run", help="re-execute notebooks in place")
    runner.add_argument("notebooks", type=Path, nargs="+")
    export = sub.add_parser("export", help="notebook -> percent-format script")
    export.add_argument("notebook", type=Path)
    export.add_argument("source", type=Path)
    folder = sub.add_parser("fold", help="fold every Going-deeper section (no kernel)")
    folder.add_argument("notebooks", type=Path, nargs="*", help="default: every notebook")
    folder.add_argument("--check", action="store_true", help="change nothing; exit 1 if unfolded")
    args = parser.parse_args(argv)

    if args.command == "build":
        nb = nbformat.v4.new_notebook()
        nb.cells = parse_percent(args.source.read_text(encoding="utf-8"))
        nb = normalise(nb, args.notebook.name)
        start = time.perf_counter()
        if not args.no_execute:
            execute(nb, folder=args.notebook.resolve().parent)
        nbformat.write(nb, args.notebook)
        print(f"{args.notebook}: built in {time.perf_counter() - start:.1f} s")
    elif args.command == "fold":
        return fold_files(
            args.notebooks or sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb")), args.check
        )
    elif args.command == "run":
        for path in args.notebooks:
            print(f"{path}: executed in {run(path):.1f} s")
    else:
        args.source.write_text(
            to_percent(nbformat.read(args.notebook, as_version=4)), encoding="utf-8"
        )
        print(f"wrote {args.source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
