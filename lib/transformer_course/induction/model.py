"""The toy of 16_induction_heads: a Transformer made of attention alone.

Token embedding + learned positions, then ``n_layers`` of causal multi-head attention, each added
to the residual stream (no MLP, no LayerNorm), then the unembedding. With two layers it is the
smallest model in which an induction head can form (Elhage et al. 2021, Olsson et al. 2022).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .. import _checks as check
from ..attention import (
    MultiHeadAttention,
    causal_mask,
    check_heads,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from ..i18n import _

__all__ = ["AttentionOnlyTransformer", "ToyConfig"]


@dataclass(frozen=True)
class ToyConfig:
    """The toy's shape (introduced in 16_induction_heads); every rule is checked once, here."""

    n_layers: int = 2
    d_model: int = 64
    n_heads: int = 4
    vocab_size: int = 64
    context_length: int = 64

    def __post_init__(self) -> None:
        check.integer("n_layers", self.n_layers)
        check.integer("vocab_size", self.vocab_size, 2)
        check.integer("context_length", self.context_length, 2)
        check_heads(self.d_model, self.n_heads)


class AttentionOnlyTransformer(nn.Module):
    """Embeddings, ``n_layers`` of causal attention on the residual stream, unembedding
    (introduced in 16_induction_heads).

    ``forward(tokens)`` returns logits [B, T, V] and keeps the attention weights of the call in
    ``last_attention`` [L, B, H, T, T]; ``ablate=[(layer, head), ...]`` zeroes those heads'
    outputs before each layer's output projection, as if the heads were not there.
    With ``record_attention = False`` (set by :func:`~.training.train_toy` while it trains) the
    heads run in PyTorch's fused kernel, as :class:`~..attention.MultiHeadAttention` does without
    weights, and ``last_attention`` is None.
    """

    def __init__(self, config: ToyConfig) -> None:
        super().__init__()
        check.instance("config", config, ToyConfig)
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embedding = nn.Embedding(config.context_length, config.d_model)
        # Only the projections of 08's layer are used: forward runs the heads one step at a time.
        self.layers = nn.ModuleList(
            MultiHeadAttention(config.d_model, config.n_heads, bias=False, validate=False)
            for _layer in range(config.n_layers)
        )
        self.unembedding = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self._weights: list[torch.Tensor] = []  # the last call's, one (B, H, T, T) per layer
        # False: the fused kernel, no weights kept (train_toy's steps); True: by hand, kept.
        self.record_attention = True

    def forward(self, tokens: torch.Tensor, ablate: Iterable[tuple[int, int]] = ()) -> torch.Tensor:
        """Logits [B, T, V] of token ids ``tokens`` [B, T]; ``ablate`` lists (layer, head) pairs
        whose outputs are zeroed. The weights of every layer go to ``last_attention``."""
        cfg = self.config
        tokens = check.token_ids("tokens", tokens, cfg.vocab_size)
        T = tokens.shape[1]
        if cfg.context_length < T:
            raise ValueError(
                _("tokens has {T} positions, more than context_length={n}").format(
                    T=T, n=cfg.context_length
                )
            )
        keep = self._head_mask(ablate, tokens.device)  # (L, H) 1 = keep, 0 = ablated
        positions = torch.arange(T, device=tokens.device)  # (T,)
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (B, T, C)
        mask = causal_mask(T, tokens.device)  # (T, T) True = may attend
        weights = []
        for index, layer in enumerate(self.layers):
            q = split_heads(layer.q_proj(x), cfg.n_heads)  # (B, T, C) -> (B, H, T, D)
            k = split_heads(layer.k_proj(x), cfg.n_heads)  # (B, T, C) -> (B, H, T, D)
            v = split_heads(layer.v_proj(x), cfg.n_heads)  # (B, T, C) -> (B, H, T, D)
            if self.record_attention:  # by hand, as 05–08 build it, keeping the weights
                heads, w = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, D), (B, H, T, T)
                weights.append(w.detach())
            else:  # PyTorch's fused kernel: the same numbers, about twice as fast to train
                heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
            heads = heads * keep[index].view(1, -1, 1, 1)  # (B, H, T, D) ablated heads -> 0
            x = x + layer.out_proj(merge_heads(heads))  # (B, H, T, D) -> (B, T, C), residual
        self._weights = weights  # stacked only when asked for
        return self.unembedding(x)  # (B, T, C) -> (B, T, V)

    @property
    def last_attention(self) -> torch.Tensor | None:
        """The attention weights of the last call, [L, B, H, T, T] (None before the first)."""
        return torch.stack(self._weights) if self._weights else None  # L × (B, H, T, T)

    def _head_mask(self, ablate: Iterable[tuple[int, int]], device) -> torch.Tensor:
        """(L, H) ones, with a 0 for every (layer, head) in ``ablate`` (checked)."""
        cfg = self.config
        keep = torch.ones(cfg.n_layers, cfg.n_heads, device=device)  # (L, H)
        for pair in ablate:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(
                    _("ablate must list (layer, head) pairs, got {pair!r}").format(pair=pair)
                )
            layer = check.integer("layer", pair[0], 0, cfg.n_layers - 1)
            head = check.integer("head", pair[1], 0, cfg.n_heads - 1)
            keep[layer, head] = 0.0
        return keep
