"""Tokenizers: tiktoken's cl100k_base and a byte-pair encoder built from scratch
(introduced in 01_tokenization).

``get_encoding`` is tiktoken's own ``get_encoding``; it reads the BPE ranks from
``$TIKTOKEN_CACHE_DIR`` when set (the course's ``data/tiktoken_cache`` when not),
and downloads them once when online.

The byte-level BPE of 01b_byte_level_bpe (trained on UTF-8 bytes; cl100k_base rebuilt from its
ranks) is the subpackage :mod:`.byte_level`.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import tiktoken

from .. import _checks as check
from ..i18n import _
from ..machine import data_dir

TIKTOKEN_ENV_VAR = "TIKTOKEN_CACHE_DIR"


class EncodingUnavailableError(RuntimeError):
    """tiktoken's BPE ranks are neither cached nor downloadable (01_tokenization): offline data."""


def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """Return the tiktoken encoding ``name`` (``cl100k_base`` is the one of seed 000).

    Offline with no cached copy, raises :class:`EncodingUnavailableError` (a ``RuntimeError``)
    naming ``TIKTOKEN_CACHE_DIR``.
    """
    if name not in tiktoken.list_encoding_names():
        raise ValueError(
            _("unknown encoding {name!r}; choose one of {encodings}").format(
                name=name, encodings=tiktoken.list_encoding_names()
            )
        )
    if not os.environ.get(TIKTOKEN_ENV_VAR):
        # Keep tiktoken's download with the course data instead of a temp folder.
        os.environ[TIKTOKEN_ENV_VAR] = str(data_dir() / "tiktoken_cache")
    cache = os.environ[TIKTOKEN_ENV_VAR]
    if os.path.exists(cache) and not os.path.isdir(cache):
        raise EncodingUnavailableError(
            _(
                "${variable} is {cache}, which is a file, not a folder; point it at the folder "
                "holding the tiktoken cache, or unset it"
            ).format(variable=TIKTOKEN_ENV_VAR, cache=cache)
        )
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # requests/urllib errors differ by version; all mean "not available"
        raise EncodingUnavailableError(
            _(
                "could not load the tiktoken encoding {name!r}: no cached copy in {cache} and the "
                "download failed ({error}). Offline, copy a tiktoken cache folder there or set "
                "{variable} to one, then run again."
            ).format(
                name=name,
                cache=os.environ[TIKTOKEN_ENV_VAR],
                error=type(exc).__name__,
                variable=TIKTOKEN_ENV_VAR,
            )
        ) from exc


# --------------------------------------------------------------------------- BPE from scratch
#
# The algorithm of seed 002 (Sennrich et al., 2016): split the text on whitespace, spell each
# word as its characters plus an end-of-word symbol, then repeatedly merge the most frequent
# adjacent pair of symbols. It works on characters, not bytes, so a character never seen in
# training stays a token of its own (tiktoken's byte-level BPE has no such gap).

END_OF_WORD = "</w>"

Word = tuple[str, ...]
Pair = tuple[str, str]


def split_words(text: str) -> list[str]:
    """The maximal runs of whitespace and of non-whitespace in ``text``, in order.

    ``"".join(split_words(text)) == text``; BPE learns from the non-whitespace runs (words).
    """
    return ["".join(group) for _is_space, group in itertools.groupby(text, key=str.isspace)]


def spell(word: str) -> Word:
    """A word as BPE starts it: its characters followed by ``</w>`` ("tidy" -> t i d y </w>)."""
    if not word:
        raise ValueError(_("word must be a non-empty string"))
    return (*word, END_OF_WORD)


def word_counts(text: str) -> Counter[Word]:
    """How often each spelled word occurs, in order of first appearance (seed 002, step 1)."""
    return Counter(spell(w) for w in text.split())


def symbol_counts(words: Mapping[Word, int]) -> Counter[str]:
    """How often each symbol occurs, weighting every word by its count (seed 002, step 2)."""
    counts: Counter[str] = Counter()
    for word, freq in words.items():
        for symbol in word:
            counts[symbol] += freq
    return counts


def pair_counts(words: Mapping[Word, int]) -> Counter[Pair]:
    """How often each adjacent pair of symbols occurs, in order of first appearance (step 3)."""
    counts: Counter[Pair] = Counter()
    for word, freq in words.items():
        for pair in zip(word, word[1:]):
            counts[pair] += freq
    return counts


def merge_pair(word: Word, pair: Pair) -> Word:
    """Replace every occurrence of ``pair`` in ``word`` by one symbol, scanning left to right."""
    merged: list[str] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            merged.append(word[i] + word[i + 1])
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return tuple(merged)


