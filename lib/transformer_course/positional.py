"""Positional encodings: the sinusoidal table (03_positional_encoding) and RoPE (13_modern_blocks)."""

from __future__ import annotations

import torch

from . import _checks as check
from .i18n import _


def check_sinusoidal_width(d_model: int) -> int:
    """The rule of the sinusoidal table (03_positional_encoding): features come in sin/cos pairs,
    so ``d_model`` must be even. :func:`sinusoidal_encoding` and ``GPTConfig`` both apply it."""
    if d_model % 2:
        raise ValueError(
            _(
                "the sinusoidal table needs an even d_model (sin/cos come in pairs), got "
                "{d_model}; try {even}"
            ).format(d_model=d_model, even=d_model + 1)
        )
    return d_model


def check_rope_head_size(head_size: int) -> int:
    """The rule of RoPE (13_modern_blocks): it rotates pairs of features, so the head size
    D = d_model // n_heads must be even. :func:`apply_rope`, ``MultiHeadAttention(rope=True)``
    and ``GPTConfig(positional="rope")`` all apply it."""
    if head_size % 2:
        raise ValueError(
            _(
                "RoPE needs an even head size D = d_model // n_heads (it rotates pairs of "
                "features); got D={head_size}"
            ).format(head_size=head_size)
        )
    return head_size


def sinusoidal_encoding(context_length: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The table of "Attention is all you need": PE(pos, 2i) = sin(pos / base^(2i/C)),
    PE(pos, 2i+1) = cos(pos / base^(2i/C)). Returns [T, C] (float32)."""
    check.integer("context_length", context_length)
    check_sinusoidal_width(check.integer("d_model", d_model))
    check.number("base", base, above=1.0)
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (C/2,)
    angles = positions / base ** (two_i / d_model)  # (T, C/2)
    table = torch.empty(context_length, d_model, dtype=torch.float64)  # (T, C)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


def rope_angles(positions: torch.Tensor, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """Angles pos · base^(−2i/D) used by :func:`apply_rope` (13_modern_blocks).

    ``positions`` is [T]; returns [T, D/2] in float64 so that long contexts keep precision.
    """
    check_rope_head_size(check.integer("head_dim", head_dim))
    check.number("base", base, above=1.0)
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (D/2,)
    return positions.to(torch.float64)[:, None] * inv_freq.to(positions.device)  # (T, D/2)


def apply_rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    """Rotary position embedding (RoPE), introduced in 13_modern_blocks.

    ``x`` is [..., T, D] (e.g. queries [B, H, T, D]); each pair (x_2i, x_2i+1) at position
    ``pos`` is rotated by the angle pos · base^(−2i/D). ``positions`` is a [T] tensor of
    positions (integer or float) and defaults to 0..T−1. Returns a tensor of the same shape
    and dtype as ``x``. Because a rotation keeps lengths and rotations compose, the dot product
    of a rotated query at m with a rotated key at n depends only on m − n.
    """
    check.tensor("x", x, 2, shape="[..., T, D] (at least 2 dims)")
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)  # (T,)
    elif not isinstance(positions, torch.Tensor):
        positions = torch.as_tensor(positions, device=x.device)
    if positions.shape != (seq_len,):
        raise ValueError(
            _(
                "positions must have shape [T] = [{seq_len}] (one position per token), got "
                "{positions_shape}"
            ).format(seq_len=seq_len, positions_shape=tuple(positions.shape))
        )
    angles = rope_angles(positions.to(x.device), head_dim, base)  # (T, D/2)
    # Compute in at least float32: half-precision sin/cos of large angles are too coarse.
    work = torch.promote_types(x.dtype, torch.float32)
    cos, sin = angles.cos().to(work), angles.sin().to(work)  # (T, D/2)
    pairs = x.to(work).unflatten(-1, (head_dim // 2, 2))  # (..., T, D) -> (..., T, D/2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]  # (..., T, D/2)
    # (..., T, D/2, 2)
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return rotated.flatten(-2).to(x.dtype)  # (..., T, D/2, 2) -> (..., T, D)
