"""The API reference documents everything a notebook uses from the library.

The reference page is generated from the docstrings when the site is built
(``tools/api_reference.py``, called by ``site/course_site.py``), so it cannot go stale; what
can go wrong is the library itself:

1. the generated page has a section for every public module;
2. every library function or class a notebook uses (found by reading the notebook's imports
   and ``module.name`` accesses) is listed in the generated page under its module and has its
   own docstring; where it takes or returns tensors, or is a ``torch.nn.Module``, the docstring
   gives shapes (``[B, T, C]``, ``(B, H, T, D)`` …).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import sys
import types
from pathlib import Path

import nbformat
import pytest
import torch
from IPython.core.inputtransformer2 import TransformerManager

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import api_reference  # noqa: E402

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))
PACKAGE = "transformer_course"
# "[N]", "[B, T, C]", "[..., T, D]", "[B, 1, 1, S]", "[4, 16, 64]", "(B, H, T, D)", "100,070 × 64",
# or the word "shape".
_DIM = r"(?:\.\.\.|[A-Z]\w*|\d+|[A-Z]\s*[·*/]\s*[A-Z])"
SHAPE = re.compile(
    rf"\[{_DIM}(?:\s*,\s*{_DIM})*\]|\({_DIM}(?:\s*,\s*{_DIM})+\)|\bshapes?\b|\d\s*[×x]\s*\d"
)

#: Names documented badly today, each reported to the lead (issue 7); remove an entry once fixed.
KNOWN_UNDOCUMENTED: dict[str, str] = {}


@functools.cache
def reference_page() -> str:
    """The API reference as the site build writes it."""
    return api_reference.render()


def listed_names(page: str) -> dict[str, set[str]]:
    """``module -> names`` that the page documents (its ``## `module``` and ``### `name(``)."""
    listed: dict[str, set[str]] = {}
    module = None
    for line in page.splitlines():
        if found := re.match(r"## `([\w.]+)`$", line):
            module = found[1]
            listed[module] = set()
        elif (found := re.match(r"### `(\w+)\(", line)) and module is not None:
            listed[module].add(found[1])
    return listed


def test_reference_lists_every_public_module():
    listed = listed_names(reference_page())
    assert [m.__name__ for m in api_reference.modules()] == list(listed)
    assert "GPT" in listed["transformer_course.model"]
    assert "causal_mask" in listed["transformer_course.attention"]


def _code(path: Path) -> str:
    manager = TransformerManager()
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    return "\n".join(manager.transform_cell(source) for source in cells)


def used_library_names(path: Path) -> dict[str, object]:
    """``"module.name" -> object`` for every library function/class the notebook's code touches."""
    import importlib

    tree = ast.parse(_code(path))
    modules: dict[str, types.ModuleType] = {}  # alias in the notebook -> library module
    used: dict[str, object] = {}

    def note(owner: str, name: str, obj) -> None:
        if isinstance(obj, types.ModuleType) or name.startswith("_"):
            return
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(
            obj, "__module__", ""
        ).startswith(PACKAGE):
            used[f"{obj.__module__}.{obj.__qualname__}"] = obj

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            module = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if obj is None:
                    obj = importlib.import_module(f"{node.module}.{alias.name}")
                if isinstance(obj, types.ModuleType):
                    modules[alias.asname or alias.name] = obj
                else:
                    note(node.module, alias.name, obj)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE) and alias.asname:
                    modules[alias.asname] = importlib.import_module(alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            obj = getattr(modules[node.value.id], node.attr, None)
            note(modules[node.value.id].__name__, node.attr, obj)
    return used


def _deals_with_tensors(obj) -> bool:
    if inspect.isclass(obj):
        return issubclass(obj, torch.nn.Module)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    annotations = [str(p.annotation) for p in sig.parameters.values()] + [
        str(sig.return_annotation)
    ]
    return any("Tensor" in a for a in annotations)


def documentation_problems(obj) -> list[str]:
    doc = api_reference.own_docstring(obj)
    if not doc:
        return ["no docstring"]
    if _deals_with_tensors(obj):
        text = doc
        if inspect.isclass(obj) and "forward" in vars(obj):
            text += "\n" + api_reference.own_docstring(obj.forward)
        if not SHAPE.search(text):
            return ["works with tensors but its docstring gives no shapes"]
    return []


def reference_problems(obj, listed: dict[str, set[str]]) -> list[str]:
    """Where the generated page fails to list ``obj`` (a function or class, maybe nested)."""
    top = obj.__qualname__.split(".")[0]  # a nested class is documented with its owner
    if top not in listed.get(obj.__module__, set()):
        return [f"not in the API reference under {obj.__module__}"]
    return []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_library_used_by_the_notebook_is_documented(path):
    used = used_library_names(path)
    listed = listed_names(reference_page())
    problems = {
        name: "; ".join(found)
        for name, obj in sorted(used.items())
        if (found := documentation_problems(obj) + reference_problems(obj, listed))
        and name not in KNOWN_UNDOCUMENTED
    }
    assert not problems, f"{path.name} uses undocumented library code:\n" + "\n".join(
        f"  {name}: {why}" for name, why in problems.items()
    )


def test_known_undocumented_list_is_current():
    """An entry in KNOWN_UNDOCUMENTED that is documented now must be removed (no stale excuses)."""
    import importlib

    fixed = []
    for dotted in KNOWN_UNDOCUMENTED:
        module_name, _, name = dotted.rpartition(".")
        obj = getattr(importlib.import_module(module_name), name, None)
        if obj is None or not documentation_problems(obj):
            fixed.append(dotted)
    assert not fixed, f"documented now, remove from KNOWN_UNDOCUMENTED: {fixed}"


def test_the_checker_finds_a_missing_docstring_and_missing_shapes():
    def bare(x: torch.Tensor) -> torch.Tensor:
        return x

    def shapeless(x: torch.Tensor) -> torch.Tensor:
        """Doubles x."""
        return 2 * x

    def shaped(x: torch.Tensor) -> torch.Tensor:
        """Doubles x [B, T, C]."""
        return 2 * x

    assert documentation_problems(bare) == ["no docstring"]
    assert documentation_problems(shapeless) == [
        "works with tensors but its docstring gives no shapes"
    ]
    assert documentation_problems(shaped) == []


def test_the_checker_finds_a_name_missing_from_the_reference():
    from transformer_course.attention import MultiHeadAttention, causal_mask

    listed = listed_names("# API\n\n## `transformer_course.attention`\n\n### `causal_mask(T)`\n")
    assert listed == {"transformer_course.attention": {"causal_mask"}}
    assert reference_problems(causal_mask, listed) == []
    assert reference_problems(MultiHeadAttention, listed) == [
        "not in the API reference under transformer_course.attention"
    ]
