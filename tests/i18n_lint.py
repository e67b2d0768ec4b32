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
  cell uses the glossary's Chinese for it; words the glossary rules out (令牌 for token, 前置归一化
  for pre-norm, 教师强制, 检查程序, 单元 for a cell, 提示 for a prompt, …) appear only inside a
  quotation of a source (a Misconception box quotes the source's own Chinese);
- typography: no line break inside a Chinese sentence (blockquotes included: Chrome, Safari and
  Colab show it as a space); one quote style, “” (‘’ inside), no 「」, no straight quotes around
  Chinese, no space between a full-width quote and a Chinese character;
- ASCII diagrams (a fenced block without a language, drawn with box lines) are translated, and
  keep every line and arrow at the English one's column.

tests/test_i18n_typography.py applies the quote and term rules to the library catalog,
README.zh-CN.md and the glossary too, and checks that a recurring English sentence has one
Chinese rendering across the notebooks.
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
    "前置归一化": "前置规范化 (pre-norm)",
    "后置归一化": "后置规范化 (post-norm)",
    "均方根归一化": "均方根规范化 (RMSNorm)",
    "归一化层": "规范化层 (normalization layer)",
    "教师强制": "强制教学 (teacher forcing, d2l-zh)",
    "检查程序": "检查函数 (checker)",
}
#: Words the glossary rules out by a pattern: 单元 for a notebook cell (线性单元, 门控单元 and 隐藏单元
#: are units of a network), 提示 for a prompt (提示 is a hint).
RULED_OUT_PATTERNS = {
    re.compile(r"(?<!线性)(?<!门控)(?<!隐藏)(?<!\*)(?<!层的)单元(?!格|数)"): "单元格 (code cell)",
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


_CJK = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\u201c\u201d\u2018\u2019]"
_QUOTE_MARKERS = re.compile(r"^[ \t]*((?:>[ \t]?)*)")
#: A line that ends its block (heading, table row, fence, display maths) or a line that starts
#: a new one (list item, heading, table row, fence, display maths): the break between them stays.
_ENDS_BLOCK = re.compile(r"^[ \t]*(?:#|\||```|\$\$)|(?:  |\\)$")
_STARTS_BLOCK = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#|\||```|\$\$|$)")
#: Chinese punctuation the CJK blocks above leave out: the dash ——, the ellipsis …
_CJK_DASHES = r"[\u2014\u2026]"
#: Full-width punctuation: a break after it shows as a space before the next word, even a Latin
#: one, a number, code or maths (``它们：⏎`weights`…`` reads "它们： weights").
_FULL_WIDTH = r"[\u3000-\u303f\uff00-\uffef\u201c\u201d\u2018\u2019\u2014\u2026]"
#: Emphasis markers around the characters that meet at the break.
_EDGE_END = re.compile(rf"(?:{_CJK}|{_CJK_DASHES})[*_]*$")
_EDGE_START = re.compile(rf"^[*_]*(?:{_CJK}|{_CJK_DASHES})")
_PUNCTUATION_END = re.compile(rf"{_FULL_WIDTH}[*_]*$")
_LATIN_START = re.compile(r"^[*_]*[A-Za-z0-9`$\[(\\]")
#: A Chinese character (not punctuation) beside a Latin word, a number, code or maths: joined
#: with the one space the course's Chinese puts there (``由 `context_length```).
_IDEOGRAPH_END = re.compile(r"[\u4e00-\u9fff][*_]*$")
_IDEOGRAPH_START = re.compile(r"^[*_]*[\u4e00-\u9fff]")
_LATIN_END = re.compile(r"[\x21-\x29\x2b-\x5e\x60-\x7e][*_]*$")  # ASCII, * and _ aside
_ASCII_START = re.compile(r"^[*_]*[\x21-\x29\x2b-\x5e\x60-\x7e]")


def _split_quote(line: str) -> tuple[int, str]:
    """A line's blockquote depth (``> > x`` is 2) and its text after the markers."""
    markers = _QUOTE_MARKERS.match(line).group(1)
    return markers.count(">"), line[len(_QUOTE_MARKERS.match(line).group(0)) :]


