"""Attention, built by hand (notebooks 04_qkv … 08_v_attention; GQA and cross-attention in 13–14).

The pieces, in the order the course builds them:

* :func:`split_heads` / :func:`merge_heads` — (B, T, C) <-> (B, H, T, D) (04_qkv).
* :func:`causal_mask` and :func:`padding_mask` — boolean masks, True = may attend (06_mask).
* :func:`softmax` — the numerically stable softmax, fully masked rows -> 0 (07_softmax).
* :func:`scaled_dot_product_attention` — softmax(Q Kᵀ · scale + mask) V (05–08).
* :class:`MultiHeadAttention` — projections, heads, attention, output projection (08).
* :func:`use_flash_attention` — route a model's attention through the tiled kernel of
  :mod:`.flash`, FlashAttention built by hand (15_flash_attention).

Masks follow :func:`torch.nn.functional.scaled_dot_product_attention`: a boolean
tensor where True means "this query may look at this key".
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .. import _checks as check
from ..i18n import N_, _
from ..kv_cache import KVCache
from ..positional import apply_rope, check_rope_head_size
from .flash import flash_attention

__all__ = [
    "MultiHeadAttention",
    "attention_weights",
    "causal_mask",
    "check_heads",
    "divide_by_temperature",
    "entropy",
    "merge_heads",
    "padding_mask",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
    "use_flash_attention",
]


def _check_tensor(name: str, value: object, min_dim: int) -> torch.Tensor:
    return check.tensor(name, value, min_dim, floating=True)


def causal_mask(
    T: int, device: torch.device | str | None = None, *, S: int | None = None, offset: int = 0
) -> torch.Tensor:
    """The decoder's mask [T, T] (06_mask): True where query i may attend to key j, i.e. j ≤ i.

    The lower triangle (diagonal included) is True; the upper triangle — the future — is False.
    With a KV cache (12_generation) the T queries follow ``offset`` cached tokens and see
    ``S`` keys (default T + offset): query i sits at position offset + i and sees keys
    0 … offset + i, so the mask is [T, S].
    """
    check.integer("T", T)
    check.integer("offset", offset, 0)
    S = T + offset if S is None else check.integer("S", S)
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=offset)  # (T, S)


def padding_mask(valid: torch.Tensor) -> torch.Tensor:
    """A key-padding mask (06_mask): ``valid`` [B, S] (True = a real token, False = padding)
    becomes [B, 1, 1, S], which broadcasts over heads and queries of [B, H, T, S] scores."""
    if not isinstance(valid, torch.Tensor) or valid.dtype != torch.bool or valid.dim() != 2:
        shape = tuple(valid.shape) if isinstance(valid, torch.Tensor) else type(valid).__name__
        raise ValueError(
            _("valid must be a bool tensor of shape [B, S], got {shape}").format(shape=shape)
        )
    return valid[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, H, T, D) with D = C // H (04_qkv): head h gets columns h·D … (h+1)·D − 1."""
    check.integer("n_heads", n_heads)
    _check_tensor("x", x, 3)
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(
            _("the last dimension ({C}) must be divisible by n_heads ({n_heads})").format(
                C=C, n_heads=n_heads
            )
        )
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
        raise ValueError(
            _("mask must be a bool torch.Tensor, got {kind}").format(kind=type(mask).__name__)
        )
    if mask.dtype != torch.bool:
        raise ValueError(
            _(
                "mask must have dtype torch.bool (True = may attend), got {dtype}; for an additive"
                " float mask use torch.nn.functional.scaled_dot_product_attention"
            ).format(dtype=mask.dtype)
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            _(
                "mask of shape {mask_shape} does not broadcast to the scores' shape {scores_shape}"
                " ([..., Tq, Tk])"
            ).format(mask_shape=tuple(mask.shape), scores_shape=tuple(scores_shape))
        )
    return mask


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Size:
    """Validate q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]; return the scores' shape."""
    _check_tensor("q", q, 2)
    _check_tensor("k", k, 2)
    _check_tensor("v", v, 2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            _(
                "q and k must have the same last dimension D, got q {q_shape} and k {k_shape}"
            ).format(q_shape=tuple(q.shape), k_shape=tuple(k.shape))
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            _(
                "k and v must have the same number of keys Tk, got k {k_shape} and v {v_shape}"
            ).format(k_shape=tuple(k.shape), v_shape=tuple(v.shape))
        )
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            _(
                "the leading (batch, head) dimensions of q {q_shape}, k {k_shape} and v {v_shape} "
                "do not broadcast"
            ).format(q_shape=tuple(q.shape), k_shape=tuple(k.shape), v_shape=tuple(v.shape))
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
        scale = check.number("scale", scale, above=0.0, hint=N_("(None = 1/√D)"))
    scores = q @ k.transpose(-2, -1) * scale  # (..., Tq, D) @ (..., D, Tk) -> (..., Tq, Tk)
    if mask is not None:
        mask = _check_mask(mask, scores_shape)
        scores = scores.masked_fill(~mask, float("-inf"))  # (..., Tq, Tk) future / padding -> -inf
    return softmax(scores, dim=-1)  # (..., Tq, Tk)


