"""Solutions of 07_softmax's build exercises."""

from __future__ import annotations

import torch


def stable_softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax along the last axis that never overflows; a fully masked (all −inf) row gives zeros."""
    row_max = scores.amax(dim=-1, keepdim=True)  # (*, 1)
    # An all −inf row has max −inf, and −inf − (−inf) = NaN: shift such a row by 0 instead.
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))  # (*, 1)
    exp = torch.exp(scores - row_max)  # (*, S) every entry in [0, 1]; masked ones exactly 0
    total = exp.sum(dim=-1, keepdim=True)  # (*, 1) ≥ 1 unless every key is masked
    return exp / torch.where(total > 0, total, torch.ones_like(total))  # (*, S) a zero row stays 0


def temperature_softmax(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    """softmax(scores / τ) along the last axis; τ < 1 sharpens the rows, τ > 1 flattens them."""
    scaled = scores / temperature  # (*, S) −inf stays −inf
    # (*, S) the largest entry of each row is 0
    shifted = scaled - scaled.amax(dim=-1, keepdim=True)
    exp = torch.exp(shifted)  # (*, S) cannot overflow
    return exp / exp.sum(dim=-1, keepdim=True)  # (*, S) every row keeps a key, so the sum is ≥ 1
