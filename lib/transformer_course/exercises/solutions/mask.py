"""Solutions of 06_mask's build exercises."""

from __future__ import annotations

import torch


def mask_future(scores: torch.Tensor) -> torch.Tensor:
    """Scores (B, H, T, T) with every future key (column j > row i) set to −∞."""
    T = scores.shape[-1]
    # (T, T), True on and below the diagonal
    visible = torch.ones(T, T, dtype=torch.bool, device=scores.device).tril()
    return scores.masked_fill(~visible, float("-inf"))  # (B, H, T, T)


def padding_mask(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """A key-padding mask (B, 1, 1, S) from the real lengths (B,): True = a real token, may attend."""
    positions = torch.arange(S, device=lengths.device)  # (S,) 0 … S-1
    valid = positions[None, :] < lengths[:, None]  # (1, S) < (B, 1) -> (B, S)
    return valid[:, None, None, :]  # (B, S) -> (B, 1, 1, S): broadcasts over heads and queries


def sees_the_future(model: torch.nn.Module, idx: torch.Tensor, t: int) -> bool:
    """True if changing the tokens of idx (B, T) after position t moves any logit at positions 0 … t."""
    changed = idx.clone()  # (B, T)
    changed[:, t + 1 :] = (
        changed[:, t + 1 :] + 1
    ) % model.config.vocab_size  # every later token differs
    with torch.no_grad():
        before, _loss = model(idx)  # (B, T, V)
        after, _loss = model(changed)  # (B, T, V)
    return not torch.equal(before[:, : t + 1], after[:, : t + 1])  # bit for bit, no tolerance


def find_broken_layer(suspect: torch.nn.Module) -> int:
    """The index (0-based) of the block of ``suspect`` whose attention sees the future."""
    from ...causality import check_causal

    return next(
        i
        for i, block in enumerate(suspect.blocks)
        if not check_causal(block.attn, causal=True, raise_on_leak=False)
    )
