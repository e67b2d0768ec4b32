"""Every picture the Chinese edition shows draws its words in Chinese, with the package's font.

Rendered here, without a notebook: every diagram of ``make images`` and the query-row schematic
(static pictures), and every library function that draws a plot in a notebook (widgets' views,
attention maps, ``viz`` defaults), each in ``in_language("zh")``. matplotlib may use only its own
fonts and the CJK subset the package carries (``diagrams/fonts``; a Chinese font installed on the
machine is hidden), so a character the subset lacks shows up as matplotlib's "Glyph … missing"
warning (tests/test_i18n.py checks that the subset holds every character of the catalog:
``tools/cjk_font.py --check``). The word rule (:func:`english_runs`): no two English words in a row, once code,
identifiers, quoted corpus text and the names the glossary keeps in English are set aside.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch
from matplotlib import font_manager
from matplotlib.text import Text

from transformer_course import diagrams
from transformer_course.diagrams.base import render
from transformer_course.diagrams.query_row import QUERY_ROW_STAGES, query_row_steps
from transformer_course.i18n import in_language
from transformer_course.viz.fonts import CJK_FONTS, font_family

#: Names the course keeps in English in Chinese text too (GLOSSARY.md: model parts, libraries,
#: "notebook"); compared lower-case.
KEPT_NAMES = {
    "adamw", "bpe", "cos", "gpt", "gqa", "layernorm", "llama", "logits", "memory", "nats",
    "notebook", "relu", "rmsnorm", "rope", "silu", "sin", "softmax", "swiglu", "transformer",
    "transpose", "view",
}  # fmt: skip
#: A word: two or more ASCII letters (hyphenated parts allowed: "multi-head"), nothing else.
WORD = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]+)*[,;:]?")
#: Spans that are not prose: quoted corpus text or tokens ("…", “…”) and code (x W_Q, p.grad).
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
CODE = re.compile(r"\S*[_.()=@]\S*")


def english_runs(text: str) -> list[str]:
    """Runs of two or more English words next to each other (only spaces between them) in
    ``text``, after quoted spans, code-like tokens (with ``_ . ( ) = @``) and :data:`KEPT_NAMES`
    are removed. "masked multi-head attention" is such a run; "LayerNorm", "x W_Q",
    "loss.backward()" and “ hoping” are not."""
    text = CODE.sub(" | ", QUOTED.sub(" | ", text))
    runs, current = [], []
    for token in re.split(r"(\s+)", text):
        if not token or token.isspace():
            continue
        if WORD.fullmatch(token) and token.rstrip(",;:").lower() not in KEPT_NAMES:
            current.append(token)
            continue
        if len(current) >= 2:
            runs.append(" ".join(current))
        current = []
    if len(current) >= 2:
        runs.append(" ".join(current))
    return runs


def test_english_runs_rule():
    assert english_runs("masked multi-head attention") == ["masked multi-head attention"]
    assert english_runs("the next token") == ["the next token"]
    assert english_runs("掩码多头注意力\nH = 4 个头") == []
    assert english_runs("x, y = get_batch(train_ids)") == []
    assert english_runs('"Chapter 1: Building Rapport and …"') == []
    assert english_runs("RoPE、RMSNorm、SwiGLU、GQA") == []
    assert english_runs("最后的 LayerNorm") == []
    assert english_runs("loss.backward() then step") == ["then step"]


@pytest.fixture(scope="module")
def packaged_fonts_only():
    """matplotlib sees only its own fonts and the package's CJK subset while the module runs."""
    manager = font_manager.fontManager
    saved = list(manager.ttflist)
    own = Path(font_manager.__file__).resolve().parent / "mpl-data"
    ours = CJK_FONTS["Regular"].parent.resolve()
    manager.ttflist = [f for f in manager.ttflist if Path(f.fname).resolve().is_relative_to(own)]
    font_family("zh")  # adds the packaged subset
    manager._findfont_cached.cache_clear()
    for weight in ("normal", "bold"):
        cjk = font_family("zh")[1]
        found = Path(manager.findfont(font_manager.FontProperties(family=cjk, weight=weight)))
        assert found.resolve().parent == ours, f"{cjk} ({weight}) resolves to {found}"
    yield
    manager.ttflist = saved
    manager._findfont_cached.cache_clear()


