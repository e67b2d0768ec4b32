"""Every error a learner can meet speaks the learner's language.

A message written as a bare English string (``raise ValueError(f"...")``) stays English in the
Chinese edition. The guard below reads every module of the library with :mod:`ast` and fails on
an exception (raised, or built to be raised), or a warning, whose message is a string literal or
an f-string instead of ``_("… {field} …").format(…)`` or a ``_checks`` call. The few messages that
stay English are listed in :data:`ALLOWED`, each with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transformer_course
from transformer_course import _checks, word2vec
from transformer_course.i18n import in_language

LIBRARY = Path(transformer_course.__file__).resolve().parent

#: (module path under lib/transformer_course, exception) -> why its message stays English.
ALLOWED = {
    ("diagnostics.py", "AttributeError"): "module __getattr__: Python's own protocol wording",
    ("exercises/logits.py", "AttributeError"): "module __getattr__: Python's own protocol wording",
    # The language chooser: a bad $TRANSFORMER_COURSE_LANG is found inside language(), which
    # _() itself calls; a bad lang= is answered in both languages ('en' English, 'zh' 中文).
    # The third, an undeclared printed label, is for course authors.
    ("i18n/__init__.py", "ValueError"): "the language chooser and the authors' label registry",
    ("i18n/__init__.py", "MissingTranslation"): "strict mode: a maintainer's missing entry",
    # The grader runs on the teacher's machine (README "For teachers"); these are its internals.
    ("exercises/grading/guard.py", "OfflineError"): "the grader's network guard (teacher)",
    ("exercises/grading/kernel_probe.py", "TimeoutError"): "caught and reported by the grader",
    ("exercises/grading/kernel_probe.py", "Unplain"): "caught and reported by the grader",
    ("diagrams/roadmap.py", "ValueError:STRIP_LABELS"): "a maintainer's table out of step",
    ("diagrams/blocks.py", "ValueError"): "a diagram's own recipe, written by a course author",
}

#: The names whose call is a message to check: anything raised, plus these builders.
_BUILDERS = ("Error", "Exception", "Warning", "warn")


def _is_literal(node: ast.AST) -> bool:
    """A message written as English in the code: a string, an f-string, or one glued or
    formatted from them (``"…" + x``, ``"…".format(x)``)."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) or _is_literal(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "join") and _is_literal(node.func.value)
    return False


def _messages(tree: ast.AST):
    """(line, callable's name, message node) of every raise and every exception or warning built."""
    raised = {id(node.exc) for node in ast.walk(tree) if isinstance(node, ast.Raise)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = ast.unparse(node.func).split(".")[-1]
        if id(node) in raised or name.endswith(_BUILDERS):
            yield node.lineno, name, node.args[0]


def _allowed(module: str, name: str, text: str) -> bool:
    """In ALLOWED as (module, exception), or as (module, "exception:word") with word in the text."""
    return any(
        where == module
        and (what == name or (what.startswith(f"{name}:") and what[len(name) + 1 :] in text))
        for where, what in ALLOWED
    )


def untranslated(source: str, module: str) -> list[str]:
    """``module:line`` and how to fix, for each English message in ``source`` not in ALLOWED."""
    found = []
    for line, name, message in _messages(ast.parse(source)):
        if not _is_literal(message):
            continue
        text = ast.unparse(message)
        if _allowed(module, name, text):
            continue
        found.append(
            f"lib/transformer_course/{module}:{line}: {name}({text[:70]}) is English only; write"
            ' _("… {field} …").format(field=…) (from .i18n import _), or call the _checks rule'
            " that says it, then tools/i18n.py lib-update, translate, compile"
        )
    return found


def test_every_library_error_goes_through_the_catalog():
    problems = []
    for path in sorted(LIBRARY.rglob("*.py")):
        module = path.relative_to(LIBRARY).as_posix()
        problems += untranslated(path.read_text(encoding="utf-8"), module)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "source",
    [
        'raise ValueError(f"k must be positive, got {k}")',
        'raise TypeError("text must be a str")',
        'raise ValueError("got " + repr(k))',
        'raise ValueError("got {}".format(k))',
        'error = KeyError(f"{word!r} is not in the vocabulary")',
        'warnings.warn(f"loss {loss} is high")',
        'raise MissingTranslation(f"no {lang} translation")',
    ],
)
def test_the_guard_finds_an_english_message(source):
    (problem,) = untranslated(source, "word2vec.py")
    assert problem.startswith("lib/transformer_course/word2vec.py:1: ")
    assert "_checks" in problem and "lib-update" in problem


@pytest.mark.parametrize(
    "source",
    [
        'raise ValueError(_("k must be positive, got {k}").format(k=k))',
        'raise ValueError(_("the prompt is empty"))',
        "check.integer('k', k)",
        "raise ValueError(problem)",
        'raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
    ],
)
def test_the_guard_passes_a_translated_message(source):
    module = "diagnostics.py" if "AttributeError" in source else "word2vec.py"
    assert untranslated(source, module) == []


def test_the_allow_list_names_what_is_there():
    """Each entry of ALLOWED still matches a message, so the list cannot hide new ones."""
    seen = set()
    for module, exception in ALLOWED:
        source = (LIBRARY / module).read_text(encoding="utf-8")
        name, _, word = exception.partition(":")
        for _line, called, message in _messages(ast.parse(source)):
            if called == name and _is_literal(message) and word in ast.unparse(message):
                seen.add((module, exception))
    assert seen == set(ALLOWED)


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("TRANSFORMER_COURSE_I18N_STRICT", "1")
    with in_language("zh"):
        yield


def test_a_converted_error_speaks_chinese(chinese):
    with pytest.raises(ValueError, match="CBOW 需要 cbow_windows 给出的上下文掩码"):
        word2vec.Word2Vec(5, 3, mode="cbow").hidden(_long(1, 2))
    with pytest.raises(TypeError, match="text 必须是 str，得到的是 int"):
        word2vec.words(3)
    with pytest.raises(ValueError, match="subsample 必须是.*（或 None：保留每个词）"):
        word2vec.Word2VecConfig(subsample=0.0)


def test_a_converted_error_keeps_its_english():
    with pytest.raises(TypeError, match="text must be a str, got int"):
        word2vec.words(3)
    with pytest.raises(ValueError, match=r"window must be at least 1, got 0"):
        _checks.integer("window", 0)


def _long(*shape: int):
    import torch

    return torch.zeros(*shape, dtype=torch.long)
