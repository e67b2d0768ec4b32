"""Solutions of 08_v_attention's build exercises."""

from __future__ import annotations

import math

import torch
from torch import nn


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q kᵀ / √D, future hidden) v for q, k, v of shape (B, H, T, D); returns (B, H, T, D)."""
    T, D = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, D) @ (B, H, D, T) -> (B, H, T, T)
    visible = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()  # (T, T) True = may attend
    scores = scores.masked_fill(~visible, float("-inf"))  # (B, H, T, T) the future -> -inf
    # (B, H, T, T) the diagonal is always visible: no empty row
    weights = torch.softmax(scores, dim=-1)
    return weights @ v  # (B, H, T, T) @ (B, H, T, D) -> (B, H, T, D)


def multi_head_attention(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The causal multi-head attention of ``layer`` (q_proj, k_proj, v_proj, out_proj, n_heads) on x (B, T, C)."""
    B, T, C = x.shape
    H = layer.n_heads

    def split(y: torch.Tensor) -> torch.Tensor:
        return y.view(B, T, H, C // H).transpose(1, 2)  # (B, T, C) -> (B, T, H, D) -> (B, H, T, D)

    q, k, v = (
        split(layer.q_proj(x)),
        split(layer.k_proj(x)),
        split(layer.v_proj(x)),
    )  # 3 × (B, H, T, D)
    heads = causal_attention(q, k, v)  # (B, H, T, D)
    merged = heads.transpose(1, 2).reshape(B, T, C)  # (B, H, T, D) -> (B, T, H, D) -> (B, T, C)
    return layer.out_proj(merged)  # (B, T, C) -> (B, T, C)
