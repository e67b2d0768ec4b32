"""The merge-by-merge replay widget of 01b_byte_level_bpe, driven without a browser."""

from __future__ import annotations

from collections import Counter

import pytest

from transformer_course.tokenizer import byte_level as bpe
from transformer_course.widgets import bpe_replay as br

WORDS = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}
SENTENCE = " lowest newer 你好 🙂"


@pytest.fixture(scope="module")
def book(corpus_text):
    counts = bpe.pretoken_counts(corpus_text[:40000])
    return counts, bpe.train_incremental(counts, 60)


def test_top_pair_is_the_merge_made_cs336():
    merges = bpe.train_naive(WORDS, 6)
    for k in range(1, 7):
        step = br.replay_step(WORDS, merges, k, SENTENCE)
        vocab = bpe.vocab_from_merges(merges)
        assert (step.top[0][0], step.top[0][1]) == (
            vocab[merges[k - 1][0]],
            vocab[merges[k - 1][1]],
        )
        assert step.formed == step.top[0][0] + step.top[0][1]
        assert step.token_id == 255 + k
    # the tie of step 1: ("s", "t") and ("e", "s") both occur 9 times; "st" is ranked first
    first = br.replay_step(WORDS, merges, 1).top
    assert first[:2] == [(b"s", b"t", 9), (b"e", b"s", 9)]


def test_counts_are_the_naive_recount(book):
    counts, merges = book
    for k in (1, 17, 60):
        step = br.replay_step(counts, merges, k, n_top=8)
        vocab = bpe.vocab_from_merges(merges)
        words = {tuple(word): n for word, n in counts.items()}
        for i, pair in enumerate(merges[: k - 1]):
            words = {tuple(bpe.merge_ids(w, pair, 256 + i)): n for w, n in words.items()}
        recount: Counter = Counter()
        for word, n in words.items():
            for a, b in zip(word, word[1:]):
                recount[(vocab[a], vocab[b])] += n
        assert [count for *_, count in step.top] == sorted(recount.values(), reverse=True)[:8]
        assert all(recount[(a, b)] == count for a, b, count in step.top)
        assert step.formed == vocab[255 + k]


def test_sentence_cut_matches_the_tokenizer(book):
    counts, merges = book
    for k in (1, 30, 60):
        step = br.replay_step(counts, merges, k, SENTENCE)
        ids = bpe.Tokenizer.from_merges(merges[:k]).encode(SENTENCE)
        assert [p.token_id for p in step.pieces] == ids
        assert "".join(p.text for p in step.pieces) == SENTENCE
    assert len(br.replay_step(counts, merges, 60, SENTENCE).pieces) < len(
        br.replay_step(counts, merges, 1, SENTENCE).pieces
    )


@pytest.mark.parametrize("k", [0, 7, -1])
def test_bad_k_is_a_clear_error(k):
    merges = bpe.train_naive(WORDS, 6)
    with pytest.raises(ValueError, match="k must be"):
        br.replay_step(WORDS, merges, k)
    with pytest.raises(TypeError, match="k must be an int"):
        br.replay_step(WORDS, merges, 2.0)


def test_html_names_the_merge_and_the_tokens():
    merges = bpe.train_naive(WORDS, 6)
    page = br.replay_html(br.replay_step(WORDS, merges, 2, "a <b> & c"))
    assert "merge 2" in page and "b&#x27;est&#x27;" in page
    assert "&lt;" in page and "&amp;" in page  # the sentence is escaped


def test_widget_slider_redraws():
    widgets = pytest.importorskip("ipywidgets")
    merges = bpe.train_naive(WORDS, 6)
    box = br.replay_widget(WORDS, merges, SENTENCE)
    slider, view = box.children
    assert isinstance(slider, widgets.IntSlider) and (slider.min, slider.max) == (1, 6)
    before = view.value
    slider.value = 4
    assert view.value != before and "merge 4" in view.value
