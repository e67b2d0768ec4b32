"""Stanford CS336 assignment 1's tokenizer adapters, answered by the course's byte-level BPE
(``transformer_course.tokenizer.byte_level``, introduced in 01b_byte_level_bpe).

CS336's tests (MIT licence, github.com/stanford-cs336/assignment1-basics) are not copied here:
``run_cs336.py`` runs them from a checkout of that repository with this module as their
``adapters``. CS336 uses GPT-2's pre-tokenizer and treats every special token it is given as
special, so the adapter passes ``allowed_special="all"``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator

import regex

from transformer_course.tokenizer import byte_level as bpe

#: GPT-2's pre-tokenizer (tiktoken's ``gpt2`` / ``r50k_base`` pattern).
GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)


class VocabTokenizer:
    """A :class:`bpe.Tokenizer` behind any vocabulary's ids: the merges are replayed in order
    (merge ``k`` gets the course's id ``256 + k``, its rank) and the ids mapped to ``vocab``'s."""

    def __init__(self, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials):
        course_id = {bytes([b]): b for b in range(256)}
        pairs = []
        for left, right in merges:
            pairs.append((course_id[left], course_id[right]))
            course_id.setdefault(left + right, 255 + len(pairs))
        specials = sorted(specials or [], key=len, reverse=True)
        self.inner = bpe.Tokenizer.from_merges(pairs, specials, GPT2_PATTERN)
        vocab_id = {token: i for i, token in vocab.items()}
        self.to_vocab = {i: vocab_id[token] for i, token in self.inner.vocab.items()}
        self.vocab = vocab

    def encode(self, text: str) -> list[int]:
        return [self.to_vocab[i] for i in self.inner.encode(text, allowed_special="all")]

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        for i in self.inner.encode_iterable(iterable, allowed_special="all"):
            yield self.to_vocab[i]

    def decode(self, ids: list[int]) -> str:
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")


def get_tokenizer(vocab, merges, special_tokens=None) -> VocabTokenizer:
    return VocabTokenizer(vocab, merges, special_tokens)


def run_train_bpe(input_path: str | os.PathLike, vocab_size: int, special_tokens: list[str], **_):
    with open(input_path, encoding="utf-8") as f:
        text = f.read()
    counts: Counter[bytes] = Counter()
    splitter = "|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
    for part in regex.split(splitter, text) if special_tokens else [text]:
        counts.update(bpe.pretoken_counts(part, GPT2_PATTERN))  # no merge across a special token
    merges = bpe.train_incremental(counts, vocab_size - 256 - len(special_tokens))
    vocab = bpe.vocab_from_merges(merges)
    for special in special_tokens:
        vocab[len(vocab)] = special.encode("utf-8")
    return vocab, [(vocab[a], vocab[b]) for a, b in merges]
