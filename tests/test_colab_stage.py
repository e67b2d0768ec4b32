"""The Colab stage (tests/colab/colab_stage.py): its notebooks, and the runner it uses under
Colab's jupyter_client.

The stage runs notebooks with the course's runner (``exercises.notebook_runner.run_notebook``),
whose kernel client polls the kernel's sockets in half-second slices instead of one poll per cell
time-out (``sliced_poll_kernel_manager``: jupyter/nbclient#312). ``make test`` runs this file
with the newest jupyter_client, ``make test-colab`` with Colab's 7.4.9: in both, a notebook with
a widget still runs top to bottom with its outputs, the cell after the widget starts without
waiting out the time-out, and a cell that runs past its time-out still fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellTimeoutError

from transformer_course.exercises.notebook_runner import run_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent / "colab"))
import colab_stage  # noqa: E402

TIMEOUT_S = 20


def _run(*sources: str, timeout: int = TIMEOUT_S) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    return run_notebook(notebook, timeout=timeout)


def test_a_notebook_with_a_widget_runs_with_its_outputs_and_without_waiting_out_the_timeout():
    start = time.monotonic()
    notebook = _run(
        "import ipywidgets\nipywidgets.IntSlider(value=3)",
        "import time\ntime.sleep(1.0)\nprint('after the widget')",
        "6 * 7",
    )
    took = time.monotonic() - start
    widget, after, answer = (cell.outputs for cell in notebook.cells)
    assert "application/vnd.jupyter.widget-view+json" in widget[0]["data"]
    assert after == [nbformat.v4.new_output("stream", name="stdout", text="after the widget\n")]
    assert answer[0]["data"]["text/plain"] == "42"
    # A missed wake-up costs a whole time-out (20 s) per cell; the kernel's start and the three
    # cells take a few seconds.
    assert took < TIMEOUT_S, f"the notebook took {took:.1f} s"


def test_a_cell_past_its_timeout_still_fails():
    start = time.monotonic()
    with pytest.raises(CellTimeoutError):
        _run("print('first')", "import time\ntime.sleep(30)", timeout=2)
    assert time.monotonic() - start < 25


def test_the_stage_runs_the_english_notebooks_unless_asked_for_more():
    assert colab_stage.arguments(["notebooks"]).editions == ["en"]
    english = colab_stage.notebook_paths(["en"])
    both = colab_stage.notebook_paths(
        colab_stage.arguments(["notebooks", "--editions", "en,zh"]).editions
    )
    assert len(english) >= 16 and all(Path(p).parent.name == "notebooks" for p in english)
    assert both[: len(english)] == english
    chinese = both[len(english) :]
    assert [Path(p).name for p in chinese] == [Path(p).name for p in english]
    assert all(Path(p).parent.name == "zh" for p in chinese)
    assert colab_stage.editions_option(" zh , zh") == ["zh"]
    for wrong in ("fr", "", "en,de"):
        with pytest.raises(argparse.ArgumentTypeError, match="choose from en, zh"):
            colab_stage.editions_option(wrong)
