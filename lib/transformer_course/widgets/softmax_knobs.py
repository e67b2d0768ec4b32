"""The temperature explorer of 07_softmax: softmax(scores / τ) of one row, with its entropy.

:func:`softmax_with_temperature` and :func:`temperature_view` are plain functions (tested
without a browser); :func:`temperature_widget` is the thin ipywidgets wrapper.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from .. import attention
from ..attention import entropy
from ..i18n import _
from ..viz import token_label
from . import figure_output

__all__ = [
    "check_temperature",
    "entropy",
    "softmax_with_temperature",
    "temperature_view",
    "temperature_widget",
]


def check_temperature(temperature: float) -> str | None:
    """A message explaining why ``temperature`` is refused, or ``None`` when it is fine."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        return _("temperature must be a number, got {kind}.").format(
            kind=type(temperature).__name__
        )
    if not math.isfinite(temperature) or temperature <= 0:
        return _(
            "temperature must be a finite number above 0 (got {temperature}); τ → 0 is the arg-max."
        ).format(temperature=temperature)
    return None


def softmax_with_temperature(scores: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(scores / τ) along the last dimension (07_softmax); same shape as ``scores``.

    ``-inf`` (masked) entries stay exactly 0 at every temperature.
    """
    problem = check_temperature(temperature)
    if problem is not None:
        raise ValueError(problem)
    return attention.softmax(attention.divide_by_temperature(scores, temperature))  # (..., S)


def _mark_masked_keys(ax, scores: torch.Tensor) -> None:
    """Hatch a full-height grey bar (with a legend entry) over every ``-inf`` key of ``scores`` [S]."""
    masked = [i for i, s in enumerate(scores.tolist()) if s == float("-inf")]
    if masked:  # a masked key and a key with ~0 weight look alike as bars: mark the masked ones
        ax.bar(
            masked,
            [1.0] * len(masked),
            color="0.85",
            hatch="//",
            edgecolor="0.6",
            label=_("masked key"),
        )
        ax.legend(loc="upper left")


def temperature_view(
    scores: torch.Tensor, temperature: float = 1.0, tokens: Sequence[str] | None = None
) -> Figure | str:
    """The weights of one row of ``scores`` [S] at temperature τ as bars, entropy in the title.

    Returns a message string instead of a figure for a bad temperature or a row that is not 1-D.
    """
    problem = check_temperature(temperature)
    if problem is not None:
        return problem
    if not isinstance(scores, torch.Tensor) or scores.dim() != 1 or scores.numel() < 1:
        return _("scores must be one row, a 1-D tensor [S], got {shape}.").format(
            shape=tuple(getattr(scores, "shape", ()))
        )
    if tokens is not None and len(tokens) != scores.numel():
        return _("tokens must have one entry per score ({n}), got {got}.").format(
            n=scores.numel(), got=len(tokens)
        )
    weights = softmax_with_temperature(scores.detach().float(), temperature)  # (S,)
    finite = int(torch.isfinite(scores).sum())
    fig, ax = plt.subplots(figsize=(9, 3.4), layout="constrained")
    ax.bar(range(scores.numel()), weights.numpy(), color="tab:green")
    _mark_masked_keys(ax, scores)
    labels = (
        [token_label(t) for t in tokens]
        if tokens is not None
        else [str(i) for i in range(scores.numel())]
    )
    ax.set_xticks(range(scores.numel()), labels, rotation=90)
    ax.set_ylim(0, 1)
    ax.set_ylabel(_("weight"))
    uniform = math.log(finite) if finite else 0.0
    ax.set_title(
        _(
            "τ = {temperature:g}: max weight {top:.3f}, entropy {entropy:.3f} nats"
            " (uniform over {finite} keys: {uniform:.3f})"
        ).format(
            temperature=temperature,
            top=float(weights.max()),
            entropy=float(entropy(weights)),
            finite=finite,
            uniform=uniform,
        )
    )
    return fig


def temperature_widget(scores: torch.Tensor, tokens: Sequence[str] | None = None):
    """A temperature slider (0.05 … 5) over :func:`temperature_view` for one row of scores [T]
    (``tokens``: T labels)."""
    import ipywidgets as widgets

    temperature = widgets.FloatSlider(value=1.0, min=0.05, max=5.0, step=0.05, description="τ")

    view = functools.partial(temperature_view, scores, tokens=tokens)
    out = figure_output(view, {"temperature": temperature})
    return widgets.VBox([temperature, out])
