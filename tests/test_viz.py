"""transformer_course.viz draws what it is given (checked on the Agg canvas, no display)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer_course import viz


def test_heatmap_draws_the_matrix_and_greys_out_minus_infinity():
    scores = torch.tensor([[1.0, float("-inf")], [0.5, 2.0]])
    fig = viz.show_heatmap(scores, xticklabels=["a", "b"], yticklabels=["a", "b"], annotate=True)
    image = fig.axes[0].images[0].get_array()
    assert image.mask[0, 1] and not image.mask[1, 0]
    np.testing.assert_allclose(image.data[1], [0.5, 2.0])
    assert [t.get_text() for t in fig.axes[0].texts] == ["1.00", "−∞", "0.50", "2.00"]


def test_heatmap_rejects_non_matrices():
    with pytest.raises(ValueError, match="2-D"):
        viz.show_heatmap(torch.zeros(2, 2, 2))


def test_heatmaps_grid_shares_one_scale():
    fig = viz.show_heatmaps(torch.rand(2, 4, 5, 5), titles=[f"h{i}" for i in range(8)])
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 8
    assert len({im.get_clim() for im in images}) == 1


def test_long_axes_are_thinned():
    fig = viz.show_heatmap(torch.rand(100, 100), max_ticks=10)
    assert len(fig.axes[0].get_xticks()) == 10


def test_curves_and_bars():
    fig = viz.plot_curves({"train": [3, 2, 1], "val": ([0, 2], [3.5, 2.5])}, ylabel="loss")
    assert [line.get_label() for line in fig.axes[0].lines] == ["train", "val"]
    fig = viz.bar_chart({"word": 10, "char": 3})
    assert len(fig.axes[0].patches) == 2