@dataclass
class BPE:
    """A byte-pair encoder trained by :func:`train_bpe` (introduced in 01_tokenization).

    ``merges`` is the ordered list of merged pairs, ``merge_counts`` how often each pair
    occurred when it was merged, ``alphabet`` the characters seen in training (first-seen order).
    ``tokenize`` keeps every whitespace run as a token of its own, so ``detokenize`` gives the
    exact text back, whatever its characters.
    """

    merges: list[Pair]
    merge_counts: list[int] = field(default_factory=list)
    alphabet: list[str] = field(default_factory=list)

    @property
    def vocab(self) -> list[str]:
        """Every symbol the encoder knows: ``</w>``, the alphabet, then one per merge."""
        return [END_OF_WORD, *self.alphabet, *(a + b for a, b in self.merges)]

    @property
    def token_to_id(self) -> dict[str, int]:
        """Symbol -> id, ids in :attr:`vocab` order (a later merge wins a repeated string)."""
        return {symbol: i for i, symbol in enumerate(self.vocab)}

    def segment(self, word: str) -> Word:
        """The symbols one word (no whitespace) ends up as, last one carrying ``</w>``."""
        ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        return self._segment(spell(word), ranks)

    @staticmethod
    def _segment(symbols: Word, ranks: Mapping[Pair, int]) -> Word:
        # Applying the lowest-ranked pair present, again and again, equals replaying every merge
        # in training order: a merge can only create pairs involving its own, newer symbol.
        while len(symbols) > 1:
            best = min(zip(symbols, symbols[1:]), key=lambda p: ranks.get(p, len(ranks)))
            if best not in ranks:
                break
            symbols = merge_pair(symbols, best)
        return symbols

    def tokenize(self, text: str) -> list[str]:
        """Split ``text`` into BPE tokens; whitespace runs stay tokens of their own.

        ``"a tidy"`` -> ``["a</w>", " ", "tidy</w>"]`` once ``tidy</w>`` is a merged symbol;
        a word whose last character never merged with ``</w>`` ends with the token ``</w>``.
        """
        check.instance("text", text, str)
        ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        cache: dict[str, Word] = {}
        tokens: list[str] = []
        for run in split_words(text):
            if run.isspace():
                tokens.append(run)
                continue
            if run not in cache:
                cache[run] = self._segment(spell(run), ranks)
            tokens.extend(cache[run])
        return tokens

    def detokenize(self, tokens: Sequence[str]) -> str:
        """The text back from :meth:`tokenize`'s tokens (exact, whitespace included).

        The last token of every word ends with ``</w>`` (it may be ``</w>`` alone); exactly that
        one marker is dropped, so even a text containing the characters "</w>" comes back whole.
        """
        pieces: list[str] = []
        for i, token in enumerate(tokens):
            word_ends = i + 1 == len(tokens) or tokens[i + 1].isspace()
            if not token.isspace() and word_ends:
                if not token.endswith(END_OF_WORD):
                    raise ValueError(
                        _("token {i} ({token!r}) ends a word but lacks {marker!r}").format(
                            i=i, token=token, marker=END_OF_WORD
                        )
                    )
                token = token[: -len(END_OF_WORD)]
            pieces.append(token)
        return "".join(pieces)


def _count_pairs(
    word: list[str], index: int, freq: int, pairs: Counter[Pair], where: dict[Pair, set[int]]
) -> None:
    """Add the adjacent pairs of word type ``index`` (``freq`` times) to ``pairs`` and ``where``;
    a negative ``freq`` takes them out again, before the word changes."""
    for pair in zip(word, word[1:]):
        pairs[pair] += freq
        if freq > 0:
            where[pair].add(index)
            continue
        if pairs[pair] == 0:
            del pairs[pair]
        where[pair].discard(index)


def train_bpe(text: str, num_merges: int) -> BPE:
    """Learn ``num_merges`` BPE merges from ``text`` (the algorithm of seed 002, in 01_tokenization).

    Ties between equally frequent pairs go to the pair seen first in the text. Training stops
    early when no adjacent pair is left (every word is one symbol). Pair counts are updated
    incrementally, touching only the words that contain the merged pair, so a few thousand
    merges on the 460k-character corpus take seconds.
    """
    check.instance("text", text, str)
    check.integer("num_merges", num_merges, minimum=0)
    counted = word_counts(text)
    words: list[list[str]] = [list(w) for w in counted]  # word types, in first-seen order
    freqs: list[int] = list(counted.values())
    alphabet = list(dict.fromkeys(ch for w in counted for ch in w[:-1]))
    pairs: Counter[Pair] = Counter()  # each adjacent pair's count in the text
    where: dict[Pair, set[int]] = defaultdict(set)  # the word types that hold it
    for index, word in enumerate(words):
        _count_pairs(word, index, freqs[index], pairs, where)

    def first_seen(pair: Pair) -> tuple[int, int]:
        # Word types are in first-seen order, so the earliest one holding the pair holds its
        # first occurrence in the text.
        index = min(where[pair])
        word = words[index]
        return index, next(i for i in range(len(word) - 1) if (word[i], word[i + 1]) == pair)

    merges: list[Pair] = []
    merge_counts: list[int] = []
    while len(merges) < num_merges and pairs:
        top = max(pairs.values())
        tied = [p for p, c in pairs.items() if c == top]
        best = tied[0] if len(tied) == 1 else min(tied, key=first_seen)
        merges.append(best)
        merge_counts.append(top)
        for index in list(where[best]):  # only the words that hold the merged pair change
            _count_pairs(words[index], index, -freqs[index], pairs, where)
            words[index] = list(merge_pair(tuple(words[index]), best))
            _count_pairs(words[index], index, freqs[index], pairs, where)
        where.pop(best, None)
    return BPE(merges=merges, merge_counts=merge_counts, alphabet=alphabet)
