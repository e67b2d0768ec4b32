"""Exercises of 12_generation: two build exercises (top-p filtering, the sampling distribution)
and questions to answer with pencil and paper or before a cell is run."""

from __future__ import annotations

import math

import torch

from ..generate import filter_logits, next_token_probs
from ..i18n import N_, _
from . import Feedback, Option, check_choice, check_value, checker
from .answers import read_number
from .build import build_exercise
from .solutions.generation import sampling_probs, top_p_filter

PROBS = (0.5, 0.3, 0.15, 0.05)


@checker(
    hint=N_("""
        walk down the probabilities from the largest, adding them up; the nucleus is
        complete as soon as the running sum reaches top_p (the token that crosses it is
        kept).
    """)
)
def check_top_p_count(
    answer: object, probs=PROBS, top_p: float = 0.75, hint: bool = False
) -> Feedback:
    """How many tokens does top-p sampling keep for next-token probabilities ``probs``?"""
    ordered = sorted(probs, reverse=True)
    total, expected = 0.0, 0
    for p in ordered:
        if total >= top_p:
            break
        total += p
        expected += 1
    hint_text = _(
        "sort the probabilities, add them up from the largest, and stop as soon as the sum reaches top_p."
    )
    if _same_number(answer, expected - 1):
        hint_text = _(
            "it looks like `cumsum <= p`: that drops the token whose probability carries the sum past {top_p}, so the kept tokens hold less than {top_p}. The nucleus keeps that token."
        ).format(top_p=top_p)
    return check_value(
        answer,
        expected,
        _(
            "the {expected} most probable tokens hold {total:.2f} ≥ {top_p}; without the last of them only {rest:.2f}."
        ).format(expected=expected, total=total, top_p=top_p, rest=total - ordered[expected - 1]),
        hint_text,
    )


def _same_number(answer: object, value: float) -> bool:
    """Whether ``answer`` reads as the number ``value`` (a known wrong answer, to name its slip)."""
    number, problem = read_number(answer)
    return problem is None and number == value


@checker(
    hint=N_("""
        temperature divides the logits BEFORE the softmax: compute e^(z/τ) for each logit,
        then divide the first by their sum.
    """)
)
def check_temperature_probability(
    answer: object, logits=(2.0, 1.0, 0.0), temperature: float = 0.5, hint: bool = False
) -> Feedback:
    """The probability of the first token after dividing ``logits`` by ``temperature``."""
    expected = torch.softmax(torch.tensor(logits, dtype=torch.float64) / temperature, dim=0)[
        0
    ].item()
    return check_value(
        answer,
        expected,
        _("softmax({scaled})[0] ≈ {expected:.4f}: a low temperature sharpens.").format(
            scaled=[round(z / temperature, 2) for z in logits], expected=expected
        ),
        _("divide every logit by the temperature first, then take the softmax."),
        tolerance=1e-3,
    )


@checker(
    hint=N_("""
        the probability of a sequence is the product of its steps' probabilities, and the
        log of a product is the sum of the logs (natural log: math.log).
    """)
)
def check_sequence_log_prob(answer: object, probs=(0.5, 0.2, 0.1), hint: bool = False) -> Feedback:
    """The total log-probability of a continuation whose tokens had probabilities ``probs``."""
    expected = sum(math.log(p) for p in probs)
    return check_value(
        answer,
        expected,
        _("ln 0.5 + ln 0.2 + ln 0.1 = ln 0.01 ≈ {expected:.4f}: log-probabilities add up.").format(
            expected=expected
        ),
        _(
            "the probability of the whole continuation is the product of its tokens' probabilities; take the "
            "natural log (a negative number)."
        ),
        tolerance=1e-3,
    )


@checker(
    hint=N_("""
        a candidate is one kept beam followed by one token: count the pairs (beam, token).
    """)
)
def check_beam_candidates(
    answer: object, beam_width: int = 4, vocab_size: int = 3771, hint: bool = False
) -> Feedback:
    """How many candidate continuations does one beam-search step score (before keeping the best)?"""
    expected = beam_width * vocab_size
    return check_value(
        answer,
        expected,
        _(
            "each of the {beam_width} kept beams is extended by each of the {vocab_size:,} tokens: {expected:,} candidates, of which {beam_width} are kept."
        ).format(beam_width=beam_width, vocab_size=vocab_size, expected=expected),
        _("every kept beam can be followed by every token of the vocabulary."),
    )


