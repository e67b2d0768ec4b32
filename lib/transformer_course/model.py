"""The tiny decoder-only GPT of the course (09_transformer_block, 10_logits_and_loss).

:class:`GPTConfig` first: every size and switch, checked once. Then the network built from it:
token embedding (+ positions) -> ``n_layers`` × :class:`Block` -> final norm -> a linear
layer to the vocabulary. The defaults are the sizes of the code that accompanies the decoder
walk-through (SOURCES.md): context 16, d_model 64, 4 heads, 8 blocks, dropout 0.1; switches in
:class:`GPTConfig` turn it into the LLaMA-style variants of 13_modern_blocks
(RoPE, RMSNorm, SwiGLU, grouped-query attention). :data:`MODEL_PRESETS` and
:func:`model_preset` are the model's half of the named recipes (11_training; the training half
is ``train.PRESETS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from . import _checks as check
from .attention import MultiHeadAttention, check_heads
from .feedforward import FeedForward, SwiGLU
from .i18n import _
from .kv_cache import KVCache, check_start_pos, new_cache
from .machine import evaluating  # GPT.attention_maps uses it; 11_training imports it from here
from .norm import LayerNorm, RMSNorm
from .positional import check_rope_head_size, check_sinusoidal_width, sinusoidal_encoding

__all__ = [
    "EMBEDDING_SCALES", "FEEDFORWARDS", "NORMS", "PLACEMENTS", "POSITIONALS", "MODEL_PRESETS",
    "GPTConfig", "Block", "GPT", "evaluating", "make_feedforward", "make_norm", "model_preset",
    "parameter_counts",
]  # fmt: skip

POSITIONALS = ("sinusoidal", "learned", "rope", "none")
NORMS = ("layernorm", "rmsnorm")
FEEDFORWARDS = ("relu", "gelu", "gelu_tanh", "silu", "swiglu")
PLACEMENTS = ("pre", "post")
EMBEDDING_SCALES = ("sqrt_d_model", "none")


@dataclass
class GPTConfig:
    """Everything that defines a :class:`GPT` (introduced in 09_transformer_block).

    ``vocab_size`` is the number of rows of the embedding table (max token id + 1).
    The switches: ``positional`` ("sinusoidal" table added to the embeddings, "learned"
    table, "rope" rotations inside attention, or "none": only the causal mask tells order), ``norm`` ("layernorm" | "rmsnorm"),
    ``feedforward`` ("relu" | "gelu" | "gelu_tanh" (GPT-2's tanh-approximate GELU) | "silu" |
    "swiglu"), ``d_ff`` (hidden width;
    default 4 · d_model, or ⌈8/3 · d_model⌉ for SwiGLU, which keeps the parameter count),
    ``n_kv_heads`` (fewer K/V heads = grouped-query attention; None = n_heads),
    ``norm_placement`` ("pre": norm before each sub-layer, as GPT-2 and the course;
    "post": after the residual add, as the 2017 paper), ``tie_weights`` (the output
    layer reuses the embedding table), ``bias`` (biases in the linear layers), ``norm_eps``
    (the epsilon of every norm; None keeps each norm's default: LayerNorm 1e-5, RMSNorm 1e-6;
    GPT-2 and LLaMA-2/3 use 1e-5), ``rope_base`` (RoPE's base; LLaMA-2 10,000, LLaMA-3 500,000)
    and ``embedding_scale`` (11_training): "sqrt_d_model" multiplies the token vectors by
    √d_model, as the 2017 paper does, and draws the table at std 1/√(2·d_model), so a token
    vector starts at RMS 1/√2, the sinusoidal table's own, instead of 36× below it; "none" is
    GPT-2's plain lookup at std 0.02 (pretrained GPT-2/LLaMA, and checkpoints saved before this
    field existed: the ``legacy`` value that ``checkpoint`` fills in when a stored config lacks it).
    """

    vocab_size: int
    context_length: int = 16
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 8
    dropout: float = 0.1
    positional: str = "sinusoidal"
    norm: str = "layernorm"
    feedforward: str = "relu"
    d_ff: int | None = None
    n_kv_heads: int | None = None
    norm_placement: str = "pre"
    tie_weights: bool = True
    bias: bool = True
    norm_eps: float | None = None
    rope_base: float = 10000.0
    embedding_scale: str = field(default="sqrt_d_model", metadata={"legacy": "none"})

    def __post_init__(self) -> None:
        """Every rule, checked once here: the layers a GPT builds from this config skip their own."""
        minimums = {"vocab_size": 2, "context_length": 1, "n_layers": 0}
        for name, minimum in minimums.items():
            check.integer(name, getattr(self, name), minimum)
        check_heads(self.d_model, self.n_heads, self.n_kv_heads)
        check.probability("dropout", self.dropout)
        for name, choices in {
            "positional": POSITIONALS,
            "norm": NORMS,
            "feedforward": FEEDFORWARDS,
            "norm_placement": PLACEMENTS,
            "embedding_scale": EMBEDDING_SCALES,
        }.items():
            check.choice(name, getattr(self, name), choices)
        if self.positional == "sinusoidal":
            check_sinusoidal_width(self.d_model)
        if self.positional == "rope":
            check_rope_head_size(self.head_size)
        if self.d_ff is not None:
            check.integer("d_ff", self.d_ff)
        check.boolean("tie_weights", self.tie_weights)
        check.boolean("bias", self.bias)
        if self.norm_eps is not None:
            check.number("norm_eps", self.norm_eps, above=0.0)
        check.number("rope_base", self.rope_base, above=1.0)

    @property
    def head_size(self) -> int:
        """D = d_model // n_heads."""
        return self.d_model // self.n_heads

    @property
    def embedding_multiplier(self) -> float:
        """What :meth:`GPT.embed` multiplies the token vectors by: √d_model, or 1 for "none"."""
        return math.sqrt(self.d_model) if self.embedding_scale == "sqrt_d_model" else 1.0

    @property
    def embedding_init_std(self) -> float:
        """The token table's initial std: 1/√(2·d_model) for "sqrt_d_model" (× √d_model gives
        RMS 1/√2, the sinusoidal table's), GPT-2's 0.02 for "none"."""
        return 1 / math.sqrt(2 * self.d_model) if self.embedding_scale == "sqrt_d_model" else 0.02

    @property
    def hidden_size(self) -> int:
        """The feed-forward network's hidden width (``d_ff`` or its default)."""
        if self.d_ff is not None:
            return self.d_ff
        return math.ceil(8 * self.d_model / 3) if self.feedforward == "swiglu" else 4 * self.d_model


#: The ``GPTConfig`` arguments (all but ``vocab_size``) that go with each recipe. The seed's
#: sizes and its sinusoidal table throughout: GPTConfig's default ``embedding_scale`` puts the
#: token vectors at the table's scale (11_training measures why that matters).
MODEL_PRESETS: dict[str, dict[str, Any]] = {
    "seed": {"context_length": 16, "d_model": 64, "n_heads": 4, "n_layers": 8, "dropout": 0.1},
    "cpu-demo": {
        "context_length": 16,
        "d_model": 64,
        "n_heads": 4,
        "n_layers": 8,
        "dropout": 0.1,
        "positional": "sinusoidal",
    },
    "gpu": {
        "context_length": 64,
        "d_model": 128,
        "n_heads": 8,
        "n_layers": 8,
        "dropout": 0.2,
        "positional": "sinusoidal",
    },
}


def model_preset(name: str, vocab_size: int, **overrides: Any) -> GPTConfig:
    """The ``GPTConfig`` of recipe ``name`` for ``vocab_size`` tokens (fields in ``overrides`` win)."""
    if name not in MODEL_PRESETS:
        raise ValueError(
            _("preset must be one of {presets}, got {name!r}").format(
                presets=sorted(MODEL_PRESETS), name=name
            )
        )
    return GPTConfig(vocab_size=vocab_size, **{**MODEL_PRESETS[name], **overrides})


def make_norm(config: GPTConfig) -> nn.Module:
    """The normalisation layer the config asks for, over d_model features."""
    norm = LayerNorm if config.norm == "layernorm" else RMSNorm
    # None keeps each class's own default eps (LayerNorm 1e-5, RMSNorm 1e-6).
    eps = {} if config.norm_eps is None else {"eps": config.norm_eps}
    return norm(config.d_model, **eps, validate=False)  # the config has checked both


def make_feedforward(config: GPTConfig) -> nn.Module:
    """The feed-forward network the config asks for (its dropout is the residual dropout)."""
    C, hidden, dropout, bias = config.d_model, config.hidden_size, config.dropout, config.bias
    if config.feedforward == "swiglu":
        return SwiGLU(C, hidden, dropout, bias, validate=False)  # the config has checked them
    return FeedForward(C, hidden, config.feedforward, dropout, bias, validate=False)


class Block(nn.Module):
    """One Transformer block (introduced in 09_transformer_block): masked multi-head
    attention and a feed-forward network, each wrapped in a residual connection and a norm.

    pre-norm:  x = x + Attn(Norm(x));  x = x + FFN(Norm(x))
    post-norm: x = Norm(x + Attn(x));  x = Norm(x + FFN(x))
    Input [B, T, C] -> output [B, T, C].
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.pre_norm = config.norm_placement == "pre"
        self.norm1 = make_norm(config)
        self.attn = MultiHeadAttention(
            config.d_model,
            config.n_heads,
            n_kv_heads=config.n_kv_heads,
            dropout=config.dropout,
            bias=config.bias,
            rope=config.positional == "rope",
            rope_base=config.rope_base,
            validate=False,  # GPTConfig has checked these rules once, for every block
        )
        self.attn_dropout = nn.Dropout(config.dropout)  # on the attention branch before the add
        self.norm2 = make_norm(config)
        self.ffn = make_feedforward(config)

    def forward(self, x, return_attention=False, cache=None):
        """x [B, T, C] -> [B, T, C]; with ``return_attention`` also the weights [B, H, T, T].

        With ``cache`` (12_generation) ``x`` holds only the new tokens; their keys and values
        join the cached ones, and the weights are [B, H, T, S] over all S tokens so far."""
        h = self.norm1(x) if self.pre_norm else x  # (B, T, C) pre-norm: normalise the branch
        out = self.attn(h, causal=True, return_weights=return_attention, cache=cache)  # (B, T, C)
        attended, weights = out if return_attention else (out, None)  # (B, T, C), (B, H, T, S)
        if self.pre_norm:
            # (B, T, C) the residual path carries x through untouched
            x = x + self.attn_dropout(attended)
            x = x + self.ffn(self.norm2(x))  # (B, T, C)
        else:
            # (B, T, C) post-norm: normalise the sum
            x = self.norm1(x + self.attn_dropout(attended))
            x = self.norm2(x + self.ffn(x))  # (B, T, C)
        return (x, weights) if return_attention else x


class GPT(nn.Module):
    """The decoder-only language model (introduced in 09_transformer_block and 10_logits_and_loss).

    ``forward(idx [B, T], targets [B, T] or None) -> (logits [B, T, V], loss or None)``;
    the loss is the mean cross-entropy of predicting ``targets`` (the next tokens).
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        check.instance("config", config, GPTConfig)
        self.config = config
        C = config.d_model
        self.token_embedding = nn.Embedding(config.vocab_size, C)  # (V, C)
        if config.positional == "learned":
            self.position_embedding = nn.Embedding(config.context_length, C)  # (T, C)
        if config.positional == "sinusoidal":
            # A constant: built once, moves with .to(device), and stays out of the state dict.
            # (T, C)
            self.register_buffer(
                "positional_table", sinusoidal_encoding(config.context_length, C), persistent=False
            )
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _layer in range(config.n_layers))
        # Post-norm blocks already end with a norm; pre-norm leaves the residual stream unnormalised.
        self.final_norm = make_norm(config) if config.norm_placement == "pre" else nn.Identity()
        self.lm_head = nn.Linear(C, config.vocab_size, bias=False)  # (C -> V)
        self.apply(self._init_weights)  # in module order: the same draws for every embedding_scale
        for name, param in self.named_parameters():
            # GPT-2: each block adds two outputs to the residual stream; shrinking them keeps
            # the stream's variance from growing with depth at initialisation.
            if name.endswith(("attn.out_proj.weight", "ffn.down.weight")):
                nn.init.normal_(param, mean=0.0, std=0.02 / math.sqrt(2 * max(config.n_layers, 1)))
        if config.tie_weights:
            self.lm_head.weight = self.token_embedding.weight  # one (V, C) tensor, two uses

    def forward(self, idx, targets=None, *, cache=None, start_pos=None):
        """idx [B, T] (T ≤ context_length) -> (logits [B, T, V], loss or None).

        With ``targets`` [B, T] the loss is the cross-entropy averaged over all B·T
        positions: −log p(target) under softmax(logits).

        With ``cache`` (from :meth:`new_cache`, 12_generation) ``idx`` holds only the new
        tokens; they continue the ``cache[0].length`` tokens already cached (as Hugging Face's
        ``DynamicCache`` counts them), and every block appends their keys and values to its
        cache, in place. ``start_pos``, if given, must equal that number. The cached and the
        new tokens together may not exceed ``context_length``.
        """
        start = 0 if cache is None and not start_pos else self._cache_position(cache, start_pos)
        idx = self._check_ids("idx", idx, start)  # (B, T) token ids
        if targets is not None:
            targets = self._check_ids("targets", targets, like=idx)  # (B, T) the next tokens
        x = self.embed(idx, start)  # (B, T) -> (B, T, C)
        for i, block in enumerate(self.blocks):
            x = block(x, cache=None if cache is None else cache[i])  # (B, T, C) -> (B, T, C)
        logits = self.lm_head(self.final_norm(x))  # (B, T, C) -> (B, T, V)
        # (B·T, V), (B·T,) -> (): the mean cross-entropy
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss

    def embed(self, idx: torch.Tensor, start_pos: int = 0) -> torch.Tensor:
        """Token embeddings (× √d_model with ``embedding_scale="sqrt_d_model"``) plus positions
        (nothing added for RoPE, which acts inside attention, or for ``positional="none"``):
        idx [B, T] -> [B, T, C]. ``start_pos`` (12_generation) is the absolute position of
        the first token, for tokens that continue a cached sequence."""
        # (B, T) -> (B, T, C), × √C with embedding_scale="sqrt_d_model" (the table's scale), else × 1
        x = self.token_embedding(idx) * self.config.embedding_multiplier
        # (B, T, C) + (T, C) -> (B, T, C): the rows of the T tokens' absolute positions
        if self.config.positional == "sinusoidal":
            x = x + self.positional_table[start_pos : start_pos + idx.shape[1]]
        elif self.config.positional == "learned":
            x = x + self.position_embedding.weight[start_pos : start_pos + idx.shape[1]]
        return self.dropout(x)  # (B, T, C)

    def _blocks_forward(self, idx: torch.Tensor, return_attention: bool):
        """The final norm's output [B, T, C] and, with ``return_attention``, every block's
        attention weights (by hand) [B, H, T, T]; ``forward`` is the same without the weights."""
        x = self.embed(idx)  # (B, T) -> (B, T, C)
        maps = []
        for block in self.blocks:
            if return_attention:
                x, weights = block(x, return_attention=True)  # (B, T, C), (B, H, T, T)
                maps.append(weights)
            else:
                x = block(x)  # (B, T, C) -> (B, T, C)
        return self.final_norm(x), maps  # (B, T, C)

    def new_cache(self) -> list[KVCache]:
        """An empty :class:`~.kv_cache.KVCache` per block, for ``forward(..., cache=...)`` (12_generation)."""
        return new_cache(len(self.blocks))

    @torch.no_grad()
    def attention_maps(self, idx: torch.Tensor) -> torch.Tensor:
        """Every block's attention weights for ``idx`` [B, T]: [L, B, H, T, T] (used in 12_generation).

        Runs in eval mode (no dropout) and restores the model's mode afterwards.
        """
        idx = self._check_ids("idx", idx)
        if not self.blocks:
            raise ValueError(
                _("the model has no blocks (n_layers=0), so there is no attention to show")
            )
        with evaluating(self):
            _normed, maps = self._blocks_forward(idx, return_attention=True)
        return torch.stack(maps)  # L × (B, H, T, T) -> (L, B, H, T, T)

    def num_parameters(self) -> int:
        """Trainable parameters, each shared tensor (tied weights) counted once."""
        return sum(p.numel() for p in self.parameters())

    def _init_weights(self, module: nn.Module) -> None:
        # Small weights (std 0.02, GPT-2) make the untrained logits nearly equal: loss ≈ ln V.
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            # The token table's std depends on embedding_scale (see GPTConfig.embedding_init_std).
            std = self.config.embedding_init_std if module is self.token_embedding else 0.02
            nn.init.normal_(module.weight, mean=0.0, std=std)

    def _check_ids(self, name: str, ids: object, start: int = 0, like=None) -> torch.Tensor:
        """The model's entry check, the only one on its forward pass: token ids [B, T] (the shape
        of ``like``, if given) that fit into the context after ``start`` cached tokens."""
        ids = check.token_ids(name, ids, self.config.vocab_size)  # (B, T)
        if like is not None and ids.shape != like.shape:
            raise ValueError(_not_like_idx(name, like))
        if start + ids.shape[1] > self.config.context_length:
            raise ValueError(_too_long(name, ids.shape[1], start, self.config.context_length))
        return ids

    def _cache_position(self, cache: object, start_pos: object) -> int:
        """How many tokens ``cache`` holds (``cache[0].length``), checked against an explicit
        ``start_pos`` (12_generation passes it: the number of tokens already cached)."""
        if start_pos is not None:
            check.integer("start_pos", start_pos, 0)
        if cache is None:
            raise ValueError(
                _("start_pos > 0 needs the cache that holds the earlier tokens: pass cache=...")
            )
        if (
            not isinstance(cache, list)
            or len(cache) != len(self.blocks)
            or not all(isinstance(c, KVCache) for c in cache)
        ):
            raise TypeError(_("cache must be the list of KVCache that model.new_cache() returns"))
        return check_start_pos(start_pos, cache[0].length if cache else start_pos or 0)


