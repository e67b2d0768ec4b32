"""The Chinese edition: gettext catalogs beside the English notebooks, and the notebooks they make.

    python tools/i18n.py update                 # English notebooks -> locale/zh_CN/.../notebooks/*.po
    python tools/i18n.py status                 # translated / fuzzy / untranslated per notebook
    python tools/i18n.py build [NB ...]         # catalogs -> notebooks/zh/*.ipynb (sources only)
    python tools/i18n.py check                  # change nothing; exit 1 when something is stale
    python tools/i18n.py export NB FILE         # a notebook's cells as a text file to translate
    python tools/i18n.py import NB FILE         # that file, translated, into the notebook's catalog
    python tools/i18n.py lib-update             # the library's messages -> transformer_course.po
    python tools/i18n.py compile                # every library catalog -> its .mo (what gettext reads)

One source. The English notebooks are the only notebooks anyone edits. Their markdown cells are
the messages of one PO catalog per notebook (``locale/zh_CN/LC_MESSAGES/notebooks/NN_x.po``, the
path Sphinx and sphinx-intl use), one entry per cell with the cell's nbformat id as ``msgctxt``;
Poedit, Weblate and Babel read them. Code cells and outputs are never translated: ``build`` copies
every code cell as it is, except the one call that chooses the language (``setup_notebook(...,
lang="zh")``; everything after it, the roadmap included, reads that setting), and then
``tools/nbtool.py run`` records the outputs, so strict nbval checks the Chinese notebooks as it
checks the English ones. ``build`` draws the roadmap cell's output itself, as ``tools/images.py``
does for the English notebooks (strict nbval does not compare pictures).

``check`` compares meaning, never bytes, so a new release of Babel or nbformat cannot make it
fail: catalogs as parsed entries, the ``.mo`` as the messages and header gettext reads (less the
fields a tool writes about itself and the time), notebooks as parsed cells and metadata.

The notebook catalogs are read and written with polib (the PO library ``potodo`` uses); the
library's with Babel, which also extracts its messages and compiles the ``.mo`` gettext reads.
Why a merge of our own for the notebooks: ``msgmerge`` and Babel's ``Catalog.update`` match an
entry by its English text, then guess a fuzzy match among the others. A notebook cell has an
identity of its own, its id: when its English changes, *that* entry becomes fuzzy, with the old
English kept as ``#| msgid`` and the old translation kept for comparison (``update_catalog``);
no guessing. The library's messages have no such id, so ``lib-update`` uses Babel's own
extraction and ``Catalog.update`` unchanged. The library catalog holds no source locations and
lists its entries by their English, so moving code never changes it (``lib-export`` says where
each message is). Every Chinese word the library shows is in it, the roadmap's included.

Where a translation is missing or fuzzy, the Chinese notebook keeps the English cell under a
one-line Chinese marker, and its first cell says how many cells are behind the English.
``locale/zh_CN/complete.txt`` lists the notebooks whose every entry is translated; ``check`` (and
``tests/test_i18n.py``) fails when one of them has a fuzzy or untranslated entry.
"""

from __future__ import annotations

import argparse
import datetime
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
sys.path.insert(0, str(REPO / "tools"))  # images.py: the roadmap cell's outputs
NOTEBOOKS = REPO / "notebooks"
LOCALE = REPO / "locale"
#: Languages of the course besides English: the folder code (Sphinx's) and the short code that
#: ``setup_notebook(lang=...)`` takes.
LANGUAGES = {"zh_CN": "zh"}
DOMAIN = "transformer_course"
PROJECT = "transformer-course"

#: The line that stands above an English cell whose translation is missing or out of date.
PENDING = {
    "zh_CN": "> ⏳ **本单元的译文尚未完成或已过时**，下面暂为英文原文。",
}
#: The note in the first cell of a notebook that is behind the English (``{n}`` cells).
BEHIND = {
    "zh_CN": (
        "> ⏳ **本 notebook 的中文版尚未完成**：{n} 个文本单元的译文缺失或落后于英文版，"
        "这些单元暂以英文显示。"
    ),
}
#: A markdown link or image target, and an HTML src/href (group 2 is the target).
LINK = re.compile(r"(\]\()([^)\s]+)")
HTML_LINK = re.compile(r"""((?:src|href)=["'])([^"']+)""")
COLAB_PATH = re.compile(r"(colab\.research\.google\.com/github/[^)\s]*?/blob/main/notebooks/)")
SETUP_CALL = re.compile(r"setup_notebook\(")
#: The first line of the roadmap cell (``tools/images.py`` writes it).
ROADMAP_MARKER = "# roadmap:"


