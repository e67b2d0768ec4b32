"""FlashAttention in pure PyTorch, built on a CPU (introduced in 15_flash_attention): attention
computed tile by tile, the kernel behind :func:`transformer_course.attention.use_flash_attention`.

Attention as 05–08 build it forms the T × T matrix of scores, softmaxes it and multiplies by V.
FlashAttention never forms it: key tiles stream past each query tile through an *online softmax*
(a running maximum m, a running sum l and the rescale exp(m_old − m_new)), the forward pass keeps
one logsumexp per query, and the backward pass recomputes each tile of weights from it.

* :func:`online_softmax` and :func:`merge_softmax_stats` — softmax one block at a time.
* :func:`online_softmax_steps` — the (m, l, rescale) after each block (the notebook's widget).
* :func:`flash_forward` — tiled attention -> (out, lse), with causal tile skipping.
* :func:`flash_backward` and :class:`FlashAttentionFunction` — the backward by recomputation.
* :func:`flash_attention` — the autograd-ready call; :func:`naive_attention` — the T × T version.
* :class:`SavedTensorMeter` — the bytes autograd keeps for backward, via saved-tensor hooks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .. import _checks as check
from ..i18n import _

__all__ = [
    "FlashAttentionFunction",
    "SavedTensorMeter",
    "SoftmaxStep",
    "flash_attention",
    "flash_backward",
    "flash_forward",
    "merge_softmax_stats",
    "naive_attention",
    "online_softmax",
    "online_softmax_steps",
    "tile_grid",
]


def _rescale(m_old: torch.Tensor, m_new: torch.Tensor) -> torch.Tensor:
    """exp(m_old − m_new), with 0 where m_old is −inf (nothing seen yet: −inf − (−inf) is NaN)."""
    return torch.where(m_old == -math.inf, 0.0, torch.exp(m_old - m_new))


def merge_softmax_stats(
    first: tuple[torch.Tensor, torch.Tensor], second: tuple[torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge two partial softmax statistics (15_flash_attention): each of m₁, l₁, m₂, l₂ and
    the results has the shape [...] of the rows (one number per row).

    Each pair is (m, l) over some of a row's entries: m = their maximum, l = Σ exp(x − m). The
    result is the pair over both parts: m = max(m₁, m₂), l = l₁·e^{m₁−m} + l₂·e^{m₂−m}. The
    merge is commutative and associative, which is why the keys may be visited tile by tile.
    """
    (m1, l1), (m2, l2) = first, second
    m = torch.maximum(m1, m2)  # (...)
    return m, l1 * _rescale(m1, m) + l2 * _rescale(m2, m)  # (...), (...)


def _block_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(m, l) of one block x [..., n] along its last axis."""
    m = x.amax(dim=-1)  # (...)
    safe = torch.where(m == -math.inf, 0.0, m)  # an all −inf block: exp(−inf − 0) = 0
    return m, torch.exp(x - safe[..., None]).sum(dim=-1)  # (...), (...)


def online_softmax(x: torch.Tensor, block: int) -> torch.Tensor:
    """Softmax along the last axis of ``x`` [..., T], reading ``block`` entries at a time
    (15_flash_attention). The first pass keeps only the running (m, l); the second writes
    exp(x − m) / l. Equal to ``torch.softmax(x, dim=-1)``."""
    check.tensor("x", x, 1, floating=True)
    check.integer("block", block)
    m = torch.full(x.shape[:-1], -math.inf, dtype=x.dtype, device=x.device)  # (...)
    l = torch.zeros_like(m)  # (...)
    for start in range(0, x.shape[-1], block):
        m, l = merge_softmax_stats((m, l), _block_stats(x[..., start : start + block]))
    return torch.exp(x - m[..., None]) / l[..., None]  # (..., T)


@dataclass(frozen=True)
class SoftmaxStep:
    """One block of :func:`online_softmax_steps`: the block's entries, the running maximum and
    sum after it, and the factor exp(m_old − m_new) that rescaled the old sum (15_flash_attention)."""

    start: int
    values: list[float]
    m: float
    l: float
    rescale: float


def online_softmax_steps(row: torch.Tensor, block: int) -> list[SoftmaxStep]:
    """The online softmax of one ``row`` [T], step by step (15_flash_attention's widget)."""
    check.tensor("row", row, 1, floating=True)
    if row.dim() != 1:
        raise ValueError(
            _("row must be a 1-D tensor [T], got shape {shape}").format(shape=tuple(row.shape))
        )
    check.integer("block", block)
    m, l = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    steps = []
    for start in range(0, row.numel(), block):
        part = row[start : start + block].double()  # (block,)
        new_m, new_l = merge_softmax_stats((m, l), _block_stats(part))
        rescale = float(_rescale(m, new_m))
        m, l = new_m, new_l
        steps.append(SoftmaxStep(start, part.tolist(), float(m), float(l), rescale))
    return steps


def _check_attention_inputs(q, k, v, causal, block_q, block_k) -> float:
    """The clear errors of :func:`flash_forward`; returns the scale 1/√D."""
    for name, value in (("q", q), ("k", k), ("v", v)):
        check.tensor(name, value, 2, floating=True)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            _(
                "need q [..., T, D], k [..., S, D], v [..., S, Dv], got q {q_shape}, k {k_shape}, "
                "v {v_shape}"
            ).format(q_shape=tuple(q.shape), k_shape=tuple(k.shape), v_shape=tuple(v.shape))
        )
    if check.boolean("causal", causal) and q.shape[-2] != k.shape[-2]:
        raise ValueError(
            _("causal=True needs as many queries as keys, got {queries} and {keys}").format(
                queries=q.shape[-2], keys=k.shape[-2]
            )
        )
    check.integer("block_q", block_q)
    check.integer("block_k", block_k)
    return 1.0 / math.sqrt(q.shape[-1])


