"""The attention-map explorer's plain functions (08_v_attention, reused by 12_generation),
checked on the Agg canvas without a browser."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from transformer_course import attention
from transformer_course.widgets import attention as explorer

TOKENS = ["The", " cat", "\n", " sat", "", " on"]


def _qk(seed: int = 0, H: int = 4, T: int = 6, D: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(H, T, D, generator=g) * 3, torch.randn(H, T, D, generator=g) * 3


def test_token_labels_are_visible():
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


def test_all_heads_grid_is_labelled_with_tokens_on_both_axes():
    weights = explorer.weights_from_qk(*_qk())
    fig = explorer.attention_map_figure(weights, TOKENS, title="t")
    assert isinstance(fig, Figure)
    heat = [ax for ax in fig.axes if ax.images and ax.get_title().startswith("head")]
    assert [ax.get_title() for ax in heat] == [f"head {h}" for h in range(4)]
    labels = [explorer.token_label(t) for t in TOKENS]
    fig.canvas.draw()
    assert _tick_texts(heat[0], "y") == labels
    assert _tick_texts(heat[0], "x") == labels
    for ax, head in zip(heat, range(4)):
        np.testing.assert_allclose(ax.images[0].get_array(), weights[head].numpy(), rtol=1e-6)
    # One colour scale for every panel, so heads can be compared.
    assert len({ax.images[0].get_clim() for ax in heat}) == 1


def test_single_head_is_drawn_with_its_exact_values():
    weights = explorer.weights_from_qk(*_qk())
    fig = explorer.attention_map_figure(weights, TOKENS, head=2, annotate=True)
    heat = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert len(heat) == 1 and heat[0].get_title() == "head 2"
    texts = [t.get_text() for t in heat[0].texts]
    assert len(texts) == 36 and texts[0] == f"{weights[2, 0, 0].item():.2f}"


def test_layers_and_cross_attention_labels():
    g = torch.Generator().manual_seed(1)
    weights = torch.softmax(torch.randn(3, 2, 4, 5, generator=g), dim=-1)  # (L, H, T, S)
    keys = ["a", "b", "c", "d", "e"]
    fig = explorer.attention_map_figure(weights, TOKENS[:4], key_tokens=keys, layer=2)
    heat = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert [ax.get_title() for ax in heat] == ["layer 2 · head 0", "layer 2 · head 1"]
    fig.canvas.draw()
    assert _tick_texts(heat[0], "x") == keys
    np.testing.assert_allclose(heat[1].images[0].get_array(), weights[2, 1].numpy(), rtol=1e-6)


def test_many_heads_wrap_into_a_square_grid():
    weights = torch.softmax(torch.randn(8, 6, 6), dim=-1)
    fig = explorer.attention_map_figure(weights, TOKENS)
    heat = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert len(heat) == 8


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"head": 4}, "head must be one of 0..3"),
        ({"head": -1}, "head"),
        ({"layer": 1}, "layer must be one of 0..0"),
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
    np.testing.assert_allclose(body["head 1"].to_numpy(dtype=float), weights[1, 3].numpy(), atol=5e-5)
    np.testing.assert_allclose(table.loc["sum"].iloc[1:].to_numpy(dtype=float), 1.0, atol=1e-3)
    assert np.all(body.iloc[4:, 1:].to_numpy(dtype=float) == 0), "future keys get exactly 0"
    one = explorer.attention_row_table(weights, TOKENS, query=5, head=0, decimals=2)
    assert list(one.columns) == ["key token", "weight"]
    with pytest.raises(ValueError, match="query must be one of 0..5"):
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
    with pytest.raises(ValueError, match="positive divisor"):
        explorer.head_split_figure(matrix, 5)


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
    assert f">{weights[1, 0, 0].item():.2f}</td>" in one, "a single head writes its weights in the cells"
    assert explorer.attention_map_html(weights, TOKENS, head=1) == one, "a pure function of its knobs"
    with pytest.raises(ValueError, match="head must be one of 0..3"):
        explorer.attention_map_html(weights, TOKENS, head=7)


def test_html_view_escapes_tokens():
    weights = torch.full((1, 2, 2), 0.5)
    page = explorer.attention_map_html(weights, ["<b>", "a&b"])
    assert "&lt;b&gt;" in page and "a&amp;b" in page


def test_layers_in_the_html_view():
    weights = torch.softmax(torch.randn(3, 2, 4, 4), dim=-1)  # (L, H, T, S)
    page = explorer.attention_map_html(weights, TOKENS[:4], layer=2)
    assert "<caption>layer 2 · head 0</caption>" in page and "<caption>layer 2 · head 1</caption>" in page


# --- The figure kept alive and updated in place (AttentionMapView / AttentionExplorer) ---------


def _heat(fig) -> list:
    return [ax for ax in fig.axes if ax.images and ax.get_title()]


def _same_picture(updated, scratch) -> None:
    """An in-place update shows what a from-scratch figure of the same knobs shows."""
    a, b = _heat(updated), _heat(scratch)
    assert [ax.get_title() for ax in a] == [ax.get_title() for ax in b]
    updated.canvas.draw()
    scratch.canvas.draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x.images[0].get_array()), np.asarray(y.images[0].get_array()))
        assert x.images[0].get_clim() == y.images[0].get_clim()
    first_x = next(ax for ax in a if ax.xaxis.get_tick_params()["labelbottom"])
    first_y = next(ax for ax in b if ax.xaxis.get_tick_params()["labelbottom"])
    assert _tick_texts(first_x, "x") == _tick_texts(first_y, "x")
    assert _tick_texts(a[0], "y") == _tick_texts(b[0], "y")
    assert [t.get_text() for t in a[0].texts if t.get_visible()] == [t.get_text() for t in b[0].texts]


def test_view_reuses_one_figure_and_its_image_data_follows_the_head():
    weights = explorer.weights_from_qk(*_qk())  # (H, T, T)
    view = explorer.AttentionMapView(row_chars=4)
    fig = view.update(weights, TOKENS, head=0)
    image = _heat(fig)[0].images[0]
    shown = np.array(image.get_array())
    np.testing.assert_array_equal(shown, weights[0].numpy())
    again = view.update(weights, TOKENS, head=3)
    assert again is fig and _heat(fig)[0].images[0] is image, "same figure, same image artist"
    assert not np.array_equal(np.asarray(image.get_array()), shown), "the data really changed"
    np.testing.assert_array_equal(np.asarray(image.get_array()), weights[3].numpy())
    assert _heat(fig)[0].get_title() == "head 3"
    assert image.get_clim() == (0.0, float(weights[3].max()))
    # The grid of all heads is its own layout, also kept.
    grid = view.update(weights, TOKENS)
    assert grid is not fig and view.update(weights, TOKENS, head=None) is grid


@pytest.mark.parametrize("head", [None, 1])
@pytest.mark.parametrize("annotate", [False, True])
def test_view_update_equals_the_from_scratch_figure(head, annotate):
    q, k = _qk()
    view = explorer.AttentionMapView(row_chars=max(len(explorer.token_label(t)) for t in TOKENS))
    view.update(explorer.weights_from_qk(q, k), TOKENS, head=head, annotate=annotate)  # something else first
    weights = explorer.weights_from_qk(q, k, causal=False, scaled=False)
    updated = view.update(weights, TOKENS[::-1], head=head, annotate=annotate)
    scratch = explorer.attention_map_figure(weights, TOKENS[::-1], head=head, annotate=annotate)
    _same_picture(updated, scratch)
    # Same layout too, so the PNGs are pixel for pixel the same.
    assert explorer.figure_png(updated, dpi=40) == explorer.figure_png(scratch, dpi=40)
    import matplotlib.pyplot as plt

    plt.close(scratch)


def test_view_handles_layers_cross_attention_titles_and_longer_labels():
    g = torch.Generator().manual_seed(1)
    weights = torch.softmax(torch.randn(3, 2, 4, 5, generator=g), dim=-1)  # (L, H, T, S)
    view = explorer.AttentionMapView()
    fig = view.update(weights, ["a", "b", "c", "d"], key_tokens=list("vwxyz"), layer=2)
    assert [ax.get_title() for ax in _heat(fig)] == ["layer 2 · head 0", "layer 2 · head 1"]
    longer = view.update(weights, ["a much longer label", "b", "c", "d"], key_tokens=list("vwxyz"), layer=1, title="t")
    assert longer is not fig, "labels longer than the margins lay the figure out again"
    _same_picture(longer, explorer.attention_map_figure(
        weights, ["a much longer label", "b", "c", "d"], key_tokens=list("vwxyz"), layer=1, title="t"))
    assert longer._suptitle.get_text() == "t"
    with pytest.raises(ValueError, match="head must be one of 0..1"):
        view.update(weights, ["a", "b", "c", "d"], key_tokens=list("vwxyz"), head=2)


def test_explorer_state_caches_weights_and_updates_in_place(monkeypatch):
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 4, 6, 8, generator=g), torch.randn(2, 4, 6, 8, generator=g)
    state = explorer.AttentionExplorer(q, k, [TOKENS, TOKENS[::-1]])
    calls = []
    real = explorer.weights_from_qk
    monkeypatch.setattr(explorer, "weights_from_qk", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    first = state.update(1, None, True, True, 5)
    second = state.update(1, 2, True, True, 3)  # head and query: no new weights
    assert len(calls) == 1 and second.figure is not first.figure  # grid vs one head
    third = state.update(1, 0, False, True, 3)  # the mask knob: new weights
    assert len(calls) == 2 and third.figure is second.figure
    expected = real(q[1], k[1], causal=False, scaled=True)  # (H, T, T)
    np.testing.assert_array_equal(np.asarray(_heat(third.figure)[0].images[0].get_array()), expected[0].numpy())
    np.testing.assert_allclose(third.table["weight"].iloc[:-1].to_numpy(dtype=float), expected[0, 3].numpy(), atol=5e-5)
    assert "mask off" in third.caption
    with pytest.raises(ValueError, match="row must be one of 0..1"):
        state.update(2, 0, True, True, 0)
    with pytest.raises(ValueError, match="query must be one of 0..5"):
        state.update(0, 0, True, True, 6)
    with pytest.raises(ValueError, match=r"\[B, H, T, D\]"):
        explorer.AttentionExplorer(q[0], k[0], [TOKENS])
    with pytest.raises(ValueError, match="tokens must have 2 rows"):
        explorer.AttentionExplorer(q, k, [TOKENS])


def test_figure_png_is_a_png_that_changes_with_the_data():
    weights = explorer.weights_from_qk(*_qk())
    view = explorer.AttentionMapView(row_chars=4)
    a = explorer.figure_png(view.update(weights, TOKENS, head=0), dpi=40)
    b = explorer.figure_png(view.update(weights, TOKENS, head=1), dpi=40)
    c = explorer.figure_png(view.update(weights, TOKENS, head=0), dpi=40)
    assert a.startswith(b"\x89PNG") and a != b and a == c
