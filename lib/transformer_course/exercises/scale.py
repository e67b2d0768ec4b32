"""Exercises of 05_scale."""

from __future__ import annotations

import math

import torch

from .. import attention
from ..i18n import N_, _
from . import Feedback, Option, check_choice, check_value, checker
from .build import build_exercise, hard_case
from .solutions.scale import scaled_attention_weights, score_variance


@checker(
    hint=N_("""
        q·k is a sum of d_k products q_i·k_i. What are the mean and variance of one product
        of two independent unit-variance numbers, and what happens to variances when
        independent terms are added?
    """)
)
def check_score_variance(answer: object, d_k: int = 100, hint: bool = False) -> Feedback:
    """Predict: the variance of q·k for random q, k with d_k independent unit-variance entries (unscaled)."""
    return check_value(
        answer,
        d_k,
        _(
            "q·k is a sum of {d_k} independent products of variance 1, so its variance is {d_k} (standard deviation √{d_k} = {std:.4g}); the table below measures it."
        ).format(d_k=d_k, std=math.sqrt(d_k)),
        _(
            "each product q_i k_i has mean 0 and variance 1, and variances of independent terms add up."
        ),
        tolerance=1e-6,
    )


_LEVELS = ("about 1", "above", "below")


def _levels_said(word: str) -> list[str]:
    """The levels whose first word appears in the learner's answer (one, or the answer is unclear)."""
    return [level for level in _LEVELS if level.split()[0] in word]


@checker(
    hint=N_("""
        section 3 needs entries of variance 1. A default nn.Linear(64, 64) draws its weights
        uniformly in ±1/√64, a variance of 1/(3·64); each entry of q sums 64 products with
        inputs whose E[x²] is about 1.5. Estimate Var(q_i), then Var(q·k)/d_k ≈
        Var(q_i)·Var(k_i).
    """)
)
def check_projected_variance(answer: object, hint: bool = False) -> Feedback:
    """Predict: is the variance of 05's own scaled scores (default nn.Linear projections) about 1,
    above or below? (It is 0.23: the default init makes q and k entries of variance ≈ 0.5.)"""
    levels = ", ".join(map(repr, _LEVELS))
    return check_choice(
        answer,
        _LEVELS,
        [
            Option(
                lambda word: _levels_said(word) == ["below"],
                True,
                _(
                    "below: each entry of q and k has variance ≈ E[x²]/3 ≈ 0.5, so Var(q·k)/d_k ≈ 0.5 · 0.5 = 0.25. "
                    "The division removes d_k; the level is set by the initialisation. The next cell measures it."
                ),
            ),
            Option(
                lambda word: len(_levels_said(word)) == 1,
                False,
                _(
                    "section 3's 1 needs unit-variance entries of q and k. Are ours? Ask for a hint: "
                    "`check_projected_variance(answer, hint=True)`."
                ),
            ),
        ],
        not_text=_("answer with one of the words {levels}, got a {kind}.").format(
            levels=levels, kind=type(answer).__name__
        ),
        unknown=_("answer with exactly one of {levels}, got {answer!r}.").format(
            levels=levels, answer=answer
        ),
    )


# ---- build exercises --------------------------------------------------------------------


def _queries_and_keys(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    # Tq ≠ Tk in most trials (a k.T that swaps the wrong axes fails), T = 1 sometimes, and a
    # head size d_k from 1 to 256 (dividing by d_k or by a fixed 8 instead of √d_k fails).
    B, H = (int(n) for n in torch.randint(1, 4, (2,), generator=generator))
    Tq, Tk = (int(n) for n in torch.randint(1, 9, (2,), generator=generator))
    if hard_case(generator, 5) != 0:  # every check: four trials with 2 ≤ Tq ≠ Tk
        Tq = max(Tq, 2)
        Tk = Tk + 1 if Tk >= Tq else Tk
    d_k = int(torch.randint(1, 257, (1,), generator=generator))
    q = torch.randn(B, H, Tq, d_k, generator=generator)  # (B, H, Tq, d_k)
    k = torch.randn(B, H, Tk, d_k, generator=generator)  # (B, H, Tk, d_k)
    return q, k


def _divided_by_d_k(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1], dim=-1)  # (…, Tq, Tk)


