"""Tests for 13_modern_blocks: the LLaMA-style switches the notebook trains, its KV-cache
arithmetic, and the exercise checks."""

from __future__ import annotations

import torch

from transformer_course.attention import MultiHeadAttention
from transformer_course.exercises import modern as ex
from transformer_course.feedforward import FeedForward, SwiGLU
from transformer_course.model import GPT, GPTConfig


def test_llama_style_config_of_the_notebook_runs_and_shares_kv_heads():
    shared = {"vocab_size": 50, "d_model": 64, "n_heads": 4, "n_layers": 2, "dropout": 0.0}
    torch.manual_seed(0)
    classic = GPT(GPTConfig(**shared))
    llama = GPT(
        GPTConfig(
            **shared,
            positional="rope",
            norm="rmsnorm",
            feedforward="swiglu",
            n_kv_heads=2,
            bias=False,
        )
    )
    idx = torch.randint(0, 50, (3, 16), generator=torch.Generator().manual_seed(0))
    for model in (classic, llama):
        logits, loss = model(idx, idx)
        assert logits.shape == (3, 16, 50) and torch.isfinite(loss)
    # K/V projections of each layer are half as wide with 2 of 4 K/V heads
    attn = next(m for m in llama.modules() if isinstance(m, MultiHeadAttention))
    assert attn.n_kv_heads == 2 and attn.k_proj.weight.shape == (32, 64)
    # SwiGLU's ⌈8d/3⌉ hidden width keeps the feed-forward size (within 1 %); GQA and no biases save the rest
    ffn = next(m for m in classic.modules() if isinstance(m, FeedForward))
    glu = next(m for m in llama.modules() if isinstance(m, SwiGLU))
    n_ffn, n_glu = (sum(p.numel() for p in m.parameters()) for m in (ffn, glu))
    assert abs(n_glu - n_ffn) / n_ffn < 0.01
    assert llama.num_parameters() < classic.num_parameters()


def test_kv_cache_numbers_of_the_notebook():
    def per_token(layers, kv_heads, head_dim):
        return 2 * layers * kv_heads * head_dim * 2

    assert per_token(32, 32, 128) == 512 * 1024  # Llama-2-7B
    assert per_token(80, 8, 128) == 320 * 1024  # Llama-2-70B
    assert per_token(32, 8, 128) == 128 * 1024  # Mistral-7B
    assert ex.check_kv_cache_bytes(per_token(40, 40, 128), n_layers=40, n_kv_heads=40)


def test_exercise_checks():
    assert not ex.check_swiglu_hidden(...).answered
    assert ex.check_swiglu_hidden(1365) and ex.check_swiglu_hidden(1366)
    assert ex.check_swiglu_hidden(torch.tensor(1365))
    assert not ex.check_swiglu_hidden(1365.3)  # the question asks for a whole number
    assert ex.check_small_token_embeddings("frequencies")
    assert not ex.check_small_token_embeddings("classic") and not ex.check_small_token_embeddings(
        "better"
    )
    assert not ex.check_small_token_embeddings(6.03).correct
    assert not ex.check_swiglu_hidden(2048)
    assert not ex.check_swiglu_hidden("many")
    assert not ex.check_kv_cache_bytes(...).answered
    assert ex.check_kv_cache_bytes(131072)
    assert not ex.check_kv_cache_bytes(65536)


def test_build_exercises_catch_the_classic_mistakes():
    """RoPE on two halves (HF's layout), ε outside the root, and `repeat` instead of
    `repeat_interleave` are each told apart from the library's answer."""
    from torch.nn import functional as F

    def rope_halves(x):
        T, D = x.shape[-2:]
        angles = torch.arange(T)[:, None] * 10000 ** (-torch.arange(0, D, 2) / D)  # (T, D/2)
        a, b = x[..., : D // 2], x[..., D // 2 :]
        return torch.cat(
            [a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()], -1
        )

    def rms_outside(x, weight, eps):
        return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps) * weight

    def gqa_tiled(q, k, v):
        r = q.shape[1] // k.shape[1]
        return F.scaled_dot_product_attention(q, k.repeat(1, r, 1, 1), v.repeat(1, r, 1, 1))

    for check, wrong, named in (
        (ex.check_rope, rope_halves, "two halves"),
        (ex.check_rms_norm, rms_outside, "ε outside the root"),
        (ex.check_grouped_query_attention, gqa_tiled, "`repeat` for `repeat_interleave`"),
    ):
        # Written independently of the declared slips, and judged on many seeds: every draw of
        # the checker must catch them (the RMS inputs always hold a tiny vector; three
        # consecutive GQA trials always include true GQA), and name them.
        for seed in range(0, 60, 3):
            feedback = check(wrong, seed=seed)
            assert not feedback.correct and named in feedback.message, (seed, feedback)
    assert "differ" in ex.check_rms_norm(rms_outside, seed=0).message  # and still says where


def test_the_kv_cache_question_names_the_slip():
    half = ex.check_kv_cache_bytes(65536).message  # fp16: half is both slips' answer
    assert "only the keys" in half and "numbers, not bytes" in half
    fp32 = ex.check_kv_cache_bytes(2 * 32 * 8 * 128, bytes_per_value=4).message  # a quarter
    assert "numbers, not bytes" in fp32 and "only the keys" not in fp32
    assert "looks like" not in ex.check_kv_cache_bytes(1000).message
