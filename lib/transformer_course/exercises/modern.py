"""Exercises of 13_modern_blocks: three build exercises (RoPE, RMSNorm, grouped-query attention)
and questions to work out from a formula."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from ..norm import rms_norm as library_rms_norm
from ..positional import apply_rope
from . import Feedback, Option, check_choice, check_value, checker, report, unanswered
from .answers import read_number
from .build import build_exercise
from .solutions.modern import grouped_query_attention, rms_norm, rope


@checker(
    hint="""
        per layer and per K/V head a token leaves one key and one value, each head_dim
        numbers of bytes_per_value bytes; multiply by the layers and the K/V heads.
    """
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
    return check_value(
        answer,
        expected,
        f"2 (K and V) × {n_layers} layers × {n_kv_heads} KV heads × {head_dim} × {bytes_per_value} bytes = "
        f"{expected:,} bytes ({expected // 1024} KiB) per token.",
        "every layer stores one key AND one value vector per KV head (not per query head); multiply the four "
        "numbers and the factor 2.",
    )


@checker(
    hint="""
        count the weights: the ReLU FFN has two d × 4d matrices, SwiGLU three d × d_ff
        matrices. Set the counts equal and solve for d_ff, then round to a whole number.
    """
)
def check_swiglu_hidden(answer: object, d_model: int = 512, hint: bool = False) -> Feedback:
    """Which whole SwiGLU hidden size d_ff gives (about) the parameters of a 4·d_model ReLU FFN
    without biases? 8·d_model/3, rounded either way."""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a whole number.", answered=False)
    exact = 8 * d_model / 3
    value, problem = read_number(answer)
    if problem:
        return report(False, "", f"{problem} The answer is the hidden width d_ff.")
    if value != int(value):
        return report(
            False,
            "",
            f"{value} is not a whole number: a layer has a whole number of units. Round your d_ff.",
        )
    return report(
        abs(value - exact) < 1,
        f"3 · d · d_ff = 8 · d² gives d_ff = 8d/3 ≈ {exact:.1f}; real models round it (LLaMA to a multiple of 256).",
        "count the parameters: a plain FFN has 2 matrices of d × 4d, SwiGLU 3 matrices of d × d_ff; set them equal.",
    )


# --- Build exercises -------------------------------------------------------------------------


def _rope_inputs(generator: torch.Generator) -> tuple[torch.Tensor]:
    B, H = (int(n) for n in torch.randint(1, 4, (2,), generator=generator))
    T = int(torch.randint(1, 20, (), generator=generator))  # T = 1 too: position 0 is not rotated
    D = 2 * int(torch.randint(1, 9, (), generator=generator))  # even head sizes 2 … 16
    return (torch.randn(B, H, T, D, generator=generator),)  # (B, H, T, D)


def _rope_reference(x: torch.Tensor) -> torch.Tensor:
    return apply_rope(x)  # (B, H, T, D)


check_rope = build_exercise(
    notebook="13_modern_blocks",
    solution=rope,
    hint="""
        the angles are a (T, D/2) table: positions 0 … T−1 (a column) times base^(−2i/D) for
        i = 0 … D/2 − 1 (a row). The pairs are INTERLEAVED: x[..., 0::2] are the first and
        x[..., 1::2] the second coordinates. Rotate: (a, b) → (a cos θ − b sin θ, a sin θ +
        b cos θ), and write the results back to the even and odd slots (not to two halves).
    """,
    success="""
        Rotated queries and keys give scores that depend only on the offset m − n.
    """,
    reference=_rope_reference,
    make_inputs=_rope_inputs,
)


def _rms_inputs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, float]:
    B, T = (int(n) for n in torch.randint(1, 5, (2,), generator=generator))
    C = int(torch.randint(1, 40, (), generator=generator))
    # RMS from 1e-4 to 10: where ε goes matters at the small end.
    scale = 10.0 ** float(torch.empty(()).uniform_(-4, 1, generator=generator))
    x = torch.randn(B, T, C, generator=generator) * scale + 0.3 * scale  # (B, T, C) not centred
    weight = 1.0 + 0.5 * torch.randn(C, generator=generator)  # (C,)
    eps = (1e-6, 1e-5)[int(torch.randint(0, 2, (), generator=generator))]
    return x, weight, eps


def _rms_reference(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return library_rms_norm(x, weight, eps)  # (B, T, C)


check_rms_norm = build_exercise(
    notebook="13_modern_blocks",
    solution=rms_norm,
    hint="""
        the mean of x² over the LAST dimension (keepdim=True, so it broadcasts back), plus
        eps, then the square root; divide x by it and multiply by weight. No mean is
        subtracted, and ε goes INSIDE the root (the inputs include vectors with an RMS near
        1e-3, where the two placements differ).
    """,
    success="""
        Same formula as nn.RMSNorm and LLaMA.
    """,
    reference=_rms_reference,
    make_inputs=_rms_inputs,
    atol=1e-4,
)


def _gqa_inputs(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    B = int(torch.randint(1, 3, (), generator=generator))
    n_kv = int(torch.randint(1, 4, (), generator=generator))  # 1 = MQA
    group = int(torch.randint(1, 4, (), generator=generator))  # 1 = plain multi-head attention
    T, S = (int(n) for n in torch.randint(1, 9, (2,), generator=generator))
    D = int(torch.randint(1, 9, (), generator=generator))
    q = torch.randn(B, n_kv * group, T, D, generator=generator)  # (B, H, T, D)
    k = torch.randn(B, n_kv, S, D, generator=generator)  # (B, H_kv, S, D)
    v = torch.randn(B, n_kv, S, D, generator=generator)  # (B, H_kv, S, D)
    return q, k, v


def _gqa_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    # PyTorch's own grouped-query attention: the same grouping as MultiHeadAttention(n_kv_heads=…).
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # (B, H, T, D)


check_grouped_query_attention = build_exercise(
    notebook="13_modern_blocks",
    solution=grouped_query_attention,
    hint="""
        r = H // H_kv query heads share one K/V head, and they are CONSECUTIVE: heads 0 …
        r−1 read K/V head 0. So repeat each K/V head r times in place —
        `k.repeat_interleave(r, dim=1)`, not `k.repeat(1, r, 1, 1)`, which interleaves the
        groups — then ordinary attention: softmax(q kᵀ / √D) v.
    """,
    success="""
        Each K/V head now serves its group of query heads; the KV cache holds only H_kv of
        them.
    """,
    reference=_gqa_reference,
    make_inputs=_gqa_inputs,
)


SMALL_TOKENS_CHOICES = ("frequencies", "classic", "better")


@checker(
    hint="""
        compare the sizes printed above: token vectors of RMS 0.02 added to a table of RMS
        0.71. What is left of a token's identity in the sum, and what can a model predict
        that knows only the position?
    """
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
                "the tokens are 36× quieter than the positions, so the model learns the one thing it "
                "can without reading them well: how common each token is. The table below shows the row "
                "at the entropy for all 200 steps.",
            ),
            Option(
                lambda word: word.startswith(("classic", "better", "below")),
                False,
                "the only difference from the classic row is the token vectors' size at the start. "
                "Look at the two RMS values printed above: can the model tell its tokens apart?",
            ),
        ],
    )
