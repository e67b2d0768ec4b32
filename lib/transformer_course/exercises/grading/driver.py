"""Run one student's notebook, then the grader's calls, inside the sandbox (README "For teachers").

``python -m transformer_course.exercises.grading.driver REQUEST`` is what :mod:`.sandbox` starts
as the student's unprivileged user. ``REQUEST`` (JSON, written by the grader) holds the notebook
as the grader read it before any student code ran, with the grader's cells added
(:func:`.probes.notebook_to_run`), the kernel's folder and the time-out of a cell; the driver
reads it and deletes it before the kernel starts. It runs the notebook with
:func:`..notebook_runner.run_notebook` (outputs cleared, errors allowed) and writes next to
``REQUEST`` ``status.json``: ``{"stopped": null | "timeout" | "dead" | "error",
"detail": "…"}``. Nothing the notebook prints is sent back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def run(request_path: Path) -> dict[str, Any]:
    """Run the request at ``request_path``; return the status written beside it."""
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from ..notebook_runner import run_notebook
    from .sandbox import STATUS_FILE

    request = json.loads(request_path.read_text(encoding="utf-8"))
    request_path.unlink()
    folder = request_path.parent
    notebook = nbformat.reads(json.dumps(request["notebook"]), as_version=4)
    status: dict[str, Any] = {"stopped": None, "detail": ""}
    try:
        run_notebook(notebook, timeout=int(request["timeout"]), cwd=request["cwd"],
                     allow_errors=True)  # fmt: skip
    except CellTimeoutError:
        status["stopped"] = "timeout"
    except DeadKernelError as error:
        status.update(stopped="dead", detail=" ".join(str(error).split())[:200])
    except Exception as error:  # noqa: BLE001 - a kernel that won't start, a broken notebook
        status.update(stopped="error", detail=" ".join(str(error).split())[:300])
    (folder / STATUS_FILE).write_text(json.dumps(status), encoding="utf-8")
    return status


if __name__ == "__main__":
    run(Path(sys.argv[1]))
