"""Run a notebook top to bottom in a fresh kernel: the one notebook runner of the course.

No notebook shows it; it runs them for a learner's ``check --run`` (:mod:`.progress`, 00_setup), a
teacher's ``grade`` (:mod:`.grading`, README "For teachers"), the authors' ``tools/nbtool.py``,
the Colab stage of CI (``tests/colab/colab_stage.py``) and the wheel test. All of them make the
same choices, here:

- the kernel is this Python's own (the ``python3`` kernel: ipykernel in this environment, the one
  nbval's ``--nbval-current-env`` uses), whatever kernel the notebook's metadata names;
- every stored output is cleared first, so a notebook holds only what this run printed (a cell
  the run never reached shows nothing, never an old verdict);
- the kernel starts in the notebook's own folder, where Jupyter and nbval start it;
- no timing metadata is written into the cells;
- the kernel client polls in half-second slices (:func:`sliced_poll_kernel_manager`).

nbclient and jupyter_client are imported only when a notebook runs: they come with JupyterLab
(the ``lab`` extra) and with Colab, not with the library's own dependencies.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

#: The seconds one poll of a kernel socket may wait before the client looks again.
POLL_SLICE_S = 0.5


@functools.cache
def sliced_poll_kernel_manager() -> type:
    """A kernel manager whose client looks for the kernel's messages every half second.

    nbclient waits for a cell's reply with one poll of the shell socket that lasts the cell's
    whole time-out. With Colab's jupyter_client 7.4.9 and a current pyzmq, that poll can miss the
    wake-up of a reply that has already arrived and see it only when the time-out ends
    (jupyter/nbclient#312, a cell that shows a widget). In the Colab stage of CI, on a 2-core
    machine under load, the cell after a widget started one whole time-out late (45 s with
    ``--timeout 45``; with the default 1200 s the stage looked hung). Polling in half-second
    slices bounds that wait; a cell that really runs past its time-out still fails. A teacher who
    grades with an older jupyter_client would meet the same hang, so every run uses this client.
    """
    from queue import Empty

    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Type, default

    # jupyter_client 7 calls its async channel ZMQSocketChannel, 8 AsyncZMQSocketChannel.
    AsyncChannel = AsyncKernelClient.class_traits()["shell_channel_class"].default_value

    class SlicedPollChannel(AsyncChannel):
        async def get_msg(self, timeout: float | None = None) -> dict:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = POLL_SLICE_S if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    return await super().get_msg(timeout=min(POLL_SLICE_S, left))
                except Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise

    class SlicedPollClient(AsyncKernelClient):
        shell_channel_class = Type(SlicedPollChannel)
        iopub_channel_class = Type(SlicedPollChannel)

    class SlicedPollKernelManager(AsyncKernelManager):
        @default("client_factory")
        def _client_factory_default(self) -> type:
            return SlicedPollClient

    return SlicedPollKernelManager


def clear_outputs(notebook: NotebookNode) -> None:
    """Empty every code cell's outputs and execution count of an nbformat ``notebook``, in place:
    what a fresh kernel starts from."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None


def run_notebook(
    notebook: NotebookNode | str | os.PathLike,
    *,
    timeout: int,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    allow_errors: bool = False,
) -> NotebookNode:
    """Run ``notebook`` top to bottom in a fresh kernel (the choices in this module's docstring)
    and return it with this run's outputs.

    ``notebook`` is a path (read; the file stays as it is) or an nbformat notebook, run in place:
    pass the notebook itself to keep what ran before an exception stopped the run.
    ``timeout`` is the seconds one cell may run; ``cwd`` the kernel's folder (default: the
    notebook file's folder, else this process's); ``env`` the kernel's whole environment
    (default: this process's). A cell that raises stops the run with nbclient's
    ``CellExecutionError``, unless ``allow_errors``: then its error becomes its output and the
    next cell runs. A cell past its time-out raises ``CellTimeoutError``, a kernel that dies
    ``DeadKernelError``, either way.
    """
    import nbformat
    from nbclient import NotebookClient

    if isinstance(notebook, (str, os.PathLike)):
        path = Path(notebook)
        notebook = nbformat.read(path, as_version=4)
        cwd = path.resolve().parent if cwd is None else cwd
    clear_outputs(notebook)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        allow_errors=allow_errors,
        kernel_name="python3",
        kernel_manager_class=sliced_poll_kernel_manager(),
        record_timing=False,
        resources={"metadata": {"path": str(Path.cwd() if cwd is None else cwd)}},
    )
    client.execute(**({} if env is None else {"env": dict(env)}))
    return notebook
