"""Attention, built by hand (notebooks 04_qkv … 08_v_attention; GQA and cross-attention in 13–14).

The pieces, in the order the course builds them:

* :func:`split_heads` / :func:`merge_heads` — (B, T, C) <-> (B, H, T, D) (04_qkv).
* :func:`causal_mask` and :func:`padding_mask` — boolean masks, True = may attend (06_mask).
* :func:`softmax` — the numerically stable softmax, fully masked rows -> 0 (07_softmax).
* :func:`scaled_dot_product_attention` — softmax(Q Kᵀ · scale + mask) V (05–08).
* :class:`MultiHeadAttention` — projections, heads, attention, output projection (08).

Masks follow :func:`torch.nn.functional.scaled_dot_product_attention`: a boolean
tensor where True means "this query may look at this key".
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks as check
from .kv_cache import KVCache
from .positional import apply_rope

__all__ = [
    "MultiHeadAttention",
    "attention_weights",
    "causal_mask",
    "divide_by_temperature",
    "entropy",
    "merge_heads",
    "padding_mask",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
]


def _check_tensor(name: str, value: object, min_dim: int) -> torch.Tensor:
    return check.tensor(name, value, min_dim, floating=True)


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The decoder's mask [T, T] (06_mask): True where query i may attend to key j, i.e. j ≤ i.

    The lower triangle (diagonal included) is True; the upper triangle — the future — is False.
    """
    check.integer("T", T)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def padding_mask(valid: torch.Tensor) -> torch.Tensor:
    """A key-padding mask (06_mask): ``valid`` [B, S] (True = a real token, False = padding)
    becomes [B, 1, 1, S], which broadcasts over heads and queries of [B, H, T, S] scores."""
    if not isinstance(valid, torch.Tensor) or valid.dtype != torch.bool or valid.dim() != 2:
        shape = tuple(valid.shape) if isinstance(valid, torch.Tensor) else type(valid).__name__
        raise ValueError(f"valid must be a bool tensor of shape [B, S], got {shape}")
    return valid[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, H, T, D) with D = C // H (04_qkv): head h gets columns h·D … (h+1)·D − 1."""
    check.integer("n_heads", n_heads)
    _check_tensor("x", x, 3)
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"the last dimension ({C}) must be divisible by n_heads ({n_heads})")
    # (B, T, C) -> (B, T, H, D) -> (B, H, T, D)
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, D) -> (B, T, H·D), the inverse of :func:`split_heads` (08_v_attention)."""
    _check_tensor("x", x, 4)
    B, H, T, D = x.shape
    return x.transpose(1, 2).reshape(B, T, H * D)  # (B, H, T, D) -> (B, T, H, D) -> (B, T, C)


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax along ``dim`` (07_softmax); same shape as ``scores``.

    Subtracting the row maximum keeps exp() from overflowing. ``-inf`` entries
    get exactly 0, and a row that is all ``-inf`` (every key masked) gets all
    zeros instead of the 0/0 = NaN of the textbook formula.
    """
    row_max = scores.amax(dim=dim, keepdim=True)  # (..., 1)
    # A fully masked row has max -inf; shifting by it would give -inf - -inf = NaN.
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
    exp = torch.exp(scores - row_max)  # (...) every entry in [0, 1], masked ones exactly 0
    total = exp.sum(dim=dim, keepdim=True)  # (..., 1)
    # Dividing a zero row by 1 instead of 0 keeps it (and its gradient) free of NaN.
    total = torch.where(total > 0, total, torch.ones_like(total))
    return exp / total  # (...)


def entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy −Σ p log p (nats) of each row of ``weights`` [..., S]; 0 · log 0 counts as 0 (05_scale)."""
    logs = torch.where(weights > 0, weights.log(), torch.zeros_like(weights))  # (..., S)
    return -(weights * logs).sum(dim=-1)  # (...)


def divide_by_temperature(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    """``scores`` [..., S] / τ for a softmax over the last dimension (07_softmax, 12_generation).

    When τ is so small that the division overflows (τ = 1e-45), the row maximum is subtracted
    first: the softmax is the same, and the largest score ends at 0 instead of inf − inf = NaN.
    """
    scaled = scores / temperature  # (..., S)
    if not torch.isfinite(scaled[torch.isfinite(scores)]).all():
        scaled = (scores - scores.amax(dim=-1, keepdim=True)) / temperature  # (..., S) max is 0
    return scaled


def _check_mask(mask: object, scores_shape: torch.Size) -> torch.Tensor:
    if not isinstance(mask, torch.Tensor):
        raise ValueError(f"mask must be a bool torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise ValueError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "for an additive float mask use torch.nn.functional.scaled_dot_product_attention"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} ([..., Tq, Tk])"
        )
    return mask


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Size:
    """Validate q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]; return the scores' shape."""
    _check_tensor("q", q, 2)
    _check_tensor("k", k, 2)
    _check_tensor("v", v, 2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension D, got q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys Tk, got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading (batch, head) dimensions of q {tuple(q.shape)}, k {tuple(k.shape)} "
            f"and v {tuple(v.shape)} do not broadcast"
        ) from None
    return torch.Size((*lead, q.shape[-2], k.shape[-2]))


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ · scale, masked) V, written out by hand (05_scale … 08_v_attention).

    Shapes: q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]; ``mask`` boolean,
    broadcastable to [..., Tq, Tk], True = may attend; ``scale`` defaults to 1/√D.
    Returns ``(out [..., Tq, Dv], weights [..., Tq, Tk])``; each row of ``weights``
    sums to 1, except a fully masked row, which is all 0 (and so is its output).
    """
    _check_qkv(q, k, v)
    weights = attention_weights(q, k, mask=mask, scale=scale)  # (..., Tq, Tk)
    out = weights @ v  # (..., Tq, Tk) @ (..., Tk, Dv) -> (..., Tq, Dv)
    return out, weights


def attention_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """Only the weights softmax(Q Kᵀ · scale, masked) [..., Tq, Tk] of
    :func:`scaled_dot_product_attention` (05_scale … 07_softmax)."""
    scores_shape = _check_qkv(q, k, k)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = check.number("scale", scale, above=0.0, hint="(None = 1/√D)")
    scores = q @ k.transpose(-2, -1) * scale  # (..., Tq, D) @ (..., D, Tk) -> (..., Tq, Tk)
    if mask is not None:
        mask = _check_mask(mask, scores_shape)
        scores = scores.masked_fill(~mask, float("-inf"))  # (..., Tq, Tk) future / padding -> -inf
    return softmax(scores, dim=-1)  # (..., Tq, Tk)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (introduced in 04_qkv, whose projections and head split it holds;
    complete with the weighted sum and W_O in 08_v_attention), with grouped-query (GQA/MQA) and cross-attention
    (13_modern_blocks, 14_encoder_decoder) and optional RoPE on queries and keys.

    ``q_proj`` maps C -> C; ``k_proj`` and ``v_proj`` map C -> n_kv_heads · D, and each
    K/V head is shared by ``n_heads // n_kv_heads`` consecutive query heads;
    ``out_proj`` maps C -> C. ``dropout`` acts on the attention weights in training only.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_kv_heads: int | None = None,
        dropout: float = 0.0,
        bias: bool = True,
        rope: bool = False,
        rope_base: float = 10000.0,
    ) -> None:
        super().__init__()
        check.integer("d_model", d_model)
        check.integer("n_heads", n_heads)
        check.divides(
            "n_heads", n_heads, "d_model", d_model, "so every head gets d_model // n_heads features"
        )
        n_kv_heads = n_heads if n_kv_heads is None else check.integer("n_kv_heads", n_kv_heads)
        check.divides(
            "n_kv_heads",
            n_kv_heads,
            "n_heads",
            n_heads,
            "so each K/V head serves the same number of query heads",
        )
        check.probability("dropout", dropout)
        check.boolean("bias", bias)
        check.boolean("rope", rope)
        head_dim = d_model // n_heads
        if rope:
            if head_dim % 2:
                raise ValueError(f"rope needs an even head size d_model // n_heads, got {head_dim}")
            check.number("rope_base", rope_base, above=1.0)
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.dropout = float(dropout)
        self.rope = bool(rope)
        self.rope_base = float(rope_base)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)  # (C -> H·D)
        self.k_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias)  # (C -> Hkv·D)
        self.v_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias)  # (C -> Hkv·D)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # (H·D -> C)

    def extra_repr(self) -> str:
        extra = f", rope_base={self.rope_base}" if self.rope else ""
        return (
            f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, "
            f"dropout={self.dropout}, rope={self.rope}{extra}"
        )

    def _check_inputs(self, x: object, context: object) -> torch.Tensor:
        x = _check_tensor("x", x, 3)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape [B, T, {self.d_model}], got {tuple(x.shape)}")
        if context is None:
            return x
        context = _check_tensor("context", context, 3)
        if (
            context.dim() != 3
            or context.shape[-1] != self.d_model
            or context.shape[0] != x.shape[0]
        ):
            raise ValueError(
                f"context must have shape [B, S, {self.d_model}] with the same B as x {tuple(x.shape)}, "
                f"got {tuple(context.shape)}"
            )
        return context

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        causal: bool = False,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``x`` [B, T, C] to itself, or to ``context`` [B, S, C] (cross-attention).

        ``mask``: boolean, broadcastable to [B, H, T, S], True = may attend.
        ``causal=True`` adds the causal mask (needs S == T). Returns ``out`` [B, T, C],
        or ``(out, weights [B, H, T, S])`` with ``return_weights=True`` (weights before dropout).
        Without weights the fused :func:`torch.nn.functional.scaled_dot_product_attention`
        does the work; with them, :func:`scaled_dot_product_attention` (by hand) does.

        ``cache`` (a :class:`~.kv_cache.KVCache`, 12_generation): in self-attention ``x`` holds
        only the new tokens, at absolute positions P … P + T − 1 where P = ``cache.length``;
        their keys and values are appended and the queries attend to all P + T keys (RoPE
        rotates at the absolute positions; ``causal`` hides only the new tokens' future). In
        cross-attention the keys and values of ``context`` are computed on the first call and
        reused on the next ones (pass the same ``context`` again).
        """
        if cache is not None and not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache or None, got {type(cache).__name__}")
        reuse = cache is not None and cache.length > 0 and context is not None
        source = self._check_inputs(x, None if reuse else context)
        B, T, _ = x.shape
        past = 0 if cache is None or reuse or context is not None else cache.length  # P
        S = cache.length if reuse else past + source.shape[1]
        if mask is not None:
            mask = _check_mask(mask, torch.Size((B, self.n_heads, T, S)))
        mask, only_causal = self._with_causal(mask, causal, T, S, past, x.device)
        q = self._rotated(self._split(self.q_proj(x), self.n_heads), past)  # (B, H, T, D)
        if reuse:
            k, v = cache.keys, cache.values  # (B, Hkv, S, D) computed once per source
        else:
            k, v = self._keys_values(source, past, cache)  # (B, Hkv, S, D) each
        if self.n_kv_heads != self.n_heads:
            # Query heads g·r … g·r + r − 1 share K/V head g (r = n_heads // n_kv_heads).
            repeat = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(repeat, dim=1)  # (B, Hkv, S, D) -> (B, H, S, D)
            v = v.repeat_interleave(repeat, dim=1)  # (B, Hkv, S, D) -> (B, H, S, D)
        heads, weights = self._heads(q, k, v, mask, only_causal, return_weights)  # (B, H, T, D)
        # (B, H, T, D) -> (B, T, C)
        out = self.out_proj(heads.transpose(1, 2).reshape(B, T, self.d_model))
        return (out, weights) if return_weights else out

    @staticmethod
    def _with_causal(
        mask: torch.Tensor | None, causal: bool, T: int, S: int, past: int, device: torch.device
    ) -> tuple[torch.Tensor | None, bool]:
        """``mask`` combined with the causal mask when ``causal``; also whether the result is
        the plain causal mask (which the fused kernel builds itself)."""
        if not causal:
            return mask, False
        if T + past != S:
            raise ValueError(
                f"causal=True needs as many keys as queries, got T={T} queries and S={S} keys"
            )
        if T == 1 and past > 0:
            return mask, False  # one new query after P cached keys sees every key: no mask at all
        # Query i sits at position P + i and may see keys 0 … P + i.
        future = torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=past)  # (T, S)
        if mask is None:
            return future, past == 0
        return mask & future, False  # (..., T, S)

    def _split(self, projected: torch.Tensor, n_heads: int) -> torch.Tensor:
        """(B, L, n_heads · D) -> (B, n_heads, L, D)."""
        B, L, _ = projected.shape
        return projected.view(B, L, n_heads, self.head_dim).transpose(1, 2)

    def _rotated(self, heads: torch.Tensor, start: int) -> torch.Tensor:
        """With RoPE, ``heads`` [B, H, L, D] rotated at positions start … start + L − 1."""
        if not self.rope:
            return heads
        positions = torch.arange(start, start + heads.shape[2], device=heads.device)  # (L,)
        return apply_rope(heads, positions, base=self.rope_base)  # (B, H, L, D)

    def _keys_values(
        self, source: torch.Tensor, past: int, cache: KVCache | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of ``source`` [B, L, C] at positions past … past + L − 1, appended to
        ``cache`` when there is one: [B, Hkv, S, D] each."""
        # (B, L, C) -> (B, Hkv, L, D); keys rotated at their absolute positions, so cached
        # keys keep their own angle.
        k = self._rotated(self._split(self.k_proj(source), self.n_kv_heads), past)
        v = self._split(self.v_proj(source), self.n_kv_heads)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, Hkv, S, D) the past tokens' and the new ones'
        return k, v

    def _heads(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None,
        only_causal: bool,
        return_weights: bool,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Every head's output [B, H, T, D] (and, by hand, the weights [B, H, T, S] before dropout)."""
        dropout_p = self.dropout if self.training else 0.0
        if return_weights:
            weights = attention_weights(q, k, mask=mask)  # (B, H, T, S)
            dropped = F.dropout(weights, p=dropout_p, training=dropout_p > 0)  # (B, H, T, S)
            return dropped @ v, weights  # (B, H, T, S) @ (B, H, S, D) -> (B, H, T, D)
        if only_causal:
            # (B, H, T, D)
            return F.scaled_dot_product_attention(
                q, k, v, dropout_p=dropout_p, is_causal=True
            ), None
        # (B, H, T, D)
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        if mask is not None:
            # Older PyTorch kernels return NaN for a query with no key to look at; ours gives 0.
            heads = heads.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)  # (B, H, T, D)
        return heads, None
