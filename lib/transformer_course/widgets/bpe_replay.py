"""The merge-by-merge replay of 01b_byte_level_bpe: a slider over merge number k shows the pair
counts just before merge k (the winner on top), the token merge k forms, and a sentence cut into
tokens after k merges.

:func:`replay_step` and :func:`replay_html` are plain functions (tested without a browser);
:func:`replay_widget` is the thin ipywidgets wrapper.
"""

from __future__ import annotations

import heapq
import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import _checks
from ..i18n import _
from ..tokenizer.byte_level.tokenizer import encode_chunk
from ..tokenizer.byte_level.training import Pair, pretokenize, vocab_from_merges
from .tokens import PALETTE, TokenPiece, _show, tiktoken_pieces

__all__ = ["ReplayStep", "replay_html", "replay_step", "replay_widget"]

DEFAULT_SENTENCE = " Building rapport with customers takes patience. 你好"


@dataclass(frozen=True)
class ReplayStep:
    """What the replay shows at merge ``k`` (1 … number of merges).

    ``top`` holds the most frequent pairs just before merge ``k`` as ``(left, right, count)``
    bytes, in the order BPE ranks them (count, then the lexicographically greater pair), so
    ``top[0]`` is merge ``k``; ``formed`` is the token merge ``k`` makes (id ``255 + k``);
    ``pieces`` is the sentence cut by the first ``k`` merges.
    """

    k: int
    top: list[tuple[bytes, bytes, int]]
    formed: bytes
    token_id: int
    pieces: list[TokenPiece]


def _pair_counts(word_counts: Mapping[bytes, int], ranks: Mapping[Pair, int]) -> Counter[Pair]:
    """The pair counts of the pre-tokens cut by the merges in ``ranks``."""
    counts: Counter[Pair] = Counter()
    byte_ids = range(256)
    for word, count in word_counts.items():
        ids = encode_chunk(word, ranks, byte_ids)
        for pair in zip(ids, ids[1:]):
            counts[pair] += count
    return counts


class _CutBy:
    """Just enough of a tiktoken encoding for :func:`~.tokens.tiktoken_pieces`: the ids of a text
    under some merges, and each id's bytes."""

    def __init__(self, ranks: Mapping[Pair, int], vocab: Mapping[int, bytes]) -> None:
        self.ranks, self.vocab = ranks, vocab

    def encode(self, text: str, disallowed_special=()) -> list[int]:
        return [
            token_id
            for chunk in pretokenize(text)
            for token_id in encode_chunk(chunk.encode("utf-8"), self.ranks, range(256))
        ]

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        return [self.vocab[token_id] for token_id in ids]


def replay_step(
    word_counts: Mapping[bytes, int],
    merges: Sequence[Pair],
    k: int,
    sentence: str = DEFAULT_SENTENCE,
    n_top: int = 5,
) -> ReplayStep:
    """The replay at merge ``k`` of ``merges`` (a trainer's output on ``word_counts``)."""
    _checks.integer("k", k, 1, len(merges))
    _checks.integer("n_top", n_top)
    vocab = vocab_from_merges(merges)
    before = {pair: 256 + i for i, pair in enumerate(merges[: k - 1])}
    counts = _pair_counts(word_counts, before)
    ranked = heapq.nlargest(
        n_top, counts.items(), key=lambda item: (item[1], vocab[item[0][0]], vocab[item[0][1]])
    )
    top = [(vocab[a], vocab[b], count) for (a, b), count in ranked]
    after = {**before, merges[k - 1]: 255 + k}
    pieces = tiktoken_pieces(sentence, _CutBy(after, vocab))
    return ReplayStep(k, top, vocab[255 + k], 255 + k, pieces)


def _pieces_html(pieces: Sequence[TokenPiece]) -> str:
    spans = []
    for index, piece in enumerate(pieces):
        body = _show(piece.text) if piece.text else "<span style='color:#888'>◌</span>"
        spans.append(
            f'<span title="{html.escape(piece.detail, quote=True)}" '
            f"style='background:{PALETTE[index % len(PALETTE)]};border-radius:3px;margin:1px;"
            f"padding:0 2px;display:inline-block;text-align:center'>{body}"
            f"<br><sub style='color:#555'>{piece.token_id}</sub></span>"
        )
    return "".join(spans)


def replay_html(step: ReplayStep) -> str:
    """One step as HTML: the top pairs with their counts, the new token, the cut sentence."""
    head = _("merge {k}: {left} + {right} → {formed} (id {token_id})").format(
        k=step.k,
        left=html.escape(repr(step.top[0][0])),
        right=html.escape(repr(step.top[0][1])),
        formed=html.escape(repr(step.formed)),
        token_id=step.token_id,
    )
    rows = "".join(
        f"<tr><td>{html.escape(repr(a))}</td><td>{html.escape(repr(b))}</td>"
        f"<td style='text-align:right'>{count:,}</td></tr>"
        for a, b, count in step.top
    )
    left, right, count = _("left"), _("right"), _("count")
    table = f"<table><tr><th>{left}</th><th>{right}</th><th>{count}</th></tr>{rows}</table>"
    cut = _("the sentence after {k} merges: {n} tokens").format(k=step.k, n=len(step.pieces))
    before = _("most frequent pairs before it:")
    return (
        f"<div style='line-height:2.2'><b>{head}</b><br>{before}"
        f"{table}{cut}<br>{_pieces_html(step.pieces)}</div>"
    )


def replay_widget(
    word_counts: Mapping[bytes, int],
    merges: Sequence[Pair],
    sentence: str = DEFAULT_SENTENCE,
    n_top: int = 5,
):
    """A slider over merge number k showing :func:`replay_html` of :func:`replay_step`."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(
        value=1, min=1, max=len(merges), step=1, description=_("merge k"), continuous_update=False
    )
    view = widgets.HTML(value=replay_html(replay_step(word_counts, merges, 1, sentence, n_top)))

    def redraw(_change=None) -> None:
        view.value = replay_html(replay_step(word_counts, merges, slider.value, sentence, n_top))

    slider.observe(redraw, names="value")
    return widgets.VBox([slider, view])
