"""The encoder-decoder Transformer of the 2017 paper, from the course's parts (14_encoder_decoder).

* :class:`EncoderBlock` — bidirectional self-attention + FFN (every source token sees every other).
* :class:`DecoderBlock` — causal self-attention + cross-attention (queries from the decoder,
  keys and values from the encoder's output) + FFN.
* :class:`EncoderDecoder` — embeddings + sinusoidal positions, N encoder and N decoder blocks,
  a linear layer to the vocabulary; greedy and beam decoding; the cross-attention maps.

Both blocks use the paper's **post-norm** layout: ``x = LayerNorm(x + sublayer(x))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks as check
from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .kv_cache import KVCache
from .norm import LayerNorm
from .positional import sinusoidal_encoding

__all__ = [
    "DecoderBlock",
    "EncoderBlock",
    "EncoderDecoder",
    "EncoderDecoderConfig",
    "exact_match",
    "train_seq2seq",
]


def _check_ids(name: str, ids: object, vocab_size: int) -> torch.Tensor:
    return check.token_ids(name, ids, vocab_size, shape="[B, length]")


@dataclass
class EncoderDecoderConfig:
    """Everything that defines an :class:`EncoderDecoder` (14_encoder_decoder).

    One vocabulary serves source and target (``vocab_size``); ``pad_id`` marks padding,
    ``bos_id`` starts the decoder's input, ``eos_id`` ends an answer. ``max_len`` bounds
    both the source and the decoder's input length (the positional table's size).
    """

    vocab_size: int
    d_model: int = 64
    n_heads: int = 4
    n_encoder_layers: int = 2
    n_decoder_layers: int = 2
    d_ff: int | None = None
    dropout: float = 0.0
    max_len: int = 32
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self) -> None:
        for name, minimum in {
            "vocab_size": 2,
            "d_model": 2,
            "n_heads": 1,
            "n_encoder_layers": 1,
            "n_decoder_layers": 1,
            "max_len": 1,
        }.items():
            check.integer(name, getattr(self, name), minimum)
        if self.d_model % 2:
            raise ValueError(f"d_model must be even (sinusoidal positions), got {self.d_model}")
        check.divides("n_heads", self.n_heads, "d_model", self.d_model)
        if self.d_ff is not None:
            check.integer("d_ff", self.d_ff)
        check.probability("dropout", self.dropout)
        for name in ("pad_id", "bos_id", "eos_id"):
            check.integer(name, getattr(self, name), 0, self.vocab_size - 1)
        if len({self.pad_id, self.bos_id, self.eos_id}) != 3:
            raise ValueError("pad_id, bos_id and eos_id must be three different ids")


class EncoderBlock(nn.Module):
    """Post-norm encoder block (14_encoder_decoder): x [B, S, C] -> [B, S, C].

    x = LN(x + SelfAttention(x))  — no causal mask: every token sees the whole source
    x = LN(x + FFN(x))
    ``src_mask`` [B, 1, 1, S] (True = a real token) keeps padding out of the keys.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int | None = None, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.norm1 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout)
        self.norm2 = LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.norm1(x + self.drop(self.self_attn(x, mask=src_mask)))  # (B, S, C)
        return self.norm2(x + self.ffn(x))  # (B, S, C)


class DecoderBlock(nn.Module):
    """Post-norm decoder block (14_encoder_decoder): y [B, T, C], memory [B, S, C] -> [B, T, C].

    y = LN(y + CausalSelfAttention(y))
    y = LN(y + CrossAttention(queries = y, keys = values = memory))
    y = LN(y + FFN(y))
    With ``return_weights=True`` also returns the cross-attention weights [B, H, T, S].
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int | None = None, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.norm1 = LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout)
        self.norm3 = LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: tuple[KVCache, KVCache] | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``cache`` = (self-attention cache, cross-attention cache), 12_generation: ``y`` then
        holds only the new tokens; the cross-attention keys and values of ``memory`` are
        computed on the first call and reused."""
        own, cross = (None, None) if cache is None else cache
        y = self.norm1(y + self.drop(self.self_attn(y, causal=True, cache=own)))  # (B, T, C)
        if return_weights:
            crossed, weights = self.cross_attn(
                y, context=memory, mask=src_mask, return_weights=True, cache=cross
            )  # (B, T, C), (B, H, T, S)
        else:  # the fused kernel: same numbers, faster
            crossed = self.cross_attn(y, context=memory, mask=src_mask, cache=cross)  # (B, T, C)
        y = self.norm2(y + self.drop(crossed))  # (B, T, C)
        y = self.norm3(y + self.ffn(y))  # (B, T, C)
        return (y, weights) if return_weights else y


