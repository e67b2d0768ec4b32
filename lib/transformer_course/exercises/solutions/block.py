"""Solutions of 09_transformer_block's build exercises."""

from __future__ import annotations

import torch

from ...model import Block


def layer_norm_from_scratch(
    x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float
) -> torch.Tensor:
    """LayerNorm of every vector along the last axis: x (*, C), gamma (C,), beta (C,) -> (*, C)."""
    mean = x.mean(dim=-1, keepdim=True)  # (*, C) -> (*, 1)
    centred = x - mean  # (*, C); subtract first: E[x²] − E[x]² loses digits when the mean is large
    var = centred.pow(2).mean(dim=-1, keepdim=True)  # (*, 1) divides by C, not C − 1
    x_hat = centred / torch.sqrt(var + eps)  # (*, C) eps inside the root
    return gamma * x_hat + beta  # (*, C)


def pre_norm_block(block: Block, x: torch.Tensor) -> torch.Tensor:
    """The forward pass of a pre-norm ``Block`` from its parts: x (B, T, C) -> (B, T, C)."""
    x = x + block.attn(block.norm1(x), causal=True)  # (B, T, C) the residual carries x unchanged
    return x + block.ffn(block.norm2(x))  # (B, T, C)
