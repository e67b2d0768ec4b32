"""transformer_course.embedding: the shared starting state of notebooks 02–08, checked against
independent references (one-hot matmul, direct slicing of the corpus, the closed-form PE)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_course import embedding
from transformer_course.exercises import embeddings as ex


@pytest.fixture(scope="module")
def corpus_ids(corpus_text, cl100k):
    return embedding.corpus_token_ids(corpus_text)


@pytest.fixture(scope="module")
def batch(corpus_ids):
    return embedding.course_batch(seed=0, corpus_ids=corpus_ids)


def test_corpus_statistics_of_seed_000(corpus_ids, cl100k):
    assert corpus_ids.dtype == torch.long and corpus_ids.dim() == 1
    assert torch.unique(corpus_ids).numel() == 3771
    assert int(corpus_ids.max()) == 100_069
    assert cl100k.decode([100_069]) == "Clar"


def test_corpus_token_ids_equals_tiktoken(cl100k):
    text = "Chapter 1: Building Rapport and Capturing"
    assert embedding.corpus_token_ids(text).tolist() == cl100k.encode(text)


def test_shapes_and_table_size(batch):
    assert batch.x.shape == batch.y.shape == (4, 16)
    assert batch.vocab_size == 100_070  # max id + 1, not the seed's 100,069
    assert batch.token_embedding.weight.shape == (100_070, 64)
    assert batch.positional.shape == (16, 64)
    assert batch.embedded.shape == batch.inputs.shape == (4, 16, 64)


def test_windows_are_slices_of_the_corpus(batch, corpus_ids):
    ids = corpus_ids.tolist()
    for row_x, row_y in zip(batch.x.tolist(), batch.y.tolist()):
        starts = [s for s in range(len(ids) - 16) if ids[s : s + 16] == row_x]
        assert starts, "every row of x is 16 consecutive corpus tokens"
        assert any(ids[s + 1 : s + 17] == row_y for s in starts), "y is the next 16 tokens"


def test_embedded_equals_one_hot_matmul(batch):
    weight = batch.token_embedding.weight.detach()  # (V, C)
    one_hot = F.one_hot(batch.x, num_classes=batch.vocab_size).float()  # (B, T, V)
    torch.testing.assert_close(one_hot @ weight, batch.embedded)


def test_inputs_are_embeddings_plus_closed_form_pe(batch):
    pe = torch.tensor(
        [
            [
                (math.sin if c % 2 == 0 else math.cos)(p / 10000 ** (2 * (c // 2) / 64))
                for c in range(64)
            ]
            for p in range(16)
        ]
    )
    torch.testing.assert_close(batch.positional, pe, atol=1e-6, rtol=0)
    torch.testing.assert_close(batch.inputs, batch.embedded + pe[None], atol=1e-6, rtol=1e-6)


def test_tokens_decode_the_ids(batch, cl100k):
    assert [[cl100k.decode([i]) for i in row] for row in batch.x.tolist()] == batch.tokens


def test_reproducible_and_seed_dependent(corpus_ids, batch):
    again = embedding.course_batch(seed=0, corpus_ids=corpus_ids)
    assert torch.equal(again.x, batch.x)
    assert torch.equal(again.token_embedding.weight, batch.token_embedding.weight)
    other = embedding.course_batch(seed=1, corpus_ids=corpus_ids)
    assert not torch.equal(other.x, batch.x)
    assert not torch.equal(other.token_embedding.weight[:10], batch.token_embedding.weight[:10])


def test_global_rng_untouched(corpus_ids):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    embedding.course_batch(seed=5, corpus_ids=corpus_ids[:1000])
    torch.testing.assert_close(torch.rand(3), expected)


def test_small_corpus_and_sizes(cl100k):
    ids = torch.arange(100, 160)  # (60,)
    small = embedding.course_batch(
        seed=3, batch_size=2, context_length=8, d_model=6, corpus_ids=ids
    )
    assert small.vocab_size == 160
    assert small.inputs.shape == (2, 8, 6)
    torch.testing.assert_close(small.y, small.x + 1)  # consecutive ids: next token is id + 1


def test_crop_keeps_the_first_tokens_of_every_window(corpus_ids):
    """04–08's windows of 12: the first 12 tokens of 02's batch, each with its own encoding."""
    full = embedding.course_batch(seed=0, corpus_ids=corpus_ids)
    short = full.crop(12)
    assert short.x.shape == (4, 12) and short.inputs.shape == (4, 12, 64)
    assert torch.equal(short.x, full.x[:, :12]) and torch.equal(short.y, full.y[:, :12])
    assert short.tokens == [row[:12] for row in full.tokens]
    assert torch.equal(short.positional, full.positional[:12])
    torch.testing.assert_close(short.inputs, short.embedded + short.positional)
    assert full.inputs.shape == (4, 16, 64), "cropping leaves the original batch as it was"
    for bad in (0, 17):
        with pytest.raises(ValueError, match="T must be"):
            full.crop(bad)
    with pytest.raises(TypeError, match="T must be an int"):
        full.crop(12.0)


# --------------------------------------------------------------------------- exercises of 02


def test_exercises():
    assert ex.check_table_parameters(100_070 * 512)
    assert not ex.check_table_parameters(100_069 * 512)
    assert not ex.check_table_parameters(...).answered
    assert ex.check_table_parameters(..., hint=True).is_hint
    # the predict-before-run question: measured on a small GPT, every unread row gets a gradient
    assert ex.check_unread_row_gradient(1.0)
    assert ex.check_unread_row_gradient(1)
    assert not ex.check_unread_row_gradient(0.0)
    assert not ex.check_unread_row_gradient(True)
    assert ex.check_unread_row_gradient(..., hint=True).is_hint


def test_build_exercises_catch_the_usual_slips():
    """The build checkers of 02 name the mistakes a learner is likely to make."""
    # one_hot without num_classes is too narrow whenever the largest id is below V - 1
    narrow = ex.check_embed_with_one_hot(lambda ids, w: F.one_hot(ids).float() @ w, seed=0)
    assert not narrow and "shapes cannot be multiplied" in narrow.message
    # integer one-hot times a float table
    integer = ex.check_embed_with_one_hot(lambda ids, w: F.one_hot(ids, w.shape[0]) @ w, seed=0)
    assert not integer and "dtype" in integer.message
    assert ex.check_embed_with_one_hot(lambda ids, w: w[ids], seed=0)  # indexing is the same lookup

    def targets_not_shifted(ids, batch_size, context_length, generator):
        starts = torch.randint(len(ids) - context_length, (batch_size,), generator=generator)
        positions = starts[:, None] + torch.arange(context_length)
        return ids[positions], ids[positions]

    slip = ex.check_sample_batch(targets_not_shifted, seed=0)
    assert not slip and "item 1 of the result" in slip.message
