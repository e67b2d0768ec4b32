"""The Chinese edition's notebooks: catalogs in step with the English, stale entries caught, the
generated notebooks fresh, the glossary's terms used (tools/i18n.py, tests/i18n_lint.py).

The library's feedback in Chinese is tested in tests/test_i18n_feedback.py; the Chinese website
in tests/test_site.py; the Chinese notebooks' outputs by strict nbval, like the English ones.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]
i18n = load_script("tools/i18n.py")
sys.path.insert(0, str(REPO / "tests"))
import i18n_lint  # noqa: E402

ENGLISH = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


def test_every_notebook_has_a_complete_catalog_and_is_listed_complete():
    listed = i18n.complete_list()
    assert listed == [p.stem for p in ENGLISH], "complete.txt must list all 16 notebooks, in order"
    for notebook in ENGLISH:
        status = i18n.catalog_status(notebook)
        assert status.complete, status
        assert status.total == sum(
            1
            for c in nbformat.read(notebook, as_version=4).cells
            if c.cell_type == "markdown" and c.source.strip()
        )


def test_catalogs_chinese_notebooks_and_compiled_catalog_are_fresh():
    """What CI requires: `python tools/i18n.py check` finds nothing to do."""
    assert i18n.check() == []


def test_the_chinese_notebooks_are_compared_by_content_not_bytes(tmp_path, monkeypatch):
    """``build --check`` reads the notebooks: the same cells laid out as another nbformat release
    might write them (indentation, key order) are fresh; a roadmap picture that is not the one
    the catalog's words draw, or a changed cell's metadata, is stale."""
    import json

    folder = tmp_path / "notebooks"
    (folder / "zh").mkdir(parents=True)
    english = REPO / "notebooks" / "05_scale.ipynb"
    (folder / english.name).write_bytes(english.read_bytes())
    committed = i18n.translated_path(english)
    recorded = json.loads(committed.read_text(encoding="utf-8"))
    relaid = json.dumps(dict(reversed(recorded.items())), indent=4, ensure_ascii=True)
    target = folder / "zh" / english.name
    target.write_text(relaid, encoding="utf-8")
    monkeypatch.setattr(i18n, "NOTEBOOKS", folder)
    assert target.read_bytes() != committed.read_bytes()
    assert i18n.build([folder / english.name], check=True) == []

    roadmap = next(c for c in recorded["cells"] if c["source"][0].startswith("# roadmap:"))
    roadmap["outputs"] = roadmap["outputs"][:1]  # the topic diagram under the strip is gone
    target.write_text(json.dumps(recorded), encoding="utf-8")
    assert len(i18n.build([folder / english.name], check=True)) == 1
    roadmap["outputs"] = json.loads(relaid)["cells"][recorded["cells"].index(roadmap)]["outputs"]
    recorded["cells"][0]["metadata"]["tags"] = ["moved"]
    target.write_text(json.dumps(recorded), encoding="utf-8")
    assert len(i18n.build([folder / english.name], check=True)) == 1


def test_an_edited_english_cell_makes_only_its_entry_fuzzy(tmp_path):
    """Edit one English cell in a temporary copy: only that entry turns fuzzy, with the old
    English kept as the previous msgid and the old translation kept for comparison."""
    source = REPO / "notebooks" / "07_softmax.ipynb"
    nb = nbformat.read(source, as_version=4)
    markdown = [c for c in nb.cells if c.cell_type == "markdown"]
    edited = markdown[3]
    old_english = edited.source
    edited.source = old_english.replace("softmax", "the softmax function", 1) + "\n\nOne more line."
    copy = tmp_path / source.name
    nbformat.write(nb, copy)

    before = i18n.read_catalog(i18n.catalog_path(source))
    merged = i18n.update_catalog(i18n.read_catalog(i18n.catalog_path(source)), i18n.template(copy))
    po = tmp_path / "07_softmax.po"
    i18n.write_catalog(merged, po)
    text = po.read_text(encoding="utf-8")
    after = i18n.read_catalog(po)

    old = {m.msgctxt: m for m in i18n.entries(before)}
    fuzzy = [m for m in i18n.entries(after) if m.fuzzy]
    assert [m.msgctxt for m in fuzzy] == [edited.id]
    entry = fuzzy[0]
    assert entry.msgid == edited.source
    assert entry.previous_msgid == old_english
    assert entry.msgstr == old[edited.id].msgstr  # the old translation, kept for comparison
    assert "#| msgid" in text  # written the way Poedit and msgmerge write a previous msgid
    for message in i18n.entries(after):
        if message.msgctxt != edited.id:
            assert (message.msgid, message.msgstr, message.fuzzy) == (
                old[message.msgctxt].msgid,
                old[message.msgctxt].msgstr,
                False,
            )
    # Edited once more before anyone translates: still fuzzy against the first English.
    nb.cells[nb.cells.index(edited)].source += " Again."
    nbformat.write(nb, copy)
    again = i18n.update_catalog(after, i18n.template(copy))
    assert [m.previous_msgid for m in i18n.entries(again) if m.fuzzy] == [old_english]
    # The status counts it as fuzzy, not translated.
    counts = (
        sum(1 for m in i18n.entries(again) if m.fuzzy),
        sum(1 for m in i18n.entries(again) if m.msgstr and not m.fuzzy),
    )
    assert counts == (1, len(old) - 1)


def test_a_new_cell_is_untranslated_and_a_removed_one_leaves(tmp_path):
    source = REPO / "notebooks" / "07_softmax.ipynb"
    nb = nbformat.read(source, as_version=4)
    removed = next(c for c in nb.cells[1:] if c.cell_type == "markdown")
    nb.cells.remove(removed)
    nb.cells.append(nbformat.v4.new_markdown_cell("A brand-new closing remark.", id="c999"))
    copy = tmp_path / source.name
    nbformat.write(nb, copy)
    merged = i18n.update_catalog(i18n.read_catalog(i18n.catalog_path(source)), i18n.template(copy))
    contexts = {m.msgctxt: m for m in i18n.entries(merged)}
    assert removed.id not in contexts
    assert contexts["c999"].msgstr == "" and not contexts["c999"].fuzzy


def test_a_pending_cell_shows_the_english_under_a_chinese_marker(tmp_path, monkeypatch):
    """The Chinese notebook of a stale catalog: the English cell stays, under the marker, and the
    first cell says how many cells are behind."""
    source = REPO / "notebooks" / "07_softmax.ipynb"
    nb = nbformat.read(source, as_version=4)
    edited = [c for c in nb.cells if c.cell_type == "markdown"][2]
    edited.source += "\n\nA sentence the translation does not have yet."
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(nb, folder / source.name)
    monkeypatch.setattr(i18n, "NOTEBOOKS", folder)  # the zh copy goes to tmp, not notebooks/zh
    built, behind = i18n.build_notebook(folder / source.name)
    assert behind == 1
    cell = next(c for c in built.cells if c.id == edited.id)
    assert cell.source.startswith(i18n.PENDING["zh_CN"])
    assert "A sentence the translation does not have yet." in cell.source
    assert i18n.BEHIND["zh_CN"].format(n=1) in built.cells[0].source
    assert i18n.catalog_status(folder / source.name).fuzzy == 1


def test_a_notebook_listed_complete_fails_the_check_when_an_entry_is_fuzzy(tmp_path, monkeypatch):
    locale = tmp_path / "locale"
    po = locale / "zh_CN" / "LC_MESSAGES" / "notebooks" / "07_softmax.po"
    po.parent.mkdir(parents=True)
    catalog = i18n.read_catalog(i18n.catalog_path("07_softmax"))
    next(m for m in i18n.entries(catalog) if m.msgctxt != "c000").flags.append("fuzzy")
    i18n.write_catalog(catalog, po)
    (locale / "zh_CN" / "complete.txt").write_text("07_softmax\n", encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE", locale)
    monkeypatch.setattr(i18n, "notebook_paths", lambda: [REPO / "notebooks" / "07_softmax.ipynb"])
    monkeypatch.setattr(i18n, "build", lambda **kwargs: [])
    monkeypatch.setattr(i18n, "compile_all", lambda check=False: [])
    problems = i18n.check()
    assert any("07_softmax is listed complete" in p and "1 fuzzy" in p for p in problems), problems


def test_the_exchange_file_round_trips():
    notebook = REPO / "notebooks" / "07_softmax.ipynb"
    blocks = i18n.parse_text(i18n.export_text(notebook))
    catalog = i18n.read_catalog(i18n.catalog_path(notebook))
    assert blocks == {m.msgctxt: m.msgstr for m in i18n.entries(catalog)}


@pytest.mark.parametrize("notebook", ENGLISH, ids=lambda p: p.stem)
def test_chinese_notebook_is_the_english_code_with_the_language_chosen(notebook):
    english = nbformat.read(notebook, as_version=4)
    chinese = nbformat.read(i18n.translated_path(notebook), as_version=4)
    assert [(c.cell_type, c.id) for c in chinese.cells] == [
        (c.cell_type, c.id) for c in english.cells
    ]
    setup = next(c for c in chinese.cells if c.cell_type == "code")
    assert 'setup_notebook(lang="zh", ' in setup.source
    differing = []
    for en, zh in zip(english.cells, chinese.cells):
        if en.cell_type == "code":
            assert zh.source == i18n.localise_code(en.source, "zh")
            assert re.sub(r'lang="zh",? ?', "", zh.source) == en.source
            if zh.source != en.source:
                differing.append(zh.id)
        elif en.source.strip():
            assert i18n.PENDING["zh_CN"] not in zh.source  # all 16 are complete
    # Everything after the set-up line, the roadmap included, reads the language it sets.
    assert differing == [setup.id]
    assert chinese.metadata["language"] == "zh-CN"


@pytest.mark.parametrize("notebook", ENGLISH, ids=lambda p: p.stem)
def test_links_of_the_chinese_notebook_resolve(notebook):
    """Links are rewritten for notebooks/zh/: every relative target is a file of the repository."""
    folder = i18n.translated_path(notebook).parent
    for cell in nbformat.read(i18n.translated_path(notebook), as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for target in i18n.LINK.findall(cell.source) + i18n.HTML_LINK.findall(cell.source):
            path = target[1].split("#")[0]
            if not path or re.match(r"^[a-z][a-z0-9+.-]*:", path):
                continue
            assert (folder / path).resolve().exists(), f"{cell.id}: {target[1]}"
            if "colab.research.google.com" in cell.source:
                assert f"notebooks/zh/{notebook.name}" in cell.source


def test_translations_keep_structure_maths_code_links_and_glossary_terms():
    """tests/i18n_lint.py over every catalog: the glossary-term consistency test among others."""
    terms = i18n_lint.glossary_terms()
    assert len(terms) > 100
    problems = [
        line for path in i18n_lint.catalogs([]) for line in i18n_lint.lint_catalog(path, terms)
    ]
    assert problems == []


def test_the_linter_catches_the_slips_it_names():
    english = (
        "## Going deeper: the token\n\nThe attention score $x$ of `f(x)` and **bold.** "
        "Then [a](b.md)."
    )
    chinese = "## 深入：令牌\n\n注意力 $y$ 与**粗体。**然后 [a][ref]。"
    found = "\n".join(i18n_lint.problems(english, chinese))
    for slip in (
        "深入一步：",
        "maths changed",
        "inline code changed",
        "link target changed",
        "令牌",
        "'token'",
        "'attention score'",
        "a ** shows as text",
        "reference-style",
    ):
        assert slip in found, (slip, found)
    quoted = i18n_lint.problems("The seed says “Transformer 令牌”.", "原文说“Transformer 令牌”。")
    assert quoted == []  # a source's own words may use any term


def test_chinese_titles_and_links_use_the_roadmaps_names():
    """One Chinese name per notebook: the roadmap's (from the library catalog), the title's, and
    every link's text."""
    from transformer_course.diagrams import NOTEBOOKS
    from transformer_course.diagrams.roadmap import notebook_title
    from transformer_course.i18n import in_language

    with in_language("zh"):
        titles = {number: notebook_title(number) for number in NOTEBOOKS}
    assert titles["07"] == "归一化指数函数"
    for notebook in ENGLISH:
        number = notebook.stem.split("_")[0]
        chinese = nbformat.read(i18n.translated_path(notebook), as_version=4)
        title = chinese.cells[0].source.splitlines()[0]
        assert re.fullmatch(rf"# {number} · {re.escape(titles[number])}(（[^）]*）)?", title), title
        for cell in chinese.cells:
            if cell.cell_type != "markdown":
                continue
            for text, n in re.findall(
                r"\[[^\]\d]*?((\d\d[a-z]?) · [^\]]*)\]\(\d\d[a-z]?_", cell.source
            ):
                assert text.startswith(f"{n} · {titles[n]}"), (notebook.stem, cell.id, text)