def _drawn_texts(draw) -> tuple[list[str], list[str]]:
    """The figure ``draw()`` returns in Chinese, rendered: its texts and the glyph warnings.
    matplotlib's font settings are those ``setup_notebook(lang="zh")`` makes."""
    import matplotlib as mpl

    from transformer_course.notebook import _use_picture_font

    with mpl.rc_context(), in_language("zh"), warnings.catch_warnings(record=True) as caught:
        _use_picture_font("zh")
        warnings.simplefilter("always")
        fig = draw()
        assert not isinstance(fig, str), fig  # a view's message for bad knobs
        render(fig, "png")
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text()]
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    return texts, missing


def _static_pictures() -> dict:
    pictures = dict(diagrams.all_diagrams())
    for stage in QUERY_ROW_STAGES:
        pictures[f"query_row_{stage}"] = lambda stage=stage: query_row_steps(stage)
    return pictures


def _plots() -> dict:
    from transformer_course import viz
    from transformer_course.widgets.attention_maps import attention_map_figure, head_split_figure
    from transformer_course.widgets.positional import positional_view
    from transformer_course.widgets.scale_knobs import scale_view
    from transformer_course.widgets.softmax_knobs import temperature_view

    generator = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(2, 5, 5, generator=generator), dim=-1)  # (H, T, T)
    scores = torch.randn(6, generator=generator)
    scores[4:] = float("-inf")
    tokens = ["The", " cat", " sat", " on", " it", "."]
    return {
        "temperature_view": lambda: temperature_view(scores, 0.5, tokens),
        "positional_view": lambda: positional_view(16, 16, dimension=3),
        "scale_view unscaled": lambda: scale_view(d_k=64, scaled=False),
        "scale_view": lambda: scale_view(d_k=64, scaled=True),
        "attention_map_figure": lambda: attention_map_figure(weights, tokens[:5]),
        "attention_map_figure one head": lambda: attention_map_figure(weights, head=1),
        "head_split_figure": lambda: head_split_figure(torch.zeros(5, 8), 2, tokens=tokens[:5]),
        "plot_curves": lambda: viz.plot_curves({"loss": [3.0, 2.0, 1.5]}).figure,
        "plot_distributions": lambda: viz.plot_distributions({"a": [0.0, 1.0, 1.5]}).figure,
    }


def _check(name: str, draw) -> list[str]:
    texts, missing = _drawn_texts(draw)
    problems = [f"{name}: {warning}" for warning in missing[:3]]
    problems += [
        f"{name}: English {run!r} in {text!r}" for text in texts for run in english_runs(text)
    ]
    if not any(re.search(r"[\u4e00-\u9fff]", text) for text in texts):
        problems.append(f"{name}: no Chinese at all in {texts[:6]}")
    return problems


@pytest.mark.parametrize("name", sorted(_static_pictures()))
def test_static_picture_is_chinese(packaged_fonts_only, name):
    problems = _check(name, _static_pictures()[name])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(_plots()))
def test_plot_is_chinese(packaged_fonts_only, name):
    problems = _check(name, _plots()[name])
    assert not problems, "\n".join(problems)


def test_the_word_check_fails_on_an_english_picture(packaged_fonts_only):
    """The same check on the English course map finds English sentences (it can fail)."""
    with in_language("en"):
        fig = diagrams.gpt_overview()
    runs = [run for t in fig.findobj(Text) for run in english_runs(t.get_text())]
    assert len(runs) > 10, runs


