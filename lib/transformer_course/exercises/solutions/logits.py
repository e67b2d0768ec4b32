"""Solutions of 10_logits_and_loss's build exercises."""

from __future__ import annotations

import torch

from ...model import GPT


def cross_entropy_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of ``targets`` under softmax(``logits``): logits (B, T, V), targets (B, T) -> ()."""
    # log_softmax stays finite where log(softmax(·)) would give log(0) = −inf
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, targets.unsqueeze(-1))  # (B, T, 1) log p(true next token)
    target_log_probs = picked.squeeze(-1)  # (B, T)
    return -target_log_probs.mean()  # () averaged over all B·T positions


def tied_logits(model: GPT, idx: torch.Tensor) -> torch.Tensor:
    """The logits of a GPT with a tied output layer, piece by piece: idx (B, T) -> (B, T, V)."""
    h = model.embed(idx)  # (B, T) -> (B, T, C) token embeddings + positions
    for block in model.blocks:
        h = block(h)  # (B, T, C) -> (B, T, C)
    h = model.final_norm(h)  # (B, T, C)
    # The embedding table is the output layer: (B, T, C) @ (C, V) -> (B, T, V)
    return h @ model.token_embedding.weight.T
