"""The corpus through Hugging Face datasets: byte-identical text, tiktoken's ids, cached, quiet.

``load_text()`` reads the textbook with ``load_dataset("text", sample_by="document")`` and
``corpus_token_ids()`` tokenizes it with ``Dataset.map(batched=True)``; both must equal what
reading the file and calling tiktoken give. ``load_corpus`` is the pipeline of 11–13 and the CLI.
"""

from __future__ import annotations

import hashlib
import os

import datasets
import pytest
import torch

from transformer_course import data
from transformer_course.vocabulary import CompactVocabulary


def test_the_text_through_datasets_is_the_file_byte_for_byte(corpus_text):
    raw = data.corpus_path(download=False).read_bytes()
    through_datasets = data.corpus_dataset()[0]["text"]
    assert through_datasets.encode("utf-8") == raw
    assert hashlib.sha256(through_datasets.encode("utf-8")).hexdigest() == data.CORPUS_SHA256
    assert data.load_text() == corpus_text == raw.decode("utf-8")
    assert through_datasets.count("\n") == raw.count(b"\n") > 1000, "line breaks are kept"


def test_token_ids_through_map_equal_tiktoken(corpus_text, cl100k):
    ids = data.corpus_token_ids()
    assert ids.dtype == torch.long and ids.dim() == 1
    assert ids.tolist() == cl100k.encode(corpus_text)


def test_tokenize_is_cached_and_batched(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text("Hello world.\nA second line, same document.\n", encoding="utf-8")
    dataset = data.corpus_dataset(path)
    assert dataset.num_rows == 1 and dataset[0]["text"].endswith("document.\n")
    first = data.tokenize(dataset)
    again = data.tokenize(dataset)
    assert first.cache_files and first.cache_files == again.cache_files, (
        "the second map reads the cache"
    )
    assert first[0]["ids"] == data.tokenizer.get_encoding().encode(dataset[0]["text"])


def test_datasets_output_is_silent_unless_asked_and_restores_the_settings(tmp_path, capfd):
    from datasets.utils import are_progress_bars_disabled

    before = are_progress_bars_disabled()
    rows = datasets.Dataset.from_dict({"text": ["a b", "c d"]})
    with data.datasets_output(False):
        rows.map(lambda batch: batch, batched=True, load_from_cache_file=False)
    assert "Map" not in capfd.readouterr().err
    with data.datasets_output(True):
        rows.map(lambda batch: batch, batched=True, load_from_cache_file=False)
    assert "Map" in capfd.readouterr().err
    assert are_progress_bars_disabled() == before
    assert "PYTEST_CURRENT_TEST" in os.environ  # None means silent here, as under nbval
    with data.datasets_output(None):
        rows.map(lambda batch: batch, batched=True, load_from_cache_file=False)
    assert "Map" not in capfd.readouterr().err


def test_load_corpus_is_the_pipeline_of_the_notebooks(corpus_text, cl100k):
    corpus = data.load_corpus()
    original = torch.tensor(cl100k.encode(corpus_text))
    vocab = CompactVocabulary.from_ids(original)
    assert corpus.vocab_size == vocab.size == 3771
    expected_train, expected_val = data.train_val_split(vocab.encode(original))
    assert torch.equal(corpus.train_ids, expected_train) and torch.equal(
        corpus.val_ids, expected_val
    )
    assert corpus.text == corpus_text
    prompt = "The key to a successful sale is"
    assert corpus.codec.decode(corpus.codec.encode(prompt)) == prompt
    full = data.load_corpus(vocab="full")
    assert full.codec.vocab is None and full.vocab_size == int(original.max()) + 1
    assert torch.equal(full.ids, original)


def test_load_corpus_of_your_own_text(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("buy low, sell high. <|endoftext|> buy low again. " * 10, encoding="utf-8")
    corpus = data.load_corpus(path)
    assert corpus.codec.vocab is not None and corpus.vocab_size < 30
    assert corpus.train_ids.numel() + corpus.val_ids.numel() == corpus.ids.numel()
    with pytest.raises(ValueError, match="compact vocabulary does not know: 'Quant'"):
        corpus.codec.encode("Quantum sell")
    with pytest.raises(ValueError, match="vocab must be 'compact' or 'full'"):
        data.load_corpus(path, vocab="tiny")


def test_codec_round_trips_through_checkpoint_metadata(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("the customer asks, the salesperson listens. " * 5, encoding="utf-8")
    codec = data.load_corpus(path).codec
    again = data.Codec.from_meta(codec.meta())
    assert again.meta() == codec.meta() and again.meta()["encoding"] == "cl100k_base"
    assert torch.equal(again.encode("the customer listens"), codec.encode("the customer listens"))


def test_the_embedded_batch_lives_in_embedding():
    """``course_batch`` is embedding's own (data stays a pure data module); the corpus ids the
    notebooks first met in ``embedding`` are still data's."""
    from transformer_course import embedding

    assert embedding.course_batch.__module__ == "transformer_course.embedding"
    assert not hasattr(data, "course_batch")
    assert embedding.corpus_token_ids is data.corpus_token_ids


def test_load_corpus_reads_and_hashes_the_corpus_once(monkeypatch, corpus_text):
    """One ``load_corpus()``: one ``load_dataset``, one ``Dataset.map``, the file hashed once
    where it is found and the text read back from the Arrow cache hashed once."""
    import hashlib as real_hashlib
    import types

    from transformer_course.data import source

    calls = {"load_dataset": 0, "tokenize": 0, "file sha256": 0, "text sha256": 0}
    real_load_dataset, real_tokenize = datasets.load_dataset, data.tokenize

    def counting(key, function):
        def wrapper(*args, **kwargs):
            calls[key] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(datasets, "load_dataset", counting("load_dataset", real_load_dataset))
    monkeypatch.setattr(data, "tokenize", counting("tokenize", real_tokenize))
    for module, key in ((source, "file sha256"), (data, "text sha256")):
        hashing = types.SimpleNamespace(sha256=counting(key, real_hashlib.sha256))
        monkeypatch.setattr(module, "hashlib", hashing)
    corpus = data.load_corpus()
    assert corpus.text == corpus_text and corpus.vocab_size == 3771
    assert calls == {"load_dataset": 1, "tokenize": 1, "file sha256": 1, "text sha256": 1}
