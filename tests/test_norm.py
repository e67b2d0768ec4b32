"""LayerNorm and RMSNorm equal PyTorch's own on random shapes and values."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course.norm import LayerNorm, RMSNorm

shapes = st.lists(st.integers(1, 5), min_size=0, max_size=3)
# Leading shape, feature size, seed and input scale: the draws both norms are tested on.
norm_cases = given(
    lead=shapes,
    d=st.integers(1, 48),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([1e-3, 1.0, 50.0]),
)


def random_norm_inputs(test):
    return settings(max_examples=40, deadline=None)(norm_cases(test))


def _random_affine(module: nn.Module, reference: nn.Module, generator: torch.Generator) -> None:
    """Give both modules the same non-trivial weight (and bias), so the affine part is tested too."""
    with torch.no_grad():
        for name, param in module.named_parameters():
            param.copy_(torch.randn(param.shape, generator=generator))
            getattr(reference, name).copy_(param)


@random_norm_inputs
def test_layernorm_equals_torch(lead, d, seed, scale):
    generator = torch.Generator().manual_seed(seed)
    # float64: with an offset of 3 and a spread of 1e-3, float32 loses digits in x − mean
    # whichever way it is computed, so the comparison would test rounding, not the formula.
    x = torch.randn(*lead, d, generator=generator, dtype=torch.float64) * scale + 3.0  # (..., C)
    ours, theirs = LayerNorm(d).double(), nn.LayerNorm(d, eps=1e-5).double()
    _random_affine(ours, theirs, generator)
    torch.testing.assert_close(ours(x), theirs(x))


@random_norm_inputs
def test_rmsnorm_equals_torch(lead, d, seed, scale):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(*lead, d, generator=generator) * scale  # (..., C)
    ours, theirs = RMSNorm(d), nn.RMSNorm(d, eps=1e-6)
    _random_affine(ours, theirs, generator)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-4, atol=1e-4)


def test_layernorm_float32_on_the_course_shape():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 16, 64, generator=generator) * 2 + 0.5  # (B, T, C)
    ours, theirs = LayerNorm(64), nn.LayerNorm(64)
    _random_affine(ours, theirs, generator)
    torch.testing.assert_close(ours(x), theirs(x))


def test_layernorm_gradients_equal_torch():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 16, 64, generator=generator, requires_grad=True)  # (B, T, C)
    x2 = x.detach().clone().requires_grad_(True)
    ours, theirs = LayerNorm(64), nn.LayerNorm(64)
    _random_affine(ours, theirs, generator)
    ours(x).pow(2).sum().backward()
    theirs(x2).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(ours.weight.grad, theirs.weight.grad, rtol=1e-4, atol=1e-4)


def test_layernorm_output_has_zero_mean_unit_variance():
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(1)) * 7 + 2  # (N, C)
    y = LayerNorm(32)(x)  # (N, C)
    torch.testing.assert_close(y.mean(-1), torch.zeros(8), atol=1e-5, rtol=0)
    torch.testing.assert_close(y.var(-1, unbiased=False), torch.ones(8), atol=1e-3, rtol=0)


def test_rmsnorm_eps_inside_the_root():
    """With x = 0 except one tiny entry, eps inside vs outside the root give different answers."""
    x = torch.zeros(1, 4)
    x[0, 0] = 1e-3
    y = RMSNorm(4, eps=1e-6)(x)
    inside = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    outside = x / (torch.sqrt(x.pow(2).mean(-1, keepdim=True)) + 1e-6)
    torch.testing.assert_close(y, inside)
    assert not torch.allclose(y, outside, rtol=1e-3)


def test_parameters():
    assert [n for n, _ in LayerNorm(8).named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in RMSNorm(8).named_parameters()] == ["weight"]
    assert LayerNorm(8).eps == 1e-5 and RMSNorm(8).eps == 1e-6


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
def test_bad_arguments(cls):
    with pytest.raises(ValueError, match="d must be at least 1"):
        cls(0)
    with pytest.raises(TypeError, match="d must be an int"):
        cls(4.0)
    with pytest.raises(ValueError, match="eps must be a positive"):
        cls(4, eps=0.0)
    with pytest.raises(ValueError, match="d=4"):
        cls(4)(torch.zeros(2, 5))


@settings(max_examples=30, deadline=None)
@given(lead=shapes, d=st.integers(1, 48), seed=st.integers(0, 2**16))
def test_by_hand_functions_equal_the_modules(lead, d, seed):
    from transformer_course.norm import layer_norm, rms_norm

    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(*lead, d, generator=generator, dtype=torch.float64) * 3 + 1  # (..., C)
    weight = torch.randn(d, generator=generator, dtype=torch.float64)  # (C,)
    bias = torch.randn(d, generator=generator, dtype=torch.float64)  # (C,)
    ln = LayerNorm(d).double()
    rms = RMSNorm(d).double()
    with torch.no_grad():
        ln.weight.copy_(weight)
        ln.bias.copy_(bias)
        rms.weight.copy_(weight)
    torch.testing.assert_close(layer_norm(x, weight, bias), ln(x))
    torch.testing.assert_close(rms_norm(x, weight), rms(x))
