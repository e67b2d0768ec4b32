"""The progress table: verdicts read from stored outputs, or from a fresh run of a copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from transformer_course.exercises.progress import course_progress, progress_summary


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
    builds = int((table["kind"] == "build").sum())  # check_sees_the_future may be either kind
    assert summary.loc["06_mask"].to_dict() == {
        "build": builds,
        "questions": 6 - builds,
        "passed": 1,
        "of": 6,
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
