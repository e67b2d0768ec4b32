"""The benchmark's baseline: a GPT written the way the code accompanying the decoder walk-through (SOURCES.md) structures it.

Deliberately naive, and kept only so that ``bench_training.py`` can measure what the course's
``model.GPT`` gains. What makes it slow is what the seed's structure does:

- every attention head is its own module with its own three ``nn.Linear`` (4 heads × 3 small
  matrix products instead of one fused Q/K/V product per block);
- attention is computed by hand (matmul, mask, softmax, dropout, matmul) rather than by a fused
  kernel, and the heads are concatenated afterwards;
- the sinusoidal positional table is rebuilt on every forward pass;
- the output layer is its own 100,070 × 64 matrix (no weight tying).

The seed sizes its output layer ``max_token_value`` (100,069) rows, one short of the ids it has
to predict; here it has ``vocab_size`` = max id + 1 rows so that every target is a valid class.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class NaiveHead(nn.Module):
    """One causal self-attention head with its own key, query and value projections."""

    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float) -> None:
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape  # (B, T, C)
        q = self.query(x)  # (B, T, C) -> (B, T, D)
        k = self.key(x)  # (B, T, C) -> (B, T, D)
        v = self.value(x)  # (B, T, C) -> (B, T, D)
        scores = (
            q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        )  # (B, T, D) @ (B, D, T) -> (B, T, T)
        scores = scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # (B, T, T)
        weights = self.dropout(F.softmax(scores, dim=-1))  # (B, T, T)
        return weights @ v  # (B, T, T) @ (B, T, D) -> (B, T, D)


class NaiveMultiHeadAttention(nn.Module):
    """A list of heads, concatenated, then one output projection."""

    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float) -> None:
        super().__init__()
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            NaiveHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)
        )
        self.projection = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.cat([head(x) for head in self.heads], dim=-1)  # H × (B, T, D) -> (B, T, C)
        return self.dropout(self.projection(out))  # (B, T, C)


class NaiveBlock(nn.Module):
    """LayerNorm → attention → residual, LayerNorm → feed-forward → residual (pre-norm, as the seed)."""

    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = NaiveMultiHeadAttention(d_model, n_heads, context_length, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.ReLU(),
            nn.Linear(4 * d_model, d_model),
            nn.Dropout(dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))  # (B, T, C)
        return x + self.feed_forward(self.norm2(x))  # (B, T, C)


class NaiveGPT(nn.Module):
    """The seed's language model: embedding + rebuilt sinusoidal table, 8 blocks, LayerNorm, linear."""

    def __init__(
        self,
        vocab_size: int,
        context_length: int = 16,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 8,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.context_length = context_length
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.Sequential(
            *[NaiveBlock(d_model, n_heads, context_length, dropout) for _ in range(n_layers)],
            nn.LayerNorm(d_model),
        )
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        _, T = idx.shape  # (B, T)
        # Rebuilt on every call, exactly the waste the seed's forward pass has.
        position = torch.arange(self.context_length, dtype=torch.float).unsqueeze(1)  # (T_max, 1)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2).float() * (-math.log(10000.0) / self.d_model)
        )  # (C/2,)
        table = torch.zeros(self.context_length, self.d_model)  # (T_max, C)
        table[:, 0::2] = torch.sin(position * div_term)
        table[:, 1::2] = torch.cos(position * div_term)
        x = self.token_embedding(idx) + table[:T].to(idx.device)  # (B, T, C) + (T, C) -> (B, T, C)
        logits = self.lm_head(self.blocks(x))  # (B, T, C) -> (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.flatten(0, 1), targets.flatten()
            )  # (B·T, V), (B·T,) -> ()
        return logits, loss
