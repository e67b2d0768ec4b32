"""Training speed of the course's GPT against the seed's structure, measured side by side.

    .venv/bin/python benchmarks/bench_training.py                 # everything (the baseline takes long on a CPU)
    .venv/bin/python benchmarks/bench_training.py --phase speed   # tokens/s and memory only (a few minutes)
    .venv/bin/python benchmarks/bench_training.py --phase baseline --results runs/bench.json
    .venv/bin/python benchmarks/bench_training.py --phase target --results runs/bench.json

Three variants at the seed's configuration (batch 4, context 16, d_model 64, 4 heads, 8 blocks,
dropout 0.1):

(a) ``naive_gpt.NaiveGPT`` — the seed's structure (a module per head, positional table rebuilt
    every forward, untied 100,070-row output layer), trained the seed's way (plain AdamW, lr 1e-3);
(b) ``model.GPT`` with the course's configuration (``train.model_preset("cpu-demo")``: the seed's
    sizes, learned positions, tied output layer), full vocabulary (100,070 ids), trained with
    ``train.make_optimizer``;
(c) the same on the compact vocabulary (3,771 ids).

Phases:

- ``speed``: tokens/s of each variant in interleaved rounds (a, b, c, a, b, c, …) so that a
  machine whose load drifts treats them alike; the median per variant, and the ratios. Peak
  memory of each variant in a fresh subprocess (CPU: peak resident set minus the process's
  resident set before the model exists; CUDA: ``torch.cuda.max_memory_allocated``). On CUDA also
  the model-FLOPs utilisation against the bf16 peak given by ``--peak-tflops``.
- ``baseline``: (a) for 5,000 steps with the seed's recipe, then its loss over the WHOLE
  validation split; the result and the wall time go to ``--results`` (JSON) so that the long run
  need not be repeated.
- ``target``: (c) with the course's recipe (``train.PRESETS["cpu-demo"]``) until its whole-split
  validation loss reaches (a)'s; the steps and wall time it needs, against (a)'s 5,000 steps. The
  per-step times of both recipes are also measured interleaved, so that the ratio can be
  estimated from timings taken side by side.

This is a benchmark, not a test: nothing here fails, it prints what it measures.

Measured once while writing the course (2-core Xeon VM shared with other jobs, load average 4–7,
one torch thread, torch 2.13 CPU; all figures are slower than on an idle machine):

    speed, median of 7 interleaved rounds    ms/step  tokens/s  vs (a)  peak RSS growth
    (a) naive seed structure, full vocab       616.5       104   1.00×   493 MiB
    (b) model.GPT, full vocab                  279.4       229   2.21×   407 MiB
    (c) model.GPT, compact vocab                59.1      1084  10.44×   106 MiB
    (a) seed recipe, 5,000 steps: whole-split validation loss 4.899 in 3,859 s of training
    (c) course recipe: 4.843 ≤ 4.899 after 450 steps, 114.6 s = 0.030 of (a)'s wall time
        (0.024 from the interleaved per-step times: 450 × 162.8 ms vs 5,000 × 616.5 ms)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from naive_gpt import NaiveGPT  # noqa: E402

from transformer_course import data  # noqa: E402
from transformer_course.machine import autocast_context, synchronize  # noqa: E402
from transformer_course.model import GPT  # noqa: E402
from transformer_course.train import (  # noqa: E402
    PRESETS,
    evaluate,
    make_optimizer,
    model_preset,
    sampled_loss,
    train_step,
)
from transformer_course.vocabulary import CompactVocabulary  # noqa: E402

SEED_STEPS = 5000
SEED_BATCH = 4
CONTEXT = 16
SEED_LR = 1e-3
SEED_TORCH_SEED = 1337  # the seed's TORCH_SEED
VARIANTS = {
    "a": "naive seed structure, full vocab",
    "b": "model.GPT, full vocab",
    "c": "model.GPT, compact vocab",
}


def corpus(ids: torch.Tensor | None = None):
    ids = data.corpus_token_ids() if ids is None else ids  # (N,)
    vocab = CompactVocabulary.from_ids(ids)
    full_train, full_val = data.train_val_split(ids)
    compact_train, compact_val = data.train_val_split(vocab.encode(ids))
    return vocab, (full_train, full_val), (compact_train, compact_val)


def build(variant: str, vocab: CompactVocabulary, device: torch.device):
    """The model and optimizer of a variant, and the (train, val) streams it reads."""
    _, full, compact = corpus_cache()
    if variant == "a":
        model = NaiveGPT(vocab.full_size).to(device)
        return model, torch.optim.AdamW(model.parameters(), lr=SEED_LR), full
    size, streams = (vocab.full_size, full) if variant == "b" else (vocab.size, compact)
    model = GPT(model_preset("cpu-demo", size)).to(device)
    return model, make_optimizer(model, lr=SEED_LR), streams


_CACHE: dict[str, object] = {}


def corpus_cache(ids: torch.Tensor | None = None):
    if "corpus" not in _CACHE:
        _CACHE["corpus"] = corpus(ids)
    return _CACHE["corpus"]


def run_steps(model, optimizer, stream, steps: int, batch: int, generator, device) -> None:
    for _ in range(steps):
        x, y = data.get_batch(stream, batch, CONTEXT, generator=generator)  # (B, T)
        x, y = x.to(device), y.to(device)
        train_step(model, optimizer, x, y, autocast=autocast_context(device))


def flops_per_token(model: torch.nn.Module) -> float:
    """6 × the parameters a token multiplies through (forward + backward), plus attention's
    12 · layers · C · T; embedding lookups cost no multiplications."""
    params = sum(p.numel() for name, p in model.named_parameters() if "embedding" not in name)
    config = getattr(model, "config", None)
    if config is not None and config.tie_weights:
        params += (
            model.lm_head.weight.numel()
        )  # the tied table, registered under the embedding's name
    return 6 * params + 12 * 8 * 64 * CONTEXT


def phase_speed(args, device, results: dict) -> None:
    vocab, _, _ = corpus_cache()
    built = {}
    for variant in VARIANTS:
        torch.manual_seed(0)
        built[variant] = build(variant, vocab, device)
    recipe = PRESETS["cpu-demo"]
    torch.manual_seed(0)
    recipe_model = GPT(model_preset("cpu-demo", vocab.size)).to(device)
    built["c-recipe"] = (
        recipe_model,
        make_optimizer(recipe_model, lr=recipe.lr),
        corpus_cache()[2],
    )
    batches = {"a": SEED_BATCH, "b": SEED_BATCH, "c": SEED_BATCH, "c-recipe": recipe.batch_size}
    generator = torch.Generator().manual_seed(0)
    for name, (model, optimizer, (train_ids, _)) in built.items():  # warm-up: allocator, kernels
        run_steps(model, optimizer, train_ids, args.warmup_steps, batches[name], generator, device)
    times: dict[str, list[float]] = {name: [] for name in built}
    for _ in range(args.rounds):
        for name, (model, optimizer, (train_ids, _)) in built.items():
            synchronize(device)
            start = time.perf_counter()
            run_steps(
                model, optimizer, train_ids, args.round_steps, batches[name], generator, device
            )
            synchronize(device)
            times[name].append((time.perf_counter() - start) / args.round_steps)
    step_time = {name: statistics.median(values) for name, values in times.items()}
    spread = {name: (min(values), max(values)) for name, values in times.items()}
    print(
        f"\n## Speed at the seed's configuration (batch {SEED_BATCH}, context {CONTEXT}), "
        f"{args.rounds} interleaved rounds of {args.round_steps} steps, median per step"
    )
    print(f"{'variant':<38}{'ms/step':>10}{'tokens/s':>11}{'vs (a)':>8}   min–max ms/step")
    for name in VARIANTS:
        tokens = SEED_BATCH * CONTEXT / step_time[name]
        ratio = step_time["a"] / step_time[name]
        lo, hi = spread[name]
        print(
            f"({name}) {VARIANTS[name]:<34}{1000 * step_time[name]:>10.1f}{tokens:>11.0f}{ratio:>7.2f}×   "
            f"{1000 * lo:.1f}–{1000 * hi:.1f}"
        )
    recipe_tokens = recipe.batch_size * CONTEXT / step_time["c-recipe"]
    print(
        f"(c) with the course recipe's batch {recipe.batch_size}: {1000 * step_time['c-recipe']:.1f} ms/step, "
        f"{recipe_tokens:.0f} tokens/s"
    )
    results["speed"] = {
        "step_seconds": step_time,
        "spread_seconds": spread,
        "ratio_b_over_a": step_time["a"] / step_time["b"],
        "ratio_c_over_a": step_time["a"] / step_time["c"],
        "threads": torch.get_num_threads(),
        "device": device.type,
    }
    if device.type == "cuda":
        peak = args.peak_tflops * 1e12
        print(f"model FLOPs utilisation (bf16 peak {args.peak_tflops:.0f} TFLOP/s):")
        for name in VARIANTS:
            model = built[name][0]
            achieved = flops_per_token(model) * SEED_BATCH * CONTEXT / step_time[name]
            print(f"  ({name}) {achieved / 1e12:.3f} TFLOP/s = {100 * achieved / peak:.3f} % MFU")
    print("\n## Peak memory of a training step (fresh process per variant)")
    memory = {}
    # The probe reads the token ids from a file: tokenizing in the probe would set a high-water
    # mark (tiktoken's tables) above what training needs, hiding the model's own footprint.
    with tempfile.TemporaryDirectory() as folder:
        ids_file = Path(folder) / "ids.pt"
        vocab, (full_train, full_val), _ = corpus_cache()
        torch.save(torch.cat([full_train, full_val]), ids_file)
        outputs = {}
        for name in VARIANTS:
            command = [
                sys.executable,
                __file__,
                "--memory-probe",
                name,
                "--ids-file",
                str(ids_file),
                "--device",
                device.type,
                "--threads",
                str(torch.get_num_threads()),
            ]
            outputs[name] = subprocess.run(
                command, capture_output=True, text=True, check=True
            ).stdout
    for name in VARIANTS:
        out = outputs[name].strip().splitlines()[-1]
        memory[name] = json.loads(out)
        print(
            f"({name}) {VARIANTS[name]:<34}{memory[name]['peak_mib']:>9.1f} MiB  ({memory[name]['what']})"
        )
    results["memory"] = memory


def peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM). Not ``ru_maxrss``: Linux carries that across
    fork + exec, so a child would report its parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux; bytes on macOS


def memory_probe(variant: str, device: torch.device, ids_file: str) -> None:
    vocab, _, _ = corpus_cache(torch.load(ids_file, weights_only=True))
    before = peak_rss_mib()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    model, optimizer, (train_ids, _) = build(variant, vocab, device)
    run_steps(model, optimizer, train_ids, 5, SEED_BATCH, torch.Generator().manual_seed(0), device)
    if device.type == "cuda":
        peak, what = torch.cuda.max_memory_allocated() / 2**20, "torch.cuda.max_memory_allocated"
    else:
        after = peak_rss_mib()
        peak, what = after - before, "peak RSS growth"
    print(json.dumps({"peak_mib": peak, "what": what}))


def whole_val_loss(model, val_ids, device, batch: int) -> float:
    return evaluate(model, val_ids, CONTEXT, batch_size=batch, device=device, autocast=False)


def mass_on_corpus_tokens(model, val_ids, vocab: CompactVocabulary, device) -> float:
    """Mean log of the probability a full-vocabulary model puts on the corpus's 3,771 ids."""
    keep = vocab.ids.to(device)
    windows = (val_ids.numel() - 1) // CONTEXT
    x_all = val_ids[: windows * CONTEXT].view(windows, CONTEXT)  # (W, T)
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, windows, 16):
            logits, _ = model(x_all[start : start + 16].to(device))  # (b, T, V)
            log_probs = logits.float().log_softmax(dim=-1)  # (b, T, V)
            inside = log_probs[..., keep].logsumexp(dim=-1)  # (b, T)
            total += float(inside.sum())
            count += inside.numel()
    model.train()
    return total / count


