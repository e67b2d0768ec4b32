"""word2vec: skip-gram and CBOW with negative sampling (introduced in 02b_word2vec).

Before Transformers learned their own embedding tables end to end, word vectors
were trained on their own with a simple "predict the neighbours" task (Mikolov
et al., 2013). Two tables are learned, V × d each:

- ``in_embed`` — the vector ``v_w`` of a word when it is the *centre* (skip-gram)
  or part of the *context* (CBOW); this is the table people keep as "the" word vectors;
- ``out_embed`` — the vector ``u_w`` of a word when it is being *predicted*.

Skip-gram predicts each context word from the centre word; CBOW is its mirror
image and predicts the centre word from the average of its context. Both use
negative sampling: instead of a softmax over the whole vocabulary, the model
tells the true word apart from ``K`` words drawn from the unigram distribution
raised to the power 0.75::

    loss = −log σ(u_o · h) − Σ_k log σ(−u_k · h)

with ``h = v_c`` (skip-gram) or ``h = mean of v_context`` (CBOW).

Everything random takes a ``torch.Generator``, so a seeded run gives the same
vectors on every CPU.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks as check
from .i18n import N_, _

MODES = ("skipgram", "cbow")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Split ``text`` into lower-case words (letters, with an inner apostrophe such as "customer's").

    word2vec works on whole words, not on the sub-word tokens of notebook 01: punctuation
    and digits are dropped.
    """
    check.instance("text", text, str)
    return _WORD.findall(text.lower())


@dataclass
class Vocabulary:
    """The words kept for training, most frequent first, with their corpus counts."""

    words: list[str]
    counts: torch.Tensor  # (V,) how often each word occurs in the corpus
    index: dict[str, int] = field(repr=False)

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def id(self, word: str) -> int:
        """The row of ``word`` in the tables; a ``KeyError`` naming the word when it is not kept."""
        try:
            return self.index[word]
        except KeyError:
            raise KeyError(
                _(
                    "{word!r} is not in the vocabulary (rare words under min_count are dropped)"
                ).format(word=word)
            ) from None

    def encode(self, tokens: Iterable[str]) -> torch.Tensor:
        """The ids of the tokens that are in the vocabulary, in order (the others are skipped): [N]."""
        return torch.tensor([self.index[t] for t in tokens if t in self.index], dtype=torch.long)


def build_vocabulary(tokens: Sequence[str], min_count: int = 5) -> Vocabulary:
    """Keep the words seen at least ``min_count`` times, most frequent first (ties alphabetically)."""
    check.integer("min_count", min_count)
    counter = Counter(tokens)
    kept = sorted((w for w, c in counter.items() if c >= min_count), key=lambda w: (-counter[w], w))
    if len(kept) < 2:
        raise ValueError(
            _(
                "only {count} word(s) occur at least min_count={min_count} times; use more text "
                "or a lower min_count"
            ).format(count=len(kept), min_count=min_count)
        )
    counts = torch.tensor([counter[w] for w in kept], dtype=torch.long)  # (V,)
    return Vocabulary(words=kept, counts=counts, index={w: i for i, w in enumerate(kept)})


def keep_probabilities(counts: torch.Tensor, threshold: float = 1e-4) -> torch.Tensor:
    """Probability of keeping each occurrence of a word when subsampling frequent words: [V].

    The formula of the word2vec C code: with ``f`` the word's share of the corpus,
    keep = (√(f / t) + 1) · t / f, capped at 1. Very frequent words ("the", "and")
    carry little meaning and flood the pairs; dropping most of their occurrences makes
    training faster and the vectors of the rarer words better.
    """
    check.number("threshold", threshold, above=0)
    freq = counts.double() / counts.sum()  # (V,)
    keep = (torch.sqrt(freq / threshold) + 1.0) * threshold / freq  # (V,)
    return keep.clamp(max=1.0).float()