def notebook_paths() -> list[Path]:
    """The English notebooks in course order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*.ipynb"))


def catalog_path(notebook: Path | str, folder: str = "zh_CN") -> Path:
    stem = Path(notebook).stem
    return LOCALE / folder / "LC_MESSAGES" / "notebooks" / f"{stem}.po"


def translated_path(notebook: Path | str, folder: str = "zh_CN") -> Path:
    return NOTEBOOKS / LANGUAGES[folder] / Path(notebook).name


def shown(path: Path) -> str:
    """``path`` as a message shows it: relative to the repository when it is inside it."""
    return str(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


def resolve(name: str) -> Path:
    """``04`` or ``04_qkv`` or ``notebooks/04_qkv.ipynb`` -> the English notebook's path."""
    for path in notebook_paths():
        if name in (path.name, path.stem, str(path), path.stem.split("_", 1)[0]):
            return path
        if Path(name).name == path.name:
            return path
    raise SystemExit(f"no notebook {name!r} in notebooks/ (try a number such as 04)")


# -- catalogs ---------------------------------------------------------------------------------
HEADER = {
    "Project-Id-Version": f"{PROJECT} main",
    "Report-Msgid-Bugs-To": "https://github.com/transformer-course/transformer-course/issues",
    "Language-Team": "Chinese (Simplified)",
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Transfer-Encoding": "8bit",
    "Plural-Forms": "nplurals=1; plural=0;",
}


def new_pofile(folder: str, notebook: str) -> polib.POFile:
    po = polib.POFile(wrapwidth=0)
    po.header = (
        f"The Chinese edition of notebooks/{notebook}.ipynb: one entry per markdown cell, the\n"
        "cell id as msgctxt. Written by tools/i18n.py update; translate with Poedit, Weblate,\n"
        "or `python tools/i18n.py export/import`."
    )
    po.metadata = {**HEADER, "Language": folder}
    return po


def template(notebook: Path, folder: str = "zh_CN") -> polib.POFile:
    """The notebook's markdown cells as an untranslated catalog: context = cell id."""
    nb = nbformat.read(notebook, as_version=4)
    po = new_pofile(folder, notebook.stem)
    for cell in nb.cells:
        if cell.cell_type != "markdown" or not cell.source.strip():
            continue
        po.append(
            polib.POEntry(
                msgctxt=cell.id,
                msgid=cell.source,
                msgstr="",
                comment=f"notebooks/{notebook.name}, markdown cell {cell.id}",
            )
        )
    return po


def read_catalog(path: Path) -> polib.POFile | None:
    """A notebook catalog (polib keeps the previous msgids that Babel's reader drops)."""
    if not path.exists():
        return None
    return polib.pofile(str(path), wrapwidth=0, encoding="utf-8")


def write_catalog(po: polib.POFile, path: Path) -> bool:
    """Write a notebook catalog (no line wrapping, previous msgids kept); True if it changed."""
    data = (str(po).rstrip("\n") + "\n").encode("utf-8")
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def entries(po: polib.POFile | None) -> list[polib.POEntry]:
    return [] if po is None else [e for e in po if e.msgid and not e.obsolete]


def update_catalog(old: polib.POFile | None, new: polib.POFile) -> polib.POFile:
    """Merge the English of ``new`` into the translations of ``old``, matching by cell id.

    Same id, same English: the translation stays as it was (fuzzy stays fuzzy). Same id, new
    English: the entry becomes fuzzy, its old English is kept as the previous msgid and its old
    translation as the msgstr, for a translator to compare. A new id is untranslated; an id that
    left the notebook is dropped (git keeps its history).
    """
    previous = {e.msgctxt: e for e in entries(old)}
    for entry in entries(new):
        before = previous.get(entry.msgctxt)
        if before is None or not before.msgstr:
            continue
        entry.msgstr = before.msgstr
        entry.tcomment = before.tcomment
        if before.msgid == entry.msgid:
            if before.fuzzy:
                entry.flags.append("fuzzy")
                entry.previous_msgid = before.previous_msgid
        else:
            entry.flags.append("fuzzy")
            # Still fuzzy from an earlier edit: compare with the English the translation was of.
            entry.previous_msgid = (
                before.previous_msgid if before.fuzzy and before.previous_msgid else before.msgid
            )
    return new


