"""Count the code lines a reader follows on the GPT's training forward path (GPT.forward -> loss).

    python tools/forward_path.py            # per-function table and the total

The count is measured, not estimated: one forward pass with targets (the loss) of the default
:class:`~transformer_course.model.GPTConfig` GPT in train mode runs under :func:`sys.settrace`,
and every line executed inside ``lib/transformer_course`` is recorded. A line counts once, however
often it runs (eight blocks run the block's lines eight times; a reader reads them once).

What counts as a code line: each executed statement counts with every physical line it spans
(a call broken over four lines is four lines to read); a compound statement (``if``, ``for``,
``with``) counts its header only, its body counts through its own executed statements. Blank
lines, comment lines and docstrings never count; ``def`` lines do not either (the table names
the function). A branch that did not run does not count: the path is what this forward pass ran.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import torch

LIB = Path(__file__).resolve().parent.parent / "lib"
if str(LIB) not in sys.path:
    sys.path.insert(0, str(LIB))

from transformer_course.model import GPT, GPTConfig  # noqa: E402

PACKAGE = LIB / "transformer_course"
VOCAB_SIZE = 65  # a character-level vocabulary; the count does not depend on it


@dataclass(frozen=True)
class PathCount:
    """Code lines per function (``module:Qualified.name``) and their total."""

    per_function: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.per_function.values())


def _statement_lines(source: str) -> dict[int, list[int]]:
    """For every line that starts or belongs to a statement: the lines a reader reads for that
    statement (its whole span for a simple statement, its header for a compound one)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    spans: dict[int, tuple[int, range]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, ast.FunctionDef | ast.ClassDef):
            continue
        end = node.end_lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = body[0].lineno - 1  # the header only
        code = range(node.lineno, end + 1)
        for line in code:
            # The innermost statement wins (walk visits outer statements first).
            spans[line] = (node.lineno, code)
    return {
        line: [n for n in code if lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")]
        for line, (_, code) in spans.items()
    }


def _docstring_lines(source: str) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = node.body[0] if node.body else None
            if (
                isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                lines.update(range(doc.lineno, doc.end_lineno + 1))
    return lines


def trace_forward(config: GPTConfig | None = None, seed: int = 0) -> dict[str, dict[int, str]]:
    """Run one training forward pass with targets under a tracer; return, per file in the
    package, the executed line numbers mapped to the qualified name of their function."""
    config = config or GPTConfig(vocab_size=VOCAB_SIZE)
    torch.manual_seed(seed)
    model = GPT(config).train()
    generator = torch.Generator().manual_seed(seed)
    shape = (2, config.context_length)
    idx = torch.randint(0, config.vocab_size, shape, generator=generator)  # (B, T)
    targets = torch.randint(0, config.vocab_size, shape, generator=generator)  # (B, T)
    prefix = str(PACKAGE) + os.sep
    seen: dict[str, dict[int, str]] = defaultdict(dict)

    def local(frame, event, arg):
        if event == "line":
            seen[frame.f_code.co_filename][frame.f_lineno] = frame.f_code.co_qualname
        return local

    def on_call(frame, event, arg):
        if frame.f_code.co_filename.startswith(prefix):
            return local
        return None

    sys.settrace(on_call)
    try:
        _, loss = model(idx, targets)  # (B, T) -> (B, T, V), ()
    finally:
        sys.settrace(None)
    if loss is None:
        raise RuntimeError("the traced forward pass returned no loss")
    return seen


def count_forward_path(config: GPTConfig | None = None) -> PathCount:
    """The code lines on the training forward path, per function (see the module docstring)."""
    per_function: dict[str, set[int]] = defaultdict(set)
    for filename, executed in trace_forward(config).items():
        source = Path(filename).read_text(encoding="utf-8")
        statements = _statement_lines(source)
        docstrings = _docstring_lines(source)
        module = Path(filename).relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        for line, qualname in executed.items():
            if line in docstrings or line not in statements:
                continue
            per_function[f"{module}:{qualname}"].update(statements[line])
    return PathCount({name: len(lines) for name, lines in per_function.items()})


def main() -> int:
    counts = count_forward_path()
    width = max(len(name) for name in counts.per_function)
    print(f"{'function':<{width}}  lines")
    for name, n in sorted(counts.per_function.items()):
        print(f"{name:<{width}}  {n:5d}")
    print(f"{'total':<{width}}  {counts.total:5d}  in {len(counts.per_function)} functions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
