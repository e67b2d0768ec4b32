"""The learner's progress across the course: which exercises pass, notebook by notebook.

Every exercise cell ends with a ``check_*`` call whose verdict Jupyter shows as its output
(``✅ Correct``, ``❌ Not quite``, ``✏️ Not answered yet`` or a ``💡 Hint``). This module finds those
cells in the learner's own notebooks and tables the verdicts:

- by default from the outputs the notebooks hold (what the learner saw when last running them:
  instant, and nothing is executed);
- with ``run=True``, by executing a copy of every notebook first (:mod:`.notebook_runner`, errors
  allowed), so that the table reflects the code as it is now. The learner's files are not
  modified.

Shown in 00_setup; on the command line: ``python -m transformer_course check notebooks/ [--run]``.

In Colab the notebooks, and with them their verdicts, vanish when the session ends unless the
learner saves copies to Drive. :func:`export_progress` keeps the table in a small JSON file the
learner owns (downloaded to their computer in Colab), and :func:`import_progress` brings it back in
a new session, where it fills in every exercise the fresh notebooks have not judged yet.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..i18n import N_, _, language

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
#: The columns of the progress table.
PROGRESS_COLUMNS = ["notebook", "exercise", "kind", "status"]
RAISED = "error"
#: The table's words as a learner reads them. The table is data (a saved file, a gradebook and the
#: code below compare these English words); :func:`course_progress` and :func:`progress_summary`
#: show them in the learner's language (``setup_notebook(lang="zh")``), and every function that
#: takes a table back reads either.
_SHOWN_COLUMNS = {
    "notebook": N_("notebook"),
    "exercise": N_("exercise"),
    "kind": N_("kind"),
    "status": N_("status"),
    # progress_summary's columns
    "build": N_("build"),
    "questions": N_("questions"),
    "passed": N_("passed"),
    "of": N_("of"),
    "optional": N_("optional"),
    "optional passed": N_("optional passed"),
}
_SHOWN_VALUES = {
    "passed": N_("passed"),
    "not yet right": N_("not yet right"),
    "not answered": N_("not answered"),
    "hint shown": N_("hint shown"),
    "not run": N_("not run"),
    "error": N_("error"),
    "build": N_("build"),
    "question": N_("question"),
}
#: The exercises that sit in folded "Going deeper" sections: optional, so the summary counts them
#: apart and a learner who follows the main path can reach all of it (tests/test_exercise_progress.py
#: checks this set against the notebooks' folded sections).
OPTIONAL_EXERCISES = frozenset(
    {
        "check_unread_row_gradient",  # 02, Going deeper: the rows nobody reads
        "check_sees_the_future",  # 06, Going deeper: leak tests on whole GPTs
        "check_broken_layer",  # 06, the same section
        "check_post_norm_warmup",  # 09, Going deeper: a measured comparison
    }
)
_CHECK_CALL = re.compile(r"^(?!\s*#)\s*(?:print\()?\s*(check_\w+)\(", re.MULTILINE)


@dataclass(frozen=True)
class ExerciseStatus:
    """One exercise of one notebook, and what its cell last said."""

    notebook: str
    exercise: str
    kind: str  # "build" (the learner writes a function) or "question"
    status: str
    #: What the cell printed (the checker's own message) and the error it raised, if any;
    #: shown in a teacher's per-student feedback (``exercises.grading``), not in the table.
    feedback: str = ""


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
    every = {name for name, _check in checkers}
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


def _error_lines(cell: dict[str, Any]) -> list[str]:
    return [
        f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]


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
        feedback = "\n".join(text.strip() for text in texts + _error_lines(cell) if text.strip())
        for index, call in enumerate(calls):
            unjudged = RAISED if raised else NOT_RUN
            status = verdicts[index] if index < len(verdicts) else unjudged
            kind = "build" if call in build_names else "question"
            rows.append(ExerciseStatus(name, call, kind, status, feedback))
    return rows


def _execute(path: Path, timeout: int) -> dict[str, Any]:
    """A fresh run of the notebook at ``path`` (the file is left alone), as JSON; a cell that
    raises does not stop the run: its error is the exercise's verdict."""
    import nbformat

    from .notebook_runner import run_notebook

    return json.loads(nbformat.writes(run_notebook(path, timeout=timeout, allow_errors=True)))


def shown_progress(progress: pd.DataFrame) -> pd.DataFrame:
    """The progress table (or its summary) in the learner's language: column names, kinds and
    statuses translated; notebook and exercise names stay as they are. English: unchanged."""
    if language() == "en":
        return progress
    columns = {english: _(message) for english, message in _SHOWN_COLUMNS.items()}
    values = {english: _(message) for english, message in _SHOWN_VALUES.items()}
    shown = progress.rename(columns=lambda name: columns.get(name, name))
    shown.index = shown.index.rename(columns.get(shown.index.name, shown.index.name))
    for column in ("kind", "status"):
        if column in progress.columns:
            shown[columns[column]] = shown[columns[column]].map(lambda v: values.get(v, v))
    return shown


