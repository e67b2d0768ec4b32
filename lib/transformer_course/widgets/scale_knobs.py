"""The √d_k explorer of 05_scale: how the head size d_k spreads the scores q·k and saturates softmax.

:func:`score_sample` draws random unit-variance queries and keys and returns their scores,
:func:`score_statistics` summarises them (variance, largest weight, entropy), and
:func:`scale_view` draws the score histogram and the softmax of one row; :func:`scale_widget`
is the thin ipywidgets wrapper (a d_k slider and a "scale by 1/√d_k" checkbox).
"""

from __future__ import annotations

import functools
import math

import matplotlib.pyplot as plt
import numpy as np
import seaborn
import torch
from matplotlib.figure import Figure

from .. import attention
from ..attention import entropy
from ..i18n import _
from . import figure_output

MAX_D_K = 4096
#: The widget's largest d_k; the histogram's x-range is fixed to ±4·√(it) so that turning the
#: slider visibly widens (unscaled) or keeps (scaled) the spread, instead of the axis rescaling.
WIDGET_MAX_D_K = 1024
SCORE_RANGE = 4 * math.sqrt(WIDGET_MAX_D_K)


def check_knobs(d_k: int, n_keys: int = 16, row: int = 0) -> str | None:
    """A message explaining why these knob values cannot be drawn, or ``None`` when they are fine."""
    if isinstance(d_k, bool) or not isinstance(d_k, int) or not 1 <= d_k <= MAX_D_K:
        return _("d_k must be an integer between 1 and {MAX_D_K} (got {d_k!r}).").format(
            MAX_D_K=MAX_D_K, d_k=d_k
        )
    if isinstance(n_keys, bool) or not isinstance(n_keys, int) or n_keys < 2:
        return _("n_keys must be an integer of at least 2 (got {n_keys!r}).").format(n_keys=n_keys)
    if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < n_keys:
        return _("row must be between 0 and n_keys − 1 = {last} (got {row!r}).").format(
            last=n_keys - 1, row=row
        )
    return None


def score_sample(d_k: int, *, scaled: bool, n_keys: int = 16, seed: int = 0) -> torch.Tensor:
    """Scores [n_keys, n_keys] of random queries and keys with unit-variance entries (05_scale).

    Entry (i, j) is q_i · k_j, divided by √d_k when ``scaled``. The draw depends only on
    ``seed``, ``d_k`` and ``n_keys``, so switching the scale on and off shows the same vectors.
    """
    problem = check_knobs(d_k, n_keys)
    if problem is not None:
        raise ValueError(problem)
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(n_keys, d_k, generator=generator)  # (T, d_k)
    k = torch.randn(n_keys, d_k, generator=generator)  # (T, d_k)
    scores = q @ k.T  # (T, d_k) @ (d_k, T) -> (T, T)
    return scores / math.sqrt(d_k) if scaled else scores  # (T, T)


def score_statistics(
    d_k: int, *, scaled: bool, n_keys: int = 16, seed: int = 0
) -> dict[str, float]:
    """Variance of the scores, the mean largest softmax weight of a row and the mean row entropy."""
    scores = score_sample(d_k, scaled=scaled, n_keys=n_keys, seed=seed)  # (T, T)
    weights = attention.softmax(scores)  # (T, T)
    return {
        "score variance": float(scores.var()),
        "mean max weight": float(weights.amax(dim=-1).mean()),
        "mean entropy": float(entropy(weights).mean()),
        "uniform entropy": math.log(n_keys),
    }


def scale_view(
    d_k: int = 16, scaled: bool = True, row: int = 0, n_keys: int = 16, seed: int = 0
) -> Figure | str:
    """Left: histogram of the scores; right: the softmax weights of one row. A message for bad knobs."""
    problem = check_knobs(d_k, n_keys, row)
    if problem is not None:
        return problem
    scores = score_sample(d_k, scaled=scaled, n_keys=n_keys, seed=seed)  # (T, T)
    weights = attention.softmax(scores)  # (T, T)
    stats = score_statistics(d_k, scaled=scaled, n_keys=n_keys, seed=seed)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    values = scores.flatten().numpy()  # (T·T,)
    bins = np.linspace(-SCORE_RANGE, SCORE_RANGE, 65)  # the same bins for every knob setting
    seaborn.histplot(values.clip(-SCORE_RANGE, SCORE_RANGE), bins=bins, color="tab:blue", ax=left)
    left.set_xlim(-SCORE_RANGE, SCORE_RANGE)
    label = "q·k / √d_k" if scaled else _("q·k (unscaled)")
    left.set_title(
        _("scores {label}, d_k = {d_k}: variance {variance:.2f}").format(
            label=label, d_k=d_k, variance=stats["score variance"]
        ),
        fontsize=10,
    )
    left.set_xlabel(
        _("score (fixed range ±{limit:.0f}; outliers in the edge bins)").format(limit=SCORE_RANGE)
    )
    left.set_ylabel(_("count"))
    right.bar(range(n_keys), weights[row].numpy(), color="tab:orange")
    right.set_ylim(0, 1)
    right.set_title(
        _(
            "softmax of row {row}: max {top:.2f}, entropy {entropy:.2f} (uniform {uniform:.2f})"
        ).format(
            row=row,
            top=float(weights[row].max()),
            entropy=float(entropy(weights[row])),
            uniform=math.log(n_keys),
        ),
        fontsize=9,
    )
    right.set_xticks(range(n_keys))  # every key labelled, none skipped
    right.set_xlabel(_("key"))
    right.set_ylabel(_("weight"))
    return fig


def scale_widget(d_k: int = 16, n_keys: int = 16):
    """A d_k slider, a scale checkbox and a row slider over :func:`scale_view` (05_scale)."""
    import ipywidgets as widgets

    size = widgets.IntSlider(value=d_k, min=1, max=WIDGET_MAX_D_K, description="d_k")
    scaled = widgets.Checkbox(value=True, description=_("scale by 1/√d_k"))
    row = widgets.IntSlider(value=0, min=0, max=n_keys - 1, description=_("row"))

    view = functools.partial(scale_view, n_keys=n_keys)
    out = figure_output(view, {"d_k": size, "scaled": scaled, "row": row})
    return widgets.VBox([widgets.HBox([size, scaled, row]), out])
