"""Byte-level BPE training: pre-tokens, pair counts, merges (introduced in 01b_byte_level_bpe).

Ids 0–255 are the 256 bytes, so any text is spelled without an unknown symbol; merge ``k``
(counting from 0) makes id ``256 + k``. Both trainers take the pre-token counts
(``{b"low": 5, ...}``) and return the merges as pairs of ids, in order; they differ only in
speed. Ties between equally frequent pairs go to the lexicographically greater pair of byte
strings, the rule of Stanford CS336's assignment 1.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import regex

#: GPT-4's (cl100k_base's) pre-tokenizer: contractions, letter runs with one leading
#: non-letter, numbers of at most 3 digits, punctuation runs, and whitespace. The possessive
#: quantifiers (``?+``, ``++``) and ``\p{L}`` need the ``regex`` package, not ``re``.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

Pair = tuple[int, int]


def pretokenize(text: str, pattern: str = CL100K_PATTERN) -> list[str]:
    """``text`` cut into pre-tokens; BPE never merges across them. ``"".join(...) == text``."""
    return regex.findall(pattern, text)


def pretoken_counts(text: str, pattern: str = CL100K_PATTERN) -> Counter[bytes]:
    """How often each pre-token occurs, as UTF-8 bytes (``{b" the": 5012, ...}``)."""
    return Counter(piece.encode("utf-8") for piece in pretokenize(text, pattern))


def base_vocab() -> dict[int, bytes]:
    """Ids 0–255: one byte each."""
    return {i: bytes([i]) for i in range(256)}


def merge_ids(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """``ids`` with every occurrence of ``pair`` replaced by ``new_id``, left to right.

    An occurrence uses both its ids up: ``[97, 97, 97]`` merged on ``(97, 97)`` is
    ``[new_id, 97]``, never two overlapping merges.
    """
    merged: list[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def most_frequent_pair(counts: Mapping[Pair, int], vocab: Mapping[int, bytes]) -> Pair:
    """The pair BPE merges next: the most frequent; a tie goes to the lexicographically
    greater pair of byte strings (``(b"s", b"t")`` beats ``(b"e", b"s")``)."""
    top = max(counts.values())
    tied = [pair for pair, count in counts.items() if count == top]
    return max(tied, key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))


def vocab_from_merges(merges: Sequence[Pair]) -> dict[int, bytes]:
    """The bytes of every id: 0–255, then ``256 + k`` = the bytes of merge ``k``'s two ids."""
    vocab = base_vocab()
    for k, (left, right) in enumerate(merges):
        vocab[256 + k] = vocab[left] + vocab[right]
    return vocab


def train_naive(word_counts: Mapping[bytes, int], n_merges: int) -> list[Pair]:
    """Byte-level BPE the direct way: before every merge, count every pair of every pre-token.

    ``word_counts`` maps each pre-token (bytes) to how often it occurs; returns at most
    ``n_merges`` merges (fewer when no pair is left).
    """
    words = {tuple(word): count for word, count in word_counts.items()}
    vocab = base_vocab()
    merges: list[Pair] = []
    for new_id in range(256, 256 + n_merges):
        counts: Counter[Pair] = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):  # overlapping pairs all count: "aaa" has 2 (a, a)
                counts[pair] += count
        if not counts:
            break
        pair = most_frequent_pair(counts, vocab)
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        words = {tuple(merge_ids(word, pair, new_id)): count for word, count in words.items()}
    return merges


def train_incremental(word_counts: Mapping[bytes, int], n_merges: int) -> list[Pair]:
    """The same merges as :func:`train_naive`, fast: the pair counts are kept between merges and
    only the pre-tokens that hold the merged pair are recounted."""
    words = [list(word) for word in word_counts]
    counts = list(word_counts.values())
    pair_counts: Counter[Pair] = Counter()
    holders: defaultdict[Pair, set[int]] = defaultdict(set)  # pair -> pre-tokens that hold it
    for index, word in enumerate(words):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += counts[index]
            holders[pair].add(index)
    vocab = base_vocab()
    merges: list[Pair] = []
    for new_id in range(256, 256 + n_merges):
        if not pair_counts:
            break
        pair = most_frequent_pair(pair_counts, vocab)
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        for index in holders.pop(pair):
            _recount(words, index, counts[index], pair, new_id, pair_counts, holders)
    return merges


def _recount(words, index, count, pair, new_id, pair_counts, holders) -> None:
    """Merge ``pair`` inside pre-token ``index``: take its old pairs out, put its new ones in."""
    old = words[index]
    for old_pair in zip(old, old[1:]):
        pair_counts[old_pair] -= count
        if pair_counts[old_pair] == 0:
            del pair_counts[old_pair]  # a pair that no longer occurs must not win a tie
    words[index] = new = merge_ids(old, pair, new_id)
    for new_pair in zip(new, new[1:]):
        pair_counts[new_pair] += count
        holders[new_pair].add(index)
