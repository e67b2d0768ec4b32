"""Verdicts no student can forge: the grader asks the student's kernel for values, and judges them
itself (README "For teachers").

The registry is the course's own declaration: each check cell of a course notebook calls a
``check_…`` of :func:`progress.all_checkers`, and each argument of that call is either a literal
of the course's cell (``d_k=100``, kept as the course wrote it) or an expression the learner's
code defines (``answer``, ``stable_softmax``). After the student's notebook has run, its kernel
evaluates those expressions (:mod:`.kernel_probe`) and sends back plain data only: numbers,
strings, tuples, lists, dicts and tensors, written with ``torch.save`` and read here with
``weights_only=True``. A build exercise (a checker with ``.exercise``, :mod:`..build`) is asked
for the learner's function's results on fresh inputs: the seeds come from a secret of this
grading run (HMAC of the student and column), and the expected values are computed here.

Then the course's own checker runs in the grader's process, on those values: whatever the
student's kernel patched (``torch.allclose``, ``Feedback.__str__``, a checker, a hook that prints
"✅") changed only its own copy, and what the notebook printed is never read.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ...i18n import _
from .. import Feedback, report
from ..progress import _CHECK_CALL, all_checkers

#: A code cell line that is IPython, not Python (a magic or a shell escape): left out of parsing.
_IPYTHON_LINE = re.compile(r"^\s*[%!].*$", re.MULTILINE)


@dataclass(frozen=True)
class Probe:
    """One exercise column: the checker it calls and how each argument is obtained.

    ``arguments`` and ``keywords`` hold ``("literal", value)`` for a literal of the course's cell
    and ``("kernel", "expression")`` for what the student's kernel evaluates.
    """

    column: str
    checker: str
    module: str
    build: bool
    arguments: tuple[tuple[str, Any], ...]
    keywords: tuple[tuple[str, tuple[str, Any]], ...]

    @property
    def asks_for_hint(self) -> bool:
        """True when the course's own call asks for a hint: a hint is shown, nothing judged."""
        return any(name == "hint" for name, _argument in self.keywords)

    @property
    def expressions(self) -> list[str]:
        """What the student's kernel evaluates, in order: positional arguments, then keywords."""
        found = [value for kind, value in self.arguments if kind == "kernel"]
        return found + [value for _name, (kind, value) in self.keywords if kind == "kernel"]


def _argument(node: ast.expr, source: str) -> tuple[str, Any]:
    try:
        return "literal", ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "kernel", ast.get_source_segment(source, node) or ""


def _calls(source: str, every: set[str]) -> list[ast.Call]:
    """The exercise calls of one course cell, in the order the progress table lists them."""
    python = _IPYTHON_LINE.sub("", source)
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return []
    by_line = sorted(
        (node.lineno, node.col_offset, node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in every
    )
    found = []
    for match in _CHECK_CALL.finditer(python):
        if match.group(1) not in every:
            continue
        line = python.count("\n", 0, match.start(1)) + 1
        node = next(
            (n for ln, _c, n in by_line if ln == line and n.func.id == match.group(1)), None
        )
        if node is not None and node not in found:
            found.append(node)
    return found


def course_probes(notebook: dict[str, Any], stem: str) -> list[Probe]:
    """The exercise columns of one course notebook (JSON) with how to judge each, in order."""
    checkers = dict(all_checkers())
    seen: Counter[str] = Counter()
    probes = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        python = _IPYTHON_LINE.sub("", source)
        for call in _calls(source, set(checkers)):
            name = call.func.id  # type: ignore[attr-defined]
            seen[name] += 1
            suffix = f"#{seen[name]}" if seen[name] > 1 else ""
            check = checkers[name]
            probes.append(
                Probe(
                    column=f"{stem}:{name}{suffix}",
                    checker=name,
                    module=check.__module__,
                    build=getattr(check, "exercise", None) is not None,
                    arguments=tuple(_argument(node, python) for node in call.args),
                    keywords=tuple(
                        (k.arg or "", _argument(k.value, python)) for k in call.keywords
                    ),
                )
            )
    return probes


def trial_seed(secret: bytes, student: str, column: str) -> int:
    """The first seed of a build exercise's trials for one student: only this run knows it."""
    digest = hmac.new(secret, f"{student}\0{column}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big") % 2**30


def probe_request(probe: Probe, seed: int) -> dict[str, Any]:
    """What the student's kernel is asked for this column (JSON): expressions, and for a build
    exercise the seeds of its trials."""
    request = {"column": probe.column, "module": probe.module, "checker": probe.checker}
    request["expressions"] = probe.expressions
    if probe.build:
        trials = dict(all_checkers())[probe.checker].exercise.trials
        request["seeds"] = [seed + trial for trial in range(trials)]
    return request


_KERNEL_PROBE = "__import__('transformer_course.exercises.grading.kernel_probe', fromlist=['_'])"


def _code_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "id": "grader", "metadata": {}, "outputs": [],
            "execution_count": None, "source": source}  # fmt: skip


def _cell_of(cells: list[dict[str, Any]], checker: str, occurrence: int) -> int | None:
    """The index of the cell with the ``occurrence``-th call of ``checker`` (None: not there)."""
    seen = 0
    for index, cell in enumerate(cells):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code":
            seen += _CHECK_CALL.findall(source).count(checker)
            if seen >= occurrence:
                return index
    return None


