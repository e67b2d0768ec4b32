"""Solutions of 02_embeddings' build exercises."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def sample_batch(
    ids: torch.Tensor, batch_size: int, context_length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` windows of ``context_length`` ids at random starts, and their targets."""
    starts = torch.randint(len(ids) - context_length, (batch_size,), generator=generator)  # (B,)
    positions = starts[:, None] + torch.arange(context_length)[None, :]  # (B, 1) + (1, T) -> (B, T)
    x = ids[positions]  # (B, T)
    y = ids[positions + 1]  # (B, T): the next token of every position
    return x, y


def embed_with_one_hot(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The embeddings of ``ids`` (any shape) as one-hot vectors times the table ``weight`` (V, C)."""
    # (B, T) -> (B, T, V), whatever the shape of ids; floats, so that it can multiply the table
    one_hot = F.one_hot(ids, num_classes=weight.shape[0]).to(weight.dtype)
    return one_hot @ weight  # (B, T, V) @ (V, C) -> (B, T, C)
