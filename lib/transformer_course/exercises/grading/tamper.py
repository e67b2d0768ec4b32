"""Check cells a student edited: flagged by comparing with the course's own (README "For teachers").

The grader reads each submitted notebook before any of its code runs and compares it with the
course's notebook: the lines from each exercise's ``check_…(…)`` call on must be the course's own
(cells matched by id; in a version-3 notebook, which has no ids, by content), and no cell may
define, assign or import a name ``check_…`` that the course notebook does not import. A flag is
a note for the teacher; the verdicts themselves never depend on the notebook's cells
(:mod:`.probes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...i18n import _
from ..progress import _CHECK_CALL

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
    student: dict[str, Any], course: dict[str, Any], every_checker: set[str], *, by_id: bool = True
) -> list[str]:
    """What differs in ``student``'s check cells from the ``course`` notebook's, one sentence
    each; an empty list for an honest submission. ``by_id=False`` matches cells by their check
    lines instead of their ids (a version-3 notebook, converted, has new ids)."""
    if by_id:
        changed = _changed_check_calls(student, course, every_checker)
    else:
        changed = _changed_by_content(student, course, every_checker)
    return changed + _own_checkers(student, course)


def _changed_by_content(
    student: dict[str, Any], course: dict[str, Any], every_checker: set[str]
) -> list[str]:
    """The course's check cells whose lines from the check call on no cell of ``student`` has."""
    found = {
        _check_lines(_source(cell))
        for cell in student.get("cells", [])
        if cell.get("cell_type") == "code"
    }
    return [
        _("the check cell of {names} (cell {cell}) is missing").format(
            names=", ".join(expected.exercises), cell=expected.cell_id
        )
        for expected in course_check_cells(course, every_checker)
        if expected.check_lines not in found
    ]


def _changed_check_calls(
    student: dict[str, Any], course: dict[str, Any], every_checker: set[str]
) -> list[str]:
    """The course's check cells that ``student`` lacks, or whose lines from the check call on
    differ from the course's (cells matched by id)."""
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
        elif (lines := _check_lines(_source(cell))) != expected.check_lines:
            found.append(
                _(
                    "the check call of {names} (cell {cell}) was edited: expected `{expected}`, found `{got}`"
                ).format(
                    names=names,
                    cell=expected.cell_id,
                    expected=" / ".join(expected.check_lines),
                    got=" / ".join(lines) or _("no check call"),
                )
            )
    return found


def _own_checkers(student: dict[str, Any], course: dict[str, Any]) -> list[str]:
    """The cells of ``student`` that define a ``check_…`` of their own, or import checkers that
    the ``course`` notebook does not import."""
    course_imports = {
        line.strip()
        for cell in course.get("cells", [])
        for line in _IMPORTS_CHECK.findall(_source(cell))
    }
    found = []
    for cell in student.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source, cell_id = _source(cell), cell.get("id", "?")
        for match in _DEFINES_CHECK.finditer(source):
            name = next(group for group in match.groups() if group)
            found.append(_("cell {cell} defines its own {name}").format(cell=cell_id, name=name))
        found += [
            _("cell {cell} imports checkers the course does not: `{line}`").format(
                cell=cell_id, line=line.strip()
            )
            for line in _IMPORTS_CHECK.findall(source)
            if line.strip() not in course_imports
        ]
    return found
