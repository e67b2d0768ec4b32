"""The attention-map explorer's plain functions (08_v_attention, reused by 12_generation),
checked on the Agg canvas without a browser."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from transformer_course import attention, viz
from transformer_course.widgets import attention as explorer

TOKENS = ["The", " cat", "\n", " sat", "", " on"]


def _qk(seed: int = 0, H: int = 4, T: int = 6, D: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(H, T, D, generator=g) * 3, torch.randn(H, T, D, generator=g) * 3


def test_token_labels_are_visible():
    assert explorer.token_label is viz.token_label, "the old import place still works"
    assert explorer.token_label("\n") == "\\n"
    assert explorer.token_label(" cat") == " cat"
    assert explorer.token_label("") == "∅"
    assert explorer.token_label(" ") == "' '"


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("scaled", [True, False])
def test_weights_from_qk_follow_the_knobs(causal, scaled):
    q, k = _qk()
    weights = explorer.weights_from_qk(q, k, causal=causal, scaled=scaled)
    scores = q @ k.transpose(-2, -1) / (8**0.5 if scaled else 1.0)
    if causal:
        scores = scores.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf"))
    torch.testing.assert_close(weights, torch.softmax(scores, dim=-1))
    if causal:
        assert torch.all(weights.triu(diagonal=1) == 0)


def test_weights_from_qk_rejects_mismatched_shapes():
    q, k = _qk()
    with pytest.raises(ValueError, match="same shape"):
        explorer.weights_from_qk(q, k[:, :5])


def _tick_texts(ax, axis: str) -> list[str]:
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


def _heat(fig) -> list:
    """The heatmap panels (seaborn draws each as a QuadMesh), not the colour bar."""
    return [ax for ax in fig.axes if ax.collections and ax.get_title()]


def _values(ax) -> np.ndarray:
    mesh = ax.collections[0]
    rows, cols = mesh.get_coordinates().shape[:2]  # cell corners: one more than cells each way
    return np.asarray(mesh.get_array()).reshape(rows - 1, cols - 1)


def test_all_heads_grid_is_labelled_with_tokens_on_both_axes():
    weights = explorer.weights_from_qk(*_qk())
    fig = explorer.attention_map_figure(weights, TOKENS, title="t")
    assert isinstance(fig, Figure)
    heat = _heat(fig)
    assert [ax.get_title() for ax in heat] == [f"head {h}" for h in range(4)]
    assert fig._suptitle.get_text() == "t"
    labels = [explorer.token_label(t) for t in TOKENS]
    fig.canvas.draw()
    assert _tick_texts(heat[0], "y") == labels
    assert _tick_texts(heat[0], "x") == labels
    assert heat[0].get_ylabel() == "query (attending)" and heat[1].get_ylabel() == ""
    for ax, head in zip(heat, range(4)):
        np.testing.assert_allclose(_values(ax), weights[head].numpy(), rtol=1e-6)
    # One colour scale for every panel, from 0, so heads can be compared.
    assert {ax.collections[0].get_clim() for ax in heat} == {(0.0, float(weights.max()))}
    assert fig.axes[-1].get_ylabel() == "attention weight"


def test_single_head_is_drawn_with_its_exact_values():
    weights = explorer.weights_from_qk(*_qk())
    fig = explorer.attention_map_figure(weights, TOKENS, head=2, annotate=True)
    heat = _heat(fig)
    assert len(heat) == 1 and heat[0].get_title() == "head 2"
    texts = [t.get_text() for t in heat[0].texts]
    assert len(texts) == 36 and texts[0] == f"{weights[2, 0, 0].item():.2f}"


def test_layers_and_cross_attention_labels():
    g = torch.Generator().manual_seed(1)
    weights = torch.softmax(torch.randn(3, 2, 4, 5, generator=g), dim=-1)  # (L, H, T, S)
    keys = ["a", "b", "c", "d", "e"]
    fig = explorer.attention_map_figure(weights, TOKENS[:4], key_tokens=keys, layer=2)
    heat = _heat(fig)
    assert [ax.get_title() for ax in heat] == ["layer 2 · head 0", "layer 2 · head 1"]
    fig.canvas.draw()
    assert _tick_texts(heat[0], "x") == keys
    np.testing.assert_allclose(_values(heat[1]), weights[2, 1].numpy(), rtol=1e-6)


def test_many_heads_wrap_into_a_square_grid():
    weights = torch.softmax(torch.randn(8, 6, 6), dim=-1)
    fig = explorer.attention_map_figure(weights, TOKENS)
    heat = _heat(fig)
    assert len(heat) == 8
    assert len(fig.axes) == 3 * 3 + 1, "a 3 × 3 grid (one panel left empty) and the colour bar"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"head": 4}, "head must be at most 3"),
        ({"head": -1}, "head must be at least 0"),
        ({"layer": 1}, "layer must be at most 0"),
    ],
)
def test_figure_rejects_bad_knobs(kwargs, match):
    weights = explorer.weights_from_qk(*_qk())
    with pytest.raises(ValueError, match=match):
        explorer.attention_map_figure(weights, TOKENS, **kwargs)


def test_figure_rejects_bad_shapes_and_labels():
    with pytest.raises(ValueError, match=r"\[H, T, S\] or \[L, H, T, S\]"):
        explorer.attention_map_figure(torch.rand(6, 6), TOKENS)
    with pytest.raises(ValueError, match="tokens must have 6 entries"):
        explorer.attention_map_figure(torch.rand(2, 6, 6), TOKENS[:5])


def test_row_table_lists_the_exact_weights_and_their_sum():
    weights = explorer.weights_from_qk(*_qk())
    table = explorer.attention_row_table(weights, TOKENS, query=3)
    assert list(table.columns) == ["key token", "head 0", "head 1", "head 2", "head 3"]
    body = table.iloc[:-1]
    assert list(body["key token"]) == [explorer.token_label(t) for t in TOKENS]
    np.testing.assert_allclose(
        body["head 1"].to_numpy(dtype=float), weights[1, 3].numpy(), atol=5e-5
    )
    np.testing.assert_allclose(table.loc["sum"].iloc[1:].to_numpy(dtype=float), 1.0, atol=1e-3)
    assert np.all(body.iloc[4:, 1:].to_numpy(dtype=float) == 0), "future keys get exactly 0"
    one = explorer.attention_row_table(weights, TOKENS, query=5, head=0, decimals=2)
    assert list(one.columns) == ["key token", "weight"]
    with pytest.raises(ValueError, match="query must be at most 5"):
        explorer.attention_row_table(weights, TOKENS, query=6)


def test_head_split_figure_marks_each_heads_columns():
    g = torch.Generator().manual_seed(2)
    matrix = torch.randn(6, 16, generator=g)
    fig = explorer.head_split_figure(matrix, 4, tokens=TOKENS)
    blocks = [ax for ax in fig.axes if ax.get_title().startswith("head ")]
    assert [ax.get_title() for ax in blocks] == [f"head {h}: [6, 4]" for h in range(4)]
    np.testing.assert_allclose(blocks[2].images[0].get_array(), matrix[:, 8:12].numpy(), rtol=1e-6)
    # The blocks are exactly what attention.split_heads hands each head.
    heads = attention.split_heads(matrix[None], 4)[0]
    np.testing.assert_allclose(blocks[3].images[0].get_array(), heads[3].numpy(), rtol=1e-6)
    with pytest.raises(
        ValueError,
        match=r"n_heads \(5\) must divide C \(16\).*possible n_heads: \[1, 2, 4, 8, 16\]",
    ):
        explorer.head_split_figure(matrix, 5)
    with pytest.raises(TypeError, match="n_heads must be an int"):
        explorer.head_split_figure(matrix, 4.0)


def test_explorer_widgets_build_and_show_a_message_for_bad_knobs():
    pytest.importorskip("ipywidgets")
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 4, 6, 8, generator=g), torch.randn(2, 4, 6, 8, generator=g)
    box = explorer.attention_explorer(q, k, [TOKENS, TOKENS])
    assert box.children, "the explorer is a box of controls and an output"
    with pytest.raises(ValueError, match=r"\[B, H, T, D\]"):
        explorer.attention_explorer(q[0], k[0], [TOKENS])
    box = explorer.weights_explorer(torch.softmax(torch.randn(2, 4, 6, 6, generator=g), -1), TOKENS)
    assert box.children


def test_html_view_shows_every_weight_on_hover_with_token_labels():
    weights = explorer.weights_from_qk(*_qk())
    page = explorer.attention_map_html(weights, TOKENS)
    assert page.count("<table class='tc-att'>") == 4
    assert page.count("<td class='w'") == 4 * 36
    value = weights[3, 5, 2].item()
    assert f"head 3 · query 5  on → key 2 \\n: {value:.4f}" in page
    assert "<th> sat</th>" in page and "<th class='k'>∅</th>" in page
    one = explorer.attention_map_html(weights, TOKENS, head=1)
    assert one.count("<table class='tc-att'>") == 1
    assert f">{weights[1, 0, 0].item():.2f}</td>" in one, (
        "a single head writes its weights in the cells"
    )
    assert explorer.attention_map_html(weights, TOKENS, head=1) == one, (
        "a pure function of its knobs"
    )
    with pytest.raises(ValueError, match="head must be at most 3"):
        explorer.attention_map_html(weights, TOKENS, head=7)


def test_html_view_escapes_tokens():
    weights = torch.full((1, 2, 2), 0.5)
    page = explorer.attention_map_html(weights, ["<b>", "a&b"])
    assert "&lt;b&gt;" in page and "a&amp;b" in page


def test_layers_in_the_html_view():
    weights = torch.softmax(torch.randn(3, 2, 4, 4), dim=-1)  # (L, H, T, S)
    page = explorer.attention_map_html(weights, TOKENS[:4], layer=2)
    assert (
        "<caption>layer 2 · head 0</caption>" in page
        and "<caption>layer 2 · head 1</caption>" in page
    )
