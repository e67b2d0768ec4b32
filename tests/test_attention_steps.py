"""The exercise checks of 04–08 and the widget functions of 05_scale and 07_softmax."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from transformer_course.exercises import Feedback, mask, qkv, scale, softmax, v_attention
from transformer_course.widgets import scale_knobs, softmax_knobs

#: The exercises of 04–08, one namespace as when they shared a module.
ex = SimpleNamespace(
    **{**vars(qkv), **vars(scale), **vars(mask), **vars(softmax), **vars(v_attention)}
)

# ---- exercise checks --------------------------------------------------------------------

RIGHT_AND_WRONG = [
    (lambda a: ex.check_split_shape(a, B=2, T=10, C=96, H=8), (2, 8, 10, 12), (2, 10, 8, 12)),
    (lambda a: ex.check_head_of_column(a, column=37), 2, 1),
    (lambda a: ex.check_projection_params(a, d_model=64), 12480, 12288),
    (lambda a: ex.check_head_of_column(a, column=37, d_model=96, n_heads=8), 3, 2),
    (lambda a: ex.check_score_variance(a, d_k=256), 256, 16),
    (lambda a: ex.check_score_variance(a, d_k=100), 100, 10),
    (lambda a: ex.check_visible_keys(a, query=5), 6, 5),
    (ex.check_temperature_limit, 1, 2),
    (lambda a: ex.check_mha_params(a, d_model=64, n_heads=8), 16640, 12480),
]


@pytest.mark.parametrize("check, right, wrong", RIGHT_AND_WRONG)
def test_scalar_checks(check, right, wrong):
    for unanswered in (..., None):
        verdict = check(unanswered)
        assert isinstance(verdict, Feedback) and not verdict.answered and not verdict.correct
    assert check(right).correct, str(check(right))
    verdict = check(wrong)
    assert isinstance(verdict, Feedback) and verdict.answered and not verdict.correct


def test_checks_accept_tensors_and_sizes():
    assert ex.check_head_of_column(torch.tensor(2), column=37)
    assert ex.check_split_shape(torch.empty(2, 8, 10, 12).shape)
    assert ex.check_score_variance(torch.tensor(100.0))


def test_feedback_messages_are_not_printed(capsys):
    ex.check_head_of_column(2)
    ex.check_visible_keys(6, query=5)
    assert capsys.readouterr().out == ""


# ---- 05_scale widget functions ----------------------------------------------------------


def test_score_sample_is_reproducible_and_scaled():
    raw = scale_knobs.score_sample(64, scaled=False, seed=3)
    scaled = scale_knobs.score_sample(64, scaled=True, seed=3)
    assert raw.shape == (16, 16)
    torch.testing.assert_close(scaled, raw / 8.0)
    torch.testing.assert_close(raw, scale_knobs.score_sample(64, scaled=False, seed=3))


def test_score_statistics_show_saturation():
    small = scale_knobs.score_statistics(4, scaled=False, n_keys=64)
    large = scale_knobs.score_statistics(1024, scaled=False, n_keys=64)
    scaled = scale_knobs.score_statistics(1024, scaled=True, n_keys=64)
    assert large["score variance"] > 500 and 0.5 < scaled["score variance"] < 2
    assert large["mean max weight"] > small["mean max weight"] > scaled["mean max weight"] * 0.5
    assert large["mean entropy"] < scaled["mean entropy"] <= scaled["uniform entropy"]
    assert scaled["uniform entropy"] == pytest.approx(math.log(64))


def test_entropy_matches_definition():
    p = torch.tensor([[0.5, 0.25, 0.25, 0.0], [1.0, 0.0, 0.0, 0.0]])
    expected = torch.tensor([-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)), 0.0])
    torch.testing.assert_close(scale_knobs.entropy(p), expected)
    assert scale_knobs.entropy(torch.full((16,), 1 / 16)).item() == pytest.approx(
        math.log(16), rel=1e-6
    )


def test_scale_view_returns_figure_or_message():
    fig = scale_knobs.scale_view(d_k=32, scaled=True, row=3)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    plt.close(fig)
    for bad in [
        dict(d_k=0),
        dict(d_k=10_000),
        dict(d_k=16, row=16),
        dict(d_k=16, row=-1),
        dict(d_k=2.5),
    ]:
        message = scale_knobs.scale_view(**bad)
        assert isinstance(message, str) and message
    with pytest.raises(ValueError, match="d_k"):
        scale_knobs.score_sample(0, scaled=True)


def test_scale_histogram_keeps_its_range_so_the_spread_shows():
    # The review found the x-axis rescaling with the data, which made scaled and unscaled
    # histograms look the same. Same axis for every knob; unscaled at d_k = 1024 fills it.
    spans = {}
    for scaled in (False, True):
        fig = scale_knobs.scale_view(d_k=1024, scaled=scaled, row=0)
        hist = fig.axes[0]
        assert hist.get_xlim() == (-scale_knobs.SCORE_RANGE, scale_knobs.SCORE_RANGE)
        filled = [bar.get_x() for bar in hist.patches if bar.get_height() > 0]
        spans[scaled] = max(filled) - min(filled)
        plt.close(fig)
    assert spans[False] > 10 * spans[True]


def test_scale_widget_builds():
    pytest.importorskip("ipywidgets")
    box = scale_knobs.scale_widget(d_k=16)
    assert box.children
    plt.close("all")


# ---- 07_softmax widget functions --------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=12),
    temperature=st.floats(0.05, 20.0),
)
def test_softmax_with_temperature_matches_torch(values, temperature):
    scores = torch.tensor(values, dtype=torch.float64)
    p = softmax_knobs.softmax_with_temperature(scores, temperature)
    torch.testing.assert_close(p, torch.softmax(scores / temperature, dim=-1))
    assert p.sum().item() == pytest.approx(1.0)


def test_temperature_keeps_masked_entries_zero_and_sharpens():
    s = torch.tensor([0.5, 2.0, 1.9, float("-inf")])
    for tau in (0.01, 1.0, 100.0):
        p = softmax_knobs.softmax_with_temperature(s, tau)
        assert p[3].item() == 0.0 and not torch.isnan(p).any()
    cold = softmax_knobs.softmax_with_temperature(s, 0.01)
    hot = softmax_knobs.softmax_with_temperature(s, 100.0)
    assert cold.argmax().item() == 1 and cold[1] > 0.99
    assert softmax_knobs.entropy(hot) > softmax_knobs.entropy(cold)
    assert softmax_knobs.entropy(hot).item() == pytest.approx(math.log(3), abs=1e-3)


def test_temperature_view_returns_figure_or_message():
    s = torch.tensor([0.5, 2.0, 1.9, float("-inf")])
    fig = softmax_knobs.temperature_view(s, 0.5, ["a", "\n", "b", "c"])
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    hatched = [bar.get_x() + bar.get_width() / 2 for bar in ax.patches if bar.get_hatch()]
    assert hatched == [3] and ax.get_legend().get_texts()[0].get_text() == "masked key"
    plt.close(fig)
    assert isinstance(softmax_knobs.temperature_view(s, 0.0), str)
    assert isinstance(softmax_knobs.temperature_view(s, -1.0), str)
    assert isinstance(softmax_knobs.temperature_view(s, float("nan")), str)
    assert isinstance(softmax_knobs.temperature_view(s.reshape(2, 2), 1.0), str)
    assert isinstance(softmax_knobs.temperature_view(s, 1.0, ["a"]), str)
    with pytest.raises(ValueError, match="temperature"):
        softmax_knobs.softmax_with_temperature(s, 0.0)


def test_temperature_widget_builds():
    pytest.importorskip("ipywidgets")
    box = softmax_knobs.temperature_widget(torch.tensor([1.0, 2.0, 3.0]), ["a", "b", "c"])
    assert box.children
    plt.close("all")
