"""SOURCES.md names the five source documents, and the notebooks refer to them by those names,
linking there with links relative to the notebook, ``../SOURCES.md#anchor``: they work offline in
JupyterLab, on GitHub, and on the website (site/course_site.py rewrites them to its page; the
Chinese notebooks get ``../../SOURCES.md`` from ``tools/i18n.py build``)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "SOURCES.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
BASE = "../SOURCES.md"
LINK = re.compile(r"\[([^\]]+)\]\(((?:https?://[^)\s]*|[./]*)SOURCES\.md(?:#[^)\s]*)?)\)")
BARE = re.compile(r"\b[Ss]eeds? 00\d\b|\bbackbone source\b|\b[Ss]eed 00\d's")
FIELDS = ("**Title:**", "**Author or site:**", "**Language:**", "**What the course takes:**",
          "**Mirrored by:**")  # fmt: skip


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", heading.strip().lower()))


def sections() -> dict[str, str]:
    """anchor -> text of each '## ' section of SOURCES.md."""
    parts = re.split(r"^## (.+)$", SOURCES.read_text(encoding="utf-8"), flags=re.M)
    return {slug(title): body for title, body in zip(parts[1::2], parts[2::2])}


def mirrored_by(body: str) -> set[str]:
    """The notebooks a section's 'Mirrored by' line names ('`a` to `b`' is a range)."""
    line = body.split("**Mirrored by:**", 1)[1].split("\n- ", 1)[0].split(". ", 1)[0]
    names = sorted(p.stem for p in NOTEBOOKS)
    found = set(re.findall(r"`([0-9][0-9a-z_]+)`", line))
    for start, end in re.findall(r"`([0-9][0-9a-z_]+)` to `([0-9][0-9a-z_]+)`", line):
        found |= {n for n in names if start <= n <= end}
    return found


def notebook_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) of every cell source and every text output of a notebook."""
    nb = nbformat.read(path, as_version=4)
    texts = []
    for cell in nb.cells:
        texts.append((f"{path.name} cell {cell.get('id')}", cell.source))
        for output in cell.get("outputs", []):
            text = output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
            texts.append((f"{path.name} cell {cell.get('id')} output", text))
    return texts


def test_sources_md_describes_five_documents():
    found = sections()
    assert len(found) == 5, sorted(found)
    for anchor, body in found.items():
        missing = [field for field in FIELDS if field not in body]
        assert not missing, f"SOURCES.md#{anchor} lacks {missing}"
        assert mirrored_by(body), f"SOURCES.md#{anchor} names no notebook"
        assert mirrored_by(body) <= {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_name_sources_by_linked_short_names(path):
    anchors = set(sections())
    for where, text in notebook_texts(path):
        for _name, url in LINK.findall(text):
            base, _, anchor = url.partition("#")
            assert base == BASE, f"{where}: link {url} is not the offline link {BASE}"
            assert not anchor or anchor in anchors, f"{where}: SOURCES.md has no #{anchor}"
        bare = BARE.findall(LINK.sub("", text))
        assert not bare, f"{where}: {bare} — name the source and link SOURCES.md instead"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_links_the_sources_it_mirrors_and_sources_md_agrees(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source
    assert "**Mirrors:**" in first and f"]({BASE}#" in first, (
        f"{path.name}: first cell links no source"
    )
    linked = {
        url.partition("#")[2]
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for _, url in LINK.findall(cell.source)
    } - {""}
    for anchor, body in sections().items():
        assert (anchor in linked) == (path.stem in mirrored_by(body)), (
            f"{path.name} {'links' if anchor in linked else 'does not link'} #{anchor}, "
            f"but SOURCES.md's 'Mirrored by' {'omits' if anchor in linked else 'lists'} it"
        )


def test_the_checks_catch_bare_names_and_foreign_links():
    assert BARE.search("as seed 000 does") and BARE.search("the backbone source")
    assert not BARE.search(LINK.sub("", f"as [the decoder walk-through]({BASE}#x) does"))
    assert not BARE.search("seed 1337")
    assert slug("The encoder-decoder essay") == "the-encoder-decoder-essay"