def broken_sentence_breaks(markdown: str) -> list[int]:
    """Indices of the lines (outside code) that end with a Chinese character (—— and … included)
    and whose next line goes on with one inside the same paragraph, blockquotes included
    (``…的⏎> 下一个``), or that end with full-width punctuation and go on with a Latin word,
    a number, code or maths (``它们：⏎`weights_from_qk```): only
    Firefox applies CSS's segment-break rule, so Chrome, Safari, Colab and the site show the
    break as a stray space. A break between a Chinese character and a Latin word, a number, code
    or maths (``由⏎`context_length```, ```x`⏎向后``) shows as the space the style wants there,
    but it still cuts a sentence in the source a translator edits: it counts too, and
    :func:`join_broken_sentences` joins it with that space. Lines that end a heading, table row,
    fence or display maths, a hard break (two spaces or a backslash), and lines that start a
    list item, heading, table row, fence or a deeper or shallower quote keep their break."""
    lines = FENCE.sub(" ", markdown).split("\n")
    found = []
    for i, (line, after) in enumerate(zip(lines, lines[1:])):
        depth, text = _split_quote(line)
        next_depth, next_text = _split_quote(after)
        if next_depth not in (0, depth) or (next_depth and not depth) or not text.strip():
            continue
        if _ENDS_BLOCK.search(text) or _STARTS_BLOCK.match(next_text):
            continue
        end, start = text.rstrip(), next_text.lstrip()
        chinese_both_sides = _EDGE_END.search(end) and _EDGE_START.match(start)
        if (
            chinese_both_sides
            or (_PUNCTUATION_END.search(end) and _LATIN_START.match(start))
            or _mixed(end, start)
        ):
            found.append(i)
    return found


def _mixed(end: str, start: str) -> bool:
    """A Chinese character on one side of the break, a Latin word, number, code or maths on the
    other (or Latin before full-width punctuation: ``$x$⏎。``)."""
    return bool(
        (_IDEOGRAPH_END.search(end) and _ASCII_START.match(start))
        or (_LATIN_END.search(end) and _EDGE_START.match(start))
    )


def broken_sentences(markdown: str) -> int:
    """How many line breaks sit between two Chinese characters of one paragraph (code left out)."""
    return len(broken_sentence_breaks(markdown))


def join_broken_sentences(markdown: str) -> str:
    """``markdown`` with every break :func:`broken_sentences` counts joined (the next line's quote
    markers and indentation dropped); fenced code is left as it is."""
    if FENCE.search(markdown):
        parts = re.split(r"(```.*?```)", markdown, flags=re.S)
        return "".join(p if p.startswith("```") else join_broken_sentences(p) for p in parts)
    lines = markdown.split("\n")
    for i in reversed(broken_sentence_breaks(markdown)):
        head, tail = lines[i].rstrip(), _split_quote(lines[i + 1])[1].lstrip()
        # CommonMark: ``**`` between full-width punctuation and a character is no delimiter.
        spaced = _IDEOGRAPH_END.search(head) and _ASCII_START.match(tail)
        spaced = spaced or (_LATIN_END.search(head) and _IDEOGRAPH_START.match(tail))
        glue = " " if spaced or _STRANDED_EMPHASIS.search(head + "\n" + tail) else ""
        lines[i : i + 2] = [head + glue + tail]
    return "\n".join(lines)


_STRANDED_EMPHASIS = re.compile(r"[^\w\s*_][*_]+\n\w|\w\n[*_]+[^\w\s*_]")


