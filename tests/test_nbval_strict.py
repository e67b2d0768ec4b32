"""nbval is strict here: a stored output edited by hand makes exactly that cell fail.

The test copies ``notebooks/00_setup.ipynb`` into a temporary folder, changes one printed
line of one stored output, and runs nbval on the copy in a subprocess with the options the
suite uses (``--nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg``,
never ``--nbval-lax``). The edited cell must fail with a diff that shows the edit, and every
other cell must pass, so the failure comes from the edit and not from the copy.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "00_setup.ipynb"
EDIT = " (edited by hand)"


def _pick_cell(nb: nbformat.NotebookNode) -> int:
    """The first compared code cell that prints something."""
    for index, cell in enumerate(nb.cells):
        if (
            cell.cell_type != "code"
            or "NBVAL_IGNORE_OUTPUT" in cell.source
            or "NBVAL_SKIP" in cell.source
        ):
            continue
        if any(
            o.output_type == "stream" and o.name == "stdout" and o.text.strip()
            for o in cell.outputs
        ):
            return index
    raise AssertionError(f"{SOURCE.name} has no compared cell that prints")


def _run_nbval(folder: Path, notebook: Path) -> subprocess.CompletedProcess:
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the project's addopts
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-rA",
        "-q",
        "--rootdir",
        str(folder),
        "-c",
        str(folder / "pytest.ini"),
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        str(REPO / "tests" / "nbval_sanitize.cfg"),
        str(notebook),
    ]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not SOURCE.exists(), reason="notebooks/00_setup.ipynb is missing")
def test_an_edited_stored_output_fails_nbval(tmp_path):
    nb = nbformat.read(SOURCE, as_version=4)
    index = _pick_cell(nb)
    stream = next(
        o for o in nb.cells[index].outputs if o.output_type == "stream" and o.name == "stdout"
    )
    first_line = stream.text.split("\n", 1)[0]
    stream.text = stream.text.replace(first_line, first_line + EDIT, 1)
    copy = tmp_path / SOURCE.name
    nbformat.write(nb, copy)
    for sibling in SOURCE.parent.glob("[0-9]*.ipynb"):  # 00 tables the exercises of its neighbours
        if sibling != SOURCE:
            shutil.copy2(sibling, tmp_path / sibling.name)

    result = _run_nbval(tmp_path, copy)
    output = result.stdout + result.stderr
    assert result.returncode == 1, (
        f"nbval did not fail on an edited output (exit {result.returncode}):\n{output[-3000:]}"
    )
    failed = re.findall(r"^FAILED \S+::(Cell \d+)", output, re.M)
    passed = re.findall(r"^PASSED \S+::(Cell \d+)", output, re.M)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    assert len(failed) == 1, f"exactly the edited cell should fail, got {failed}:\n{output[-3000:]}"
    assert len(passed) == len(code_cells) - 1, f"every other cell should pass:\n{output[-3000:]}"
    assert EDIT.strip() in output, "the failure report shows the edited text"
    assert first_line.strip() in output
