"""Grading a class with the course's own checkers (README "For teachers").

``python -m transformer_course grade SUBMISSIONS/ --out grades.csv`` takes one folder per
student (``SUBMISSIONS/<student>/*.ipynb``, the notebooks named as the course names them) and,
for each student:

- copies their folder (regular files only: links are not followed, :mod:`.submissions`) and reads
  each notebook from that copy before any of its code runs: a file that cannot be read becomes a
  sentence in that student's row ("unreadable: invalid JSON at line 3, column 1"), and check cells
  that differ from the course's are flagged (:mod:`.tamper`);
- runs each notebook in a sandbox of its own (:mod:`.sandbox`: bubblewrap, no network, an
  unprivileged user, a clean environment, limits on memory, CPU, processes, file size and wall
  clock), then makes the grader's own calls in the same kernel (:mod:`.kernel_probe`): the values
  of the answers, and the results of each build exercise's function on inputs seeded from a
  secret of this run;
- judges those values with the course's checkers in this process (:mod:`.probes`): what the
  notebook printed is never read, so nothing a student's kernel patches or prints changes a
  verdict.

It writes a CSV gradebook (one row per student, one column per exercise of the course,
``NN_topic:check_name``, holding ``passed``, ``failed`` or ``not answered``, or ``ungraded``
for a question whose answer is no plain data (a function, a model); every text cell
escaped against spreadsheet formulas), one Markdown feedback file per student with the checkers'
own messages, and with ``--gradescope DIR`` one ``DIR/<student>.json`` in the results format of
Gradescope's autograder. The column set comes from the course's own notebooks (``--course``), so
a notebook a student did not hand in shows as ``not answered`` and an extra file is ignored.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import _checks as check
from ...i18n import N_, _
from ..progress import checker_names
from . import offline, sandbox
from .probes import (
    NotPlainData,
    Probe,
    course_probes,
    grade_of,
    notebook_to_run,
    probe_request,
    trial_seed,
    verdict,
)
from .submissions import CopyReport, copy_folder, read_notebook
from .tamper import edited_checks

#: The most bytes read back from a sandbox: the answers to the grader's calls, its status.
MAX_ANSWERS_BYTES = 64 * 2**20
MAX_STATUS_BYTES = 64 * 2**10
#: The longest feedback file and Gradescope output, in characters.
MAX_FEEDBACK_CHARS = 200_000
#: A spreadsheet reads a cell that starts with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class StudentResult:
    """One student's grades: exercise column -> grade, with feedback and problems found."""

    student: str
    grades: dict[str, str] = field(default_factory=dict)
    feedback: dict[str, str] = field(default_factory=dict)
    edited: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GradingRun:
    """What every student's grading shares: the course, its registry of calls, the limits, the
    secret the inputs are seeded from, and whether notebooks run in a sandbox."""

    course: dict[str, dict[str, Any]]
    probes: dict[str, list[Probe]]
    timeout: int
    limits: sandbox.Limits
    scratch: Path
    sandboxed: bool
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    @property
    def every_checker(self) -> set[str]:
        return checker_names()[0]


def _submitted(folder: Path, stem: str) -> Path | None:
    """The student's copy of the course notebook ``stem``: the same name, else the one file that
    starts with its number (``05_scale (1).ipynb``)."""
    exact = folder / f"{stem}.ipynb"
    if exact.is_file() and not exact.is_symlink():
        return exact
    number = stem.split("_")[0]
    candidates = sorted(p for p in folder.glob(f"{number}_*.ipynb") if not p.is_symlink())
    return candidates[0] if len(candidates) == 1 else None


def _read_back(path: Path, limit: int) -> bytes | None:
    """A file the sandbox wrote, read without following a link and at most ``limit`` bytes; None
    when it is missing, no regular file or too large."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def _answers(exchange: Path) -> tuple[dict[str, Any], str | None]:
    """The kernel's answers to the grader's calls (plain data only), and a problem if any."""
    import torch

    raw = _read_back(exchange / sandbox.ANSWERS_FILE, MAX_ANSWERS_BYTES)
    if raw is None:
        return {}, None
    try:
        answers = torch.load(io.BytesIO(raw), weights_only=True)
    except Exception as error:  # noqa: BLE001 - whatever the student's kernel wrote there
        return {}, _("the answers sent back could not be read ({error})").format(
            error=str(error)[:200]
        )
    return (answers, None) if isinstance(answers, dict) else ({}, None)


def _stop_reason(exchange: Path, finished: bool, run: GradingRun) -> str | None:
    """Why the notebook's run stopped early, in a sentence (None when it ran to the end)."""
    if not finished:
        return _("the notebook ran past its time budget of {seconds} s and was stopped").format(
            seconds=run.limits.wall_seconds
        )
    raw = _read_back(exchange / sandbox.STATUS_FILE, MAX_STATUS_BYTES)
    try:
        status = json.loads(raw) if raw else None
    except ValueError:
        status = None
    if not isinstance(status, dict):
        return _("the run ended without a status (the kernel's processes were killed, or a limit "
                 "was reached)")  # fmt: skip
    detail = str(status.get("detail", ""))[:300]
    return {
        None: None,
        "timeout": _(
            "a cell ran longer than {timeout} s and was stopped; later cells did not run"
        ).format(timeout=run.timeout),  # fmt: skip
        "dead": _("the kernel died ({error}); later cells did not run").format(error=detail),
    }.get(status.get("stopped"), _("could not be run: {error}").format(error=detail))


