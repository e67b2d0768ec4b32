"""A byte-level BPE tokenizer: encode, decode, stream; cl100k_base rebuilt from tiktoken's ranks
(introduced in 01b_byte_level_bpe).

One class serves both the learner's trained merges and GPT-4's: a :class:`Tokenizer` holds

- ``merges``: ``{(left id, right id): merged id}``; the merge with the smallest merged id
  (its *rank*) is applied first, as it was learned first;
- ``byte_ids``: the id of each of the 256 bytes. A trainer of 01b gives byte ``b`` the id ``b``;
  tiktoken's ranks give the single bytes another order (printable bytes first), a permutation that
  :func:`from_ranks` reads and :func:`encode_chunk` must apply before any merge;
- ``special_tokens``: whole strings with ids of their own (``"<|endoftext|>"``), matched before the
  pre-tokenizer and, as in tiktoken, refused unless the caller allows them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import regex

from ...i18n import _
from .training import CL100K_PATTERN, Pair, merge_ids, vocab_from_merges


def encode_chunk(chunk: bytes, merges: Mapping[Pair, int], byte_ids: Sequence[int]) -> list[int]:
    """The ids of one pre-token: its bytes as ids, then the lowest-ranked merge, again and again."""
    ids = [byte_ids[b] for b in chunk]  # the byte permutation first
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break  # no adjacent pair was ever merged: done
        ids = merge_ids(ids, pair, merges[pair])
    return ids


def _split_by_ranks(token: bytes, ranks: Mapping[bytes, int], below: int) -> list[bytes]:
    """``token`` encoded by tiktoken's rule with only the tokens ranked below ``below``."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        found = [(ranks.get(a + b, below), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        rank, i = min(found)
        if rank >= below:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def recover_merges(ranks: Mapping[bytes, int]) -> dict[Pair, int]:
    """The merges behind tiktoken's ``{token bytes: rank}``: each token of two or more bytes is
    the merge of the two parts its own bytes reach with only the lower-ranked tokens."""
    merges: dict[Pair, int] = {}
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        parts = _split_by_ranks(token, ranks, rank)
        if len(parts) != 2:
            raise ValueError(
                _("token {token!r} (rank {rank}) is not a merge of two lower-ranked tokens").format(
                    token=token, rank=rank
                )
            )
        merges[ranks[parts[0]], ranks[parts[1]]] = rank
    return merges


