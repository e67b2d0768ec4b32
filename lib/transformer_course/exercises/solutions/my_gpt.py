"""Solution of the capstone (10_logits_and_loss): the learner's own GPT class, built from the
learner's functions of 03, 08 and 09 (here their solutions) and plain ``nn`` parameter holders."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .block import layer_norm_from_scratch
from .positional import sinusoidal_table
from .v_attention import causal_attention

EPS = 1e-5  # nn.LayerNorm's and the library's


class MyGPT(nn.Module):
    """A decoder-only GPT: token table × √C + sinusoidal positions, ``n_layers`` pre-norm blocks,
    a final LayerNorm, and the token table again as the output layer (tied).

    Parameter names (the checker copies the library GPT's weights into them):
    ``token_embedding.weight`` (V, C); for every block k ``blocks.k.norm1`` / ``norm2``
    (``.weight`` γ and ``.bias`` β, (C,)), ``blocks.k.attn.q_proj`` / ``k_proj`` / ``v_proj`` /
    ``out_proj`` (``nn.Linear(C, C)``), ``blocks.k.ffn.up`` (``nn.Linear(C, 4C)``) and
    ``blocks.k.ffn.down`` (``nn.Linear(4C, C)``); ``final_norm.weight`` / ``.bias`` (C,).

    The course's init (notebook 10; ``check_your_gpt_trains`` tests it with ``check_initial_loss``):
    the table at std 1/√(2C), every ``nn.Linear`` weight at std 0.02 and bias 0, so the untrained
    loss is about ln V. Inputs may be shorter than ``context_length`` (T = 1 when generating).
    ``forward`` may call ``F.cross_entropy`` (or the learner's own loss, pasted with the class).
    No dropout: the library's GPT in 11 has dropout 0.1, which only regularises training.
    """

    def __init__(
        self, vocab_size: int, context_length: int, d_model: int, n_heads: int, n_layers: int
    ) -> None:
        super().__init__()
        C = d_model
        self.n_heads = n_heads
        self.token_embedding = nn.Embedding(
            vocab_size, C
        )  # (V, C) the table, also the output layer
        # (T, C) a constant: not a parameter, moves with .to(device)
        self.register_buffer("positions", sinusoidal_table(context_length, C), persistent=False)
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                {
                    "norm1": nn.LayerNorm(C),  # only a holder of γ, β: the formula is ours
                    "attn": nn.ModuleDict(
                        {
                            name: nn.Linear(C, C)
                            for name in ("q_proj", "k_proj", "v_proj", "out_proj")
                        }
                    ),
                    "norm2": nn.LayerNorm(C),
                    "ffn": nn.ModuleDict({"up": nn.Linear(C, 4 * C), "down": nn.Linear(4 * C, C)}),
                }
            )
            for _layer in range(n_layers)
        )
        self.final_norm = nn.LayerNorm(C)
        # The library's init (notebook 10): small linear weights make the untrained loss ≈ ln V;
        # the table at std 1/√(2C) puts token vectors (× √C) at the positions' RMS 1/√2.
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)
                nn.init.zeros_(module.bias)
        nn.init.normal_(self.token_embedding.weight, std=1 / math.sqrt(2 * C))

    def token_vectors(self, idx: torch.Tensor) -> torch.Tensor:
        """idx (B, T) -> (B, T, C): the table's rows, times √C."""
        return self.token_embedding.weight[idx] * math.sqrt(self.token_embedding.embedding_dim)

    def add_positions(self, h: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C): plus the sinusoidal table's first T rows."""
        return h + self.positions[: h.shape[1]]  # (B, T, C) + (T, C)

    def attention_step(self, k: int, h: torch.Tensor) -> torch.Tensor:
        """Block k's first residual step: h + causal multi-head attention of LayerNorm(h)."""
        block = self.blocks[k]
        a = layer_norm_from_scratch(h, block["norm1"].weight, block["norm1"].bias, EPS)  # (B, T, C)
        B, T, C = a.shape
        H = self.n_heads

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(B, T, H, C // H).transpose(1, 2)  # (B, T, C) -> (B, H, T, D)

        attn = block["attn"]
        q, k_, v = (
            split(attn[name](a)) for name in ("q_proj", "k_proj", "v_proj")
        )  # 3 × (B, H, T, D)
        heads = causal_attention(q, k_, v)  # (B, H, T, D)
        merged = heads.transpose(1, 2).reshape(B, T, C)  # (B, H, T, D) -> (B, T, C)
        return h + attn["out_proj"](merged)  # (B, T, C) the residual carries h unchanged

    def feed_forward_step(self, k: int, h: torch.Tensor) -> torch.Tensor:
        """Block k's second residual step: h + FFN(LayerNorm(h)), FFN = down(ReLU(up(·)))."""
        block = self.blocks[k]
        a = layer_norm_from_scratch(h, block["norm2"].weight, block["norm2"].bias, EPS)  # (B, T, C)
        return h + block["ffn"]["down"](torch.relu(block["ffn"]["up"](a)))  # (B, T, C)

    def final_layer_norm(self, h: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C): the LayerNorm after the last block (pre-norm leaves the stream raw)."""
        return layer_norm_from_scratch(h, self.final_norm.weight, self.final_norm.bias, EPS)

    def output_logits(self, h: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, V): the table itself is the output layer (tied)."""
        return h @ self.token_embedding.weight.T  # (B, T, C) @ (C, V)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """idx (B, T) -> (logits (B, T, V), mean cross-entropy of ``targets`` (B, T) or None)."""
        h = self.add_positions(self.token_vectors(idx))  # (B, T, C)
        for k in range(len(self.blocks)):
            h = self.feed_forward_step(k, self.attention_step(k, h))  # (B, T, C)
        logits = self.output_logits(self.final_layer_norm(h))  # (B, T, V)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())
