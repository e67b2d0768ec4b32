"""How long will a training run take? (11_training, 13_modern_blocks)

:func:`estimate_training_time` times a few steps of a copy of the model and extrapolates to the
whole run. Its text carries the ⏱ marker (:data:`TIMING_MARK`) that the notebook tests replace,
because timings differ from machine to machine. Notebooks 11 and 13 import it from :mod:`transformer_course.diagnostics`, which forwards the
names here on first use.
"""

from __future__ import annotations

import contextlib
import copy
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from .. import _checks
from ..i18n import _
from ..machine import unwrap
from .config import TrainConfig
from .evaluation import evaluate

#: The timing marker: tests/nbval_sanitize.cfg replaces "⏱ …" up to the end of the line.
TIMING_MARK = "⏱"


@dataclass(frozen=True)
class RunEstimate:
    """What :func:`estimate_training_time` measured and extrapolated (11_training)."""

    steps: int
    seconds_per_step: float
    evaluations: int
    seconds_per_evaluation: float
    probe_steps: int

    @property
    def total_seconds(self) -> float:
        return self.steps * self.seconds_per_step + self.evaluations * self.seconds_per_evaluation

    def __str__(self) -> str:
        total = self.total_seconds
        shown = f"{total:.0f} s" if total < 120 else f"{total / 60:.1f} min"
        shown = f"{total:.1f} s" if total < 10 else shown
        values = dict(
            mark=TIMING_MARK,
            shown=shown,
            steps=self.steps,
            ms=self.seconds_per_step * 1000,
            probe_steps=self.probe_steps,
            evaluations=self.evaluations,
            seconds=self.seconds_per_evaluation,
        )
        if self.evaluations == 1:
            return _(
                "{mark} about {shown} for {steps:,} steps on this machine ({ms:.0f} ms per step, "
                "median of {probe_steps} timed steps; {evaluations} validation × {seconds:.2f} s)"
            ).format(**values)
        return _(
            "{mark} about {shown} for {steps:,} steps on this machine ({ms:.0f} ms per step, "
            "median of {probe_steps} timed steps; {evaluations} validations × {seconds:.2f} s)"
        ).format(**values)

    __repr__ = __str__


@contextlib.contextmanager
def _global_rng_restored():
    """Put torch's global CPU (and CUDA) random state back as it was, whatever runs inside."""
    cpu_state = torch.get_rng_state()
    cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    try:
        yield
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_states is not None:
            torch.cuda.set_rng_state_all(cuda_states)


def estimate_training_time(
    model: nn.Module,
    train_ids: Sequence[int] | torch.Tensor,
    val_ids: Sequence[int] | torch.Tensor,
    config: Any,
    probe_steps: int = 5,
) -> RunEstimate:
    """Time ``probe_steps`` training steps and one validation, and extrapolate to ``config``'s
    run (11_training, 13_modern_blocks).

    Trains a *copy* of ``model`` (the original, the global random state and any checkpoint are
    left untouched) with ``train``'s own loop, so the estimate includes everything a real step
    does. The first step (allocations, warm-up) is not counted; the median of the others is.
    ``train_ids`` [N] and ``val_ids`` [M] are 1-D token streams, as for ``train``.
    """
    _checks.instance("model", model, nn.Module, expected="torch.nn.Module")
    _checks.instance("config", config, TrainConfig)
    _checks.integer("probe_steps", probe_steps)
    clone = copy.deepcopy(unwrap(model))
    with _global_rng_restored():
        gaps, eval_seconds = _time_probe_run(clone, train_ids, val_ids, config, probe_steps)
    interval = config.eval_interval
    evaluations = (config.steps // interval + (config.steps % interval > 0)) if interval else 1
    return RunEstimate(
        steps=config.steps,
        seconds_per_step=statistics.median(gaps),
        evaluations=evaluations,
        seconds_per_evaluation=eval_seconds,
        probe_steps=len(gaps),
    )


def _time_probe_run(
    clone: nn.Module, train_ids, val_ids, config: TrainConfig, probe_steps: int
) -> tuple[list[float], float]:
    """Train ``clone`` for ``probe_steps + 2`` steps with ``train``'s loop (no checkpoints, no
    progress bar, no validation on the way), then run one validation; return the seconds of the
    ``probe_steps`` steps after the first, and of the validation."""
    from . import train  # the package's loop: this module sits inside the package it times

    stamps: list[float] = []
    probe = replace(
        config,
        steps=probe_steps + 2,
        eval_interval=0,
        checkpoint_path=None,
        checkpoint_interval=0,
        progress=False,
    )
    # Stamps after steps 1 … n+2; the last step is followed by a validation, so the step
    # times are the n gaps between stamps 1 … n+1.
    train(
        clone,
        train_ids,
        val_ids,
        probe,
        callback=lambda step, history: stamps.append(time.perf_counter()),
    )
    device = next(clone.parameters()).device
    started = time.perf_counter()
    evaluate(clone, val_ids, config.context_length, config.eval_batch_size, device, config.autocast)
    eval_seconds = time.perf_counter() - started
    gaps = [b - a for a, b in zip(stamps[: probe_steps + 1], stamps[1 : probe_steps + 1])]
    return gaps, eval_seconds