def _hide_future(mask, T: int, S: int, past: int, device) -> torch.Tensor:
    """``mask`` (None, or boolean broadcastable to [..., T, S]) and, on top, the causal mask of T
    queries that follow ``past`` cached tokens: the mask the fused kernel's ``is_causal`` cannot
    build (06_mask; with a KV cache, 12_generation)."""
    future = causal_mask(T, device, S=S, offset=past)  # (T, S)
    return future if mask is None else mask & future  # (..., T, S)


def check_heads(d_model: object, n_heads: object, n_kv_heads: object = None) -> int:
    """The rules of attention heads (08_v_attention; grouped-query attention in 13_modern_blocks):
    ``n_heads`` divides ``d_model``, so every head gets D = d_model // n_heads features, and
    ``n_kv_heads`` (None: as many as ``n_heads``) divides ``n_heads``. Returns ``n_kv_heads``.
    :class:`MultiHeadAttention` and ``GPTConfig`` both apply them."""
    check.integer("d_model", d_model)
    check.integer("n_heads", n_heads)
    why = N_("so every head gets d_model // n_heads features")
    check.divides("n_heads", n_heads, "d_model", d_model, why)
    n_kv_heads = n_heads if n_kv_heads is None else check.integer("n_kv_heads", n_kv_heads)
    why = N_("so each K/V head serves the same number of query heads")
    check.divides("n_kv_heads", n_kv_heads, "n_heads", n_heads, why)
    return n_kv_heads


