"""What a translated notebook cell must keep from its English, and the glossary's terms.

    python tests/i18n_lint.py [NB ...]      # every translated entry of these notebooks (default: all)

Used by tests/test_i18n.py; runnable by a translator after each import. For each translated
(not fuzzy) entry of a notebook catalog it reports:

- structure: the same heading levels, in order; a "Going deeper" heading becomes ``深入一步：…``;
  bold that CommonMark renders (Chinese punctuation next to ``**`` needs care);
- what is never translated: every maths span (``$…$``, ``$$…$$``), every inline code span and
  fenced code block, and every link target of the English is in the translation, unchanged;
  no reference-style link (``[text][ref]``: MyST-Parser#690 drops them in translated pages);
- the glossary (GLOSSARY.md, d2l-zh's usage): where the English cell uses a term, the Chinese
  cell uses the glossary's Chinese for it; words the glossary rules out (令牌 for token, …) appear
  only inside a quotation of a source (a Misconception box quotes the source's own Chinese).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"```.*?```", re.S)
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)[^$]+?\$")
CODE = re.compile(r"`[^`]+`")
LINK_TARGET = re.compile(r"\]\(([^)\s]+)")
HTML_TARGET = re.compile(r"""(?:src|href)=["']([^"']+)""")
REFERENCE_LINK = re.compile(r"\]\[[^\]]*\]")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.M)
#: Quotations in Chinese text: a source's own words may use any term.
QUOTED = re.compile(r"“[^”]*”|「[^」]*」|《[^》]*》|\"[^\"]*\"|‘[^’]*’")

#: Terms checked where the English uses them: the glossary's multi-word terms, and these single
#: words, which the course uses in one sense only.
SINGLE_WORDS = {
    "token",
    "tokenizer",
    "tokenization",
    "embedding",
    "attention",
    "corpus",
    "tensor",
    "vocabulary",
    "checkpoint",
    "encoder",
    "decoder",
    "gradient",
    "perplexity",
    "cross-entropy",
    "self-attention",
    "backpropagation",
    "overfitting",
}
#: Multi-word glossary terms the English uses in a looser sense too: not checked.
LOOSE = {"modern blocks", "setup", "weight", "shape", "merge", "alignment", "scaling", "training"}
#: Chinese words the glossary rules out, with the term to use instead.
RULED_OUT = {
    "令牌": "词元 (token)",
    "标记化": "词元化 (tokenization)",
    "层归一化": "层规范化 (layer normalization), except when quoting a source",
    "关注机制": "注意力机制",
    "自我注意力": "自注意力",
    "多头关注": "多头注意力",
    "嵌入层表": "嵌入表",
    "波束搜索": "束搜索 (beam search)",
    "集束搜索": "束搜索 (beam search)",
    "贪婪搜索": "贪心搜索 (greedy search)",
}


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    also: tuple[str, ...]  # other renderings the glossary's note allows


def glossary_terms(path: Path = REPO / "GLOSSARY.md") -> list[Term]:
    """The glossary's table rows, with what each note allows besides the Chinese term."""
    terms = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.match(r"^[A-Za-z]", cells[0]) or cells[0] == "English":
            continue
        english, chinese, _, note = cells[:4]
        # Other renderings the note allows: "also 分词", "d2l: 小批量", "also lookup table 查找表";
        # the English itself where the note says the word is often used as is ("or simply
        # softmax"). A word the note gives as the seeds' ("the walk-through writes 令牌") is not.
        allowed = re.findall(r"(?:also|d2l:)[^;,]*?([\u4e00-\u9fff][\u4e00-\u9fff\w-]*)", note)
        if re.search(r"\b(just|simply|often|usually)\b", note):
            allowed.append(english)
        terms.append(Term(english.lower(), chinese, tuple(allowed)))
    return terms


def prose(markdown: str) -> str:
    """Text with code, maths and link targets removed (what a reader reads as words)."""
    text = FENCE.sub(" ", markdown)
    text = CODE.sub(" ", text)
    text = DISPLAY_MATH.sub(" ", text)
    text = INLINE_MATH.sub(" ", text)
    text = LINK_TARGET.sub("](", text)
    return re.sub(r"<[^>]+>", " ", text)


def _checked(term: Term) -> bool:
    if term.english in LOOSE:
        return False
    return " " in term.english or term.english in SINGLE_WORDS


def _uses(english_prose: str, term: str) -> bool:
    pattern = r"(?<![\w-])" + re.escape(term).replace(r"\ ", r"[\s-]+") + r"(s|es)?(?![\w-])"
    return re.search(pattern, english_prose, flags=re.I) is not None


