"""Speed of the tiled attention of 15_flash_attention against the naive T × T version and
PyTorch's fused ``scaled_dot_product_attention``, measured side by side.

    .venv/bin/python benchmarks/bench_flash_attention.py            # CPU (or --device cuda)
    .venv/bin/python benchmarks/bench_flash_attention.py --quick    # fewer sizes and repeats

For each T it prints the median time of naive, tiled and SDPA, forward alone and forward +
backward, and the ratios tiled / naive and tiled / SDPA (a benchmark, not a test: nothing here
fails). Pure-PyTorch tiles pay Python's loop overhead per tile, while causal tile skipping saves
about half the products; the fused kernel does both without the overhead. What the tiled version
is for is memory (the notebook's memory lab). Timings are medians over interleaved rounds, so
load that drifts during the run treats all three alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from transformer_course.attention import flash
from transformer_course.machine import synchronize


def _versions(block: int) -> dict[str, Callable]:
    return {
        "naive": lambda q, k, v: flash.naive_attention(q, k, v, True),
        "tiled": lambda q, k, v: flash.flash_attention(q, k, v, True, block, block),
        "SDPA": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    }


def _time_once(attend: Callable, q, k, v, backward: bool, device: torch.device) -> float:
    synchronize(device)
    start = time.perf_counter()
    out = attend(q, k, v)  # (B, H, T, D)
    if backward:
        out.sum().backward()
    synchronize(device)
    return time.perf_counter() - start


def measure(T: int, *, heads: int, d: int, block: int, rounds: int, device: torch.device) -> dict:
    """Median seconds of each version at ``T``, forward and forward + backward, interleaved."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, heads, T, d, device=device, requires_grad=True) for _ in range(3))
    versions = _versions(block)
    times: dict[tuple[str, bool], list[float]] = {}
    for _round in range(rounds):
        for backward in (False, True):
            for name, attend in versions.items():
                times.setdefault((name, backward), []).append(
                    _time_once(attend, q, k, v, backward, device)
                )
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="two sizes, three rounds")
    parser.add_argument("--block", type=int, default=128)
    args = parser.parse_args()
    device = torch.device(args.device)
    sizes = [512, 1024] if args.quick else [512, 1024, 2048, 4096]
    rounds = 3 if args.quick else 5
    print(
        f"device {device}, threads {torch.get_num_threads()}, 4 heads of d = 64, causal, tiles {args.block}"
    )
    print(
        f"{'T':>6} {'pass':>10} {'naive ms':>9} {'tiled ms':>9} {'SDPA ms':>9} {'tiled/naive':>12} {'tiled/SDPA':>11}"
    )
    for T in sizes:
        result = measure(T, heads=4, d=64, block=args.block, rounds=rounds, device=device)
        for backward in (False, True):
            naive, tiled, sdpa = (
                result[(name, backward)] * 1e3 for name in ("naive", "tiled", "SDPA")
            )
            label = "fwd+bwd" if backward else "forward"
            print(
                f"{T:>6} {label:>10} {naive:9.1f} {tiled:9.1f} {sdpa:9.1f} {tiled / naive:12.2f} {tiled / sdpa:11.2f}"
            )


if __name__ == "__main__":
    main()