class EncoderDecoder(nn.Module):
    """A small encoder-decoder Transformer (14_encoder_decoder).

    ``forward(src [B, S], tgt_in [B, T], targets=None) -> (logits [B, T, V], loss or None)``;
    the loss is the cross-entropy over non-padding targets. ``encode`` gives the memory
    [B, S, C]; ``greedy_decode`` and ``beam_decode`` generate answers; ``cross_attention``
    returns every decoder layer's cross-attention weights [L, B, H, T, S].
    """

    def __init__(self, config: EncoderDecoderConfig) -> None:
        super().__init__()
        if not isinstance(config, EncoderDecoderConfig):
            raise TypeError(f"config must be an EncoderDecoderConfig, got {type(config).__name__}")
        self.config = c = config
        self.src_embed = nn.Embedding(c.vocab_size, c.d_model)  # (V, C)
        self.tgt_embed = nn.Embedding(c.vocab_size, c.d_model)  # (V, C)
        self.register_buffer(
            "pe", sinusoidal_encoding(c.max_len, c.d_model), persistent=False
        )  # (max_len, C)
        self.drop = nn.Dropout(c.dropout)
        self.encoder = nn.ModuleList(
            EncoderBlock(c.d_model, c.n_heads, c.d_ff, c.dropout) for _ in range(c.n_encoder_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.d_model, c.n_heads, c.d_ff, c.dropout) for _ in range(c.n_decoder_layers)
        )
        self.lm_head = nn.Linear(c.d_model, c.vocab_size)  # (C -> V)

    def _embed(
        self, table: nn.Embedding, ids: torch.Tensor, name: str, start_pos: int = 0
    ) -> torch.Tensor:
        if start_pos + ids.shape[1] > self.config.max_len:
            raise ValueError(
                f"{name} has {ids.shape[1]} tokens after {start_pos} cached ones; "
                f"this model takes at most max_len={self.config.max_len}"
            )
        # The paper scales embeddings by √C so they are not drowned by the positions (values ≤ 1).
        x = (
            table(ids) * math.sqrt(self.config.d_model)
            + self.pe[start_pos : start_pos + ids.shape[1]]
        )  # (B, L) -> (B, L, C)
        return self.drop(x)  # (B, L, C)

    def source_mask(self, src: torch.Tensor) -> torch.Tensor:
        """[B, 1, 1, S]: True where the source holds a real token (not ``<pad>``)."""
        return (src != self.config.pad_id)[:, None, None, :]  # (B, S) -> (B, 1, 1, S)

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """src [B, S] -> memory [B, S, C], the encoder's output every decoder layer attends to."""
        src = _check_ids("src", src, self.config.vocab_size)
        mask = self.source_mask(src)  # (B, 1, 1, S)
        x = self._embed(self.src_embed, src, "src")  # (B, S, C)
        for block in self.encoder:
            x = block(x, mask)  # (B, S, C)
        return x

    def decode(
        self,
        tgt_in: torch.Tensor,
        memory: torch.Tensor,
        src: torch.Tensor,
        return_weights: bool = False,
        cache: list[tuple[KVCache, KVCache]] | None = None,
        start_pos: int = 0,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """tgt_in [B, T] + memory [B, S, C] -> logits [B, T, V] (and cross weights [L, B, H, T, S]).

        With ``cache`` (from :meth:`new_cache`, 12_generation) ``tgt_in`` holds only the new
        tokens, at positions ``start_pos`` … (the number already cached)."""
        tgt_in = _check_ids("tgt_in", tgt_in, self.config.vocab_size)
        if tgt_in.shape[0] != memory.shape[0]:
            raise ValueError(
                f"tgt_in and memory must have the same batch size, got {tgt_in.shape[0]} and {memory.shape[0]}"
            )
        if cache is not None and (
            len(cache) != len(self.decoder) or any(own.length != start_pos for own, _ in cache)
        ):
            raise ValueError(
                f"cache must come from model.new_cache() and hold start_pos={start_pos} tokens per layer"
            )
        if cache is None and start_pos:
            raise ValueError("start_pos > 0 needs the cache that holds the earlier tokens")
        mask = self.source_mask(src)  # (B, 1, 1, S)
        y = self._embed(self.tgt_embed, tgt_in, "tgt_in", start_pos)  # (B, T, C)
        maps = []
        for i, block in enumerate(self.decoder):
            layer = None if cache is None else cache[i]
            if return_weights:
                y, weights = block(
                    y, memory, mask, return_weights=True, cache=layer
                )  # (B, T, C), (B, H, T, S)
                maps.append(weights)
            else:
                y = block(y, memory, mask, cache=layer)  # (B, T, C)
        logits = self.lm_head(y)  # (B, T, C) -> (B, T, V)
        return (logits, torch.stack(maps)) if return_weights else logits  # (L, B, H, T, S)

    def forward(
        self, src: torch.Tensor, tgt_in: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        memory = self.encode(src)  # (B, S, C)
        logits = self.decode(tgt_in, memory, src)  # (B, T, V)
        if targets is None:
            return logits, None
        if targets.shape != tgt_in.shape:
            raise ValueError(
                f"targets must have the shape of tgt_in {tuple(tgt_in.shape)}, got {tuple(targets.shape)}"
            )
        loss = F.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=self.config.pad_id
        )  # (B·T, V) vs (B·T,)
        return logits, loss

    @torch.no_grad()
    def cross_attention(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """The cross-attention weights of every decoder layer, [L, B, H, T, S] (rows sum to 1)."""
        memory = self.encode(src)  # (B, S, C)
        _, maps = self.decode(tgt_in, memory, src, return_weights=True)  # (L, B, H, T, S)
        return maps

    def new_cache(self) -> list[tuple[KVCache, KVCache]]:
        """Per decoder layer: an empty self-attention cache and an empty cross-attention cache
        (the latter is filled once per source), for ``decode(..., cache=...)`` (12_generation)."""
        return [(KVCache(), KVCache()) for _ in self.decoder]

    def _reorder(self, cache: list[tuple[KVCache, KVCache]] | None, index: torch.Tensor) -> None:
        for own, cross in cache or []:
            own.reorder(index)
            cross.reorder(index)

    def _never_special(self, logits: torch.Tensor) -> torch.Tensor:
        """An answer never contains ``<pad>`` or ``<bos>``: rule them out. logits [..., V] -> [..., V]."""
        banned = torch.zeros(logits.shape[-1], dtype=torch.bool, device=logits.device)  # (V,)
        banned[[self.config.pad_id, self.config.bos_id]] = True
        return logits.masked_fill(banned, float("-inf"))  # (..., V)

    def _check_steps(self, max_new_tokens: int | None, src: torch.Tensor) -> int:
        if max_new_tokens is None:
            max_new_tokens = self.config.max_len - 1
        check.integer("max_new_tokens", max_new_tokens)
        if max_new_tokens + 1 > self.config.max_len:
            raise ValueError(
                f"max_new_tokens must be at most max_len − 1 = {self.config.max_len - 1}, got {max_new_tokens}"
            )
        return max_new_tokens

    @torch.no_grad()
    def greedy_decode(
        self, src: torch.Tensor, max_new_tokens: int | None = None, use_cache: bool = True
    ) -> torch.Tensor:
        """Pick the most likely next token each step. src [B, S] -> [B, 1 + n]: ``<bos>``, the answer,
        ``<eos>``, then ``<pad>`` once a row has finished. ``use_cache`` keeps the decoder's keys
        and values (and the cross-attention's, computed once) so each step runs one token."""
        steps = self._check_steps(max_new_tokens, src)
        cache = self.new_cache() if use_cache else None
        memory = self.encode(src)  # (B, S, C)
        c = self.config
        out = torch.full((src.shape[0], 1), c.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)  # (B,)
        for _ in range(steps):
            if cache is None:
                logits = self.decode(out, memory, src)[:, -1]  # (B, t, V) -> (B, V)
            else:
                start = out.shape[1] - 1  # the last token is the only one not yet cached
                logits = self.decode(out[:, start:], memory, src, cache=cache, start_pos=start)[
                    :, -1
                ]
            logits = self._never_special(logits)  # (B, V)
            nxt = logits.argmax(dim=-1)  # (B,)
            nxt = torch.where(done, torch.full_like(nxt, c.pad_id), nxt)  # (B,)
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t + 1)
            done |= nxt == c.eos_id
            if bool(done.all()):
                break
        return out

    @torch.no_grad()
    def beam_decode(
        self,
        src: torch.Tensor,
        beam_width: int = 4,
        max_new_tokens: int | None = None,
        use_cache: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Beam search per source row: keep the ``beam_width`` prefixes with the highest total
        log-probability; a finished prefix (ended by ``<eos>``) keeps its score.

        Returns ``(tokens [B, 1 + n], log_probs [B])`` — the best finished sequence of each row
        (``<pad>``-filled after ``<eos>``) and its total log-probability. Width 1 is greedy.
        ``use_cache`` as in :meth:`greedy_decode`; the cache follows each live beam's parent.
        """
        check.integer("beam_width", beam_width)
        steps = self._check_steps(max_new_tokens, src)
        c = self.config
        rows, scores = [], []
        for b in range(src.shape[0]):
            one = src[b : b + 1]  # (1, S)
            memory = self.encode(one)  # (1, S, C)
            # (tokens, total log-prob, finished, row of the live beam it extends in the cache)
            beams = [([c.bos_id], 0.0, False, 0)]
            cache = self.new_cache() if use_cache else None
            for _ in range(steps):
                if all(beam[2] for beam in beams):
                    break
                alive = [beam for beam in beams if not beam[2]]
                prefixes = torch.tensor([beam[0] for beam in alive], device=src.device)  # (K, t)
                K, t = prefixes.shape
                if cache is None:
                    logits = self.decode(
                        prefixes, memory.expand(K, -1, -1), one.expand(K, -1)
                    )  # (K, t, V)
                else:
                    parents = torch.tensor([beam[3] for beam in alive], device=src.device)  # (K,)
                    self._reorder(cache, parents)  # each live beam continues its parent's keys
                    logits = self.decode(
                        prefixes[:, t - 1 :],
                        memory.expand(K, -1, -1),
                        one.expand(K, -1),
                        cache=cache,
                        start_pos=t - 1,
                    )  # (K, 1, V)
                log_probs = self._never_special(logits[:, -1]).log_softmax(dim=-1)  # (K, V)
                candidates = [beam for beam in beams if beam[2]]
                top = log_probs.topk(min(beam_width, c.vocab_size), dim=-1)  # (K, W)
                for k, (tokens, score, _, _) in enumerate(alive):
                    for lp, tok in zip(top.values[k].tolist(), top.indices[k].tolist()):
                        candidates.append((tokens + [tok], score + lp, tok == c.eos_id, k))
                candidates.sort(key=lambda beam: beam[1], reverse=True)
                beams = candidates[:beam_width]
            best = max(beams, key=lambda beam: beam[1])
            rows.append(best[0])
            scores.append(best[1])
        width = max(len(r) for r in rows)
        out = torch.full(
            (len(rows), width), c.pad_id, dtype=torch.long, device=src.device
        )  # (B, 1 + n)
        for b, r in enumerate(rows):
            out[b, : len(r)] = torch.tensor(r, device=src.device)
        return out, torch.tensor(scores)


def train_seq2seq(
    model: EncoderDecoder,
    task,
    steps: int = 600,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    exclude: set[str] | None = None,
    log_every: int = 50,
) -> list[float]:
    """Train ``model`` on batches from ``task`` (e.g. :class:`~.seq2seq_tasks.ReversalTask`) with
    AdamW and a short linear warm-up (post-norm needs it); returns the loss of every step.
    Strings in ``exclude`` (the held-out set) are never trained on. Prints the loss every
    ``log_every`` steps (0 = silent)."""
    check.integer("steps", steps)
    check.integer("batch_size", batch_size)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.05, 1 - s / steps)
    )
    device = next(model.parameters()).device
    model.train()
    losses = []
    for step in range(steps):
        batch = task.random_batch(batch_size, generator, exclude=exclude)
        _, loss = model(batch.src.to(device), batch.tgt_in.to(device), batch.tgt_out.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}")
    model.eval()
    return losses


def exact_match(model: EncoderDecoder, batch, beam_width: int | None = None) -> float:
    """Fraction of ``batch`` whose decoded answer equals the reference exactly
    (greedy, or beam search with ``beam_width``)."""
    from .seq2seq_tasks import decode_tokens

    device = next(model.parameters()).device
    src = batch.src.to(device)  # (B, S)
    steps = min(batch.tgt_out.shape[1], model.config.max_len - 1)  # answer + <eos>
    if beam_width is None:
        out = model.greedy_decode(src, max_new_tokens=steps)  # (B, 1 + n)
    else:
        out, _ = model.beam_decode(src, beam_width=beam_width, max_new_tokens=steps)  # (B, 1 + n)
    predictions = [decode_tokens(row[1:]) for row in out.cpu()]
    return sum(p == a for p, a in zip(predictions, batch.answers)) / len(predictions)
