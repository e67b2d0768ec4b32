"""Solutions of 01_tokenization's build exercises."""

from __future__ import annotations

from collections import Counter


def merge_pair(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """``word`` with every occurrence of ``pair`` joined into one symbol, left to right."""
    merged: list[str] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            merged.append(word[i] + word[i + 1])  # the two symbols become one
            i += 2  # both are used up: an overlapping pair cannot merge again
        else:
            merged.append(word[i])
            i += 1
    return tuple(merged)


def count_pairs(words: dict[tuple[str, ...], int]) -> Counter[tuple[str, str]]:
    """How often each adjacent pair of symbols occurs, every word weighted by its count."""
    counts: Counter[tuple[str, str]] = Counter()
    for word, count in words.items():
        for pair in zip(word, word[1:]):  # (s0, s1), (s1, s2), …
            counts[pair] += count
    return counts
