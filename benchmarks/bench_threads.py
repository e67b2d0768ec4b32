"""Training speed of the command line's models at different torch thread counts (issue 18).

    .venv/bin/python benchmarks/bench_threads.py            # 1, 2, … up to the core count
    .venv/bin/python benchmarks/bench_threads.py --quick    # fewer steps and rounds

For each model it trains a few steps with the CLI's recipe (fused AdamW, batch and context of the
preset) at each thread count and prints tokens per second and the ratio to one thread. Rounds are
interleaved (1, 2, …, 1, 2, …) and the median is kept, so load from other processes that drifts
during the run treats every thread count alike. A benchmark, not a test: nothing here fails.
The rule ``__main__.auto_threads`` applies is chosen from these numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from transformer_course.model import GPT
from transformer_course.train import PRESETS, make_optimizer, model_preset

#: (label, preset, vocabulary size): the CLI default (compact vocabulary of the textbook),
#: the same model with the full cl100k vocabulary, and the "gpu" preset's wider, longer model.
MODELS = [
    ("cpu-demo, compact vocab (CLI default)", "cpu-demo", 3771),
    ("cpu-demo, full vocab", "cpu-demo", 100_000),
    ("gpu preset, compact vocab", "gpu", 3771),
]


def tokens_per_second(model: GPT, optimizer, batch: int, context: int, steps: int) -> float:
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(0)
    x = torch.randint(0, vocab, (batch, context), generator=generator)  # (B, T)
    y = torch.randint(0, vocab, (batch, context), generator=generator)  # (B, T)
    started = time.perf_counter()
    for _ in range(steps):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return steps * batch * context / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    parser.add_argument(
        "--only", default=None, help="measure only the models whose label contains this text"
    )
    args = parser.parse_args()
    steps, rounds = (5, 3) if args.quick else (15, 5)
    counts = list(range(1, (os.cpu_count() or 1) + 1))
    print(
        f"{os.cpu_count()} CPU cores; torch {torch.__version__}; {rounds} rounds of {steps} steps"
    )
    for label, preset, vocab in MODELS:
        if args.only and args.only not in label:
            continue
        torch.manual_seed(0)
        config = model_preset(preset, vocab)
        model = GPT(config)
        optimizer = make_optimizer(model)
        recipe = PRESETS[preset]
        results: dict[int, list[float]] = {n: [] for n in counts}
        tokens_per_second(model, optimizer, recipe.batch_size, recipe.context_length, 2)  # warm-up
        for _ in range(rounds):
            for n in counts:
                torch.set_num_threads(n)
                results[n].append(
                    tokens_per_second(
                        model, optimizer, recipe.batch_size, recipe.context_length, steps
                    )
                )
        base = statistics.median(results[1])
        params = model.num_parameters()
        print(
            f"\n{label}: {params:,} parameters, batch {recipe.batch_size} x {recipe.context_length}"
        )
        for n in counts:
            median = statistics.median(results[n])
            print(f"  {n:2d} thread(s): {median:9,.0f} tokens/s   x{median / base:.2f} vs 1 thread")


if __name__ == "__main__":
    main()
