"""Induction heads in a toy you train yourself (introduced in 16_induction_heads).

The face of the package; the pieces live in small modules:

* :mod:`.model` — :class:`ToyConfig` and :class:`AttentionOnlyTransformer`, attention alone.
* :mod:`.data` — :func:`repeated_tokens`: filler, then a random segment repeated.
* :mod:`.metrics` — :func:`previous_token_score`, :func:`induction_score`,
  :func:`copy_losses`, :func:`in_context_score`.
* :mod:`.training` — :func:`train_toy`, :func:`toy_probe`, :func:`measure`,
  :func:`ablation_table`.
* :mod:`.gates` — :func:`check_toy_run`, :func:`check_control_run`, :func:`check_ablation`,
  :func:`check_shortcut`: the checks of trained runs (tools, not exercises).
* :mod:`.plot` — :func:`plot_toy_run`, :func:`plot_repeat_row`.
"""

from .data import RepeatBatch, repeated_tokens
from .gates import Gate, check_ablation, check_control_run, check_shortcut, check_toy_run
from .metrics import copy_losses, in_context_score, induction_score, previous_token_score
from .model import AttentionOnlyTransformer, ToyConfig
from .plot import plot_repeat_row, plot_toy_run
from .training import ToyRun, ablation_table, measure, toy_probe, train_toy

__all__ = [
    "AttentionOnlyTransformer",
    "Gate",
    "RepeatBatch",
    "ToyConfig",
    "ToyRun",
    "ablation_table",
    "check_ablation",
    "check_control_run",
    "check_shortcut",
    "check_toy_run",
    "copy_losses",
    "in_context_score",
    "induction_score",
    "measure",
    "plot_repeat_row",
    "plot_toy_run",
    "previous_token_score",
    "repeated_tokens",
    "toy_probe",
    "train_toy",
]