def update(folder: str = "zh_CN", notebooks: list[Path] | None = None) -> list[Path]:
    """Bring every notebook catalog up to date with the English; returns the files written."""
    written = []
    for notebook in notebooks or notebook_paths():
        path = catalog_path(notebook, folder)
        if write_catalog(update_catalog(read_catalog(path), template(notebook, folder)), path):
            written.append(path)
    return written


@dataclass(frozen=True)
class Status:
    notebook: str
    translated: int
    fuzzy: int
    untranslated: int

    @property
    def total(self) -> int:
        return self.translated + self.fuzzy + self.untranslated

    @property
    def complete(self) -> bool:
        return self.fuzzy == 0 and self.untranslated == 0


def catalog_status(notebook: Path, folder: str = "zh_CN") -> Status:
    """How far the catalog is, counted against the English notebook as it is now."""
    merged = update_catalog(
        read_catalog(catalog_path(notebook, folder)), template(notebook, folder)
    )
    messages = entries(merged)
    fuzzy = sum(1 for m in messages if m.msgstr and m.fuzzy)
    translated = sum(1 for m in messages if m.msgstr and not m.fuzzy)
    return Status(notebook.stem, translated, fuzzy, len(messages) - translated - fuzzy)


def complete_list(folder: str = "zh_CN") -> list[str]:
    """The manifest: notebooks (stems) declared complete in ``locale/<folder>/complete.txt``."""
    path = LOCALE / folder / "complete.txt"
    if not path.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


# -- exchange files for translators -----------------------------------------------------------
SEPARATOR = re.compile(r"^=== (c\d{3,}) ===$", re.MULTILINE)


def export_text(notebook: Path, folder: str = "zh_CN") -> str:
    """Every entry as ``=== cNNN ===`` + text: the translation where there is one, else English.

    A fuzzy entry shows the new English, then its old translation, for the translator to fix.
    """
    merged = update_catalog(
        read_catalog(catalog_path(notebook, folder)), template(notebook, folder)
    )
    parts = []
    for message in entries(merged):
        parts.append(f"=== {message.msgctxt} ===")
        if message.msgstr and not message.fuzzy:
            parts.append(message.msgstr)
        elif message.msgstr:
            parts.append(
                f"[FUZZY: English now]\n{message.msgid}\n[old translation]\n{message.msgstr}"
            )
        else:
            parts.append(message.msgid)
    return "\n".join(parts) + "\n"


def parse_text(text: str) -> dict[str, str]:
    """``=== cNNN ===`` blocks -> {cell id: text} (surrounding blank lines dropped)."""
    pieces = SEPARATOR.split(text)
    return {pieces[i]: pieces[i + 1].strip("\n") for i in range(1, len(pieces) - 1, 2)}


def import_text(notebook: Path, text: str, folder: str = "zh_CN") -> list[str]:
    """Set the translations of ``text`` (``=== cNNN ===`` blocks); returns the ids set.

    A block still containing the English exactly is skipped (not translated yet).
    """
    path = catalog_path(notebook, folder)
    merged = update_catalog(read_catalog(path), template(notebook, folder))
    blocks = parse_text(text)
    by_id = {m.msgctxt: m for m in entries(merged)}
    unknown = sorted(set(blocks) - set(by_id))
    if unknown:
        raise SystemExit(f"{notebook.name} has no markdown cells {unknown}")
    done = []
    for cell_id, translation in blocks.items():
        message = by_id[cell_id]
        if translation.strip() == message.msgid.strip() or translation.startswith("[FUZZY"):
            continue
        message.msgstr = translation
        if message.fuzzy:
            message.flags.remove("fuzzy")
        message.previous_msgid = None
        done.append(cell_id)
    write_catalog(merged, path)
    return done


# -- the translated notebooks -----------------------------------------------------------------
def _retarget(text: str) -> str:
    """Links written relative to notebooks/ -> relative to notebooks/zh/; Colab opens the zh copy.

    A sibling notebook (``05_scale.ipynb``) stays a sibling: the Chinese one.
    """

    def fix(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|/)", target):
            return match.group(0)
        if re.match(r"^[0-9][0-9][a-z]?_[a-z0-9_]+\.ipynb(#.*)?$", target):
            return match.group(0)
        return f"{match.group(1)}../{target}"

    text = LINK.sub(fix, text)
    text = HTML_LINK.sub(fix, text)
    return COLAB_PATH.sub(lambda m: f"{m.group(1)}zh/", text)


