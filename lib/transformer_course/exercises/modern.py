"""Exercises of 13_modern_blocks: three build exercises (RoPE, RMSNorm, grouped-query attention)
and questions to work out from a formula."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from ..i18n import N_, _
from ..norm import rms_norm as library_rms_norm
from ..positional import apply_rope
from . import Feedback, Option, check_choice, check_value, checker, report, unanswered
from .answers import read_number
from .build import build_exercise
from .solutions.modern import grouped_query_attention, rms_norm, rope


@checker(
    hint=N_("""
        per layer and per K/V head a token leaves one key and one value, each head_dim
        numbers of bytes_per_value bytes; multiply by the layers and the K/V heads.
    """)
)
def check_kv_cache_bytes(
    answer: object,
    n_layers: int = 32,
    n_kv_heads: int = 8,
    head_dim: int = 128,
    bytes_per_value: int = 2,
    hint: bool = False,
) -> Feedback:
    """How many bytes of KV cache does one token need in a model of these shapes?"""
    expected = 2 * n_layers * n_kv_heads * head_dim * bytes_per_value
    hint_text = _(
        "every layer stores one key AND one value vector per KV head (not per query head); multiply the four "
        "numbers and the factor 2."
    )
    value, problem = read_number(answer)
    slips = [  # (the answer a slip gives, the slip); with 2-byte numbers both give half
        (expected // 2, _("only the keys (or only the values): the cache holds both, × 2")),
        (
            expected // bytes_per_value,
            _("numbers, not bytes: each takes {bytes_per_value} bytes").format(
                bytes_per_value=bytes_per_value
            ),
        ),
    ]
    named = [why for wrong, why in slips if problem is None and value == wrong]
    if named:
        hint_text = _("it looks like you counted {slips}.").format(slips=_(", or ").join(named))
    return check_value(
        answer,
        expected,
        _(
            "2 (K and V) × {n_layers} layers × {n_kv_heads} KV heads × {head_dim} × {bytes_per_value} bytes = {expected:,} bytes ({kib} KiB) per token."
        ).format(
            n_layers=n_layers,
            n_kv_heads=n_kv_heads,
            head_dim=head_dim,
            bytes_per_value=bytes_per_value,
            expected=expected,
            kib=expected // 1024,
        ),
        hint_text,
    )


@checker(
    hint=N_("""
        count the weights: the ReLU FFN has two d × 4d matrices, SwiGLU three d × d_ff
        matrices. Set the counts equal and solve for d_ff, then round to a whole number.
    """)
)
def check_swiglu_hidden(answer: object, d_model: int = 512, hint: bool = False) -> Feedback:
    """Which whole SwiGLU hidden size d_ff gives (about) the parameters of a 4·d_model ReLU FFN
    without biases? 8·d_model/3, rounded either way."""
    if unanswered(answer):
        return report(False, "", _("replace the `...` with a whole number."), answered=False)
    exact = 8 * d_model / 3
    value, problem = read_number(answer)
    if problem:
        return report(
            False, "", _("{problem} The answer is the hidden width d_ff.").format(problem=problem)
        )
    if value != int(value):
        return report(
            False,
            "",
            _(
                "{value} is not a whole number: a layer has a whole number of units. Round your d_ff."
            ).format(value=value),
        )
    return report(
        abs(value - exact) < 1,
        _(
            "3 · d · d_ff = 8 · d² gives d_ff = 8d/3 ≈ {exact:.1f}; real models round it (LLaMA to a multiple of 256)."
        ).format(exact=exact),
        _(
            "count the parameters: a plain FFN has 2 matrices of d × 4d, SwiGLU 3 matrices of d × d_ff; set them equal."
        ),
    )


# --- Build exercises -------------------------------------------------------------------------


def _rope_inputs(generator: torch.Generator) -> tuple[torch.Tensor]:
    B, H = (int(n) for n in torch.randint(1, 4, (2,), generator=generator))
    T = int(torch.randint(1, 20, (), generator=generator))  # T = 1 too: position 0 is not rotated
    D = 2 * int(torch.randint(1, 9, (), generator=generator))  # even head sizes 2 … 16
    return (torch.randn(B, H, T, D, generator=generator),)  # (B, H, T, D)


def _rope_reference(x: torch.Tensor) -> torch.Tensor:
    return apply_rope(x)  # (B, H, T, D)


def _rope_angles(T: int, D: int, exponent_step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (T, D/2) of p · 10000^(−exponent_step·i/D): 2 is RoPE, 1 the slip."""
    inv_freq = 10000.0 ** (-exponent_step * torch.arange(D // 2, dtype=torch.float64) / D)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq  # (T, D/2)
    return angles.cos(), angles.sin()


def _rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    a, b = x[..., 0::2].double(), x[..., 1::2].double()  # (..., T, D/2) the interleaved pairs
    out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)  # (..., T, D/2, 2)
    return out.flatten(-2).to(x.dtype)  # (..., T, D)


def _rope_halves(x: torch.Tensor) -> torch.Tensor:
    """Slip: Hugging Face's LLaMA layout, pair i = (x_i, x_(i + D/2)), not (x_2i, x_2i+1)."""
    T, D = x.shape[-2:]
    cos, sin = _rope_angles(T, D, 2)
    a, b = x[..., : D // 2].double(), x[..., D // 2 :].double()  # (..., T, D/2) the two halves
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)  # (..., T, D)


def _rope_frequency_without_2(x: torch.Tensor) -> torch.Tensor:
    """Slip: pair i turns by 10000^(−i/D) per position, not 10000^(−2i/D)."""
    return _rotate_pairs(x, *_rope_angles(*x.shape[-2:], 1))


check_rope = build_exercise(
    notebook="13_modern_blocks",
    solution=rope,
    hint=N_("""
        the angles are a (T, D/2) table: positions 0 … T−1 (a column) times base^(−2i/D) for
        i = 0 … D/2 − 1 (a row). The pairs are INTERLEAVED: x[..., 0::2] are the first and
        x[..., 1::2] the second coordinates. Rotate: (a, b) → (a cos θ − b sin θ, a sin θ +
        b cos θ), and write the results back to the even and odd slots (not to two halves).
    """),
    success=N_("""
        Rotated queries and keys give scores that depend only on the offset m − n.
    """),
    reference=_rope_reference,
    make_inputs=_rope_inputs,
    slips={
        N_(
            "the two halves rotated together (Hugging Face's LLaMA layout), not the adjacent pairs (x_2i, x_2i+1)"
        ): _rope_halves,
        N_(
            "the angle 10000^(−i/D) per pair: the exponent is −2i/D (i counts pairs, 2i features)"
        ): _rope_frequency_without_2,
    },
)


def _rms_inputs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, float]:
    B, T = (int(n) for n in torch.randint(1, 5, (2,), generator=generator))
    C = int(torch.randint(1, 40, (), generator=generator))
    # Every token its own RMS, from 1e-4 to 10; where ε goes matters at the small end, so the
    # first token of every draw sits there (1e-4 … 3e-3): no draw lets ε outside the root pass.
    scale = 10.0 ** torch.empty(B, T, 1).uniform_(-4, 1, generator=generator)  # (B, T, 1)
    scale[0, 0] = 10.0 ** float(torch.empty(()).uniform_(-4, -2.5, generator=generator))
    x = torch.randn(B, T, C, generator=generator) * scale + 0.3 * scale  # (B, T, C) not centred
    weight = 1.0 + 0.5 * torch.randn(C, generator=generator)  # (C,)
    eps = (1e-6, 1e-5)[int(torch.randint(0, 2, (), generator=generator))]
    return x, weight, eps


