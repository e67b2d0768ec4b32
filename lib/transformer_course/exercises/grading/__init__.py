"""Grading a class with the course's own checkers (README "For teachers").

``python -m transformer_course grade SUBMISSIONS/ --out grades.csv`` takes one folder per
student (``SUBMISSIONS/<student>/*.ipynb``, the notebooks named as the course names them) and:

- runs each notebook of each student top to bottom in a kernel of its own (a separate process,
  nbclient), on a copy, with every stored output cleared first (a verdict counts only if this run
  prints it), a time limit per cell, and every connection except loopback refused
  (:mod:`transformer_course.exercises.grading.offline`);
- reads the checkers' verdicts exactly as the learner's progress table does
  (:func:`progress.notebook_exercises`) and writes a CSV gradebook: one row per student, one
  column per exercise of the course (``NN_topic:check_name``) holding ``passed``, ``failed`` or
  ``not answered``;
- writes one Markdown feedback file per student with the checkers' own messages (they name the
  likely slip), the cells that raised, and any problem with the submission;
- flags a submission whose check cells were edited: the lines from the ``check_…(…)`` call on
  must be the course's own (matched by cell id), and no cell may define, assign or import a name
  ``check_…`` that the course notebook does not import.

With ``--gradescope DIR`` each student also gets ``DIR/<student>.json`` in the results format of
Gradescope's autograder (what otter-grader writes for Gradescope): one test per exercise, score
1 when it passes, the checker's message as its output.

The column set comes from the course's own notebooks (``--course``, default ``notebooks``), so a
notebook a student did not hand in shows as ``not answered`` and an extra file is ignored.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...i18n import _
from ...notebook import clear_outputs
from ..progress import _CHECK_CALL, ExerciseStatus, checker_names, notebook_exercises
from . import offline

#: What a gradebook cell says, from each status of the progress table.
GRADE_OF_STATUS = {
    "passed": "passed",
    "not yet right": "failed",
    "error": "failed",  # the cell raised: the learner's code or answer broke the check
    "not answered": "not answered",
    "hint shown": "not answered",  # the cell still asks for a hint instead of judging an answer
    "not run": "not answered",  # never reached (an earlier time-out) or no check cell
}
#: A cell that makes its own ``check_…``: ``def check_x``, ``check_x = …``, ``import … as check_x``.
_DEFINES_CHECK = re.compile(
    r"^\s*(?:def\s+(check_\w+)|(check_\w+)\s*(?::[^=]*)?=(?!=)|.*\bimport\b.*\bas\s+(check_\w+))",
    re.MULTILINE,
)
_IMPORTS_CHECK = re.compile(r"^\s*from\s+\S+\s+import\s+[^\n]*\bcheck_\w+", re.MULTILINE)


@dataclass(frozen=True)
class CheckCell:
    """One exercise cell of the course: its id and the lines from its first check call on."""

    cell_id: str
    exercises: tuple[str, ...]
    check_lines: tuple[str, ...]


@dataclass
class StudentResult:
    """One student's grades: exercise column -> grade, with feedback and problems found."""

    student: str
    grades: dict[str, str] = field(default_factory=dict)
    feedback: dict[str, str] = field(default_factory=dict)
    edited: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _check_lines(source: str) -> tuple[str, ...]:
    """The lines from the first ``check_…(`` call to the end, trailing blanks dropped."""
    lines = source.rstrip().splitlines()
    for index, line in enumerate(lines):
        if _CHECK_CALL.match(line):
            return tuple(line.rstrip() for line in lines[index:])
    return ()


def course_check_cells(notebook: dict[str, Any], every_checker: set[str]) -> list[CheckCell]:
    """The exercise cells of one course notebook (as JSON), in order."""
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        calls = tuple(call for call in _CHECK_CALL.findall(source) if call in every_checker)
        if calls:
            cells.append(CheckCell(cell.get("id", ""), calls, _check_lines(source)))
    return cells


def edited_checks(
    student: dict[str, Any], course: dict[str, Any], every_checker: set[str]
) -> list[str]:
    """What differs in ``student``'s check cells from the ``course`` notebook's, one sentence
    each; an empty list for an honest submission."""
    found = []
    by_id = {cell.get("id"): cell for cell in student.get("cells", [])}
    for expected in course_check_cells(course, every_checker):
        cell = by_id.get(expected.cell_id)
        names = ", ".join(expected.exercises)
        if cell is None:
            found.append(
                _("the check cell of {names} (cell {cell}) is missing").format(
                    names=names, cell=expected.cell_id
                )
            )
            continue
        lines = _check_lines(_source(cell))
        if lines != expected.check_lines:
            got = " / ".join(lines) or _("no check call")
            found.append(
                _(
                    "the check call of {names} (cell {cell}) was edited: expected `{expected}`, found `{got}`"
                ).format(
                    names=names,
                    cell=expected.cell_id,
                    expected=" / ".join(expected.check_lines),
                    got=got,
                )
            )
    course_imports = {
        line.strip()
        for cell in course.get("cells", [])
        for line in _IMPORTS_CHECK.findall(_source(cell))
    }
    for cell in student.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        for match in _DEFINES_CHECK.finditer(source):
            name = next(group for group in match.groups() if group)
            found.append(
                _("cell {cell} defines its own {name}").format(cell=cell.get("id", "?"), name=name)
            )
        for line in _IMPORTS_CHECK.findall(source):
            if line.strip() not in course_imports:
                found.append(
                    _("cell {cell} imports checkers the course does not: `{line}`").format(
                        cell=cell.get("id", "?"), line=line.strip()
                    )
                )
    return found


