"""Solutions of 06_mask's build exercises."""

from __future__ import annotations

import torch


def mask_future(scores: torch.Tensor) -> torch.Tensor:
    """Scores (B, H, T, T) with every future key (column j > row i) set to −∞."""
    T = scores.shape[-1]
    # (T, T), True on and below the diagonal
    visible = torch.ones(T, T, dtype=torch.bool, device=scores.device).tril()
    return scores.masked_fill(~visible, float("-inf"))  # (B, H, T, T)


def padding_mask(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """A key-padding mask (B, 1, 1, S) from the real lengths (B,): True = a real token, may attend."""
    positions = torch.arange(S, device=lengths.device)  # (S,) 0 … S-1
    valid = positions[None, :] < lengths[:, None]  # (1, S) < (B, 1) -> (B, S)
    return valid[:, None, None, :]  # (B, S) -> (B, 1, 1, S): broadcasts over heads and queries
