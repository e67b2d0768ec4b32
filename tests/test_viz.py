"""transformer_course.viz draws what it is given (checked on the Agg canvas, no display)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer_course import viz


def test_heatmap_draws_the_matrix_and_greys_out_minus_infinity():
    scores = torch.tensor([[1.0, float("-inf")], [0.5, 2.0]])
    fig = viz.show_heatmap(scores, xticklabels=["a", "b"], yticklabels=["a", "b"], annotate=True)
    mesh = fig.axes[0].collections[0]  # seaborn draws the cells as one QuadMesh
    cells = mesh.get_array().reshape(2, 2)
    assert cells.mask[0, 1] and not cells.mask[1, 0]
    np.testing.assert_allclose(cells.data[1], [0.5, 2.0])
    assert sorted(t.get_text() for t in fig.axes[0].texts) == sorted(["1.00", "−∞", "0.50", "2.00"])
    assert fig.axes[0].get_facecolor()[:3] == pytest.approx((0xD9 / 255,) * 3)  # grey shows through


def test_heatmap_rejects_non_matrices():
    with pytest.raises(ValueError, match="2-D"):
        viz.show_heatmap(torch.zeros(2, 2, 2))


def test_heatmaps_grid_shares_one_scale():
    fig = viz.show_heatmaps(torch.rand(2, 4, 5, 5), titles=[f"h{i}" for i in range(8)])
    meshes = [ax.collections[0] for ax in fig.axes if ax.collections and ax.get_title()]
    assert len(meshes) == 8
    assert len({mesh.get_clim() for mesh in meshes}) == 1


def test_long_axes_are_thinned():
    fig = viz.show_heatmap(torch.rand(100, 100), max_ticks=10)
    assert len(fig.axes[0].get_xticks()) == 10


def test_curves_and_bars():
    fig = viz.plot_curves({"train": [3, 2, 1], "val": ([0, 2], [3.5, 2.5])}, ylabel="loss")
    assert [line.get_label() for line in fig.axes[0].lines] == ["train", "val"]
    fig = viz.bar_chart({"word": 10, "char": 3})
    assert len(fig.axes[0].patches) == 2


def test_annotations_read_on_their_cell_colour():
    # Dark cells get white text whatever the sign: both ends of a diverging map are dark.
    fig = viz.show_heatmap(
        np.array([[0.96, -1.0], [0.0, -np.inf]]), cmap="RdBu_r", vmin=-1, vmax=1, annotate=True
    )
    from matplotlib.colors import to_rgb

    lightness = {t.get_text(): sum(to_rgb(t.get_color())) / 3 for t in fig.axes[0].texts}
    assert lightness["0.96"] > 0.9 and lightness["-1.00"] > 0.9  # light text on dark cells
    assert lightness["0.00"] < 0.3 and lightness["−∞"] < 0.3  # dark text on light cells


def test_three_curves_keep_their_key_off_the_data():
    fig = viz.plot_curves({"a": [0, 1], "b": [1, 0], "c": [0.5, 0.5]})
    anchor = fig.axes[0].get_legend().get_bbox_to_anchor()
    frame = fig.axes[0].get_window_extent()
    assert anchor.x0 > frame.x1  # the key starts right of the axes


def test_scatter_labels_do_not_overlap():
    from matplotlib.text import Text

    generator = np.random.default_rng(0)
    points = np.concatenate([generator.normal(0, 0.3, (15, 2)), generator.normal(3, 1, (15, 2))])
    labels = [f"word{i}" for i in range(len(points))]
    fig = viz.scatter_labelled(points, labels, ["near"] * 15 + ["far"] * 15, title="words")
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in fig.axes[0].texts]
    overlapping = [
        (labels[i], labels[j])
        for i in range(len(boxes))
        for j in range(i)
        if boxes[i].overlaps(boxes[j])
    ]
    assert not overlapping
    frame = fig.axes[0].get_window_extent(renderer)
    assert all(
        frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1
        for b in boxes
    )
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["near", "far"]


def test_scatter_rejects_mismatched_labels():
    with pytest.raises(ValueError, match=r"\[N, 2\]"):
        viz.scatter_labelled(np.zeros((3, 2)), ["a", "b"])
    with pytest.raises(ValueError, match=r"\[N, 2\]"):
        viz.scatter_labelled(np.zeros((3, 3)), ["a", "b", "c"])


@pytest.mark.parametrize(
    ("shape", "cell_size"), [((3, 16, 64), 3.2), ((4, 16, 16), 2.6), ((2, 128, 128), 3.0)]
)
def test_tick_labels_never_touch(shape, cell_size):
    fig = viz.show_heatmaps(
        torch.randn(*shape, generator=torch.Generator().manual_seed(0)), cell_size=cell_size
    )
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes[: shape[0]]:
        for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            boxes = [label.get_window_extent(renderer) for label in labels if label.get_text()]
            assert len(boxes) >= 2
            assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:])), [
                t.get_text() for t in labels
            ]
        steps = np.diff(ax.get_xticks())
        assert set(steps) <= {1, 2, 4, 5, 8, 10, 20, 25, 40, 50}, steps  # round steps only


def test_distributions_overlay_one_density_per_sample():
    generator = torch.Generator().manual_seed(0)
    wide, narrow = (
        16 * torch.randn(4000, generator=generator),
        torch.randn(4000, generator=generator),
    )
    fig = viz.plot_distributions({"wide": wide, "narrow": narrow}, xlabel="score")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["wide", "narrow"]
    # Densities: the narrow sample peaks about 16 times higher than the wide one.
    heights = [poly.get_paths()[0].vertices[:, 1].max() for poly in ax.collections]  # step outlines
    assert len(heights) == 2 and heights[1] > 8 * heights[0], heights


def test_a_token_axis_of_16_labels_every_token():
    # The review found every other key label missing on 16-token maps in a grid (06, 07).
    tokens = [f" tok{i}" for i in range(16)]
    fig = viz.show_heatmaps(torch.rand(4, 16, 16), xticklabels=tokens, yticklabels=tokens, ncols=4)
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes[:4]:
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        assert [t.get_text() for t in labels] == tokens
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))


def test_separate_scales_get_one_colour_bar_each():
    fig = viz.show_heatmaps(torch.rand(2, 4, 4), share_scale=False)
    assert len(fig.axes) == 4  # two heatmaps and their two colour bars


def test_untrained_loss_draws_the_half_sigma_squared_curve_and_every_point():
    fig = viz.plot_untrained_loss(
        ([0.0, 1.0, 2.0], [0.0, 0.45, 1.9]), {"a": (0.5, 0.1), "b": (3.0, 4.0)}
    )
    ax = fig.axes[0]
    (curve,) = ax.lines
    xs, ys = curve.get_data()
    np.testing.assert_allclose(ys, xs**2 / 2)
    assert xs[-1] >= 3.0  # the curve reaches the last point
    offsets = [np.asarray(collection.get_offsets()) for collection in ax.collections]
    assert [len(o) for o in offsets] == [3, 1, 1]  # the sweep, then one point per model
    np.testing.assert_allclose(
        np.concatenate(offsets), [[0, 0], [1, 0.45], [2, 1.9], [0.5, 0.1], [3, 4]]
    )
    assert [t.get_text() for t in ax.get_legend().get_texts()][-2:] == ["a", "b"]


def test_untrained_loss_rejects_a_sweep_of_unequal_lengths():
    with pytest.raises(ValueError, match="as many σ"):
        viz.plot_untrained_loss(([0.0, 1.0], [0.0]), {})