def _not_like_idx(name: str, like: torch.Tensor) -> str:
    """The error for targets whose shape is not idx's (see :meth:`GPT._check_ids`)."""
    return _("{name} must have the same shape as idx, {like_shape}").format(
        name=name, like_shape=tuple(like.shape)
    )


def _too_long(name: str, T: int, cached: int, context_length: int) -> str:
    if cached:
        message = _(
            "{name} has T={T} tokens after {cached} cached ones but the model's context_length "
            "is {context_length}: keep the last ones (generate.generate crops for you)"
        )
    else:
        message = _(
            "{name} has T={T} tokens but the model's context_length is {context_length}: "
            "keep the last ones (generate.generate crops for you)"
        )
    return message.format(name=name, T=T, cached=cached, context_length=context_length)


def parameter_counts(model: GPT) -> dict[str, int]:
    """Parameters per part of ``model`` (09_transformer_block, 10_logits_and_loss):
    token embedding, position embedding, attention, feed-forward, norms, output layer.

    A tied output layer shares the embedding table and counts 0 here, so the parts
    sum to ``model.num_parameters()``.
    """
    counts = {"token embedding": model.token_embedding.weight.numel()}
    counts["position embedding"] = (
        model.position_embedding.weight.numel() if model.config.positional == "learned" else 0
    )
    counts["attention"] = sum(p.numel() for b in model.blocks for p in b.attn.parameters())
    counts["feed-forward"] = sum(p.numel() for b in model.blocks for p in b.ffn.parameters())
    counts["norms"] = sum(
        p.numel() for b in model.blocks for p in (*b.norm1.parameters(), *b.norm2.parameters())
    ) + sum(p.numel() for p in model.final_norm.parameters())
    tied = model.lm_head.weight is model.token_embedding.weight
    counts["output layer"] = 0 if tied else sum(p.numel() for p in model.lm_head.parameters())
    return counts
