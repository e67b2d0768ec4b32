"""A Chinese notebook runs the English notebook's code (issue 36, item 2).

Every code cell of ``notebooks/zh/NN_x.ipynb`` has the same Python syntax tree as the English
cell with the same id, except the set-up call's ``lang`` argument. Comments are not in the
tree, so a comment may be translated through the catalog; a changed name, string or number is
a failure. What a Chinese notebook prints in Chinese comes from the library (``_()``,
:mod:`transformer_course.i18n.printed`), never from a forked cell.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAIRS = sorted(
    (path, NOTEBOOKS / path.name)
    for path in (NOTEBOOKS / "zh").glob("[0-9]*.ipynb")
    if (NOTEBOOKS / path.name).exists()
)


def _python(source: str) -> str:
    """The cell as Python: an IPython magic line (%pip, !ls) becomes ``pass`` at its indent."""
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass"
        if line.lstrip().startswith(("%", "!"))
        else line
        for line in source.splitlines()
    )


class _DropLanguage(ast.NodeTransformer):
    """Remove ``lang=…`` from ``setup_notebook(...)``: the one difference a build makes."""

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name == "setup_notebook":
            node.keywords = [k for k in node.keywords if k.arg != "lang"]
        return node


def tree(source: str) -> str:
    return ast.dump(_DropLanguage().visit(ast.parse(_python(source))))


def _code_cells(path: Path) -> dict[str, str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join(c["source"]) for c in cells if c["cell_type"] == "code"}


def test_there_are_chinese_notebooks_to_compare():
    assert len(PAIRS) >= 10


@pytest.mark.parametrize("zh, en", PAIRS, ids=[zh.name for zh, _ in PAIRS])
def test_each_chinese_code_cell_is_the_english_code(zh, en):
    chinese, english = _code_cells(zh), _code_cells(en)
    assert list(chinese) == list(english), "the code cells differ in number, order or id"
    different = [cid for cid in english if tree(chinese[cid]) != tree(english[cid])]
    assert not different, f"{zh.name}: code cells {different} are not the English code"


def test_only_comments_and_the_language_may_differ():
    english = 'course = setup_notebook(seed=0)\nprint(f"loss {x:.2f}")  # the loss\n'
    chinese = 'course = setup_notebook(lang="zh", seed=0)\nprint(f"loss {x:.2f}")  # 损失\n'
    assert tree(english) == tree(chinese)
    assert tree(english) != tree(chinese.replace('"loss', '"损失'))
    assert tree("%pip install x\nx = 1") == tree("%pip install y\nx = 1")
