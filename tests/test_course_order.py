"""The course in order: a main-path code cell of notebook N uses only library names that
notebooks up to N introduce.

Each public name says which notebook introduces it, d2l's habit: its docstring reads
"introduced in 11_training" or names the notebook ("(12_generation)"); a name whose own
docstring is silent takes its module's. This test maps every ``transformer_course`` name that a
notebook's code uses to that notebook and fails when a main-path cell uses a later one. A
"Going deeper" section (folded; see ``tools/measure_course.py``) may look ahead, and says so.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

#: "introduced in 04_qkv" first; else the first notebook a docstring names ("(12_generation)").
_INTRODUCED = re.compile(r"[Ii]ntroduced in (\d\d)b?_")
_NOTEBOOK = re.compile(r"\b(\d\d)b?_[a-z]")
_HEADING = re.compile(r"\s*(#{1,6})\s")


def introduced_in(obj: object, module: object) -> str | None:
    """The two-digit number of the notebook that introduces ``obj``, from its docstring or its
    module's; None if neither says."""
    for doc in (inspect.getdoc(obj) if not inspect.ismodule(obj) else None, inspect.getdoc(module)):
        if doc:
            found = _INTRODUCED.search(doc) or _NOTEBOOK.search(doc)
            if found:
                return found.group(1)
    return None


def main_path_cells(path: Path) -> list[tuple[str, str, bool]]:
    """(cell id, code, on the main path?) for every code cell: a cell is off the main path when
    it sits under a "Going deeper" heading (until the next heading of the same or higher level)."""
    folded_level: int | None = None
    cells = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            heading = _HEADING.match(source)
            if heading:
                level = len(heading.group(1))
                if folded_level is not None and level <= folded_level:
                    folded_level = None
                if folded_level is None and "going deeper" in source.splitlines()[0].lower():
                    folded_level = level
        elif cell["cell_type"] == "code":
            cells.append((cell.get("id", "?"), source, folded_level is None))
    return cells


def _library_names(tree: ast.AST) -> dict[str, tuple[object, object]]:
    """Local name -> (object, its module) for every ``transformer_course`` import in ``tree``."""
    names: dict[str, tuple[object, object]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "transformer_course"
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                try:
                    obj = importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    obj = getattr(module, alias.name)
                names[alias.asname or alias.name] = (obj, module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("transformer_course") and alias.asname:
                    module = importlib.import_module(alias.name)
                    names[alias.asname] = (module, module)
    return names


def _parse(code: str) -> ast.AST:
    # IPython lines (%pip, !ls) are not Python: keep the line, drop the magic.
    return ast.parse(re.sub(r"^(\s*)[%!].*$", r"\1pass", code, flags=re.M))


def uses(path: Path) -> list[tuple[str, str, str, str | None, bool]]:
    """(cell id, name used, where it comes from, notebook that introduces it, main path?) for
    every library name a code cell of ``path`` uses (imports alone are not uses)."""
    cells = main_path_cells(path)
    imported: dict[str, tuple[object, object]] = {}
    for _, code, _ in cells:
        imported.update(_library_names(_parse(code)))
    found = []
    for cell_id, code, main in cells:
        for node in ast.walk(_parse(code)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = imported.get(node.value.id)
                if base and inspect.ismodule(base[0]) and hasattr(base[0], node.attr):
                    obj = getattr(base[0], node.attr)
                    owner = sys.modules.get(getattr(obj, "__module__", None) or "", base[0])
                    label = f"{base[0].__name__}.{node.attr}"
                    found.append(
                        (cell_id, label, base[0].__name__, introduced_in(obj, owner), main)
                    )
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in imported
                and not inspect.ismodule(imported[node.id][0])
            ):
                obj, module = imported[node.id]
                owner = sys.modules.get(getattr(obj, "__module__", None) or "", module)
                if not inspect.ismodule(owner):
                    owner = module
                found.append((cell_id, node.id, module.__name__, introduced_in(obj, owner), main))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_library_name_says_where_it_is_introduced(path):
    silent = sorted({(name, where) for _, name, where, intro, _ in uses(path) if intro is None})
    assert not silent, (
        f"{path.name} uses library names whose docstring (and module docstring) names no "
        f"notebook: {silent}; add 'introduced in NN_topic'"
    )


#: 00_setup teaches nothing: it checks that the data and the tokenizer later notebooks need are
#: there, with their names.
TAUGHT = [p for p in NOTEBOOKS if not p.name.startswith("00")]


@pytest.mark.parametrize("path", TAUGHT, ids=[p.stem for p in TAUGHT])
def test_the_main_path_uses_only_what_earlier_notebooks_taught(path):
    number = path.name[:2]
    later = sorted(
        {
            (cell, name, intro)
            for cell, name, _, intro, main in uses(path)
            if main and intro is not None and intro > number
        }
    )
    assert not later, (
        f"{path.name}'s main path uses names that later notebooks introduce "
        f"(cell, name, notebook): {later}; teach them first, or move the cell into a "
        "'Going deeper' section that says which notebook it looks ahead to"
    )


def test_the_section_rule_folds_what_it_should(tmp_path):
    """The rule the order test and the word count share, on a tiny notebook."""

    def md(text):
        return {"cell_type": "markdown", "source": text, "metadata": {}, "id": text[:6]}

    def code(text):
        return {"cell_type": "code", "source": text, "metadata": {}, "id": text}

    cells = [
        md("## 1. Main"),
        code("a"),
        md("## Going deeper: later"),
        code("b"),
        md("### inside"),
        code("c"),
        md("## 2. Back"),
        code("d"),
    ]
    notebook = tmp_path / "probe.ipynb"
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert [(i, main) for i, _, main in main_path_cells(notebook)] == [
        ("a", True),
        ("b", False),
        ("c", False),
        ("d", True),
    ]
