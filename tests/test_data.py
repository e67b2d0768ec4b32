"""transformer_course.data: the corpus, its checks, and batches."""

from __future__ import annotations

import hashlib
import os

import datasets
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course import data


def test_corpus_is_the_course_corpus(corpus_text):
    assert len(corpus_text) == 460_319
    assert hashlib.sha256(corpus_text.encode("utf-8")).hexdigest() == data.CORPUS_SHA256
    assert corpus_text.startswith("Chapter 1: Building Rapport and Capturing")


def test_load_text_reads_any_utf8_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("héllo wörld ✓", encoding="utf-8")
    assert data.load_text(path) == "héllo wörld ✓"


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no text file"):
        data.load_text(tmp_path / "nope.txt")


def test_empty_file_is_a_clear_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        data.load_text(path)


def test_non_utf8_file_is_a_clear_error(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        data.load_text(path)


def test_env_var_pointing_nowhere_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(data.CORPUS_ENV_VAR, str(tmp_path / "missing.txt"))
    with pytest.raises(FileNotFoundError, match=data.CORPUS_ENV_VAR):
        data.load_text()


def _offline(monkeypatch, tmp_path):
    """No corpus on disk and no network: the Hub's dataset cannot be reached."""
    monkeypatch.delenv(data.CORPUS_ENV_VAR, raising=False)
    monkeypatch.setenv(data.DATA_DIR_ENV_VAR, str(tmp_path))
    _serve_hub(monkeypatch, None)


def _serve_hub(monkeypatch, payload: str | None):
    """``datasets.load_dataset`` answers the Hub id with ``payload`` (None: unreachable), and
    checks it is asked the way that keeps the text whole; local files load for real."""
    real = datasets.load_dataset

    def load_dataset(path, *args, **kwargs):
        if path != data.CORPUS_DATASET:
            return real(path, *args, **kwargs)
        # A retry after a wrong file goes past datasets' cache (force_redownload).
        kwargs.pop("download_mode", None)
        assert kwargs == {
            "data_files": data.CORPUS_FILENAME,
            "sample_by": "document",
            "split": "train",
        }
        if payload is None:
            raise ConnectionError(f"Couldn't reach '{path}' on the Hub (LocalEntryNotFoundError)")
        return datasets.Dataset.from_dict({"text": [payload]})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)


