"""The feed-forward networks: shapes, the formula, and argument checks."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from transformer_course.feedforward import FeedForward, SwiGLU


def test_default_width_is_four_times():
    ffn = FeedForward(64)
    assert ffn.up.weight.shape == (256, 64) and ffn.down.weight.shape == (64, 256)
    assert sum(p.numel() for p in ffn.parameters()) == 64 * 256 + 256 + 256 * 64 + 64


@pytest.mark.parametrize(
    "activation, fn",
    [
        ("relu", F.relu),
        ("gelu", F.gelu),
        ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
        ("silu", F.silu),
    ],
)
def test_feedforward_formula(activation, fn):
    torch.manual_seed(0)
    ffn = FeedForward(16, 40, activation=activation)
    x = torch.randn(3, 5, 16)  # (B, T, C)
    expected = (
        fn(x @ ffn.up.weight.T + ffn.up.bias) @ ffn.down.weight.T + ffn.down.bias
    )  # (B, T, C)
    torch.testing.assert_close(ffn(x), expected)


@settings(max_examples=25, deadline=None)
@given(lead=st.lists(st.integers(1, 4), max_size=3), d=st.integers(1, 24), d_ff=st.integers(1, 40))
def test_swiglu_formula_and_shape(lead, d, d_ff):
    torch.manual_seed(0)
    ffn = SwiGLU(d, d_ff)
    x = torch.randn(*lead, d)  # (..., C)
    w1, w3, w2 = ffn.gate.weight, ffn.up.weight, ffn.down.weight
    expected = (F.silu(x @ w1.T) * (x @ w3.T)) @ w2.T  # (..., C)
    out = ffn(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out, expected)
    assert sum(p.numel() for p in ffn.parameters()) == 3 * d * d_ff


def test_positionwise():
    """Each token is transformed on its own: shuffling tokens shuffles the outputs the same way."""
    torch.manual_seed(0)
    ffn = FeedForward(8)
    x = torch.randn(2, 6, 8)  # (B, T, C)
    perm = torch.randperm(6)
    torch.testing.assert_close(ffn(x)[:, perm], ffn(x[:, perm]))


def test_dropout_only_in_training():
    torch.manual_seed(0)
    ffn = FeedForward(8, dropout=0.5)
    x = torch.randn(4, 8)
    ffn.eval()
    torch.testing.assert_close(ffn(x), ffn(x))
    ffn.train()
    assert not torch.equal(ffn(x), ffn(x))


def test_bad_arguments():
    with pytest.raises(
        ValueError, match="activation must be one of .relu., .gelu., .gelu_tanh., .silu."
    ):
        FeedForward(8, activation="tanh")
    with pytest.raises(ValueError, match="d_ff must be at least 1"):
        FeedForward(8, d_ff=0)
    with pytest.raises(TypeError, match="d_model must be an int"):
        FeedForward("8")
    with pytest.raises(ValueError, match="dropout"):
        FeedForward(8, dropout=1.0)
    with pytest.raises(ValueError, match="d_model must be at least 1"):
        SwiGLU(0, 4)


@pytest.mark.parametrize(
    "make",
    [
        lambda dropout: FeedForward(64, dropout=dropout),
        lambda dropout: SwiGLU(64, 128, dropout=dropout),
    ],
    ids=["FeedForward", "SwiGLU"],
)
@pytest.mark.parametrize("dropout", ["0.1", None, True, [0.1]])
def test_a_dropout_of_the_wrong_type_names_dropout(make, dropout):
    # Before the shared checks this was a raw "'<=' not supported between 'float' and 'str'".
    with pytest.raises(
        TypeError, match=r"dropout must be a probability in \[0, 1\) given as a number"
    ):
        make(dropout)
