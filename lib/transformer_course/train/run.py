"""The machinery around ``train``'s loop (11_training), one concern per function.

``train`` (in :mod:`transformer_course.train`) reads as an outline: :func:`start_run` prepares a
:class:`Run` (device, DistributedDataParallel, seeds), ``train`` gives it an optimizer, and
:func:`resume` continues from a checkpoint; each step's
loss goes through :func:`record`, and :func:`after_step` does what comes after an optimisation
step on its interval: copy the losses to the host, validate, update the progress bar, call the
callback, save a checkpoint, honour a stop request. Under ``torch.distributed`` the processes
agree on stopping and saving (:func:`agree`) before any of them acts.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import distributed as dist
from torch import nn

from .. import _checks as check
from .. import data, machine
from ..checkpoint import load_checkpoint, non_finite_tensors, save_checkpoint
from ..diagnostics import perplexity
from ..i18n import _
from ..machine import dist_info, unwrap
from .config import History, TrainConfig
from .evaluation import evaluate
from .interrupts import InterruptGuard
from .numerics import NonFiniteLossError, non_finite_loss_message

#: Losses stay on the device for this many steps before one sync copies them to the history.
SYNC_EVERY = 50


@dataclass
class Run:
    """One training run's state: what ``train`` needs besides the loop's own variables."""

    config: TrainConfig
    module: nn.Module  # the plain model: evaluated and saved
    model: nn.Module  # what a step calls: ``module``, or its DistributedDataParallel wrapper
    device: torch.device
    generator: torch.Generator  # draws the batches
    train_ids: torch.Tensor  # (N_train,)
    val_ids: torch.Tensor  # (N_val,)
    optimizer: torch.optim.Optimizer | None = None  # ``train`` sets it before :func:`resume`
    rank: int = 0
    world: int = 1
    distributed: bool = False
    checkpoint_path: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    history: History = field(default_factory=History)
    weights_finite_at_start: bool = True
    compute_dtype: torch.dtype = torch.float32
    unsynced_losses: list[torch.Tensor] = field(default_factory=list)  # each (), on the device
    bar: Any = None

    @property
    def tokens_per_step(self) -> int:
        return self.config.batch_size * self.config.context_length * self.world

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The next training batch x, y [B, T], on the run's device."""
        x, y = data.get_batch(
            self.train_ids,
            self.config.batch_size,
            self.config.context_length,
            generator=self.generator,
        )
        return x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)

    def autocast(self):
        return machine.autocast_context(self.device, self.config.autocast)


def start_run(
    model: nn.Module,
    train_ids: Sequence[int] | torch.Tensor,
    val_ids: Sequence[int] | torch.Tensor,
    config: TrainConfig,
    meta: dict[str, Any] | None,
) -> Run:
    """Check the arguments, move the model to its device, wrap it for DDP and seed the run.

    The optimizer is ``train``'s to choose; :func:`resume` then continues from a checkpoint.
    """
    check.instance("config", config, TrainConfig)
    check.instance("model", model, nn.Module, expected="torch.nn.Module")
    streams = {
        "train_ids": data.as_ids(train_ids, "train_ids").cpu(),
        "val_ids": data.as_ids(val_ids, "val_ids").cpu(),
    }
    check_fits(model, config, streams)
    distributed, rank, world = dist_info()
    device = machine.pick_device(config.device)
    module = unwrap(model).to(device)
    module.train()
    run = Run(
        config=config,
        module=module,
        model=_ddp(model, module, device, distributed),
        device=device,
        generator=torch.Generator().manual_seed(config.seed + rank),
        train_ids=streams["train_ids"],
        val_ids=streams["val_ids"],
        rank=rank,
        world=world,
        distributed=distributed,
        checkpoint_path=Path(config.checkpoint_path) if config.checkpoint_path else None,
        meta=dict(meta or {}),
    )
    torch.manual_seed(config.seed + rank)
    return run


def resume(run: Run) -> None:
    """Continue from the run's checkpoint, if any (weights, optimizer, history, random state),
    and note what the loop checks against: finite starting weights, the compute dtype."""
    _resume(run)
    run.weights_finite_at_start = not non_finite_tensors(run.module.state_dict())
    run.compute_dtype = (
        machine.autocast_dtype(run.device) if run.config.autocast else None
    ) or next(run.module.parameters()).dtype


