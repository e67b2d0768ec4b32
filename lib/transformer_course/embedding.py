"""Token embeddings: the embedded batch notebooks 02–10 start from (introduced in 02_embeddings).

:func:`course_batch` samples the seeded batch of the corpus, looks every id up in a seeded
embedding table and adds the sinusoidal positional encoding of 03: the shared starting state
(:class:`CourseBatch`) of the attention notebooks. ``corpus_token_ids`` (the corpus's ids, from
:mod:`.data`) stays importable here, where the notebooks first met it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from . import _checks as check
from . import positional, tokenizer
from .data import corpus_token_ids, get_batch

__all__ = ["CourseBatch", "corpus_token_ids", "course_batch"]


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

    def crop(self, T: int) -> CourseBatch:
        """The same batch cut to the first ``T`` tokens of every window (introduced in 04_qkv:
        04–08 take T = 12, so that T differs from the head size D = 16 and every printed shape
        tells a (T, T) matrix from a (T, D) one). Position t keeps its token and its encoding."""
        T = check.integer("T", T, minimum=1, maximum=self.x.shape[1])
        return replace(
            self,
            x=self.x[:, :T],  # (B, T)
            y=self.y[:, :T],  # (B, T)
            tokens=[row[:T] for row in self.tokens],
            positional=self.positional[:T],  # (T, C)
            embedded=self.embedded[:, :T],  # (B, T, C)
            inputs=self.inputs[:, :T],  # (B, T, C)
        )


def course_batch(
    seed: int = 0,
    batch_size: int = 4,
    context_length: int = 16,
    d_model: int = 64,
    corpus_ids: torch.Tensor | None = None,
) -> CourseBatch:
    """Sample the seeded batch, embed it with a seeded table and add the positional encoding
    (introduced in 02_embeddings; notebooks 02–10 start from it).

    Shapes: ``x``, ``y`` [B, T]; table [V, C] with V = max corpus id + 1; ``positional``
    [T, C]; ``embedded`` and ``inputs`` [B, T, C] (defaults B=4, T=16, C=64).

    The same arguments give the same tensors on every machine: the batch uses a
    generator seeded with ``seed`` and the table is initialised under ``seed``.
    """
    ids = corpus_ids if corpus_ids is not None else corpus_token_ids()
    # (B, T)
    x, y = get_batch(ids, batch_size, context_length, generator=torch.Generator().manual_seed(seed))
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
