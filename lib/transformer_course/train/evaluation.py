"""Validation losses for training (introduced in 11_training).

:func:`evaluate` scores the *whole* validation split in non-overlapping windows, deterministic
and exact; :func:`sampled_loss` is the seed's estimate from a few random batches, cheap but noisy
(11_training measures how noisy). Both run the model in eval mode (no dropout) and restore its
mode afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import distributed as dist
from torch import nn

from .. import _checks as check
from .. import data
from ..i18n import _
from ..machine import autocast_context, dist_info, evaluating, unwrap


@torch.no_grad()
def evaluate(
    model: nn.Module,
    ids: Sequence[int] | torch.Tensor,
    context_length: int,
    batch_size: int = 512,
    device: str | torch.device | None = None,
    autocast: bool = True,
) -> float:
    """Mean next-token loss over the WHOLE of ``ids``, cut into non-overlapping windows.

    ``ids`` [N] becomes (N − 1) // T windows x [T] with targets y = x shifted by one, so every
    token but the last few (< T) is predicted exactly once. Deterministic: no sampling, dropout
    off (the model's train/eval mode is restored afterwards). Under ``torch.distributed`` each
    process scores a share of the windows and the sums are all-reduced.
    """
    check.integer("context_length", context_length, minimum=1)
    check.integer("batch_size", batch_size, minimum=1)
    stream = data.as_ids(ids).cpu()
    windows = (stream.numel() - 1) // context_length
    if windows < 1:
        raise ValueError(
            _(
                "ids has {n_ids} tokens, fewer than context_length + 1 = {needed}; use a shorter "
                "context or more text"
            ).format(n_ids=stream.numel(), needed=context_length + 1)
        )
    net = unwrap(model)  # the plain module: DDP's forward would try to sync buffers mid-evaluation
    run_device = torch.device(device) if device is not None else next(net.parameters()).device
    x_all = stream[: windows * context_length].view(windows, context_length)  # (W, T)
    y_all = stream[1 : windows * context_length + 1].view(windows, context_length)  # (W, T)
    distributed, rank, world = dist_info()
    total = torch.zeros((), dtype=torch.float64, device=run_device)
    count = 0
    with evaluating(net):
        for start in range(rank * batch_size, windows, batch_size * world):
            x = x_all[start : start + batch_size].to(run_device)  # (b, T)
            y = y_all[start : start + batch_size].to(run_device)  # (b, T)
            with autocast_context(run_device, autocast):
                _logits, loss = net(x, y)  # mean over b·T tokens
            total += loss.double() * y.numel()
            count += y.numel()
    if distributed:
        count_tensor = torch.tensor(float(count), dtype=torch.float64, device=run_device)
        stats = torch.stack([total, count_tensor])  # (2,)
        dist.all_reduce(stats)
        total, count = stats[0], int(stats[1].item())
    return float(total.item()) / count


@torch.no_grad()
def sampled_loss(
    model: nn.Module,
    ids: Sequence[int] | torch.Tensor,
    context_length: int = 16,
    batches: int = 20,
    batch_size: int = 4,
    generator: torch.Generator | None = None,
) -> float:
    """The seed's estimate: the mean loss of ``batches`` random batches of ``batch_size`` windows.

    Cheap but noisy (20 × 4 × 16 = 1,280 tokens out of ~7,800); 11_training measures how noisy.
    """
    net = unwrap(model)
    device = next(net.parameters()).device
    stream = data.as_ids(ids).cpu()
    losses = []
    with evaluating(net):
        for _batch in range(batches):
            x, y = data.get_batch(stream, batch_size, context_length, generator=generator)  # (B, T)
            _logits, loss = net(x.to(device), y.to(device))
            losses.append(float(loss))
    return sum(losses) / len(losses)
