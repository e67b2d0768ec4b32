"""Positional encodings: the sinusoidal table (03_positional_encoding) and RoPE (13_modern_blocks)."""

from __future__ import annotations

import torch


def _check_size(name: str, value: int, even: bool = False) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    if even and value % 2:
        raise ValueError(f"{name} must be even (sin/cos come in pairs), got {value}; try {value + 1}")


def sinusoidal_encoding(context_length: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The table of "Attention is all you need": PE(pos, 2i) = sin(pos / base^(2i/C)),
    PE(pos, 2i+1) = cos(pos / base^(2i/C)). Returns [T, C] (float32)."""
    _check_size("context_length", context_length)
    _check_size("d_model", d_model, even=True)
    if base <= 1.0:
        raise ValueError(f"base must be greater than 1, got {base}")
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (C/2,)
    angles = positions / base ** (two_i / d_model)  # (T, C/2)
    table = torch.empty(context_length, d_model, dtype=torch.float64)  # (T, C)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()