def test_the_chinese_roadmap_font_draws_every_character():
    cjk_font = load_script("tools/cjk_font.py")
    assert cjk_font.missing() == []


@pytest.mark.parametrize("folder", ["notebooks", "notebooks/zh"])
def test_no_output_shows_the_replacement_character(folder):
    """A token that cuts a Chinese character is shown as its bytes, never as U+FFFD."""
    for path in sorted((REPO / folder).glob("[0-9][0-9]*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            text = cell.source + "".join(
                str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                for o in cell.get("outputs", [])
            )
            assert "\ufffd" not in text, f"{path.name} {cell.id}"


VERDICTS = ("✅", "❌", "💡", "✏️")


@pytest.mark.parametrize("notebook", ENGLISH, ids=lambda p: p.stem)
def test_the_chinese_notebook_shows_no_english_feedback(notebook):
    """Every verdict the stored Chinese notebook shows (what a run top to bottom printed; nbval
    checks that a fresh run prints the same) is Chinese: a Chinese label, no English sentence."""
    from test_i18n_feedback import LABELS, english_runs

    shown = 0
    for cell in nbformat.read(i18n.translated_path(notebook), as_version=4).cells:
        for output in cell.get("outputs", []):
            text = str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
            for line in text.splitlines():
                if not line.lstrip("'\"").startswith(VERDICTS):
                    continue
                shown += 1
                assert not line.lstrip("'\"").startswith(LABELS["en"]), (cell.id, line)
                assert english_runs(line) == [], (cell.id, line)
    assert shown or notebook.stem == "00_setup", "no verdict found: is this the notebook?"