def _read_progress(progress: pd.DataFrame) -> pd.DataFrame:
    """A progress table in the English words the code compares, whichever language shows it."""
    if list(progress.columns) == PROGRESS_COLUMNS:
        return progress
    columns = {_(_SHOWN_COLUMNS[word]): word for word in PROGRESS_COLUMNS}
    values = {_(message): word for word, message in _SHOWN_VALUES.items()}
    table = progress.rename(columns=lambda name: columns.get(name, name))
    if list(table.columns) != PROGRESS_COLUMNS:
        return progress  # not a progress table: the caller says so
    for column in ("kind", "status"):
        table[column] = table[column].map(lambda value: values.get(value, value))
    return table


def course_progress(
    folder: str | Path = ".", *, run: bool = False, timeout: int = 900
) -> pd.DataFrame:
    """One row per exercise of every notebook in ``folder``: notebook, exercise, kind, status.

    ``run=True`` executes a copy of each notebook first (minutes for the whole course); the
    default reads the verdicts the notebooks show now. Introduced in 00_setup. The column names,
    kinds and statuses are in the learner's language (:func:`shown_progress`).
    """
    return shown_progress(_course_progress(folder, run=run, timeout=timeout))


def _course_progress(folder: str | Path, *, run: bool, timeout: int) -> pd.DataFrame:
    """:func:`course_progress` in the English words the code compares."""
    import pandas as pd

    folder = Path(folder)
    paths = sorted(folder.glob("[0-9]*.ipynb"))
    if not paths:
        raise FileNotFoundError(
            _(
                "no course notebooks (NN_name.ipynb) in {folder}: pass the notebooks folder, "
                "e.g. course_progress('notebooks') from the repository root."
            ).format(folder=folder.resolve())
        )
    names = checker_names()
    rows: list[ExerciseStatus] = []
    if run:
        from ..progress import progress_bar

        paths = progress_bar(paths, desc=_("running notebooks"))
    for path in paths:
        notebook = _execute(path, timeout) if run else json.loads(path.read_text(encoding="utf-8"))
        rows.extend(notebook_exercises(notebook, path.stem, names))
    return pd.DataFrame([row.__dict__ for row in rows], columns=PROGRESS_COLUMNS)


SUMMARY_COLUMNS = ["build", "questions", "passed", "of", "optional", "optional passed"]


def progress_summary(progress: pd.DataFrame) -> pd.DataFrame:
    """Per notebook: how many main-path exercises (build, questions), how many of them pass, and
    apart from them the optional ones of the folded Going-deeper sections
    (:data:`OPTIONAL_EXERCISES`) — the table 00 shows (in the learner's language, as
    :func:`course_progress`). 100 % of the main path is ``passed == of``."""
    import pandas as pd

    progress = _read_progress(progress)
    if progress.empty:
        return shown_progress(pd.DataFrame(columns=SUMMARY_COLUMNS))
    optional = progress["exercise"].isin(OPTIONAL_EXERCISES)
    passed = progress["status"] == "passed"
    notebooks = sorted(set(progress["notebook"]))
    main = progress[~optional].groupby("notebook", sort=True)
    extra = progress[optional].groupby("notebook", sort=True)
    summary = pd.DataFrame(
        {
            "build": main["kind"].apply(lambda kinds: int((kinds == "build").sum())),
            "questions": main["kind"].apply(lambda kinds: int((kinds == "question").sum())),
            "passed": (passed & ~optional).groupby(progress["notebook"]).sum(),
            "of": main.size(),
            "optional": extra.size(),
            "optional passed": (passed & optional).groupby(progress["notebook"]).sum(),
        },
        index=pd.Index(notebooks, name="notebook"),
    )
    return shown_progress(summary.fillna(0).astype(int))


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

    progress = _course_progress(folder, run=run, timeout=900)
    with pd.option_context("display.max_rows", None, "display.width", 120):
        print(shown_progress(progress).to_string(index=False))
        print()
        print(progress_summary(progress).to_string())
    passed = int((progress["status"] == "passed").sum())
    print()
    print(_("{passed} of {total} exercises pass.").format(passed=passed, total=len(progress)))
    return 0 if passed == len(progress) else 1


#: The marker and version of the file :func:`export_progress` writes.
PROGRESS_FORMAT = "transformer_course.progress/1"
PROGRESS_FILE = "course_progress.json"
#: Statuses that say nothing about the learner's work: a saved verdict replaces them.
_UNJUDGED = {NOT_RUN, STATUSES["✏️"]}


def _colab_files():
    """``google.colab.files`` inside Colab, else None (the module exists only there)."""
    if "google.colab" not in sys.modules:
        return None
    try:
        from google.colab import files
    except ImportError:
        return None
    return files


