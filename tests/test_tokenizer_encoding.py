"""transformer_course.tokenizer.get_encoding: tiktoken's encoding, offline-safe."""

from __future__ import annotations

import pytest
import tiktoken

from transformer_course import tokenizer


def test_cl100k_round_trips(cl100k):
    text = "Chapter 1: Building Rapport and Capturing"
    assert cl100k.decode(cl100k.encode(text)) == text
    assert cl100k.name == "cl100k_base"


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown encoding"):
        tokenizer.get_encoding("nope_base")


def test_offline_without_cache_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(tokenizer.TIKTOKEN_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})

    def refuse(*args, **kwargs):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    with pytest.raises(RuntimeError, match=tokenizer.TIKTOKEN_ENV_VAR):
        tokenizer.get_encoding("r50k_base")
