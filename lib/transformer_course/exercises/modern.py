"""Exercises of 13_modern_blocks."""

from __future__ import annotations

from . import Feedback, check_value, checker, report, unanswered
from .answers import read_number


@checker
def check_rope_angle(answer: object, position: int = 5, pair: int = 1, head_dim: int = 8, base: float = 10000.0) -> Feedback:
    """By how many radians does RoPE turn pair ``pair`` of a vector at ``position``?"""
    expected = position * base ** (-2 * pair / head_dim)
    return check_value(
        answer,
        expected,
        f"θ = {position} · {base:g}^(−2·{pair}/{head_dim}) = {expected:.4f} rad.",
        "the angle is position × base^(−2i/D); for i > 0 the pair turns more slowly than one radian per step.",
        tolerance=1e-3,
    )


@checker
def check_kv_cache_bytes(
    answer: object, n_layers: int = 32, n_kv_heads: int = 8, head_dim: int = 128, bytes_per_value: int = 2
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


@checker
def check_swiglu_hidden(answer: object, d_model: int = 512) -> Feedback:
    """Which SwiGLU hidden size d_ff gives (about) the parameters of a 4·d_model ReLU FFN?"""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a whole number.", answered=False)
    exact = 8 * d_model / 3
    value, problem = read_number(answer)
    if problem:
        return report(False, "", f"{problem} The answer is the hidden width d_ff.")
    return report(
        abs(value - exact) <= 1,
        f"3 · d · d_ff = 8 · d² gives d_ff = 8d/3 ≈ {exact:.1f}; real models round it (LLaMA to a multiple of 256).",
        "count the parameters: a plain FFN has 2 matrices of d × 4d, SwiGLU 3 matrices of d × d_ff; set them equal.",
    )
