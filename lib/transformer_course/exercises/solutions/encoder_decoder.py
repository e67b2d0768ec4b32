"""Solutions of 14_encoder_decoder's build exercises."""

from __future__ import annotations

import math

import torch

from ...attention import MultiHeadAttention


def cross_attention_mask(src: torch.Tensor, T: int, pad_id: int) -> torch.Tensor:
    """The cross-attention mask (B, 1, T, S) for T decoder queries over the source ids src (B, S):
    True where the source token is real (not ``pad_id``), for every query; one mask for all heads."""
    real = src != pad_id  # (B, S) True = a real source token
    return real[:, None, None, :].expand(-1, 1, T, -1)  # (B, S) -> (B, 1, 1, S) -> (B, 1, T, S)


def cross_attention(
    y: torch.Tensor, memory: torch.Tensor, valid: torch.Tensor, attn: MultiHeadAttention
) -> torch.Tensor:
    """Cross-attention with ``attn``'s weights: queries from the decoder states y (B, T, C), keys and
    values from the encoder output memory (B, S, C); source slots where valid (B, S) is False are
    never attended to. Returns (B, T, C)."""
    B, T, C = y.shape
    S, H = memory.shape[1], attn.n_heads
    D = C // H
    q = attn.q_proj(y).view(B, T, H, D).transpose(1, 2)  # (B, T, C) -> (B, H, T, D)
    k = attn.k_proj(memory).view(B, S, H, D).transpose(1, 2)  # (B, S, C) -> (B, H, S, D)
    v = attn.v_proj(memory).view(B, S, H, D).transpose(1, 2)  # (B, S, C) -> (B, H, S, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, D) @ (B, H, D, S) -> (B, H, T, S)
    # (B, H, T, S): padded source columns -> −∞
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    heads = scores.softmax(dim=-1) @ v  # (B, H, T, S) @ (B, H, S, D) -> (B, H, T, D)
    return attn.out_proj(heads.transpose(1, 2).reshape(B, T, C))  # (B, H, T, D) -> (B, T, C)
