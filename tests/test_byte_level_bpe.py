"""01b's byte-level BPE (transformer_course.tokenizer.byte_level): the two trainers agree with each other and
with the textbook examples, the tokenizer rebuilt from cl100k_base's ranks gives tiktoken's ids
on the whole book, on Chinese and on edge cases, streaming changes nothing, and the exercises'
wrong versions fail on every seed."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from transformer_course import data, tokenizer
from transformer_course.exercises import byte_level_bpe as exercises
from transformer_course.exercises.solutions import byte_level_bpe as solutions
from transformer_course.i18n import in_language
from transformer_course.tokenizer import byte_level as bpe

EDGE_CASES = [
    "",
    "\n",
    "\n\n\n",
    "  several   spaces  ",
    "a\r\nb\r\n",
    " ",
    "\t tab",
    "I'M don't we'll",
    "123456789 1,000.5",
    "naïve café 😀",
    "你好，世界！这是一个测试。",
    "éa",
    "<|endoftext",
    "x<|",
]
SPECIAL_TEXTS = ["<|endoftext|>", "a<|endoftext|>b<|fim_prefix|>", "<|endoftext|><|endoftext|>"]


@pytest.fixture(scope="module")
def book() -> str:
    return data.load_text()


@pytest.fixture(scope="module")
def cl100k():
    return bpe.cl100k_base()


@pytest.fixture(scope="module")
def tiktoken_cl100k():
    return tokenizer.get_encoding("cl100k_base")


def test_wikipedia_example_aaabdaaabac():
    merges = bpe.train_naive(Counter({b"aaabdaaabac": 1}), 3)
    assert bpe.Tokenizer.from_merges(merges).encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert bpe.train_incremental(Counter({b"aaabdaaabac": 1}), 3) == merges


def test_cs336_example_and_its_tie_rule():
    words = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}
    for train in (bpe.train_naive, bpe.train_incremental):
        merges = train(words, 6)
        vocab = bpe.vocab_from_merges(merges)
        shown = [(vocab[a], vocab[b]) for a, b in merges]
        assert shown == [
            (b"s", b"t"),
            (b"e", b"st"),
            (b"o", b"w"),
            (b"l", b"ow"),
            (b"w", b"est"),
            (b"n", b"e"),
        ]


def test_merges_never_overlap():
    assert bpe.merge_ids([97, 97, 97], (97, 97), 256) == [256, 97]
    assert bpe.merge_ids([97, 97, 97, 97], (97, 97), 256) == [256, 256]


def test_trainers_agree_on_random_corpora():
    rng = random.Random(0)
    for _trial in range(30):
        words = {
            bytes(rng.choice(b"abc ") for _ in range(rng.randint(1, 9))): rng.randint(1, 5)
            for _ in range(rng.randint(1, 12))
        }
        n = rng.randint(1, 20)
        assert bpe.train_incremental(words, n) == bpe.train_naive(words, n)


def test_trainers_agree_on_the_book(book):
    counts = bpe.pretoken_counts(book)
    assert bpe.train_incremental(counts, 80) == bpe.train_naive(counts, 80)


def test_the_pattern_is_tiktokens(tiktoken_cl100k):
    assert tiktoken_cl100k._pat_str == bpe.CL100K_PATTERN
    assert "".join(bpe.pretokenize("Hello  world\r\n  x")) == "Hello  world\r\n  x"


def test_cl100k_rebuilt_equals_tiktoken_on_the_whole_book(book, cl100k, tiktoken_cl100k):
    ids = cl100k.encode(book)
    assert ids == tiktoken_cl100k.encode(book)
    assert cl100k.decode(ids) == book


def test_cl100k_rebuilt_equals_tiktoken_on_chinese_and_edge_cases(cl100k, tiktoken_cl100k):
    for text in [bpe.chinese_sample(), *EDGE_CASES]:
        assert cl100k.encode(text) == tiktoken_cl100k.encode(text), repr(text)
        assert cl100k.decode(cl100k.encode(text)) == text
    for ids in ([100, 101, 102], [15722], [1, 99, 100257]):
        assert cl100k.decode(ids) == tiktoken_cl100k.decode(ids)


def test_special_tokens_as_tiktoken(cl100k, tiktoken_cl100k):
    for text in SPECIAL_TEXTS:
        with pytest.raises(ValueError):
            tiktoken_cl100k.encode(text)
        with pytest.raises(ValueError, match="special token"):
            cl100k.encode(text)
        assert cl100k.encode(text, allowed_special="all") == tiktoken_cl100k.encode(
            text, allowed_special="all"
        )
        assert cl100k.encode_ordinary(text) == tiktoken_cl100k.encode_ordinary(text)
        assert cl100k.decode(cl100k.encode(text, allowed_special="all")) == text
    allowed = {"<|endoftext|>"}
    text = "a<|endoftext|>b"
    assert cl100k.encode(text, allowed) == tiktoken_cl100k.encode(text, allowed_special=allowed)


def test_forgetting_the_byte_permutation_breaks_the_ids(cl100k, tiktoken_cl100k):
    assert cl100k.byte_ids != tuple(range(256))
    forgot = bpe.Tokenizer(cl100k.merges, tuple(range(256)), pattern=cl100k.pattern)
    assert forgot.encode("Hello world") != tiktoken_cl100k.encode("Hello world")


def test_encode_iterable_streams_the_same_ids(book, cl100k):
    lines = book[:60_000].splitlines(keepends=True)
    assert list(cl100k.encode_iterable(lines)) == cl100k.encode(book[:60_000])
    rng = random.Random(1)
    text = "x <|endoftext|> yy\n\n  z<|endoftext|>" * 20 + "  \r\n 中文字符  "
    for _trial in range(20):
        cuts = sorted(rng.sample(range(len(text)), 30))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert list(cl100k.encode_iterable(pieces, "all")) == cl100k.encode(text, "all")


def test_encode_iterable_holds_a_bounded_buffer(cl100k):
    """A long stream never makes the buffer grow: it is fed line by line and consumed lazily."""
    lines = iter(["word " * 20 + "\n"] * 2000)
    stream = cl100k.encode_iterable(lines)
    first = [next(stream) for _ in range(10)]
    assert first == cl100k.encode(("word " * 20 + "\n") * 3)[:10]
    assert len(list(lines)) > 1900  # the iterable was read only as far as needed


def test_trained_tokenizer_round_trips_any_text(book):
    merges = bpe.train_incremental(bpe.pretoken_counts(book[:50_000]), 100)
    trained = bpe.trained_tokenizer(merges)
    for text in ["Sales are people", "你好 🙂 \x00", *EDGE_CASES]:
        assert trained.decode(trained.encode(text)) == text
    assert trained.vocab_size == 256 + 100 + 1


def test_compression_numbers_and_zh_labels(cl100k):
    assert bpe.bytes_per_token(cl100k, "hello world") == 11 / 2
    with pytest.raises(ValueError):
        bpe.bytes_per_token(cl100k, "")
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    table = pd.DataFrame({"English": [4.0, 1.0], "中文": [1.5, 1.0]}, index=["a", "b"])
    with in_language("zh"):
        ax = bpe.plot_bytes_per_token(table)
    assert ax.get_ylabel() != "UTF-8 bytes per token"


@pytest.mark.parametrize(
    "check, wrongs",
    [
        (exercises.check_train_naive, [exercises._ties_reversed, exercises._overlapping]),
        (exercises.check_train_incremental, [exercises._ties_reversed, exercises._overlapping]),
        (
            exercises.check_encode_chunk,
            [exercises._permutation_forgotten, exercises._encode_overlapping],
        ),
    ],
    ids=["naive", "incremental", "encode_chunk"],
)
def test_wrong_versions_fail_on_40_seeds(check, wrongs):
    for wrong in wrongs:
        verdicts = [check(wrong, seed=seed) for seed in range(40)]
        assert not any(v.correct for v in verdicts), wrong.__name__
        assert all(v.answered for v in verdicts)


def test_solutions_are_the_library():
    words = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}
    assert solutions.train_naive(words, 10) == bpe.train_naive(words, 10)
    assert solutions.train_incremental(words, 10) == bpe.train_naive(words, 10)