def localise_code(source: str, short: str) -> str:
    """A code cell of the Chinese notebook: the English one, with the language chosen."""
    source = SETUP_CALL.sub(f'setup_notebook(lang="{short}", ', source, count=1)
    return source.replace(f'setup_notebook(lang="{short}", )', f'setup_notebook(lang="{short}")')


def roadmap_outputs(notebook: Path, short: str) -> list:
    """What a fresh run of the roadmap cell prints in language ``short`` (``tools/images.py``
    writes the English ones the same way)."""
    import images
    from transformer_course.diagrams import TOPIC_DIAGRAMS, all_diagrams
    from transformer_course.diagrams.base import render
    from transformer_course.i18n import in_language

    number = images.notebook_number(notebook)
    names = [f"roadmap_{number}", *(name for name, _caption in TOPIC_DIAGRAMS.get(number, ()))]
    drawers = all_diagrams()
    with in_language(short):
        drawn = {f"{name}.png": render(drawers[name](), "png") for name in names}
    return images.roadmap_outputs(number, drawn)


def _roadmap_outputs_kept(notebook: Path, short: str, recorded) -> list:
    """The roadmap cell's outputs: the recorded ones while they show the same pictures as a
    fresh drawing (another matplotlib release draws them with other bytes), else the fresh."""
    import images

    fresh = roadmap_outputs(notebook, short)
    if recorded is not None and images.same_outputs(recorded.outputs, fresh):
        return recorded.outputs
    return fresh


def build_notebook(notebook: Path, folder: str = "zh_CN") -> tuple[nbformat.NotebookNode, int]:
    """The translated notebook (sources; outputs from the last recorded run where the code is
    unchanged) and how many markdown cells are still English."""
    short = LANGUAGES[folder]
    nb = nbformat.read(notebook, as_version=4)
    merged = update_catalog(
        read_catalog(catalog_path(notebook, folder)), template(notebook, folder)
    )
    translations = {m.msgctxt: m.msgstr for m in entries(merged) if m.msgstr and not m.fuzzy}
    target = translated_path(notebook, folder)
    old = nbformat.read(target, as_version=4) if target.exists() else None
    recorded = {c.id: c for c in old.cells if c.cell_type == "code"} if old else {}
    behind = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if not cell.source.strip():
                continue
            if cell.id in translations:
                cell.source = translations[cell.id]
            else:
                behind += 1
                cell.source = f"{PENDING[folder]}\n\n{cell.source}"
            cell.source = _retarget(cell.source)
        elif cell.cell_type == "code":
            cell.source = localise_code(cell.source, short)
            before = recorded.get(cell.id)
            if cell.source.startswith(ROADMAP_MARKER):
                cell.outputs = _roadmap_outputs_kept(notebook, short, before)
            elif before is not None and before.source == cell.source:
                cell.outputs = before.outputs
                cell.execution_count = before.execution_count
    if behind:
        first = nb.cells[0]
        title, _newline, rest = first.source.partition("\n")
        first.source = f"{title}\n\n{BEHIND[folder].format(n=behind)}\n{rest}"
    nb.metadata["language"] = folder.replace("_", "-")
    if old is not None:
        old_widgets = old.metadata.get("widgets")
        if old_widgets is not None:
            nb.metadata["widgets"] = old_widgets
        else:
            nb.metadata.pop("widgets", None)
    return nb, behind


def content(nb) -> dict:
    """What ``check`` compares: the notebook's metadata and each cell's type, id, source,
    metadata, outputs and execution count, as parsed (how nbformat lays out the JSON, its
    version and key order, does not count). Outputs other than the roadmap's come from the
    recorded notebook; strict nbval checks that a fresh run prints them."""
    fields = ("cell_type", "id", "source", "metadata", "outputs", "execution_count")
    return {
        "metadata": nb.metadata,
        "cells": [{field: cell.get(field) for field in fields} for cell in nb.cells],
    }


