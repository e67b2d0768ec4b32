"""Solutions of 13_modern_blocks's build exercises."""

from __future__ import annotations

import torch

from ...attention import scaled_dot_product_attention


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE on queries or keys x (B, H, T, D): the pair (x_2i, x_2i+1) of the token at position p
    turns by the angle p · base^(−2i/D)."""
    T, D = x.shape[-2], x.shape[-1]
    inv_freq = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq  # (T, D/2) θ(p, i)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, D/2), (T, D/2)
    pairs = x.unflatten(-1, (D // 2, 2))  # (B, H, T, D) -> (B, H, T, D/2, 2) adjacent pairs
    first, second = pairs.unbind(-1)  # (B, H, T, D/2) each: x_2i and x_2i+1
    # (B, H, T, D/2, 2): the 2×2 rotation of every pair
    rotated = torch.stack((first * cos - second * sin, first * sin + second * cos), dim=-1)
    return rotated.flatten(-2)  # (B, H, T, D/2, 2) -> (B, H, T, D) pairs back in place


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm over the last dimension: x (*, C) / sqrt(mean(x²) + eps) · weight (C,)."""
    rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)  # (*, 1) ε inside the root
    return x / rms * weight  # (*, C)


def grouped_query_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Attention with H query heads q (B, H, T, D) and H_kv shared K/V heads k, v (B, H_kv, S, D):
    query head h reads K/V head h // (H / H_kv). Returns (B, H, T, D)."""
    group = q.shape[1] // k.shape[1]  # r = H / H_kv query heads per K/V head
    # (B, H_kv, S, D) -> (B, H, S, D): each K/V head r times, next to itself
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)  # (B, H_kv, S, D) -> (B, H, S, D)
    out, _weights = scaled_dot_product_attention(q, k, v)  # (B, H, T, D), weights (B, H, T, S)
    return out
