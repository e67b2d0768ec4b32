"""Count the code lines a reader follows on the GPT's training forward path (GPT.forward -> loss).

    python tools/forward_path.py            # per-function table and the totals

Measured, not estimated: one forward pass with targets (so the loss is computed) of a
:class:`~transformer_course.model.GPT` with the default :class:`GPTConfig` in train mode runs
under :func:`sys.settrace`, which records every function entered and every line executed inside
``lib/transformer_course``.

Two counts per function, both in code lines (no blank lines, comment lines or docstrings):

* ``read`` — the whole function, signature included: what a reader has to read to follow the
  call, branches that did not run included. The total is the path's length (issue 25 and the
  code review count it this way: 263 code lines in 21 functions before the rewrite).
* ``run`` — the lines that ran: every executed statement with all the physical lines it spans
  (a compound statement, ``if``/``for``/``with``, its header only). A line counts once, however
  often it ran (eight blocks run the block's lines eight times; a reader reads them once).
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

import transformer_course  # noqa: E402
from transformer_course.model import GPT, GPTConfig  # noqa: E402

PACKAGE = Path(transformer_course.__file__).resolve().parent  # the package actually imported
VOCAB_SIZE = 65  # a character-level vocabulary; the count does not depend on it


@dataclass(frozen=True)
class FunctionCount:
    read: int  # code lines of the whole function, signature included
    run: int  # code lines of the statements that ran


@dataclass(frozen=True)
class PathCount:
    """Code lines per function (``module:Qualified.name``) on the path, and their totals."""

    per_function: dict[str, FunctionCount]

    @property
    def read(self) -> int:
        return sum(c.read for c in self.per_function.values())

    @property
    def run(self) -> int:
        return sum(c.run for c in self.per_function.values())


def trace_forward(config: GPTConfig | None = None, seed: int = 0) -> dict[str, dict[int, set[int]]]:
    """Run one training forward pass with targets under a tracer. Returns, per source file of
    the package, the line where each entered function's code starts (``co_firstlineno``)
    mapped to the line numbers executed in it."""
    config = config or GPTConfig(vocab_size=VOCAB_SIZE)
    torch.manual_seed(seed)
    model = GPT(config).train()
    generator = torch.Generator().manual_seed(seed)
    shape = (2, config.context_length)
    idx = torch.randint(0, config.vocab_size, shape, generator=generator)  # (B, T)
    targets = torch.randint(0, config.vocab_size, shape, generator=generator)  # (B, T)
    prefix = str(PACKAGE) + os.sep
    seen: dict[str, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))

    def local(frame, event, arg):
        if event == "line":
            code = frame.f_code
            seen[code.co_filename][code.co_firstlineno].add(frame.f_lineno)
        return local

    def on_call(frame, event, arg):
        code = frame.f_code
        if not code.co_filename.startswith(prefix):
            return None
        seen[code.co_filename][code.co_firstlineno]  # entered, even if no line event follows
        return local

    previous = sys.gettrace()  # e.g. a coverage tool's, restored afterwards
    sys.settrace(on_call)
    try:
        _, loss = model(idx, targets)  # (B, T) -> (B, T, V), ()
    finally:
        sys.settrace(previous)
    if loss is None:
        raise RuntimeError("the traced forward pass returned no loss")
    return seen


class _Source:
    """One module's source: its functions, statements, and which lines are code."""

    def __init__(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        self.lines = text.splitlines()
        tree = ast.parse(text)
        self.docstrings: set[int] = set()
        self.functions: dict[int, tuple[str, ast.AST]] = {}  # first line (decorators) -> function
        self.statements: dict[int, range] = {}  # a line -> the lines its statement makes one read
        self._walk(tree, "")

    def _walk(self, node: ast.AST, prefix: str) -> None:
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            doc = body[0].value
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                self.docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    self.functions[first] = (name, child)
                self._walk(child, name + ".")
                continue
            if isinstance(child, ast.stmt):
                end = child.end_lineno
                inner = getattr(child, "body", None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    end = inner[0].lineno - 1  # a compound statement: its header
                for line in range(child.lineno, end + 1):
                    self.statements[line] = range(child.lineno, end + 1)
            self._walk(child, prefix)

    def code_lines(self, lines) -> set[int]:
        """The lines among ``lines`` that hold code (not blank, not a comment, not a docstring)."""
        return {
            n
            for n in lines
            if n not in self.docstrings
            and self.lines[n - 1].strip()
            and not self.lines[n - 1].strip().startswith("#")
        }


def count_forward_path(config: GPTConfig | None = None) -> PathCount:
    """The code lines on the training forward path, per function (see the module docstring)."""
    per_function: dict[str, FunctionCount] = {}
    for filename, functions in trace_forward(config).items():
        source = _Source(Path(filename))
        module = Path(filename).relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        module = module.removesuffix(".__init__")  # a package's face is named after the package
        for first, executed in functions.items():
            if first not in source.functions:
                continue  # a comprehension's or a lambda's code: counted with its function
            name, node = source.functions[first]
            whole = source.code_lines(range(node.lineno, node.end_lineno + 1))
            ran: set[int] = set()
            for line in executed:
                ran |= source.code_lines(source.statements.get(line, ()))
            per_function[f"{module}:{name}"] = FunctionCount(len(whole), len(ran & whole))
    return PathCount(per_function)


def main() -> int:
    counts = count_forward_path()
    width = max(len(name) for name in counts.per_function)
    print(f"{'function':<{width}}   read    run")
    for name, c in sorted(counts.per_function.items()):
        print(f"{name:<{width}}  {c.read:5d}  {c.run:5d}")
    print(
        f"{'total':<{width}}  {counts.read:5d}  {counts.run:5d}"
        f"   in {len(counts.per_function)} functions"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