def build(
    notebooks: list[Path] | None = None, folder: str = "zh_CN", check: bool = False
) -> list[str]:
    """Write (or, with ``check``, compare) the translated notebooks; returns the stale ones."""
    stale = []
    for notebook in notebooks or notebook_paths():
        nb, _behind = build_notebook(notebook, folder)
        target = translated_path(notebook, folder)
        current = nbformat.read(target, as_version=4) if target.exists() else None
        if current is not None and content(current) == content(nb):
            continue
        stale.append(shown(target))
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)
    return stale


# -- the library's messages -------------------------------------------------------------------
#: What marks a library message: ``_("...")`` where it is shown, ``N_("...")`` where it is only
#: declared (a hint given to a decorator, translated when it is shown); ``pgettext``/``NC_`` give
#: a context to an English word with two meanings.
KEYWORDS = {
    "_": None,
    "N_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
    "NC_": ((1, "c"), 2),
}


def new_catalog(folder: str, domain: str) -> Catalog:
    return Catalog(
        locale=folder,
        domain=domain,
        project=PROJECT,
        version="main",
        copyright_holder="the Transformer course authors",
        msgid_bugs_address=HEADER["Report-Msgid-Bugs-To"],
        fuzzy=False,
    )


def read_library(path: Path) -> Catalog | None:
    if not path.exists():
        return None
    with path.open("rb") as file:
        return read_po(file, abort_invalid=True)


def write_library(catalog: Catalog, path: Path) -> bool:
    """Write the library catalog (Babel's writer; no line wrapping); True if it changed.

    No source locations and the entries sorted by their English: moving code from one line or
    file to another changes nothing here (``lib-export`` says where each message is).
    The previous English of a fuzzy entry is left out: Babel wraps those ``#|`` comments even at
    ``width=0``, into ``# `` lines that polib and Poedit read as a syntax error.
    """
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, include_previous=False, no_location=True, sort_output=True)
    data = _stable_header(buffer.getvalue())
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def _stable_header(data: bytes) -> bytes:
    """Babel stamps the time of writing into the header; a catalog changes only with its text."""
    data = re.sub(rb'"POT-Creation-Date: [^"]*\\n"\n', b"", data)
    data = re.sub(rb'"PO-Revision-Date: [^"]*\\n"\n', b"", data)
    data = re.sub(rb"# Copyright \(C\) \d{4}", b"# Copyright (C)", data)
    return re.sub(rb'"Generated-By: Babel [^"]*\\n"\n', b"", data)


def library_template(folder: str = "zh_CN") -> Catalog:
    catalog = new_catalog(folder, DOMAIN)
    root = REPO / "lib"
    for filename, lineno, message, comments, context in extract_from_dir(
        root / "transformer_course", keywords=KEYWORDS, comment_tags=("TRANSLATORS:",)
    ):
        catalog.add(
            message,
            locations=[(f"lib/transformer_course/{filename}", lineno)],
            auto_comments=comments,
            context=context,
        )
    return catalog


def library_catalog_path(folder: str = "zh_CN") -> Path:
    return LOCALE / folder / "LC_MESSAGES" / f"{DOMAIN}.po"


def library_updated(folder: str = "zh_CN", template: Catalog | None = None) -> Catalog:
    """Babel's own update: the library's messages, matched by their English (nothing written)."""
    catalog = read_library(library_catalog_path(folder)) or new_catalog(folder, DOMAIN)
    template = template or library_template(folder)
    catalog.update(template, no_fuzzy_matching=False, update_header_comment=False)
    catalog.obsolete.clear()
    return catalog


def library_update(folder: str = "zh_CN") -> Catalog:
    """Bring the library catalog up to date with the library's messages, and write it."""
    catalog = library_updated(folder)
    write_library(catalog, library_catalog_path(folder))
    return catalog


def library_entries(catalog: Catalog | None) -> dict:
    """What a library catalog means: (context, English) -> translation, fuzzy flag, previous
    English and extracted comments (Babel's parse; header dates and layout do not count)."""

    def text(value):
        return tuple(value) if isinstance(value, (list, tuple)) else value

    return {
        (m.context, text(m.id)): (
            text(m.string),
            m.fuzzy,
            tuple(m.previous_id or ()),
            tuple(m.auto_comments),
        )
        for m in (catalog or [])
        if m.id
    }


