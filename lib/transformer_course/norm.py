"""Normalisation layers: LayerNorm (09_transformer_block) and RMSNorm (13_modern_blocks).

Both normalise each token's vector on its own (over the last dimension C), never
across the batch: unlike BatchNorm there are no running statistics, so training
and inference compute exactly the same thing.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from . import _checks as check
from .i18n import _


def _check_dims(d: object, eps: object) -> None:
    check.integer("d", d)
    check.number("eps", eps, above=0.0)


def _check_input(x: torch.Tensor, d: int, name: str) -> None:
    check.tensor("x", x, shape=f"[..., {d}]")
    if x.ndim == 0 or x.shape[-1] != d:
        raise ValueError(
            _("{name} was built for vectors of size d={d}, got input of shape {x_shape}").format(
                name=name, d=d, x_shape=tuple(x.shape)
            )
        )


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm written out (09_transformer_block), the formula of seed 004 plus the learnable
    gain and shift: x [..., C] -> [..., C]. The variance divides by C (biased), as PyTorch does."""
    mean = x.mean(dim=-1, keepdim=True)  # (..., C) -> (..., 1)
    centred = x - mean  # (..., C)
    var = centred.pow(2).mean(dim=-1, keepdim=True)  # (..., C) -> (..., 1)
    x_hat = centred * torch.rsqrt(var + eps)  # (..., C) zero mean, unit variance
    return x_hat * weight + bias  # (..., C)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm written out (13_modern_blocks): x [..., C] -> x / sqrt(mean(x²) + eps) · weight."""
    mean_square = x.pow(2).mean(dim=-1, keepdim=True)  # (..., C) -> (..., 1)
    return x * torch.rsqrt(mean_square + eps) * weight  # (..., C)


class LayerNorm(nn.Module):
    """LayerNorm (introduced in 09_transformer_block): for each vector x of size d,

    y = (x − mean(x)) / sqrt(var(x) + eps) · weight + bias,

    with the biased variance (divide by d), as in seed 004 and ``torch.nn.LayerNorm``
    (see :func:`layer_norm` for the formula as code). Input [..., C] -> output [..., C], C = d.
    ``validate=False`` skips the argument and input checks (a GPT's norms: its config has
    checked the arguments, ``GPT.forward`` the token ids).
    """

    def __init__(self, d: int, eps: float = 1e-5, *, validate: bool = True) -> None:
        super().__init__()
        if validate:  # a GPT passes False: its GPTConfig has checked d_model and norm_eps
            _check_dims(d, eps)
        self.d, self.eps = d, float(eps)
        self.weight = nn.Parameter(torch.ones(d))  # (C,) gain γ, starts as "no change"
        self.bias = nn.Parameter(torch.zeros(d))  # (C,) shift β
        self.check_inputs = validate  # a GPT's norms skip it: GPT.forward checks the ids

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.check_inputs:
            _check_input(x, self.d, "LayerNorm")
        # The fused kernel computes exactly :func:`layer_norm` (the tests check it) in one pass
        # instead of five; the GPT calls this 17 times per forward, so it matters for speed.
        return F.layer_norm(x, (self.d,), self.weight, self.bias, self.eps)  # (..., C)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps}"


class RMSNorm(nn.Module):
    """RMSNorm (introduced in 13_modern_blocks): y = x / sqrt(mean(x²) + eps) · weight.

    No mean is subtracted and there is no bias. ``eps`` sits *inside* the square
    root, as in ``torch.nn.RMSNorm`` and LLaMA (seed 001 writes it outside).
    Input [..., C] -> output [..., C], C = d. ``validate`` as in :class:`LayerNorm`.
    """

    def __init__(self, d: int, eps: float = 1e-6, *, validate: bool = True) -> None:
        super().__init__()
        if validate:  # a GPT passes False: its GPTConfig has checked d_model and norm_eps
            _check_dims(d, eps)
        self.d, self.eps = d, float(eps)
        self.weight = nn.Parameter(torch.ones(d))  # (C,) gain γ
        self.check_inputs = validate  # a GPT's norms skip it: GPT.forward checks the ids

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.check_inputs:
            _check_input(x, self.d, "RMSNorm")
        if hasattr(F, "rms_norm"):  # fused kernel, the same numbers as :func:`rms_norm`
            return F.rms_norm(x, (self.d,), self.weight, self.eps)  # (..., C)
        return rms_norm(x, self.weight, self.eps)  # (..., C)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps}"