def _key_tiles(q_start: int, q_end: int, S: int, block_k: int, causal: bool) -> range:
    """The starts of the key tiles a query tile [q_start, q_end) needs: with ``causal`` the tiles
    that lie wholly in its future (first key > last query) are skipped."""
    return range(0, min(S, q_end) if causal else S, block_k)


def _tile_scores(q_tile, k_tile, scale, causal, q_start, k_start) -> torch.Tensor:
    """The scores of one tile, (..., bq, D) @ (..., D, bk) -> (..., bq, bk); the causal mask is
    built for this tile only, and only where the tile crosses the diagonal."""
    scores = q_tile @ k_tile.transpose(-2, -1) * scale  # (..., bq, bk)
    if causal and k_start + k_tile.shape[-2] - 1 > q_start:  # some key lies after some query
        rows = torch.arange(q_start, q_start + q_tile.shape[-2], device=scores.device)[:, None]
        cols = torch.arange(k_start, k_start + k_tile.shape[-2], device=scores.device)[None, :]
        scores = scores.masked_fill(cols > rows, -math.inf)  # (..., bq, bk) the future -> −inf
    return scores


def flash_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tiled attention (15_flash_attention): q [..., T, D], k [..., S, D], v [..., S, Dv] ->
    (out [..., T, Dv], lse [..., T]), equal to softmax(Q Kᵀ/√D) V and to the logsumexp of each
    row of scores, without ever holding more than a (block_q × block_k) tile of scores.

    Per query tile: a running max m, a running sum l and an unnormalised output acc, all in
    fp32; each key tile rescales them by exp(m_old − m_new) before adding its own share.
    """
    scale = _check_attention_inputs(q, k, v, causal, block_q, block_k)
    T, S = q.shape[-2], k.shape[-2]
    outs, lses = [], []
    for q_start in range(0, T, block_q):
        q_tile = q[..., q_start : q_start + block_q, :]  # (..., bq, D)
        m = q_tile.new_full((*q_tile.shape[:-1],), -math.inf, dtype=torch.float32)  # (..., bq)
        l = torch.zeros_like(m)  # (..., bq)
        acc = q_tile.new_zeros(
            (*q_tile.shape[:-1], v.shape[-1]), dtype=torch.float32
        )  # (..., bq, Dv)
        for k_start in _key_tiles(q_start, q_start + q_tile.shape[-2], S, block_k, causal):
            k_tile = k[..., k_start : k_start + block_k, :]  # (..., bk, D)
            v_tile = v[..., k_start : k_start + block_k, :]  # (..., bk, Dv)
            scores = _tile_scores(q_tile, k_tile, scale, causal, q_start, k_start).float()
            new_m = torch.maximum(m, scores.amax(dim=-1))  # (..., bq)
            p = torch.exp(scores - new_m[..., None])  # (..., bq, bk) in [0, 1]
            rescale = _rescale(m, new_m)  # (..., bq) shrinks what earlier tiles added
            l = l * rescale + p.sum(dim=-1)  # (..., bq)
            # (..., bq, bk) @ (..., bk, Dv): P cast to V's dtype (bf16 matmul), summed in fp32
            acc = acc * rescale[..., None] + (p.to(v.dtype) @ v_tile).float()
            m = new_m
        outs.append((acc / l[..., None]).to(q.dtype))  # (..., bq, Dv)
        lses.append(m + torch.log(l))  # (..., bq) logsumexp of the row of scores
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)  # (..., T, Dv), (..., T)


def flash_backward(q, k, v, out, lse, grad_out, causal=False, block_q=64, block_k=64):
    """dQ, dK, dV of :func:`flash_forward` by recomputation (15_flash_attention): each tile of
    weights is rebuilt as P = exp(S − lse) from Q, K and the saved logsumexp, never stored.

    With D_i = Σ_j dO_ij O_ij: dV = Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP − D), dQ = dS K/√D,
    dK = dSᵀ Q/√D. Shapes as in :func:`flash_forward`; grad_out is [..., T, Dv].
    """
    scale = _check_attention_inputs(q, k, v, causal, block_q, block_k)
    T, S = q.shape[-2], k.shape[-2]
    delta = (grad_out.float() * out.float()).sum(dim=-1)  # (..., T) D_i = rowsum(dO ∘ O)
    dq = torch.zeros_like(q, dtype=torch.float32)  # (..., T, D)
    dk = torch.zeros_like(k, dtype=torch.float32)  # (..., S, D)
    dv = torch.zeros_like(v, dtype=torch.float32)  # (..., S, Dv)
    for q_start in range(0, T, block_q):
        rows = slice(q_start, q_start + block_q)
        q_tile, do_tile = q[..., rows, :].float(), grad_out[..., rows, :].float()  # (..., bq, D)
        for k_start in _key_tiles(q_start, q_start + q_tile.shape[-2], S, block_k, causal):
            cols = slice(k_start, k_start + block_k)
            k_tile, v_tile = k[..., cols, :].float(), v[..., cols, :].float()  # (..., bk, D)
            scores = _tile_scores(q_tile, k_tile, scale, causal, q_start, k_start)
            p = torch.exp(scores - lse[..., rows, None])  # (..., bq, bk) recomputed weights
            dv[..., cols, :] += p.transpose(-2, -1) @ do_tile  # (..., bk, bq) @ (..., bq, Dv)
            dp = do_tile @ v_tile.transpose(-2, -1)  # (..., bq, Dv) @ (..., Dv, bk)
            ds = p * (dp - delta[..., rows, None])  # (..., bq, bk)
            dq[..., rows, :] += ds @ k_tile * scale  # (..., bq, bk) @ (..., bk, D)
            dk[..., cols, :] += ds.transpose(-2, -1) @ q_tile * scale  # (..., bk, D)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


class FlashAttentionFunction(torch.autograd.Function):
    """Tiled attention with a backward by recomputation (15_flash_attention): the context keeps
    Q, K, V, O and one logsumexp per query, never a T × T tensor."""

    @staticmethod
    def forward(ctx, q, k, v, causal=False, block_q=64, block_k=64):
        out, lse = flash_forward(q, k, v, causal, block_q, block_k)  # (..., T, Dv), (..., T)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.options = (causal, block_q, block_k)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse = ctx.saved_tensors
        grads = flash_backward(q, k, v, out, lse, grad_out, *ctx.options)
        return (*grads, None, None, None)


def flash_attention(q, k, v, causal: bool = False, block_q: int = 64, block_k: int = 64):
    """softmax(Q Kᵀ/√D) V by tiles, with autograd (15_flash_attention): out [..., T, Dv]."""
    return FlashAttentionFunction.apply(q, k, v, causal, block_q, block_k)


def naive_attention(q, k, v, causal: bool = False):
    """The T × T way of 05–08, for comparison (15_flash_attention): scores, softmax written out
    (exp, then divide by the row sum), then @ V. out [..., T, Dv]."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, S)
    if causal:
        future = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, -math.inf)  # (..., T, S)
    exp = torch.exp(scores - scores.amax(dim=-1, keepdim=True).detach())  # (..., T, S)
    return exp / exp.sum(dim=-1, keepdim=True) @ v  # (..., T, S) @ (..., S, Dv)


