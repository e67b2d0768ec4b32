"""The course's bilingual glossary, parsed from the one source ``GLOSSARY.md`` (00_setup).

The one file is ``GLOSSARY.md`` at the top of the repository.
``transformer_course/glossary/GLOSSARY.md`` is a symbolic link to it, declared as package data in ``pyproject.toml``, so a wheel (what
Colab's ``%pip install`` builds) carries a copy of the glossary of the library it installs:
nothing is fetched at run time. In a checkout the top-level file is read directly, which also
covers a Windows checkout where git wrote the link as a plain text file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..i18n import _

GLOSSARY_FILE = Path(__file__).resolve().parents[3] / "GLOSSARY.md"
#: The copy inside the installed package (the link in a checkout, a real file in a wheel).
PACKAGED_GLOSSARY = Path(__file__).resolve().parent / "GLOSSARY.md"
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
    """The markdown of the glossary: ``path``, else the checkout's GLOSSARY.md, else the copy
    installed with the package."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    for candidate in (GLOSSARY_FILE, PACKAGED_GLOSSARY):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(
        _(
            "the course glossary is missing: neither {checkout_file} (a checkout) nor "
            "{packaged_file} (an installed package) exists; reinstall the course (pip install "
            "transformer-course from the repository) or pass path= to a GLOSSARY.md"
        ).format(checkout_file=GLOSSARY_FILE, packaged_file=PACKAGED_GLOSSARY)
    )


def parse_glossary(text: str) -> list[Term]:
    """The rows of the first table whose header is ``| English | 中文 | first in | note |``."""
    if not isinstance(text, str):
        raise TypeError(
            _("text must be the glossary's markdown as a str, got {kind}").format(
                kind=type(text).__name__
            )
        )
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
                    _(
                        "glossary row must have {n_cells} cells with English and 中文 filled: "
                        "{line!r}"
                    ).format(n_cells=len(HEADER), line=line)
                )
            rows.append(Term(*cells))
    if not rows:
        raise ValueError(
            _("no glossary table found: expected a header row '| {header} |'").format(
                header=" | ".join(HEADER)
            )
        )
    return rows


def glossary_table(path: Path | str | None = None):
    """The glossary as a pandas DataFrame (columns English, 中文, first in, note), shown in 00_setup.

    The notes are shown in the learner's language (declared in :mod:`.notes`)."""
    import pandas as pd

    terms = parse_glossary(glossary_text(path))
    rows = [{**t.__dict__, "note": _(t.note) if t.note else ""} for t in terms]  # see notes.py
    return pd.DataFrame(rows).rename(
        columns={"english": "English", "chinese": "中文", "first_in": "first in", "note": "note"}
    )


def title_terms(title: str) -> list[str]:
    """The Chinese terms of a notebook title ``# NN · Topic (中文术语)``: ``(查询/键/值)`` -> 3 terms."""
    match = re.search(r"\(([^()]*[\u4e00-\u9fff][^()]*)\)\s*$", title.strip())
    if not match:
        raise ValueError(
            _("title must end with its Chinese term in parentheses, got {title!r}").format(
                title=title
            )
        )
    return [term for term in TITLE_TERM_SPLIT.split(match.group(1).strip()) if term]
