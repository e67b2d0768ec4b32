"""The words a notebook cell writes on its own plots come from ``viz.label`` and are Chinese in zh.

``viz.label(text)`` (``transformer_course/viz/labels.py``) looks an English title, axis label or
legend entry up in ``PLOT_LABELS`` and returns it in the learner's language. Checked here, without
running a notebook: every label a notebook cell names is declared; every declared label is
translated in the library catalog, keeps its ``{fields}``, and reads as Chinese (no two English words
in a row, the rule of ``test_zh_pictures``); and no drawing call in a notebook cell is handed an
English sentence directly, which would draw English in the Chinese edition.
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po
from test_zh_pictures import CODE, KEPT_NAMES, QUOTED, english_runs

from transformer_course import viz
from transformer_course.i18n import in_language
from transformer_course.viz.labels import PLOT_LABELS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
CATALOG = ROOT / "locale/zh_CN/LC_MESSAGES/transformer_course.po"
#: Keyword arguments and methods whose string is drawn on a picture.
DRAWN_KEYWORDS = {"title", "xlabel", "ylabel", "suptitle", "label", "titles"}
DRAWN_METHODS = {"set_title", "set_xlabel", "set_ylabel", "suptitle"}
#: Plots whose first argument is {legend entry: values}.
CURVE_PLOTS = {"plot_curves", "plot_distributions", "bar_chart"}
#: Pictures not yet routed through viz.label: (notebook stem, cell id). Shrink, never grow.
NOT_YET: set[tuple[str, str]] = set()


def _code_cells():
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            try:
                yield path.stem, cell.id, ast.parse(cell.source)
            except SyntaxError:  # cell magics
                continue


def _label_calls(tree):
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "label"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "viz"
        ):
            yield node


def _drawn_literals(tree):
    """String literals handed straight to a drawing keyword or method (not through viz.label)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        values = [node.args[0]] if name in DRAWN_METHODS and node.args else []
        values += [k.value for k in node.keywords if k.arg in DRAWN_KEYWORDS]
        if name in CURVE_PLOTS and node.args and isinstance(node.args[0], ast.Dict):
            values += node.args[0].keys  # legend entries
        for value in values:
            for item in value.elts if isinstance(value, ast.List | ast.Tuple) else [value]:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    yield item.value
                elif isinstance(item, ast.JoinedStr):
                    yield "".join(
                        v.value if isinstance(v, ast.Constant) else " x " for v in item.values
                    )


def _fields(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_every_label_a_notebook_names_is_declared():
    used = {
        (stem, cell_id, call.args[0].value)
        for stem, cell_id, tree in _code_cells()
        for call in _label_calls(tree)
        if call.args and isinstance(call.args[0], ast.Constant)
    }
    assert len(used) > 100  # the scan sees the notebooks' labels
    assert [u for u in used if u[2] not in PLOT_LABELS] == []


def test_every_label_call_fills_exactly_its_fields():
    mismatched = [
        (stem, cell_id, call.args[0].value)
        for stem, cell_id, tree in _code_cells()
        for call in _label_calls(tree)
        if call.args and isinstance(call.args[0], ast.Constant)
        if _fields(call.args[0].value) != {k.arg for k in call.keywords}
    ]
    assert mismatched == []


def test_no_english_sentence_is_drawn_straight_from_a_cell():
    leaks = [
        (stem, cell_id, text)
        for stem, cell_id, tree in _code_cells()
        if (stem, cell_id) not in NOT_YET
        for text in _drawn_literals(tree)
        if english_runs(text)
    ]
    assert leaks == []


#: Formulas a cell draws as they are in both editions (their letters are symbols, not words).
FORMULAS = {"‖∂loss/∂W1‖", "ln V"}


def _lower_case_words(text: str) -> list[str]:
    """English words in lower case ("activations", "key") outside code, quotes and kept names:
    prose, unlike names such as "GELU" or "SiLU"."""
    text = CODE.sub(" ", QUOTED.sub(" ", text))
    return [
        w
        for w in re.findall(r"[A-Za-z]+", text)
        if re.fullmatch(r"[a-z]{2,}", w) and w not in KEPT_NAMES
    ]


def test_no_english_word_is_drawn_straight_from_a_cell():
    """One word is enough to leave a Chinese picture English: 13's title "activations" and 12's
    axes "key" and "query" passed the two-word rule above."""
    assert (
        _lower_case_words("activations") == ["activations"]
        and _lower_case_words("SiLU = x·σ(x)") == []
    )
    leaks = [
        (stem, cell_id, text)
        for stem, cell_id, tree in _code_cells()
        if (stem, cell_id) not in NOT_YET
        for text in _drawn_literals(tree)
        if text not in FORMULAS and _lower_case_words(text)
    ]
    assert leaks == []


def test_every_label_is_translated_keeps_its_fields_and_reads_as_chinese():
    with CATALOG.open("rb") as po:
        catalog = read_po(po)
    problems = []
    for text in sorted(PLOT_LABELS):
        entry = catalog.get(text)
        if entry is None or not entry.string or entry.fuzzy:
            problems.append((text, "not translated"))
        elif _fields(entry.string) != _fields(text):
            problems.append((text, f"fields differ: {entry.string}"))
        elif english_runs(entry.string):
            problems.append((text, f"English in: {entry.string}"))
    assert problems == []


def test_label_fills_fields_in_the_learners_language():
    with in_language("en"):
        assert (
            viz.label("head {first_head}: the first digit", first_head=3)
            == "head 3: the first digit"
        )
    with in_language("zh"):
        assert viz.label("validation loss") == "验证损失"
        assert viz.label(
            "principal component {n} ({share:.0%} of the variance)", n=1, share=0.25
        ) == ("主成分 1（占方差的 25%）")


def test_an_undeclared_label_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="PLOT_LABELS"):
        viz.label("a label nobody declared")


def test_printed_and_drawn_labels_are_one_lookup_over_one_registry():
    from transformer_course import i18n
    from transformer_course.i18n import printed

    assert printed.label is viz.label is i18n.declared  # one function, one error path
    assert printed.MESSAGES | PLOT_LABELS <= i18n.DECLARED
    assert viz.label("reads") == printed.label("reads")  # a printed message draws as well
    with pytest.raises(ValueError, match="MESSAGES.*PLOT_LABELS"):
        printed.say("a message nobody declared")
