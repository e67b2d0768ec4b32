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
  (:func:`transformer_course.numerics.non_finite_loss_message`), and non-finite weights are
  never written over a good checkpoint; a failed save raises an error that carries the history;
- ``torch.distributed``: started by ``torchrun``, every process trains on its own batches and
  ``DistributedDataParallel`` averages the gradients.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch
from torch import distributed as dist
from torch import nn

from . import data
from .checkpoint import (
    CheckpointSaveError,
    NonFiniteWeightsError,
    load_checkpoint,
    non_finite_tensors,
    save_checkpoint,
    unwrap,
)
from .device import autocast_dtype, pick_device
from .diagnostics import perplexity, warn_if_initial_loss_off
from .numerics import NonFiniteLossError, non_finite_loss_message

ON_INTERRUPT = ("return", "raise")


@dataclass
class TrainConfig:
    """Everything a training run needs besides the model and the data.

    The defaults are the course's CPU recipe of 11_training (``PRESETS["cpu-demo"]``); the seed's
    own recipe is ``PRESETS["seed"]``. ``min_lr=None`` means ``lr / 10``. ``eval_interval=0``
    evaluates only at the end; ``checkpoint_interval=0`` checkpoints only at the end and on an
    interrupt. ``checkpoint_seconds`` also checkpoints whenever that much time has passed since
    the last save (0 = never by time), so a SIGKILL or a power cut loses at most about that much
    training. ``device=None`` picks CUDA, MPS or the CPU (see ``device.pick_device``).
    """

    steps: int = 700
    batch_size: int = 32
    context_length: int = 16
    lr: float = 3e-3
    min_lr: float | None = None
    warmup: int = 50
    weight_decay: float = 0.1
    grad_clip: float | None = 1.0
    eval_interval: int = 100
    eval_batch_size: int = 512
    seed: int = 0
    device: str | None = None
    autocast: bool = True
    checkpoint_path: str | None = None
    checkpoint_interval: int = 0
    checkpoint_seconds: float = 60.0
    resume: bool = True
    progress: bool = True
    on_interrupt: str = "return"

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "context_length", "eval_batch_size"):
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("warmup", "eval_interval", "checkpoint_interval", "seed"):
            _check_int(name, getattr(self, name), minimum=0)
        if not (isinstance(self.lr, (int, float)) and self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if self.min_lr is not None and not (0 <= self.min_lr <= self.lr):
            raise ValueError(f"min_lr must lie in [0, lr={self.lr}], got {self.min_lr}")
        if not (
            isinstance(self.checkpoint_seconds, (int, float))
            and not isinstance(self.checkpoint_seconds, bool)
            and self.checkpoint_seconds >= 0
            and math.isfinite(self.checkpoint_seconds)
        ):
            raise ValueError(
                "checkpoint_seconds must be a number of seconds ≥ 0 (0 = no time-based saves), "
                f"got {self.checkpoint_seconds!r}"
            )
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be ≥ 0, got {self.weight_decay}")
        if self.grad_clip is not None and self.grad_clip <= 0:
            raise ValueError(
                f"grad_clip must be positive or None (no clipping), got {self.grad_clip}"
            )
        if self.on_interrupt not in ON_INTERRUPT:
            raise ValueError(
                f"on_interrupt must be one of {ON_INTERRUPT}, got {self.on_interrupt!r}"
            )
        if self.checkpoint_path is not None:
            self.checkpoint_path = str(self.checkpoint_path)

    @property
    def final_lr(self) -> float:
        """Where the cosine ends: ``min_lr``, or ``lr / 10`` when it is None."""
        return self.lr / 10 if self.min_lr is None else self.min_lr


def _check_int(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")


#: Named recipes. "seed" is the backbone source's: constant lr 1e-3, batch 4, 5000 steps, AdamW's
#: default weight decay, no clipping. "cpu-demo" is what 11_training trains in about two minutes
#: on one CPU core (compact vocabulary). "gpu" is a longer run with a longer context for a CUDA GPU.
PRESETS: dict[str, TrainConfig] = {
    "seed": TrainConfig(
        steps=5000,
        batch_size=4,
        lr=1e-3,
        min_lr=1e-3,
        warmup=0,
        weight_decay=0.01,
        grad_clip=None,
        eval_interval=500,
    ),
    "cpu-demo": TrainConfig(),
    "gpu": TrainConfig(
        steps=2000, batch_size=64, context_length=64, lr=1.5e-3, warmup=100, eval_interval=250
    ),
}

#: The ``GPTConfig`` arguments (all but ``vocab_size``) that go with each recipe. The seed's
#: sizes and its sinusoidal table throughout: GPTConfig's default ``embedding_scale`` puts the
#: token vectors at the table's scale (11_training measures why that matters).
MODEL_PRESETS: dict[str, dict[str, Any]] = {
    "seed": {"context_length": 16, "d_model": 64, "n_heads": 4, "n_layers": 8, "dropout": 0.1},
    "cpu-demo": {
        "context_length": 16,
        "d_model": 64,
        "n_heads": 4,
        "n_layers": 8,
        "dropout": 0.1,
        "positional": "sinusoidal",
    },
    "gpu": {
        "context_length": 64,
        "d_model": 128,
        "n_heads": 8,
        "n_layers": 8,
        "dropout": 0.2,
        "positional": "sinusoidal",
    },
}


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
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    params = [p for p in unwrap(model).parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no trainable parameters")
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
    except (
        RuntimeError,
        ValueError,
        TypeError,
    ):  # an older PyTorch, or a device without the kernel
        return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), foreach=True)


@dataclass
class History:
    """What a run recorded: the training loss of every step, the lr, and validation losses.

    ``val_step[i]`` is the number of steps done when ``val_loss[i]`` was measured.
    ``interrupted`` is True when the run stopped early on a KeyboardInterrupt or a signal;
    ``stopped_by`` then names it ("SIGINT", "SIGTERM", "SIGHUP", or "KeyboardInterrupt" when one
    was raised in the loop, e.g. by a callback).
    """

    train_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    val_step: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    stopped_by: str = ""

    @property
    def steps(self) -> int:
        """How many optimisation steps the run has done."""
        return len(self.train_loss)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> History:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    def smoothed_train_loss(self, window: int = 50) -> tuple[list[int], list[float]]:
        """Training loss averaged over consecutive ``window``-step blocks: (steps, means)."""
        losses = torch.tensor(self.train_loss, dtype=torch.float64)  # (S,)
        usable = (losses.numel() // window) * window
        means = losses[:usable].view(-1, window).mean(dim=1)  # (S / window,)
        ends = list(range(window, usable + 1, window))
        return ends, means.tolist()


def _autocast(device: torch.device, enabled: bool):
    dtype = autocast_dtype(device) if enabled else None
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def _as_ids(ids: Sequence[int] | torch.Tensor, name: str) -> torch.Tensor:
    tensor = ids if isinstance(ids, torch.Tensor) else torch.as_tensor(list(ids), dtype=torch.long)
    if tensor.dim() != 1:
        raise ValueError(
            f"{name} must be a 1-D stream of token ids, got shape {tuple(tensor.shape)}"
        )
    return tensor.long().cpu()


def _dist_info() -> tuple[bool, int, int]:
    if dist.is_available() and dist.is_initialized():
        return True, dist.get_rank(), dist.get_world_size()
    return False, 0, 1


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
    _check_int("context_length", context_length, minimum=1)
    _check_int("batch_size", batch_size, minimum=1)
    stream = _as_ids(ids, "ids")
    windows = (stream.numel() - 1) // context_length
    if windows < 1:
        raise ValueError(
            f"ids has {stream.numel()} tokens, fewer than context_length + 1 = {context_length + 1}; "
            "use a shorter context or more text"
        )
    run_device = (
        torch.device(device) if device is not None else next(unwrap(model).parameters()).device
    )
    x_all = stream[: windows * context_length].view(windows, context_length)  # (W, T)
    y_all = stream[1 : windows * context_length + 1].view(windows, context_length)  # (W, T)
    distributed, rank, world = _dist_info()
    net = unwrap(model)  # the plain module: DDP's forward would try to sync buffers mid-evaluation
    was_training = net.training
    net.eval()
    total = torch.zeros((), dtype=torch.float64, device=run_device)
    count = 0
    try:
        for start in range(rank * batch_size, windows, batch_size * world):
            x = x_all[start : start + batch_size].to(run_device)  # (b, T)
            y = y_all[start : start + batch_size].to(run_device)  # (b, T)
            with _autocast(run_device, autocast):
                _, loss = net(x, y)  # mean over b·T tokens
            total += loss.double() * y.numel()
            count += y.numel()
    finally:
        net.train(was_training)
    if distributed:
        stats = torch.stack(
            [total, torch.tensor(float(count), dtype=torch.float64, device=run_device)]
        )  # (2,)
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
    was_training = net.training
    net.eval()
    losses = []
    try:
        for _ in range(batches):
            x, y = data.get_batch(
                _as_ids(ids, "ids"), batch_size, context_length, generator=generator
            )  # (B, T)
            _, loss = net(x.to(device), y.to(device))
            losses.append(float(loss))
    finally:
        net.train(was_training)
    return sum(losses) / len(losses)


#: The signals that stop a run after its current step, with a checkpoint: Ctrl-C (and Jupyter's
#: stop button), SIGTERM (kill, timeout, docker stop, batch schedulers, torchrun) and SIGHUP
#: (a closed terminal). SIGHUP does not exist on Windows.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class _InterruptGuard:
    """Turns Ctrl-C, SIGTERM and SIGHUP into a request that the loop honours between steps.

    An interrupt that lands inside ``optimizer.step()`` would leave half-updated weights; with
    this guard the step finishes, a checkpoint is written, then the loop stops. A second signal
    interrupts at once (no checkpoint). Only the main thread can install signal handlers; in other
    threads the guard does nothing and a KeyboardInterrupt arrives wherever it arrives.
    """

    def __init__(self, announce: bool = True) -> None:
        self.requested = False
        self.forced = False
        self.signal_name = ""
        self.announce = announce
        self._previous: dict[int, Any] = {}

    def _handler(self, signum, frame) -> None:  # noqa: ARG002 - signal handler signature
        if self.requested:
            self.forced = True
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        if self.announce:
            # os.write, not print: a handler may run in the middle of another write to stderr.
            with contextlib.suppress(OSError):
                os.write(
                    2,
                    f"\n{self.signal_name}: stopping after this step and saving a checkpoint "
                    "(a second Ctrl-C stops at once, without saving)\n".encode(),
                )

    def _restore(self) -> None:
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(
                    signum,
                    previous
                    if previous is not None
                    else (signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL),
                )
        self._previous = {}

    def __enter__(self) -> _InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                # ValueError/OSError: e.g. an embedded interpreter without signals
                with contextlib.suppress(ValueError, OSError):
                    self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self._restore()


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


def _gather(obj: Any, distributed: bool, world: int) -> list[Any]:
    if not distributed:
        return [obj]
    out: list[Any] = [None] * world
    dist.all_gather_object(out, obj)
    return out


def _agree(stop: bool, save: bool, distributed: bool, device: torch.device) -> tuple[bool, bool]:
    """Whether to stop, and whether to save, after this step. Under DDP the processes agree first:
    a signal reaches them at slightly different moments and their clocks differ, and one that
    stopped or saved alone would leave the others waiting for it in the next collective call."""
    if not distributed:
        return stop, save
    flags = torch.tensor([float(stop), float(save)], device=device)  # (2,)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    return bool(flags[0].item()), bool(flags[1].item())


def _check_fits(model: nn.Module, config: TrainConfig, streams: dict[str, torch.Tensor]) -> None:
    model_config = getattr(unwrap(model), "config", None)
    limit = getattr(model_config, "context_length", None)
    if limit is not None and config.context_length > limit:
        raise ValueError(
            f"context_length={config.context_length} is longer than the model's context_length={limit}; "
            "train with a shorter context or build a model with a longer one"
        )
    vocab = getattr(model_config, "vocab_size", None)
    for name, ids in streams.items():
        if ids.numel() < config.context_length + 1:
            raise ValueError(
                f"{name} has {ids.numel()} tokens; it needs at least context_length + 1 = {config.context_length + 1}"
            )
        if vocab is not None and int(ids.max()) >= vocab:
            raise ValueError(
                f"{name} holds token id {int(ids.max())} but the model's vocab_size is {vocab}; encode the "
                "ids with the same vocabulary the model was built for (compact ids for a compact model)"
            )


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
    """Train ``model`` (any module with ``forward(idx, targets) -> (logits, loss)``) and return its History.

    ``train_ids`` [N_train] and ``val_ids`` [N_val] are 1-D token streams (e.g. from
    ``data.train_val_split``); each step draws x, y of shape [B, T] from ``train_ids``.
    Batches come from a generator seeded with ``config.seed`` (plus the process rank), and the
    global torch seed is set the same way, so a run is reproducible on a given machine.

    With ``config.checkpoint_path`` set, a checkpoint is written every ``checkpoint_interval``
    steps, at the end and on KeyboardInterrupt, and an existing checkpoint there is resumed
    (``config.resume``): same step count, optimizer state, history and random state. ``meta``
    (e.g. the compact vocabulary's ids) is stored in every checkpoint. ``callback(steps_done,
    history)`` runs after every step; raising KeyboardInterrupt there is how 11_training
    simulates pressing stop.

    On an interrupt (Ctrl-C, SIGTERM, SIGHUP) the run stops after the current step, writes the
    checkpoint, and returns the history with ``interrupted=True`` (``on_interrupt="return"``) or
    re-raises (``"raise"``). A checkpoint is also written every ``checkpoint_seconds``.

    A loss that becomes NaN or inf raises ``numerics.NonFiniteLossError`` (step, learning rate,
    dtype, likely cause); a failed save raises ``checkpoint.CheckpointSaveError``; weights that
    are not finite raise ``checkpoint.NonFiniteWeightsError`` rather than being saved. Each
    carries the run's History as ``.history``, and no earlier checkpoint is overwritten.
    """
    config = config or TrainConfig()
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    train_stream, val_stream = _as_ids(train_ids, "train_ids"), _as_ids(val_ids, "val_ids")
    _check_fits(model, config, {"train_ids": train_stream, "val_ids": val_stream})

    distributed, rank, world = _dist_info()
    device = pick_device(config.device)
    raw = unwrap(model).to(device)
    raw.train()
    if optimizer is None:
        optimizer = make_optimizer(raw, lr=config.lr, weight_decay=config.weight_decay)
    net: nn.Module = model if model is not raw else raw
    if distributed and not isinstance(model, nn.parallel.DistributedDataParallel):
        net = nn.parallel.DistributedDataParallel(
            raw, device_ids=[device.index] if device.type == "cuda" and device.index is not None else None
        )

    generator = torch.Generator().manual_seed(config.seed + rank)
    torch.manual_seed(config.seed + rank)
    history = History()
    checkpoint_path = Path(config.checkpoint_path) if config.checkpoint_path else None
    if checkpoint_path is not None and config.resume and checkpoint_path.is_file():
        saved = load_checkpoint(checkpoint_path, raw, optimizer)
        history = History.from_dict(saved.get("history", {}))
        states = saved.get("rng") or []
        if len(states) == world:
            _set_rng_state(states[rank], generator, device)
        history.interrupted = False
        history.stopped_by = ""
    weights_finite_at_start = not non_finite_tensors(raw.state_dict())
    compute_dtype = (autocast_dtype(device) if config.autocast else None) or next(
        raw.parameters()
    ).dtype

    def checkpoint() -> None:
        states = _gather(_rng_state(generator, device), distributed, world)
        if rank == 0 and checkpoint_path is not None:
            save_checkpoint(
                checkpoint_path,
                raw,
                optimizer,
                step=history.steps,
                history=history.as_dict(),
                rng=states,
                train_config=asdict(config),
                world_size=world,
                **(meta or {}),
            )
        if distributed:
            dist.barrier()

    def validate() -> None:
        history.val_loss.append(
            evaluate(
                raw,
                val_stream,
                config.context_length,
                config.eval_batch_size,
                device,
                config.autocast,
            )
        )
        history.val_step.append(history.steps)

    bar = None
    if config.progress and rank == 0:
        from .progress import progress_bar

        bar = progress_bar(
            total=config.steps,
            initial=min(history.steps, config.steps),
            desc="training",
            unit="step",
        )
    pending: list[torch.Tensor] = []

    def flush() -> None:
        """Move the pending losses into the history (one device sync per call, not per step),
        and stop with a diagnosis at the first one that is not finite."""
        if not pending:
            return
        first = len(history.train_loss)
        history.train_loss.extend(torch.stack(pending).float().cpu().tolist())
        pending.clear()
        bad = next(
            (i for i in range(first, len(history.train_loss)) if not math.isfinite(history.train_loss[i])),
            None,
        )
        if distributed:  # every process stops at the same flush, or the others would wait forever
            flag = torch.tensor([0.0 if bad is None else 1.0], device=device)  # (1,)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            if bad is None and flag.item() > 0:
                bad = len(history.train_loss) - 1
        if bad is None:
            return
        # Keep the history up to the step that broke: what came after it is NaN anyway.
        dropped = len(history.train_loss) - (bad + 1)
        del history.train_loss[bad + 1 :]
        del history.lr[bad + 1 :]
        history.tokens -= dropped * tokens_per_step
        loss_value = history.train_loss[bad]
        raise NonFiniteLossError(
            non_finite_loss_message(
                step=bad + 1,
                lr=history.lr[bad],
                dtype=compute_dtype,
                loss=loss_value if not math.isfinite(loss_value) else float("nan"),
                recent_losses=history.train_loss[max(0, bad - 200) : bad],
                weights_finite_at_start=weights_finite_at_start,
            ),
            step=bad + 1,
        )

    tokens_per_step = config.batch_size * config.context_length * world
    started = time.perf_counter()
    last_save = time.monotonic()
    updating = False
    guard = _InterruptGuard(announce=rank == 0)
    try:
        with guard:
            step = history.steps
            while step < config.steps:
                lr = lr_at(
                    step,
                    steps=config.steps,
                    lr=config.lr,
                    warmup=config.warmup,
                    min_lr=config.final_lr,
                )
                for group in optimizer.param_groups:
                    group["lr"] = lr
                x, y = data.get_batch(
                    train_stream, config.batch_size, config.context_length, generator=generator
                )
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)  # (B, T)
                with _autocast(device, config.autocast):
                    logits, loss = net(x, y)  # (B, T) -> (B, T, V), scalar mean cross-entropy
                if step == 0 and rank == 0 and isinstance(logits, torch.Tensor):  # ≈ ln V?
                    warn_if_initial_loss_off(loss, logits.shape[-1])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.grad_clip is not None:
                    nn.utils.clip_grad_norm_(raw.parameters(), config.grad_clip)
                updating = True
                optimizer.step()
                updating = False
                step += 1
                pending.append(loss.detach())
                history.lr.append(lr)
                history.tokens += tokens_per_step
                if len(pending) >= 50 or step == config.steps:
                    flush()
                    if bar is not None:
                        bar.set_postfix(
                            loss=f"{history.train_loss[-1]:.2f}",
                            ppl=f"{perplexity(history.train_loss[-1]):.0f}",
                            refresh=False,
                        )
                if (
                    config.eval_interval and step % config.eval_interval == 0
                ) or step == config.steps:
                    flush()
                    validate()
                    if bar is not None:
                        bar.set_postfix(
                            loss=f"{history.train_loss[-1]:.2f}",
                            val=f"{history.val_loss[-1]:.2f}",
                            val_ppl=f"{perplexity(history.val_loss[-1]):.0f}",
                            refresh=False,
                        )
                if bar is not None:
                    bar.update(1)
                if callback is not None:
                    flush()
                    callback(step, history)
                stop, save_due = _agree(
                    guard.requested,
                    checkpoint_path is not None
                    and config.checkpoint_seconds > 0
                    and time.monotonic() - last_save >= config.checkpoint_seconds,
                    distributed,
                    device,
                )
                if checkpoint_path is not None and (
                    step == config.steps
                    or (config.checkpoint_interval and step % config.checkpoint_interval == 0)
                    or save_due
                ):
                    flush()
                    checkpoint()
                    last_save = time.monotonic()
                if stop:
                    raise KeyboardInterrupt
    except KeyboardInterrupt:
        history.seconds += time.perf_counter() - started
        if bar is not None:
            bar.close()
        if guard.forced or updating:
            # A second Ctrl-C can land anywhere, even inside optimizer.step() with the weights
            # half-updated: keep the last good checkpoint rather than overwrite it.
            raise
        history.interrupted = True
        history.stopped_by = guard.signal_name or "KeyboardInterrupt"
        try:
            flush()
            if checkpoint_path is not None:
                checkpoint()
        except (NonFiniteLossError, NonFiniteWeightsError, CheckpointSaveError) as exc:
            exc.history = history
            raise
        if config.on_interrupt == "raise":
            raise
        return history
    except (NonFiniteLossError, NonFiniteWeightsError, CheckpointSaveError) as exc:
        # The run cannot go on, but its loss curve is kept: the error carries it.
        history.seconds += time.perf_counter() - started
        if bar is not None:
            bar.close()
        exc.history = history
        raise
    history.seconds += time.perf_counter() - started
    if bar is not None:
        bar.close()
    return history


def with_preset(name: str, **overrides: Any) -> TrainConfig:
    """A copy of ``PRESETS[name]`` with some fields changed, e.g. ``with_preset("seed", steps=100)``."""
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
    return replace(PRESETS[name], **overrides)


def model_preset(name: str, vocab_size: int, **overrides: Any):
    """The ``GPTConfig`` of recipe ``name`` for ``vocab_size`` tokens (fields in ``overrides`` win)."""
    from .model import (
        GPTConfig,  # imported here: training works for any model with the same forward
    )

    if name not in MODEL_PRESETS:
        raise ValueError(f"preset must be one of {sorted(MODEL_PRESETS)}, got {name!r}")
    return GPTConfig(vocab_size=vocab_size, **{**MODEL_PRESETS[name], **overrides})
