"""Exercises of 15_flash_attention: the online softmax, the merge of two (m, l) pairs, the tiled
forward, causal tile skipping and the backward by recomputation."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ..attention import flash
from ..i18n import N_, _
from . import Feedback, checker, report, unanswered
from .build import build_exercise, compare_results
from .solutions.flash_attention import (
    FlashAttention,
    flash_forward,
    merge_softmax_stats,
    online_softmax,
)


def _pick(generator: torch.Generator, choices: list):
    return choices[int(torch.randint(0, len(choices), (1,), generator=generator))]


def _rows_and_block(generator: torch.Generator) -> tuple[torch.Tensor, int]:
    """Rows (R, T) with two rows where a naive exp overflows (×100 and +1e4), and a block size
    from {1, 7, 64, T}."""
    R = int(torch.randint(3, 6, (1,), generator=generator))
    T = int(torch.randint(65, 160, (1,), generator=generator))
    x = torch.randn(R, T, generator=generator) * 3.0  # (R, T)
    x[0] = x[0] * 100.0  # (T,) scores of ±300: exp overflows float32 above 88.7
    x[1] = x[1] + 1e4  # (T,) every score near 10 000
    return x, _pick(generator, [1, 7, 64, T])


def _torch_softmax(x: torch.Tensor, block: int) -> torch.Tensor:
    return torch.softmax(x, dim=-1)  # (R, T)


def _softmax_per_block(x: torch.Tensor, block: int) -> torch.Tensor:
    return torch.cat([torch.softmax(p, dim=-1) for p in x.split(block, dim=-1)], dim=-1)


def _sum_without_rescale(x: torch.Tensor, block: int) -> torch.Tensor:
    m, l = torch.full(x.shape[:-1], -math.inf), torch.zeros(x.shape[:-1])  # (R,), (R,)
    for part in x.split(block, dim=-1):
        m = torch.maximum(m, part.amax(dim=-1))
        l = l + torch.exp(part - m[..., None]).sum(dim=-1)  # the old sum keeps the old maximum
    return torch.exp(x - m[..., None]) / l[..., None]


check_online_softmax = build_exercise(
    notebook="15_flash_attention",
    solution=online_softmax,
    hint=N_("""
        keep m (R,) = the largest entry seen so far and l (R,) = Σ exp(x − m) over the entries
        seen so far. For each block: new_m = max(m, block max); l = l · exp(m − new_m) +
        Σ exp(block − new_m); m = new_m. At the end, exp(x − m) / l.
    """),
    success=N_("""
        Rows of scores near 10 000 did not overflow, and every block size gave the same softmax.
    """),
    reference=_torch_softmax,
    make_inputs=_rows_and_block,
    atol=1e-6,
    slips={
        N_("a plain softmax inside each block (the blocks never learn each other's maximum)"): (
            _softmax_per_block
        ),
        N_("a missing rescale: the old sum l is not multiplied by exp(m_old − m_new)"): (
            _sum_without_rescale
        ),
    },
)


def _two_parts(generator: torch.Generator) -> tuple:
    """(m, l) of two parts of the same rows: sometimes the first part holds the larger maximum,
    sometimes the second; one part of one row is empty (m = −inf, l = 0)."""
    R = int(torch.randint(3, 7, (1,), generator=generator))
    parts = []
    for _part in range(2):
        x = torch.randn(R, int(torch.randint(1, 9, (1,), generator=generator)), generator=generator)
        x = x * 50.0 + torch.randn(R, 1, generator=generator) * 200.0  # (R, n) far-apart maxima
        m = x.amax(dim=-1)  # (R,)
        parts.append((m, torch.exp(x - m[:, None]).sum(dim=-1)))  # (R,), (R,)
    parts[1][0][0], parts[1][1][0] = -math.inf, 0.0  # row 0 of the second part is empty
    return tuple(parts)


def _add_sums(first, second):
    (m1, l1), (m2, l2) = first, second
    return torch.maximum(m1, m2), l1 + l2


def _keep_second_max(first, second):
    (m1, l1), (m2, l2) = first, second
    return m2, l1 * torch.exp(m1 - m2) + l2


check_merge_softmax_stats = build_exercise(
    notebook="15_flash_attention",
    solution=merge_softmax_stats,
    hint=N_("""
        the merged maximum is m = max(m₁, m₂) (torch.maximum). Each sum was taken relative to its
        own maximum, so bring both to m before adding: l = l₁ · exp(m₁ − m) + l₂ · exp(m₂ − m).
    """),
    success=N_("""
        Your merge gives the same (m, l) whichever part holds the larger maximum, so the key
        tiles may be visited in any order.
    """),
    reference=flash.merge_softmax_stats,
    make_inputs=_two_parts,
    slips={
        N_("adding the sums l₁ + l₂ without rescaling them to the common maximum"): _add_sums,
        N_("keeping the second part's maximum instead of the larger one"): _keep_second_max,
    },
)


def _attention_inputs(generator: torch.Generator) -> tuple:
    """q, k, v (B, H, T, D) and tile sizes of which at least one does not divide T; causal in
    every other trial (the trial seeds are consecutive)."""
    B, H = int(torch.randint(1, 3, (1,), generator=generator)), 2
    T = int(torch.randint(24, 90, (1,), generator=generator))
    D = _pick(generator, [8, 16])
    q, k, v = (torch.randn(B, H, T, D, generator=generator) * 2.0 for _qkv in range(3))
    block_q, block_k = _pick(generator, [8, 16, 32]), _pick(generator, [7, 13, 37])
    return q, k, v, generator.initial_seed() % 2 == 0, block_q, block_k


def _reference_forward(q, k, v, causal, block_q, block_k):
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, H, T, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), -math.inf)
    return out, torch.logsumexp(scores, dim=-1)  # (B, H, T, D), (B, H, T)


def _tiles(T: int, block: int) -> list[tuple[int, int]]:
    return [(start, min(start + block, T)) for start in range(0, T, block)]


def _tiled_with(
    q,
    k,
    v,
    causal,
    block_q,
    block_k,
    *,
    rescale=True,
    skip_diagonal=False,
    per_tile_softmax=False,
    skip_future=True,
):
    """flash_forward with one of three slips switched on (the slips below)."""
    T, outs, lses = q.shape[-2], [], []
    for i0, i1 in _tiles(T, block_q):
        m = torch.full((*q.shape[:-2], i1 - i0), -math.inf)  # (B, H, bq)
        l, acc = torch.zeros_like(m), torch.zeros(*q.shape[:-2], i1 - i0, v.shape[-1])
        for j0, j1 in _tiles(T, block_k):
            if causal and ((skip_future and j0 > i1 - 1) or (skip_diagonal and j1 - 1 > i0)):
                continue
            s = q[..., i0:i1, :] @ k[..., j0:j1, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                future = torch.arange(j0, j1)[None, :] > torch.arange(i0, i1)[:, None]
                s = s.masked_fill(future, -math.inf)  # (B, H, bq, bk)
            new_m = torch.maximum(m, s.amax(dim=-1))  # (B, H, bq)
            p = torch.softmax(s, dim=-1) if per_tile_softmax else torch.exp(s - new_m[..., None])
            factor = torch.exp(m - new_m) if rescale else torch.ones_like(m)
            l, acc = l * factor + p.sum(dim=-1), acc * factor[..., None] + p @ v[..., j0:j1, :]
            m = new_m
        outs.append(acc / l[..., None])
        lses.append(m + torch.log(l))
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)


def _per_tile_softmax(*args):
    return _tiled_with(*args, per_tile_softmax=True)


def _no_rescale(*args):
    return _tiled_with(*args, rescale=False)


def _skip_diagonal(*args):
    return _tiled_with(*args, skip_diagonal=True)


check_flash_forward = build_exercise(
    notebook="15_flash_attention",
    solution=flash_forward,
    hint=N_("""
        loop over query tiles i and, inside, key tiles j. Keep m, l (B, H, bq) and acc (B, H, bq, D)
        for the query tile. Per key tile: s = q_i k_jᵀ/√D (mask the future when causal), new_m =
        max(m, row max of s), p = exp(s − new_m), r = exp(m − new_m), l = l·r + Σp, acc = acc·r +
        p v_j. After the last key tile: out = acc / l and lse = m + log l.
    """),
    success=N_("""
        Tiles that do not divide T, causal or not, gave softmax(QKᵀ/√D)V and the logsumexp of
        every row.
    """),
    reference=_reference_forward,
    make_inputs=_attention_inputs,
    slips={
        N_(
            "a plain softmax inside the tile loop (each tile normalised on its own)"
        ): _per_tile_softmax,
        N_("a missing rescale: l and acc are not multiplied by exp(m_old − m_new)"): _no_rescale,
        N_("skipping the diagonal tiles (they hold the keys a query may see, up to itself)"): (
            _skip_diagonal
        ),
    },
)


#: The matrix products a tiled forward may use (``@`` arrives as the tensor method ``matmul``).
_PRODUCTS = {"matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "einsum", "baddbmm"}


class ScoreCounter(TorchFunctionMode):
    """Counts the entries of Q Kᵀ a function computes (15_flash_attention's tile check): every
    matrix product whose inner size is the head size D adds the size of its result."""

    def __init__(self, head_size: int) -> None:
        super().__init__()
        self.head_size = head_size
        self.scores = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in _PRODUCTS and isinstance(result, torch.Tensor) and result.dim() >= 2:
            inner = None if name == "einsum" else args[0].shape[-1]
            # Q Kᵀ sums over D and ends in keys; P @ V sums over keys and ends in D.
            if inner in (None, self.head_size) and result.shape[-1] != self.head_size:
                self.scores += result.numel()
        elif name == "scaled_dot_product_attention":
            self.scores += args[0].shape[-2] * args[1].shape[-2]
        return result


#: The tile check's problem: T = 1024 queries and keys, head size 32, 64 × 64 tiles.
TILE_T, TILE_D, TILE = 1024, 32, 64


def _count_tiles(function) -> tuple[float, object, tuple]:
    """Run ``function`` once, causal, on the tile check's problem: (tiles, result, inputs)."""
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, TILE_T, TILE_D, generator=generator) for _qkv in range(3))
    with ScoreCounter(TILE_D) as counter:
        result = function(q, k, v, True, TILE, TILE)
    return counter.scores / TILE**2, result, (q, k, v)