def _start(run: GradingRun, home: Path, exchange: Path, guard: Path | None) -> bool:
    """Run the request in ``exchange`` on the student's files in ``home``: sandboxed, or (when
    trusted) as the teacher with the clean environment. Returns False past the wall clock."""
    log = exchange.parent / f"{exchange.name}.log"  # outside the sandbox: only the grader's
    if run.sandboxed:
        sandbox.hand_over(home)
        sandbox.hand_over(exchange)
        env = sandbox.sandbox_environment(sandbox.HOME, "/tmp")
        stubs = run.scratch / "solution-stubs"
        command = sandbox.bwrap_command(home, exchange, stubs, env)
        return sandbox.run_driver(command, None, run.limits, log, exchange)
    temporary = exchange / "tmp"
    temporary.mkdir(exist_ok=True)
    env = sandbox.sandbox_environment(str(home), str(temporary), str(guard) if guard else None)
    command = [sys.executable, "-m", f"{__name__}.driver", str(exchange / "request.json")]
    limits = sandbox.Limits(**{**run.limits.__dict__, "processes": None})
    return sandbox.run_driver(command, env, limits, log, exchange)


def _run_notebook(
    run: GradingRun, notebook: dict[str, Any], stem: str, home: Path, relative: Path,
    student: str,
) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
    """Run one submitted notebook (JSON, as read before) and the grader's calls; return the
    answers by column and the problems met."""
    exchange = Path(
        tempfile.mkdtemp(prefix=f"exchange-{stem}-", dir=run.scratch / "students" / student)
    )
    requests = [
        probe_request(probe, trial_seed(run.secret, student, probe.column))
        for probe in run.probes[stem]
        if not probe.asks_for_hint
    ]
    kernel_home = Path(sandbox.HOME) if run.sandboxed else home
    answers_file = (Path(sandbox.EXCHANGE) if run.sandboxed else exchange) / sandbox.ANSWERS_FILE
    seconds = max(5, run.timeout // max(1, len(requests)))
    to_run = notebook_to_run(notebook, run.probes[stem], requests, str(answers_file), seconds)
    request = {"notebook": to_run, "cwd": str(kernel_home / relative), "timeout": run.timeout}
    (exchange / "request.json").write_text(json.dumps(request), encoding="utf-8")
    finished = _start(run, home, exchange, run.scratch / "guard")
    problems = []
    stopped = _stop_reason(exchange, finished, run)
    answers, unreadable = _answers(exchange)
    problems += [f"{stem}: {problem}" for problem in (stopped, unreadable) if problem]
    return answers, problems


def _judge(result: StudentResult, run: GradingRun, stem: str, answers: dict[str, Any]) -> None:
    """Write into ``result`` the course checkers' verdicts on ``answers`` for notebook ``stem``."""
    for probe in run.probes[stem]:
        try:
            feedback = verdict(probe, answers.get(probe.column),
                               trial_seed(run.secret, result.student, probe.column))  # fmt: skip
        except NotPlainData as kind:
            result.grades[probe.column] = "ungraded"
            result.feedback[probe.column] = _(
                "the answer is a {kind}, not plain data (a number, text, a tuple or a tensor): "
                "the grader cannot judge it outside the student's kernel; grade it by hand"
            ).format(kind=kind)
            continue
        except Exception as error:  # noqa: BLE001 - never let one answer stop the class
            result.grades[probe.column] = "failed"
            result.feedback[probe.column] = _("the grader could not judge this answer ({error})"
                                              ).format(error=str(error)[:300])  # fmt: skip
            continue
        result.grades[probe.column] = grade_of(feedback)
        if feedback is not None:
            result.feedback[probe.column] = str(feedback)


def _read_submissions(
    result: StudentResult, run: GradingRun, home: Path
) -> dict[str, tuple[dict[str, Any], Path]]:
    """Every course notebook the student handed in, read (and checked for edited check cells)
    before any student code runs: stem -> (JSON, its folder relative to ``home``)."""
    read_all = {}
    for stem, course_notebook in run.course.items():
        path = _submitted(home, stem)
        if path is None:
            if run.probes[stem]:
                result.problems.append(_("{stem}.ipynb was not handed in").format(stem=stem))
            continue
        read = read_notebook(path)
        if read.problem or read.notebook is None:
            result.problems.append(f"{stem}: {read.problem}")
            continue
        if read.converted:
            result.problems.append(f"{stem}: " + _("a version-3 notebook, converted to version "
                                                   "4; its check cells were matched by content"))  # fmt: skip
        result.edited += [
            f"{stem}: {sentence}"
            for sentence in edited_checks(
                read.notebook, course_notebook, run.every_checker, by_id=not read.converted
            )  # fmt: skip
        ]
        read_all[stem] = (read.notebook, path.parent.relative_to(home))
    return read_all


def grade_student(folder: Path, run: GradingRun) -> StudentResult:
    """Copy, read, run and grade one student's folder (this module's docstring)."""
    result = StudentResult(folder.name)
    student_scratch = run.scratch / "students" / folder.name
    student_scratch.mkdir(parents=True)
    home = student_scratch / "home"
    copied = copy_folder(folder, home, CopyReport())
    result.problems += [_("left out {entry}").format(entry=entry) for entry in copied.skipped]
    submitted = _read_submissions(result, run, home)
    for stem in run.course:
        answers: dict[str, Any] = {}
        if stem in submitted:
            notebook, relative = submitted[stem]
            answers, problems = _run_notebook(run, notebook, stem, home, relative, folder.name)
            result.problems += problems
        _judge(result, run, stem, answers)
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
    """The Markdown feedback file of one student (at most :data:`MAX_FEEDBACK_CHARS`)."""
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
    text = "\n".join(lines)
    if len(text) <= MAX_FEEDBACK_CHARS:
        return text
    return (
        text[:MAX_FEEDBACK_CHARS]
        + "\n\n"
        + _("(feedback cut at {n} characters)").format(n=MAX_FEEDBACK_CHARS)
    )


def gradescope_results(result: StudentResult) -> dict[str, Any]:
    """One student's grades in Gradescope's autograder ``results.json`` format."""
    notes = [
        _("Check cell differs from the course's: {s}").format(s=s) for s in result.edited
    ] + result.problems
    return {
        "score": sum(grade == "passed" for grade in result.grades.values()),
        "output": "\n".join(notes)[:MAX_FEEDBACK_CHARS],
        "tests": [
            {
                "name": column,
                "score": 1 if grade == "passed" else 0,
                "max_score": 1,
                "status": "passed" if grade == "passed" else "failed",
                "output": f"{grade}\n{result.feedback.get(column, '')}".strip()[:10_000],
            }
            for column, grade in result.grades.items()
        ],
    }


def spreadsheet_safe(value: Any) -> Any:
    """``value`` with a ``'`` in front when it is text a spreadsheet would read as a formula
    (a student folder named ``=HYPERLINK(…)``)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


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
    row = {
        "student": result.student,
        "passed": sum(grade == "passed" for grade in result.grades.values()),
        "of": len(result.grades),
        "edited checks": len(result.edited),
        "problems": "; ".join(result.problems)[:10_000],
        **result.grades,
    }
    return {column: spreadsheet_safe(value) for column, value in row.items()}


def _student_folders(submissions: Path) -> list[Path]:
    """The entries of ``submissions`` that are students: folders, and links (which are not
    followed: they get a row that says so), sorted; an error when there is none."""
    students = []
    if submissions.is_dir():
        for entry in sorted(os.scandir(submissions), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
                students.append(Path(entry.path))
    if not students:
        raise FileNotFoundError(
            _("no student folders in {folder}: expected SUBMISSIONS/<student>/*.ipynb").format(
                folder=submissions.resolve()
            )
        )
    return students


def _course_columns(run: GradingRun) -> list[str]:
    return [probe.column for probes in run.probes.values() for probe in probes]


def _graded_safely(folder: Path, run: GradingRun) -> StudentResult:
    """One student's result, whatever their folder holds: a folder that is a link, or anything
    the grader did not foresee, is a row with its reason, never the end of the class."""
    if folder.is_symlink():
        result = StudentResult(folder.name)
        result.problems.append(_("the folder is a symbolic link: not followed"))
    else:
        try:
            return grade_student(folder, run)
        except Exception as error:  # noqa: BLE001 - one student never stops the class
            result = StudentResult(folder.name)
            result.problems.append(_("could not be graded: {error}").format(
                error=" ".join(str(error).split())[:300]))  # fmt: skip
    result.grades = {column: "not answered" for column in _course_columns(run)}
    return result


def _prepare(run: GradingRun) -> None:
    """The run's shared files: the solution stubs the sandboxes mount, or the network guard."""
    if run.sandboxed:
        sandbox.write_solution_stubs(run.scratch / "solution-stubs")
    else:
        offline.write_sitecustomize(run.scratch / "guard")
    os.chmod(run.scratch, 0o755)  # the sandbox's user reads the stubs and its own folders


def _check_options(timeout: int, trusted: bool) -> None:
    check.number("timeout", timeout, above=0, hint=N_("(seconds)"))
    problem = sandbox.sandbox_problem()
    if problem and not trusted:
        raise sandbox.SandboxUnavailableError(
            _(
                "cannot sandbox students' code here ({problem}). Install bubblewrap (Linux: "
                "apt-get install bubblewrap) or grade inside a throw-away virtual machine or "
                "container with --trusted-submissions: without a sandbox, students' code runs as "
                "you, with your files"
            ).format(problem=problem)  # fmt: skip
        )


def grade_class(
    submissions: str | os.PathLike,
    out: str | os.PathLike,
    *,
    course: str | os.PathLike = "notebooks",
    feedback: str | os.PathLike | None = None,
    gradescope: str | os.PathLike | None = None,
    timeout: int = 600,
    limits: sandbox.Limits | None = None,
    trusted_submissions: bool = False,
    say=print,
):
    """Grade every student folder in ``submissions``; write the CSV gradebook ``out``, one
    ``<student>.md`` per student into ``feedback`` (default: ``<out without .csv>_feedback``)
    and, with ``gradescope``, one ``<student>.json`` in Gradescope's results format there.
    ``timeout`` is one cell's limit, ``limits`` each notebook's (:class:`.sandbox.Limits`);
    without bubblewrap it refuses unless ``trusted_submissions``. Returns the gradebook as a
    pandas DataFrame (one row per student)."""
    import pandas as pd

    out = Path(out)
    students = _student_folders(Path(submissions))
    _check_options(timeout, trusted_submissions)
    course_notebooks = read_course(Path(course))
    feedback_dir = Path(feedback) if feedback is not None else out.with_name(f"{out.stem}_feedback")
    feedback_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="grade-", ignore_cleanup_errors=True) as scratch:
        run = GradingRun(
            course=course_notebooks,
            probes={stem: course_probes(nb, stem) for stem, nb in course_notebooks.items()},
            timeout=timeout,
            limits=limits or sandbox.Limits(),
            scratch=Path(scratch),
            sandboxed=sandbox.sandbox_problem() is None,
        )
        _prepare(run)
        for number, folder in enumerate(students, 1):
            say(f"[{number}/{len(students)}] {folder.name}")
            rows.append(_write_student(_graded_safely(folder, run), feedback_dir, gradescope))
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
        description="Run every student's notebooks, each in a sandbox of its own (bubblewrap: "
        "no network, an unprivileged user, limits), judge the answers with the course's "
        "checkers in the grader's own process, and write a CSV gradebook (passed / failed / "
        "not answered per exercise), one feedback file per student, and a flag for check cells "
        "that differ from the course's.",
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
    _add_limit_options(grade)


def _add_limit_options(grade) -> None:
    """The sandbox's limits and the escape hatch, as ``grade`` options."""
    defaults = sandbox.Limits()
    grade.add_argument("--notebook-timeout", type=int, default=defaults.wall_seconds,
                       help="seconds one notebook may run in all (wall clock) before its "
                       "sandbox is stopped")  # fmt: skip
    grade.add_argument("--memory", type=int, default=defaults.memory_mib,
                       help="MiB of memory each process of a student's run may map")  # fmt: skip
    grade.add_argument("--cpu", type=int, default=defaults.cpu_seconds,
                       help="CPU seconds each process of a student's run may use")  # fmt: skip
    grade.add_argument(
        "--trusted-submissions",
        action="store_true",
        help="run students' code without a sandbox, as you, where bubblewrap is missing (only "
        "inside a throw-away virtual machine or container)",
    )