def unrendered_emphasis(markdown: str) -> int:
    """How many ``**`` CommonMark leaves as text (markdown-it-py, jupytext's parser): in Chinese,
    a closing ``**`` right after full-width punctuation and before a character is not a
    delimiter (``**误区。**原文`` shows the stars; ``**误区。** 原文`` is bold)."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(markdown)
    html = re.sub(r"<code>.*?</code>|\$\$.*?\$\$|\$[^$]*\$", "", html, flags=re.S)
    return html.count("**")


_CJK = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\u201c\u201d]"
#: A line break between two Chinese characters inside a paragraph: only Firefox applies CSS's
#: segment-break rule, so Chrome, Safari, Colab and the site show it as a stray space. Lines
#: that start a heading, table row, list item, quote, fence or display maths keep their break.
BROKEN_SENTENCE = re.compile(
    rf"^(?![ \t]*(?:#|\||```|\$\$)).*{_CJK}\n(?![ \t]*(?:[-*+#>|]|\d+\.|`|\$))[ \t]*{_CJK}",
    re.M,
)


def broken_sentences(markdown: str) -> int:
    """How many line breaks sit between two Chinese characters of one paragraph (code left out)."""
    return len(BROKEN_SENTENCE.findall(FENCE.sub(" ", markdown)))


def _math_key(span: str) -> str:
    return re.sub(r"\\text\{[^}]*\}", r"\\text{}", re.sub(r"\s+", "", span))


def problems(english: str, chinese: str, terms: list[Term] | None = None) -> list[str]:
    """What is wrong with ``chinese`` as the translation of the markdown cell ``english``."""
    found = []
    en_levels = [len(m.group(1)) for m in HEADING.finditer(FENCE.sub("", english))]
    zh_headings = list(HEADING.finditer(FENCE.sub("", chinese)))
    if en_levels != [len(m.group(1)) for m in zh_headings]:
        found.append(
            f"heading levels {en_levels} in English, {[len(m.group(1)) for m in zh_headings]} here"
        )
    for en, zh in zip(HEADING.finditer(FENCE.sub("", english)), zh_headings):
        if re.search(r"(?i)going deeper", en.group(2)) and not zh.group(2).startswith("深入一步："):
            found.append(
                f"the Going-deeper heading must start with 深入一步：, got {zh.group(2)!r}"
            )
    for name, pattern in (("code block", FENCE), ("display maths", DISPLAY_MATH)):
        missing = Counter(pattern.findall(english)) - Counter(pattern.findall(chinese))
        found += [f"{name} changed or missing: {m[:80]!r}" for m in missing]
    rest_en = DISPLAY_MATH.sub(" ", FENCE.sub(" ", english))
    rest_zh = DISPLAY_MATH.sub(" ", FENCE.sub(" ", chinese))
    en_math = Counter(_math_key(m) for m in INLINE_MATH.findall(CODE.sub(" ", rest_en)))
    zh_math = Counter(_math_key(m) for m in INLINE_MATH.findall(CODE.sub(" ", rest_zh)))
    found += [f"maths changed or missing: {m!r}" for m in en_math - zh_math]
    en_code = {" ".join(c.split()) for c in CODE.findall(rest_en)}
    zh_code = {" ".join(c.split()) for c in CODE.findall(rest_zh)}
    found += [f"inline code changed or missing: {c}" for c in sorted(en_code - zh_code)]
    for pattern in (LINK_TARGET, HTML_TARGET):
        missing = Counter(pattern.findall(english)) - Counter(pattern.findall(chinese))
        found += [f"link target changed or missing: {t}" for t in missing]
    if unrendered_emphasis(chinese) > unrendered_emphasis(english):
        found.append(
            "a ** shows as text: after full-width punctuation put a space after the closing **"
        )
    if broken_sentences(chinese):
        found.append(
            f"{broken_sentences(chinese)} line break(s) inside a Chinese sentence show as a space "
            "outside Firefox: join the lines"
        )
    if REFERENCE_LINK.search(chinese):
        found.append("reference-style link [text][ref]: write [text](target)")
    # A quotation is the source's own words (or their English gloss): any term may stand there.
    english_prose, chinese_prose = QUOTED.sub(" ", prose(english)), prose(chinese)
    unquoted = QUOTED.sub(" ", chinese_prose)
    for word, instead in RULED_OUT.items():
        if word in unquoted:
            found.append(f"{word}: the glossary writes {instead}")
    for term in terms if terms is not None else glossary_terms():
        if not _checked(term) or not _uses(english_prose, term.english):
            continue
        if term.chinese in chinese_prose or any(a in chinese_prose for a in term.also):
            continue
        found.append(f"the English says {term.english!r}: the glossary's Chinese is {term.chinese}")
    return found


def lint_catalog(path: Path, terms: list[Term] | None = None) -> list[str]:
    """Every translated, non-fuzzy entry of one notebook catalog: ``cell: problem`` lines."""
    import polib

    terms = terms if terms is not None else glossary_terms()
    return [
        f"{path.stem} {entry.msgctxt}: {problem}"
        for entry in polib.pofile(str(path), wrapwidth=0)
        if entry.msgid and entry.msgstr and not entry.fuzzy and not entry.obsolete
        for problem in problems(entry.msgid, entry.msgstr, terms)
    ]


def catalogs(names: list[str]) -> list[Path]:
    folder = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "notebooks"
    paths = sorted(folder.glob("*.po"))
    if names:
        paths = [p for p in paths if any(p.stem == n or p.stem.split("_")[0] == n for n in names)]
    return paths


def main(argv: list[str]) -> int:
    terms = glossary_terms()
    found = [line for path in catalogs(argv) for line in lint_catalog(path, terms)]
    print("\n".join(found) or "no problems")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
