"""The compact vocabulary: a bijection between the ids a corpus uses and 0..V'−1."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.vocabulary import CompactVocabulary

id_lists = st.lists(st.integers(min_value=0, max_value=200_000), min_size=1, max_size=200)


@settings(max_examples=50, deadline=None)
@given(id_lists)
def test_round_trip_and_order(ids):
    vocab = CompactVocabulary.from_ids(ids)
    tensor = torch.tensor(ids)
    compact = vocab.encode(tensor)
    assert compact.shape == tensor.shape
    assert int(compact.min()) >= 0 and int(compact.max()) < vocab.size == len(set(ids))
    assert torch.equal(vocab.decode(compact), tensor)
    # The order of the original ids is kept: a < b  <=>  compact(a) < compact(b).
    distinct = sorted(set(ids))
    assert vocab.encode(distinct).tolist() == list(range(len(distinct)))
    assert vocab.full_size == max(ids) + 1


def test_shapes_are_kept():
    vocab = CompactVocabulary.from_ids([5, 9, 100])
    batch = torch.tensor([[100, 5], [9, 9]])  # (B, T)
    assert vocab.encode(batch).tolist() == [[2, 0], [1, 1]]
    assert torch.equal(vocab.decode(vocab.encode(batch)), batch)


def test_unknown_ids_are_named():
    vocab = CompactVocabulary.from_ids([5, 9, 100])
    with pytest.raises(ValueError, match=r"\[7, 1000\].*not in this compact vocabulary"):
        vocab.encode([5, 7, 1000])
    assert vocab.contains([5, 7]).tolist() == [True, False]


def test_bad_arguments():
    vocab = CompactVocabulary.from_ids([1, 2, 3])
    with pytest.raises(ValueError, match="compact ids must lie in 0..2"):
        vocab.decode([3])
    with pytest.raises(TypeError, match="integer token ids"):
        vocab.encode(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="empty"):
        CompactVocabulary.from_ids([])
    with pytest.raises(ValueError, match="sorted and unique"):
        CompactVocabulary(torch.tensor([3, 1]))


def test_the_sales_textbook(corpus_text, cl100k):
    ids = torch.tensor(cl100k.encode(corpus_text))
    vocab = CompactVocabulary.from_ids(ids)
    assert vocab.size == 3771  # the seed's "3771 distinct tokens"
    assert vocab.full_size == 100070  # max id 100069 ("Clar") + 1
    assert cl100k.decode([int(vocab.decode([vocab.size - 1]))]) == "Clar"
    assert torch.equal(vocab.decode(vocab.encode(ids)), ids)
    assert vocab.to_list() == sorted(set(ids.tolist()))