def test_offline_without_a_cached_corpus_says_what_to_do(tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    with pytest.raises(ConnectionError) as info:
        data.load_text()
    message = str(info.value)
    assert (
        data.CORPUS_FILENAME in message
        and str(tmp_path) in message
        and data.CORPUS_ENV_VAR in message
    )
    assert data.CORPUS_DATASET in message
    assert list(tmp_path.iterdir()) == [], "no partial file may stay behind"


def test_corrupt_download_never_stays_in_the_cache(tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    _serve_hub(monkeypatch, "not the corpus")
    with pytest.raises(ValueError, match="SHA-256"):
        data.load_text()
    assert list(tmp_path.iterdir()) == []


def test_good_download_lands_in_the_cache(tmp_path, monkeypatch, corpus_text):
    _offline(monkeypatch, tmp_path)
    _serve_hub(monkeypatch, corpus_text)
    assert data.load_text() == corpus_text
    assert [p.name for p in tmp_path.iterdir()] == [data.CORPUS_FILENAME]
    # Second call reads the cache: the Hub is never asked again.
    _serve_hub(monkeypatch, None)
    assert data.load_text() == corpus_text


def test_train_val_split_is_first_ninety_percent():
    ids = torch.arange(100)
    train, val = data.train_val_split(ids)
    assert train.tolist() == list(range(90)) and val.tolist() == list(range(90, 100))
    with pytest.raises(ValueError, match="train_fraction"):
        data.train_val_split(ids, 1.0)


def test_get_batch_targets_are_inputs_shifted_by_one():
    ids = torch.arange(1000)
    x, y = data.get_batch(ids, 4, 16, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 16) and x.dtype == torch.long
    torch.testing.assert_close(y, x + 1)


def test_get_batch_is_reproducible_with_a_generator():
    ids = list(range(500))
    a = data.get_batch(ids, 3, 8, generator=torch.Generator().manual_seed(7))
    b = data.get_batch(ids, 3, 8, generator=torch.Generator().manual_seed(7))
    assert all(torch.equal(p, q) for p, q in zip(a, b))


@pytest.mark.parametrize(
    ("batch_size", "context_length", "error", "match"),
    [
        (0, 4, ValueError, "batch_size"),
        (2, 0, ValueError, "context_length"),
        (2, 10, ValueError, "shorter context"),
        (2.0, 4, TypeError, "batch_size"),
    ],
)
def test_get_batch_bad_arguments(batch_size, context_length, error, match):
    with pytest.raises(error, match=match):
        data.get_batch(torch.arange(10), batch_size, context_length)


@settings(max_examples=50, deadline=None)
@given(
    length=st.integers(2, 300),
    batch_size=st.integers(1, 8),
    context_length=st.integers(1, 64),
    seed=st.integers(0, 2**31),
)
def test_get_batch_windows_come_from_the_stream(length, batch_size, context_length, seed):
    ids = torch.randperm(length, generator=torch.Generator().manual_seed(seed)) + 10
    if length < context_length + 1:
        with pytest.raises(ValueError):
            data.get_batch(ids, batch_size, context_length)
        return
    x, y = data.get_batch(
        ids, batch_size, context_length, generator=torch.Generator().manual_seed(seed)
    )
    position = {int(v): i for i, v in enumerate(ids)}
    for row_x, row_y in zip(x.tolist(), y.tolist()):
        start = position[row_x[0]]
        assert row_x == ids[start : start + context_length].tolist()
        assert row_y == ids[start + 1 : start + context_length + 1].tolist()


def test_data_dir_prefers_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(data.DATA_DIR_ENV_VAR, str(tmp_path))
    assert data.data_dir() == tmp_path
    monkeypatch.delenv(data.DATA_DIR_ENV_VAR)
    assert data.data_dir().name in ("data", "transformer_course")
    assert os.fspath(data.data_dir())


def test_damaged_cached_corpus_offline_is_reported_as_damaged(tmp_path, monkeypatch, corpus_text):
    _offline(monkeypatch, tmp_path)
    cached = tmp_path / data.CORPUS_FILENAME
    cached.write_bytes(corpus_text.encode("utf-8")[:200_000])
    with pytest.raises(data.CorpusMismatchError) as info:
        data.load_text()
    message = str(info.value)
    assert str(cached) in message and data.CORPUS_SHA256 in message and "200,000 bytes" in message
    assert "could not be downloaded" in message and "replace the file" in message
    assert "put the file" not in message, "it must not ask for a file that is already there"
    with pytest.raises(data.CorpusMismatchError, match="Delete it"):
        data.corpus_path(download=False)
    assert cached.stat().st_size == 200_000, "the file is left for the learner to inspect"


def test_damaged_cached_corpus_is_replaced_when_online(tmp_path, monkeypatch, corpus_text):
    _offline(monkeypatch, tmp_path)
    (tmp_path / data.CORPUS_FILENAME).write_text("not the corpus", encoding="utf-8")
    _serve_hub(monkeypatch, corpus_text)
    assert data.load_text() == corpus_text


def test_env_var_naming_a_truncated_corpus_is_refused(tmp_path, monkeypatch, corpus_text):
    truncated = tmp_path / "truncated.txt"
    truncated.write_bytes(corpus_text.encode("utf-8")[:200_000])
    monkeypatch.setenv(data.CORPUS_ENV_VAR, str(truncated))
    with pytest.raises(data.CorpusMismatchError) as info:
        data.load_text()
    message = str(info.value)
    assert str(truncated) in message and data.CORPUS_SHA256 in message
    assert data.CORPUS_ENV_VAR in message and "load_text(path)" in message
    # a learner's own text passed explicitly stays allowed
    assert data.load_text(truncated) == corpus_text.encode("utf-8")[:200_000].decode("utf-8")


def test_data_dir_variable_naming_a_file(tmp_path, monkeypatch):
    file = tmp_path / "not_a_folder"
    file.write_text("x")
    monkeypatch.delenv(data.CORPUS_ENV_VAR, raising=False)
    monkeypatch.setenv(data.DATA_DIR_ENV_VAR, str(file))
    with pytest.raises(
        NotADirectoryError, match=r"\$TRANSFORMER_COURSE_DATA is .*a file, not a folder"
    ):
        data.load_text()
