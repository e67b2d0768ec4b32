"""The learner's progress across the course: which exercises pass, notebook by notebook.

Every exercise cell ends with a ``check_*`` call whose verdict Jupyter shows as its output
(``✅ Correct``, ``❌ Not quite``, ``✏️ Not answered yet`` or a ``💡 Hint``). This module finds those
cells in the learner's own notebooks and tables the verdicts:

- by default from the outputs the notebooks hold (what the learner saw when last running them:
  instant, and nothing is executed);
- with ``run=True``, by executing a copy of every notebook first (nbclient, errors allowed), so
  that the table reflects the code as it is now. The learner's files are not modified.

Shown in 00_setup; on the command line: ``python -m transformer_course check notebooks/ [--run]``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a table is made: `--help` stays quick
    import pandas as pd


#: What a verdict's first characters say, in the order a learner meets them.
STATUSES = {
    "✅": "passed",
    "❌": "not yet right",
    "✏️": "not answered",
    "💡": "hint shown",
}
NOT_RUN = "not run"
RAISED = "error"
_CHECK_CALL = re.compile(r"^(?!\s*#)\s*(?:print\()?\s*(check_\w+)\(", re.MULTILINE)


@dataclass(frozen=True)
class ExerciseStatus:
    """One exercise of one notebook, and what its cell last said."""

    notebook: str
    exercise: str
    kind: str  # "build" (the learner writes a function) or "question"
    status: str


def all_checkers() -> list[tuple[str, Callable[..., Any]]]:
    """Every exercise checker of the course as (name, function), sorted by name: the ``check_*``
    functions defined in the modules of :mod:`transformer_course.exercises` (00_setup)."""
    from .. import exercises

    found = []
    for module_info in pkgutil.iter_modules(exercises.__path__):
        if module_info.ispkg:
            continue
        module = importlib.import_module(f"{exercises.__name__}.{module_info.name}")
        for name, function in inspect.getmembers(module, callable):
            if name.startswith("check_") and getattr(function, "__module__", "") == module.__name__:
                found.append((name, function))
    return sorted(found, key=lambda item: item[0])


def checker_names() -> tuple[set[str], set[str]]:
    """The names of every exercise checker, and of those that check build exercises.

    Only these count as exercises: a notebook may call other ``check_*`` functions (11 calls
    ``diagnostics.check_initial_loss``), which are tools, not exercises.
    """
    checkers = all_checkers()
    every = {name for name, _ in checkers}
    build = {name for name, check in checkers if getattr(check, "exercise", None) is not None}
    return every, build


def _output_texts(cell: dict[str, Any]) -> tuple[list[str], bool]:
    texts, raised = [], False
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            raised = True
        if "text" in output:
            texts.append("".join(output["text"]))
        data = output.get("data", {})
        if "text/plain" in data:
            texts.append("".join(data["text/plain"]))
    return texts, raised


def _verdicts(texts: Iterable[str]) -> list[str]:
    found = []
    for text in texts:
        for line in text.splitlines():
            stripped = line.strip().strip("'\"")
            for marker, status in STATUSES.items():
                if stripped.startswith(marker):
                    found.append(status)
    return found


def notebook_exercises(
    notebook: dict[str, Any], name: str, names: tuple[set[str], set[str]]
) -> list[ExerciseStatus]:
    """The exercises of one notebook (as JSON) with the status its stored outputs show.

    ``names`` is :func:`checker_names`' pair (every exercise checker, the build ones).
    """
    every, build_names = names
    rows = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        calls = [call for call in _CHECK_CALL.findall(source) if call in every]
        if not calls:
            continue
        texts, raised = _output_texts(cell)
        verdicts = _verdicts(texts)
        for index, call in enumerate(calls):
            unjudged = RAISED if raised else NOT_RUN
            status = verdicts[index] if index < len(verdicts) else unjudged
            kind = "build" if call in build_names else "question"
            rows.append(ExerciseStatus(name, call, kind, status))
    return rows


def _execute(path: Path, timeout: int) -> dict[str, Any]:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return json.loads(nbformat.writes(notebook))


def course_progress(
    folder: str | Path = ".", *, run: bool = False, timeout: int = 900
) -> pd.DataFrame:
    """One row per exercise of every notebook in ``folder``: notebook, exercise, kind, status.

    ``run=True`` executes a copy of each notebook first (minutes for the whole course); the
    default reads the verdicts the notebooks show now. Introduced in 00_setup.
    """
    import pandas as pd

    folder = Path(folder)
    paths = sorted(folder.glob("[0-9]*.ipynb"))
    if not paths:
        raise FileNotFoundError(
            f"no course notebooks (NN_name.ipynb) in {folder.resolve()}: pass the notebooks folder, "
            "e.g. course_progress('notebooks') from the repository root."
        )
    names = checker_names()
    rows: list[ExerciseStatus] = []
    if run:
        from ..progress import progress_bar

        paths = progress_bar(paths, desc="running notebooks")
    for path in paths:
        notebook = _execute(path, timeout) if run else json.loads(path.read_text(encoding="utf-8"))
        rows.extend(notebook_exercises(notebook, path.stem, names))
    return pd.DataFrame(
        [row.__dict__ for row in rows], columns=["notebook", "exercise", "kind", "status"]
    )


def progress_summary(progress: pd.DataFrame) -> pd.DataFrame:
    """Per notebook: how many exercises (build / all) and how many pass — the table 00 shows."""
    import pandas as pd

    if progress.empty:
        return pd.DataFrame(columns=["build", "questions", "passed", "of"])
    grouped = progress.groupby("notebook", sort=True)
    return pd.DataFrame(
        {
            "build": grouped["kind"].apply(lambda kinds: int((kinds == "build").sum())),
            "questions": grouped["kind"].apply(lambda kinds: int((kinds == "question").sum())),
            "passed": grouped["status"].apply(lambda statuses: int((statuses == "passed").sum())),
            "of": grouped.size(),
        }
    )


def add_check_command(commands) -> None:
    """Add ``check [FOLDER] [--run]`` to the subcommands of ``python -m transformer_course``."""
    check = commands.add_parser(
        "check",
        help="table which exercises of your notebooks pass",
        description="Print every exercise's verdict in FOLDER's notebooks.",
    )
    check.add_argument("folder", nargs="?", default="notebooks", help="the course's notebooks")
    check.add_argument("--run", action="store_true", help="first re-run a copy of each notebook")


def print_progress(folder: str | Path = "notebooks", *, run: bool = False) -> int:
    """Print every exercise's status and the per-notebook summary (``python -m transformer_course
    check``); the exit status is 0 once every exercise passes, 1 while some do not."""
    import pandas as pd

    progress = course_progress(folder, run=run)
    with pd.option_context("display.max_rows", None, "display.width", 120):
        print(progress.to_string(index=False))
        print()
        print(progress_summary(progress).to_string())
    passed = int((progress["status"] == "passed").sum())
    print(f"\n{passed} of {len(progress)} exercises pass.")
    return 0 if passed == len(progress) else 1
