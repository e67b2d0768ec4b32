"""The Colab stage's notebook runner (tests/colab/colab_stage.py) keeps nbclient's contract.

The stage runs notebooks through a kernel client that polls the kernel's sockets in half-second
slices instead of one poll per cell time-out (see ``_sliced_poll_kernel_manager``). ``make test``
runs this file with the newest jupyter_client, ``make test-colab`` with Colab's 7.4.9: in both,
a notebook with a widget still runs top to bottom with its outputs, the cell after the widget
starts without waiting out the time-out, and a cell that runs past its time-out still fails.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

sys.path.insert(0, str(Path(__file__).resolve().parent / "colab"))
import colab_stage  # noqa: E402

TIMEOUT_S = 20


def _run(*sources: str, timeout: int = TIMEOUT_S) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=colab_stage._sliced_poll_kernel_manager(),
    )
    client.execute()
    return notebook


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
