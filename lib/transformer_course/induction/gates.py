"""The gates of 16_induction_heads: checks of a trained toy, its 1-layer control, the ablation
table and the shortcut model (introduced in 16_induction_heads).

They are tools, like 11's ``check_initial_loss``, not exercises: the notebook calls them on the
runs the library trains. Each returns a :class:`Gate` that prints its verdict and the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from ..i18n import _
from .training import ToyRun, measure, toy_probe

__all__ = ["Gate", "check_ablation", "check_control_run", "check_shortcut", "check_toy_run"]

#: The gates at step 2,000 (issue 39): the 2-layer toy, its 1-layer control, the shortcut model.
GATE_STEP, INDUCTION, REPEAT_LOSS, FIRST_LOSS = 2000, 0.5, 1.0, 4.0
CONTROL_REPEAT_LOSS, SHORTCUT_REPEAT_LOSS = 2.3, 3.5
ABLATION_INCREASE = 1.5


@dataclass(frozen=True)
class Gate:
    """A gate's verdict (introduced in 16_induction_heads): ``passed`` and the ``message`` with
    the numbers; printed as "✓ …" or "✗ …", true when it passed."""

    passed: bool
    message: str

    def __str__(self) -> str:
        return ("✓ " if self.passed else "✗ ") + self.message

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.passed


#: The checkers' own probe: filler in every row, a seed no training run or notebook probe uses.
CHECK_PROBE_SEED = 2026


def _run_problem(run: object, layers: int, check: str) -> str | None:
    """Why ``run`` is not a finished :class:`~transformer_course.ToyRun` of a
    ``layers``-layer toy trained for 2,000 steps, or None."""
    if not isinstance(run, ToyRun):
        return _("pass the ToyRun that train_toy returned: `{check}(run)`, got {kind}.").format(
            check=check, kind=type(run).__name__
        )
    if run.model.config.n_layers != layers:
        return _(
            "this run's model has {n} layers; this check wants the {layers}-layer toy."
        ).format(n=run.model.config.n_layers, layers=layers)
    steps = int(run.history["step"].max()) if len(run.history) else 0
    if steps < GATE_STEP:
        return _("the run stopped at step {steps}; the gates are read at step {gate:,}.").format(
            steps=steps, gate=GATE_STEP
        )
    return None


def _fresh_measure(run) -> dict[str, float]:
    """The run's model on a probe with filler that neither training nor the notebook drew."""
    probe = toy_probe(run.model.config, seed=CHECK_PROBE_SEED)
    return measure(run.model, probe)


def check_toy_run(run: object) -> Gate:
    """16_induction_heads: the trained toy passes the gates on a probe with filler it never saw:
    best last-layer induction score ≥ 0.5, repeat loss ≤ 1.0 and first-copy loss ≥ 4.0."""
    problem = _run_problem(run, 2, "check_toy_run")
    if problem:
        return Gate(False, problem)
    m = _fresh_measure(run)
    numbers = _(
        "induction score {induction:.2f}, repeat loss {repeat_loss:.2f}, first-copy loss "
        "{first_loss:.2f}"
    ).format(**m)
    if m["first_loss"] < FIRST_LOSS:
        return Gate(
            False,
            _(
                "{numbers}: the first copy is predictable too, so the data is not random. Draw the "
                "segments with repeated_tokens."
            ).format(numbers=numbers),
        )
    if m["induction"] < INDUCTION or m["repeat_loss"] > REPEAT_LOSS:
        return Gate(
            False,
            _(
                "{numbers} on a fresh probe with filler: no induction head yet (gates: induction ≥ "
                "0.5, repeat loss ≤ 1.0). Trained without filler? Too few steps or a tiny lr?"
            ).format(numbers=numbers),
        )
    return Gate(
        True,
        _(
            "{numbers} on a fresh probe with filler: an induction head formed, and it copies."
        ).format(numbers=numbers),
    )