@checker(
    hint=N_("""
        with causal=True, key tile j holds keys j … j + bk − 1. Query tile i (queries i … i + bq − 1)
        sees none of them when j > i + bq − 1: stop the key loop there (range(0, min(T, i + bq),
        bk)). The diagonal tile is still computed, with its mask.
    """)
)
def check_causal_tile_skipping(answer: object, hint: bool = False) -> Feedback:
    """Run the learner's ``flash_forward`` causal at T = 1024 with 64 × 64 tiles: it must be
    right and compute at most 136 of the 256 tiles of Q Kᵀ (the tiles on or below the diagonal)."""
    if unanswered(answer):
        return report(False, "", _("write `flash_forward` above first, then pass it here."), False)
    if not callable(answer) or isinstance(answer, (torch.Tensor, type)):
        return report(
            False, "", _("pass your function itself: `check_causal_tile_skipping(flash_forward)`.")
        )
    try:
        tiles, result, (q, k, v) = _count_tiles(answer)
    except Exception as error:  # the learner's code: report it, never crash the cell
        return report(
            False,
            "",
            _("your `flash_forward` raised {kind}: {error}").format(
                kind=type(error).__name__, error=error
            ),
        )
    if result is None:
        return report(False, "", _("your `flash_forward` still returns None."), answered=False)
    expected = _reference_forward(q, k, v, True, TILE, TILE)
    problem = compare_results(result, expected, 1e-5)
    if problem:
        return report(False, "", _("the causal result is wrong: {problem}").format(problem=problem))
    total, needed = (TILE_T // TILE) ** 2, (TILE_T // TILE) * (TILE_T // TILE + 1) // 2
    if tiles > needed:
        return report(
            False,
            "",
            _(
                "right result, but it computed {tiles:g} tiles of Q Kᵀ out of {total}; a causal "
                "pass needs only the {needed} on or below the diagonal. Stop the key loop at the "
                "query tile's diagonal."
            ).format(tiles=tiles, total=total, needed=needed),
        )
    return report(
        True,
        _(
            "{tiles:g} of {total} tiles computed: the {skipped:g} tiles wholly in the future were skipped."
        ).format(tiles=tiles, total=total, skipped=total - tiles),
        "",
    )


check_causal_tile_skipping.solution = flash_forward  # type: ignore[attr-defined]


def _saved_by(function_class, q, k, v, causal) -> tuple[object, list[torch.Tensor]]:
    """``function_class.apply(q, k, v, causal)`` and every tensor its context keeps: those saved
    with ``ctx.save_for_backward`` and those stored as attributes of ``ctx``."""
    saved: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = function_class.apply(q, k, v, causal)
    context = getattr(out, "grad_fn", None)
    for value in vars(context).values() if hasattr(context, "__dict__") else ():
        items = value if isinstance(value, (list, tuple)) else [value]
        saved.extend(item for item in items if isinstance(item, torch.Tensor))
    return out, saved


def _saved_problem(saved: list[torch.Tensor], q: torch.Tensor) -> str | None:
    """What is wrong with what the context keeps, or None: Q, K, V, O and one per-query tensor."""
    *lead, T, _head_size = q.shape
    per_query = [t for t in saved if t.numel() == math.prod(lead) * T]
    others = [t for t in saved if t.numel() not in (math.prod(lead) * T, q.numel())]
    if others:
        shape = tuple(max(others, key=torch.Tensor.numel).shape)
        return _(
            "the context keeps a tensor of shape {shape}; with T = {T} that is a T × T tensor (P "
            "or the scores). Keep only Q, K, V, O and the logsumexp, and recompute P in backward."
        ).format(shape=shape, T=T)
    if len(per_query) != 1:
        return _(
            "the context keeps {n} per-query tensors; one is enough: the logsumexp m + log l."
        ).format(n=len(per_query))
    return None


def _judge_function(answer, q, k, v, causal) -> tuple[str | None, bool]:
    """(problem or None, answered?) for one trial of :func:`check_flash_attention_function`."""
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    out, saved = _saved_by(answer, q, k, v, causal)
    if out is None:
        return None, False
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, H, T, D)
    problem = compare_results(out.detach(), expected.detach(), 1e-5, _("the output"))
    problem = problem or _saved_problem(saved, q)
    if problem:
        return problem, True
    grad = torch.randn_like(expected)  # (B, H, T, D) dL/dO
    given = torch.autograd.grad(out, (q, k, v), grad)
    wanted = torch.autograd.grad(expected, (q, k, v), grad)
    for name, mine, theirs in zip(("dQ", "dK", "dV"), given, wanted):
        problem = compare_results(mine, theirs, 1e-5, name)
        if problem:
            return problem, True
    return None, True