def subsample(
    ids: torch.Tensor, keep: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Drop each occurrence of word ``w`` with probability 1 − keep[w]: [N] -> [N'] (N' ≤ N)."""
    draws = torch.rand(ids.shape, generator=generator)  # (N,)
    return ids[draws < keep[ids]]


def _check_window(window: int) -> None:
    check.integer("window", window)


def _window_sizes(n: int, window: int, generator: torch.Generator | None) -> torch.Tensor:
    if generator is None:
        return torch.full((n,), window, dtype=torch.long)
    # word2vec shrinks the window at random for every centre word, so close
    # neighbours are paired more often than far ones.
    return torch.randint(1, window + 1, (n,), generator=generator)  # (N,)


def skipgram_pairs(
    ids: torch.Tensor, window: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """All (centre, context) pairs of a token stream: two LongTensors [P].

    Each word pairs with the words up to ``window`` places before and after it. With a
    ``generator`` each centre word uses a window drawn uniformly from 1..``window``
    (as word2vec does); without one, every window is full size.
    """
    _check_window(window)
    n = ids.numel()
    reach = _window_sizes(n, window, generator)  # (N,)
    centres, contexts = [], []
    for offset in range(1, window + 1):
        if offset >= n:
            break
        left, right = ids[:-offset], ids[offset:]  # (N-offset,) each
        ok_right = reach[:-offset] >= offset  # (N-offset,) centre on the left, context on the right
        ok_left = reach[offset:] >= offset  # (N-offset,) centre on the right, context on the left
        centres += [left[ok_right], right[ok_left]]
        contexts += [right[ok_right], left[ok_left]]
    if not centres:
        return torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long)
    return torch.cat(centres), torch.cat(contexts)  # (P,), (P,)


def cbow_windows(
    ids: torch.Tensor, window: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every centre word with its context: ``(contexts [N, 2W], mask [N, 2W], centres [N])``.

    ``contexts`` holds the ids of the ``window`` words on each side (0 where there is
    none) and ``mask`` is True where a context slot is real. The window shrinks at
    random per centre word when a ``generator`` is given, as in :func:`skipgram_pairs`.
    """
    _check_window(window)
    n = ids.numel()
    reach = _window_sizes(n, window, generator)  # (N,)
    positions = torch.arange(n)  # (N,)
    offsets = torch.cat([torch.arange(-window, 0), torch.arange(1, window + 1)])  # (2W,)
    where = positions[:, None] + offsets[None, :]  # (N, 2W)
    mask = (where >= 0) & (where < n) & (offsets.abs()[None, :] <= reach[:, None])  # (N, 2W)
    contexts = ids[where.clamp(0, max(n - 1, 0))] * mask  # (N, 2W)
    has_context = mask.any(dim=1)  # (N,)
    return contexts[has_context], mask[has_context], ids[has_context]


def noise_distribution(counts: torch.Tensor, power: float = 0.75) -> torch.Tensor:
    """The distribution negatives are drawn from: counts^power, normalised: [V].

    The power 0.75 of word2vec lifts rare words a little above their share of the corpus.
    """
    weights = counts.double() ** power  # (V,)
    return (weights / weights.sum()).float()


class Word2Vec(nn.Module):
    """The two tables of word2vec and the negative-sampling loss of skip-gram or CBOW.

    ``in_embed`` starts small and random, ``out_embed`` at zero, as in the original code.
    """

    def __init__(
        self,
        vocab_size: int,
        dim: int = 64,
        mode: str = "skipgram",
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        check.choice("mode", mode, MODES)
        for name, value in (("vocab_size", vocab_size), ("dim", dim)):
            check.integer(name, value)
        self.mode = mode
        self.in_embed = nn.Embedding(vocab_size, dim)  # (V, d) vectors v_w
        self.out_embed = nn.Embedding(vocab_size, dim)  # (V, d) vectors u_w
        with torch.no_grad():
            bound = 0.5 / dim
            self.in_embed.weight.copy_(
                (torch.rand(vocab_size, dim, generator=generator) * 2 - 1) * bound
            )
            self.out_embed.weight.zero_()

    def hidden(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The vector h that predicts: v_c for skip-gram ([B] -> [B, d]); the mean of the
        context vectors for CBOW ([B, 2W] with its mask -> [B, d])."""
        if self.mode == "skipgram":
            return self.in_embed(inputs)  # (B,) -> (B, d)
        if mask is None:
            raise ValueError(_("CBOW needs the context mask from cbow_windows"))
        vectors = self.in_embed(inputs) * mask[..., None]  # (B, 2W, d)
        return vectors.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1)  # (B, d)

    def forward(
        self,
        inputs: torch.Tensor,
        targets: torch.Tensor,
        negatives: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Mean negative-sampling loss of a batch.

        Skip-gram: ``inputs`` are centre ids [B], ``targets`` context ids [B].
        CBOW: ``inputs`` are context ids [B, 2W] with ``mask``, ``targets`` centre ids [B].
        ``negatives`` are noise ids [B, K].
        """
        h = self.hidden(inputs, mask)  # (B, d)
        positive = (self.out_embed(targets) * h).sum(-1)  # (B, d) · (B, d) -> (B,)
        noise = self.out_embed(negatives)  # (B, K) -> (B, K, d)
        negative = (noise * h[:, None, :]).sum(-1)  # (B, K, d) · (B, 1, d) -> (B, K)
        return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(-1)).mean()

    @property
    def vectors(self) -> torch.Tensor:
        """The word vectors people keep: a detached copy of ``in_embed``, [V, d]."""
        return self.in_embed.weight.detach().clone()


@dataclass
class Word2VecConfig:
    """How to train word vectors (defaults train on the sales textbook in seconds on a CPU)."""

    mode: str = "skipgram"
    dim: int = 64
    window: int = 5
    negatives: int = 5
    min_count: int = 5
    subsample: float | None = 1e-4  # None keeps every occurrence
    epochs: int = 10
    batch_size: int = 512
    lr: float = 0.01
    seed: int = 0

    def __post_init__(self) -> None:
        check.choice("mode", self.mode, MODES)
        for name in ("dim", "window", "negatives", "min_count", "epochs", "batch_size"):
            check.integer(name, getattr(self, name))
        check.number("lr", self.lr, above=0)
        if self.subsample is not None:
            check.number(
                "subsample", self.subsample, above=0, hint=N_("(or None: keep every word)")
            )


@dataclass
class Word2VecResult:
    """What :func:`train_word2vec` returns: the model, its vocabulary and the loss per epoch."""

    model: Word2Vec
    vocab: Vocabulary
    losses: list[float]  # mean training loss of every epoch

    @property
    def vectors(self) -> torch.Tensor:
        """The trained word vectors [V, d] (``in_embed``)."""
        return self.model.vectors


@contextmanager
def _one_cpu_thread() -> Iterator[None]:
    # The batches are tiny: a second thread only adds synchronisation, and on a busy
    # machine (two notebooks on two cores) it makes every step many times slower.
    # One thread also fixes the order of every sum, so the vectors are bit-identical.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_word2vec(tokens: Sequence[str], config: Word2VecConfig | None = None) -> Word2VecResult:
    """Train skip-gram or CBOW with negative sampling on a list of words, on the CPU.

    Each epoch subsamples frequent words afresh, builds the pairs (or windows), shuffles
    them and takes Adam steps of ``batch_size``. Seeded by ``config.seed``: the same
    words and config give the same vectors. Runs on one CPU thread (restored afterwards).
    """
    config = config or Word2VecConfig()
    with _one_cpu_thread():
        return _train(tokens, config)


def _train(tokens: Sequence[str], config: Word2VecConfig) -> Word2VecResult:
    vocab = build_vocabulary(tokens, config.min_count)
    ids = vocab.encode(tokens)  # (N,)
    generator = torch.Generator().manual_seed(config.seed)
    model = Word2Vec(len(vocab), config.dim, config.mode, generator=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    keep = keep_probabilities(vocab.counts, config.subsample) if config.subsample else None  # (V,)
    noise = noise_distribution(vocab.counts)  # (V,)
    losses: list[float] = []
    for _epoch in range(config.epochs):
        stream = subsample(ids, keep, generator) if keep is not None else ids  # (N',)
        if config.mode == "skipgram":
            inputs, targets = skipgram_pairs(stream, config.window, generator)  # (P,), (P,)
            mask = None
        else:
            # (P, 2W) context ids, (P, 2W) mask, (P,) centre ids
            inputs, mask, targets = cbow_windows(stream, config.window, generator)
        order = torch.randperm(targets.numel(), generator=generator)  # (P,)
        total, steps = 0.0, 0
        for start in range(0, order.numel(), config.batch_size):
            batch = order[start : start + config.batch_size]  # (B,)
            # (B, K)
            negatives = torch.multinomial(
                noise, batch.numel() * config.negatives, replacement=True, generator=generator
            ).view(batch.numel(), config.negatives)
            loss = model(
                inputs[batch], targets[batch], negatives, None if mask is None else mask[batch]
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
            steps += 1
        losses.append(total / max(steps, 1))
    return Word2VecResult(model=model, vocab=vocab, losses=losses)


def cosine_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every pair of rows: [V, d] -> [V, V]."""
    unit = F.normalize(vectors, dim=-1)  # (V, d)
    return unit @ unit.T  # (V, d) @ (d, V) -> (V, V)


def nearest(
    vectors: torch.Tensor, vocab: Vocabulary, word: str, k: int = 5
) -> list[tuple[str, float]]:
    """The ``k`` words whose vectors (``vectors`` [V, E]) point most nearly the same way as
    ``word``'s (cosine similarity), best first, as ``(word, similarity)`` pairs."""
    check.integer("k", k, 1, len(vocab) - 1)
    query = F.normalize(vectors[vocab.id(word)], dim=-1)  # (d,)
    sims = F.normalize(vectors, dim=-1) @ query  # (V, d) @ (d,) -> (V,)
    sims[vocab.id(word)] = -math.inf  # a word is always its own nearest neighbour
    best = torch.topk(sims, k)
    return [(vocab.words[i], float(s)) for s, i in zip(best.values.tolist(), best.indices.tolist())]


def pca_2d(vectors: torch.Tensor) -> torch.Tensor:
    """Project rows onto their two main directions (PCA by SVD): [N, d] -> [N, 2].

    The SVD fixes each direction only up to its sign; the sign is chosen so the
    largest coordinate along it is positive, so the picture is the same on every run.
    """
    if vectors.dim() != 2 or vectors.shape[0] < 2 or vectors.shape[1] < 2:
        raise ValueError(
            _("vectors must be [N, d] with N, d >= 2, got shape {shape}").format(
                shape=tuple(vectors.shape)
            )
        )
    centred = vectors.double() - vectors.double().mean(dim=0)  # (N, d)
    _u, _s, vh = torch.linalg.svd(centred, full_matrices=False)  # (d, d)
    coords = centred @ vh[:2].T  # (N, d) @ (d, 2) -> (N, 2)
    flip = torch.sign(coords.gather(0, coords.abs().argmax(dim=0, keepdim=True)))  # (1, 2)
    return (coords * flip).float()
