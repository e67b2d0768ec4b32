"""The picture of a toy run (16_induction_heads): repeat loss and induction score per step."""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from .. import _checks as check
from ..i18n import N_, _
from ..viz import _new_axes as new_axes
from ..viz import label
from .data import RepeatBatch

__all__ = ["plot_repeat_row", "plot_toy_run"]

_COLUMNS = ("step", "repeat_loss", "induction")


def plot_toy_run(
    history: pd.DataFrame, phase_change_step: int | None = None, ax: Axes | None = None
) -> Axes:
    """Repeat loss (left axis) and the best induction score (right axis) against the step, the
    phase change marked by a dashed line (introduced in 16_induction_heads). Returns the
    left axes; the right one is ``ax.right``."""
    if not isinstance(history, pd.DataFrame) or not set(_COLUMNS) <= set(history.columns):
        raise ValueError(
            _("history must be a DataFrame with the columns {columns}").format(
                columns=", ".join(_COLUMNS)
            )
        )
    _fig, ax = new_axes(ax, (7.0, 3.2))
    ax.plot(history["step"], history["repeat_loss"], color="C0", label=label("repeat loss"))
    ax.set_xlabel(label("training step"))
    ax.set_ylabel(label("repeat loss (nats)"), color="C0")
    right = ax.twinx()
    right.plot(history["step"], history["induction"], color="C1", label=label("induction score"))
    right.set_ylabel(label("induction score"), color="C1")
    right.set_ylim(0.0, 1.0)
    if phase_change_step is not None:
        ax.axvline(phase_change_step, color="0.4", linestyle="--")
        ax.annotate(
            label("phase change (step {step})", step=phase_change_step),
            (phase_change_step, 0.95),
            xycoords=("data", "axes fraction"),
            xytext=(4, 0),
            textcoords="offset points",
            va="top",
            fontsize=9,
        )
    ax.right = right
    return ax


def plot_repeat_row(batch: RepeatBatch, row: int = 0, ax: Axes | None = None) -> Axes:
    """One row of ``batch`` (a :class:`~.data.RepeatBatch`, tokens [B, T]) as a strip of cells
    with the token ids written in them: filler (and whatever follows the copies) grey, the first
    copy blue, the repeat orange (introduced in 16_induction_heads)."""
    check.instance("batch", batch, RepeatBatch, hint=N_("(from repeated_tokens)"))
    B, T = batch.tokens.shape
    row = check.integer("row", row, 0, B - 1)
    f, p = int(batch.filler[row]), int(batch.period[row])
    # the repeat's positions: where batch.repeat holds, plus the last token it predicts
    repeat = batch.repeat[row].clone()  # (T,)
    repeat[1:] |= batch.repeat[row, :-1]
    kinds = [("0.85", label("filler")), ("C0", label("first copy")), ("C1", label("repeat"))]
    _fig, ax = new_axes(ax, (min(0.24 * T, 16.0), 1.6))
    for t in range(T):
        kind = 1 if f <= t < f + p else 2 if repeat[t] else 0
        ax.add_patch(Rectangle((t, 0), 1, 1, facecolor=kinds[kind][0], edgecolor="white"))
        ax.text(t + 0.5, 0.5, str(int(batch.tokens[row, t])), ha="center", va="center", fontsize=7)
    ax.set_xlim(0, T)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel(label("position"))
    handles = [Rectangle((0, 0), 1, 1, facecolor=colour) for colour, _text in kinds]
    ax.legend(
        handles,
        [text for _colour, text in kinds],
        loc="lower center",
        ncols=3,
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        fontsize=8,
    )
    return ax