def run_notebook(
    path: Path, timeout: int, env: dict[str, str]
) -> tuple[dict[str, Any], str | None]:
    """Execute the notebook at ``path`` (outputs cleared first) in a kernel of its own, in its
    folder, with ``env``; return it as JSON and the reason it stopped early (None when it ran
    to the end; cells that raise do not stop it)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    clear_outputs(notebook)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    stopped = None
    try:
        client.execute(env=env)
    except CellTimeoutError:
        stopped = _(
            "a cell ran longer than {timeout} s and was stopped; later cells did not run"
        ).format(timeout=timeout)
    except DeadKernelError as exc:
        stopped = _("the kernel died ({error}); later cells did not run").format(
            error=" ".join(str(exc).split())[:200]
        )
    return json.loads(nbformat.writes(notebook)), stopped


def _columns(notebook: str, rows: Iterable[ExerciseStatus]) -> list[tuple[str, ExerciseStatus]]:
    """``NN_topic:check_name`` for each exercise; a checker called twice gets ``#2``."""
    seen: Counter[str] = Counter()
    named = []
    for row in rows:
        seen[row.exercise] += 1
        suffix = f"#{seen[row.exercise]}" if seen[row.exercise] > 1 else ""
        named.append((f"{notebook}:{row.exercise}{suffix}", row))
    return named


def _submitted(folder: Path, stem: str) -> Path | None:
    """The student's copy of the course notebook ``stem``: the same name, else the one file that
    starts with its number (``05_scale (1).ipynb``)."""
    exact = folder / f"{stem}.ipynb"
    if exact.is_file():
        return exact
    number = stem.split("_")[0]
    candidates = sorted(folder.glob(f"{number}_*.ipynb"))
    return candidates[0] if len(candidates) == 1 else None


def kernel_environment(guard_folder: Path) -> dict[str, str]:
    """The environment students' kernels run with: this one, plus the network guard first on
    ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(guard_folder), env.get("PYTHONPATH")]))
    return env


def grade_student(
    folder: Path, course: dict[str, dict[str, Any]], timeout: int, env: dict[str, str]
) -> StudentResult:
    """Run and grade one student's folder against the course notebooks (stem -> JSON)."""
    names = checker_names()
    result = StudentResult(folder.name)
    with tempfile.TemporaryDirectory(prefix=f"grade-{folder.name}-") as scratch:
        work = Path(scratch) / folder.name
        shutil.copytree(folder, work)  # the student's own files stay untouched
        for stem, course_notebook in course.items():
            expected = notebook_exercises(course_notebook, stem, names)
            path = _submitted(work, stem)
            if path is None:
                if expected:
                    result.problems.append(_("{stem}.ipynb was not handed in").format(stem=stem))
                for column, _row in _columns(stem, expected):
                    result.grades[column] = "not answered"
                continue
            try:
                ran, stopped = run_notebook(path, timeout, env)
            except Exception as exc:  # noqa: BLE001 - one broken file must not stop the class
                ran, stopped = (
                    {"cells": []},
                    _("could not be run: {error}").format(error=" ".join(str(exc).split())[:300]),
                )
            if stopped:
                result.problems.append(f"{stem}: {stopped}")
            student_notebook = json.loads(path.read_text(encoding="utf-8"))
            result.edited += [
                f"{stem}: {sentence}"
                for sentence in edited_checks(student_notebook, course_notebook, names[0])
            ]
            got = dict(_columns(stem, notebook_exercises(ran, stem, names)))
            for column, _row in _columns(stem, expected):
                row = got.get(column)
                result.grades[column] = GRADE_OF_STATUS[row.status] if row else "not answered"
                if row and row.feedback:
                    result.feedback[column] = row.feedback
    return result


def read_course(course_folder: Path) -> dict[str, dict[str, Any]]:
    """The course's own notebooks (``NN_*.ipynb``), stem -> JSON, in course order."""
    paths = sorted(Path(course_folder).glob("[0-9]*.ipynb"))
    if not paths:
        raise FileNotFoundError(
            _(
                "no course notebooks (NN_name.ipynb) in {folder}: pass --course the folder of the course's own notebooks, which the check cells are compared with"
            ).format(folder=Path(course_folder).resolve())
        )
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in paths}


