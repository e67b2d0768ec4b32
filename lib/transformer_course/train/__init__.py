"""Training the tiny GPT (introduced in 11_training).

The loop is the textbook one — sample a batch, forward, cross-entropy, backward, AdamW step —
plus what makes a run trustworthy and pleasant:

- a warm-up + cosine learning-rate schedule (:func:`lr_at`, a plain function you can plot);
- validation over the *whole* validation split in non-overlapping windows (:func:`evaluate`),
  instead of the seed's 20 random batches of 4 (:func:`sampled_loss`), which are noisy;
- a progress bar, a loss history, gradient clipping, bf16 autocast on CUDA;
- checkpoints (see :mod:`transformer_course.checkpoint`): periodic (every N steps and every
  ``checkpoint_seconds`` of training), at the end, and when you interrupt (Ctrl-C, the stop
  button, SIGTERM from ``kill``/``docker stop``/a scheduler, SIGHUP from a closed terminal).
  Training again with the same ``checkpoint_path`` resumes with the same step count, optimizer
  state and random state, so an interrupted and resumed run equals an uninterrupted one;
- a loss that becomes NaN or inf stops the run with a diagnosis
  (:func:`transformer_course.train.numerics.non_finite_loss_message`), and non-finite weights are
  never written over a good checkpoint; a failed save raises an error that carries the history;
- ``torch.distributed``: started by ``torchrun``, every process trains on its own batches and
  ``DistributedDataParallel`` averages the gradients.

The step itself is :func:`train_step`, the five lines 11_training shows; :func:`train` is an
outline around it, and the machinery lives in small modules of its own: :mod:`.train_config`
(settings, presets, History), :mod:`._train_run` (device, DDP, resume, checkpoints, loss
syncing), :mod:`.interrupts` (signals) and :mod:`.evaluation` (validation losses).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from .. import _checks as check
from ..checkpoint import (
    CheckpointSaveError,
    NonFiniteWeightsError,
    load_checkpoint,
    save_checkpoint,
)
from ..diagnostics import warn_if_initial_loss_off
from ..i18n import _
from ..machine import unwrap
from ..model import MODEL_PRESETS, model_preset  # a recipe's model half; 11 imports it here
from .config import ON_INTERRUPT, PRESETS, History, TrainConfig, with_preset
from .evaluation import evaluate, sampled_loss
from .interrupts import STOP_SIGNALS, InterruptGuard, StepWatch
from .numerics import NonFiniteLossError
from .run import (
    Run,
    after_step,
    close_bar,
    open_bar,
    record,
    resume,
    save,
    start_run,
    sync_losses,
)

__all__ = [
    "MODEL_PRESETS", "ON_INTERRUPT", "PRESETS", "STOP_SIGNALS", "History", "TrainConfig",
    "evaluate", "load_checkpoint", "lr_at", "make_optimizer", "model_preset", "sampled_loss",
    "save_checkpoint", "train", "train_step", "with_preset",
]  # fmt: skip

#: The errors that end a run for good; each carries the run's History as ``.history``.
FATAL = (NonFiniteLossError, NonFiniteWeightsError, CheckpointSaveError)


def lr_at(
    step: int, *, steps: int, lr: float, warmup: int = 0, min_lr: float | None = None
) -> float:
    """The learning rate of (0-based) ``step``: linear warm-up, then a cosine down to ``min_lr``.

    Warm-up: lr · (step + 1) / warmup for the first ``warmup`` steps (small updates while Adam's
    moment estimates are still poor). Then lr_min + ½ (lr − lr_min)(1 + cos(π p)) with p the
    fraction of the remaining steps done. ``min_lr=None`` means lr / 10; past ``steps`` it stays
    at ``min_lr``.
    """
    floor = lr / 10 if min_lr is None else min_lr
    if step < warmup:
        return lr * (step + 1) / warmup
    if steps <= warmup:
        return lr
    progress = min(1.0, (step - warmup) / max(1, steps - warmup))
    return floor + 0.5 * (lr - floor) * (1.0 + math.cos(math.pi * progress))


def make_optimizer(
    model: nn.Module, lr: float = 1e-3, weight_decay: float = 0.1, betas=(0.9, 0.95)
) -> torch.optim.Optimizer:
    """AdamW with weight decay on the weight matrices only (introduced in 11_training).

    Biases and norm gains are left undecayed: shrinking them toward zero only fights the
    normalisation. The fused implementation (one pass over each tensor instead of a dozen) is
    used where PyTorch has it — CUDA, the CPU and MPS in recent versions; measured on a two-core
    CPU it is 4–8× faster than the default for the 6.8 M-parameter full-vocabulary model.
    Elsewhere ``foreach`` batches the updates. All three compute the same update.
    """
    check.instance("model", model, nn.Module, expected="torch.nn.Module")
    params = [p for p in unwrap(model).parameters() if p.requires_grad]
    if not params:
        raise ValueError(_("model has no trainable parameters"))
    seen: set[int] = set()
    decay, no_decay = [], []
    for p in params:
        if id(p) in seen:  # tied weights appear once
            continue
        seen.add(id(p))
        (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), fused=True)
    # An older PyTorch, or a device without the fused kernel:
    except (RuntimeError, ValueError, TypeError):
        return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), foreach=True)


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float | None = None,
    grad_clip: float | None = None,
    autocast: contextlib.AbstractContextManager | None = None,
) -> torch.Tensor:
    """One optimisation step, the body of the training loop (introduced in 11_training).

    ``x`` [B, T] are input ids and ``y`` [B, T] the next tokens; ``model(x, y)`` returns
    ``(logits [B, T, V], loss)``. The step: set the learning rate ``lr`` (None keeps the
    optimizer's), forward under ``autocast`` (e.g. ``machine.autocast_context``), clear the old
    gradients, backward, clip the gradient norm to ``grad_clip`` (None: no clipping), update the
    weights. Returns the loss, a detached scalar tensor still on the model's device (reading it
    with ``float()`` waits for the device; ``train`` reads fifty at a time).
    """
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    with autocast if autocast is not None else contextlib.nullcontext():
        _logits, loss = model(x, y)  # (B, T) -> (B, T, V), scalar mean cross-entropy
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.detach()


def _prepared_run(model, train_ids, val_ids, config: TrainConfig, optimizer, meta):
    """The run :func:`train` steps through: its data and optimizer (``make_optimizer`` unless one
    is given), the state of a checkpoint it resumes, and its open progress bar."""
    run = start_run(model, train_ids, val_ids, config, meta)
    if optimizer is None:
        optimizer = make_optimizer(run.module, lr=config.lr, weight_decay=config.weight_decay)
    run.optimizer = optimizer
    resume(run)
    open_bar(run)
    return run


def train(
    model: nn.Module,
    train_ids: Sequence[int] | torch.Tensor,
    val_ids: Sequence[int] | torch.Tensor,
    config: TrainConfig | None = None,
    *,
    optimizer: torch.optim.Optimizer | None = None,
    callback: Callable[[int, History], None] | None = None,
    meta: dict[str, Any] | None = None,
) -> History:
    """Train ``model`` (any module with ``forward(idx, targets) -> (logits, loss)``); return its History.

    ``train_ids`` [N_train] and ``val_ids`` [N_val] are 1-D token streams (``data.train_val_split``);
    each step draws x, y [B, T] from ``train_ids`` with a generator seeded by ``config.seed`` (plus
    the process rank) and runs :func:`train_step`. With ``config.checkpoint_path`` set, checkpoints
    are written on their intervals, at the end and on an interrupt, and an existing one is resumed
    (``config.resume``) exactly: step count, optimizer, history and random state. ``meta`` (e.g. the
    compact vocabulary) goes into every checkpoint. ``callback(steps_done, history)`` runs after
    every step; raising KeyboardInterrupt there is how 11_training simulates pressing stop.

    Ctrl-C, SIGTERM or SIGHUP stop the run after the current step with a checkpoint; the history
    comes back with ``interrupted=True`` (``on_interrupt="return"``) or the interrupt is re-raised.
    A NaN/inf loss raises ``numerics.NonFiniteLossError``, a failed save
    ``checkpoint.CheckpointSaveError``, non-finite weights ``checkpoint.NonFiniteWeightsError``;
    each carries the History as ``.history``, and no earlier checkpoint is overwritten.
    """
    run = _prepared_run(model, train_ids, val_ids, config or TrainConfig(), optimizer, meta)
    started = time.perf_counter()
    guard, watch = InterruptGuard(announce=run.rank == 0), StepWatch(run.optimizer)
    try:
        with guard, watch:
            _steps(run, guard, callback)
    except KeyboardInterrupt:
        close_bar(run, started)
        if guard.forced or watch.updating:
            # A second Ctrl-C can land anywhere, even inside optimizer.step() with the weights
            # half-updated: keep the last good checkpoint rather than overwrite it.
            raise
        _stopped(run, guard.signal_name or "KeyboardInterrupt")
        if run.config.on_interrupt == "raise":
            raise
        return run.history
    except FATAL as exc:
        # The run cannot go on, but its loss curve is kept: the error carries it.
        close_bar(run, started)
        exc.history = run.history
        raise
    close_bar(run, started)
    return run.history


def _steps(
    run: Run, guard: InterruptGuard, callback: Callable[[int, History], None] | None
) -> None:
    """The loop: from the step a resumed run stopped at to ``config.steps``."""
    config = run.config
    vocab_size = getattr(getattr(run.module, "config", None), "vocab_size", None)
    last_save = time.monotonic()
    for step in range(run.history.steps, config.steps):
        lr = lr_at(
            step, steps=config.steps, lr=config.lr, warmup=config.warmup, min_lr=config.final_lr
        )
        x, y = run.next_batch()  # (B, T)
        loss = train_step(
            run.model,
            run.optimizer,
            x,
            y,
            lr=lr,
            grad_clip=config.grad_clip,
            autocast=run.autocast(),
        )
        if step == 0 and run.rank == 0 and vocab_size is not None:  # ≈ ln V?
            warn_if_initial_loss_off(loss, vocab_size)
        record(run, loss, lr)
        last_save = after_step(run, step + 1, guard, last_save, callback)


def _stopped(run: Run, stopped_by: str) -> None:
    """After an interrupt between steps: mark the history, sync its losses and save."""
    history = run.history
    history.interrupted, history.stopped_by = True, stopped_by
    try:
        sync_losses(run)
        if run.checkpoint_path is not None:
            save(run)
    except FATAL as exc:
        exc.history = history
        raise
