"""Solutions of 03_positional_encoding's build exercises."""

from __future__ import annotations

import torch


def sinusoidal_table(context_length: int, d_model: int) -> torch.Tensor:
    """The (context_length, d_model) table: sin in the even columns, cos in the odd ones."""
    positions = torch.arange(context_length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (C/2,) the even column indices 2i
    angles = positions / 10000.0 ** (two_i / d_model)  # (T, 1) / (C/2,) -> (T, C/2)
    table = torch.zeros(context_length, d_model, dtype=torch.float64)  # (T, C)
    table[:, 0::2] = torch.sin(angles)  # columns 0, 2, 4, …
    table[:, 1::2] = torch.cos(angles)  # columns 1, 3, 5, … share the angle of the column before
    return table.float()


def shift_encoding(pe: torch.Tensor, k: int) -> torch.Tensor:
    """Rows PE[pos] (N, d_model) -> the rows PE[pos + k], by rotating each (sin, cos) pair by k·ω_i."""
    d_model = pe.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (C/2,)
    c, s = torch.cos(omega * k).float(), torch.sin(omega * k).float()  # (C/2,) each
    sin, cos = pe[:, 0::2], pe[:, 1::2]  # (N, C/2) each: sin(ω_i pos), cos(ω_i pos)
    shifted = torch.empty_like(pe)  # (N, C)
    shifted[:, 0::2] = sin * c + cos * s  # sin(a + b) = sin a cos b + cos a sin b
    shifted[:, 1::2] = cos * c - sin * s  # cos(a + b) = cos a cos b − sin a sin b
    return shifted