def _ddp(model: nn.Module, module: nn.Module, device: torch.device, distributed: bool) -> nn.Module:
    """The model a step calls: as given, or wrapped in DistributedDataParallel under torchrun."""
    if not distributed or isinstance(model, nn.parallel.DistributedDataParallel):
        return model if model is not module else module
    device_ids = [device.index] if device.type == "cuda" and device.index is not None else None
    return nn.parallel.DistributedDataParallel(module, device_ids=device_ids)


def _resume(run: Run) -> None:
    """Continue from ``run.checkpoint_path`` if it exists: weights, optimizer, history, RNG."""
    path = run.checkpoint_path
    if path is None or not run.config.resume or not path.is_file():
        return
    saved = load_checkpoint(path, run.module, run.optimizer)
    run.history = History.from_dict(saved.get("history", {}))
    states = saved.get("rng") or []
    if len(states) == run.world:
        _set_rng_state(states[run.rank], run.generator, run.device)
    run.history.interrupted = False
    run.history.stopped_by = ""


def check_fits(model: nn.Module, config: TrainConfig, streams: dict[str, torch.Tensor]) -> None:
    """Refuse a context longer than the model's, or ids beyond its vocabulary, before training."""
    model_config = getattr(unwrap(model), "config", None)
    limit = getattr(model_config, "context_length", None)
    if limit is not None and config.context_length > limit:
        raise ValueError(
            _(
                "context_length={context_length} is longer than the model's "
                "context_length={limit}; train with a shorter context or build a model with a "
                "longer one"
            ).format(context_length=config.context_length, limit=limit)
        )
    vocab = getattr(model_config, "vocab_size", None)
    for name, ids in streams.items():
        if ids.numel() < config.context_length + 1:
            raise ValueError(
                _(
                    "{name} has {n_ids} tokens; it needs at least context_length + 1 = {needed}"
                ).format(name=name, n_ids=ids.numel(), needed=config.context_length + 1)
            )
        if vocab is not None and int(ids.max()) >= vocab:
            raise ValueError(
                _(
                    "{name} holds token id {largest} but the model's vocab_size is {vocab}; encode"
                    " the ids with the same vocabulary the model was built for (compact ids for a "
                    "compact model)"
                ).format(name=name, largest=int(ids.max()), vocab=vocab)
            )


