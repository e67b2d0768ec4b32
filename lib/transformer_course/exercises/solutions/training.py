"""Solutions of 11_training's build exercises."""

from __future__ import annotations

import math

import torch
from torch import nn


def lr_schedule(step: int, steps: int, lr: float, warmup: int, min_lr: float | None) -> float:
    """The learning rate of (0-based) ``step``: linear warm-up, then half a cosine to ``min_lr``."""
    floor = lr / 10 if min_lr is None else min_lr
    if step < warmup:
        return lr * (step + 1) / warmup  # reaches lr at step warmup − 1
    if steps <= warmup:
        return lr  # no steps left for a cosine
    progress = min(1.0, (step - warmup) / (steps - warmup))  # 0 → 1, then stays at 1
    return floor + 0.5 * (lr - floor) * (1.0 + math.cos(math.pi * progress))


def validation_loss(model: nn.Module, ids: torch.Tensor, context_length: int) -> float:
    """Mean next-token loss over the whole of ``ids`` [N], cut into non-overlapping windows."""
    T = context_length
    windows = (ids.numel() - 1) // T  # each window needs T inputs and the token after them
    x = ids[: windows * T].view(windows, T)  # (W, T) inputs
    y = ids[1 : windows * T + 1].view(windows, T)  # (W, T) the inputs shifted by one
    model.eval()  # dropout off: the same number every time
    with torch.no_grad():
        _logits, loss = model(x, y)  # mean over W·T predictions
    return loss.item()


def one_training_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    lr: float,
    grad_clip: float | None,
) -> float:
    """One optimisation step on the batch ``x``, ``y`` [B, T]; returns the loss before the update."""
    _logits, loss = model(x, y)  # (B, T) -> (B, T, V) logits and the mean cross-entropy
    optimizer.zero_grad(set_to_none=True)  # backward adds to old gradients: clear the last step's
    loss.backward()  # a gradient for every parameter
    if grad_clip is not None:  # rescale the whole gradient to length ≤ grad_clip
        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    for group in optimizer.param_groups:
        group["lr"] = lr  # the scheduled rate for this step
    optimizer.step()
    return loss.item()
