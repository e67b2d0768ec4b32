"""Position-wise feed-forward networks (09_transformer_block) and SwiGLU (13_modern_blocks).

Attention mixes information *between* tokens; the feed-forward network then
works on each token's vector on its own: expand C -> d_ff, apply a
non-linearity, project back d_ff -> C.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn
from torch.nn import functional as F

from . import _checks as check

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")


_FUNCTIONS = {
    "relu": F.relu,
    "gelu": F.gelu,
    # GPT-2's tanh approximation of GELU; it differs from the exact erf form by up to ~1e-3.
    "gelu_tanh": partial(F.gelu, approximate="tanh"),
    "silu": F.silu,
}


def _check_arguments(d_model: object, d_ff: object, dropout: object, bias: object) -> None:
    """The clear errors of a feed-forward network built by hand (a GPT's config checks them once);
    ``d_ff=None`` is :class:`FeedForward`'s default width."""
    check.integer("d_model", d_model)
    if d_ff is not None:
        check.integer("d_ff", d_ff)
    check.probability("dropout", dropout)
    check.boolean("bias", bias)


class FeedForward(nn.Module):
    """FFN(x) = W2 · act(W1 x + b1) + b2, then dropout (introduced in 09_transformer_block).

    ``d_ff`` defaults to 4 · d_model (64 -> 256 -> 64 in the course). Input
    [..., C] -> output [..., C]. ``validate=False`` skips the argument checks: a GPT passes it,
    because its ``GPTConfig`` has checked the same rules once.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int | None = None,
        activation: str = "relu",
        dropout: float = 0.0,
        bias: bool = True,
        *,
        validate: bool = True,
    ) -> None:
        super().__init__()
        if validate:  # a GPT passes False: its GPTConfig has checked the same rules once
            _check_arguments(d_model, d_ff, dropout, bias)
            check.choice("activation", activation, ACTIVATIONS)
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.act = _FUNCTIONS[activation]
        self.activation = activation
        self.up = nn.Linear(d_model, d_ff, bias=bias)  # W1: (C -> d_ff)
        self.down = nn.Linear(d_ff, d_model, bias=bias)  # W2: (d_ff -> C)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.act(self.up(x))  # (..., C) -> (..., d_ff)
        return self.dropout(self.down(hidden))  # (..., d_ff) -> (..., C)

    def extra_repr(self) -> str:
        return f"activation={self.activation!r}"


class SwiGLU(nn.Module):
    """SwiGLU(x) = W2 · (SiLU(W1 x) ⊙ W3 x), the gated FFN of LLaMA (introduced in 13_modern_blocks).

    No biases, as in LLaMA. With three matrices instead of two, ``d_ff`` is
    usually ⅔ of the plain FFN's 4 · d_model so the parameter count stays the same.
    Input [..., C] -> output [..., C]. ``validate`` as in :class:`FeedForward`.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        dropout: float = 0.0,
        bias: bool = False,
        *,
        validate: bool = True,
    ) -> None:
        super().__init__()
        if validate:  # as in FeedForward; SwiGLU has no default width
            _check_arguments(d_model, check.integer("d_ff", d_ff), dropout, bias)
        self.gate = nn.Linear(d_model, d_ff, bias=bias)  # W1: (C -> d_ff), goes through SiLU
        self.up = nn.Linear(d_model, d_ff, bias=bias)  # W3: (C -> d_ff), the value being gated
        self.down = nn.Linear(d_ff, d_model, bias=bias)  # W2: (d_ff -> C)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = F.silu(self.gate(x)) * self.up(x)  # (..., C) -> (..., d_ff)
        return self.dropout(self.down(hidden))  # (..., d_ff) -> (..., C)
