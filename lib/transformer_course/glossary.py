"""The course's bilingual glossary, parsed from the one source ``GLOSSARY.md`` (00_setup).

In a checkout (``make lab``, CI) the file is read beside ``lib/``; where the library was installed
without the repository (Colab), it is fetched once from the course's main branch.
"""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import REPOSITORY

GLOSSARY_FILE = Path(__file__).resolve().parents[2] / "GLOSSARY.md"
HEADER = ("English", "中文", "first in", "note")
#: Separators between several terms in one notebook title, e.g. "查询/键/值", "文本生成与解码策略".
TITLE_TERM_SPLIT = re.compile(r"\s*(?:/|、|与)\s*")


@dataclass(frozen=True)
class Term:
    """One glossary row."""

    english: str
    chinese: str
    first_in: str
    note: str


def glossary_text(path: Path | str | None = None) -> str:
    """The markdown of the glossary: ``path``, else the checkout's GLOSSARY.md, else the main branch's."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    if GLOSSARY_FILE.exists():
        return GLOSSARY_FILE.read_text(encoding="utf-8")
    url = (
        REPOSITORY.replace("https://github.com/", "https://raw.githubusercontent.com/")
        + "/main/GLOSSARY.md"
    )
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - a fixed https URL
        return response.read().decode("utf-8")


def parse_glossary(text: str) -> list[Term]:
    """The rows of the first table whose header is ``| English | 中文 | first in | note |``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be the glossary's markdown as a str, got {type(text).__name__}")
    rows, in_table = [], False
    for line in text.splitlines():
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|")
            else None
        )
        if cells is None:
            if in_table:
                break
            continue
        if tuple(cells) == HEADER:
            in_table = True
        elif in_table and not set("".join(cells)) <= set("-: "):
            if len(cells) != len(HEADER) or not cells[0] or not cells[1]:
                raise ValueError(
                    f"glossary row must have {len(HEADER)} cells with English and 中文 filled: {line!r}"
                )
            rows.append(Term(*cells))
    if not rows:
        raise ValueError(
            f"no glossary table found: expected a header row '| {' | '.join(HEADER)} |'"
        )
    return rows


def glossary_table(path: Path | str | None = None):
    """The glossary as a pandas DataFrame (columns English, 中文, first in, note), shown in 00_setup."""
    import pandas as pd

    terms = parse_glossary(glossary_text(path))
    return pd.DataFrame([t.__dict__ for t in terms]).rename(
        columns={"english": "English", "chinese": "中文", "first_in": "first in", "note": "note"}
    )


def title_terms(title: str) -> list[str]:
    """The Chinese terms of a notebook title ``# NN · Topic (中文术语)``: ``(查询/键/值)`` -> 3 terms."""
    match = re.search(r"\(([^()]*[\u4e00-\u9fff][^()]*)\)\s*$", title.strip())
    if not match:
        raise ValueError(f"title must end with its Chinese term in parentheses, got {title!r}")
    return [term for term in TITLE_TERM_SPLIT.split(match.group(1).strip()) if term]
