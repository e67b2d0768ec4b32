"""A teacher grades a class: four synthetic students, run offline, graded by the course's
checkers (``python -m transformer_course grade``).

The "course" is two small notebooks made of real exercise cells of 05_scale and 07_softmax
(the course's own checkers, four exercises), so the test runs in seconds per kernel. The
students: one complete (the solutions filled in), one partial (a right answer, a wrong function,
an untouched exercise with a forged ✅ left in its stored output, 07 not handed in), one who
edited check cells (a home-made checker that always says ✅, and a check call given the answer)
and one whose only file is no notebook at all.
"""

from __future__ import annotations

import csv
import inspect
import json
from pathlib import Path

import nbformat
import pytest

from transformer_course.__main__ import main
from transformer_course.exercises.grading.tamper import edited_checks
from transformer_course.exercises.progress import checker_names
from transformer_course.exercises.solutions import scale as solutions

IMPORTS_05 = (
    "import torch\n"
    "from transformer_course.exercises.scale import (\n"
    "    check_score_variance,\n"
    "    check_score_variance_function,\n"
    "    check_scaled_attention_weights,\n"
    ")"
)
QUESTION_05 = "answer = ...\ncheck_score_variance(answer, d_k=100)"
STUB_VARIANCE = (
    "def score_variance(q: torch.Tensor, k: torch.Tensor, scaled: bool) -> float:\n"
    "    ...\n\n\ncheck_score_variance_function(score_variance)"
)
STUB_WEIGHTS = (
    "def scaled_attention_weights(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:\n"
    "    ...\n\n\ncheck_scaled_attention_weights(scaled_attention_weights)"
)
IMPORTS_07 = "from transformer_course.exercises.softmax import check_temperature_limit"
QUESTION_07 = "answer = ...\ncheck_temperature_limit(answer)"
COLUMNS = [
    "05_scale:check_score_variance",
    "05_scale:check_score_variance_function",
    "05_scale:check_scaled_attention_weights",
    "07_softmax:check_temperature_limit",
]


