"""Speed of the course's attention against PyTorch's, and of the attention-map explorer's redraw.

    .venv/bin/python benchmarks/bench_attention.py                  # CPU (or --device cuda)
    .venv/bin/python benchmarks/bench_attention.py --quick          # fewer repeats

One run prints three tables (a benchmark, not a test: nothing here fails):

1. **functional** — ``attention.scaled_dot_product_attention`` (written by hand: matmul, mask,
   stable softmax, matmul) against ``torch.nn.functional.scaled_dot_product_attention`` (fused
   kernels), both with the same boolean causal mask, and against the fused call with
   ``is_causal=True``; forward alone and forward + backward; as time ratios ours / PyTorch's.
2. **module** — ``MultiHeadAttention`` on its fused path (the default), on its by-hand path
   (``return_weights=True``) and ``torch.nn.MultiheadAttention`` with the same weights.
3. **explorer** — one redraw of the attention-map explorer of 08_v_attention, for one head and
   for the grid of all heads: the HTML view the explorer shows (weights, heatmaps, table)
   against the same view as a figure (``attention_map_figure``, drawn by ``viz`` with seaborn)
   rendered to PNG as Jupyter's inline backend does it.

Sizes: the course's (B=4, T=16, C=64, H=4, so D=16) and a larger one (B=8, T=256, C=512, H=8,
D=64; with ``--device cuda`` also B=16, T=1024, C=1024, H=16). Timings are medians over
interleaved rounds, so load that drifts during the run treats both sides alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from transformer_course import attention  # noqa: E402
from transformer_course.machine import synchronize  # noqa: E402
from transformer_course.widgets import attention as explorer  # noqa: E402


@dataclass(frozen=True)
class Size:
    name: str
    batch: int
    tokens: int
    d_model: int
    heads: int

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


COURSE = Size("course", 4, 16, 64, 4)
LARGER = Size("larger", 8, 256, 512, 8)
LARGEST = Size("largest", 16, 1024, 1024, 16)


def time_interleaved(
    fns: dict[str, Callable[[], object]], device: torch.device, rounds: int, min_seconds: float
) -> dict[str, float]:
    """Median seconds per call of each function, measured in interleaved rounds."""
    calls: dict[str, int] = {}
    for name, fn in fns.items():  # warm up and size each round to about min_seconds / rounds
        for _ in range(3):
            fn()
        synchronize(device)
        start, n = time.perf_counter(), 0
        while time.perf_counter() - start < 0.05 or n < 3:
            fn()
            n += 1
        synchronize(device)
        per_call = (time.perf_counter() - start) / n
        calls[name] = max(1, int(min_seconds / rounds / per_call))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            synchronize(device)
            start = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            synchronize(device)
            samples[name].append((time.perf_counter() - start) / calls[name])
    return {name: statistics.median(values) for name, values in samples.items()}


def _fmt_ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:9.3f}" if ms < 10 else f"{ms:9.1f}"


def bench_functional(
    size: Size, device: torch.device, rounds: int, min_seconds: float
) -> list[str]:
    g = torch.Generator().manual_seed(0)
    shape = (size.batch, size.heads, size.tokens, size.head_dim)
    q, k, v = (torch.randn(shape, generator=g).to(device).requires_grad_() for _ in range(3))
    mask = attention.causal_mask(size.tokens, device=device)  # (T, T)
    upstream = torch.randn(shape, generator=g).to(device)

    def ours_forward():
        with torch.no_grad():
            return attention.scaled_dot_product_attention(q, k, v, mask=mask)

    def torch_mask_forward():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def torch_causal_forward():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def backward(fn):
        def run():
            out = fn()
            out = out[0] if isinstance(out, tuple) else out
            torch.autograd.grad(out, (q, k, v), upstream)

        return run

    forward = time_interleaved(
        {"ours": ours_forward, "mask": torch_mask_forward, "causal": torch_causal_forward},
        device,
        rounds,
        min_seconds,
    )
    both = time_interleaved(
        {
            "ours": backward(lambda: attention.scaled_dot_product_attention(q, k, v, mask=mask)),
            "mask": backward(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)),
            "causal": backward(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
        },
        device,
        rounds,
        min_seconds,
    )
    return _rows(
        size, forward, both, ("ours", "mask", "causal"), (("ours", "mask"), ("ours", "causal"))
    )


def bench_module(size: Size, device: torch.device, rounds: int, min_seconds: float) -> list[str]:
    torch.manual_seed(0)
    ours = attention.MultiHeadAttention(size.d_model, size.heads).to(device)
    ref = nn.MultiheadAttention(size.d_model, size.heads, batch_first=True).to(device)
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight])
        )
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(size.batch, size.tokens, size.d_model, generator=g).to(device)
    not_allowed = ~attention.causal_mask(
        size.tokens, device=device
    )  # nn.MultiheadAttention's convention

    def fused():
        return ours(x, causal=True)

    def by_hand():
        return ours(x, causal=True, return_weights=True)[0]

    def reference():
        return ref(x, x, x, attn_mask=not_allowed, need_weights=False)[0]

    def with_backward(fn):
        def run():
            fn().square().mean().backward()

        return run

    with torch.no_grad():
        torch.testing.assert_close(fused(), reference(), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(by_hand(), reference(), atol=1e-4, rtol=1e-4)
        forward = time_interleaved(
            {"fused": fused, "hand": by_hand, "ref": reference}, device, rounds, min_seconds
        )
    both = time_interleaved(
        {
            "fused": with_backward(fused),
            "hand": with_backward(by_hand),
            "ref": with_backward(reference),
        },
        device,
        rounds,
        min_seconds,
    )
    return _rows(size, forward, both, ("fused", "hand", "ref"), (("fused", "ref"), ("hand", "ref")))


def _rows(size: Size, forward: dict, both: dict, names: tuple, ratios: tuple) -> list[str]:
    """One table row per pass (forward, fwd+bwd): the three times, then the two ratios."""
    rows = []
    for label, times in (("forward", forward), ("fwd+bwd", both)):
        shown = " ".join(_fmt_ms(times[name]) for name in names)
        quotients = "   ".join(f"{times[a] / times[b]:6.2f}x" for a, b in ratios)
        rows.append(f"{size.name:8s} {label:8s} {shown}   {quotients}")
    return rows


class _Sink:
    """A write-only file that keeps nothing (the PNG bytes are not needed, only their cost)."""

    def write(self, data: bytes) -> int:
        return len(data)


def bench_explorer(repeats: int) -> list[str]:
    """One explorer redraw on the course's batch, as the widget does it (weights for the knobs,
    HTML heatmaps, HTML table), and the same view as a matplotlib figure rendered to PNG (what
    the static cells and a matplotlib-based widget would pay)."""
    from transformer_course import embedding

    batch = embedding.course_batch(seed=0)
    torch.manual_seed(0)
    module = attention.MultiHeadAttention(64, 4, bias=False)
    with torch.no_grad():
        q = attention.split_heads(module.q_proj(batch.inputs), 4)  # (B, H, T, D)
        k = attention.split_heads(module.k_proj(batch.inputs), 4)  # (B, H, T, D)
    rows = []
    for head in (0, None):
        names = ("weights", "html", "table", "figure", "png")
        parts: dict[str, list[float]] = {name: [] for name in names}
        for i in range(repeats + 1):
            row, causal, scaled = i % 4, i % 2 == 0, i % 3 != 0  # turn the knobs between redraws
            t0 = time.perf_counter()
            weights = explorer.weights_from_qk(q[row], k[row], causal=causal, scaled=scaled)
            t1 = time.perf_counter()
            explorer.attention_map_html(weights, batch.tokens[row], head=head)
            t2 = time.perf_counter()
            explorer.attention_row_table(weights, batch.tokens[row], query=15, head=head).to_html()
            t3 = time.perf_counter()
            fig = explorer.attention_map_figure(weights, batch.tokens[row], head=head)
            t4 = time.perf_counter()
            fig.savefig(
                _Sink(), format="png", bbox_inches="tight"
            )  # as the inline backend shows it
            plt.close(fig)
            t5 = time.perf_counter()
            if i == 0:
                continue  # the first redraw pays for imports and font caches
            for name, seconds in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                parts[name].append(seconds)
        ms = {name: statistics.median(values) * 1000 for name, values in parts.items()}
        live = statistics.median(
            [a + b + c for a, b, c in zip(parts["weights"], parts["html"], parts["table"])]
        )
        static = statistics.median(
            [a + b + c for a, b, c in zip(parts["weights"], parts["figure"], parts["png"])]
        )
        label = "one head" if head is not None else "all heads"
        rows.append(
            f"{label:10s} {ms['weights']:8.1f} {ms['html']:8.1f} {ms['table']:8.1f} {live * 1000:11.1f}   "
            f"{ms['figure']:8.1f} {ms['png']:8.1f} {static * 1000:11.1f}   {static / live:9.0f}×"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repeats")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (CPU)")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    rounds, min_seconds, repeats = (5, 0.5, 5) if args.quick else (9, 1.5, 15)
    sizes = [COURSE, LARGER] + ([LARGEST] if device.type == "cuda" else [])
    where = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU, {torch.get_num_threads()} threads"
    )
    print(
        f"torch {torch.__version__} on {where}; float32; causal mask; medians of {rounds} interleaved rounds"
    )
    for size in sizes:
        print(
            f"  {size.name}: B={size.batch} T={size.tokens} C={size.d_model} H={size.heads} D={size.head_dim}"
        )

    print(
        "\n1. functional attention: ours (by hand) vs F.scaled_dot_product_attention  [ms per call]"
    )
    print("size     pass          ours  F.sdpa(mask) F.sdpa(causal)  ours/mask  ours/causal")
    for size in sizes:
        for line in bench_functional(size, device, rounds, min_seconds):
            print(line)

    print("\n2. MultiHeadAttention (causal) vs nn.MultiheadAttention, same weights  [ms per call]")
    print("size     pass         fused   by hand  nn.MHA      fused/nn    by-hand/nn")
    for size in sizes:
        for line in bench_module(size, device, rounds, min_seconds):
            print(line)

    print(
        f"\n3. attention-map explorer, one redraw on the course batch (CPU, Agg)  [median ms of {repeats}]"
    )
    print(
        "           --- HTML widget (what the explorer shows) ---   --- seaborn figure + PNG ---   figure/HTML"
    )
    print("view        weights     html    table  live total     figure      png  static total")
    for line in bench_explorer(repeats):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
