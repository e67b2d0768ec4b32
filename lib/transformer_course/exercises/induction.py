"""Exercises of 16_induction_heads: the three measurements (build exercises on fixed attention
tensors) and the shortcut question. The gates on trained runs are tools of the library
(:mod:`transformer_course.induction.gates`), not exercises."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import induction
from ..i18n import N_, _
from . import Feedback, Option, check_choice, checker
from .build import build_exercise, hard_case
from .solutions.induction import (
    in_context_score,
    induction_score,
    previous_token_score,
)


def _int(generator: torch.Generator, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=generator))


def _causal_weights(generator: torch.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Random attention weights [..., T, T]: each row a softmax over the keys up to the query."""
    T = shape[-1]
    scores = torch.randn(shape, generator=generator) * 2.0  # (..., T, T)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T) True above the diagonal
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)  # (..., T, T)


def _lead(generator: torch.Generator) -> tuple[int, ...]:
    """The leading shape: (B, H) in even trials, (L, B, H) in odd ones (the hard case: a score
    keeps every dimension before B)."""
    B, H = _int(generator, 2, 4), _int(generator, 2, 5)
    return (B, H) if hard_case(generator, 2) == 0 else (_int(generator, 2, 3), B, H)


def _weights_only(generator: torch.Generator) -> tuple:
    T = _int(generator, 12, 40)
    return (_causal_weights(generator, (*_lead(generator), T, T)),)


def _batch_with_filler(generator: torch.Generator, batch: int):
    """A :class:`~transformer_course.induction.RepeatBatch` whose every row has a filler of at
    least 3 tokens and rows of different periods: the hard case of every trial."""
    T = _int(generator, 40, 64)
    config = induction.ToyConfig(vocab_size=_int(generator, 16, 64), context_length=T)
    return induction.repeated_tokens(batch, config, generator, filler=(3, 14), period=(4, 12))


def _weights_and_batch(generator: torch.Generator) -> tuple:
    lead = _lead(generator)
    batch = _batch_with_filler(generator, lead[-2])
    T = batch.tokens.shape[1]
    return _causal_weights(generator, (*lead, T, T)), batch


def _diagonal_score(weights: torch.Tensor, offset: int) -> torch.Tensor:
    return weights.diagonal(offset=offset, dim1=-2, dim2=-1).mean(dim=(-1, -3))  # (..., H)


def _offset_zero(weights):
    return _diagonal_score(weights, 0)


def _future_diagonal(weights):
    return _diagonal_score(weights, 1)


def _over_all_queries(weights):
    T = weights.shape[-1]
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1).mean(dim=-2) / T  # (..., H)


check_previous_token_score = build_exercise(
    notebook="16_induction_heads",
    solution=previous_token_score,
    hint=N_("""
        the weight from query t to key t − 1 sits one below the diagonal:
        weights.diagonal(offset=−1, dim1=−2, dim2=−1) is [..., B, H, T − 1]. Average it over the
        last dimension (t = 1 … T − 1) and over the batch (dimension −3 after the diagonal).
    """),
    success=N_("""
        A head that always looks one token back scores 1; a head spread evenly scores about 1/t.
    """),
    reference=induction.previous_token_score,
    make_inputs=_weights_only,
    atol=1e-5,
    slips={
        N_("the main diagonal (offset 0: each query's weight on itself)"): _offset_zero,
        N_(
            "the diagonal above the main one (key t + 1, the future: always 0 under the causal mask)"
        ): (_future_diagonal),
        N_("a mean over all T queries (query 0 has no key t − 1: average over T − 1)"): (
            _over_all_queries
        ),
    },
)


def _score_at(weights, batch, shift: int, repeat: torch.Tensor | None = None):
    """Pooled mean of w[t, t − period + shift] over ``repeat`` (default ``batch.repeat``)."""
    T = weights.shape[-1]
    t = torch.arange(T)  # (T,)
    key = (t[None, :] - batch.period[:, None] + shift).clamp(0, T - 1)  # (B, T)
    picked = weights.gather(-1, key[:, None, :, None].expand(*weights.shape[:-1], 1))[..., 0]
    mask = (batch.repeat if repeat is None else repeat)[:, None, :].float()  # (B, 1, T)
    return (picked * mask).sum(dim=(-1, -3)) / mask.sum()  # (..., H)


def _previous_occurrence(weights, batch):
    return _score_at(weights, batch, 0)


def _own_position(weights, batch):
    return _diagonal_score_masked(weights, batch.repeat)


def _diagonal_score_masked(weights, repeat):
    mask = repeat[:, None, :].float()  # (B, 1, T)
    own = weights.diagonal(dim1=-2, dim2=-1)  # (..., B, H, T) w[t, t]
    return (own * mask).sum(dim=(-1, -3)) / mask.sum()  # (..., H)


def _repeat_from_period(weights, batch):
    """The probe without filler: the repeat taken to start at position `period` in every row."""
    T = weights.shape[-1]
    t = torch.arange(T)  # (T,)
    repeat = (t[None, :] >= batch.period[:, None]) & (t[None, :] < T - 1)  # (B, T)
    return _score_at(weights, batch, 1, repeat)


def _mean_per_row(weights, batch):
    T = weights.shape[-1]
    t = torch.arange(T)  # (T,)
    key = (t[None, :] - batch.period[:, None] + 1).clamp(0, T - 1)  # (B, T)
    picked = weights.gather(-1, key[:, None, :, None].expand(*weights.shape[:-1], 1))[..., 0]
    mask = batch.repeat[:, None, :].float()  # (B, 1, T)
    return ((picked * mask).sum(dim=-1) / mask.sum(dim=-1)).mean(dim=-2)  # (..., H)