def library_export(path: Path, folder: str = "zh_CN", everything: bool = False) -> int:
    """The library's untranslated (or fuzzy) messages as JSON: [{msgid, msgctxt, msgstr, where}]."""
    import json

    catalog = read_library(library_catalog_path(folder)) or new_catalog(folder, DOMAIN)
    # The catalog stores no locations: a fresh extraction says where each message is now.
    template = library_template(folder)
    rows = [
        {
            "msgid": m.id,
            "msgctxt": m.context,
            "msgstr": m.string if m.string else "",
            "fuzzy": m.fuzzy,
            "where": [
                f"{file}:{line}"
                for file, line in getattr(template.get(m.id, context=m.context), "locations", [])
            ],
        }
        for m in catalog
        if m.id and isinstance(m.id, str) and (everything or not m.string or m.fuzzy)
    ]
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(rows)


def library_import(path: Path, folder: str = "zh_CN") -> int:
    """Set translations from JSON: a list of {msgid, msgstr[, msgctxt]} or a {msgid: msgstr}
    mapping (messages without a context)."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    rows = (
        [(msgid, msgstr, None) for msgid, msgstr in data.items()]
        if isinstance(data, dict)
        else [(r["msgid"], r["msgstr"], r.get("msgctxt")) for r in data]
    )
    catalog = read_library(library_catalog_path(folder)) or new_catalog(folder, DOMAIN)
    done = 0
    for msgid, msgstr, context in rows:
        message = catalog.get(msgid, context=context)
        if message is None or not msgstr:
            continue
        message.string = msgstr
        message.flags.discard("fuzzy")
        message.previous_id = []
        done += 1
    write_library(catalog, library_catalog_path(folder))
    return done


def compiled(folder: str = "zh_CN") -> bytes:
    """The .mo of the library catalog (fuzzy entries left out, as msgfmt leaves them)."""
    catalog = read_library(library_catalog_path(folder)) or new_catalog(folder, DOMAIN)
    # Babel writes the catalog's dates into the .mo header and takes "now" where the .po has
    # none: a fixed date makes the same .po compile to the same bytes with one Babel release.
    fixed = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    catalog.creation_date = catalog.revision_date = fixed
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


#: Header fields a compiler writes about itself and the time of compiling: not the catalog's
#: meaning (Babel 2.19 writes ``Generated-By: Babel 2.19.0`` where 2.18 wrote 2.18.0).
TOOL_HEADERS = frozenset({"generated-by", "pot-creation-date", "po-revision-date"})


def mo_meaning(data: bytes) -> tuple[dict[str, str], dict]:
    """What gettext reads from a compiled catalog: its header (``GNUTranslations.info()``, less
    :data:`TOOL_HEADERS`) and every message, (context, English) -> translation (Babel's
    ``read_mo``; a plural message's forms as tuples)."""
    import gettext

    from babel.messages.mofile import read_mo

    header = gettext.GNUTranslations(io.BytesIO(data)).info()

    def text(value):
        return tuple(value) if isinstance(value, (list, tuple)) else value

    messages = {(m.context, text(m.id)): text(m.string) for m in read_mo(io.BytesIO(data)) if m.id}
    return {k: v for k, v in header.items() if k not in TOOL_HEADERS}, messages


def compile_all(check: bool = False) -> list[str]:
    """Compile every library catalog whose .mo means something else than its .po (with
    ``check``, only list them): the same messages compiled by another Babel release are fresh,
    and the .mo is left as it is."""
    stale = []
    for folder in LANGUAGES:
        path = library_catalog_path(folder).with_suffix(".mo")
        data = compiled(folder)
        if path.exists() and mo_meaning(path.read_bytes()) == mo_meaning(data):
            continue
        stale.append(shown(path))
        if not check:
            path.write_bytes(data)
    return stale


# -- command line -----------------------------------------------------------------------------
def status_table(folder: str = "zh_CN") -> str:
    manifest = set(complete_list(folder))
    rows = [f"{'notebook':<26} {'translated':>10} {'fuzzy':>6} {'untranslated':>12}  manifest"]
    totals = [0, 0, 0]
    for notebook in notebook_paths():
        s = catalog_status(notebook, folder)
        totals = [totals[0] + s.translated, totals[1] + s.fuzzy, totals[2] + s.untranslated]
        mark = "complete" if s.stem_in(manifest) else ""
        rows.append(
            f"{s.notebook:<26} {s.translated:>10} {s.fuzzy:>6} {s.untranslated:>12}  {mark}"
        )
    rows.append(f"{'total':<26} {totals[0]:>10} {totals[1]:>6} {totals[2]:>12}")
    return "\n".join(rows)


Status.stem_in = lambda self, names: self.notebook in names  # type: ignore[attr-defined]


def check(folder: str = "zh_CN") -> list[str]:
    """Everything CI requires of the translations; an empty list when all is well."""
    problems = []
    for notebook in notebook_paths():
        expected = update_catalog(
            read_catalog(catalog_path(notebook, folder)), template(notebook, folder)
        )
        current = read_catalog(catalog_path(notebook, folder))
        key = [(m.msgctxt, m.msgid, m.msgstr, m.fuzzy, m.previous_msgid) for m in entries(expected)]
        if (
            current is None
            or [(m.msgctxt, m.msgid, m.msgstr, m.fuzzy, m.previous_msgid) for m in entries(current)]
            != key
        ):
            problems.append(
                f"{shown(catalog_path(notebook, folder))} is behind its notebook: run `python tools/i18n.py update`"
            )
    for name in complete_list(folder):
        s = catalog_status(resolve(name), folder)
        if not s.complete:
            problems.append(
                f"{name} is listed complete in locale/{folder}/complete.txt but has {s.fuzzy} fuzzy"
                f" and {s.untranslated} untranslated entries: translate them (python tools/i18n.py"
                f" export {name} FILE, then import) or take it off the list"
            )
    path = library_catalog_path(folder)
    if library_entries(read_library(path)) != library_entries(library_updated(folder)):
        problems.append(
            f"{shown(path)} is behind the library: run `python tools/i18n.py lib-update`"
        )
    problems += [
        f"{p} is stale: run `python tools/i18n.py build`" for p in build(folder=folder, check=True)
    ]
    problems += [
        f"{p} is stale: run `python tools/i18n.py compile`" for p in compile_all(check=True)
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("update")
    sub.add_parser("status")
    b = sub.add_parser("build")
    b.add_argument("notebooks", nargs="*")
    sub.add_parser("check")
    e = sub.add_parser("export")
    e.add_argument("notebook")
    e.add_argument("file", type=Path)
    i = sub.add_parser("import")
    i.add_argument("notebook")
    i.add_argument("file", type=Path)
    sub.add_parser("lib-update")
    le = sub.add_parser("lib-export")
    le.add_argument("file", type=Path)
    le.add_argument("--all", action="store_true", help="translated ones too")
    li = sub.add_parser("lib-import")
    li.add_argument("file", type=Path)
    sub.add_parser("compile")
    args = parser.parse_args(argv)
    with _locked():
        return _run(args)


def _locked():
    """One catalog writer at a time (several people, or helpers, may run the tool at once)."""
    import contextlib
    import fcntl

    @contextlib.contextmanager
    def lock():
        LOCALE.mkdir(exist_ok=True)
        with open(LOCALE / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    return lock()


def _run(args: argparse.Namespace) -> int:
    if args.command == "update":
        for path in update():
            print(f"updated {path.relative_to(REPO)}")
    elif args.command == "status":
        print(status_table())
    elif args.command == "build":
        for path in build([resolve(n) for n in args.notebooks] or None):
            print(f"wrote {path}")
    elif args.command == "check":
        problems = check()
        print(
            "\n".join(problems)
            or "translations, Chinese notebooks and compiled catalogs are up to date"
        )
        return 1 if problems else 0
    elif args.command == "export":
        args.file.write_text(export_text(resolve(args.notebook)), encoding="utf-8")
    elif args.command == "import":
        done = import_text(resolve(args.notebook), args.file.read_text(encoding="utf-8"))
        print(
            f"{len(done)} translations set in {catalog_path(resolve(args.notebook)).relative_to(REPO)}"
        )
    elif args.command == "lib-update":
        catalog = library_update()
        print(
            f"{len([m for m in catalog if m.id])} library messages in {library_catalog_path().relative_to(REPO)}"
        )
    elif args.command == "lib-export":
        print(f"{library_export(args.file, everything=args.all)} messages written to {args.file}")
    elif args.command == "lib-import":
        print(f"{library_import(args.file)} translations set")
    elif args.command == "compile":
        for path in compile_all():
            print(f"compiled {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
