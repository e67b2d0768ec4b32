"""Exercises of 07_softmax: build the stable softmax and the softmax with a temperature."""

from __future__ import annotations

import torch

from .. import attention
from ..i18n import N_, _
from . import Feedback, check_value, checker
from .build import build_exercise, hard_case
from .solutions.softmax import stable_softmax, temperature_softmax


@checker(
    hint=N_("""
        dividing by τ multiplies every gap between two scores by 1/τ. What happens to
        e^{(s_j − s_max)/τ} for a key below the maximum when 1/τ grows without bound?
    """)
)
def check_temperature_limit(answer: object, hint: bool = False) -> Feedback:
    """Which key wins all the weight as τ → 0 for scores ``[0.5, 2.0, 1.9, -1.0]`` (index)."""
    return check_value(
        answer,
        1,
        _(
            "as τ → 0 the gaps between scores are multiplied by 1/τ and the largest score (2.0, index 1) takes all."
        ),
        _(
            "dividing by a tiny τ stretches the differences: the largest score wins. Answer with its index."
        ),
    )


def _random_rows(generator: torch.Generator) -> tuple[torch.Tensor]:
    """Rows of scores (R, S) with the cases a textbook softmax gets wrong: scores in the
    thousands (exp overflows float32 above 88.7), masked keys, and a fully masked row."""
    R = int(torch.randint(3, 7, (1,), generator=generator))
    S = int(torch.randint(1, 9, (1,), generator=generator))
    scores = torch.randn(R, S, generator=generator) * 3.0  # (R, S)
    scores[0] = scores[0] * 300.0 + 1000.0  # (S,) huge scores: e^1000 is inf in float32
    hidden = torch.rand(R, S, generator=generator) < 0.3  # (R, S) some masked keys
    hidden[:, 0] = False  # … but every row keeps a key, except row 1:
    scores = scores.masked_fill(hidden, float("-inf"))  # (R, S)
    scores[1] = float("-inf")  # (S,) every key masked (possible with padding)
    return (scores,)


def _textbook_softmax(scores: torch.Tensor) -> torch.Tensor:
    return torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)  # overflows: inf / inf


def _torch_softmax(scores: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores, dim=-1)  # stable, but NaN for a fully masked row


check_stable_softmax = build_exercise(
    notebook="07_softmax",
    solution=stable_softmax,
    hint=N_("""
        c = scores.amax(dim=-1, keepdim=True) is each row's maximum; exp(scores − c) can no
        longer overflow. A fully masked row has c = −inf and −inf − (−inf) = NaN: replace a
        non-finite c by 0 (torch.where with torch.isfinite), and divide by the row sum only
        where it is > 0.
    """),
    success=N_("""
        Your rows of scores in the thousands did not overflow, masked keys got exactly 0,
        and the fully masked row gave zeros, not NaN.
    """),
    reference=attention.softmax,
    make_inputs=_random_rows,
    slips={
        N_(
            "the textbook formula without subtracting the row maximum (exp overflows to inf, and "
            "inf / inf is NaN)"
        ): _textbook_softmax,
        N_("`torch.softmax` as it is: stable, but a fully masked row gives NaN instead of zeros"): (
            _torch_softmax
        ),
    },
)


def _temperature_reference(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    return attention.softmax(attention.divide_by_temperature(scores, temperature))  # (R, S)


def _random_rows_and_temperature(generator: torch.Generator) -> tuple[torch.Tensor, float]:
    R = int(torch.randint(1, 5, (1,), generator=generator))
    S = int(torch.randint(2, 9, (1,), generator=generator))
    scores = torch.randn(R, S, generator=generator) * 4.0  # (R, S)
    hidden = torch.rand(R, S, generator=generator) < 0.3  # (R, S) some masked keys
    hidden[:, 0] = False  # every row keeps at least one key
    # Small τ too: scores of ±12 divided by 0.01 reach 1200, where the textbook formula overflows.
    choices = [0.01, 0.1, 0.5, 1.0, 2.0, 10.0]
    temperature = choices[int(torch.randint(0, len(choices), (1,), generator=generator))]
    # Every draw: one row whose scores / τ reach about 120, where exp overflows float32 (above
    # 88.7): scores of about 12 for τ ≤ 0.1 (1200 at τ = 0.01), logits near 120 at τ = 1; and
    # τ = 0.01 in every check (one trial in three).
    if hard_case(generator, 3) == 0:
        temperature = 0.01
    scores[0] = (120.0 + 3.0 * torch.randn(S, generator=generator)) * max(temperature, 0.1)
    return scores.masked_fill(hidden, float("-inf")), temperature


def _textbook_temperature_softmax(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    weights = torch.exp(scores / temperature)  # (R, S) overflows to inf for large scores / τ
    return weights / weights.sum(dim=-1, keepdim=True)  # inf / inf = NaN


def _multiplied_by_temperature(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    return attention.softmax(scores * temperature)  # (R, S) τ < 1 flattens instead of sharpening


check_temperature_softmax = build_exercise(
    notebook="07_softmax",
    solution=temperature_softmax,
    hint=N_("""
        divide the scores by τ first (−inf / τ stays −inf), then take a softmax that does
        not overflow along the last axis: subtract the row maximum before exp. τ = 0.01
        turns a score of 12 into 1200.
    """),
    success=N_("""
        τ < 1 sharpened the rows, τ > 1 flattened them, and masked keys stayed at 0.
    """),
    reference=_temperature_reference,
    make_inputs=_random_rows_and_temperature,
    slips={
        N_("multiplying the scores by τ instead of dividing"): _multiplied_by_temperature,
        N_(
            "the textbook formula exp(s / τ) / Σ exp(s / τ) without subtracting the row maximum "
            "(at τ = 0.01 a score of 12 becomes 1200, exp overflows to inf, and inf / inf is NaN)"
        ): _textbook_temperature_softmax,
    },
)