def export_progress(
    path: str | Path = PROGRESS_FILE,
    progress: pd.DataFrame | None = None,
    *,
    folder: str | Path = ".",
) -> Path:
    """Write the progress table (``progress``, else :func:`course_progress` of ``folder``) to the
    JSON file ``path`` and return its path; in Colab the file is also downloaded to the learner's
    computer, since Colab deletes it with the session (00_setup)."""
    import pandas as pd

    if progress is None:
        progress = course_progress(folder)
    if isinstance(progress, pd.DataFrame):
        progress = _read_progress(progress)  # the file holds the English words, whoever reads it
    if not isinstance(progress, pd.DataFrame) or list(progress.columns) != PROGRESS_COLUMNS:
        raise ValueError(
            _(
                "progress must be course_progress()'s table with columns {columns}, got {kind}"
            ).format(columns=PROGRESS_COLUMNS, kind=type(progress).__name__)
        )
    from .. import __version__

    path = Path(path)
    payload = {
        "format": PROGRESS_FORMAT,
        "course_version": __version__,
        "exercises": progress.to_dict(orient="records"),
    }
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    files = _colab_files()
    if files is not None:
        files.download(str(path))
    return path


#: The largest progress file read: the whole course's table is about 10 KB.
MAX_PROGRESS_BYTES = 2**20
#: The statuses a saved table may hold (the English words :func:`export_progress` writes).
_SAVED_STATUSES = {*STATUSES.values(), NOT_RUN, RAISED}


def _saved_text(data: bytes, source: str) -> str:
    """The text of a progress file's bytes, or a ValueError that says why it is none."""
    if len(data) > MAX_PROGRESS_BYTES:
        raise ValueError(
            _("{source} is not a progress file: it is larger than {kib} KiB").format(
                source=source, kib=MAX_PROGRESS_BYTES // 1024
            )
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            _(
                "{source} is not a progress file: it holds binary bytes, not UTF-8 text "
                "(byte 0x{byte:02x} at position {at})"
            ).format(source=source, byte=data[error.start], at=error.start)
        ) from None


def _valid_rows(rows: object) -> bool:
    """True when ``rows`` is a list of rows of text with the progress table's columns."""
    return isinstance(rows, list) and all(
        isinstance(row, dict)
        and set(row) == set(PROGRESS_COLUMNS)
        and all(isinstance(value, str) and len(value) <= 200 for value in row.values())
        and row["status"] in _SAVED_STATUSES
        for row in rows
    )


def _read_saved(data: bytes, source: str) -> pd.DataFrame:
    import pandas as pd

    text = _saved_text(data, source)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            _("{source} is not a progress file: it is not JSON ({error})").format(
                source=source, error=error
            )
        ) from None
    except RecursionError:
        raise ValueError(
            _("{source} is not a progress file: its JSON is nested too deeply").format(
                source=source
            )
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != PROGRESS_FORMAT:
        raise ValueError(
            _(
                "{source} is not a progress file written by export_progress() (no '{marker}' marker)"
            ).format(source=source, marker=PROGRESS_FORMAT)
        )
    if not _valid_rows(payload.get("exercises")):
        raise ValueError(
            _(
                "{source} is damaged: 'exercises' must be a list of rows with {columns}, each "
                "a text, and a status among {statuses}"
            ).format(source=source, columns=PROGRESS_COLUMNS, statuses=sorted(_SAVED_STATUSES))
        )
    return pd.DataFrame(payload["exercises"], columns=PROGRESS_COLUMNS)


def _read_capped(path: Path) -> bytes:
    """At most one byte more than :data:`MAX_PROGRESS_BYTES` of the file at ``path``."""
    with open(path, "rb") as handle:
        return handle.read(MAX_PROGRESS_BYTES + 1)


def import_progress(
    path: str | Path | None = None, *, current: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The progress table saved by :func:`export_progress` in ``path`` (in Colab, ``None`` asks
    the learner to upload the file). With ``current`` (what :func:`course_progress` reads now),
    the result is ``current`` with every exercise it has not judged (not run, not answered)
    taken from the saved file: the verdicts of this session win over the saved ones (00_setup)."""
    if path is None:
        files = _colab_files()
        if files is None:
            raise ValueError(
                _(
                    "pass the path of the progress file (import_progress('course_progress.json')); "
                    "only Colab can ask you to upload it"
                )
            )
        uploaded = files.upload()
        if not uploaded:
            raise ValueError(
                _("no file was uploaded; run the cell again and choose your progress file")
            )
        name, data = next(iter(uploaded.items()))
        saved = _read_saved(data, name)
    else:
        saved = _read_saved(_read_capped(Path(path)), str(path))
    if current is None:
        return shown_progress(saved)
    current = _read_progress(current)
    # A checker may be called twice in one notebook: match the n-th call with the n-th call.
    saved_statuses: dict[tuple[str, str], list[str]] = {}
    for row in saved.itertuples():
        saved_statuses.setdefault((row.notebook, row.exercise), []).append(row.status)
    merged, seen = current.copy(), Counter()
    for index, row in merged.iterrows():
        key = (row["notebook"], row["exercise"])
        statuses, n = saved_statuses.get(key, []), seen[key]
        seen[key] += 1
        if row["status"] in _UNJUDGED and n < len(statuses):
            merged.at[index, "status"] = statuses[n]
    return shown_progress(merged)
