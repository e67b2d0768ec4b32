"""The positional-encoding explorer of 03_positional_encoding.

Sliders for context length, d_model, base and one dimension redraw the sinusoidal table as a
heatmap and that dimension's wave. :func:`positional_view` is the plain function (it returns a
Figure, or a message string for knob values that make no table); :func:`positional_widget` is
the thin ipywidgets wrapper.
"""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from .. import viz
from ..i18n import _
from ..positional import sinusoidal_encoding
from . import figure_output


def check_knobs(context_length: int, d_model: int, base: float, dimension: int) -> str | None:
    """A message explaining why these knob values give no table, or ``None`` when they are fine."""
    if context_length < 1:
        return _("context length must be at least 1 (got {context_length}).").format(
            context_length=context_length
        )
    if d_model < 2 or d_model % 2:
        return _(
            "d_model = {d_model} is refused: sine and cosine come in pairs (dimensions 2i and 2i+1), so d_model must be even. Try {suggestion}."
        ).format(d_model=d_model, suggestion=d_model + 1 if d_model % 2 else 2)
    if not (math.isfinite(base) and base > 1.0):
        return _(
            "base must be greater than 1 and finite (got {base}); with base ≤ 1 no dimension gets a longer wave, and an infinite one gives every dimension past the first pair a constant."
        ).format(base=base)
    # numbers.Integral: a NumPy integer (np.int64(3)) is a whole number too.
    if isinstance(dimension, bool) or not isinstance(dimension, numbers.Integral):
        return _("dimension must be a whole number, a column index (got {dimension!r}).").format(
            dimension=dimension
        )
    if not 0 <= dimension < d_model:
        return _("dimension must be between 0 and d_model − 1 = {last} (got {dimension}).").format(
            last=d_model - 1, dimension=dimension
        )
    return None


def wavelength(dimension: int, d_model: int, base: float = 10000.0) -> float:
    """Wavelength (in positions) of column ``dimension``: 2π · base^(2i/d_model), i = dimension // 2."""
    return 2 * math.pi * base ** (2 * (dimension // 2) / d_model)


def positional_view(
    context_length: int = 16, d_model: int = 64, base: float = 10000.0, dimension: int = 0
) -> Figure | str:
    """The heatmap of the [T, C] table and the wave of one column; a message string for bad knobs."""
    problem = check_knobs(context_length, d_model, base, dimension)
    if problem is not None:
        return problem
    table = sinusoidal_encoding(context_length, d_model, base=base)  # (T, C)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    viz.show_heatmap(
        table,
        ax=left,
        cmap="viridis",
        vmin=-1,
        vmax=1,
        xlabel=_("dimension"),
        ylabel=_("position"),
        title=_("sinusoidal encoding, T={T}, d_model={d_model}").format(
            T=context_length, d_model=d_model
        ),
        max_ticks=8,
    )
    left.axvline(dimension + 0.5, color="red", linewidth=1)  # the column's centre (seaborn cells)
    fine = torch.linspace(0, max(context_length - 1, 1), 400, dtype=torch.float64)  # (400,)
    angle = fine / base ** (2 * (dimension // 2) / d_model)  # (400,)
    wave = torch.sin(angle) if dimension % 2 == 0 else torch.cos(angle)  # (400,)
    right.plot(fine.numpy(), wave.numpy(), color="tab:gray", linewidth=1, label=_("continuous"))
    right.plot(
        range(context_length),
        table[:, dimension].numpy(),
        "o",
        color="red",
        label=_("table entries"),
    )
    kind = "sin" if dimension % 2 == 0 else "cos"
    right.set_title(
        _("dimension {dimension} ({kind}), wavelength {length} positions").format(
            dimension=dimension, kind=kind, length=f"{wavelength(dimension, d_model, base):,.1f}"
        )
    )
    right.set_xlabel(_("position"))
    right.set_ylim(-1.1, 1.1)
    # Below the axes: any corner inside would cover table entries for some knob setting.
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    right.grid(alpha=0.3)
    return fig


def positional_widget(context_length: int = 16, d_model: int = 64, base: float = 10000.0):
    """Sliders for context length, d_model (odd values allowed, and refused with a message),
    base and dimension over :func:`positional_view`."""
    import ipywidgets as widgets

    length = widgets.IntSlider(value=context_length, min=1, max=256, description=_("context"))
    width = widgets.IntSlider(value=d_model, min=1, max=512, description="d_model")
    # min is a multiple of step, so the paper's 10000 is a slider position (min=2 showed 10002).
    base_slider = widgets.FloatSlider(
        value=base, min=100.0, max=20000.0, step=100.0, readout_format=".0f", description=_("base")
    )
    dim = widgets.IntSlider(value=0, min=0, max=max(0, d_model - 1), description=_("dimension"))

    def follow_width(change: dict) -> None:  # the dimension slider ends at the last column
        dim.max = max(0, change["new"] - 1)

    width.observe(follow_width, names="value")

    out = figure_output(
        positional_view,
        {"context_length": length, "d_model": width, "base": base_slider, "dimension": dim},
    )
    return widgets.VBox([widgets.HBox([length, width]), widgets.HBox([base_slider, dim]), out])
