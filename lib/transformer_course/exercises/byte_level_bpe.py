"""Exercises of 01b_byte_level_bpe: the naive and the incremental byte-level trainer, and the
encoder of one pre-token with tiktoken's byte permutation."""

from __future__ import annotations

import torch

from ..i18n import N_
from ..tokenizer import byte_level as bpe
from .build import build_exercise
from .solutions.byte_level_bpe import encode_chunk, train_incremental, train_naive

#: The bytes the random pre-tokens are made of: few, so ties and runs ("aaa") are common.
_ALPHABET = b"abst"


def _random_run(generator: torch.Generator) -> bytes:
    """3–7 times one byte: merging it must not overlap (b'aaa' on (97, 97) is [256, 97])."""
    byte = _ALPHABET[int(torch.randint(len(_ALPHABET), (), generator=generator))]
    return bytes([byte]) * int(torch.randint(3, 8, (), generator=generator))


def _random_word(generator: torch.Generator) -> bytes:
    """1–7 bytes of the alphabet; half of the draws a run of one byte."""
    if float(torch.rand((), generator=generator)) < 0.5:
        return _random_run(generator)
    length = int(torch.randint(1, 8, (), generator=generator))
    picks = torch.randint(len(_ALPHABET), (length,), generator=generator).tolist()
    return bytes(_ALPHABET[k] for k in picks)


def _random_word_counts(generator: torch.Generator) -> tuple[dict[bytes, int], int]:
    """A run and 1–5 more pre-tokens, with counts 1–3, and 2–8 merges to learn."""
    words = [_random_run(generator)]
    words += [
        _random_word(generator)
        for _draw in range(int(torch.randint(1, 6, (), generator=generator)))
    ]
    counts = {word: int(torch.randint(1, 4, (), generator=generator)) for word in words}
    return counts, int(torch.randint(2, 9, (), generator=generator))


def _merge_overlapping(ids, pair, new_id):
    """Slip: after a match the scan steps by 1, so b'aaa' on (97, 97) merges both overlapping
    pairs (two new ids for three bytes)."""
    merged = []
    for i in range(len(ids)):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
        elif not (i > 0 and (ids[i - 1], ids[i]) == pair):  # not the right half of a match
            merged.append(ids[i])
    return merged


def _train_with(word_counts, n_merges, choose, merge):
    """A naive trainer with its pair choice and merge step swapped for a slip's."""
    words = {tuple(word): count for word, count in word_counts.items()}
    vocab = bpe.base_vocab()
    merges = []
    for new_id in range(256, 256 + n_merges):
        counts: dict = {}
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + count
        if not counts:
            break
        pair = choose(counts, vocab)
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        words = {tuple(merge(list(word), pair, new_id)): c for word, c in words.items()}
    return merges


def _smaller_pair_wins(counts, vocab):
    top = max(counts.values())
    tied = [pair for pair, count in counts.items() if count == top]
    return min(tied, key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))


def _ties_reversed(word_counts, n_merges):
    """Slip: a tie goes to the lexicographically smaller pair."""
    return _train_with(word_counts, n_merges, _smaller_pair_wins, bpe.merge_ids)


def _overlapping(word_counts, n_merges):
    """Slip: a merge applied to overlapping pairs."""
    return _train_with(word_counts, n_merges, bpe.most_frequent_pair, _merge_overlapping)


_TRAINER_SLIPS = {
    N_(
        "ties broken the other way (among equally frequent pairs the lexicographically GREATER "
        "pair of byte strings wins: max, not min)"
    ): _ties_reversed,
    N_(
        "a merge applied to overlapping pairs (b'aaa' merged on (97, 97) is [256, 97]: after a "
        "match, jump by 2)"
    ): _overlapping,
}

_TRAINER_HINT = N_("""
    turn each pre-token into a tuple of byte ids (its count stays); ids 0-255 are the bytes
    and merge k makes id 256 + k.
    For each new id: count the adjacent pairs of every word (weighted by its count), stop when
    there are none, pick bpe.most_frequent_pair(counts, vocab), record it, add
    vocab[new_id] = vocab[a] + vocab[b], and rewrite every word with bpe.merge_ids.
""")

check_train_naive = build_exercise(
    notebook="01b_byte_level_bpe",
    solution=train_naive,
    hint=_TRAINER_HINT,
    success=N_("That is byte-level BPE training: `bpe.train_naive`."),
    reference=bpe.train_naive,
    make_inputs=_random_word_counts,
    slips=_TRAINER_SLIPS,
)

check_train_incremental = build_exercise(
    notebook="01b_byte_level_bpe",
    solution=train_incremental,
    hint=N_("""
        count the pairs once, and remember in holders[pair] which words hold each pair. After
        choosing a pair, visit only holders.pop(pair): subtract the word's old pairs (delete a
        count that reaches 0), merge the word with bpe.merge_ids, add its new pairs and record
        the word in their holders.
    """),
    success=N_("Same merges, a fraction of the work: `bpe.train_incremental`."),
    reference=bpe.train_incremental,
    make_inputs=_random_word_counts,
    slips=_TRAINER_SLIPS,
)


def _random_chunk_inputs(generator: torch.Generator) -> tuple[bytes, dict, list[int]]:
    """A pre-token, merges learned on random words, and the bytes' ids shifted (as in tiktoken,
    whose single bytes are ranked in another order): no byte keeps its own value as its id."""
    word_counts, n_merges = _random_word_counts(generator)
    shift = int(torch.randint(1, 256, (), generator=generator))
    byte_ids = [(b + shift) % 256 for b in range(256)]

    def new_id(i: int) -> int:
        return byte_ids[i] if i < 256 else i

    learned = bpe.train_incremental(word_counts, n_merges)
    merges = {(new_id(a), new_id(b)): 256 + k for k, (a, b) in enumerate(learned)}
    run = next(iter(word_counts))  # the run the merges were learned on, and more bytes
    return run + _random_word(generator), merges, byte_ids


def _permutation_forgotten(chunk, merges, byte_ids):
    """Slip: the bytes' own values used as ids."""
    return bpe.encode_chunk(chunk, merges, list(range(256)))


def _encode_overlapping(chunk, merges, byte_ids):
    """Slip: merges applied to overlapping pairs."""
    ids = [byte_ids[b] for b in chunk]
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        ids = _merge_overlapping(ids, pair, merges[pair])
    return ids


check_encode_chunk = build_exercise(
    notebook="01b_byte_level_bpe",
    solution=encode_chunk,
    hint=N_("""
        first `ids = [byte_ids[b] for b in chunk]` (tiktoken's single bytes are not ranked in
        byte order). Then, while two or more ids remain, take the adjacent pair with the smallest
        `merges.get(pair, float('inf'))`; stop if it is not in `merges`, else
        `ids = bpe.merge_ids(ids, pair, merges[pair])`.
    """),
    success=N_("That is how tiktoken encodes one pre-token: `bpe.encode_chunk`."),
    reference=bpe.encode_chunk,
    make_inputs=_random_chunk_inputs,
    slips={
        N_(
            "the byte permutation forgotten (a byte's id is byte_ids[b], not b itself)"
        ): _permutation_forgotten,
        N_("a merge applied to overlapping pairs (after a match, jump by 2)"): _encode_overlapping,
    },
)
