"""Every notebook follows the anatomy of DESIGN.md, so later notebooks cannot drift from it.

1. a title ``NN · Topic (中文术语)``, the source step it mirrors, 2–4 learning goals and an
   Open-in-Colab link built from the one repository address;
2. one setup cell (the Colab install block, then ``setup_notebook``), and only one, right after
   the header;
3. right after the setup cell, the "you are here" roadmap cell that ``make images``
   (tools/images.py) writes, current with the code (tests/test_diagrams.py checks its output);
4. exercises checked by ``check_*`` helpers; a summary linking the next notebook;
5. outputs stored from a clean top-to-bottom run, with nothing machine-specific in them;
   every ``NBVAL_IGNORE_OUTPUT`` says why on the next line.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))
sys.path.insert(0, str(REPO / "tools"))
from nbtool import colab_badge, colab_install_block  # noqa: E402

from images import is_roadmap, notebook_number, roadmap_source  # noqa: E402

TITLE = re.compile(r"^# (?P<number>\d\d[a-z]?) · .+\((?=[^)]*[\u4e00-\u9fff])[^)]+\)\s*$", re.M)
NEXT_LINK = re.compile(r"\[[^\]]+\]\((?P<target>\d\d[a-z]?_[a-z0-9_]+\.ipynb)\)")


def _load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no NN_*.ipynb"
    assert NOTEBOOKS[0].name == "00_setup.ipynb"


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request) -> tuple[Path, nbformat.NotebookNode]:
    return request.param, _load(request.param)


def test_header(notebook):
    path, nb = notebook
    first = nb.cells[0]
    assert first.cell_type == "markdown", "the first cell must be the markdown header"
    title = TITLE.search(first.source)
    assert title, "title must read '# NN · Topic (中文术语)'"
    assert path.name.startswith(title["number"] + "_"), "title number must match the file name"
    assert re.search(r"\*\*Mirrors:\*\*", first.source), (
        "say which source step the notebook mirrors"
    )
    goals = re.search(r"\*\*Learning goals\*\*\n((?:- .+\n?)+)", first.source)
    assert goals, "list the learning goals under **Learning goals**"
    assert 2 <= len(goals.group(1).strip().splitlines()) <= 4, "2–4 learning goals"
    assert colab_badge(path.name) in first.source, (
        "the Colab link must be built by tools/nbtool.py: run `make images`"
    )


def test_setup_then_roadmap_follow_the_header(notebook):
    path, nb = notebook
    assert nb.cells[1].cell_type == "code", "the setup cell comes right after the header"
    found = [i for i, cell in enumerate(nb.cells) if is_roadmap(cell)]
    assert found == [2], "one roadmap cell, right after the setup cell: run `make images`"
    assert nb.cells[2].source == roadmap_source(notebook_number(path)), (
        "stale roadmap cell: run `make images`"
    )


def test_one_setup_cell(notebook):
    _, nb = notebook
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source.startswith(colab_install_block()), (
        "the setup cell starts with the Colab install block"
    )
    assert "setup_notebook(" in code[0].source
    assert sum("setup_notebook(" in c.source for c in code) == 1, "exactly one setup cell"
    assert all("google.colab" not in c.source for c in code[1:]), (
        "only the setup cell knows about Colab"
    )


def test_exercises_and_summary(notebook):
    path, nb = notebook
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    exercise_index = next(
        (
            i
            for i, c in enumerate(nb.cells)
            if c.cell_type == "markdown" and c.source.startswith("## Exercises")
        ),
        None,
    )
    assert exercise_index is not None, "an '## Exercises' section"
    checks = [
        c
        for c in nb.cells[exercise_index:]
        if c.cell_type == "code" and re.search(r"\bcheck_\w+\(", c.source)
    ]
    assert checks, "exercises are checked by check_* helpers"
    assert headings[-1].startswith("## Summary"), "the last cell is the summary"
    later = [p.name for p in NOTEBOOKS if p.name > path.name]
    if later:
        link = NEXT_LINK.search(headings[-1])
        assert link and link["target"] == later[0], (
            f"the summary links the next notebook, {later[0]}"
        )


def test_no_notebook_imports_another(notebook):
    _, nb = notebook
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not re.search(r"%run|import_ipynb|\.ipynb", cell.source), (
                "notebooks never import each other"
            )


def test_outputs_are_clean_and_in_order(notebook):
    _, nb = notebook
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), (
        "run top to bottom in a fresh kernel"
    )
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", f"stored error in:\n{cell.source[:200]}"
            text = "".join(output.get("text", "")) + "".join(
                output.get("data", {}).get("text/plain", "")
            )
            assert not re.search(r" at 0x[0-9a-f]+", text), "a memory address in an output"
            assert (
                "cuda:" not in text
                and "/home/" not in text
                and "/work/" not in text
                and "/root/" not in text
            ), f"a machine-specific string in an output of:\n{cell.source[:200]}"
            assert output.get("name") != "stderr", (
                f"stderr output (warnings, progress bars) in:\n{cell.source[:200]}"
            )


def test_ignored_outputs_say_why(notebook):
    _, nb = notebook
    for cell in nb.cells:
        lines = [line.strip() for line in cell.source.splitlines()]
        for i, line in enumerate(lines):
            if re.fullmatch(r"#\s*NBVAL_(IGNORE_OUTPUT|SKIP)", line):
                assert i + 1 < len(lines) and lines[i + 1].startswith("# Why:"), (
                    "follow the marker with '# Why: …'"
                )


def test_no_cell_ends_with_a_bare_plot_call(notebook):
    """A cell ending with ``viz.f(...)`` shows its figure twice (execute result + inline flush)."""
    import ast

    _, nb = notebook
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if (
            tree.body
            and isinstance(tree.body[-1], ast.Expr)
            and isinstance(tree.body[-1].value, ast.Call)
        ):
            func = tree.body[-1].value.func
            name = ast.unparse(func)
            assert not name.startswith(("viz.", "plt.", "sns.")), (
                f"assign the figure: fig = {name}(...)"
            )


def test_no_accidental_markdown_lists(notebook):
    """A wrapped sentence whose next line starts with "1. " or "- " turns into a list in Markdown
    (06 once rendered "sums to / 1. Row 0 …" as a numbered item). Lists must follow a blank line,
    a line ending in ':', a bold heading or another item."""
    _, nb = notebook
    item = re.compile(r"^\s*(\d+\.|[-+*])\s")
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        in_list, before = False, ""
        for line in cell.source.splitlines():
            if not line.strip():
                in_list = False
            elif item.match(line):
                opens_list = (
                    not before.strip()
                    or before.rstrip().endswith(":")
                    or re.fullmatch(r"\*\*[^*]+\*\*", before.strip())
                )
                quoted_or_table = before.lstrip().startswith((">", "|", "$$"))
                assert in_list or opens_list or quoted_or_table, (
                    f"this line becomes a list item; reflow the paragraph: {line[:60]!r}"
                )
                in_list = True
            before = line
