"""The positional-encoding explorer of 03, driven without a browser, and the exercises of 03."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from transformer_course.exercises import positional as ex
from transformer_course.widgets import positional as pv


def closed_form(pos: int, dim: int, d_model: int, base: float) -> float:
    angle = pos / base ** (2 * (dim // 2) / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ((16, 63, 10000.0, 0), "d_model = 63 is refused"),
        ((16, 1, 10000.0, 0), "must be even"),
        ((16, 0, 10000.0, 0), "must be even"),
        ((0, 64, 10000.0, 0), "context length must be at least 1"),
        ((16, 64, 1.0, 0), "base must be greater than 1"),
        ((16, 64, float("inf"), 0), "base must be greater than 1 and finite"),
        ((16, 64, 10000.0, 64), "dimension must be between 0 and"),
    ],
)
def test_bad_knobs_give_a_message(knobs, message):
    result = pv.positional_view(*knobs)
    assert isinstance(result, str) and message in result
    assert pv.check_knobs(*knobs) == result


def test_odd_d_model_suggests_the_next_even():
    assert "Try 64" in pv.positional_view(16, 63)


@pytest.mark.parametrize(
    ("context_length", "d_model", "base", "dimension"),
    [(16, 64, 10000.0, 0), (50, 512, 10000.0, 511), (1, 2, 2.0, 1), (33, 10, 100.0, 7)],
)
def test_view_draws_the_closed_form(context_length, d_model, base, dimension):
    fig = pv.positional_view(context_length, d_model, base, dimension)
    assert isinstance(fig, Figure)
    heatmap_ax, wave_ax = fig.axes[0], fig.axes[1]
    image = heatmap_ax.collections[0].get_array().reshape(context_length, d_model)  # seaborn's mesh
    expected = np.array(
        [[closed_form(p, c, d_model, base) for c in range(d_model)] for p in range(context_length)]
    )
    np.testing.assert_allclose(np.asarray(image), expected, atol=1e-6)
    dots = wave_ax.lines[1].get_ydata()
    np.testing.assert_allclose(dots, expected[:, dimension], atol=1e-6)
    assert f"dimension {dimension}" in wave_ax.get_title()


@pytest.mark.parametrize(
    ("dimension", "d_model", "base"),
    [(0, 64, 10000.0), (10, 64, 10000.0), (63, 64, 10000.0), (5, 8, 100.0)],
)
def test_wavelength_is_the_period(dimension, d_model, base):
    lam = pv.wavelength(dimension, d_model, base)
    torch_free = [closed_form(p, dimension, d_model, base) for p in (0.0, 1.3, 7.0)]
    shifted = [
        (math.sin if dimension % 2 == 0 else math.cos)(
            (p + lam) / base ** (2 * (dimension // 2) / d_model)
        )
        for p in (0.0, 1.3, 7.0)
    ]
    np.testing.assert_allclose(shifted, torch_free, atol=1e-6)
    assert pv.wavelength(0, d_model, base) == pytest.approx(2 * math.pi)


def test_widget_builds_and_accepts_odd_d_model():
    widget = pv.positional_widget()
    sliders = [child for row in widget.children[:2] for child in row.children]
    width = next(s for s in sliders if s.description == "d_model")
    width.value = 63  # the callback prints the refusal instead of raising
    width.value = 8
    dim = next(s for s in sliders if s.description == "dimension")
    assert dim.max == 7  # the dimension slider follows d_model: it ends at the last column
    dim.value = 100  # beyond d_model: the slider stops at the last column, no traceback
    assert dim.value == 7


@pytest.mark.parametrize("base", [10000.0, 100.0, 500.0])
def test_base_slider_can_show_the_value_asked_for(base):
    # The browser snaps a slider to min + k·step (Python does not): with min=2 and step 100 the
    # learner saw 10002 instead of the paper's 10000. The start value must be on that grid.
    widget = pv.positional_widget(base=base)
    slider = next(c for row in widget.children[:2] for c in row.children if c.description == "base")
    steps = (slider.value - slider.min) / slider.step
    assert slider.value == base
    assert steps == pytest.approx(round(steps)), (slider.min, slider.step, slider.value)


# --------------------------------------------------------------------------- exercises of 03


def test_exercises():
    lam = 2 * math.pi * 10000 ** (10 / 64)
    assert ex.check_wavelength(lam)
    assert ex.check_wavelength(torch.tensor(lam))
    assert not ex.check_wavelength(2 * math.pi * 10000 ** (20 / 64))
    assert not ex.check_wavelength(...).answered
    assert ex.check_wavelength(..., hint=True).is_hint


def test_a_numpy_integer_is_a_whole_number_dimension():
    import numpy as np

    assert pv.check_knobs(16, 64, 10000.0, np.int64(3)) is None
