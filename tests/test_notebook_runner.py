"""The course's one notebook runner (``exercises.notebook_runner.run_notebook``), which ``check
--run``, ``grade``, ``tools/nbtool.py``, the Colab stage and the wheel test all use.

Two kernels in all: a notebook run from its file with errors allowed, and one run in place that
stops at its first error. Under Colab's jupyter_client the same runner is tested in
``tests/test_colab_stage.py`` (``make test-colab``).
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from transformer_course.exercises.notebook_runner import (
    POLL_SLICE_S,
    run_notebook,
    sliced_poll_kernel_manager,
)

PRINTS = "print('hello from the kernel')"
RAISES = "raise ValueError('the cell that raises')"
WHERE = "import os\nprint(os.getcwd())\nprint(os.environ.get('RUNNER_PROBE'))"


def _notebook(*sources: str) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell("# A tiny notebook")]
    cells += [nbformat.v4.new_code_cell(source) for source in sources]
    return nbformat.v4.new_notebook(cells=cells)


def _stale(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Every code cell given an old output and count, as a notebook saved after a run holds."""
    for cell in notebook.cells[1:]:
        cell.outputs = [nbformat.v4.new_output("stream", text="stale output\n")]
        cell.execution_count = 99
    return notebook


def _text(cell) -> str:
    return "".join(output.get("text", "") for output in cell.outputs)


@pytest.fixture
def polls(monkeypatch) -> list[float | None]:
    """The time-out of every poll that reaches jupyter_client's own channel (any client)."""
    from jupyter_client.asynchronous import AsyncKernelClient

    channel = AsyncKernelClient.class_traits()["shell_channel_class"].default_value
    original, waits = channel.get_msg, []

    async def get_msg(self, timeout=None):
        waits.append(timeout)
        return await original(self, timeout=timeout)

    monkeypatch.setattr(channel, "get_msg", get_msg)
    return waits


def test_a_file_runs_from_cleared_outputs_in_its_folder_past_errors(tmp_path, polls):
    folder = tmp_path / "course"
    folder.mkdir()
    path = folder / "99_tiny.ipynb"
    sleeps = "import time\ntime.sleep(1.6)\nprint('slept')"
    nbformat.write(_stale(_notebook(PRINTS, RAISES, WHERE, sleeps)), path)
    before = path.read_bytes()

    env = dict(os.environ, RUNNER_PROBE="given")
    ran = run_notebook(path, timeout=60, env=env, allow_errors=True)

    assert path.read_bytes() == before, "the file is read, never written"
    markdown, printed, raised, where, slept = ran.cells
    assert markdown.source == "# A tiny notebook"
    assert printed.outputs == [
        nbformat.v4.new_output("stream", name="stdout", text="hello from the kernel\n")
    ]
    (error,) = raised.outputs
    assert (error.output_type, error.ename, error.evalue) == (
        "error", "ValueError", "the cell that raises"
    )  # fmt: skip
    cwd, probe = _text(where).splitlines()
    assert Path(cwd).resolve() == folder.resolve(), "the kernel starts in the notebook's folder"
    assert probe == "given", "the kernel gets the environment it is given"
    assert _text(slept) == "slept\n", "a cell after an allowed error still runs"
    assert [cell.execution_count for cell in ran.cells[1:]] == [1, 2, 3, 4]
    assert "stale output" not in nbformat.writes(ran)
    assert not any("execution" in cell.metadata for cell in ran.cells), "no timing metadata"
    # Every wait for the kernel, the 1.6 s sleep's included, was cut into half-second polls:
    # nbclient's own client waits for a reply in one poll as long as the cell's time-out (60 s).
    assert polls and None not in polls and max(polls) <= POLL_SLICE_S
    assert sum(wait == POLL_SLICE_S for wait in polls) >= 3


def test_a_notebook_run_in_place_stops_at_its_first_error(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("RUNNER_PROBE", "inherited")
    notebook = _stale(_notebook(WHERE, RAISES, PRINTS))

    with pytest.raises(CellExecutionError, match="the cell that raises"):
        run_notebook(notebook, timeout=60)

    where, raised, never = notebook.cells[1:]
    cwd, probe = _text(where).splitlines()
    assert Path(cwd).resolve() == elsewhere.resolve(), "no file: this process's folder"
    assert probe == "inherited", "no env: this process's environment"
    assert raised.outputs[0].output_type == "error"
    assert never.outputs == [] and never.execution_count is None, "cleared, not stale"


def test_every_run_builds_its_kernel_client_from_one_sliced_poll_manager():
    manager = sliced_poll_kernel_manager()
    assert manager is sliced_poll_kernel_manager()
    client_class = manager().client_factory
    assert client_class.__name__ == "SlicedPollClient"
    assert client_class.class_traits()["shell_channel_class"].default_value.__name__ == (
        "SlicedPollChannel"
    )
