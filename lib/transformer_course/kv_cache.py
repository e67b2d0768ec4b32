"""The key/value cache that makes generation cost one token's work per step (12_generation).

Without a cache, every new token re-runs the whole context: the keys and values of the
past tokens are computed again although they never change (a causal model's past does not
see the future). A cache keeps, for every layer, the keys and values already computed and
appends the new token's. Like Hugging Face's per-layer caches, the model keeps
``forward(idx, targets)`` and gains one keyword argument, ``forward(new_ids, cache=cache)``;
the new tokens' positions start at ``cache[0].length``, the number already cached (as
``DynamicCache.get_seq_length()`` counts them). Meta's LLaMA code preallocates its cache and
passes that number as ``start_pos``; the model accepts ``start_pos=`` and checks it.

* :class:`KVCache` — one layer's keys and values, [B, Hkv, S, D]: only the ``n_kv_heads``
  K/V heads (grouped-query attention shares them, so they are stored once).
* :func:`new_cache` — an empty cache per layer.
* :func:`cache_bytes` — 2 · layers · K/V heads · head size · tokens · bytes per number.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from . import _checks as check
from .i18n import _
from .machine import evaluating, synchronize

__all__ = ["KVCache", "cache_bytes", "decode_step_times", "new_cache"]


def check_start_pos(start_pos: int | None, cached: int) -> int:
    """The rule every cached forward pass keeps (12_generation, 14_encoder_decoder): an explicit
    ``start_pos`` must equal the number of tokens the cache already holds; returns that number."""
    if start_pos is not None and start_pos != cached:
        raise ValueError(
            _(
                "start_pos ({start_pos}) must equal the number of cached tokens ({cached}): "
                "feed each token once, in order"
            ).format(start_pos=start_pos, cached=cached)
        )
    return cached


@dataclass
class KVCache:
    """One attention layer's cached keys and values (introduced in 12_generation).

    ``keys`` and ``values`` are [B, Hkv, S, D] (None while empty): S tokens seen so far, stored
    before the K/V heads are repeated for grouped-query attention and, with RoPE, already
    rotated at their absolute positions. Self-attention only: a cross-attention layer
    recomputes the encoder output's keys and values at every step.
    """

    keys: torch.Tensor | None = None
    values: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """S, the number of tokens whose keys and values are stored."""
        return 0 if self.keys is None else self.keys.shape[2]

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new tokens' keys and values [B, Hkv, T, D]; return all of them [B, Hkv, S + T, D]."""
        if keys.dim() != 4 or keys.shape != values.shape:
            raise ValueError(
                _(
                    "keys and values must both have shape [B, Hkv, T, D], got {keys_shape} and "
                    "{values_shape}"
                ).format(keys_shape=tuple(keys.shape), values_shape=tuple(values.shape))
            )
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            if keys.shape[:2] != self.keys.shape[:2] or keys.shape[3] != self.keys.shape[3]:
                raise ValueError(
                    _(
                        "new keys {keys_shape} do not match the cached {keys_shape2} in batch, "
                        "heads or head size; start a new cache for a new batch"
                    ).format(keys_shape=tuple(keys.shape), keys_shape2=tuple(self.keys.shape))
                )
            self.keys = torch.cat([self.keys, keys], dim=2)  # (B, Hkv, S, D) -> (B, Hkv, S + T, D)
            self.values = torch.cat([self.values, values], dim=2)  # (B, Hkv, S + T, D)
        return self.keys, self.values

    def crop(self, length: int) -> None:
        """Forget every token after the first ``length`` (e.g. to time the same step again)."""
        check.integer("length", length, 0, self.length)
        if self.keys is not None:
            self.keys = self.keys[:, :, :length]  # (B, Hkv, S, D) -> (B, Hkv, length, D)
            self.values = self.values[:, :, :length]  # (B, Hkv, length, D)

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` [B'] (with repeats): beam search's surviving beams."""
        if self.keys is not None:
            self.keys = self.keys.index_select(0, index)  # (B, Hkv, S, D) -> (B', Hkv, S, D)
            self.values = self.values.index_select(0, index)  # (B', Hkv, S, D)

    @property
    def nbytes(self) -> int:
        """Memory held by the keys and values, in bytes."""
        if self.keys is None:
            return 0
        return self.keys.numel() * self.keys.element_size() * 2


def new_cache(n_layers: int) -> list[KVCache]:
    """An empty :class:`KVCache` for each of ``n_layers`` layers (12_generation)."""
    check.integer("n_layers", n_layers, 0)
    return [KVCache() for _layer in range(n_layers)]


def cache_bytes(
    n_layers: int, n_kv_heads: int, head_size: int, tokens: int, bytes_per_number: int = 2
) -> int:
    """Memory of a full KV cache for one sequence (12_generation):
    2 (keys and values) · layers · K/V heads · head size · tokens · bytes per number.
    ``bytes_per_number`` is 2 for float16/bfloat16, 4 for float32."""
    for name, value in (
        ("n_layers", n_layers),
        ("n_kv_heads", n_kv_heads),
        ("head_size", head_size),
        ("tokens", tokens),
        ("bytes_per_number", bytes_per_number),
    ):
        check.integer(name, value, 0)
    return 2 * n_layers * n_kv_heads * head_size * tokens * bytes_per_number


@torch.no_grad()
def decode_step_times(
    model: nn.Module, positions: Sequence[int], repeats: int = 5, seed: int = 0
) -> dict[str, list[float]]:
    """Seconds to produce the token at each of ``positions``, with and without the cache
    (12_generation, benchmarks/bench_kv_cache.py): median of ``repeats`` interleaved rounds.

    Without the cache a step runs the model on all p + 1 tokens so far; with it, one token
    whose keys and values join the p cached ones (filled beforehand, not timed). ``model`` is
    a :class:`~.model.GPT` (anything with ``new_cache()`` and ``forward(idx, cache=)``),
    positions below its ``context_length``. Returns ``{"cached": [...],
    "uncached": [...]}``, one number per position. Timings depend on the machine and its load.
    """
    if not hasattr(model, "new_cache"):
        raise TypeError(_("model must offer new_cache() and forward(idx, cache=...)"))
    check.integer("repeats", repeats)
    limit = model.config.context_length
    if not positions or any(not 0 <= int(p) < limit for p in positions):
        raise ValueError(
            _("positions must be non-empty, each in 0 … {last}, got {positions}").format(
                last=limit - 1, positions=list(positions)
            )
        )
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, model.config.vocab_size, (1, max(positions) + 1), generator=generator)
    ids = ids.to(device)  # (1, P + 1)
    times: dict[str, list[float]] = {"cached": [], "uncached": []}
    with evaluating(model):
        for p in positions:
            cache = model.new_cache()
            if p:  # fill the cache with p tokens (untimed)
                model(ids[:, :p], cache=cache)
            rounds: dict[str, list[float]] = {"cached": [], "uncached": []}
            for _repeat in range(repeats):
                start = time.perf_counter()
                model(ids[:, p : p + 1], cache=cache)  # (1, 1, V) one new token after p cached
                synchronize(device)
                rounds["cached"].append(time.perf_counter() - start)
                for layer in cache:
                    layer.crop(p)  # forget it, to time the same step again
                start = time.perf_counter()
                model(ids[:, : p + 1])  # (1, p + 1, V) every token again
                synchronize(device)
                rounds["uncached"].append(time.perf_counter() - start)
            for name in times:
                times[name].append(statistics.median(rounds[name]))
    return times
