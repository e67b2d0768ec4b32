"""What defines the course's GPT: :class:`GPTConfig` and the names of its switches
(09_transformer_block; the LLaMA-style switches in 13_modern_blocks). :mod:`.model` builds the
network from it; the config lives apart so that it reads, and validates, on its own.
:data:`MODEL_PRESETS` and :func:`model_preset` are the model's half of the named recipes
(11_training; the training half is ``train.PRESETS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from . import _checks as check

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
        minimums = {"vocab_size": 2, "context_length": 1, "d_model": 1, "n_heads": 1, "n_layers": 0}
        for name, minimum in minimums.items():
            check.integer(name, getattr(self, name), minimum)
        check.divides(
            "n_heads",
            self.n_heads,
            "d_model",
            self.d_model,
            "so every head gets d_model // n_heads features",
        )
        check.probability("dropout", self.dropout)
        for name, choices in {
            "positional": POSITIONALS,
            "norm": NORMS,
            "feedforward": FEEDFORWARDS,
            "norm_placement": PLACEMENTS,
        }.items():
            check.choice(name, getattr(self, name), choices)
        if self.positional == "sinusoidal" and self.d_model % 2:
            raise ValueError(
                f"positional='sinusoidal' needs an even d_model (sin/cos pairs), got {self.d_model}"
            )
        if self.positional == "rope" and self.head_size % 2:
            raise ValueError(
                f"positional='rope' needs an even head size d_model // n_heads (RoPE rotates pairs), "
                f"got {self.d_model} // {self.n_heads} = {self.head_size}"
            )
        if self.d_ff is not None:
            check.integer("d_ff", self.d_ff)
        if self.n_kv_heads is not None:
            check.integer("n_kv_heads", self.n_kv_heads)
            check.divides(
                "n_kv_heads",
                self.n_kv_heads,
                "n_heads",
                self.n_heads,
                "so each K/V head serves the same number of query heads",
            )
        check.boolean("tie_weights", self.tie_weights)
        check.boolean("bias", self.bias)
        if self.norm_eps is not None:
            check.number("norm_eps", self.norm_eps, above=0.0)
        check.number("rope_base", self.rope_base, above=1.0)
        check.choice("embedding_scale", self.embedding_scale, EMBEDDING_SCALES)

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
        raise ValueError(f"preset must be one of {sorted(MODEL_PRESETS)}, got {name!r}")
    return GPTConfig(vocab_size=vocab_size, **{**MODEL_PRESETS[name], **overrides})
