"""What goes into a training run and what comes out (introduced in 11_training).

:class:`TrainConfig` holds every setting of a run besides the model and the data; its fields
carry their help text, from which the command line builds its options
(:mod:`transformer_course.cli`), so a new field reaches ``python -m transformer_course train``
with no other edit. ``PRESETS`` are the named recipes the notebooks, the command line and the
benchmarks share (the model's half of each recipe is ``model.MODEL_PRESETS``). :class:`History` is what ``train`` returns and stores in its checkpoints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import torch

from .. import _checks as check
from ..i18n import N_, _

ON_INTERRUPT = ("return", "raise")


def _option(default: Any, help: str, **cli: Any) -> Any:  # noqa: A002 - argparse's word
    """A dataclass field whose metadata the command line reads: ``help``, and optionally
    ``option`` (its spelling), ``group`` ("checkpoints"), ``zero_is_none`` or ``cli=False``."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass
class TrainConfig:
    """Everything a training run needs besides the model and the data.

    The defaults are the course's CPU recipe of 11_training (``PRESETS["cpu-demo"]``); the seed's
    own recipe is ``PRESETS["seed"]``. ``min_lr=None`` means ``lr / 10``. ``eval_interval=0``
    evaluates only at the end; ``checkpoint_interval=0`` checkpoints only at the end and on an
    interrupt. ``checkpoint_seconds`` also checkpoints whenever that much time has passed since
    the last save (0 = never by time), so a SIGKILL or a power cut loses at most about that much
    training. ``device=None`` picks CUDA, MPS or the CPU (see ``machine.pick_device``).
    """

    steps: int = _option(700, "optimisation steps in total")
    batch_size: int = _option(32, "sequences per step")
    context_length: int = _option(16, "tokens per sequence, also the model's context")
    lr: float = _option(3e-3, "peak learning rate")
    min_lr: float | None = _option(
        None, "learning rate at the end of the cosine (default: lr / 10)"
    )
    warmup: int = _option(50, "steps of linear warm-up")
    weight_decay: float = _option(0.1, "AdamW weight decay on matrices")
    grad_clip: float | None = _option(
        1.0, "clip the gradient norm to this; 0 = no clipping", zero_is_none=True
    )
    eval_interval: int = _option(
        100, "validate (whole validation split) every N steps; 0 = only at the end"
    )
    eval_batch_size: int = _option(512, "windows per forward pass when validating")
    seed: int = _option(0, "seed for the initial weights, the batches and dropout")
    device: str | None = _option(
        None, "cpu, cuda or mps (default: the best available; under torchrun, cuda:LOCAL_RANK)"
    )
    autocast: bool = _option(True, "train in float32 even on CUDA (default: bf16 autocast there)")
    checkpoint_path: str | None = _option(
        None, "where the checkpoint is written and resumed from", option="--checkpoint",
        group="checkpoints",
    )  # fmt: skip
    checkpoint_interval: int = _option(
        0, "also checkpoint every N steps; 0 = only at the end and on Ctrl-C", group="checkpoints"
    )
    checkpoint_seconds: float = _option(
        60.0,
        "also checkpoint whenever this many seconds of training have passed since the last "
        "save, so a killed run loses at most that much; 0 = never by time",
        group="checkpoints",
    )
    resume: bool = _option(
        True, "ignore an existing checkpoint and start from step 0 (it is overwritten)",
        option="--fresh", group="checkpoints",
    )  # fmt: skip
    progress: bool = _option(True, "hide the progress bar")
    on_interrupt: str = _option("return", "what train() does after saving on Ctrl-C", cli=False)

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "context_length", "eval_batch_size"):
            check.integer(name, getattr(self, name), minimum=1)
        for name in ("warmup", "eval_interval", "checkpoint_interval", "seed"):
            check.integer(name, getattr(self, name), minimum=0)
        check.number("lr", self.lr, above=0)
        if self.min_lr is not None and not (0 <= check.number("min_lr", self.min_lr) <= self.lr):
            raise ValueError(
                _("min_lr must lie in [0, lr={lr}], got {min_lr}").format(
                    lr=self.lr, min_lr=self.min_lr
                )
            )
        check.number("weight_decay", self.weight_decay, minimum=0)
        if self.grad_clip is not None:
            check.number("grad_clip", self.grad_clip, above=0, hint=N_("or None (no clipping)"))
        check.number(
            "checkpoint_seconds",
            self.checkpoint_seconds,
            minimum=0,
            hint=N_("(0 = no time-based saves)"),
        )
        check.choice("on_interrupt", self.on_interrupt, ON_INTERRUPT)
        if self.checkpoint_path is not None:
            self.checkpoint_path = str(self.checkpoint_path)

    @property
    def final_lr(self) -> float:
        """Where the cosine ends: ``min_lr``, or ``lr / 10`` when it is None."""
        return self.lr / 10 if self.min_lr is None else self.min_lr


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


def with_preset(name: str, **overrides: Any) -> TrainConfig:
    """A copy of ``PRESETS[name]`` with some fields changed, e.g. ``with_preset("seed", steps=100)``."""
    if name not in PRESETS:
        raise ValueError(
            _("preset must be one of {presets}, got {name!r}").format(
                presets=sorted(PRESETS), name=name
            )
        )
    return replace(PRESETS[name], **overrides)