def _rms_reference(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return library_rms_norm(x, weight, eps)  # (B, T, C)


def _rms_eps_outside(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Slip (the architecture cheat sheet's formula): x / (RMS(x) + ε) · weight."""
    return x / (x.pow(2).mean(dim=-1, keepdim=True).sqrt() + eps) * weight


def _rms_mean_subtracted(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Slip: the mean subtracted first, as LayerNorm does."""
    centred = x - x.mean(dim=-1, keepdim=True)  # (B, T, C)
    return centred / torch.sqrt(centred.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


check_rms_norm = build_exercise(
    notebook="13_modern_blocks",
    solution=rms_norm,
    hint=N_("""
        the mean of x² over the LAST dimension (keepdim=True, so it broadcasts back), plus
        eps, then the square root; divide x by it and multiply by weight. No mean is
        subtracted, and ε goes INSIDE the root (the inputs include vectors with an RMS near
        1e-3, where the two placements differ).
    """),
    success=N_("""
        Same formula as nn.RMSNorm and LLaMA.
    """),
    reference=_rms_reference,
    make_inputs=_rms_inputs,
    atol=1e-4,
    slips={
        N_(
            "ε outside the root, x / (RMS(x) + ε) (the architecture cheat sheet's formula); it belongs inside, x / √(mean(x²) + ε)"
        ): _rms_eps_outside,
        N_(
            "the mean subtracted (that is LayerNorm; RMSNorm only divides by the root mean square)"
        ): _rms_mean_subtracted,
    },
)


def _gqa_inputs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    B = int(torch.randint(1, 3, (), generator=generator))
    # The checker's trials use consecutive seeds, so any three of them draw all three kinds:
    # MQA (one K/V head), plain multi-head attention (groups of one), and true GQA with several
    # K/V heads and groups, the only kind where `repeat` and `repeat_interleave` differ.
    kind = generator.initial_seed() % 3
    n_kv = 1 if kind == 0 else int(torch.randint(2, 4, (), generator=generator))
    group = 1 if kind == 1 else int(torch.randint(2, 4, (), generator=generator))
    T, S = (int(n) for n in torch.randint(1, 9, (2,), generator=generator))
    D = int(torch.randint(1, 9, (), generator=generator))
    q = torch.randn(B, n_kv * group, T, D, generator=generator)  # (B, H, T, D)
    k = torch.randn(B, n_kv, S, D, generator=generator)  # (B, H_kv, S, D)
    v = torch.randn(B, n_kv, S, D, generator=generator)  # (B, H_kv, S, D)
    return q, k, v


def _gqa_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    # PyTorch's own grouped-query attention: the same grouping as MultiHeadAttention(n_kv_heads=…).
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # (B, H, T, D)


def _gqa_repeat(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Slip: `repeat` tiles the K/V heads (0, 1, 0, 1, …), so query head h reads h mod H_kv."""
    r = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat(1, r, 1, 1), v.repeat(1, r, 1, 1))


def _gqa_unscaled(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Slip: scores q kᵀ without the 1/√D."""
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=1.0)


check_grouped_query_attention = build_exercise(
    notebook="13_modern_blocks",
    solution=grouped_query_attention,
    hint=N_("""
        r = H // H_kv query heads share one K/V head, and they are CONSECUTIVE: heads 0 …
        r−1 read K/V head 0. So repeat each K/V head r times in place —
        `k.repeat_interleave(r, dim=1)`, not `k.repeat(1, r, 1, 1)`, which interleaves the
        groups — then ordinary attention: softmax(q kᵀ / √D) v.
    """),
    success=N_("""
        Each K/V head now serves its group of query heads; the KV cache holds only H_kv of
        them.
    """),
    reference=_gqa_reference,
    make_inputs=_gqa_inputs,
    slips={
        N_(
            "`repeat` for `repeat_interleave`: query head h then reads K/V head h mod H_kv, not h // (H / H_kv)"
        ): _gqa_repeat,
        N_("the scores not divided by √D"): _gqa_unscaled,
    },
)


SMALL_TOKENS_CHOICES = ("frequencies", "classic", "better")


@checker(
    hint=N_("""
        compare the sizes printed above: token vectors of RMS 0.02 added to a table of RMS
        0.71. What is left of a token's identity in the sum, and what can a model predict
        that knows only the position?
    """)
)
def check_small_token_embeddings(answer: object, hint: bool = False) -> Feedback:
    """13_modern_blocks, before the ablation runs: where does the training loss of the classic
    model with GPT-2's token embeddings (std 0.02, no √d_model) end after 200 steps? One of
    ``SMALL_TOKENS_CHOICES``: at the word-frequency entropy, near the fixed classic row, or below it."""
    return check_choice(
        answer,
        SMALL_TOKENS_CHOICES,
        [
            Option(
                lambda word: word.startswith(("freq", "unigram", "entropy")),
                True,
                _(
                    "the tokens are 36× quieter than the positions, so the model learns the one thing it "
                    "can without reading them well: how common each token is. The table below shows the row "
                    "at the entropy for all 200 steps."
                ),
            ),
            Option(
                lambda word: word.startswith(("classic", "better", "below")),
                False,
                _(
                    "the only difference from the classic row is the token vectors' size at the start. "
                    "Look at the two RMS values printed above: can the model tell its tokens apart?"
                ),
            ),
        ],
    )
