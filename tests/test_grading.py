"""A teacher grades a class: three synthetic students, run offline, graded by the course's
checkers (``python -m transformer_course grade``).

The "course" is two small notebooks made of real exercise cells of 05_scale and 07_softmax
(the course's own checkers, four exercises), so the test runs in seconds per kernel. The
students: one complete (the solutions filled in), one partial (a right answer, a wrong function,
an untouched exercise with a forged ✅ left in its stored output, 07 not handed in) and one who
edited check cells (a home-made checker that always says ✅, and a check call given the answer).
"""

from __future__ import annotations

import csv
import inspect
import json
from pathlib import Path

import nbformat
import pytest

from transformer_course.__main__ import main
from transformer_course.exercises.grading import edited_checks, offline
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

    out = root / "grades.csv"
    blocked = root / "blocked.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(offline.BLOCKED_LOG_ENV_VAR, str(blocked))
        status = main(["grade", str(root / "submissions"), "--out", str(out),
                       "--course", str(root / "course"), "--timeout", "120",
                       "--gradescope", str(root / "gradescope")])  # fmt: skip
    assert status == 0
    assert "192.0.2.1" in blocked.read_text(encoding="utf-8"), "students' kernels are offline"
    with out.open(encoding="utf-8", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return rows, root / "grades_feedback", root


def test_the_gradebook_has_one_row_per_student_and_one_column_per_exercise(graded):
    rows, _, _ = graded
    assert sorted(rows) == ["ada", "bo", "cy"]
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