@dataclass
class Tokenizer:
    """Byte-level BPE: ``encode(text) -> ids``, ``decode(ids) -> text``, ``encode_iterable``.

    Build one from trained merges with :meth:`from_merges` or from tiktoken with
    :func:`cl100k_base`. Introduced in 01b_byte_level_bpe.
    """

    merges: dict[Pair, int]
    byte_ids: tuple[int, ...] = tuple(range(256))
    special_tokens: dict[str, int] = field(default_factory=dict)
    pattern: str = CL100K_PATTERN

    def __post_init__(self) -> None:
        if sorted(self.byte_ids) != list(range(256)):
            raise ValueError(_("byte_ids must give the 256 bytes the ids 0-255, each once"))
        self.vocab: dict[int, bytes] = {i: bytes([b]) for b, i in enumerate(self.byte_ids)}
        for (left, right), merged in sorted(self.merges.items(), key=lambda item: item[1]):
            self.vocab[merged] = self.vocab[left] + self.vocab[right]
        for text, i in self.special_tokens.items():
            self.vocab[i] = text.encode("utf-8")
        self._compiled = regex.compile(self.pattern)
        self._cache: dict[bytes, tuple[int, ...]] = {}

    @classmethod
    def from_merges(
        cls,
        merges: Sequence[Pair],
        special_tokens: Sequence[str] = (),
        pattern: str = CL100K_PATTERN,
    ) -> Tokenizer:
        """The tokenizer of a trainer's merge list (merge ``k`` makes id ``256 + k``); special
        tokens get the ids after the last merge."""
        first = 256 + len(merges)
        specials = {text: first + k for k, text in enumerate(special_tokens)}
        return cls(
            {pair: 256 + k for k, pair in enumerate(merges)},
            special_tokens=specials,
            pattern=pattern,
        )

    @property
    def vocab_size(self) -> int:
        """How many ids the tokenizer uses (the largest id + 1)."""
        return max(self.vocab) + 1

    def encode_ordinary(self, text: str) -> list[int]:
        """``text``'s ids, special-token strings treated as ordinary text."""
        ids: list[int] = []
        for piece in self._compiled.findall(text):
            chunk = piece.encode("utf-8")
            if chunk not in self._cache:  # a book repeats its words: encode each one once
                self._cache[chunk] = tuple(encode_chunk(chunk, self.merges, self.byte_ids))
            ids.extend(self._cache[chunk])
        return ids

    def encode(self, text: str, allowed_special: Iterable[str] | str = ()) -> list[int]:
        """``text``'s ids. As tiktoken's ``encode``: a special token's string in ``text`` is an
        error unless ``allowed_special`` names it (or is ``"all"``); then it is one id."""
        allowed = self._allowed(allowed_special)
        refused = [s for s in self.special_tokens if s not in allowed and s in text]
        if refused:
            raise ValueError(
                _(
                    "text contains the special token {special!r}: pass allowed_special="
                    '[{special!r}] (or "all") to encode it as one id, or remove it'
                ).format(special=refused[0])
            )
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        splitter = (
            "(" + "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True)) + ")"
        )
        for k, part in enumerate(regex.split(splitter, text)):
            ids.extend([self.special_tokens[part]] if k % 2 else self.encode_ordinary(part))
        return ids

    def _allowed(self, allowed_special: Iterable[str] | str) -> set[str]:
        if allowed_special == "all":
            return set(self.special_tokens)
        allowed = {allowed_special} if isinstance(allowed_special, str) else set(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise ValueError(
                _("not special tokens of this tokenizer: {names}").format(names=sorted(unknown))
            )
        return allowed

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined (a token may hold part of a character)."""
        try:
            return b"".join(self.vocab[i] for i in ids)
        except KeyError as error:
            raise ValueError(
                _("id {id} is not in the vocabulary").format(id=error.args[0])
            ) from None

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 become U+FFFD, as in tiktoken."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def encode_iterable(
        self, pieces: Iterable[str], allowed_special: Iterable[str] | str = ()
    ) -> Iterator[int]:
        """Stream the ids of ``"".join(pieces)`` (a file's lines, say) without holding the text:
        only the last two pre-tokens stay buffered, since the next piece may still extend them."""
        buffer = ""
        for piece in pieces:
            buffer += piece
            starts = [m.start() for m in self._compiled.finditer(buffer)]
            if len(starts) < 3:
                continue
            cut = self._safe_cut(buffer, starts[-2])
            yield from self.encode(buffer[:cut], allowed_special)
            buffer = buffer[cut:]
        yield from self.encode(buffer, allowed_special)

    def _safe_cut(self, buffer: str, cut: int) -> int:
        """Move ``cut`` back so that no special token (complete or still arriving) is cut."""
        for special in self.special_tokens:
            for start in range(max(0, cut - len(special) + 1), cut):
                if special.startswith(buffer[start : start + len(special)]):
                    return self._safe_cut(buffer, start)
        return cut


def from_ranks(
    ranks: Mapping[bytes, int], special_tokens: Mapping[str, int], pattern: str
) -> Tokenizer:
    """A :class:`Tokenizer` from tiktoken's ranks: the merges recovered, the bytes' ids read."""
    byte_ids = tuple(ranks[bytes([b])] for b in range(256))
    return Tokenizer(recover_merges(ranks), byte_ids, dict(special_tokens), pattern)


@functools.cache
def cl100k_base() -> Tokenizer:
    """GPT-4's tokenizer rebuilt from tiktoken's cached cl100k_base ranks (a few seconds once)."""
    from .. import get_encoding

    encoding = get_encoding("cl100k_base")
    # tiktoken keeps the ranks, pattern and specials in these attributes (minbpe reads them too).
    return from_ranks(encoding._mergeable_ranks, encoding._special_tokens, encoding._pat_str)


def trained_tokenizer(merges: Sequence[Pair]) -> Tokenizer:
    """Shorthand: :meth:`Tokenizer.from_merges` with ``<|endoftext|>`` as its special token."""
    return Tokenizer.from_merges(merges, special_tokens=["<|endoftext|>"])


__all__ = [
    "Tokenizer",
    "cl100k_base",
    "encode_chunk",
    "from_ranks",
    "recover_merges",
    "trained_tokenizer",
    "vocab_from_merges",
]