def _not_scaled(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1)  # (…, Tq, Tk)


def _softmax_over_queries(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)  # (…, Tq, Tk)


check_scaled_attention_weights = build_exercise(
    notebook="05_scale",
    solution=scaled_attention_weights,
    hint=N_("""
        three steps: the scores q @ k.transpose(-2, -1) (swap the last two axes of k only:
        it may carry batch and head axes in front), divided by √d_k where d_k = q.shape[-1]
        is the head size, then torch.softmax(…, dim=-1) so that each query's row sums to 1.
    """),
    success=N_("""
        That is `attention.attention_weights(q, k)`; times V it is
        `F.scaled_dot_product_attention`.
    """),
    reference=attention.attention_weights,
    make_inputs=_queries_and_keys,
    slips={
        N_("dividing by d_k instead of √d_k"): _divided_by_d_k,
        N_("the scores not divided by √d_k at all"): _not_scaled,
        N_(
            "a softmax over the queries (dim=-2) instead of the keys (dim=-1)"
        ): _softmax_over_queries,
    },
)


def _variance_by_einsum(q: torch.Tensor, k: torch.Tensor, scaled: bool) -> float:
    """The reference measurement, by another route than the solution's: einsum, then torch.var."""
    scale = 1 / math.sqrt(q.shape[-1]) if scaled else 1.0
    scores = torch.einsum("nd,nd->n", q, k) * scale  # (N, d_k), (N, d_k) -> (N,)
    return float(torch.var(scores))


def _pairs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, bool]:
    N = int(torch.randint(2, 300, (1,), generator=generator))
    d_k = int(torch.randint(2, 513, (1,), generator=generator))  # d_k = 1 would hide √d_k vs d_k
    # Scaled and unscaled in turn (the trials' seeds are consecutive): every check sees both.
    scaled = bool(generator.initial_seed() % 2)
    q = torch.randn(N, d_k, generator=generator, dtype=torch.float64)  # (N, d_k)
    k = torch.randn(N, d_k, generator=generator, dtype=torch.float64)  # (N, d_k)
    return q, k, scaled


def _variance_divided_by_d_k(q: torch.Tensor, k: torch.Tensor, scaled: bool) -> float:
    scores = (q * k).sum(dim=-1)  # (N,)
    return float((scores / q.shape[-1] if scaled else scores).var())


def _variance_of_all_pairs(q: torch.Tensor, k: torch.Tensor, scaled: bool) -> float:
    """Slip: the variance of q @ k.T, every query with every key (N² scores), not the N scores
    of the pairs (q_n, k_n); it lands near the right number, so it looks like noise."""
    scores = q @ k.T  # (N, d_k) @ (d_k, N) -> (N, N)
    return float((scores / q.shape[-1] ** 0.5 if scaled else scores).var())


check_score_variance_function = build_exercise(
    notebook="05_scale",
    check_name="check_score_variance_function",
    solution=score_variance,
    hint=N_("""
        one score per row: (q * k).sum(dim=-1) has shape (N,). Divide it by math.sqrt(d_k)
        only when `scaled` is True (d_k = q.shape[-1]), and return torch's default variance
        `.var().item()`, a float.
    """),
    success=N_("""
        Now measure: call it on torch.randn(10_000, d_k) queries and keys for the d_k you
        predicted for.
    """),
    reference=_variance_by_einsum,
    make_inputs=_pairs,
    slips={
        N_("dividing the scaled scores by d_k instead of √d_k"): _variance_divided_by_d_k,
        N_(
            "the variance of all pairs, q @ k.T (N² scores, every query with every key): the "
            "exercise measures the N scores q_n · k_n of the given pairs, (q * k).sum(dim=-1); "
            "the two land close, so the difference looks like noise"
        ): _variance_of_all_pairs,
    },
)