def check_control_run(run: object) -> Gate:
    """16_induction_heads: the 1-layer control keeps a repeat loss ≥ 2.3 on a probe with filler."""
    problem = _run_problem(run, 1, "check_control_run")
    if problem:
        return Gate(False, problem)
    m = _fresh_measure(run)
    if m["repeat_loss"] < CONTROL_REPEAT_LOSS:
        return Gate(
            False,
            _(
                "repeat loss {repeat_loss:.2f} on a fresh probe with filler: one layer should not "
                "copy this well (expected ≥ 2.3). Is the probe's filler there?"
            ).format(**m),
        )
    return Gate(
        True,
        _(
            "repeat loss {repeat_loss:.2f} against {first_loss:.2f} on the first copy: one layer "
            "cannot find the token after the previous occurrence, so it cannot copy the repeat."
        ).format(**m),
    )


_ABLATION_COLUMNS = ("head", "repeat_loss_increase", "induction_before", "induction_after")


def check_ablation(table: object) -> Gate:
    """16_induction_heads: the ablation table (one row per layer-0 head) names at least one head
    whose removal raises the repeat loss by ≥ 1.5 nats and halves the layer-1 induction score."""
    if not isinstance(table, pd.DataFrame) or not set(_ABLATION_COLUMNS) <= set(table.columns):
        return Gate(
            False,
            _("pass a DataFrame with the columns {columns} (one row per layer-0 head).").format(
                columns=", ".join(_ABLATION_COLUMNS)
            ),
        )
    if len(table) < 2:
        return Gate(
            False,
            _("the table has {n} row(s); ablate every layer-0 head in turn.").format(n=len(table)),
        )
    needed = table[
        (table["repeat_loss_increase"] >= ABLATION_INCREASE)
        & (table["induction_after"] <= table["induction_before"] / 2)
    ]
    if needed.empty:
        worst = table.loc[table["repeat_loss_increase"].idxmax()]
        return Gate(
            False,
            _(
                "no head passes both tests; the largest loss increase is {increase:.2f} nats (head "
                "{head}), induction {before:.2f} → {after:.2f}. Ablate each head of layer 0 on a probe "
                "with filler, in a model that passed check_toy_run."
            ).format(
                increase=worst["repeat_loss_increase"],
                head=int(worst["head"]),
                before=worst["induction_before"],
                after=worst["induction_after"],
            ),
        )
    row = needed.loc[needed["repeat_loss_increase"].idxmax()]
    return Gate(
        True,
        _(
            "without head {head} of layer 0 the repeat loss rises by {increase:.2f} nats and induction "
            "falls from {before:.2f} to {after:.2f}: layer 1's induction head reads that head's output."
        ).format(
            head=int(row["head"]),
            increase=row["repeat_loss_increase"],
            before=row["induction_before"],
            after=row["induction_after"],
        ),
    )


def _repeat_loss(value: object) -> float | None:
    """A repeat loss given as a number or as copy_losses' (first, repeat) pair; None otherwise."""
    if isinstance(value, tuple) and len(value) == 2:
        value = value[1]
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def check_shortcut(in_distribution: object, filler_probe: object) -> Gate:
    """16_induction_heads: the model trained without filler passes its own probe (repeat loss
    ≤ 1.0) and fails the probe with filler (repeat loss ≥ 3.5). Each argument is a repeat loss, or
    the (first, repeat) pair of copy_losses."""
    inside, filler = _repeat_loss(in_distribution), _repeat_loss(filler_probe)
    if inside is None or filler is None:
        return Gate(
            False, _("pass two repeat losses (numbers), or the two pairs copy_losses returns.")
        )
    if inside > REPEAT_LOSS and filler <= REPEAT_LOSS:
        return Gate(False, _("the two probes look swapped: pass the probe without filler first."))
    if inside > REPEAT_LOSS:
        return Gate(
            False,
            _(
                "repeat loss {inside:.2f} on its own data: the shortcut model has not learned its task "
                "yet (expected ≤ 1.0). Train it with filler=(0, 0) for 1,000 steps."
            ).format(inside=inside),
        )
    if filler < SHORTCUT_REPEAT_LOSS:
        return Gate(
            False,
            _(
                "repeat loss {filler:.2f} on the filler probe (expected ≥ 3.5 for a model trained "
                "without filler). Was this probe drawn with filler, toy_probe(config)?"
            ).format(filler=filler),
        )
    return Gate(
        True,
        _(
            "{inside:.2f} nats on its own data, {filler:.2f} with filler: it learned where the copy "
            "starts, not how to find the previous occurrence."
        ).format(inside=inside, filler=filler),
    )