def phase_baseline(args, device, results: dict) -> None:
    vocab, (train_ids, val_ids), _ = corpus_cache()
    torch.manual_seed(SEED_TORCH_SEED)
    model = NaiveGPT(vocab.full_size).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=SEED_LR)
    generator = torch.Generator().manual_seed(SEED_TORCH_SEED)
    curve = []
    steps = args.seed_steps
    print(
        f"\n## (a) the seed's recipe: {steps} steps, batch {SEED_BATCH}, lr {SEED_LR}, full vocabulary"
    )
    wall = 0.0
    done = 0
    for chunk_end in range(args.baseline_eval_every, steps + 1, args.baseline_eval_every):
        synchronize(device)
        start = time.perf_counter()
        run_steps(model, optimizer, train_ids, chunk_end - done, SEED_BATCH, generator, device)
        synchronize(device)
        wall += time.perf_counter() - start
        done = chunk_end
        val = whole_val_loss(model, val_ids, device, batch=8)
        curve.append((done, val))
        print(
            f"  step {done:>5}: whole-split val loss {val:.3f}   ({wall:.0f} s of training so far)",
            flush=True,
        )
    final = curve[-1][1]
    spread = [
        sampled_loss(model, val_ids, CONTEXT, 20, 4, torch.Generator().manual_seed(s))
        for s in range(20)
    ]
    log_inside = mass_on_corpus_tokens(model, val_ids, vocab, device)
    print(
        f"(a) after {steps} steps: whole-split val loss {final:.3f}; training wall time {wall:.0f} s"
    )
    print(
        f"    the seed's 20×4 estimate over 20 draws: {min(spread):.2f} … {max(spread):.2f} "
        f"(mean {statistics.mean(spread):.2f}, sd {statistics.stdev(spread):.2f})"
    )
    print(
        f"    probability the model leaves on the 3,771 corpus ids: {math.exp(log_inside):.4f} on average (geometric)"
    )
    results["baseline"] = {
        "val_loss": final,
        "steps": steps,
        "train_seconds": wall,
        "curve": curve,
        "sampled_20x4": spread,
        "mean_log_mass_on_corpus_ids": log_inside,
        "threads": torch.get_num_threads(),
        "device": device.type,
    }
    if args.save_baseline:
        torch.save(model.state_dict(), args.save_baseline)


