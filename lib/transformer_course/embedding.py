"""Token embeddings and the course's shared starting state (introduced in 02_embeddings).

Notebooks 02–08 all start from the same reproducible place: the seeded [4, 16]
batch of the sales textbook, its token embeddings from a seeded 100,070 × 64
table, plus the sinusoidal positional encoding. ``course_batch`` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from . import data, positional, tokenizer


@dataclass
class CourseBatch:
    """The shared starting state of notebooks 02–08 (shapes: B=4, T=16, C=64, V=100,070)."""

    corpus_ids: torch.Tensor  # (N,) every token id of the corpus
    x: torch.Tensor  # (B, T) input ids
    y: torch.Tensor  # (B, T) next-token ids
    tokens: list[list[str]]  # (B, T) the text piece behind each input id
    vocab_size: int  # max id in the corpus + 1
    token_embedding: nn.Embedding  # (V, C)
    positional: torch.Tensor  # (T, C)
    embedded: torch.Tensor  # (B, T, C) token embeddings only
    inputs: torch.Tensor  # (B, T, C) token embeddings + positional encoding


def corpus_token_ids(text: str | None = None, encoding_name: str = "cl100k_base") -> torch.Tensor:
    """Every token id of the corpus (or of ``text``) under ``encoding_name``, as a LongTensor [N]."""
    encoding = tokenizer.get_encoding(encoding_name)
    return torch.tensor(encoding.encode(text if text is not None else data.load_text()), dtype=torch.long)


def course_batch(
    seed: int = 0,
    batch_size: int = 4,
    context_length: int = 16,
    d_model: int = 64,
    corpus_ids: torch.Tensor | None = None,
) -> CourseBatch:
    """Sample the seeded batch, embed it with a seeded table and add the positional encoding.

    Shapes: ``x``, ``y`` [B, T]; table [V, C] with V = max corpus id + 1; ``positional``
    [T, C]; ``embedded`` and ``inputs`` [B, T, C] (defaults B=4, T=16, C=64).

    The same arguments give the same tensors on every machine: the batch uses a
    generator seeded with ``seed`` and the table is initialised under ``seed``.
    """
    ids = corpus_ids if corpus_ids is not None else corpus_token_ids()
    x, y = data.get_batch(ids, batch_size, context_length, generator=torch.Generator().manual_seed(seed))  # (B, T)
    vocab_size = int(ids.max()) + 1  # ids run 0..max, so the table needs max + 1 rows
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        table = nn.Embedding(vocab_size, d_model)  # (V, C)
    encoding = tokenizer.get_encoding()
    tokens = [[encoding.decode([int(i)]) for i in row] for row in x]
    pe = positional.sinusoidal_encoding(context_length, d_model)  # (T, C)
    with torch.no_grad():
        embedded = table(x)  # (B, T) -> (B, T, C)
    return CourseBatch(
        corpus_ids=ids,
        x=x,
        y=y,
        tokens=tokens,
        vocab_size=vocab_size,
        token_embedding=table,
        positional=pe,
        embedded=embedded,
        inputs=embedded + pe,  # (B, T, C) + (T, C) -> (B, T, C)
    )
