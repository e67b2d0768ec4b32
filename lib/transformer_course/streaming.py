"""Streaming generated text without ever printing half a character (01_tokenization, 12_generation).

A byte-level BPE token (cl100k_base) is a sequence of *bytes*, not of characters. A Chinese
character takes 3 bytes in UTF-8 and an emoji 4; the tokenizer often splits them across
tokens, so decoding one token at a time would print ``�`` for the incomplete pieces.
:class:`TokenStreamer` joins each token's bytes (``Encoding.decode_single_token_bytes``) in an
incremental UTF-8 decoder (:func:`codecs.getincrementaldecoder`), which holds back the bytes
of a character until it is complete and emits only whole characters.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator

from . import _checks as check
from .i18n import _

__all__ = ["TokenStreamer", "stream_text"]


class TokenStreamer:
    """Token ids in, complete text out (introduced in 01_tokenization, used in 12_generation).

    ``token_bytes`` maps one token id to its bytes, e.g. ``encoding.decode_single_token_bytes``
    of a tiktoken encoding. ``push(id)`` returns the text that became complete with this token
    (possibly ``""`` while a character's bytes are still arriving); ``flush()`` returns what is
    left at the end, with ``errors`` ("replace": ``�`` for bytes that never completed a
    character; "strict": raise UnicodeDecodeError). The concatenation of every ``push`` and the
    final ``flush`` equals decoding all the ids at once.
    """

    def __init__(self, token_bytes: Callable[[int], bytes], errors: str = "replace") -> None:
        if not callable(token_bytes):
            raise TypeError(
                _(
                    "token_bytes must be a function from a token id to its bytes, e.g. "
                    "encoding.decode_single_token_bytes; got {kind}"
                ).format(kind=type(token_bytes).__name__)
            )
        check.choice("errors", errors, ("replace", "strict"))
        self._token_bytes = token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)

    @property
    def pending(self) -> bytes:
        """The bytes held back: the start of a character whose remaining bytes have not arrived."""
        return self._decoder.getstate()[0]

    def push(self, token_id: int) -> str:
        """Feed one token; return the characters it completed ("" if it only started one)."""
        piece = self._token_bytes(int(token_id))
        if not isinstance(piece, (bytes, bytearray)):
            raise TypeError(
                _("token_bytes must return bytes, got {kind}").format(kind=type(piece).__name__)
            )
        return self._decoder.decode(bytes(piece), final=False)

    def flush(self) -> str:
        """End of the stream: return the rest ("" when every character was complete) and reset."""
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text


def stream_text(
    token_ids: Iterable[int], token_bytes: Callable[[int], bytes], errors: str = "replace"
) -> Iterator[str]:
    """Yield the text of ``token_ids`` piece by piece as characters complete, then the final
    flush (01_tokenization); empty pieces are skipped. ``"".join`` of it equals the full decode."""
    streamer = TokenStreamer(token_bytes, errors=errors)
    for token_id in token_ids:
        text = streamer.push(token_id)
        if text:
            yield text
    rest = streamer.flush()
    if rest:
        yield rest
