"""Going-deeper sections are folded where learners read (issue 26): JupyterLab's collapsed
headings and Colab's collapsed sections in every stored notebook, written by
``tools/nbtool.py fold`` (and by every ``nbtool build``/``run``). The website folds the same
sections when it is built (tests/test_site.py checks the closed toggles there)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import nbtool  # noqa: E402
from course_sections import JUPYTERLAB_COLLAPSED, check_folding, fold, folded_flags  # noqa: E402

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


def _synthetic() -> nbformat.NotebookNode:
    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_markdown_cell("# 99 · Demo"),
        v4.new_markdown_cell("## 1. The idea"),
        v4.new_code_cell("x = 1"),
        v4.new_markdown_cell("## Going deeper: the AVX2 pins (needs notebook 11)\n\nWhy."),
        v4.new_code_cell("y = 2"),
        v4.new_markdown_cell("### going deeper, again"),  # nested: folded inside the first
        v4.new_markdown_cell("## 2. Exercises"),
        v4.new_markdown_cell("### Going Deeper: a second one"),
    ]
    for index, cell in enumerate(nb.cells):
        cell.id = f"c{index:03d}"
    nb.cells[1].metadata[JUPYTERLAB_COLLAPSED] = True  # a stray fold of the main path
    return nb


def test_fold_writes_jupyterlab_and_colab_metadata():
    nb = _synthetic()
    assert check_folding(nb), "the synthetic notebook starts unfolded"
    assert fold(nb)
    # A heading cell hides the cells after it, not its own text: c003's "Why." moved out.
    assert [c.id for c in nb.cells[3:5]] == ["c003", "c003-body"]
    assert (nb.cells[3].source, nb.cells[4].source) == (
        "## Going deeper: the AVX2 pins (needs notebook 11)",
        "Why.",
    )
    collapsed = [c.id for c in nb.cells if c.metadata.get(JUPYTERLAB_COLLAPSED)]
    assert collapsed == ["c003", "c005", "c007"]
    assert nb.metadata["colab"]["collapsed_sections"] == ["c003", "c005", "c007"]
    assert [c.metadata.get("id") for c in nb.cells if c.id in collapsed] == collapsed
    assert JUPYTERLAB_COLLAPSED not in nb.cells[1].metadata, "a main-path heading is never folded"
    assert check_folding(nb) == []
    assert not fold(nb), "a second fold changes nothing"
    # The sections: 03 to 05 (up to the next "##"), and 07 to the end.
    assert [c.id for c, folded in folded_flags(nb.cells) if folded] == [
        "c003",
        "c003-body",
        "c004",
        "c005",
        "c007",
    ]


def test_check_names_what_is_missing():
    nb = _synthetic()
    fold(nb)
    nb.cells[3].metadata.pop(JUPYTERLAB_COLLAPSED)
    nb.metadata["colab"]["collapsed_sections"] = ["c003"]
    nb.cells[3].source += "\n\nmore text in the heading cell"
    problems = check_folding(nb)
    assert any("c003" in p and "not collapsed in JupyterLab" in p for p in problems)
    assert any("c003" in p and "more than the heading" in p for p in problems)
    assert any("collapsed_sections" in p for p in problems)


def test_a_notebook_without_going_deeper_gets_no_colab_metadata():
    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell("# 99 · Demo")]
    nb.cells[0].id = "c000"
    assert not fold(nb)
    assert "colab" not in nb.metadata and check_folding(nb) == []


def test_nbtool_build_and_fold_command_fold(tmp_path):
    """Editing through the percent script (which keeps only tags) loses no fold."""
    nb = _synthetic()
    script = nbtool.to_percent(nb)
    rebuilt = nbformat.v4.new_notebook()
    rebuilt.cells = nbtool.parse_percent(script)
    rebuilt = nbtool.normalise(rebuilt, "99_demo.ipynb")
    assert check_folding(rebuilt) == []
    path = tmp_path / "99_demo.ipynb"
    nbformat.write(_synthetic(), path)
    assert nbtool.main(["fold", "--check", str(path)]) == 1
    assert nbtool.main(["fold", str(path)]) == 0
    assert nbtool.main(["fold", "--check", str(path)]) == 0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_stored_notebook_is_folded(path):
    problems = check_folding(nbformat.read(path, as_version=4))
    assert not problems, "run `python tools/nbtool.py fold`:\n" + "\n".join(problems)