_HAN = r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]"
#: What a reader reads as words: code, maths, link targets, HTML tags and ``{placeholders}`` out.
_NOT_PROSE = re.compile(
    r"```.*?```|\$\$.*?\$\$|`[^`]+`|(?<![\\$])\$(?!\$)[^$]+?\$|\]\([^)\s]*\)|<[^>]+>|\{[^{}\s]*\}",
    re.S,
)
#: One quote style (GB/T 15834, d2l-zh): “” in Chinese text, ‘’ inside them, no space between
#: a full-width quote and a Chinese character. Straight quotes stay around English and token
#: strings ("trains", " and"), and anything in backticks is code.
QUOTE_RULES = (
    (re.compile(r"「[^」]*」|『[^』]*』"), "「」 quotes: write “” (‘’ inside)"),
    (re.compile(r'"[^"\n]*"'), 'straight "" around Chinese: write “”'),
    (
        re.compile(rf"{_HAN}[ \t]+[“”]|[“”][ \t]+{_HAN}"),
        "a space between a full-width quote and a Chinese character",
    ),
)


def quote_problems(text: str) -> list[str]:
    """Quotation marks in ``text`` (prose only) that break the course's one quote style."""
    words = _NOT_PROSE.sub("x", text)  # a code span reads as a word, not as Chinese
    return [
        f"{why}: {match.group(0)[:40]!r}"
        for pattern, why in QUOTE_RULES
        for match in pattern.finditer(words)
        if not match.group(0).startswith('"') or re.search(r"[\u4e00-\u9fff]", match.group(0))
    ]


#: Box-drawing characters and arrowheads: a fenced block without a language that uses them is a
#: diagram, whose words are translated and whose frame stays.
_FRAME = re.compile(r"[\u2500-\u257f\u25b2-\u25c4]")


def is_diagram(fence: str) -> bool:
    """A fenced block with no language (```` ``` ```` alone on its line) drawn with box lines."""
    return fence.startswith("```\n") and _FRAME.search(fence) is not None


def diagram_frame(fence: str) -> list[list[tuple[int, str]]]:
    """Each line's box-drawing characters with their display columns (a Chinese character is
    two columns wide in a monospaced font): what a translation must keep in place."""
    import unicodedata

    frame = []
    for line in fence.split("\n"):
        column, marks = 0, []
        for char in line:
            if _FRAME.match(char):
                marks.append((column, char))
            column += 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if marks:
            frame.append(marks)
    return frame


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
    en_diagrams = [f for f in FENCE.findall(english) if is_diagram(f)]
    zh_diagrams = [f for f in FENCE.findall(chinese) if is_diagram(f)]
    if [diagram_frame(f) for f in en_diagrams] != [diagram_frame(f) for f in zh_diagrams]:
        found.append("a diagram's lines and arrows must stay where the English has them")
    for name, pattern in (("code block", FENCE), ("display maths", DISPLAY_MATH)):
        en_spans = [m for m in pattern.findall(english) if not is_diagram(m)]
        missing = Counter(en_spans) - Counter(pattern.findall(chinese))
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
    found += quote_problems(chinese)
    if REFERENCE_LINK.search(chinese):
        found.append("reference-style link [text][ref]: write [text](target)")
    found += term_problems(english, chinese, terms)
    return found


def term_problems(english: str, chinese: str, terms: list[Term] | None = None) -> list[str]:
    """The glossary's terms in ``chinese`` (the translation of ``english``): the words it rules
    out, and its Chinese wherever the English uses one of its terms."""
    found = []
    # A quotation is the source's own words (or their English gloss): any term may stand there.
    english_prose, chinese_prose = QUOTED.sub(" ", prose(english)), prose(chinese)
    unquoted = QUOTED.sub(" ", chinese_prose)
    for word, instead in RULED_OUT.items():
        if word in unquoted:
            found.append(f"{word}: the glossary writes {instead}")
    for pattern, instead in RULED_OUT_PATTERNS.items():
        if pattern.search(unquoted):
            found.append(f"{pattern.search(unquoted).group(0)}: the glossary writes {instead}")
    # 提示 is a hint: a cell that speaks of a prompt (and of no hint) writes 提示词.
    speaks_of = {w: re.search(rf"(?i)\b{w}s?\b", english_prose) for w in ("prompt", "hint")}
    if speaks_of["prompt"] and not speaks_of["hint"] and re.search(r"提示(?!词)", unquoted):
        found.append("the English says prompt: the glossary writes 提示词 (提示 is a hint)")
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
