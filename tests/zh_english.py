"""Is a line the Chinese edition shows English prose? (shared by tests/test_zh_*.py)

The rule, applied to one line of output or one error message:

1. Take out what stays as it is in both languages: text in quotes ('…', "…", “…”) and backticks
   (token strings, reprs, code), and every token that is an identifier or code: it has a
   character of ``_ . ( ) [ ] { } = / \\ < > @ : # |`` or a digit in it (``cl100k_base``,
   ``GPT.forward``, ``h_i·w_i``, ``[B, T]``, ``ln(V)``, ``1e-3``).
2. What is left is English prose when it holds a run of three or more English words (letters
   only) in a row, one of them a function word ("the", "of", "must", …): a clause, not a name;
   or, in a line with no Chinese at all, two or more lower-case words in a row (a label such
   as "true next"). ``LayerNorm``, ``GPT`` or ``RoPE, RMSNorm, SwiGLU, GQA`` (names the
   Chinese text uses too) are not prose; "the mask is missing" is. A run ends at a token that
   ends a label (":") or a bracket.

A line is exempt when it is a Python traceback or an exception that PyTorch itself raises
(its text is PyTorch's, not the course's).
"""

from __future__ import annotations

import re

#: English function words: a run of words with one of these in it is a clause.
FUNCTION_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """a an the of to in on at by for from with without into over under per as and or but not no
    is are was were be been being has have had do does did must should can cannot could would will
    may might it its this that these those there their his her they we you your our which who
    when where while than then if so after before only each every all any some more most fewer
    less same other another one two three got gets give gives take takes use uses used need
    needs""",
    )
)

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`")
_CODE_CHARS = re.compile(r"[_.()\[\]{}=/\\<>@:#|0-9]")
_WORD = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

#: Exceptions whose text is PyTorch's or Python's own (the learner must read those in English).
EXEMPT_PREFIXES = ("Traceback (most recent call last)", "IndexError: Target", "RuntimeError: ")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _prose(run: list[str], chinese_line: bool) -> bool:
    if len(run) >= 3 and any(w.lower() in FUNCTION_WORDS for w in run):
        return True  # a clause
    # A line with no Chinese at all: two lower-case words in a row are an English label
    # ("true next", "causality broken"); names keep a capital (RoPE, LayerNorm, GPT).
    longest = current = 0
    for word in run:
        current = current + 1 if word.islower() and len(word) >= 2 else 0
        longest = max(longest, current)
    return not chinese_line and longest >= 2


def english_run(line: str) -> str:
    """The first run of English prose in ``line`` (rule above), or "" when there is none."""
    if line.lstrip().startswith(EXEMPT_PREFIXES):
        return ""
    chinese_line = has_cjk(line)
    run: list[str] = []
    for token in [*_QUOTED.sub(" | ", line).split(), "|"]:  # "|" ends the last run
        word = token.strip(",;:!?…()（）")
        if _WORD.fullmatch(word) and not _CODE_CHARS.search(word):
            run.append(word)
            if not token.endswith((":", ")", "(", ";")):
                continue
        if _prose(run, chinese_line):
            return " ".join(run)
        run = []
    return ""
