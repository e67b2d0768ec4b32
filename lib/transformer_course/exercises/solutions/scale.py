"""Solutions of 05_scale's build exercises."""

from __future__ import annotations

import math

import torch


def scaled_attention_weights(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """softmax(Q Kᵀ / √d_k) for q (..., Tq, d_k) and k (..., Tk, d_k); returns (..., Tq, Tk)."""
    d_k = q.shape[-1]  # the head size, the length of one query
    scores = q @ k.transpose(-2, -1)  # (…, Tq, d_k) @ (…, d_k, Tk) -> (…, Tq, Tk)
    return torch.softmax(scores / math.sqrt(d_k), dim=-1)  # (…, Tq, Tk) each row sums to 1


def score_variance(q: torch.Tensor, k: torch.Tensor, scaled: bool) -> float:
    """The variance of the N scores q_n · k_n (divided by √d_k when ``scaled``), q and k (N, d_k)."""
    scores = (q * k).sum(dim=-1)  # (N, d_k) -> (N,) one dot product per pair
    if scaled:
        scores = scores / math.sqrt(q.shape[-1])  # (N,)
    return scores.var().item()  # torch's default: the unbiased variance (divides by N − 1)
