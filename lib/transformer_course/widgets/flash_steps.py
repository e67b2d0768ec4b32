"""The online-softmax stepper of 15_flash_attention: one row read block by block, with the
running maximum m, the running sum l and the rescale factor exp(m_old − m_new) after each block.

:func:`online_softmax_view` is a plain function (tested without a browser);
:func:`online_softmax_widget` is the thin ipywidgets wrapper.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from ..attention.flash import online_softmax_steps
from ..i18n import _
from . import figure_output

__all__ = ["online_softmax_view", "online_softmax_widget"]


def online_softmax_view(row: torch.Tensor, block: int, step: int) -> Figure | str:
    """The row [T] as bars after ``step`` blocks (1 … number of blocks): blocks already read in
    blue, the block just read in orange, the rest grey; the running m as a line; the title gives
    m, l and the rescale of this step. A message string instead for a bad ``step`` or ``block``."""
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        return _("block must be a whole number ≥ 1, got {block!r}.").format(block=block)
    if not isinstance(row, torch.Tensor) or row.dim() != 1 or row.numel() < 1:
        return _("row must be a 1-D tensor [T].")
    steps = online_softmax_steps(row, block)
    if not isinstance(step, int) or not 1 <= step <= len(steps):
        return _("step must be between 1 and {n}, got {step!r}.").format(n=len(steps), step=step)
    now = steps[step - 1]
    T = row.numel()
    colours = [
        "tab:blue" if i < now.start else "tab:orange" if i < now.start + block else "0.8"
        for i in range(T)
    ]
    fig, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
    ax.bar(range(T), row.tolist(), color=colours)
    ax.axhline(now.m, color="tab:red", linestyle="--", label=_("running max m"))
    ax.set_xlabel(_("position in the row"))
    ax.set_ylabel(_("score"))
    ax.legend(loc="lower right")
    ax.set_title(
        _(
            "block {step}/{n}: m = {m:.3f}, l = {l:.4f}, rescale exp(m_old − m_new) = {r:.4f}"
        ).format(step=step, n=len(steps), m=now.m, l=now.l, r=now.rescale)
    )
    return fig


def online_softmax_widget(row: torch.Tensor, block: int = 4):
    """A step slider over :func:`online_softmax_view` for one row [T] read ``block`` at a time."""
    import ipywidgets as widgets

    n = len(online_softmax_steps(row, block))
    step = widgets.IntSlider(value=1, min=1, max=n, step=1, description=_("block"))
    out = figure_output(functools.partial(online_softmax_view, row, block), {"step": step})
    return widgets.VBox([step, out])
