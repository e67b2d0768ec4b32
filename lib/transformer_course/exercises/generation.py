"""Exercises of 12_generation."""

from __future__ import annotations

import math

import torch

from . import Feedback, check_value, checker

PROBS = (0.5, 0.3, 0.15, 0.05)



@checker
def check_top_p_count(answer: object, probs=PROBS, top_p: float = 0.75) -> Feedback:
    """How many tokens does top-p sampling keep for next-token probabilities ``probs``?"""
    ordered = sorted(probs, reverse=True)
    total, expected = 0.0, 0
    for p in ordered:
        if total >= top_p:
            break
        total += p
        expected += 1
    return check_value(
        answer,
        expected,
        f"the {expected} most probable tokens hold {total:.2f} ≥ {top_p}; without the last of them only "
        f"{total - ordered[expected - 1]:.2f}.",
        "sort the probabilities, add them up from the largest, and stop as soon as the sum reaches top_p.",
    )


@checker
def check_temperature_probability(
    answer: object, logits=(2.0, 1.0, 0.0), temperature: float = 0.5
) -> Feedback:
    """The probability of the first token after dividing ``logits`` by ``temperature``."""
    expected = torch.softmax(torch.tensor(logits, dtype=torch.float64) / temperature, dim=0)[
        0
    ].item()
    return check_value(
        answer,
        expected,
        f"softmax({[round(z / temperature, 2) for z in logits]})[0] ≈ {expected:.4f}: a low temperature sharpens.",
        "divide every logit by the temperature first, then take the softmax.",
        tolerance=1e-3,
    )


@checker
def check_sequence_log_prob(answer: object, probs=(0.5, 0.2, 0.1)) -> Feedback:
    """The total log-probability of a continuation whose tokens had probabilities ``probs``."""
    expected = sum(math.log(p) for p in probs)
    return check_value(
        answer,
        expected,
        f"ln 0.5 + ln 0.2 + ln 0.1 = ln 0.01 ≈ {expected:.4f}: log-probabilities add up.",
        "the probability of the whole continuation is the product of its tokens' probabilities; take the "
        "natural log (a negative number).",
        tolerance=1e-3,
    )


@checker
def check_beam_candidates(answer: object, beam_width: int = 4, vocab_size: int = 3771) -> Feedback:
    """How many candidate continuations does one beam-search step score (before keeping the best)?"""
    expected = beam_width * vocab_size
    return check_value(
        answer,
        expected,
        f"each of the {beam_width} kept beams is extended by each of the {vocab_size:,} tokens: {expected:,} "
        f"candidates, of which {beam_width} are kept.",
        "every kept beam can be followed by every token of the vocabulary.",
    )