def _check_arguments(d_model, n_heads, n_kv_heads, dropout, bias, rope, rope_base) -> None:
    """The clear errors of a :class:`MultiHeadAttention` built by hand."""
    check_heads(d_model, n_heads, n_kv_heads)
    check.probability("dropout", dropout)
    check.boolean("bias", bias)
    if check.boolean("rope", rope):
        check_rope_head_size(d_model // n_heads)
        check.number("rope_base", rope_base, above=1.0)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (introduced in 04_qkv, whose projections and head split it holds;
    complete with the weighted sum and W_O in 08_v_attention), with grouped-query (GQA/MQA) and cross-attention
    (13_modern_blocks, 14_encoder_decoder) and optional RoPE on queries and keys.

    ``q_proj`` maps C -> C; ``k_proj`` and ``v_proj`` map C -> n_kv_heads · D, and each
    K/V head is shared by ``n_heads // n_kv_heads`` consecutive query heads;
    ``out_proj`` maps C -> C. ``dropout`` acts on the attention weights in training only.
    ``validate=False`` skips the argument and input checks: a GPT's blocks pass it, because their
    ``GPTConfig`` has checked the same rules once and ``GPT.forward`` checks the token ids (a
    layer built by hand keeps both).
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
        *,
        validate: bool = True,
    ) -> None:
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if validate:  # a GPT's blocks pass False: their GPTConfig has checked the same rules once
            _check_arguments(d_model, n_heads, n_kv_heads, dropout, bias, rope, rope_base)
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim = d_model // n_heads
        self.dropout = float(dropout)
        self.rope = bool(rope)
        self.rope_base = float(rope_base)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)  # (C -> H·D)
        self.k_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias)  # (C -> Hkv·D)
        self.v_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=bias)  # (C -> Hkv·D)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # (H·D -> C)
        # A layer built by hand checks each call's inputs; a GPT's layers (validate=False) see
        # only what the model computed after GPT.forward has checked the token ids.
        self.check_inputs = validate
        # 15_flash_attention: True routes unmasked, cache-free calls through the tiled kernel.
        self.flash = False

    def extra_repr(self) -> str:
        extra = f", rope_base={self.rope_base}" if self.rope else ""
        return (
            f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, "
            f"dropout={self.dropout}, rope={self.rope}{extra}"
        )

    def forward(self, x, context=None, mask=None, causal=False, return_weights=False, cache=None):
        """Attend from ``x`` [B, T, C] to itself, or to ``context`` [B, S, C] (cross-attention).

        ``mask``: boolean, broadcastable to [B, H, T, S], True = may attend.
        ``causal=True`` adds the causal mask (needs S == T). Returns ``out`` [B, T, C],
        or ``(out, weights [B, H, T, S])`` with ``return_weights=True`` (weights before dropout).
        Without weights the fused :func:`torch.nn.functional.scaled_dot_product_attention`
        does the work; with them, :func:`attention_weights` (by hand) does.

        ``cache`` (a :class:`~.kv_cache.KVCache`, 12_generation; self-attention only): ``x``
        holds only the new tokens, at positions P … P + T − 1 where P = ``cache.length``; their
        keys and values are appended and the queries attend to all P + T keys (RoPE rotates at
        the absolute positions; ``causal`` hides only the new tokens' future).
        """
        if self.check_inputs:  # a direct call; inside a GPT, GPT.forward has checked the ids
            self._check_inputs(x, context, mask, causal, cache)
        source = x if context is None else context  # (B, L, C) what the keys and values read
        B, T, C = x.shape
        past = 0 if cache is None else cache.length  # P, tokens cached before these
        # (B, T, C) -> (B, T, H, D) -> (B, H, T, D): head h gets features h·D … (h+1)·D − 1
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        # (B, L, C) -> (B, L, Hkv, D) -> (B, Hkv, L, D), keys and values alike
        k = self.k_proj(source).view(B, -1, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(source).view(B, -1, self.n_kv_heads, self.head_dim).transpose(1, 2)
        if self.rope:  # at absolute positions P, P + 1, …, so cached keys keep their angle
            q = apply_rope(q, torch.arange(past, past + T), self.rope_base)  # (B, H, T, D)
            # (B, Hkv, L, D); apply_rope moves the positions to the tensor's device
            k = apply_rope(k, torch.arange(past, past + k.shape[2]), self.rope_base)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, Hkv, S, D) the cached tokens' and the new ones'
        if self.n_kv_heads != self.n_heads:  # GQA: query heads g·r … g·r + r − 1 share K/V head g
            # (B, Hkv, S, D) -> (B, H, S, D) each
            k, v = (t.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1) for t in (k, v))
        # The fused kernel builds the plain causal mask itself; one new query sees every key.
        fused_causal = causal and mask is None and past == 0 and not return_weights
        if causal and not fused_causal and T > 1:
            mask = _hide_future(mask, T, k.shape[2], past, x.device)  # (..., T, S), 06_mask
        if return_weights:  # by hand, as 05–08 build it
            return self._attend_by_hand(q, k, v, mask)  # (B, T, C), (B, H, T, S)
        dropout_p = self.dropout if self.training else 0.0
        # PyTorch's fused kernel: the same numbers, faster. (B, H, T, D); the arguments after v:
        # attn_mask, dropout_p, is_causal
        if self.flash and mask is None and past == 0 and dropout_p == 0.0:  # 15_flash_attention
            heads = flash_attention(q, k, v, fused_causal)  # (B, H, T, D) tile by tile
        else:
            heads = F.scaled_dot_product_attention(q, k, v, mask, dropout_p, fused_causal)
        if mask is not None:  # older PyTorch gives NaN for a query with no key; ours gives 0
            heads = heads.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)  # (B, H, T, D)
        return self.out_proj(heads.transpose(1, 2).reshape(B, T, C))  # (B, H, T, D) -> (B, T, C)

    def _attend_by_hand(self, q, k, v, mask):
        """``forward`` with ``return_weights=True``: softmax(Q Kᵀ / √D, masked) V written out,
        as 05–08 build it. q [B, H, T, D], k and v [B, H, S, D] -> (out [B, T, C], weights
        [B, H, T, S]); the weights are returned before dropout, which acts in training only."""
        weights = attention_weights(q, k, mask=mask)  # (B, H, T, S)
        # (B, H, T, S) @ (B, H, S, D) -> (B, H, T, D), dropout on the weights in training
        heads = F.dropout(weights, self.dropout, self.training) @ v
        # (B, H, T, D) -> (B, T, H, D) -> (B, T, C), and the weights (B, H, T, S)
        return self.out_proj(heads.transpose(1, 2).flatten(2)), weights

    def _check_inputs(self, x, context, mask, causal, cache) -> None:
        """The clear errors of a direct call (a GPT's layers skip them: see ``check_inputs``)."""
        check.instance("cache", cache, KVCache, optional=True)
        if cache is not None and context is not None:
            raise ValueError(
                _(
                    "cache is for self-attention only: cross-attention recomputes the keys and "
                    "values of context (pass cache=None with context)"
                )
            )
        x = _check_tensor("x", x, 3)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                _("x must have shape [B, T, {d_model}], got {x_shape}").format(
                    d_model=self.d_model, x_shape=tuple(x.shape)
                )
            )
        if context is not None:
            context = _check_tensor("context", context, 3)
            if (
                context.dim() != 3
                or context.shape[-1] != self.d_model
                or context.shape[0] != x.shape[0]
            ):
                raise ValueError(
                    _(
                        "context must have shape [B, S, {d_model}] with the same B as x {x_shape},"
                        " got {context_shape}"
                    ).format(
                        d_model=self.d_model,
                        x_shape=tuple(x.shape),
                        context_shape=tuple(context.shape),
                    )
                )
        B, T, _channels = x.shape
        past = 0 if cache is None else cache.length
        S = past + (T if context is None else context.shape[1])
        if mask is not None:
            _check_mask(mask, torch.Size((B, self.n_heads, T, S)))
        if causal and T + past != S:
            raise ValueError(
                _(
                    "causal=True needs as many keys as queries, got T={T} queries and S={S} keys"
                ).format(T=T, S=S)
            )


def use_flash_attention(model: nn.Module, enabled: bool = True) -> int:
    """Switch every :class:`MultiHeadAttention` inside ``model`` to the tiled kernel of
    :mod:`.flash_attention` (introduced in 15_flash_attention), or back with ``enabled=False``.

    Calls with a mask, a KV cache that already holds tokens, returned weights or dropout in
    training keep PyTorch's fused kernel. Returns how many layers were switched.
    """
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    for layer in layers:
        layer.flash = check.boolean("enabled", enabled)
    return len(layers)