def _notebook(title: str, *sources: str) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell(f"# {title}")]
    cells += [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(cells):
        cell.id = f"c{index:03d}"
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return notebook


def _course() -> dict[str, nbformat.NotebookNode]:
    return {
        "05_scale": _notebook("05 · Scale", IMPORTS_05, QUESTION_05, STUB_VARIANCE, STUB_WEIGHTS),
        "07_softmax": _notebook("07 · Softmax", IMPORTS_07, QUESTION_07),
    }


def _write(folder: Path, notebooks: dict[str, nbformat.NotebookNode]) -> None:
    folder.mkdir(parents=True)
    for stem, notebook in notebooks.items():
        nbformat.write(notebook, folder / f"{stem}.ipynb")


def _answer(notebook: nbformat.NotebookNode, cell_id: str, old: str, new: str) -> None:
    cell = next(c for c in notebook.cells if c.id == cell_id)
    assert old in cell.source
    cell.source = cell.source.replace(old, new)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    for stem, notebook in _course().items():
        (root / "course").mkdir(exist_ok=True)
        nbformat.write(notebook, root / "course" / f"{stem}.ipynb")

    complete = _course()
    _answer(complete["05_scale"], "c002", "answer = ...", "answer = 100")
    _answer(complete["05_scale"], "c003", STUB_VARIANCE.split("\n\n\n")[0],
            "import math\n\n" + inspect.getsource(solutions.score_variance).rstrip())  # fmt: skip
    _answer(complete["05_scale"], "c004", STUB_WEIGHTS.split("\n\n\n")[0],
            "import math\n\n" + inspect.getsource(solutions.scaled_attention_weights).rstrip())  # fmt: skip
    _answer(complete["07_softmax"], "c002", "answer = ...", "answer = 1")
    # A student's cell that reaches out: the kernel refuses it (and the guard logs it).
    complete["07_softmax"].cells.append(nbformat.v4.new_code_cell(
        "import urllib.request\nurllib.request.urlopen('http://192.0.2.1/', timeout=5)"))  # fmt: skip
    _write(root / "submissions" / "ada", complete)

    partial = {"05_scale": _course()["05_scale"]}  # 07 not handed in
    _answer(partial["05_scale"], "c002", "answer = ...", "answer = 100")
    _answer(partial["05_scale"], "c003", "    ...",
            "    return (q * k).sum(-1).var().item()  # forgets the scaling")  # fmt: skip
    untouched = partial["05_scale"].cells[4]
    untouched.outputs = [nbformat.v4.new_output("stream", text="✅ Correct (forged)\n")]
    _write(root / "submissions" / "bo", partial)

    edited = _course()
    _answer(edited["05_scale"], "c002", "answer = ...", "answer = 100")
    _answer(edited["05_scale"], "c003", "def score_variance",
            "def check_score_variance_function(function):\n    return '✅ Correct'\n\n\ndef score_variance")  # fmt: skip
    _answer(edited["05_scale"], "c004", STUB_WEIGHTS.split("\n\n\n")[0],
            "import math\n\n" + inspect.getsource(solutions.scaled_attention_weights).rstrip())  # fmt: skip
    _answer(
        edited["07_softmax"],
        "c002",
        "check_temperature_limit(answer)",
        "check_temperature_limit(1)",
    )
    _write(root / "submissions" / "cy", edited)

    # A file that is no notebook (a failed upload): no kernel starts, the class goes on.
    (root / "submissions" / "dee").mkdir()
    (root / "submissions" / "dee" / "05_scale.ipynb").write_text("{not json", encoding="utf-8")

    out = root / "grades.csv"
    # Sandboxed where bubblewrap works (CI installs it); elsewhere (a contributor's macOS) the
    # same class runs trusted, so `make test` stays green there and the grades are still checked.
    from transformer_course.exercises.grading import sandbox

    trusted = [] if sandbox.sandbox_problem() is None else ["--trusted-submissions"]
    status = main(["grade", str(root / "submissions"), "--out", str(out),
                   "--course", str(root / "course"), "--timeout", "120",
                   "--gradescope", str(root / "gradescope"), *trusted])  # fmt: skip
    assert status == 0
    with out.open(encoding="utf-8", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return rows, root / "grades_feedback", root


def test_the_gradebook_has_one_row_per_student_and_one_column_per_exercise(graded):
    rows, _, _ = graded
    assert sorted(rows) == ["ada", "bo", "cy", "dee"]
    assert list(rows["ada"]) == ["student", "passed", "of", "edited checks", "problems", *COLUMNS]


def test_the_complete_student(graded):
    rows, feedback, _ = graded
    row = rows["ada"]
    assert [row[c] for c in COLUMNS] == ["passed"] * 4
    assert (row["passed"], row["of"], row["edited checks"], row["problems"]) == ("4", "4", "0", "")
    text = (feedback / "ada.md").read_text(encoding="utf-8")
    assert "4 of 4 exercises pass." in text and "differ from the course" not in text


def test_the_partial_student(graded):
    rows, feedback, _ = graded
    row = rows["bo"]
    assert [row[c] for c in COLUMNS] == ["passed", "failed", "not answered", "not answered"]
    assert row["edited checks"] == "0"
    assert row["problems"] == "07_softmax.ipynb was not handed in"
    text = (feedback / "bo.md").read_text(encoding="utf-8")
    # The checker's own message for the wrong function reaches the student.
    failed = text.split("### 05_scale:check_score_variance_function: failed")[1].split("###")[0]
    assert "❌" in failed
    assert "forged" not in text, "stored outputs are cleared before the run"


def test_the_gradescope_results(graded):
    _, _, root = graded
    results = json.loads((root / "gradescope" / "bo.json").read_text(encoding="utf-8"))
    assert results["score"] == 1 and "07_softmax.ipynb was not handed in" in results["output"]
    assert [(t["name"], t["score"], t["max_score"]) for t in results["tests"]] == [
        (COLUMNS[0], 1, 1), (COLUMNS[1], 0, 1), (COLUMNS[2], 0, 1), (COLUMNS[3], 0, 1)
    ]  # fmt: skip
    assert results["tests"][1]["output"].startswith("failed\n❌")
    flagged = json.loads((root / "gradescope" / "cy.json").read_text(encoding="utf-8"))
    assert flagged["output"].count("Check cell differs from the course's") == 2


def test_the_student_who_edited_check_cells_is_flagged(graded):
    rows, feedback, _ = graded
    row = rows["cy"]
    assert row["edited checks"] == "2"
    text = (feedback / "cy.md").read_text(encoding="utf-8")
    assert "05_scale: cell c003 defines its own check_score_variance_function" in text
    assert (
        "07_softmax: the check call of check_temperature_limit (cell c002) was edited: "
        "expected `check_temperature_limit(answer)`, found `check_temperature_limit(1)`"
    ) in text


def test_a_file_that_is_no_notebook_is_a_problem_not_a_crash(graded):
    rows, feedback, _ = graded
    row = rows["dee"]
    assert [row[c] for c in COLUMNS] == ["not answered"] * 4
    assert row["edited checks"] == "0"
    assert row["problems"].startswith("05_scale: unreadable: invalid JSON at line 1, column 2")
    assert row["problems"].endswith("; 07_softmax.ipynb was not handed in")
    assert "0 of 4 exercises pass." in (feedback / "dee.md").read_text(encoding="utf-8")


def test_the_submissions_are_left_as_they_were(graded):
    _, _, root = graded
    notebook = nbformat.read(root / "submissions" / "bo" / "05_scale.ipynb", as_version=4)
    assert notebook.cells[4].outputs[0]["text"] == "✅ Correct (forged)\n"
    assert sorted(p.name for p in (root / "submissions" / "bo").iterdir()) == ["05_scale.ipynb"]


def test_an_honest_notebook_has_no_edits():
    course = _course()["05_scale"]
    assert edited_checks(course, course, checker_names()[0]) == []


def test_a_missing_submissions_folder_is_one_line(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nothing"), "--course", str(tmp_path)]) == 2
    assert "error: no student folders in" in capsys.readouterr().err


def test_no_course_notebook_is_flagged_against_itself():
    every = checker_names()[0]
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9]*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        assert edited_checks(notebook, notebook, every) == [], path.name


def test_without_a_sandbox_grade_refuses_unless_trusted(tmp_path, capsys, monkeypatch):
    from transformer_course.exercises.grading import sandbox

    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    assert main(["grade", str(tmp_path / "submissions"), "--course", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "cannot sandbox students' code here (bubblewrap (bwrap) is not installed)" in error
    assert "--trusted-submissions" in error


def test_trusted_submissions_run_without_a_sandbox_in_a_clean_environment(tmp_path, monkeypatch):
    from transformer_course.exercises.grading import sandbox

    for stem, notebook in _course().items():
        (tmp_path / "course").mkdir(exist_ok=True)
        nbformat.write(notebook, tmp_path / "course" / f"{stem}.ipynb")
    trusting = {"07_softmax": _course()["07_softmax"]}
    # Right (1) only when the teacher's variable did not reach the kernel.
    _answer(trusting["07_softmax"], "c002", "answer = ...",
            "import os\nanswer = 3 if 'TEACHER_SECRET' in os.environ else 1")  # fmt: skip
    _write(tmp_path / "submissions" / "ada", trusting)
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setenv("TEACHER_SECRET", "teacher-token")
    out = tmp_path / "grades.csv"
    assert main(["grade", str(tmp_path / "submissions"), "--out", str(out), "--course",
                 str(tmp_path / "course"), "--trusted-submissions"]) == 0  # fmt: skip
    with out.open(encoding="utf-8", newline="") as handle:
        row = next(csv.DictReader(handle))
    assert [row[c] for c in COLUMNS] == ["not answered"] * 3 + ["passed"]
    assert row["problems"] == "05_scale.ipynb was not handed in"
