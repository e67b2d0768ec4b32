"""Solutions of 16_induction_heads' exercises."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from query t to key t − 1: weights […, B, H, T, T] -> […, H]."""
    offset_one = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (…, B, H, T-1) w[t, t-1]
    return offset_one.mean(dim=(-1, -3))  # (…, H) over t = 1 … T-1 and the batch


def induction_score(weights: torch.Tensor, batch) -> torch.Tensor:
    """Mean attention from query t to key t − period + 1 over the (row, t) pairs of
    batch.repeat: weights […, B, H, T, T] -> […, H]."""
    T = weights.shape[-1]
    t = torch.arange(T)  # (T,)
    key = (t[None, :] - batch.period[:, None] + 1).clamp(min=0)  # (B, T)
    # (B, T) -> (…, B, H, T, 1): the same key for every head (and layer)
    index = key[:, None, :, None].expand(*weights.shape[:-1], 1)
    picked = weights.gather(-1, index).squeeze(-1)  # (…, B, H, T) w[t, t - period + 1]
    mask = batch.repeat[:, None, :].float()  # (B, 1, T)
    return (picked * mask).sum(dim=(-1, -3)) / mask.sum()  # (…, H), pooled over (row, t)


def in_context_score(logits: torch.Tensor, batch) -> float:
    """Loss on the repeat minus loss on the first copy (nats; negative = learns in context)."""
    V = logits.shape[-1]
    # position t predicts token t + 1: logits[:, :-1] against tokens[:, 1:]
    losses = F.cross_entropy(  # (B·(T-1), V) vs (B·(T-1),) -> (B, T-1)
        logits[:, :-1].reshape(-1, V), batch.tokens[:, 1:].reshape(-1), reduction="none"
    ).view(batch.tokens.shape[0], -1)
    first = losses[batch.first[:, :-1]].mean()
    repeat = losses[batch.repeat[:, :-1]].mean()
    return (repeat - first).item()
