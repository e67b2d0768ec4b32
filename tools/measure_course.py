"""Prose words per notebook: on the learner's main path, and folded away (issue 26's caps).

    python tools/measure_course.py              # every notebook in notebooks/, and the total
    python tools/measure_course.py NB [NB ...]  # only these

Main-path words are the markdown prose outside "Going deeper" sections and outside <details>;
folded words are the prose inside them (the rule: ``tools/course_sections.py``, the same as
the project's before-stop counter). The caps: at most :data:`NOTEBOOK_CAP` main-path words in
each notebook but 00 (setup), at most :data:`COURSE_CAP` in all (00 included, the advanced
track :data:`ADVANCED` not);
tests/test_course_measure.py fails above them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course_sections import count_words  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_CAP = 1_500
COURSE_CAP = 20_000
#: Notebooks without the per-notebook cap (setup is not a lesson); they count in the total.
UNCAPPED = ("00",)
#: The advanced track (DESIGN.md): each notebook capped, none counted in the course total.
ADVANCED = ("01b", "15", "16")


def notebooks() -> list[Path]:
    return sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


def measure(paths: list[Path]) -> pd.DataFrame:
    """One row per notebook (index: its stem): main-path words, folded words, the cap."""
    rows = []
    for path in paths:
        main, folded = count_words(json.loads(path.read_text(encoding="utf-8")))
        capped = not path.stem.startswith(UNCAPPED)
        rows.append(
            {
                "notebook": path.stem,
                "main path": main,
                "folded": folded,
                "cap": NOTEBOOK_CAP if capped else None,
            }
        )
    table = pd.DataFrame(rows).set_index("notebook")
    table["cap"] = table["cap"].astype("Int64")
    return table


def course_words(table: pd.DataFrame, column: str = "main path") -> int:
    """The words of ``column`` over the main course: every notebook but the advanced track."""
    return int(table.loc[~table.index.str.startswith(ADVANCED), column].sum())


def with_total(table: pd.DataFrame) -> pd.DataFrame:
    total = pd.DataFrame(
        {
            "main path": [course_words(table)],
            "folded": [course_words(table, "folded")],
            "cap": pd.array([COURSE_CAP], dtype="Int64"),
        },
        index=pd.Index(["total"], name="notebook"),
    )
    return pd.concat([table, total])


def over_caps(table: pd.DataFrame) -> list[str]:
    """The notebooks (and the total) above their caps, as sentences."""
    over = [
        f"{name}: {row['main path']:,} main-path words > {row['cap']:,}"
        for name, row in table.iterrows()
        if pd.notna(row["cap"]) and row["main path"] > row["cap"]
    ]
    total = course_words(table)
    if total > COURSE_CAP:
        over.append(f"course: {total:,} main-path words > {COURSE_CAP:,}")
    return over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    table = measure(args.notebooks or notebooks())
    with pd.option_context("display.max_rows", None, "display.width", 120):
        print(with_total(table).to_string())
    for line in over_caps(table):
        print("over the cap:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
