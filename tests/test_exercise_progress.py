"""The progress table: verdicts read from stored outputs, or from a fresh run of a copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from transformer_course.exercises.progress import (
    OPTIONAL_EXERCISES,
    checker_names,
    course_progress,
    progress_summary,
)

REPO = Path(__file__).resolve().parents[1]


def _cell(source: str, outputs: list[dict] | None = None) -> dict:
    return {
        "cell_type": "code",
        "id": f"c{abs(hash(source)) % 10**8}",
        "metadata": {},
        "execution_count": None,
        "source": source,
        "outputs": outputs or [],
    }


def _result(text: str) -> dict:
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": text},
    }


def _write(folder: Path, name: str, cells: list[dict]) -> Path:
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = folder / name
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_stored_verdicts_are_tabled(tmp_path):
    _write(
        tmp_path,
        "06_mask.ipynb",
        [
            _cell("x = 1"),
            _cell(
                "def mask_future(s):\n    ...\n\n\ncheck_mask_future(mask_future)",
                [_result("✅ Correct: yes")],
            ),
            _cell(
                "answer = ...\ncheck_visible_keys(answer, query=5)",
                [_result("✏️  Not answered yet: …")],
            ),
            _cell("check_temperature_limit(0.2)", [_result("❌ Not quite: no")]),
            _cell(
                "check_broken_layer(3, suspect)",
                [{"output_type": "error", "ename": "NameError", "evalue": "", "traceback": []}],
            ),
            _cell("check_mha_params(answer, hint=True)", [_result("💡 Hint: the lower triangle")]),
            _cell("# check_split_shape(1) is a comment\ncheck_sees_the_future(f)"),
            _cell(
                "print(check_initial_loss(8.2, 3771))",
                [{"output_type": "stream", "name": "stdout", "text": "ok"}],
            ),
        ],
    )
    table = course_progress(tmp_path)
    assert list(table["exercise"]) == [
        "check_mask_future",
        "check_visible_keys",
        "check_temperature_limit",
        "check_broken_layer",
        "check_mha_params",
        "check_sees_the_future",
    ]
    assert list(table["status"]) == [
        "passed",
        "not answered",
        "not yet right",
        "error",
        "hint shown",
        "not run",
    ]
    assert table.loc[0, "kind"] == "build" and table.loc[1, "kind"] == "question"
    summary = progress_summary(table)
    # check_broken_layer and check_sees_the_future live in 06's folded section: optional
    main = ~table["exercise"].isin(OPTIONAL_EXERCISES)
    builds = int(((table["kind"] == "build") & main).sum())
    assert summary.loc["06_mask"].to_dict() == {
        "build": builds,
        "questions": 4 - builds,
        "passed": 1,
        "of": 4,
        "optional": 2,
        "optional passed": 0,
    }


def test_no_notebooks_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="pass the notebooks folder"):
        course_progress(tmp_path)


def test_run_executes_a_copy_and_leaves_the_file_alone(tmp_path):
    path = _write(
        tmp_path,
        "01_demo.ipynb",
        [
            _cell(
                "from transformer_course.exercises.mask import check_mask_future\n"
                "from transformer_course.exercises.solutions.mask import mask_future\n"
                "check_mask_future(mask_future)"
            ),
            _cell(
                "from transformer_course.exercises.mask import check_visible_keys\ncheck_visible_keys(...)"
            ),
        ],
    )
    before = path.read_bytes()
    table = course_progress(tmp_path, run=True, timeout=120)
    assert list(table["status"]) == ["passed", "not answered"]
    assert path.read_bytes() == before


def test_the_course_notebooks_start_unanswered():
    """A fresh clone: no exercise is passed or failed yet, every one is waiting for the learner."""
    table = course_progress(Path(__file__).resolve().parent.parent / "notebooks")
    assert len(table) > 0
    assert set(table["status"]) <= {"not answered"}, table[
        table["status"] != "not answered"
    ].to_string()


def test_the_check_command_tables_and_exits_by_the_result(tmp_path, capsys):
    from transformer_course.cli import main

    _write(tmp_path, "06_mask.ipynb", [_cell("check_mask_future(f)", [_result("✅ Correct: yes")])])
    assert main(["check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "check_mask_future" in out and "1 of 1 exercises pass." in out
    _write(
        tmp_path,
        "07_softmax.ipynb",
        [_cell("check_stable_softmax(f)", [_result("✏️  Not answered yet: …")])],
    )
    assert main(["check", str(tmp_path)]) == 1
    assert "1 of 2 exercises pass." in capsys.readouterr().out
    assert main(["check", str(tmp_path / "nowhere")]) == 2  # one 'error:' line, no traceback
    assert "error: no course notebooks" in capsys.readouterr().err


def _folded_and_main_checks() -> tuple[set[str], set[str]]:
    """The checks called in the English notebooks' folded Going-deeper sections, and elsewhere."""
    import re
    import sys

    sys.path.insert(0, str(REPO / "tools"))
    from course_sections import folded_flags

    every, _builds = checker_names()
    folded, main = set(), set()
    for path in sorted((REPO / "notebooks").glob("[0-9]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell, in_fold in folded_flags(cells):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            calls = set(re.findall(r"^\s*(?:print\()?\s*(check_\w+)\(", source, re.M)) & every
            (folded if in_fold else main).update(calls)
    return folded, main


def test_the_optional_exercises_are_exactly_the_folded_ones():
    folded, main = _folded_and_main_checks()
    assert folded == set(OPTIONAL_EXERCISES)
    assert not folded & main, "an exercise is both on the main path and in a folded section"


def test_the_whole_main_path_can_reach_100_percent():
    import pandas as pd

    rows = [
        ("02_embeddings", "check_sample_batch", "build", "passed"),
        ("02_embeddings", "check_unread_row_gradient", "build", "not answered"),
        ("09_transformer_block", "check_post_norm_warmup", "question", "passed"),
    ]
    table = pd.DataFrame(rows, columns=["notebook", "exercise", "kind", "status"])
    summary = progress_summary(table)
    assert summary.loc["02_embeddings"].tolist() == [1, 0, 1, 1, 1, 0]  # main path: 1 of 1
    # a notebook whose only exercise is optional: nothing on its main path to pass
    assert summary.loc["09_transformer_block"].tolist() == [0, 0, 0, 0, 1, 1]
    assert (summary["passed"] == summary["of"]).all()
