"""Issue 26's caps on the learner's main path, and the counter behind them (tools/measure_course.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import measure_course  # noqa: E402
from course_sections import count_words, words  # noqa: E402


def _md(text: str, **metadata) -> dict:
    return {"cell_type": "markdown", "metadata": metadata, "source": text}


def _code(text: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": []}


def test_counter_on_a_small_notebook():
    nb = {
        "cells": [
            _md("# 99 · Demo\n\nOne two three."),  # 5 words (the heading counts)
            _md("## 1. Main\n\nFour words of prose.", **{"jp-MarkdownHeadingCollapsed": False}),
            _code("x = 1  # code never counts"),
            _md("## Going deeper: the pins\n\nthese seven words are folded away now"),
            _md("### A sub-heading inside\n\nstill folded"),
            _code("y = 2"),
            _md("## 2. Back on the path\n\nyes"),  # a heading of the same level ends the fold
            _md("Kept <details><summary>Why</summary>hidden words here</details> visible"),
        ]
    }
    main, folded = count_words(nb)
    assert main == 5 + 6 + 6 + 2
    # heading (4) + prose (7) + sub-heading (3) + prose (2) + <details> (4)
    assert folded == 4 + 7 + 3 + 2 + 4


def test_counter_removes_code_maths_tags_and_link_targets():
    text = (
        "A ```python\nnot = counted\n``` B $$x^2 + y$$ C $inline$ D <b>E</b> "
        '<img src="a.png" alt="no"> [F](https://example.org/G-H)'
    )
    assert words(text) == 6  # A B C D E F
    assert words("词元化 and tokens") == 3


def test_a_collapsed_heading_folds_like_a_going_deeper_one():
    nb = {
        "cells": [
            _md("## Notes\n\nfolded by metadata", **{"jp-MarkdownHeadingCollapsed": True}),
            _md("# Top\n\nmain"),
        ]
    }
    assert count_words(nb) == (2, 4)


def test_measure_table_and_caps(tmp_path):
    import json

    long = {"cells": [_md("word " * (measure_course.NOTEBOOK_CAP + 1))]}
    for name in ("00_setup", "01_demo"):
        (tmp_path / f"{name}.ipynb").write_text(json.dumps(long), encoding="utf-8")
    table = measure_course.measure(sorted(tmp_path.glob("*.ipynb")))
    assert list(table.index) == ["00_setup", "01_demo"]
    assert table.loc["01_demo", "main path"] == measure_course.NOTEBOOK_CAP + 1
    over = measure_course.over_caps(table)
    assert over == ["01_demo: 1,501 main-path words > 1,500"], "00 has no per-notebook cap"
    total = measure_course.with_total(table)
    assert total.loc["total", "main path"] == 2 * (measure_course.NOTEBOOK_CAP + 1)


@pytest.fixture(scope="module")
def course_table():
    return measure_course.measure(measure_course.notebooks())


def test_every_notebook_is_measured(course_table):
    assert len(course_table) == len(measure_course.notebooks()) >= 16


def test_each_main_path_is_at_most_1500_words(course_table):
    over = [
        line for line in measure_course.over_caps(course_table) if not line.startswith("course")
    ]
    assert not over, "fold into 'Going deeper' sections or cut:\n" + "\n".join(over)


def test_the_course_main_path_is_at_most_20000_words(course_table):
    total = measure_course.course_words(course_table)  # the advanced track (01b, 15, 16) aside
    assert total <= measure_course.COURSE_CAP, f"{total:,} main-path words in all"