STRATEGIES = ("greedy", "sample", "top-k", "top-p", "beam")


@checker(
    hint=N_("""
        greedy maximises each step's probability, sampling draws away from the maximum on
        purpose; which strategy compares whole continuations by their total log-probability?
    """)
)
def check_most_probable_strategy(answer: object, hint: bool = False) -> Feedback:
    """12_generation, before the side-by-side table: which strategy's continuation gets the highest
    total log-probability? One of ``STRATEGIES``."""
    return check_choice(
        answer,
        STRATEGIES,
        [
            Option(
                lambda name: "beam" in name,
                True,
                _(
                    "beam search keeps the 4 best partial continuations by total log-probability; "
                    "greedy can only take the best next token. The table shows it."
                ),
            ),
            Option(
                lambda name: "greedy" in name,
                False,
                _(
                    "greedy takes the most probable NEXT token, which need not start the most "
                    "probable SEQUENCE (a less likely first token can lead to likelier ones). "
                    "Which strategy keeps several candidates?"
                ),
            ),
            Option(
                lambda name: name in STRATEGIES or "sampl" in name or "top" in name,
                False,
                _(
                    "sampling draws tokens that are not the most probable, on purpose: its total "
                    "log-probability is lower. Look for a strategy that maximises it."
                ),
            ),
        ],
        noun=_("names"),
    )


# --- Build exercises -------------------------------------------------------------------------


def _random_logits(generator: torch.Generator) -> torch.Tensor:
    """Logits (B, V) or (V,) of a random size and spread: flat, peaked, or with one huge logit."""
    B, V = (
        int(torch.randint(1, 5, (), generator=generator)),
        int(torch.randint(1, 40, (), generator=generator)),
    )
    spread = float(torch.empty(()).uniform_(0.1, 8.0, generator=generator))
    logits = torch.randn(B, V, generator=generator) * spread  # (B, V)
    if torch.rand((), generator=generator) < 0.3:
        logits[:, 0] += 50.0  # one token takes almost all the probability: the nucleus is one token
    return logits[0] if torch.rand((), generator=generator) < 0.3 else logits  # (V,) or (B, V)


def _top_p_inputs(generator: torch.Generator) -> tuple[torch.Tensor, float]:
    top_p = float(torch.empty(()).uniform_(0.05, 0.99, generator=generator))
    return _random_logits(generator), top_p