def _rng_state(generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    return {
        "batches": generator.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
    }


def _set_rng_state(state: dict[str, Any], generator: torch.Generator, device: torch.device) -> None:
    generator.set_state(state["batches"])
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and state.get("cuda") is not None:
        torch.cuda.set_rng_state(state["cuda"], device)


def save(run: Run) -> None:
    """Write the checkpoint (rank 0), with every process's random state so a resume is exact."""
    states: list[Any] = [_rng_state(run.generator, run.device)]
    if run.distributed:
        states = [None] * run.world
        dist.all_gather_object(states, _rng_state(run.generator, run.device))
    if run.rank == 0 and run.checkpoint_path is not None:
        save_checkpoint(
            run.checkpoint_path, run.module, run.optimizer,
            step=run.history.steps, history=run.history.as_dict(), rng=states,
            train_config=asdict(run.config), world_size=run.world, **run.meta,
        )  # fmt: skip
    if run.distributed:
        dist.barrier()


def validate(run: Run) -> None:
    """Score the whole validation split and append it to the history."""
    config = run.config
    loss = evaluate(
        run.module,
        run.val_ids,
        config.context_length,
        config.eval_batch_size,
        run.device,
        config.autocast,
    )
    run.history.val_loss.append(loss)
    run.history.val_step.append(run.history.steps)


def agree(stop: bool, save_now: bool, run: Run) -> tuple[bool, bool]:
    """Whether to stop, and whether to save, after this step. Under DDP the processes agree first:
    a signal reaches them at slightly different moments and their clocks differ, and one that
    stopped or saved alone would leave the others waiting for it in the next collective call."""
    if not run.distributed:
        return stop, save_now
    flags = torch.tensor([float(stop), float(save_now)], device=run.device)  # (2,)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    return bool(flags[0].item()), bool(flags[1].item())


def record(run: Run, loss: torch.Tensor, lr: float) -> None:
    """Keep a step's loss (still on the device) and its learning rate."""
    run.unsynced_losses.append(loss)
    run.history.lr.append(lr)
    run.history.tokens += run.tokens_per_step


def sync_losses(run: Run) -> None:
    """Move the unsynced losses into the history (one device sync per call, not per step),
    and stop with a diagnosis at the first one that is not finite."""
    if not run.unsynced_losses:
        return
    history = run.history
    first = len(history.train_loss)
    history.train_loss.extend(torch.stack(run.unsynced_losses).float().cpu().tolist())
    run.unsynced_losses.clear()
    bad = next(
        (i for i in range(first, history.steps) if not math.isfinite(history.train_loss[i])), None
    )
    if run.distributed:  # every process stops at the same sync, or the others would wait forever
        flag = torch.tensor([0.0 if bad is None else 1.0], device=run.device)  # (1,)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if bad is None and flag.item() > 0:
            bad = history.steps - 1
    if bad is not None:
        _stop_at_non_finite(run, bad)


def _stop_at_non_finite(run: Run, bad: int) -> None:
    history = run.history
    # Keep the history up to the step that broke: what came after it is NaN anyway.
    dropped = history.steps - (bad + 1)
    del history.train_loss[bad + 1 :]
    del history.lr[bad + 1 :]
    history.tokens -= dropped * run.tokens_per_step
    loss_value = history.train_loss[bad]
    raise NonFiniteLossError(
        non_finite_loss_message(
            step=bad + 1,
            lr=history.lr[bad],
            dtype=run.compute_dtype,
            loss=loss_value if not math.isfinite(loss_value) else float("nan"),
            recent_losses=history.train_loss[max(0, bad - 200) : bad],
            weights_finite_at_start=run.weights_finite_at_start,
        ),
        step=bad + 1,
    )


def open_bar(run: Run) -> None:
    """The progress bar (rank 0 only, and only when ``config.progress``)."""
    if run.config.progress and run.rank == 0:
        from ..progress import progress_bar

        start = min(run.history.steps, run.config.steps)
        run.bar = progress_bar(
            total=run.config.steps, initial=start, desc=_("training"), unit="step"
        )


def close_bar(run: Run, started: float) -> None:
    """Add this call's time to the history and close the bar."""
    run.history.seconds += time.perf_counter() - started
    if run.bar is not None:
        run.bar.close()


def _show(run: Run, **values: str) -> None:
    if run.bar is not None:
        run.bar.set_postfix(loss=f"{run.history.train_loss[-1]:.2f}", **values, refresh=False)


def after_step(
    run: Run,
    done: int,
    guard: InterruptGuard,
    last_save: float,
    callback: Callable[[int, History], None] | None,
) -> float:
    """Everything due after step ``done`` (1-based); returns the time of the last save.

    Raises KeyboardInterrupt when every process has agreed to stop (``guard.requested`` is read
    last, so a signal that arrives during the callback stops after this same step).
    """
    config, history = run.config, run.history
    if len(run.unsynced_losses) >= SYNC_EVERY or done == config.steps:
        sync_losses(run)
        _show(run, ppl=f"{perplexity(history.train_loss[-1]):.0f}")
    if (config.eval_interval and done % config.eval_interval == 0) or done == config.steps:
        sync_losses(run)
        validate(run)
        _show(
            run,
            val=f"{history.val_loss[-1]:.2f}",
            val_ppl=f"{perplexity(history.val_loss[-1]):.0f}",
        )
    if run.bar is not None:
        run.bar.update(1)
    if callback is not None:
        sync_losses(run)
        callback(done, history)
    by_time = (
        run.checkpoint_path is not None
        and config.checkpoint_seconds > 0
        and time.monotonic() - last_save >= config.checkpoint_seconds
    )
    stop, save_due = agree(guard.requested, by_time, run)
    if run.checkpoint_path is not None and (
        done == config.steps
        or (config.checkpoint_interval and done % config.checkpoint_interval == 0)
        or save_due
    ):
        sync_losses(run)
        save(run)
        last_save = time.monotonic()
    if stop:
        raise KeyboardInterrupt
    return last_save