check_induction_score = build_exercise(
    notebook="16_induction_heads",
    solution=induction_score,
    hint=N_("""
        for query t the token that followed t's previous occurrence sits at key
        t − period + 1, one row's period (batch.period[b]) back, plus one. Pick
        w[..., b, h, t, t − period[b] + 1] with torch.gather along the last dimension, keep the
        (b, t) where batch.repeat is True, and average over all those pairs together.
    """),
    success=N_("""
        Rows with different fillers and periods, and a leading layer dimension, all gave the
        library's scores.
    """),
    reference=induction.induction_score,
    make_inputs=_weights_and_batch,
    atol=1e-5,
    slips={
        N_("key t − period: the previous occurrence itself, not the token after it"): (
            _previous_occurrence
        ),
        N_("the main diagonal (offset 0: each query's weight on itself)"): _own_position,
        N_(
            "a probe without filler: the repeat taken to start at position period, not at filler + period"
        ): (_repeat_from_period),
        N_("a mean per row, then over the rows (average over all (row, t) pairs together)"): (
            _mean_per_row
        ),
    },
)


def _logits_and_batch(generator: torch.Generator) -> tuple:
    """Random logits [B, T, V] that know the next token on part of the repeat, so the two copies'
    losses differ, and a batch whose every row has a filler."""
    batch = _batch_with_filler(generator, _int(generator, 2, 5))
    B, T = batch.tokens.shape
    V = int(batch.tokens.max()) + 1 + _int(generator, 0, 3)
    logits = torch.randn(B, T, V, generator=generator)  # (B, T, V)
    knows = batch.repeat & (torch.rand(B, T, generator=generator) < 0.7)  # (B, T)
    following = batch.tokens.roll(-1, dims=1)  # (B, T) the next token at each position
    boost = F.one_hot(following, V).float() * 4.0  # (B, T, V)
    return logits + boost * knows[..., None], batch


def _copy_losses_of(logits, batch, shift: int = 1):
    V = logits.shape[-1]
    targets = batch.tokens[:, shift:]  # (B, T - shift)
    losses = F.cross_entropy(
        logits[:, : logits.shape[1] - shift].reshape(-1, V), targets.reshape(-1), reduction="none"
    ).view(targets.shape)
    T = targets.shape[1]
    return losses[batch.first[:, :T]].mean(), losses[batch.repeat[:, :T]].mean()


def _sign_flipped(logits, batch):
    first, repeat = _copy_losses_of(logits, batch)
    return (first - repeat).item()


def _over_both_copies(logits, batch):
    """The repeat's loss averaged over both copies, minus the first copy's."""
    V = logits.shape[-1]
    losses = F.cross_entropy(
        logits[:, :-1].reshape(-1, V), batch.tokens[:, 1:].reshape(-1), reduction="none"
    ).view(batch.tokens.shape[0], -1)
    both = (batch.first | batch.repeat)[:, :-1]
    return (losses[both].mean() - losses[batch.first[:, :-1]].mean()).item()


def _not_shifted(logits, batch):
    first, repeat = _copy_losses_of(logits, batch, shift=0)
    return (repeat - first).item()


def _as_float(arguments: tuple, result):
    return result.item() if isinstance(result, torch.Tensor) and result.numel() == 1 else result


check_in_context_score = build_exercise(
    notebook="16_induction_heads",
    solution=in_context_score,
    hint=N_("""
        position t predicts token t + 1: F.cross_entropy(logits[:, :−1] as (B·(T−1), V),
        tokens[:, 1:] as (B·(T−1),), reduction="none"), viewed back as (B, T − 1). Average it over
        batch.repeat[:, :−1] and over batch.first[:, :−1], and return repeat − first as a float.
    """),
    success=N_("""
        A model that reads the earlier copy scores well below 0; one that does not scores about 0.
    """),
    reference=induction.in_context_score,
    make_inputs=_logits_and_batch,
    atol=1e-4,
    outcome=_as_float,
    slips={
        N_("first − repeat: the sign flipped (negative must mean the repeat is easier)"): (
            _sign_flipped
        ),
        N_("the repeat loss averaged over both copies instead of the repeat alone"): (
            _over_both_copies
        ),
        N_("logits at t scored against token t, not against the next token t + 1"): _not_shifted,
    },
)


@checker(
    hint=N_("""
        the shortcut model saw every repeat start at the same place relative to position 0. What
        does it have to go on when the repeat starts somewhere else?
    """)
)
def check_shortcut_prediction(answer: object, hint: bool = False) -> Feedback:
    """16_induction_heads, predict before you run: the model trained without filler, on the probe
    with filler — does its repeat loss stay "low" or go "high" (near ln V)?"""
    words = _('answer with the text "low" or "high", got {answer!r}.').format(answer=answer)
    return check_choice(
        answer,
        ("low", "high"),
        [
            Option(
                lambda word: word == "high",
                True,
                _(
                    "high: without filler the copy always starts one period after position 0, so "
                    "positions alone predict it; move the copy and that rule fails."
                ),
            ),
            Option(
                lambda word: word == "low",
                False,
                _(
                    "the next cell shows a loss near ln V: the model learned positions, not the "
                    "previous-token lookup, so a moved copy defeats it."
                ),
            ),
        ],
        not_text=words,
        unknown=words,
        not_answered=_('replace the `...` with "low" or "high" and run the cell again.'),
    )