def phase_target(args, device, results: dict) -> None:
    if "baseline" not in results:
        raise SystemExit(
            "the target phase needs (a)'s loss: run --phase baseline first (same --results)"
        )
    target = results["baseline"]["val_loss"]
    vocab, _, (train_ids, val_ids) = corpus_cache()
    recipe = PRESETS["cpu-demo"]
    torch.manual_seed(recipe.seed)
    model = GPT(model_preset("cpu-demo", vocab.size)).to(device)
    optimizer = make_optimizer(model, lr=recipe.lr, weight_decay=recipe.weight_decay)
    generator = torch.Generator().manual_seed(recipe.seed)
    from transformer_course.train import lr_at

    print(
        f"\n## (c) compact vocabulary, course recipe (batch {recipe.batch_size}, lr {recipe.lr}, "
        f"warm-up {recipe.warmup}, cosine over {recipe.steps} steps) until val ≤ {target:.3f}"
    )
    wall, reached = 0.0, None
    step = 0
    while step < recipe.steps:
        synchronize(device)
        start = time.perf_counter()
        for _ in range(args.target_eval_every):
            lr = lr_at(
                step, steps=recipe.steps, lr=recipe.lr, warmup=recipe.warmup, min_lr=recipe.final_lr
            )
            x, y = data.get_batch(train_ids, recipe.batch_size, CONTEXT, generator=generator)
            x, y = x.to(device), y.to(device)
            train_step(
                model,
                optimizer,
                x,
                y,
                lr=lr,
                grad_clip=recipe.grad_clip,
                autocast=autocast_context(device),
            )
            step += 1
        val = whole_val_loss(model, val_ids, device, batch=512)
        synchronize(device)
        wall += time.perf_counter() - start  # evaluations count: they are how we know we arrived
        print(f"  step {step:>5}: whole-split val loss {val:.3f}   ({wall:.1f} s)", flush=True)
        if val <= target and reached is None:
            reached = (step, wall, val)
            if not args.target_full:
                break
    results["target"] = {"reached": reached, "target": target}
    base_wall = results["baseline"]["train_seconds"]
    if reached is None:
        print(f"(c) did NOT reach {target:.3f} within {recipe.steps} steps")
        return
    steps_needed, seconds, val = reached
    print(
        f"(c) reached {val:.3f} ≤ {target:.3f} after {steps_needed} steps, {seconds:.1f} s wall "
        f"= {seconds / base_wall:.3f} of (a)'s {base_wall:.0f} s (wall clocks taken at different times)"
    )
    speed = results.get("speed", {}).get("step_seconds")
    if speed:
        estimate_c = steps_needed * speed["c-recipe"]
        base_steps = results["baseline"]["steps"]
        estimate_a = base_steps * speed["a"]
        print(
            f"    from the interleaved per-step times: (c) {steps_needed} × {1000 * speed['c-recipe']:.1f} ms "
            f"= {estimate_c:.1f} s vs (a) {base_steps} × {1000 * speed['a']:.1f} ms = {estimate_a:.0f} s "
            f"-> ratio {estimate_c / estimate_a:.3f} (target ≤ 0.2; evaluations excluded)"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--phase", choices=["all", "speed", "baseline", "target"], default="all")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--rounds", type=int, default=7, help="interleaved timing rounds (speed phase)"
    )
    parser.add_argument("--round-steps", type=int, default=20, help="steps per variant per round")
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--baseline-eval-every", type=int, default=1000)
    parser.add_argument("--target-eval-every", type=int, default=50)
    parser.add_argument(
        "--target-full", action="store_true", help="keep training (c) after it reaches the target"
    )
    parser.add_argument(
        "--results", default="runs/bench_training.json", help="JSON file kept between phases"
    )
    parser.add_argument(
        "--save-baseline", default=None, help="also save (a)'s trained weights here"
    )
    parser.add_argument(
        "--peak-tflops", type=float, default=989.0, help="the GPU's dense bf16 peak, for MFU"
    )
    parser.add_argument("--seed-steps", type=int, default=SEED_STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--memory-probe", choices=list(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--ids-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if args.memory_probe:
        memory_probe(args.memory_probe, device, args.ids_file)
        return
    results_path = Path(args.results)
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    print(
        f"device {device.type}, {torch.get_num_threads()} threads, torch {torch.__version__}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (a shared machine slows every figure)"
    )
    phases = ["speed", "baseline", "target"] if args.phase == "all" else [args.phase]
    for phase in phases:
        {"speed": phase_speed, "baseline": phase_baseline, "target": phase_target}[phase](
            args, device, results
        )
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
