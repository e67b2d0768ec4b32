"""GLOSSARY.md is the one bilingual glossary; every notebook title uses its terms."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from transformer_course import glossary

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


@pytest.fixture(scope="module")
def terms() -> list[glossary.Term]:
    return glossary.parse_glossary((REPO / "GLOSSARY.md").read_text(encoding="utf-8"))


def test_glossary_reads_the_repository_file(terms):
    assert glossary.GLOSSARY_FILE == REPO / "GLOSSARY.md"
    table = glossary.glossary_table()
    assert list(table.columns) == ["English", "中文", "first in", "note"]
    assert len(table) == len(terms) >= 80


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_title_term_is_in_the_glossary(path, terms):
    chinese = {t.chinese for t in terms}
    title = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
    missing = [term for term in glossary.title_terms(title) if term not in chinese]
    assert not missing, f"{path.name}: title terms {missing} are not in GLOSSARY.md's 中文 column"


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("token", "词元"),
        ("vocabulary", "词表"),
        ("out-of-vocabulary", "未登录词"),
        ("one-hot encoding", "独热编码"),
        ("skip-gram", "跳元模型"),
        ("continuous bag of words", "连续词袋模型"),
        ("attention head", "注意力头"),
        ("causal mask", "因果掩码"),
        ("padding mask", "填充掩码"),
        ("temperature", "温度"),
        ("entropy", "熵"),
        ("softmax", "归一化指数函数"),
        ("cross-attention", "交叉注意力"),
    ],
)
def test_the_standard_terms(terms, english, chinese):
    by_english = {t.english: t.chinese for t in terms}
    assert by_english.get(english) == chinese


def test_softmax_is_not_called_normalization(terms):
    """The seeds write 归一化 for LayerNorm; the course writes 规范化 for every normalization
    layer (d2l-zh), and softmax shares neither."""
    softmax = next(t for t in terms if t.english == "softmax")
    assert softmax.chinese not in ("归一化", "规范化")
    assert [t.english for t in terms if t.chinese == "规范化"] == ["normalization"]
    layers = [t for t in terms if "norm" in t.english.lower() and t.english != "softmax"]
    assert layers and all("规范化" in t.chinese and "归一化" not in t.chinese for t in layers)


def test_one_word_per_idea(terms):
    """Prompt and hint get different words; teacher forcing is d2l-zh's 强制教学."""
    by_english = {t.english: t.chinese for t in terms}
    assert by_english["prompt"] == "提示词" and by_english["hint"] == "提示"
    assert by_english["teacher forcing"] == "强制教学"
    assert by_english["code cell"] == "单元格" and by_english["checker"] == "检查函数"


def test_no_duplicates(terms):
    english = [t.english.lower() for t in terms]
    chinese = [t.chinese for t in terms]
    assert len(set(english)) == len(english), "an English term is listed twice"
    assert len(set(chinese)) == len(chinese), "a Chinese term is listed twice"


def test_title_terms_and_bad_input():
    assert glossary.title_terms("# 04 · Queries, keys and values (查询/键/值)") == [
        "查询",
        "键",
        "值",
    ]
    assert glossary.title_terms("# 12 · Generation (文本生成与解码策略)") == [
        "文本生成",
        "解码策略",
    ]
    assert glossary.title_terms("# 09 · The Transformer block (Transformer 块)") == [
        "Transformer 块"
    ]
    with pytest.raises(ValueError, match="Chinese term in parentheses"):
        glossary.title_terms("# 04 · no term")
    with pytest.raises(ValueError, match="no glossary table"):
        glossary.parse_glossary("# nothing here")
    with pytest.raises(ValueError, match="4 cells"):
        glossary.parse_glossary(
            "| English | 中文 | first in | note |\n|---|---|---|---|\n| token | 词元 |\n"
        )
    with pytest.raises(TypeError, match="text must be"):
        glossary.parse_glossary(None)