def test_setup_notebook_puts_the_font_behind_plots():
    import matplotlib as mpl

    from transformer_course.i18n import language, set_language
    from transformer_course.notebook import setup_notebook

    before = language()
    try:
        with mpl.rc_context():
            setup_notebook(lang="zh")
            assert mpl.rcParams["font.family"] == font_family("zh")
    finally:
        set_language(before)


def test_the_chinese_readme_and_site_show_the_chinese_course_map():
    """README.zh-CN.md shows images/zh/gpt_overview.png, a picture ``make images`` draws in
    Chinese, and the Chinese site's landing page takes it (not the English map)."""
    from script_loader import load_script

    from transformer_course.diagrams.base import same_picture

    repo = Path(__file__).resolve().parents[1]
    readme = (repo / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](images/zh/gpt_overview.png)" in readme
    with in_language("zh"):
        drawn = render(diagrams.gpt_overview(), "png")
    assert same_picture((repo / "images/zh/gpt_overview.png").read_bytes(), drawn)
    site = load_script("site/course_site.py")
    found = [n for n in site.edition_pictures(site.CHINESE) if (repo / n).exists()]
    assert found[0] == "images/zh/gpt_overview.png", found
    assert site.edition_pictures(site.ENGLISH)[0] == site.ROADMAP_NAMES[0]


REPO = Path(__file__).resolve().parents[1]
#: Stored pictures with no words at all, which the two editions may draw alike: (file, cell id).
#: Empty: every picture of the course has a title, an axis label or a legend.
WORDLESS: set[tuple[str, str]] = set()


def _stored_pictures(notebook: Path) -> dict[tuple[str, int], bytes]:
    """Every PNG a notebook stores, decoded: (cell id, output index) -> bytes."""
    import base64

    import nbformat

    return {
        (cell.id, index): base64.b64decode(output["data"]["image/png"])
        for cell in nbformat.read(notebook, as_version=4).cells
        if cell.cell_type == "code"
        for index, output in enumerate(cell.get("outputs", []))
        if "image/png" in output.get("data", {})
    }


def _same_picture(english: bytes, chinese: bytes) -> bool:
    """Byte for byte, or pixel for pixel (the same picture written twice)."""
    import io

    import numpy as np
    from PIL import Image

    if english == chinese:
        return True
    a, b = (np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")) for png in (english, chinese))
    return a.shape == b.shape and bool((a == b).all())


def test_no_stored_chinese_picture_is_the_english_one():
    """A Chinese picture equal to its English one draws English words (13's activations once did)."""
    same, compared = [], 0
    for chinese_notebook in sorted((REPO / "notebooks" / "zh").glob("[0-9]*.ipynb")):
        english = _stored_pictures(REPO / "notebooks" / chinese_notebook.name)
        for key, png in _stored_pictures(chinese_notebook).items():
            if key in english and (chinese_notebook.stem, key[0]) not in WORDLESS:
                compared += 1
                if _same_picture(english[key], png):
                    same.append((chinese_notebook.name, *key))
    for chinese_image in sorted((REPO / "images" / "zh").rglob("*.png")):
        english_image = REPO / "images" / chinese_image.relative_to(REPO / "images" / "zh")
        if english_image.exists():
            compared += 1
            if _same_picture(english_image.read_bytes(), chinese_image.read_bytes()):
                same.append((str(chinese_image.relative_to(REPO)), "", 0))
    assert compared > 50  # the scan sees the pictures
    assert same == [], "draw these pictures' words with viz.label (re-record the Chinese notebook)"


def test_the_picture_comparison_sees_a_copy_and_a_change():
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    def drawn(title: str) -> bytes:
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.set_title(title)
        png = render(fig, "png")
        plt.close(fig)
        return png

    english, chinese = drawn("activations"), drawn("激活函数")
    rewritten = io.BytesIO()
    Image.open(io.BytesIO(english)).save(rewritten, format="PNG", optimize=True)  # other bytes
    assert rewritten.getvalue() != english and _same_picture(english, rewritten.getvalue())
    assert not _same_picture(english, chinese)
