"""The API reference page: every public function and class of the course library, from its docstring.

The page is not committed: ``make site`` generates it into the website at build time
(``site/course_site.py`` calls :func:`render`), so it always matches the library.

    python tools/api_reference.py                # a preview in site/_build/API_REFERENCE.md
    python tools/api_reference.py --output PATH  # or anywhere else

Public means: defined in a module of ``transformer_course`` (not imported into it) and not
starting with ``_``. Modules, and members within a module, keep their source order. The page
is deterministic: signatures are written from the source's annotation strings and ``repr`` of
defaults, so it does not depend on the Python version or the machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
#: Where the preview goes by default: the site's build folder (git-ignored).
OUTPUT = REPO / "site" / "_build" / "API_REFERENCE.md"
PACKAGE = "transformer_course"
HEADER = f"""# API reference of `{PACKAGE}`

Generated from the library's docstrings each time the site is built (`tools/api_reference.py`).
Shapes use B batch, T time (tokens), C = d_model, H heads, D = C // H head size,
V vocabulary.
"""


def modules() -> list[ModuleType]:
    """The package and all its submodules, imported, sorted by dotted name."""
    sys.path.insert(0, str(REPO / "lib"))
    package = importlib.import_module(PACKAGE)
    found = [package]
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}."):
        if info.name.rsplit(".", 1)[-1].startswith("_") or info.name.endswith(".__main__"):
            continue
        found.append(importlib.import_module(info.name))
    return sorted(found, key=lambda m: m.__name__)


def _line(obj) -> int:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return 10**9


def public_members(module: ModuleType) -> list[tuple[str, object]]:
    """Functions and classes defined in ``module`` whose names do not start with ``_``."""
    members = [
        (name, obj)
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == module.__name__
    ]
    return sorted(members, key=lambda item: (_line(item[1]), item[0]))


def public_methods(cls: type) -> list[tuple[str, object]]:
    """Methods and properties a class defines itself (inherited ones are documented where defined)."""
    found = []
    for name, attribute in vars(cls).items():
        if name.startswith("_"):
            continue
        function = (
            attribute.__func__ if isinstance(attribute, (classmethod, staticmethod)) else attribute
        )
        if inspect.isfunction(function) or isinstance(attribute, property):
            found.append((name, attribute))
    return sorted(
        found,
        key=lambda item: (
            _line(item[1].fget if isinstance(item[1], property) else item[1]),
            item[0],
        ),
    )


def own_docstring(obj) -> str:
    """The object's own docstring, cleaned; '' when it has none (dataclass auto-text counts as none)."""
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    doc = obj.__doc__ if not isinstance(obj, property) else (obj.fget.__doc__ if obj.fget else None)
    if not doc:
        return ""
    if (
        inspect.isclass(obj)
        and dataclasses.is_dataclass(obj)
        and doc.startswith(f"{obj.__name__}(")
    ):
        return ""
    return inspect.cleandoc(doc)


def _annotation(annotation) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    return inspect.formatannotation(annotation)


def _default(value) -> str:
    if dataclasses.is_dataclass(value) or callable(value):
        return getattr(value, "__name__", type(value).__name__)
    text = repr(value)
    return text if " at 0x" not in text else type(value).__name__


def signature(obj) -> str:
    """``(a: int, b: float = 1.0) -> Tensor``, written from the source's annotations."""
    target = obj
    if isinstance(obj, (classmethod, staticmethod)):
        target = obj.__func__
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return "(...)"
    parts, saw_keyword_only = [], False
    params = list(sig.parameters.values())
    for index, param in enumerate(params):
        if param.kind is param.POSITIONAL_ONLY and (
            index + 1 == len(params) or params[index + 1].kind is not param.POSITIONAL_ONLY
        ):
            suffix = ", /"
        else:
            suffix = ""
        if param.kind is param.KEYWORD_ONLY and not saw_keyword_only:
            parts.append("*")
            saw_keyword_only = True
        name = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "") + param.name
        if param.kind is param.VAR_POSITIONAL:
            saw_keyword_only = True
        text = name
        annotation = _annotation(param.annotation)
        if annotation:
            text += f": {annotation}"
        if param.default is not param.empty:
            text += f" = {_default(param.default)}" if annotation else f"={_default(param.default)}"
        parts.append(text + suffix)
    result = f"({', '.join(parts)})"
    returns = _annotation(sig.return_annotation)
    if returns and not inspect.isclass(obj):
        result += f" -> {returns}"
    return result


def _doc_block(doc: str) -> list[str]:
    return [doc, ""] if doc else ["*(no docstring)*", ""]


def render() -> str:
    lines = [HEADER]
    for module in modules():
        members = public_members(module)
        doc = inspect.cleandoc(module.__doc__ or "")
        summary = doc.split("\n\n", 1)[0].replace("\n", " ") if doc else "*(no module docstring)*"
        lines += [f"## `{module.__name__}`", "", summary, ""]
        for name, obj in members:
            kind = "class" if inspect.isclass(obj) else "function"
            lines += [f"### `{name}{signature(obj)}`", "", f"*{kind}*", ""]
            lines += _doc_block(own_docstring(obj))
            if inspect.isclass(obj):
                for method_name, method in public_methods(obj):
                    if isinstance(method, property):
                        lines += [f"- **`{name}.{method_name}`** (property)"]
                    else:
                        lines += [f"- **`{name}.{method_name}{signature(method)}`**"]
                    method_doc = own_docstring(method)
                    if method_doc:
                        lines += [
                            "",
                            *("  " + line if line else "" for line in method_doc.splitlines()),
                        ]
                    lines += [""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default: {OUTPUT}")
    args = parser.parse_args(argv)
    text = render()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
