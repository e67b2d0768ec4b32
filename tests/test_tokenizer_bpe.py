"""transformer_course.tokenizer.train_bpe / BPE against seed 002's worked example and an
independent, deliberately naive BPE written here."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course import tokenizer
from transformer_course.exercises import tokenization as ex
from transformer_course.tokenizer import BPE, END_OF_WORD, train_bpe

SEED_SENTENCE = "a tidy tiger tied a tie tighter to tidy her tiny tail"


def naive_bpe(
    text: str, num_merges: int
) -> tuple[list[tuple[str, str]], list[int], list[list[str]]]:
    """Reference BPE: recount every pair over the whole corpus (word by word, in text order) at
    every step; ties go to the pair whose first occurrence comes first. Returns the merges,
    their counts and the final spelling of every word occurrence."""
    corpus = [list(w) + [END_OF_WORD] for w in text.split()]
    merges, counts = [], []
    for _ in range(num_merges):
        count: dict[tuple[str, str], int] = {}
        first: dict[tuple[str, str], int] = {}
        position = 0
        for word in corpus:
            for a, b in zip(word, word[1:]):
                count[(a, b)] = count.get((a, b), 0) + 1
                first.setdefault((a, b), position)
                position += 1
        if not count:
            break
        best = min(count, key=lambda p: (-count[p], first[p]))
        merges.append(best)
        counts.append(count[best])
        new_corpus = []
        for word in corpus:
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            new_corpus.append(out)
        corpus = new_corpus
    return merges, counts, corpus


# --------------------------------------------------------------------------- seed 002's example


def test_seed_word_counts():
    counts = tokenizer.word_counts(SEED_SENTENCE)
    as_text = {" ".join(w): c for w, c in counts.items()}
    assert as_text == {
        "a </w>": 2,
        "t i d y </w>": 2,
        "t i g e r </w>": 1,
        "t i e d </w>": 1,
        "t i e </w>": 1,
        "t i g h t e r </w>": 1,
        "t o </w>": 1,
        "h e r </w>": 1,
        "t i n y </w>": 1,
        "t a i l </w>": 1,
    }


def test_seed_initial_symbol_counts():
    counts = tokenizer.symbol_counts(tokenizer.word_counts(SEED_SENTENCE))
    assert dict(counts) == {
        "</w>": 12,
        "a": 3,
        "t": 10,
        "i": 8,
        "d": 3,
        "y": 3,
        "g": 2,
        "e": 5,
        "r": 3,
        "h": 2,
        "o": 1,
        "n": 1,
        "l": 1,
    }


def test_seed_first_merge_and_updated_counts():
    bpe = train_bpe(SEED_SENTENCE, 1)
    assert bpe.merges == [("t", "i")]
    assert bpe.merge_counts == [7]
    words = {
        tokenizer.merge_pair(w, ("t", "i")): c
        for w, c in tokenizer.word_counts(SEED_SENTENCE).items()
    }
    symbols = tokenizer.symbol_counts(words)
    # seed 002's table after the first merge
    assert (symbols["t"], symbols["i"], symbols["ti"], symbols["</w>"]) == (3, 1, 7, 12)


def test_seed_all_merges_match_reference():
    merges, counts, corpus = naive_bpe(SEED_SENTENCE, 100)
    bpe = train_bpe(SEED_SENTENCE, 100)
    assert bpe.merges == merges
    assert bpe.merge_counts == counts
    assert len(merges) == 25  # then every word is a single symbol
    assert all(len(w) == 1 for w in corpus)
    assert bpe.merges[:5] == [("t", "i"), ("y", "</w>"), ("e", "r"), ("er", "</w>"), ("a", "</w>")]


def test_seed_tokenize_after_all_merges_is_one_token_per_word():
    bpe = train_bpe(SEED_SENTENCE, 100)
    tokens = bpe.tokenize(SEED_SENTENCE)
    assert [t for t in tokens if not t.isspace()] == [
        w + END_OF_WORD for w in SEED_SENTENCE.split()
    ]


# --------------------------------------------------------------------------- against the reference

small_text = st.text(alphabet="ab c\nd", min_size=0, max_size=60)


@settings(max_examples=150, deadline=None)
@given(text=small_text, num_merges=st.integers(0, 30))
def test_merges_match_naive_reference(text, num_merges):
    merges, counts, corpus = naive_bpe(text, num_merges)
    bpe = train_bpe(text, num_merges)
    assert bpe.merges == merges
    assert bpe.merge_counts == counts
    # tokenizing the training text reproduces the training segmentation word by word
    tokens = [t for t in bpe.tokenize(text) if not t.isspace()]
    assert tokens == [s for word in corpus for s in word]


def test_tokenize_on_corpus_sample_matches_reference(corpus_text):
    sample = corpus_text[:3000]
    merges, _, corpus = naive_bpe(sample, 60)
    bpe = train_bpe(sample, 60)
    assert bpe.merges == merges
    assert [t for t in bpe.tokenize(sample) if not t.isspace()] == [s for w in corpus for s in w]


# --------------------------------------------------------------------------- round trip

_trained = train_bpe(SEED_SENTENCE + " </w>x a</w> \u4f60\u597d \U0001f642\U0001f642 tie</w>", 40)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_round_trip_arbitrary_unicode(text):
    tokens = _trained.tokenize(text)
    assert _trained.detokenize(tokens) == text
    vocab = set(_trained.vocab)
    for token in tokens:
        # whitespace run, a learned symbol, or one character the encoder never saw
        assert token.isspace() or token in vocab or len(token) == 1


@settings(max_examples=100, deadline=None)
@given(
    train=st.lists(st.sampled_from([*"ab<>/w \n\t", "</w>", "é", "\U0001f600"]), max_size=30).map(
        "".join
    ),
    text=st.lists(st.sampled_from([*"ab<>/w \n", "</w>", "é", "\U0001f600", "x"]), max_size=30).map(
        "".join
    ),
    num_merges=st.integers(0, 20),
)
def test_round_trip_with_literal_end_markers(train, text, num_merges):
    bpe = train_bpe(train, num_merges)
    assert bpe.detokenize(bpe.tokenize(text)) == text


def test_round_trip_whitespace_kinds_and_corpus(corpus_text):
    bpe = train_bpe(corpus_text[:20000], 200)
    for text in [
        "",
        " ",
        "  lead and trail  ",
        "tab\tnew\nline\r\n",
        "\u3000全角 space",
        corpus_text[:5000],
    ]:
        assert bpe.detokenize(bpe.tokenize(text)) == text


def test_unseen_word_falls_back_to_pieces():
    bpe = train_bpe(SEED_SENTENCE, 12)
    assert bpe.tokenize("titan") == ["ti", "t", "a", "n", "</w>"]
    assert bpe.segment("tidy") == ("tidy</w>",)


def test_long_word_is_fast_enough():
    bpe = train_bpe("abab " * 50 + "ab", 10)
    word = "ab" * 20000
    tokens = bpe.tokenize(word)
    assert bpe.detokenize(tokens) == word


# --------------------------------------------------------------------------- details and errors


def test_vocab_and_ids():
    bpe = train_bpe(SEED_SENTENCE, 3)
    assert bpe.vocab[0] == END_OF_WORD
    assert bpe.alphabet == list(dict.fromkeys(SEED_SENTENCE.replace(" ", "")))
    assert bpe.vocab[-3:] == ["ti", "y</w>", "er"]
    assert bpe.token_to_id["ti"] == len(bpe.vocab) - 3


def test_zero_merges_is_characters():
    bpe = train_bpe("hello world", 0)
    assert bpe.merges == []
    assert bpe.tokenize("hello") == ["h", "e", "l", "l", "o", "</w>"]


def test_split_words_keeps_everything():
    text = "  a\tb\n\nc "
    assert tokenizer.split_words(text) == ["  ", "a", "\t", "b", "\n\n", "c", " "]
    assert tokenizer.split_words("") == []


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("text", -1), ValueError, "num_merges must be at least 0"),
        (("text", 2.0), TypeError, "num_merges must be an int"),
        ((b"text", 2), TypeError, "text must be a str"),
    ],
)
def test_train_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        train_bpe(*args)


def test_tokenize_and_detokenize_errors():
    bpe = BPE(merges=[])
    with pytest.raises(TypeError, match="text must be a str"):
        bpe.tokenize(None)
    with pytest.raises(ValueError, match="lacks"):
        bpe.detokenize(["a", "b"])
    with pytest.raises(ValueError, match="non-empty"):
        tokenizer.spell("")


# --------------------------------------------------------------------------- exercises of 01


def test_exercise_second_merge():
    assert not ex.check_second_merge(...).answered
    assert ex.check_second_merge(("y", "</w>"))
    wrong = ex.check_second_merge(("e", "r"))
    assert not wrong and wrong.answered and "tie" in wrong.message
    assert "order" in ex.check_second_merge(("</w>", "y")).message
    assert not ex.check_second_merge(42)


def test_exercise_token_count(cl100k):
    text = "Tokenization isn't magic!"
    assert ex.check_token_count(len(cl100k.encode(text)))
    assert not ex.check_token_count(len(text.split()))
    assert not ex.check_token_count(...).answered
    assert ex.check_token_count(..., hint=True).is_hint
    assert ex.check_second_merge(..., hint=True).is_hint


def test_build_exercises_name_the_usual_slips():
    """01's build checkers: an overlapping merge, and a pair counted once per word, are named."""

    def overlapping(word, pair):  # a for loop cannot skip the second symbol of a merged pair
        out = []
        for i in range(len(word)):
            joined = i + 1 < len(word) and (word[i], word[i + 1]) == pair
            out.append(word[i] + word[i + 1] if joined else word[i])
        return tuple(out)

    slip = ex.check_merge_pair(overlapping, seed=0)
    assert not slip and "('" in slip.message  # the word itself is shown, not just its length

    def once_per_word(words):
        counts = Counter()
        for word, count in words.items():
            for pair in set(zip(word, word[1:])):
                counts[pair] += count
        return counts

    slip = ex.check_count_pairs(once_per_word, seed=0)
    assert not slip and "result[(" in slip.message
    assert ex.check_count_pairs(
        lambda words: dict(tokenizer.pair_counts(words)), seed=0
    )  # a dict is fine
    missing = ex.check_count_pairs(lambda words: {}, seed=0)
    assert not missing and "lacks the key" in missing.message
