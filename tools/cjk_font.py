"""Make the Chinese roadmap's font: a subset of Noto Sans CJK SC with only the characters it draws.

    python tools/cjk_font.py            # writes lib/transformer_course/diagrams/fonts/course-cjk-*.otf
    python tools/cjk_font.py --check    # exit 1 when the font lacks a character the roadmap draws

matplotlib ships no Chinese font, and Colab and most learners' machines have none, so the
Chinese roadmap strip (``diagrams.roadmap_strip(lang="zh")``) draws with a font the library carries.
The whole Noto Sans CJK SC is 16 MB; the subset holds the few dozen characters of
``roadmap.chinese_text()`` and weighs a few kilobytes. fontTools (a matplotlib dependency) cuts it,
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
from transformer_course.diagrams.roadmap import CJK_FONTS, chinese_text  # noqa: E402

#: Where Debian (and Ubuntu) put Noto Sans CJK; {weight} is Regular or Bold.
SOURCES = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-{weight}.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-{weight}.ttc",
]
FAMILY = "Noto Sans CJK SC"


def missing() -> list[str]:
    """Characters of the Chinese roadmap that a shipped font (regular or bold) cannot draw."""
    from fontTools.ttLib import TTFont

    wanted = [c for c in chinese_text() if ord(c) > 0x2E7F]
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
    subsetter.populate(text="".join(c for c in chinese_text() if ord(c) > 0x2E7F))
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
