"""Diagnosing a training run whose numbers stopped being numbers (introduced in 11_training).

A loss of NaN or inf means the run can learn nothing more: every later update is NaN too. What
helps is knowing *where* it happened (the step, the learning rate, the dtype of the computation)
and the most likely reason. :func:`non_finite_loss_message` builds that sentence, so the training
loop, the command line and any other code that watches a loss say it the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ..i18n import _

#: Above this peak learning rate, AdamW updates (about lr per weight per step, whatever the
#: gradient) overwhelm the small models of the course; their recipes peak at 1e-3 to 3e-3.
HIGH_LR = 0.05


class NonFiniteLossError(ArithmeticError):
    """Training stopped because the loss became NaN or inf (11_training).

    ``step`` is the 1-based step whose loss was not finite, ``history`` the run's ``History`` up
    to and including that step (set by ``train()``), so the loss curve is not lost.
    """

    def __init__(self, message: str, step: int, history: Any = None) -> None:
        super().__init__(message)
        self.step = step
        self.history = history


def likely_cause(
    lr: float,
    dtype: torch.dtype,
    recent_losses: Sequence[float] = (),
    weights_finite_at_start: bool = True,
) -> str:
    """The most probable reason a loss became non-finite, with what to change, in one sentence.

    Checked in order: weights already broken when the run began (a diverged checkpoint), float16
    overflow, a learning rate far above the course's recipes, a loss that was climbing before it
    broke (divergence), and otherwise the two usual suspects together.
    """
    if not weights_finite_at_start:
        return _(
            "the weights were already NaN or inf when this run began (a diverged model or "
            "checkpoint); start from a fresh model or an earlier checkpoint"
        )
    if dtype == torch.float16:
        return _(
            "float16 overflow: it cannot hold values above 65,504; compute in bfloat16 or "
            "float32, or scale the loss (torch.amp.GradScaler)"
        )
    if lr > HIGH_LR:
        return _(
            "the learning rate {lr:.3g} is far too high for this model (the course's recipes peak "
            "at 1e-3 to 3e-3): each update overshoots until the numbers overflow; lower it, "
            "e.g. to {lower:.3g}"
        ).format(lr=lr, lower=min(lr / 100, 3e-3))
    finite = [x for x in recent_losses if math.isfinite(x)]
    if len(finite) >= 2 and finite[-1] > 1.5 * min(finite):
        return _(
            "training diverged: the loss climbed from {lowest:.3f} to {last:.3f} "
            "before it broke; lower the learning rate (e.g. {lower:.3g}) or clip gradients"
        ).format(lowest=min(finite), last=finite[-1], lower=lr / 10)
    return _(
        "a learning rate too high for this model (try {lower:.3g}), or NaN/inf already in "
        "the inputs or the weights"
    ).format(lower=lr / 10)


def non_finite_loss_message(
    step: int,
    lr: float,
    dtype: torch.dtype,
    loss: float = float("nan"),
    recent_losses: Sequence[float] = (),
    weights_finite_at_start: bool = True,
) -> str:
    """One message for a non-finite loss: its step, learning rate, dtype and likely cause.

    ``step`` is 1-based (the step whose loss it was), ``dtype`` the dtype the forward pass
    computed in (the autocast dtype, else the weights'), ``recent_losses`` the finite losses
    before it, oldest first.
    """
    value = "NaN" if math.isnan(loss) else ("inf" if loss > 0 else "-inf")
    name = str(dtype).replace("torch.", "")
    cause = likely_cause(lr, dtype, recent_losses, weights_finite_at_start)
    return _(
        "the training loss became {value} at step {step} (learning rate {lr:.3g}, {name} "
        "computations). Likely cause: {cause}. Training stopped there; non-finite weights are "
        "never saved, so an earlier checkpoint is intact."
    ).format(value=value, step=step, lr=lr, name=name, cause=cause)