def tile_grid(T: int, block_q: int, block_k: int, causal: bool = True) -> torch.Tensor:
    """Which tiles :func:`flash_forward` computes (15_flash_attention): an int tensor of shape
    [n_q_tiles, n_k_tiles] with 0 = skipped (wholly in the future), 1 = computed with a mask
    (crosses the diagonal), 2 = computed in full."""
    check.integer("T", T)
    rows, cols = math.ceil(T / block_q), math.ceil(T / block_k)
    grid = torch.zeros(rows, cols, dtype=torch.int64)
    for i, q_start in enumerate(range(0, T, block_q)):
        q_end = min(q_start + block_q, T)
        for k_start in _key_tiles(q_start, q_end, T, block_k, causal):
            k_last = min(k_start + block_k, T) - 1
            grid[i, k_start // block_k] = 1 if causal and k_last > q_start else 2
    return grid


@dataclass
class SavedTensorMeter:
    """Counts what autograd keeps for the backward pass (15_flash_attention), with
    :func:`torch.autograd.graph.saved_tensors_hooks`: every tensor packed inside ``with meter:``
    is recorded once per storage, so a tensor saved by two operations counts once.

    ``meter.bytes`` is the total, ``meter.shapes`` the shapes in the order they were saved.
    """

    shapes: list[tuple[int, ...]] = field(default_factory=list)
    _storages: dict[int, int] = field(default_factory=dict)

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        self.shapes.append(tuple(tensor.shape))
        storage = tensor.untyped_storage()
        self._storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    def __enter__(self) -> SavedTensorMeter:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._hooks.__exit__(*exc)

    @property
    def bytes(self) -> int:
        """Bytes of the distinct storages autograd saved."""
        return sum(self._storages.values())

    @property
    def mib(self) -> float:
        """:attr:`bytes` in MiB."""
        return self.bytes / 2**20
