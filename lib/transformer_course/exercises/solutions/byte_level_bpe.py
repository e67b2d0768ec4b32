"""Solutions of 01b_byte_level_bpe's build exercises."""

from __future__ import annotations

from collections import Counter, defaultdict

from ...tokenizer.byte_level import merge_ids, most_frequent_pair


def train_naive(word_counts: dict[bytes, int], n_merges: int) -> list[tuple[int, int]]:
    """Byte-level BPE: count every pair of every pre-token, merge the winner, repeat."""
    words = {tuple(word): count for word, count in word_counts.items()}
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for new_id in range(256, 256 + n_merges):
        counts: Counter = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += count
        if not counts:
            break  # every pre-token is one token: nothing left to merge
        pair = most_frequent_pair(counts, vocab)
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        words = {tuple(merge_ids(word, pair, new_id)): count for word, count in words.items()}
    return merges


def train_incremental(word_counts: dict[bytes, int], n_merges: int) -> list[tuple[int, int]]:
    """The same merges, keeping the pair counts and recounting only the pre-tokens that change."""
    words = [list(word) for word in word_counts]
    counts = list(word_counts.values())
    pair_counts: Counter = Counter()
    holders = defaultdict(set)  # pair -> indices of the pre-tokens that hold it
    for index, word in enumerate(words):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += counts[index]
            holders[pair].add(index)
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for new_id in range(256, 256 + n_merges):
        if not pair_counts:
            break
        pair = most_frequent_pair(pair_counts, vocab)
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        for index in holders.pop(pair):
            old = words[index]
            for old_pair in zip(old, old[1:]):  # take the pre-token's old pairs out,
                pair_counts[old_pair] -= counts[index]
                if pair_counts[old_pair] == 0:
                    del pair_counts[old_pair]
            words[index] = new = merge_ids(old, pair, new_id)
            for new_pair in zip(new, new[1:]):  # then put its new pairs in
                pair_counts[new_pair] += counts[index]
                holders[new_pair].add(index)
    return merges


def encode_chunk(
    chunk: bytes, merges: dict[tuple[int, int], int], byte_ids: list[int]
) -> list[int]:
    """One pre-token's ids: bytes through ``byte_ids``, then the lowest-ranked merge, repeated."""
    ids = [byte_ids[b] for b in chunk]
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        ids = merge_ids(ids, pair, merges[pair])
    return ids
