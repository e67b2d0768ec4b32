"""The fonts the course's pictures draw with, in each language (introduced in 00_setup: the roadmap
strip; every diagram and plot of a Chinese notebook uses them).

matplotlib's DejaVu Sans has no Chinese glyphs, and Colab and most machines have no Chinese font,
so the package carries a subset of Noto Sans CJK SC (regular and bold; SIL Open Font License 1.1,
``diagrams/fonts/OFL.txt``) holding every Chinese character of the library catalog's translations:
``tools/cjk_font.py`` makes it. Here, below ``notebook`` and ``diagrams`` in the course's layers,
so that both can put it behind matplotlib's fonts.
"""

from __future__ import annotations

from pathlib import Path

#: The packaged CJK subset, regular and bold (package data of ``transformer_course.diagrams``).
CJK_FONTS = {
    weight: Path(__file__).resolve().parents[1]
    / "diagrams"
    / "fonts"
    / f"course-cjk-{weight.lower()}.otf"
    for weight in ("Regular", "Bold")
}


def font_family(lang: str) -> list[str]:
    """The ``font.family`` a picture in ``lang`` is drawn with: DejaVu Sans, and for Chinese the
    packaged CJK subset behind it (Latin letters, digits and shapes stay DejaVu's, as in English;
    a Chinese character falls back to the subset)."""
    if lang == "en":
        return ["DejaVu Sans"]
    from matplotlib import font_manager

    for path in CJK_FONTS.values():
        font_manager.fontManager.addfont(str(path))
    cjk = font_manager.FontProperties(fname=str(CJK_FONTS["Regular"])).get_name()
    return ["DejaVu Sans", cjk]
