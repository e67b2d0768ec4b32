"""tools/nbtool.py: percent scripts through jupytext, with nbtool's own additions kept.

Every committed notebook must survive export -> build --no-execute unchanged in its cell
types and sources (the round trip authors make on every edit), and a script keeps the
placeholders, the stable cell ids and the command line that nbtool adds to jupytext.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


nbtool = load_script("tools/nbtool.py")


def _cells(nb) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in nb.cells]


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 15


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_round_trips_through_the_cli(path, tmp_path):
    script, rebuilt = tmp_path / f"{path.stem}.py", tmp_path / path.name
    assert nbtool.main(["export", str(path), str(script)]) == 0
    text = script.read_text(encoding="utf-8")
    assert text.startswith("# %%"), "the script has no YAML header: the notebook is the source"
    assert nbtool.main(["build", str(script), str(rebuilt), "--no-execute"]) == 0
    original, back = nbformat.read(path, as_version=4), nbformat.read(rebuilt, as_version=4)
    assert _cells(back) == _cells(original)
    assert [cell.id for cell in back.cells] == [f"c{i:03d}" for i in range(len(back.cells))]
    assert [cell.id for cell in original.cells] == [cell.id for cell in back.cells]


def test_script_uses_jupytext_percent_markers():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nSome *prose*."),
        nbformat.v4.new_code_cell("x = 1\n%pip install nothing\nx"),
    ]
    text = nbtool.to_percent(nb)
    assert "# %% [markdown]\n# # Title\n#\n# Some *prose*.\n" in text
    assert "# %pip install nothing" in text, "jupytext comments magics out in the script"
    assert _cells(nbformat.from_dict({"cells": nbtool.parse_percent(text)})) == _cells(nb)
    assert "jupytext" not in nb.metadata, "exporting must not change the caller's notebook"


def test_build_fills_placeholders_and_numbers_cells(tmp_path):
    # A script as authors write it (and as the former hand-written exporter wrote it).
    script = tmp_path / "99_demo.py"
    script.write_text(
        "# %% [markdown]\n# # 99 · Demo\n#\n# {{COLAB_BADGE}}\n\n"
        "# %%\n{{COLAB_INSTALL}}\nimport math\n\n"
        '# %% tags=["keep"]\nmath.pi\n',
        encoding="utf-8",
    )
    target = tmp_path / "99_demo.ipynb"
    assert nbtool.main(["build", str(script), str(target), "--no-execute"]) == 0
    nb = nbformat.read(target, as_version=4)
    assert [c.id for c in nb.cells] == ["c000", "c001", "c002"]
    assert nbtool.colab_badge("99_demo.ipynb") in nb.cells[0].source
    assert nb.cells[1].source.startswith(nbtool.colab_install_block())
    assert "%pip install" in nb.cells[1].source and "# %pip" not in nb.cells[1].source
    assert nb.cells[2].metadata == {"tags": ["keep"]}
    assert set(nb.metadata) == {"kernelspec", "language_info"}


def test_command_line_keeps_its_three_commands(capsys):
    with pytest.raises(SystemExit):
        nbtool.main(["--help"])
    usage = capsys.readouterr().out
    for command in ("build", "run", "export"):
        assert command in usage
