"""Time per generated token against position, with and without the KV cache (12_generation).

    .venv/bin/python benchmarks/bench_kv_cache.py             # one CPU thread, random weights
    .venv/bin/python benchmarks/bench_kv_cache.py --quick     # fewer repeats

A benchmark, not a test: nothing here fails. The model has the course's shape made longer
and wider (context 1,024+, 6 layers, d_model 256, 8 heads; LLaMA-style with 2 K/V heads
with ``--llama``), with random weights: the cost of a step does not depend on the weights.
Without the cache the token at position p costs a forward pass over p + 1 tokens, which grows
with p; with the cache it costs one token's pass plus attention over p cached keys, nearly flat.
Both are measured side by side (interleaved rounds, medians) in one run on ONE thread, and the
ratio uncached / cached is printed for every position, 256 and 1,024 included.
"""

from __future__ import annotations

import argparse

import torch

from transformer_course.kv_cache import decode_step_times
from transformer_course.model import GPT, GPTConfig

POSITIONS = (16, 64, 128, 256, 512, 768, 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    parser.add_argument(
        "--llama", action="store_true", help="RoPE + RMSNorm + SwiGLU + GQA (2 K/V heads)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    extra = (
        dict(positional="rope", norm="rmsnorm", feedforward="swiglu", n_kv_heads=2, bias=False)
        if args.llama
        else {}
    )
    config = GPTConfig(
        vocab_size=8192,
        context_length=1040,
        d_model=256,
        n_heads=8,
        n_layers=6,
        dropout=0.0,
        **extra,
    )
    torch.manual_seed(0)
    model = GPT(config)
    print(
        f"model: {model.num_parameters():,} parameters, {config.n_layers} layers, d_model "
        f"{config.d_model}, {config.n_heads} heads ({config.n_kv_heads or config.n_heads} K/V), "
        f"positional {config.positional}; threads {torch.get_num_threads()}; torch {torch.__version__}"
    )
    times = decode_step_times(model, POSITIONS, repeats=3 if args.quick else 7)
    print(f"{'position':>8}  {'no cache (ms)':>13}  {'cache (ms)':>10}  {'ratio':>6}")
    for p, plain, cached in zip(POSITIONS, times["uncached"], times["cached"]):
        print(f"{p:>8}  {plain * 1e3:>13.2f}  {cached * 1e3:>10.2f}  {plain / cached:>5.1f}×")
    first, last = times["cached"][0], times["cached"][-1]
    print(
        f"per-token cost from position {POSITIONS[0]} to {POSITIONS[-1]}: "
        f"without cache ×{times['uncached'][-1] / times['uncached'][0]:.1f}, with cache ×{last / first:.2f}"
    )


if __name__ == "__main__":
    main()
