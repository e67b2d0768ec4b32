"""Reading what students hand in, whatever it is: one bad file never stops a class.

``grade`` (README "For teachers") copies each student's folder before anything of it runs, and
reads each notebook from that copy, never from the student's folder and never after student code
ran. The copy takes regular files only: a symbolic link is not followed (it could lead anywhere
on the teacher's machine, or nowhere, or round in a loop), a named pipe or device is skipped, and
a folder too deep, too many files or too many bytes stop the copy. Each thing skipped becomes a
sentence in the student's feedback. A notebook that cannot be read (not UTF-8, not JSON, JSON that
is no notebook) is a sentence too ("unreadable: invalid JSON at line 3, column 1"), and a
version-3 notebook is converted to version 4.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...i18n import _

#: The most bytes one student's folder may hold, files that one file may hold, and files in all.
MAX_FOLDER_BYTES = 256 * 2**20
MAX_FILE_BYTES = 64 * 2**20
MAX_FILES = 2000
#: How deep the copy goes into sub-folders.
MAX_DEPTH = 8
#: The most bytes read of one notebook.
MAX_NOTEBOOK_BYTES = 32 * 2**20


@dataclass
class CopyReport:
    """What a folder copy took and what it left out, one sentence per thing left out."""

    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def _skip_reason(mode: int) -> str:
    """Why an entry that is neither a folder nor a regular file is left out."""
    if stat.S_ISLNK(mode):
        return _("a symbolic link (links are not followed)")
    if stat.S_ISFIFO(mode):
        return _("a named pipe")
    return _("not a regular file")


def _copy_file(source: Path, target: Path, size: int, report: CopyReport) -> None:
    """Copy one regular file, opened without following a link that replaced it meanwhile."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(source, flags)
    with os.fdopen(descriptor, "rb") as reader, open(target, "wb") as writer:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            raise OSError(_("not a regular file"))
        writer.write(reader.read(size + 1)[:size])
    report.files += 1
    report.bytes += size


def _too_big(report: CopyReport, size: int) -> bool:
    return (
        report.files >= MAX_FILES or size > MAX_FILE_BYTES or report.bytes + size > MAX_FOLDER_BYTES
    )


def copy_folder(source: Path, target: Path, report: CopyReport, prefix: str = "") -> CopyReport:
    """Copy the regular files and folders of ``source`` into ``target`` (created), within the
    limits above; note every entry left out in ``report`` and return it."""
    target.mkdir(parents=True, exist_ok=True)
    with os.scandir(source) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            relative = prefix + entry.name
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode) and relative.count("/") < MAX_DEPTH:
                    copy_folder(Path(entry.path), target / entry.name, report, relative + "/")
                elif stat.S_ISDIR(mode):
                    report.skipped.append(_("{name}: a folder too deep").format(name=relative))
                elif not stat.S_ISREG(mode):
                    report.skipped.append(f"{relative}: {_skip_reason(mode)}")
                elif _too_big(report, entry.stat(follow_symlinks=False).st_size):
                    report.skipped.append(_("{name}: over the size limit").format(name=relative))
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    _copy_file(Path(entry.path), target / entry.name, size, report)
            except OSError as error:
                report.skipped.append(f"{relative}: {error.strerror or error}")
    return report


@dataclass
class ReadNotebook:
    """A submitted notebook as the grader read it: version-4 JSON, or why it could not be."""

    notebook: dict[str, Any] | None
    problem: str | None = None
    #: True when it was a version-3 notebook, converted (its cells have no ids to match by).
    converted: bool = False


def _decoded(raw: bytes) -> tuple[Any, str | None]:
    """The JSON in ``raw``, or the sentence that says why there is none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, _("unreadable: not UTF-8 text (byte 0x{byte:02x} at position {at})").format(
            byte=raw[error.start], at=error.start
        )
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, _("unreadable: invalid JSON at line {line}, column {column} ({error})").format(
            line=error.lineno, column=error.colno, error=error.msg
        )
    except RecursionError:
        return None, _("unreadable: the JSON is nested too deeply")


def read_notebook(path: Path) -> ReadNotebook:
    """Read the notebook at ``path`` (a regular file of the grader's copy) as version-4 JSON."""
    import nbformat

    with open(path, "rb") as handle:
        raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
    if len(raw) > MAX_NOTEBOOK_BYTES:
        return ReadNotebook(None, _("unreadable: larger than {mib} MiB").format(
            mib=MAX_NOTEBOOK_BYTES // 2**20))  # fmt: skip
    data, problem = _decoded(raw)
    if problem:
        return ReadNotebook(None, problem)
    if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
        return ReadNotebook(None, _("unreadable: the file holds JSON that is no notebook ({kind})")
                            .format(kind=type(data).__name__))  # fmt: skip
    converted = isinstance(data.get("nbformat"), int) and data["nbformat"] < 4
    try:
        node = nbformat.reads(json.dumps(data), as_version=4)
        nbformat.validate(node)
    except Exception as error:  # noqa: BLE001 - nbformat's errors are many; each is one sentence
        reason = " ".join(str(error).split())[:300]
        return ReadNotebook(None, _("unreadable: not a valid notebook ({error})").format(
            error=reason))  # fmt: skip
    return ReadNotebook(json.loads(nbformat.writes(node)), None, converted)
