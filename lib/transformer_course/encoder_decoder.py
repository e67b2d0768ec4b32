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
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks as check
from .attention import MultiHeadAttention
from .feedforward import FeedForward
from .generate import beam_search_loop, decode_loop
from .i18n import _
from .kv_cache import KVCache, check_start_pos
from .norm import LayerNorm
from .positional import sinusoidal_encoding

__all__ = [
    "DecoderBlock",
    "EncoderBlock",
    "EncoderDecoder",
    "EncoderDecoderConfig",
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
            raise ValueError(
                _("d_model must be even (sinusoidal positions), got {d_model}").format(
                    d_model=self.d_model
                )
            )
        check.divides("n_heads", self.n_heads, "d_model", self.d_model)
        if self.d_ff is not None:
            check.integer("d_ff", self.d_ff)
        check.probability("dropout", self.dropout)
        for name in ("pad_id", "bos_id", "eos_id"):
            check.integer(name, getattr(self, name), 0, self.vocab_size - 1)
        if len({self.pad_id, self.bos_id, self.eos_id}) != 3:
            raise ValueError(_("pad_id, bos_id and eos_id must be three different ids"))


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
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``cache`` (the self-attention's, 12_generation): ``y`` then holds only the new
        tokens. The cross-attention recomputes the keys and values of ``memory`` every call."""
        y = self.norm1(y + self.drop(self.self_attn(y, causal=True, cache=cache)))  # (B, T, C)
        if return_weights:
            # (B, T, C), (B, H, T, S)
            crossed, weights = self.cross_attn(
                y, context=memory, mask=src_mask, return_weights=True
            )
        else:  # the fused kernel: same numbers, faster
            crossed = self.cross_attn(y, context=memory, mask=src_mask)  # (B, T, C)
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
            raise TypeError(
                _("config must be an EncoderDecoderConfig, got {kind}").format(
                    kind=type(config).__name__
                )
            )
        self.config = c = config
        self.src_embed = nn.Embedding(c.vocab_size, c.d_model)  # (V, C)
        self.tgt_embed = nn.Embedding(c.vocab_size, c.d_model)  # (V, C)
        # (max_len, C)
        self.register_buffer("pe", sinusoidal_encoding(c.max_len, c.d_model), persistent=False)
        self.drop = nn.Dropout(c.dropout)
        self.encoder = nn.ModuleList(
            EncoderBlock(c.d_model, c.n_heads, c.d_ff, c.dropout)
            for _layer in range(c.n_encoder_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.d_model, c.n_heads, c.d_ff, c.dropout)
            for _layer in range(c.n_decoder_layers)
        )
        self.lm_head = nn.Linear(c.d_model, c.vocab_size)  # (C -> V)

    def _embed(
        self, table: nn.Embedding, ids: torch.Tensor, name: str, start_pos: int = 0
    ) -> torch.Tensor:
        if start_pos + ids.shape[1] > self.config.max_len:
            raise ValueError(
                _(
                    "{name} has {n_tokens} tokens after {start_pos} cached ones; this model takes "
                    "at most max_len={max_len}"
                ).format(
                    name=name,
                    n_tokens=ids.shape[1],
                    start_pos=start_pos,
                    max_len=self.config.max_len,
                )
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

    def _cached_length(self, cache: list[KVCache] | None, start_pos: int | None) -> int:
        """How many answer tokens ``cache`` already holds (0 without one), after checking that
        ``cache`` and ``start_pos`` fit :meth:`decode`'s contract; a mismatch raises ValueError."""
        if cache is None and start_pos:
            raise ValueError(_("start_pos > 0 needs the cache that holds the earlier tokens"))
        if cache is not None and (
            len(cache) != len(self.decoder) or not all(isinstance(c, KVCache) for c in cache)
        ):
            raise ValueError(
                _("cache must come from model.new_cache(): one KVCache per decoder layer")
            )
        return check_start_pos(start_pos, 0 if cache is None else cache[0].length)

    def decode(
        self,
        tgt_in: torch.Tensor,
        memory: torch.Tensor,
        src: torch.Tensor,
        return_weights: bool = False,
        cache: list[KVCache] | None = None,
        start_pos: int | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """tgt_in [B, T] + memory [B, S, C] -> logits [B, T, V] (and cross weights [L, B, H, T, S]).

        With ``cache`` (from :meth:`new_cache`, 12_generation) ``tgt_in`` holds only the new
        tokens, after the ``cache[0].length`` already cached; ``start_pos``, if given, must
        equal that number."""
        tgt_in = _check_ids("tgt_in", tgt_in, self.config.vocab_size)
        if tgt_in.shape[0] != memory.shape[0]:
            raise ValueError(
                _(
                    "tgt_in and memory must have the same batch size, got {tgt_batch} and "
                    "{memory_batch}"
                ).format(tgt_batch=tgt_in.shape[0], memory_batch=memory.shape[0])
            )
        start = self._cached_length(cache, start_pos)  # answer tokens already cached
        mask = self.source_mask(src)  # (B, 1, 1, S)
        y = self._embed(self.tgt_embed, tgt_in, "tgt_in", start)  # (B, T, C)
        maps = []
        for i, block in enumerate(self.decoder):
            layer = None if cache is None else cache[i]
            if return_weights:
                # (B, T, C), (B, H, T, S)
                y, weights = block(y, memory, mask, return_weights=True, cache=layer)
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
                _(
                    "targets must have the shape of tgt_in {tgt_in_shape}, got {targets_shape}"
                ).format(tgt_in_shape=tuple(tgt_in.shape), targets_shape=tuple(targets.shape))
            )
        # (B·T, V) vs (B·T,)
        loss = F.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=self.config.pad_id
        )
        return logits, loss

    @torch.no_grad()
    def cross_attention(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """The cross-attention weights of every decoder layer, [L, B, H, T, S] (rows sum to 1)."""
        memory = self.encode(src)  # (B, S, C)
        _logits, maps = self.decode(tgt_in, memory, src, return_weights=True)  # (L, B, H, T, S)
        return maps

    def new_cache(self) -> list[KVCache]:
        """An empty self-attention cache per decoder layer, for ``decode(..., cache=...)``
        (12_generation). The cross-attention's keys and values are recomputed each step."""
        return [KVCache() for _block in self.decoder]

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
                _(
                    "max_new_tokens must be at most max_len − 1 = {most}, got {max_new_tokens}"
                ).format(most=self.config.max_len - 1, max_new_tokens=max_new_tokens)
            )
        return max_new_tokens

    @torch.no_grad()
    def greedy_decode(
        self, src: torch.Tensor, max_new_tokens: int | None = None, use_cache: bool = True
    ) -> torch.Tensor:
        """Pick the most likely next token each step. src [B, S] -> [B, 1 + n]: ``<bos>``, the answer,
        ``<eos>``, then ``<pad>`` once a row has finished. ``use_cache`` keeps the decoder's
        self-attention keys and values so each step runs one token.
        The loop is :func:`~.generate.decode_loop`, the GPT's own."""
        steps = self._check_steps(max_new_tokens, src)
        c = self.config
        step = _NextAnswerLogits(self, src, self.encode(src), use_cache)
        # (B, 1)
        start = torch.full((src.shape[0], 1), c.bos_id, dtype=torch.long, device=src.device)
        choose = partial(torch.argmax, dim=-1, keepdim=True)  # (B, V) -> (B, 1)
        # (B, 1 + n)
        return decode_loop(step, start, steps, choose, eos_id=c.eos_id, pad_id=c.pad_id)

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
        The search is :func:`~.generate.beam_search_loop`, the GPT's own.
        """
        check.integer("beam_width", beam_width)
        steps = self._check_steps(max_new_tokens, src)
        c = self.config
        start = torch.tensor([c.bos_id], device=src.device)  # (1,)
        rows, scores = [], []
        for b in range(src.shape[0]):
            one = src[b : b + 1]  # (1, S)
            step = _NextAnswerLogits(self, one, self.encode(one), use_cache)
            # Summed in float64, so a long answer's total does not drift with float32 rounding.
            best, score = beam_search_loop(
                step,
                start,
                steps,
                beam_width,
                eos_id=c.eos_id,
                pad_id=c.pad_id,
                score_dtype=torch.float64,
            )  # (1 + t,), ()
            ended = (best == c.eos_id).nonzero()
            # no <pad> after <eos>
            rows.append(best if not len(ended) else best[: int(ended[0]) + 1])
            scores.append(float(score))
        width = max(len(r) for r in rows)
        # (B, 1 + n)
        out = torch.full((len(rows), width), c.pad_id, dtype=torch.long, device=src.device)
        for b, r in enumerate(rows):
            out[b, : len(r)] = r
        return out, torch.tensor(scores)


class _NextAnswerLogits:
    """The decoder's next-token logits for growing answers to one batch of sources (the step
    function of :func:`~.generate.decode_loop` and :func:`~.generate.beam_search_loop`).

    ``src`` [B or 1, S] and its ``memory`` [B or 1, S, C] are expanded to however many answers
    [K, t] come in (beam search: K beams of one source). With a cache only the tokens not yet
    cached run; ``<pad>`` and ``<bos>`` are ruled out, an answer never contains them.
    """

    def __init__(
        self, model: EncoderDecoder, src: torch.Tensor, memory: torch.Tensor, use_cache: bool
    ) -> None:
        self.model, self.src, self.memory = model, src, memory
        self.cache = model.new_cache() if check.boolean("use_cache", use_cache) else None

    def __call__(self, answers: torch.Tensor) -> torch.Tensor:
        """answers [K, t] -> logits [K, V] for the token after each."""
        K, _length = answers.shape
        memory, src = self.memory.expand(K, -1, -1), self.src.expand(K, -1)  # (K, S, C), (K, S)
        if self.cache is None:
            logits = self.model.decode(answers, memory, src)  # (K, t, V)
        else:
            new = answers[:, self.cache[0].length :]  # (K, t − cached) what the cache lacks
            logits = self.model.decode(new, memory, src, cache=self.cache)  # (K, t − cached, V)
        return self.model._never_special(logits[:, -1])  # (K, V)

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the cached rows ``index`` [K'] (the kept beams' parents)."""
        for layer in self.cache or []:
            layer.reorder(index)
