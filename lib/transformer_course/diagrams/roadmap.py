"""The "you are here" roadmap strip at the top of every notebook (introduced in 00_setup): the 16
notebooks as chips, the current one highlighted. Drawn by ``make images``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager
from matplotlib.figure import Figure

from .base import PALETTE, box, canvas, note
from .numbers import NOTEBOOKS

#: The roadmap strip's chip for each notebook: a short name and the colour of its kind of stage.
STRIP_LABELS: dict[str, tuple[str, str]] = {
    "00": ("Setup", "muted"),
    "01": ("Tokens", "data"),
    "02": ("Embeddings", "embed"),
    "02b": ("word2vec", "embed"),
    "03": ("Positions", "embed"),
    "04": ("Q, K, V", "attention"),
    "05": ("Scale", "attention"),
    "06": ("Causal mask", "attention"),
    "07": ("Softmax", "attention"),
    "08": ("Weights @ V", "attention"),
    "09": ("Block", "norm"),
    "10": ("Logits, loss", "output"),
    "11": ("Training", "output"),
    "12": ("Generation", "output"),
    "13": ("Modern", "modern"),
    "14": ("Enc-decoder", "modern"),
}


#: The Chinese edition's chips and notebook titles (the titles of notebooks/zh/, GLOSSARY.md's
#: terms; tests/test_i18n.py checks them against the translated first cells).
STRIP_LABELS_ZH: dict[str, str] = {
    "00": "环境准备",
    "01": "词元",
    "02": "嵌入",
    "02b": "word2vec",
    "03": "位置",
    "04": "Q、K、V",
    "05": "缩放",
    "06": "因果掩码",
    "07": "Softmax",
    "08": "权重 @ V",
    "09": "Transformer 块",
    "10": "logits 与损失",
    "11": "训练",
    "12": "文本生成",
    "13": "现代模块",
    "14": "编码器-解码器",
}
NOTEBOOKS_ZH: dict[str, str] = {
    "00": "环境准备",
    "01": "词元化",
    "02": "词嵌入",
    "02b": "word2vec：学习得到的词向量",
    "03": "位置编码",
    "04": "查询、键和值",
    "05": "缩放注意力分数",
    "06": "因果掩码",
    "07": "归一化指数函数",
    "08": "V 的加权求和与输出投影",
    "09": "Transformer 块",
    "10": "输出层与损失函数",
    "11": "训练",
    "12": "文本生成",
    "13": "现代模块",
    "14": "编码器-解码器",
}
#: A subset of Noto Sans CJK SC (regular and bold; SIL Open Font License
#: 1.1, fonts/OFL.txt) holding only the
#: characters the Chinese roadmap writes: matplotlib's DejaVu Sans has no Chinese glyphs, and
#: Colab and most machines have no Chinese font. Made by tools/cjk_font.py.
CJK_FONTS = {
    weight: Path(__file__).resolve().parent / "fonts" / f"course-cjk-{weight.lower()}.otf"
    for weight in ("Regular", "Bold")
}
#: The strip's texts in each language: heading (whole course), heading (here), right-hand note.
TEXTS = {
    "en": (
        "The course in 16 notebooks (00 shows the whole model)",
        "You are here: {number} · {title}",
        "the whole model: notebook 00",
    ),
    "zh": (
        "课程共 16 个 notebook（00 展示完整模型）",
        "你在这里：{number} · {title}",
        "完整模型：notebook 00",
    ),
}


def chinese_text() -> str:
    """Every character the Chinese roadmap draws (what the subset font must hold)."""
    parts = [*STRIP_LABELS_ZH.values(), *NOTEBOOKS_ZH.values(), *TEXTS["zh"]]
    return "".join(sorted(set("".join(parts))))


def _font_family(lang: str) -> list[str]:
    if lang == "en":
        return ["DejaVu Sans"]
    for path in CJK_FONTS.values():
        font_manager.fontManager.addfont(str(path))
    cjk = font_manager.FontProperties(fname=str(CJK_FONTS["Regular"])).get_name()
    return ["DejaVu Sans", cjk]  # Latin from DejaVu as in English; Chinese falls back to it


def roadmap_strip(here: str | None = None, lang: str = "en") -> Figure:
    """The course as a strip of 16 chips in two rows, ``here`` highlighted, in English or
    Chinese (``lang="zh"``, the roadmap of notebooks/zh/)."""
    if lang not in TEXTS:
        raise ValueError(f"lang must be one of {sorted(TEXTS)}, got {lang!r}")
    with mpl.rc_context({"font.family": _font_family(lang)}):
        return _roadmap_strip(here, lang)


def _roadmap_strip(here: str | None, lang: str) -> Figure:
    """The course as a strip of 16 chips in two rows, ``here`` highlighted: the roadmap at the
    top of every notebook. Drawn at the size it is shown (about 1,000 px wide: a notebook's
    width), so its 10-point labels stay readable; 00's :func:`gpt_overview` is the full map."""
    if here is not None and here not in NOTEBOOKS:
        raise ValueError(f"here must be a notebook number {list(NOTEBOOKS)} or None, got {here!r}")
    if set(STRIP_LABELS) != set(NOTEBOOKS):
        raise ValueError("STRIP_LABELS must name every notebook of NOTEBOOKS")
    here = None if here == "00" else here
    per_row, width, height, gap, margin = 8, 1.24, 0.42, 0.07, 0.1
    fig, ax = canvas(margin * 2 + per_row * width + (per_row - 1) * gap, 1.5)
    whole, you_are_here, whole_model = TEXTS[lang]
    titles = NOTEBOOKS if lang == "en" else NOTEBOOKS_ZH
    heading = whole if here is None else you_are_here.format(number=here, title=titles[here])
    note(ax, margin, 1.3, heading, fontsize=12, style="normal", fontweight="bold", colour="black")
    note(
        ax,
        fig.get_figwidth() - margin,
        1.3,
        whole_model,
        ha="right",
        fontsize=9,
        style="italic",
    )
    for index, number in enumerate(NOTEBOOKS):
        row, column = divmod(index, per_row)
        x = margin + column * (width + gap) + width / 2
        y = 0.82 - row * (height + 0.1)
        label, kind = STRIP_LABELS[number]
        label = label if lang == "en" else STRIP_LABELS_ZH[number]
        is_here = number == here
        box(
            ax,
            x,
            y,
            width,
            height,
            f"{number} {label}",
            PALETTE["highlight"] if is_here else PALETTE[kind],
            fontsize=10 if lang == "en" else 9,  # "09 Transformer 块" fits its chip at 9 points
            bold=is_here,
            edge=PALETTE["highlight"] if is_here else None,
            linewidth=2.5 if is_here else 0.8,
        )
    return fig
