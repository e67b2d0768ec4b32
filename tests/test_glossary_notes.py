"""The glossary's notes are declared for the catalog and shown in Chinese in the zh edition (00_setup)."""

from transformer_course import glossary, i18n
from transformer_course.glossary.notes import NOTES


def test_every_glossary_note_is_declared_for_the_catalog():
    notes = {term.note for term in glossary.parse_glossary(glossary.glossary_text()) if term.note}
    assert notes - NOTES == set(), (
        "add these GLOSSARY.md notes to glossary/notes.py, then run lib-update"
    )
    assert NOTES - notes == set(), (
        "these notes are no longer in GLOSSARY.md: remove them from glossary/notes.py"
    )


def test_the_chinese_table_shows_chinese_notes():
    with i18n.in_language("en"):
        english = glossary.glossary_table()
    with i18n.in_language("zh"):
        chinese = glossary.glossary_table()
    assert list(english["English"]) == list(chinese["English"])
    changed = (english["note"] != chinese["note"]).sum()
    assert changed >= 60, f"only {changed} notes are translated"
    assert chinese.loc[english["note"] == "the @ operator", "note"].item() == "@ 运算符"
