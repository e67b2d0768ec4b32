"""The toy's data (16_induction_heads): a random filler, then a random segment repeated.

Row b of :func:`repeated_tokens` is ``filler[b]`` random tokens, then a random segment of
``period[b]`` tokens repeated until the context is full. From position ``filler + period`` on,
every token has appeared exactly one period earlier, so the next token can be read off the
context; nothing but an earlier copy predicts it. The filler moves the repeat to a different
position in every row, so the model cannot learn *where* the copy is, only *that* it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import _checks as check
from ..i18n import _

__all__ = ["RepeatBatch", "repeated_tokens"]


@dataclass(frozen=True)
class RepeatBatch:
    """A batch of two-copy rows (introduced in 16_induction_heads).

    ``tokens`` [B, T] token ids; ``filler`` and ``period`` [B] each row's filler length and
    segment length; ``first`` [B, T] True at positions t whose NEXT token (t + 1) lies in the
    segment's first copy; ``repeat`` [B, T] True at positions t of a later copy, whose token
    already appeared one period earlier (t ≥ filler + period, t < T − 1), so the next token is
    predictable from the earlier copy: the query positions of the induction score and of the
    repeat loss.
    """

    tokens: torch.Tensor
    filler: torch.Tensor
    period: torch.Tensor
    first: torch.Tensor
    repeat: torch.Tensor


def _span(name: str, value: object, low: int, high: int) -> tuple[int, int]:
    """A (min, max) pair of ints with low ≤ min ≤ max ≤ high."""
    if not (isinstance(value, tuple) and len(value) == 2):
        raise TypeError(
            _("{name} must be a (min, max) pair of ints, got {value!r}").format(
                name=name, value=value
            )
        )
    lo = check.integer(f"{name}[0]", value[0], low, high)
    hi = check.integer(f"{name}[1]", value[1], lo, high)
    return lo, hi


def repeated_tokens(
    batch: int,
    config,
    generator: torch.Generator,
    filler: tuple[int, int] = (0, 31),
    period: tuple[int, int] = (8, 24),
    copies: int | None = None,
) -> RepeatBatch:
    """``batch`` rows of T = ``config.context_length`` tokens: a random filler whose length is
    drawn from ``filler`` (min, max, both included), then a random segment whose length is drawn
    from ``period``, repeated until T (introduced in 16_induction_heads).

    ``filler=(0, 0)`` gives the shortcut data: the segment repeats from position 0 in every row.
    ``copies=2`` makes a two-copy probe: random tokens follow the second copy, and ``repeat``
    marks the second copy alone, where exactly one earlier occurrence exists.
    All draws come from ``generator``, so a seed fixes the batch.
    """
    batch = check.integer("batch", batch)
    copies = None if copies is None else check.integer("copies", copies, 2)
    T, V = config.context_length, config.vocab_size
    lo, hi = _span("period", period, 1, T - 1)
    f_lo, f_hi = _span("filler", filler, 0, T - 1 - hi)
    fill = torch.randint(f_lo, f_hi + 1, (batch,), generator=generator)  # (B,)
    per = torch.randint(lo, hi + 1, (batch,), generator=generator)  # (B,)
    noise = torch.randint(0, V, (batch, T), generator=generator)  # (B, T) filler tokens
    segment = torch.randint(0, V, (batch, T), generator=generator)  # (B, T) first `per` used
    t = torch.arange(T)  # (T,)
    offset = (t[None, :] - fill[:, None]).clamp(min=0) % per[:, None]  # (B, T) place in segment
    end = torch.full_like(fill, T) if copies is None else fill + copies * per  # (B,) copies stop
    in_segment = (t[None, :] >= fill[:, None]) & (t[None, :] < end[:, None])  # (B, T)
    tokens = torch.where(in_segment, segment.gather(1, offset), noise)  # (B, T)
    next_t = t[None, :] + 1  # (1, T) the position each one predicts
    first = (next_t >= fill[:, None]) & (next_t < (fill + per)[:, None])  # (B, T)
    # t in a later copy, and its next token too (the last position predicts nothing)
    repeat = (t[None, :] >= (fill + per)[:, None]) & (next_t < end[:, None]) & (next_t < T)
    return RepeatBatch(tokens, fill, per, first, repeat)
