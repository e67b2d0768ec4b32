"""Chinese typography and terms across the whole edition (tests/i18n_lint.py's rules).

- No line break inside a Chinese sentence of a notebook, blockquotes included (only Firefox
  hides it; the library's messages are printed, where a line break is a line break).
- One quote style: “” (‘’ inside) in Chinese text, in every zh catalog (the notebooks' and the
  library's), README.zh-CN.md and the glossary.
- One word per idea, as GLOSSARY.md decides: 规范化 for every normalization layer, 强制教学,
  提示词 for a prompt (提示 is a hint), 单元格, 检查函数.
- A recurring English sentence of the notebooks has one Chinese rendering ("Stuck?", "After an
  honest try:", the sources paragraph, …), found by aligning sentences on their code spans.
- The translated ASCII diagrams keep their frame; notebook 00 names the labels its tables show.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import i18n_lint
import polib
import pytest

REPO = Path(__file__).resolve().parents[1]
LIBRARY_CATALOG = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "transformer_course.po"
CODE = re.compile(r"`[^`]+`|\]\([^)\s]+\)")


def _library_messages() -> list[str]:
    try:
        catalog = polib.pofile(str(LIBRARY_CATALOG), wrapwidth=0)
    except OSError as error:  # a catalog polib cannot read is tools/i18n.py check's to report
        pytest.skip(f"polib cannot read the library catalog: {error}")
    return [
        text
        for entry in catalog
        if not entry.obsolete
        for text in (entry.msgstr, *entry.msgstr_plural.values())
        if text
    ]


def test_the_linter_sees_breaks_inside_quotes_and_leaves_block_breaks():
    count = i18n_lint.broken_sentences
    assert count("设定了种子的\n生成器") == 1
    assert count("> 它的标签是文本自身的\n> 下一个词元") == 1  # 10 c026
    assert count("> 1. 实际上它给出的是\n>    每个源词元") == 1  # a list item's continuation
    assert count("因此会进行\n**下采样**") == 1
    assert count("这里直接使用它们：\n`weights_from_qk` 在") == 1  # a stray space after the colon
    assert count("（批量规范化）。\nLayerNorm 只用") == count("步长——\n它的第一步") == 1
    # Between a Chinese character and a Latin word the break shows as the space the style wants,
    # but it still cuts the sentence a translator edits: joined with that space.
    assert count("由\n$C$ 个数") == count("PyTorch 的\n`F.softmax`") == count("`x`\n向后") == 1
    assert i18n_lint.join_broken_sentences("由\n$C$ 个，`x`\n向后\n。") == "由 $C$ 个，`x` 向后。"
    assert i18n_lint.join_broken_sentences("**词元**\n中文") == "**词元**中文"
    assert count("# 标题\n正文") == count("甲\n- 乙") == count("> 1. 甲\n> 2. 乙") == 0
    assert count("原文说：\n> 引文") == count("甲  \n乙") == count("```\n甲\n乙\n```") == 0
    joined = i18n_lint.join_broken_sentences("> **误区。**\n> 速查表\n```\n甲\n乙\n```")
    assert joined == "> **误区。** 速查表\n```\n甲\n乙\n```"  # the space keeps the bold


def test_no_line_break_inside_a_chinese_sentence_in_any_catalog():
    found = [
        f"{path.stem} {entry.msgctxt}"
        for path in i18n_lint.catalogs([])
        for entry in polib.pofile(str(path), wrapwidth=0)
        if entry.msgstr and not entry.obsolete and i18n_lint.broken_sentences(entry.msgstr)
    ]
    assert found == []


def test_the_quote_rule_names_each_slip():
    problems = i18n_lint.quote_problems
    assert problems("原文说“注意力”。") == []
    assert problems('请用 "trains" 作答，或 `"上"`') == []  # English and code keep straight quotes
    assert len(problems("原文说「注意力」。")) == 1
    assert len(problems('称为 "一种正则化策略"')) == 1
    assert len(problems("它的 “Training Procedure” 一节")) == 2


def _chinese_texts() -> dict[str, str]:
    texts = {
        f"{path.stem} {entry.msgctxt}": entry.msgstr
        for path in i18n_lint.catalogs([])
        for entry in polib.pofile(str(path), wrapwidth=0)
        if entry.msgstr and not entry.obsolete
    }
    texts |= {f"library {i}": m for i, m in enumerate(_library_messages())}
    texts["README.zh-CN.md"] = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    glossary = (REPO / "GLOSSARY.md").read_text(encoding="utf-8")
    texts["GLOSSARY.md"] = "\n".join(line for line in glossary.splitlines() if "|" in line)
    return texts


def test_one_quote_style_everywhere():
    found = [
        f"{where}: {problem}"
        for where, text in _chinese_texts().items()
        for problem in i18n_lint.quote_problems(text)
    ]
    assert found == []


RULED_OUT = {
    r"(前置|后置|均方根)归一化|归一化层": "规范化 (normalization layers)",
    r"教师强制": "强制教学",
    r"检查程序": "检查函数",
    r"(?<!线性)(?<!门控)(?<!隐藏)(?<!\*)(?<!层的)单元(?!格|数)": "单元格",
}


@pytest.mark.parametrize("pattern", list(RULED_OUT))
def test_one_word_per_idea_outside_quotations(pattern):
    found = []
    for where, text in _chinese_texts().items():
        if where == "GLOSSARY.md":
            continue  # its notes name the words it rules out
        words = i18n_lint.QUOTED.sub(" ", i18n_lint.prose(text))
        found += [f"{where}: {m.group(0)}" for m in re.finditer(pattern, words)]
    assert found == [], f"the glossary writes {RULED_OUT[pattern]}"


def _sentences(english: str, chinese: str) -> list[tuple[str, str]]:
    """(English, Chinese) sentence pairs of one cell that carry the same code spans or link
    targets, each normalised (code -> `X`, numbers -> N)."""
    en = re.sub(r"(?<!\n)\n(?!\n)", " ", i18n_lint.FENCE.sub(" ", english))
    zh = i18n_lint.FENCE.sub(" ", chinese)
    en_parts = re.split(r"(?<=[.!])\s+|(?<=\?)\s+(?!`)|\n+", en)
    zh_parts = re.split(r"(?<=[。！])|(?<=？)(?!`|运行|试试)|\n+", zh)
    pairs = []
    for sentence in en_parts:
        anchors = CODE.findall(sentence)
        matches = [z for z in zh_parts if anchors and all(a in z for a in anchors)]
        if len(matches) == 1:
            pairs.append((_normal(sentence), _normal(matches[0])))
    return pairs


def _normal(text: str) -> str:
    text = re.sub(r"\d+", "N", CODE.sub("`X`", text))
    return " ".join(text.split())


def test_a_recurring_sentence_has_one_rendering():
    renderings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in i18n_lint.catalogs([]):
        for entry in polib.pofile(str(path), wrapwidth=0):
            if entry.msgstr and not entry.obsolete and not entry.fuzzy:
                for en, zh in _sentences(entry.msgid, entry.msgstr):
                    renderings[en][zh].append(f"{path.stem} {entry.msgctxt}")
    recurring = {en: zh for en, zh in renderings.items() if sum(map(len, zh.values())) > 1}
    assert len(recurring) >= 5, "the alignment finds the boilerplate (Stuck?, sources, …)"
    varied = {en: dict(zh) for en, zh in recurring.items() if len(zh) > 1}
    assert varied == {}


def test_the_translated_diagrams_keep_their_frame():
    for name in ("09_transformer_block", "10_logits_and_loss"):
        path = next(p for p in i18n_lint.catalogs([]) if p.stem == name)
        entry = next(e for e in polib.pofile(str(path), wrapwidth=0) if e.msgctxt == "c003")
        en = [f for f in i18n_lint.FENCE.findall(entry.msgid) if i18n_lint.is_diagram(f)]
        zh = [f for f in i18n_lint.FENCE.findall(entry.msgstr) if i18n_lint.is_diagram(f)]
        assert len(en) == len(zh) == 1
        assert i18n_lint.diagram_frame(en[0]) == i18n_lint.diagram_frame(zh[0])
        assert re.search(r"[\u4e00-\u9fff]", zh[0]), f"{name}'s diagram is translated"


def test_notebook_00_names_the_labels_its_chinese_tables_show():
    library = {e.msgid: e.msgstr for e in polib.pofile(str(LIBRARY_CATALOG), wrapwidth=0)}
    path = next(p for p in i18n_lint.catalogs([]) if p.stem == "00_setup")
    text = "\n".join(e.msgstr for e in polib.pofile(str(path), wrapwidth=0) if e.msgstr)
    for label in ("detail", "build", "questions", "passed", "MISSING"):
        assert f"*{label}*" not in text
        assert f"*{library[label]}*" in text, f"00 names {library[label]} ({label})"
