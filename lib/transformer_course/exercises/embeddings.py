"""Exercises of 02_embeddings: size a table, and build the batch sampler and the lookup as
one-hot × W."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import data, model
from ..i18n import N_, _
from . import Feedback, check_value, checker, report, unanswered
from .answers import read_number
from .build import build_exercise
from .solutions.embeddings import embed_with_one_hot, sample_batch


@checker(
    hint=N_("""
        the table has one row per possible id and one column per dimension: count the rows,
        count the columns, multiply (the bias-free table has nothing else).
    """)
)
def check_table_parameters(
    answer: object, vocab_size: int = 100_070, d_model: int = 512, hint: bool = False
) -> Feedback:
    """How many numbers does an embedding table with ``vocab_size`` rows and ``d_model`` columns hold?"""
    expected = vocab_size * d_model
    value, problem = read_number(answer) if not unanswered(answer) else (None, None)
    if value is not None and problem is None and value == (vocab_size - 1) * d_model:
        return report(
            False,
            "",
            _(
                "that is {rows:,} × {d_model}: the largest id is {rows:,}, but ids start at 0, so the table needs {vocab_size:,} rows, 0 to {rows:,} (the “100069 × 64” misconception above)."
            ).format(rows=vocab_size - 1, d_model=d_model, vocab_size=vocab_size),
        )
    return check_value(
        answer,
        expected,
        _("{vocab_size:,} rows × {d_model} columns = {expected:,} parameters.").format(
            vocab_size=vocab_size, d_model=d_model, expected=expected
        ),
        _(
            "one row of d_model numbers per token id: multiply the number of rows by the number of columns."
        ),
    )


@checker(
    hint=N_("""
        a lookup's gradient reaches only the rows it read — but the GPT's output layer is
        the same table (weight tying, notebook 10), and the softmax gives every token of the
        vocabulary a probability. Answer with a fraction between 0 and 1.
    """)
)
def check_unread_row_gradient(answer: object, hint: bool = False) -> Feedback:
    """02_embeddings, predict before you run: after one backward pass of the course's GPT, what
    fraction of the table's rows that no input or target token reads get a non-zero gradient?
    The expected value is measured here, on a small GPT, not written down."""
    config = model.GPTConfig(vocab_size=60, context_length=8, d_model=16, n_heads=2, n_layers=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        gpt = model.GPT(config)
        # (B, T + 1): ids below 30 only, so rows 30-59 are never read
        ids = torch.randint(0, 30, (2, config.context_length + 1))
    _logits, loss = gpt(ids[:, :-1], ids[:, 1:])  # (B, T) inputs, (B, T) targets
    loss.backward()
    unread = gpt.token_embedding.weight.grad[30:]  # (30, C)
    expected = float((unread.norm(dim=-1) > 0).double().mean())
    return check_value(
        answer,
        expected,
        _(
            "{expected:.0%} of the unread rows get a gradient: through the tied output layer every row is a logit, and the softmax pushes every non-target logit down."
        ).format(expected=expected),
        _(
            "a row no token reads still takes part in every prediction: which layer of the GPT is the same "
            "matrix as the embedding table?"
        ),
        tolerance=0.01,
    )


# --------------------------------------------------------------------------- build exercises


def _random_corpus(generator: torch.Generator) -> tuple[torch.Tensor, int, int, torch.Generator]:
    """A random id stream and batch sizes; sometimes just long enough (T + 1 ids, one offset)."""
    batch_size = int(torch.randint(1, 6, (), generator=generator))
    context_length = int(torch.randint(1, 13, (), generator=generator))
    spare = (
        0
        if float(torch.rand((), generator=generator)) < 0.2
        else int(torch.randint(1, 40, (), generator=generator))
    )
    ids = torch.randint(0, 1000, (context_length + 1 + spare,), generator=generator)  # (N,)
    draws = torch.Generator().manual_seed(int(torch.randint(2**31, (), generator=generator)))
    return ids, batch_size, context_length, draws


def _get_batch_reference(
    ids: torch.Tensor, batch_size: int, context_length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    return data.get_batch(ids, batch_size, context_length, generator=generator)  # (B, T), (B, T)


def _batch_without_shift(
    ids: torch.Tensor, batch_size: int, context_length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Slip: the targets are the inputs themselves, not moved one token along."""
    x, _targets = data.get_batch(ids, batch_size, context_length, generator=generator)  # (B, T)
    return x, x.clone()


def _batch_swapped(
    ids: torch.Tensor, batch_size: int, context_length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Slip: (y, x) returned instead of (x, y)."""
    x, y = data.get_batch(ids, batch_size, context_length, generator=generator)  # (B, T) each
    return y, x


check_sample_batch = build_exercise(
    notebook="02_embeddings",
    solution=sample_batch,
    hint=N_("""
        draw the starts exactly as the docstring says (one call to torch.randint with the
        generator). Then `starts[:, None] + torch.arange(context_length)[None, :]` is a (B,
        T) table of positions: index `ids` with it for x, and with positions + 1 for y. The
        last start must leave room for the target of the last position — that is why the
        bound is len(ids) - context_length.
    """),
    success=N_("""
        That is `data.get_batch`, which `embedding.course_batch` and the training loop of 11
        use.
    """),
    reference=_get_batch_reference,
    make_inputs=_random_corpus,
    slips={
        N_(
            "y = x (the targets must be the same windows moved one token along)"
        ): _batch_without_shift,
        N_("x and y swapped (return the windows first, then the targets)"): _batch_swapped,
    },
)


def _random_lookup(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Ids of a random shape — (N,), (B, T) or (B, 1) — and a random (V, C) table; in half the
    draws the largest id is well below V − 1, so the one-hot width must come from the table."""
    vocab_size = int(torch.randint(2, 41, (), generator=generator))
    d_model = int(torch.randint(1, 9, (), generator=generator))
    kind = int(torch.randint(3, (), generator=generator))
    shape = [
        (int(torch.randint(1, 9, (), generator=generator)),),
        (
            int(torch.randint(1, 5, (), generator=generator)),
            int(torch.randint(2, 9, (), generator=generator)),
        ),
        (int(torch.randint(1, 5, (), generator=generator)), 1),
    ][kind]
    high = (
        vocab_size if float(torch.rand((), generator=generator)) < 0.5 else max(1, vocab_size // 3)
    )
    ids = torch.randint(0, high, shape, generator=generator)  # (...,)
    weight = torch.randn(vocab_size, d_model, generator=generator)  # (V, C)
    return ids, weight


def _lookup_reference(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # (B, T) -> (B, T, C), whatever the shape of ids: what nn.Embedding computes
    return F.embedding(ids, weight)


check_embed_with_one_hot = build_exercise(
    notebook="02_embeddings",
    solution=embed_with_one_hot,
    hint=N_("""
        `F.one_hot(ids, num_classes=weight.shape[0])` gives (..., V) integers: convert them
        with `.to(weight.dtype)` (a matrix product needs floats on both sides), then `@
        weight`. Without num_classes the width is ids.max() + 1, which is too narrow when
        the largest id is not V − 1.
    """),
    success=N_("""
        One-hot × W is the row lookup, for any shape of ids — and V times more work than
        indexing.
    """),
    reference=_lookup_reference,
    make_inputs=_random_lookup,
)
