"""The three measurements of 16_induction_heads (the learner writes them too).

Attention weights come as [..., B, H, T, T] (query t, key s); a score averages over the batch
and the query positions and keeps one number per head: [..., H].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import _checks as check
from ..i18n import N_, _
from .data import RepeatBatch

__all__ = ["copy_losses", "in_context_score", "induction_score", "previous_token_score"]


def _weights(weights: object) -> torch.Tensor:
    weights = check.tensor("weights", weights, 4, floating=True)
    if weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            _("weights must be [..., B, H, T, T] (as many keys as queries), got {shape}").format(
                shape=tuple(weights.shape)
            )
        )
    return weights


def _batch(batch: object) -> RepeatBatch:
    check.instance("batch", batch, RepeatBatch, hint=N_("(from repeated_tokens)"))
    return batch


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from query t to key t − 1 (offset 1), over the batch and t = 1 … T − 1:
    [..., B, H, T, T] -> [..., H] (introduced in 16_induction_heads). 1 = a perfect
    previous-token head."""
    weights = _weights(weights)
    offset_one = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (..., B, H, T-1) w[t, t-1]
    return offset_one.mean(dim=-1).mean(dim=-2)  # (..., B, H, T-1) -> (..., B, H) -> (..., H)


def induction_score(weights: torch.Tensor, batch: RepeatBatch) -> torch.Tensor:
    """Mean attention from query t to key t − period + 1 — the token that followed t's previous
    occurrence — over every (row, t) with ``batch.repeat`` True: [..., B, H, T, T] -> [..., H]
    (introduced in 16_induction_heads). 1 = a perfect induction head."""
    weights, batch = _weights(weights), _batch(batch)
    B, H, T = weights.shape[-4], weights.shape[-3], weights.shape[-1]
    if batch.repeat.shape != (B, T):
        raise ValueError(
            _("batch.repeat has shape {got}, the weights need [B, T] = [{B}, {T}]").format(
                got=tuple(batch.repeat.shape), B=B, T=T
            )
        )
    t = torch.arange(T, device=weights.device)  # (T,)
    key = (t[None, :] - batch.period[:, None] + 1).clamp(min=0)  # (B, T) key t - period + 1
    index = key[:, None, :, None].expand(B, H, T, 1)  # (B, H, T, 1)
    index = index.expand(*weights.shape[:-4], B, H, T, 1)  # (..., B, H, T, 1)
    picked = weights.gather(-1, index).squeeze(-1)  # (..., B, H, T) w[t, t - period + 1]
    mask = batch.repeat[:, None, :].to(weights.dtype)  # (B, 1, T)
    return (picked * mask).sum(dim=(-1, -3)) / mask.sum()  # (..., H) pooled mean


def copy_losses(logits: torch.Tensor, batch: RepeatBatch) -> tuple[float, float]:
    """Cross-entropy (nats) of the next token on the first copy and on the repeat: logits
    [B, T, V] and ``batch.tokens`` [B, T] -> ``(first, repeat)``, each the mean over the
    positions of ``batch.first`` / ``batch.repeat`` (introduced in 16_induction_heads)."""
    logits, batch = check.tensor("logits", logits, 3, floating=True), _batch(batch)
    B, T, V = logits.shape
    if batch.tokens.shape != (B, T):
        raise ValueError(
            _("logits must be [B, T, V] with [B, T] = {shape}, got {got}").format(
                shape=tuple(batch.tokens.shape), got=tuple(logits.shape)
            )
        )
    # position t predicts token t + 1; the last position predicts nothing
    losses = F.cross_entropy(  # (B·(T-1), V) vs (B·(T-1),) -> (B, T-1)
        logits[:, :-1].reshape(-1, V).float(), batch.tokens[:, 1:].reshape(-1), reduction="none"
    ).view(B, T - 1)
    first, repeat = batch.first[:, :-1], batch.repeat[:, :-1]  # (B, T-1) each
    return losses[first].mean().item(), losses[repeat].mean().item()


def in_context_score(logits: torch.Tensor, batch: RepeatBatch) -> float:
    """Repeat loss minus first-copy loss (nats; introduced in 16_induction_heads): negative
    when the model predicts the second copy better than the first, i.e. learns in context."""
    first, repeat = copy_losses(logits, batch)
    return repeat - first
