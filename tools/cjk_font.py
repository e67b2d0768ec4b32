"""Make the Chinese pictures' font: a subset of Noto Sans CJK SC with the characters the catalog holds.

    python tools/cjk_font.py            # writes lib/transformer_course/diagrams/fonts/course-cjk-*.otf
    python tools/cjk_font.py --check    # exit 1 when the font lacks a character the catalog holds

matplotlib ships no Chinese font, and Colab and most learners' machines have none, so the
Chinese pictures (the diagrams and plots in ``setup_notebook(lang="zh")``) draw with a font the
library carries. The whole Noto Sans CJK SC is 16 MB; the subset holds every Chinese character
and full-width sign of the library catalog's translations (:func:`catalog_text`: whatever a
picture draws comes through that catalog) and weighs a few hundred kilobytes. fontTools (a matplotlib dependency) cuts it,
from the machine's copy of Noto Sans CJK (Debian's fonts-noto-cjk; SIL Open Font License 1.1,
which allows a subset to be shipped with its licence: fonts/OFL.txt).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
from transformer_course.viz.fonts import CJK_FONTS  # noqa: E402

#: Where Debian (and Ubuntu) put Noto Sans CJK; {weight} is Regular or Bold.
SOURCES = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-{weight}.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-{weight}.ttc",
]
FAMILY = "Noto Sans CJK SC"
#: The compiled library catalog the package ships (what a picture in Chinese can draw).
CATALOG = REPO / "lib/transformer_course/i18n/locale/zh_CN/LC_MESSAGES/transformer_course.mo"


def catalog_text() -> str:
    """Every character past Latin (Chinese, full-width signs) in the library catalog's
    translations, sorted: what the subset font must hold. Latin, digits and symbols come from
    DejaVu Sans, as in the English pictures."""
    from babel.messages.mofile import read_mo

    with CATALOG.open("rb") as file:
        catalog = read_mo(file)
    texts = []
    for message in catalog:
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        texts += [text for text in strings if text]
    return "".join(sorted({c for c in "".join(texts) if is_cjk(c)}))


#: Unicode blocks Noto Sans CJK draws and DejaVu Sans does not: CJK radicals to ideographs,
#: compatibility ideographs, vertical and small forms, full-width forms. Emoji (✅, 💡, U+FE0F)
#: are printed output, never drawn in a picture, and Noto Sans CJK has none.
CJK_BLOCKS = ((0x2E80, 0x9FFF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF))


def is_cjk(character: str) -> bool:
    """True for a character the subset font must hold (see :data:`CJK_BLOCKS`)."""
    return any(low <= ord(character) <= high for low, high in CJK_BLOCKS)


def missing() -> list[str]:
    """Characters of the library catalog that a shipped font (regular or bold) cannot draw."""
    from fontTools.ttLib import TTFont

    wanted = catalog_text()
    lacking = set()
    for path in CJK_FONTS.values():
        cmap = TTFont(path).getBestCmap() if path.exists() else {}
        lacking |= {c for c in wanted if ord(c) not in cmap}
    return sorted(lacking)


def make(source: Path, target: Path) -> None:
    collection = TTCollection(source)
    font = next(f for f in collection.fonts if f["name"].getDebugName(1) == FAMILY)
    options = subset.Options()
    options.name_IDs = ["*"]  # keep the font's names and its licence notice
    options.notdef_outline = True
    options.layout_features = []
    subsetter = subset.Subsetter(options)
    # Only the Chinese characters and full-width punctuation: Latin letters come from DejaVu Sans.
    subsetter.populate(text=catalog_text())
    subsetter.subset(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    font.save(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        lacking = missing()
        print(f"missing: {''.join(lacking)}" if lacking else "the font draws every character")
        return 1 if lacking else 0
    for weight, target in CJK_FONTS.items():
        found = [Path(p.format(weight=weight)) for p in SOURCES]
        source = next((p for p in found if p.exists()), None)
        if source is None:
            raise SystemExit(
                f"no Noto Sans CJK on this machine ({found}): apt install fonts-noto-cjk"
            )
        make(source, target)
        print(f"wrote {target.relative_to(REPO)} ({target.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
