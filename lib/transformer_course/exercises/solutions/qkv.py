"""Solutions of 04_qkv's build exercises."""

from __future__ import annotations

import torch


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, H, T, D) with D = C // H; head h gets columns h·D … (h+1)·D − 1."""
    B, T, C = x.shape
    D = C // n_heads
    return x.view(B, T, n_heads, D).transpose(1, 2)  # (B, T, C) -> (B, T, H, D) -> (B, H, T, D)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, D) -> (B, T, H·D): the inverse of split_heads."""
    B, H, T, D = x.shape
    # The transpose leaves the memory in (B, H, T, D) order, so .view would fail: reshape copies.
    return x.transpose(1, 2).reshape(B, T, H * D)  # (B, H, T, D) -> (B, T, H, D) -> (B, T, C)