@checker(
    hint=N_("""
        forward: `out, lse = flash_forward(q, k, v, causal, 32, 32)`;
        `ctx.save_for_backward(q, k, v, out, lse)`. backward: `D = (dO · O).sum(−1)`; for every
        tile rebuild `P = exp(QKᵀ/√D − lse)` (masked when causal), then `dV += Pᵀ dO`,
        `dS = P ∘ (dO Vᵀ − D)`, `dQ += dS K/√D`, `dK += dSᵀ Q/√D`.
    """)
)
def check_flash_attention_function(
    answer: object, hint: bool = False, seed: int | None = None
) -> Feedback:
    """Judge the learner's ``FlashAttention`` (a :class:`torch.autograd.Function`) on 5 fresh
    draws: its output, what its context keeps (Q, K, V, O and one per-query tensor, never T × T)
    and dQ, dK, dV against autograd through PyTorch's attention, all at 1e-5."""
    if unanswered(answer):
        return report(
            False, "", _("define the class `FlashAttention` above, then pass it here."), False
        )
    if not (isinstance(answer, type) and issubclass(answer, torch.autograd.Function)):
        return report(
            False, "", _("pass the class itself: `check_flash_attention_function(FlashAttention)`.")
        )
    seed = int(torch.randint(0, 2**31 - 1, (1,))) if seed is None else int(seed)
    for trial in range(5):
        q, k, v, causal, _block_q, _block_k = _attention_inputs(
            torch.Generator().manual_seed(seed + trial)
        )
        try:
            problem, answered = _judge_function(answer, q, k, v, causal)
        except Exception as error:  # the learner's code: report it, never crash the cell
            problem, answered = f"{type(error).__name__}: {error}", True
        if not answered:
            return report(
                False, "", _("`FlashAttention.forward` still returns None."), answered=False
            )
        if problem:
            return report(
                False,
                "",
                _("on q, k, v of shape {shape}, causal={causal}: {problem} (seed={seed})").format(
                    shape=tuple(q.shape), causal=causal, problem=problem, seed=seed
                ),
            )
    return report(
        True,
        _(
            "output, dQ, dK and dV match autograd on 5 draws, and the context keeps only Q, K, V, O and the logsumexp."
        ),
        "",
    )


check_flash_attention_function.solution = FlashAttention  # type: ignore[attr-defined]
