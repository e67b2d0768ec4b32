"""Progress that survives a Colab session: export the verdicts to a JSON file, import them back
into a fresh copy of the notebooks. Colab's file download/upload is a fake ``google.colab``."""

from __future__ import annotations

import json
import sys
import types

import pandas as pd
import pytest

from transformer_course.exercises import progress as course_progress_module
from transformer_course.exercises.progress import (
    PROGRESS_COLUMNS,
    export_progress,
    import_progress,
)


def _table(*rows: tuple[str, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=PROGRESS_COLUMNS)


SESSION_ONE = _table(
    ("04_qkv", "check_split_shape", "question", "passed"),
    ("04_qkv", "check_merge_heads", "build", "not yet right"),
    ("05_scale", "check_scale_factor", "question", "passed"),
    ("05_scale", "check_scale_factor", "question", "hint shown"),
)
#: A new session: the notebooks are fresh copies (not answered / not run) except one re-run.
SESSION_TWO = _table(
    ("04_qkv", "check_split_shape", "question", "not answered"),
    ("04_qkv", "check_merge_heads", "build", "passed"),
    ("05_scale", "check_scale_factor", "question", "not run"),
    ("05_scale", "check_scale_factor", "question", "not answered"),
    ("06_mask", "check_causal_mask", "question", "not answered"),
)


def test_round_trip(tmp_path):
    path = export_progress(tmp_path / "p.json", SESSION_ONE)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["format"] == "transformer_course.progress/1"
    pd.testing.assert_frame_equal(import_progress(path), SESSION_ONE)


def test_saved_verdicts_fill_what_the_new_session_has_not_judged(tmp_path):
    path = export_progress(tmp_path / "p.json", SESSION_ONE)
    merged = import_progress(path, current=SESSION_TWO)
    assert merged["status"].tolist() == [
        "passed",  # saved, the fresh copy says not answered
        "passed",  # judged in this session: this session wins over the saved "not yet right"
        "passed",  # first call of a checker used twice: the first saved call
        "hint shown",  # its second call: the second saved call
        "not answered",  # nothing saved for it
    ]
    assert merged[["notebook", "exercise", "kind"]].equals(
        SESSION_TWO[["notebook", "exercise", "kind"]]
    )


def test_export_reads_the_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(course_progress_module, "course_progress", lambda folder: SESSION_ONE)
    path = export_progress(tmp_path / "p.json", folder=tmp_path)
    assert len(import_progress(path)) == len(SESSION_ONE)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json at all", "is not JSON"),
        ('{"exercises": []}', "no 'transformer_course.progress/1' marker"),
        ('{"format": "transformer_course.progress/1", "exercises": [{"a": 1}]}', "is damaged"),
    ],
)
def test_a_wrong_file_is_named(tmp_path, content, message):
    path = tmp_path / "p.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        import_progress(path)


def test_export_refuses_another_table(tmp_path):
    with pytest.raises(ValueError, match="course_progress"):
        export_progress(tmp_path / "p.json", pd.DataFrame({"a": [1]}))


def test_outside_colab_import_needs_a_path():
    with pytest.raises(ValueError, match="pass the path"):
        import_progress()


@pytest.fixture
def fake_colab(monkeypatch, tmp_path):
    """``google.colab.files`` as Colab has it: ``download(name)`` and ``upload() -> {name: bytes}``."""
    calls = {"downloaded": [], "to_upload": {}}
    files = types.ModuleType("google.colab.files")
    files.download = lambda name: calls["downloaded"].append(name)
    files.upload = lambda: dict(calls["to_upload"])
    colab = types.ModuleType("google.colab")
    colab.files = files
    google = types.ModuleType("google")
    google.colab = colab
    for name, module in [
        ("google", google),
        ("google.colab", colab),
        ("google.colab.files", files),
    ]:
        monkeypatch.setitem(sys.modules, name, module)
    return calls


def test_in_colab_export_downloads_and_import_uploads(fake_colab, tmp_path):
    path = export_progress(tmp_path / "p.json", SESSION_ONE)
    assert fake_colab["downloaded"] == [str(path)]
    fake_colab["to_upload"] = {"p.json": path.read_bytes()}
    pd.testing.assert_frame_equal(import_progress(), SESSION_ONE)


def test_in_colab_an_empty_upload_says_what_to_do(fake_colab):
    with pytest.raises(ValueError, match="no file was uploaded"):
        import_progress()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"\x89PNG\r\n\x1a\n\x00\x00",
            "holds binary bytes, not UTF-8 text \\(byte 0x89 at position 0\\)",
        ),
        (b" " * (2**20 + 1), "larger than 1024 KiB"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (
            b'{"format": "transformer_course.progress/1", "exercises": [{"notebook": 5, '
            b'"exercise": "check_x", "kind": "build", "status": "passed"}]}',
            "each a text",
        ),
        (
            b'{"format": "transformer_course.progress/1", "exercises": [{"notebook": "05", '
            b'"exercise": "check_x", "kind": "build", "status": "hacked"}]}',
            "a status among",
        ),
    ],
)
def test_a_hostile_file_gets_a_sentence(tmp_path, content, message):
    path = tmp_path / "p.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        import_progress(path)