def _top_p_reference(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    return filter_logits(logits, top_p=top_p)  # (..., V)


def _nucleus_drop_sorted(logits: torch.Tensor, top_p: float, *, own_included: bool):
    """(drop mask in sorted order, the sort order) of top-p; ``own_included`` is the slip."""
    sorted_probs, order = torch.softmax(logits, dim=-1).sort(dim=-1, descending=True)  # (..., V)
    running = sorted_probs.cumsum(dim=-1)  # (..., V) probability up to and including each token
    if own_included:
        return running > top_p, order  # the slip: `keep = cumsum <= p`
    return running - sorted_probs >= top_p, order  # probability ranked above ≥ p


def _top_p_cumsum_at_most_p(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Slip: keeps the tokens whose running sum, their own probability included, is ≤ top_p."""
    drop_sorted, order = _nucleus_drop_sorted(logits, top_p, own_included=True)
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # (..., V)
    return logits.masked_fill(drop, float("-inf"))


def _top_p_mask_left_sorted(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Slip: the drop mask, computed in sorted order, applied to the logits in vocabulary order."""
    drop_sorted, _order = _nucleus_drop_sorted(logits, top_p, own_included=False)
    return logits.masked_fill(drop_sorted, float("-inf"))


check_top_p_filter = build_exercise(
    notebook="12_generation",
    solution=top_p_filter,
    hint=N_("""
        softmax, then sort the probabilities in descending order (`sort` also returns the
        order). A token is dropped when the tokens ranked ABOVE it already hold ≥ top_p:
        that is cumsum − its own probability. Put the drop mask back in vocabulary order
        (`scatter` with the order, or index with it), then `masked_fill(drop,
        float('-inf'))`. Work on the last dimension, so (B, V) and (V,) both work.
    """),
    success=N_("""
        Sampling from softmax of these logits is top-p sampling.
    """),
    reference=_top_p_reference,
    make_inputs=_top_p_inputs,
    slips={
        N_(
            "`cumsum <= p` (the token that carries the sum past top_p is dropped; the nucleus keeps it)"
        ): _top_p_cumsum_at_most_p,
        N_(
            "the drop mask left in sorted order (put it back in vocabulary order with `scatter` or the sort indices)"
        ): _top_p_mask_left_sorted,
    },
)


def _sampling_inputs(generator: torch.Generator) -> tuple[torch.Tensor, float, int]:
    # The trials use consecutive seeds, so they alternate between two kinds of draw: huge logits
    # (up to ±1,000 / 0.05: overflow for a naive exp), and moderate logits with k < V, where the
    # tokens that top-k removes hold enough probability that forgetting to renormalise shows.
    if generator.initial_seed() % 2 == 0:
        logits = _random_logits(generator)
        temperature = (0.05, 0.5, 1.0, 2.0)[int(torch.randint(0, 4, (), generator=generator))]
        top_k = int(torch.randint(1, logits.shape[-1] + 3, (), generator=generator))  # k ≥ V too
        return logits * 20.0, temperature, top_k
    B, V = (
        int(torch.randint(1, 4, (), generator=generator)),
        int(torch.randint(3, 30, (), generator=generator)),
    )
    temperature = (0.5, 1.0, 2.0)[int(torch.randint(0, 3, (), generator=generator))]
    top_k = int(torch.randint(1, V, (), generator=generator))  # 1 … V − 1
    return torch.randn(B, V, generator=generator), temperature, top_k  # (B, V)


def _sampling_reference(logits: torch.Tensor, temperature: float, top_k: int) -> torch.Tensor:
    return next_token_probs(logits, temperature, top_k=top_k)  # (..., V)


def _top_k_softmax(scaled: torch.Tensor, top_k: int) -> torch.Tensor:
    k = min(top_k, scaled.shape[-1])
    kth = scaled.topk(k, dim=-1).values[..., -1:]  # (..., 1) the k-th largest
    return torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)  # (..., V)


def _sampling_times_temperature(
    logits: torch.Tensor, temperature: float, top_k: int
) -> torch.Tensor:
    """Slip: the logits multiplied by the temperature instead of divided."""
    return _top_k_softmax(logits * temperature, top_k)


def _sampling_not_renormalised(
    logits: torch.Tensor, temperature: float, top_k: int
) -> torch.Tensor:
    """Slip: softmax over every token first, then the tokens outside the top k zeroed, the rest
    left as they were (their sum is below 1)."""
    probs = torch.softmax(logits / temperature, dim=-1)  # (..., V)
    kth = probs.topk(min(top_k, probs.shape[-1]), dim=-1).values[..., -1:]  # (..., 1)
    return probs.masked_fill(probs < kth, 0.0)


check_sampling_probs = build_exercise(
    notebook="12_generation",
    solution=sampling_probs,
    hint=N_("""
        three steps: divide the logits by the temperature; find the k-th largest
        (`topk(k).values[..., -1:]`, and k may exceed V: use min) and set every smaller
        logit to −∞; softmax over the last dimension. Use torch.softmax, not exp / sum:
        these logits reach ±20,000 after dividing, and exp overflows.
    """),
    success=N_("""
        A low temperature piles the probability on the top token, and top-k 1 is greedy.
    """),
    reference=_sampling_reference,
    make_inputs=_sampling_inputs,
    slips={
        N_(
            "the logits multiplied by the temperature (divide them: a small τ must sharpen)"
        ): _sampling_times_temperature,
        N_(
            "the top-k probabilities not renormalised (softmax AFTER removing the other tokens, so they sum to 1)"
        ): _sampling_not_renormalised,
    },
)