def feedback_text(result: StudentResult) -> str:
    """The Markdown feedback file of one student."""
    passed = sum(grade == "passed" for grade in result.grades.values())
    lines = [
        _("# Feedback for {student}").format(student=result.student),
        "",
        _("{passed} of {total} exercises pass.").format(passed=passed, total=len(result.grades)),
        "",
    ]
    if result.edited:
        lines += [_("## Check cells that differ from the course's"), ""]
        lines += [f"- {sentence}" for sentence in result.edited] + [""]
    if result.problems:
        lines += [_("## Problems running the notebooks"), ""]
        lines += [f"- {problem}" for problem in result.problems] + [""]
    lines += [_("## Exercises"), ""]
    for column, grade in result.grades.items():
        lines.append(f"### {column}: {grade}")
        message = result.feedback.get(column)
        if message:
            lines += ["", "```text", message, "```"]
        lines.append("")
    return "\n".join(lines)


def gradescope_results(result: StudentResult) -> dict[str, Any]:
    """One student's grades in Gradescope's autograder ``results.json`` format."""
    notes = [
        _("Check cell differs from the course's: {s}").format(s=s) for s in result.edited
    ] + result.problems
    return {
        "score": sum(grade == "passed" for grade in result.grades.values()),
        "output": "\n".join(notes),
        "tests": [
            {
                "name": column,
                "score": 1 if grade == "passed" else 0,
                "max_score": 1,
                "status": "passed" if grade == "passed" else "failed",
                "output": f"{grade}\n{result.feedback.get(column, '')}".strip(),
            }
            for column, grade in result.grades.items()
        ],
    }


def _write_student(
    result: StudentResult, feedback_dir: Path, gradescope: str | os.PathLike | None
) -> dict[str, Any]:
    """Write one student's feedback file (and Gradescope results); return their gradebook row."""
    (feedback_dir / f"{result.student}.md").write_text(feedback_text(result), encoding="utf-8")
    if gradescope is not None:
        Path(gradescope).mkdir(parents=True, exist_ok=True)
        (Path(gradescope) / f"{result.student}.json").write_text(
            json.dumps(gradescope_results(result), ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    return {
        "student": result.student,
        "passed": sum(grade == "passed" for grade in result.grades.values()),
        "of": len(result.grades),
        "edited checks": len(result.edited),
        "problems": "; ".join(result.problems),
        **result.grades,
    }


def grade_class(
    submissions: str | os.PathLike,
    out: str | os.PathLike,
    *,
    course: str | os.PathLike = "notebooks",
    feedback: str | os.PathLike | None = None,
    gradescope: str | os.PathLike | None = None,
    timeout: int = 600,
    say=print,
):
    """Grade every student folder in ``submissions``; write the CSV gradebook ``out``, one
    ``<student>.md`` per student into ``feedback`` (default: ``<out without .csv>_feedback``)
    and, with ``gradescope``, one ``<student>.json`` in Gradescope's results format there.
    Returns the gradebook as a pandas DataFrame (one row per student)."""
    import pandas as pd

    submissions, out = Path(submissions), Path(out)
    students = (
        sorted(p for p in submissions.iterdir() if p.is_dir()) if submissions.is_dir() else []
    )
    if not students:
        raise FileNotFoundError(
            _("no student folders in {folder}: expected SUBMISSIONS/<student>/*.ipynb").format(
                folder=submissions.resolve()
            )
        )
    if timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
    course_notebooks = read_course(Path(course))
    feedback_dir = Path(feedback) if feedback is not None else out.with_name(f"{out.stem}_feedback")
    feedback_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="grade-guard-") as guard:
        env = kernel_environment(Path(guard))
        offline.write_sitecustomize(guard)
        for number, folder in enumerate(students, 1):
            say(f"[{number}/{len(students)}] {folder.name}")
            result = grade_student(folder, course_notebooks, timeout, env)
            rows.append(_write_student(result, feedback_dir, gradescope))
    gradebook = pd.DataFrame(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    gradebook.to_csv(out, index=False)
    say(
        _("wrote {out} ({n} students) and feedback files in {folder}").format(
            out=out, n=len(rows), folder=feedback_dir
        )
    )
    return gradebook


def add_grade_command(commands) -> None:
    """Add ``grade SUBMISSIONS --out grades.csv`` to ``python -m transformer_course``."""
    grade = commands.add_parser(
        "grade",
        help="run and grade a class's notebooks (SUBMISSIONS/<student>/*.ipynb)",
        description="Run every student's notebooks offline, each in its own kernel, and write a "
        "CSV gradebook (passed / failed / not answered per exercise), one feedback file per "
        "student, and a flag for check cells that differ from the course's.",
    )
    grade.add_argument("submissions", help="a folder with one sub-folder of notebooks per student")
    grade.add_argument("--out", default="grades.csv", help="the CSV gradebook to write")
    grade.add_argument(
        "--course",
        default="notebooks",
        help="the course's own notebooks, to compare check cells with",
    )
    grade.add_argument(
        "--feedback", default=None, help="folder for the <student>.md files (default: OUT_feedback)"
    )
    grade.add_argument(
        "--gradescope",
        default=None,
        help="also write <student>.json in Gradescope's autograder results format into this folder",
    )
    grade.add_argument(
        "--timeout", type=int, default=600, help="seconds one cell may run before it is stopped"
    )
