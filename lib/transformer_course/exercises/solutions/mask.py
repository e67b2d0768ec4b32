"""Solutions of 06_mask's build exercises."""

from __future__ import annotations

import torch


def mask_future(scores: torch.Tensor) -> torch.Tensor:
    """Scores (B, H, T, T) with every future key (column j > row i) set to −∞."""
    T = scores.shape[-1]
    visible = torch.ones(T, T, dtype=torch.bool, device=scores.device).tril()  # (T, T), True on and below the diagonal
    return scores.masked_fill(~visible, float("-inf"))  # (B, H, T, T)