def notebook_to_run(
    notebook: dict[str, Any], probes: list[Probe], requests: list[dict[str, Any]],
    answers: str, seconds: int,
) -> dict[str, Any]:  # fmt: skip
    """The student's notebook (JSON) with the grader's cells: a first one that notes the
    requests (:func:`.kernel_probe.prepare`, before any student code), one after each check
    cell that keeps what it passed (:func:`.kernel_probe.capture`), and a last one that answers
    the requests into the file ``answers`` (:func:`.kernel_probe.answer_probes`)."""
    cells = list(notebook.get("cells", []))
    after: dict[int, list[str]] = {}
    seen: Counter[str] = Counter()
    for probe in probes:
        seen[probe.checker] += 1
        index = _cell_of(cells, probe.checker, seen[probe.checker])
        if index is not None:
            after.setdefault(index, []).append(probe.column)
    run = [
        _code_cell(f"{_KERNEL_PROBE}.prepare(__import__('json').loads({json.dumps(requests)!r}))")
    ]
    for index, cell in enumerate(cells):
        run.append(cell)
        run += [_code_cell(f"{_KERNEL_PROBE}.capture({c!r})") for c in after.get(index, [])]
    run.append(_code_cell(f"{_KERNEL_PROBE}.answer_probes({answers!r}, {int(seconds)})"))
    added = (cell for cell in run if cell.get("id") == "grader")
    for number, cell in enumerate(added):
        cell["id"] = f"grader-{number}"
    return {**notebook, "cells": run}


class NotPlainData(Exception):
    """A question's answer that is no plain data (a function, a model): the grader cannot judge
    it outside the student's kernel, so the teacher grades it by hand."""


def _named(kind: str, base: type) -> type:
    """A stand-in class named as the student's value or error was (``TypeError``, ``function``),
    so that the checker's sentence names what the student's code gave."""
    name = kind if kind.isidentifier() else "object"
    return type(name, (base,), {})


def decode(encoded: Any) -> Any:
    """A value as the kernel sent it (:func:`.kernel_probe.encode`) back to what it stands for."""
    if not isinstance(encoded, dict):
        return _named("object", object)()
    if "value" in encoded:
        return encoded["value"]
    if encoded.get("ellipsis"):
        return Ellipsis
    return _named(str(encoded.get("unreadable", "object"))[:60], object)()


def _replayed_exercise(exercise: Any) -> Any:
    """``exercise`` with its outcome folded into the reference and the slips: the kernel sends
    the learner's outcome itself (a training step's loss and updated weights)."""
    slips = {
        description: (lambda *a, wrong=wrong: exercise._outcome(a, wrong(*a)))
        for description, wrong in (exercise.slips or {}).items()
    }
    return dataclasses.replace(
        exercise,
        outcome=None,
        reference=lambda *a: exercise._outcome(a, exercise.reference(*a)),
        slips=slips or None,
    )


def _build_verdict(probe: Probe, trials: list[Any], seed: int) -> Feedback:
    """Judge a build exercise from the learner's results on the seeds ``seed``, ``seed + 1`` …"""
    exercise = dict(all_checkers())[probe.checker].exercise
    results = iter(trials if isinstance(trials, list) else [])

    def learner(*_arguments: Any) -> Any:
        trial = next(results, None)
        if isinstance(trial, dict) and "raised" in trial:
            kind, message = (list(trial["raised"]) + ["", ""])[:2]
            raise _named(str(kind)[:60], Exception)(str(message)[:500])
        if trial is None:
            raise _named("TimeoutError", Exception)(_("no result came back for this input"))
        return decode(trial)

    learner.__name__ = exercise.name
    return _replayed_exercise(exercise).check(learner, seed=seed, check_name=probe.checker)


def verdict(probe: Probe, answer: Any, seed: int) -> Feedback | None:
    """The course checker's verdict on what the student's kernel sent for ``probe`` (``None``:
    nothing came back, or the course's call only asks for a hint). Raises NotPlainData when a
    question's answer is no plain data."""
    if answer is None or probe.asks_for_hint or not isinstance(answer, dict):
        return None
    if "raised" in answer:
        kind, message = (list(answer["raised"]) + ["", ""])[:2]
        return report(False, "", _("evaluating `{expression}` in your notebook raised {kind}: "
                                   "{error}").format(expression=", ".join(probe.expressions),
                                                     kind=kind, error=str(message)[:300]))  # fmt: skip
    if probe.build:
        return _build_verdict(probe, answer.get("trials"), seed)
    values = iter(answer.get("values") or [])

    def take(argument: tuple[str, Any]) -> Any:
        kind, value = argument
        if kind == "literal":
            return value
        encoded = next(values, None)
        if isinstance(encoded, dict) and "unreadable" in encoded:
            raise NotPlainData(str(encoded["unreadable"])[:60])
        return decode(encoded)

    arguments = [take(argument) for argument in probe.arguments]
    keywords = {name: take(argument) for name, argument in probe.keywords}
    return dict(all_checkers())[probe.checker](*arguments, **keywords)


def grade_of(feedback: Feedback | None) -> str:
    """What a gradebook cell says for a verdict: passed, failed or not answered."""
    if feedback is None or not feedback.answered or feedback.is_hint:
        return "not answered"
    return "passed" if feedback.correct else "failed"
