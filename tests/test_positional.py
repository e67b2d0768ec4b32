"""transformer_course.positional: the sinusoidal table (03) and RoPE (13), each against an
independent reference (a plain-Python closed form, a complex-number rotation)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.positional import apply_rope, sinusoidal_encoding

# --------------------------------------------------------------------------- sinusoidal table


def closed_form(pos: int, dim: int, d_model: int, base: float = 10000.0) -> float:
    """The paper's formula written out one entry at a time, in plain Python floats."""
    i = dim // 2
    angle = pos / base ** (2 * i / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize(
    ("context_length", "d_model", "base"),
    [(1, 2, 10000.0), (16, 64, 10000.0), (50, 512, 10000.0), (7, 10, 100.0), (33, 6, 2.5)],
)
def test_sinusoidal_matches_closed_form(context_length, d_model, base):
    table = sinusoidal_encoding(context_length, d_model, base=base)
    assert table.shape == (context_length, d_model)
    assert table.dtype == torch.float32
    expected = torch.tensor(
        [[closed_form(p, c, d_model, base) for c in range(d_model)] for p in range(context_length)]
    )
    torch.testing.assert_close(table, expected, atol=1e-6, rtol=0)


def test_sinusoidal_seed_values():
    # Seed 000 prints row 1 of the 16x64 table as 0.841471 0.540302 0.681561 0.731761 ...
    row1 = sinusoidal_encoding(16, 64)[1, :4]
    torch.testing.assert_close(
        row1, torch.tensor([0.841471, 0.540302, 0.681561, 0.731761]), atol=1e-6, rtol=0
    )


def test_sinusoidal_row_zero_alternates_zero_one():
    row0 = sinusoidal_encoding(4, 512)[0]
    assert torch.equal(row0[0::2], torch.zeros(256))
    assert torch.equal(row0[1::2], torch.ones(256))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"context_length": 4, "d_model": 7}, ValueError, "sinusoidal table needs an even d_model"),
        ({"context_length": 0, "d_model": 8}, ValueError, "context_length must be at least 1"),
        (
            {"context_length": 4, "d_model": 8, "base": 1.0},
            ValueError,
            "base must be a finite number greater than 1",
        ),
        ({"context_length": 4.0, "d_model": 8}, TypeError, "context_length must be an int"),
    ],
)
def test_sinusoidal_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_encoding(**kwargs)


# --------------------------------------------------------------------------- RoPE


def rope_complex(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """Independent reference: view each pair as a complex number and multiply by e^{i·θ}."""
    d = x.shape[-1]
    z = torch.view_as_complex(
        x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous()
    )  # (..., T, D/2)
    freqs = torch.tensor(
        [base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64
    )  # (D/2,)
    theta = positions.double()[:, None] * freqs  # (T, D/2)
    rotated = z * torch.polar(torch.ones_like(theta), theta)  # (..., T, D/2)
    return torch.view_as_real(rotated).reshape(x.shape).to(x.dtype)


@pytest.mark.parametrize("shape", [(5, 8), (2, 7, 4), (2, 3, 6, 16), (1, 2, 3, 4, 2)])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_rope_matches_complex_reference(shape, base):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    positions = torch.arange(shape[-2])
    expected = rope_complex(x, positions, base)
    torch.testing.assert_close(apply_rope(x, base=base), expected)
    torch.testing.assert_close(apply_rope(x, positions, base=base), expected)


def test_rope_custom_positions_long_and_float():
    x = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(2))
    long_pos = torch.tensor([3, 10, 11, 400])
    torch.testing.assert_close(apply_rope(x, long_pos), rope_complex(x, long_pos, 10000.0))
    float_pos = torch.tensor([0.5, 1.25, 7.0, 2.0])
    torch.testing.assert_close(apply_rope(x, float_pos), rope_complex(x, float_pos, 10000.0))


def test_rope_position_zero_is_identity_and_dtype_kept():
    x = torch.randn(1, 6, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(apply_rope(x), x)
    for dtype in (torch.float64, torch.bfloat16, torch.float16):
        y = apply_rope(x.to(dtype).expand(4, 6).contiguous())
        assert y.dtype == dtype


def test_rope_odd_head_size_is_refused():
    with pytest.raises(ValueError, match="RoPE needs an even head size D"):
        apply_rope(torch.zeros(2, 3, 5))


def test_rope_bad_positions_shape():
    with pytest.raises(ValueError, match="positions must have shape"):
        apply_rope(torch.zeros(2, 3, 4), torch.arange(4))


def test_rope_needs_a_tensor_with_time_axis():
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        apply_rope([[1.0, 2.0]])
    with pytest.raises(ValueError, match="at least 2 dims"):
        apply_rope(torch.zeros(4))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    half_d=st.integers(1, 16),
    seq_len=st.integers(1, 12),
    lead=st.lists(st.integers(1, 3), max_size=2),
)
def test_rope_preserves_norm(seed, half_d, seq_len, lead):
    x = torch.randn(
        *lead,
        seq_len,
        2 * half_d,
        generator=torch.Generator().manual_seed(seed),
        dtype=torch.float64,
    )
    y = apply_rope(x)  # (..., T, D)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    # every pair keeps its own length too: RoPE rotates within each 2-D plane
    torch.testing.assert_close(
        y.unflatten(-1, (half_d, 2)).norm(dim=-1), x.unflatten(-1, (half_d, 2)).norm(dim=-1)
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    half_d=st.integers(1, 16),
    m=st.integers(0, 500),
    n=st.integers(0, 500),
    shift=st.integers(-200, 200),
)
def test_rope_dot_product_depends_only_on_offset(seed, half_d, m, n, shift):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(1, 2 * half_d, generator=gen, dtype=torch.float64)  # (1, D)
    k = torch.randn(1, 2 * half_d, generator=gen, dtype=torch.float64)  # (1, D)

    def score(pq: int, pk: int) -> torch.Tensor:
        rq = apply_rope(q, torch.tensor([pq]))  # (1, D)
        rk = apply_rope(k, torch.tensor([pk]))  # (1, D)
        return (rq * rk).sum()

    # shifting both positions by the same amount leaves the score unchanged
    m2, n2 = m + abs(shift), n + abs(shift)
    torch.testing.assert_close(score(m, n), score(m2, n2))
    # and it equals the score of the unrotated query against a key rotated by n − m
    torch.testing.assert_close(score(m, n), score(0, n - m))
