"""The corpus, its token ids and batches of them (introduced in 01_tokenization and 02_embeddings).

``load_text()`` returns the sales textbook, byte for byte, read through Hugging Face ``datasets``
(:func:`corpus_dataset`: ``load_dataset("text", sample_by="document")`` on the local copy that
:mod:`.source` finds or downloads from the Hub, cached). :func:`tokenize` adds the token
ids with ``Dataset.map(batched=True)``, cached too, which is what a learner would do with any
Hugging Face text dataset. :func:`load_corpus` is the whole pipeline of 11–13 and the command
line in one call: text, token ids, the compact vocabulary, the 90/10 split.

A text of your own is passed as ``path`` and is not checked against the corpus's SHA-256.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .. import _checks as check
from .. import tokenizer
from ..i18n import _
from ..machine import DATA_DIR_ENV_VAR, data_dir
from ..vocabulary import CompactVocabulary
from .source import (
    CORPUS_BYTES,
    CORPUS_DATASET,
    CORPUS_ENV_VAR,
    CORPUS_FILENAME,
    CORPUS_SHA256,
    CORPUS_URL,
    CorpusMismatchError,
    corpus_path,
    datasets_output,
    download_corpus,
    sha256_of,
)

__all__ = [
    "CORPUS_BYTES", "CORPUS_DATASET", "CORPUS_ENV_VAR", "CORPUS_FILENAME", "CORPUS_SHA256",
    "CORPUS_URL", "DATA_DIR_ENV_VAR", "Codec", "Corpus", "CorpusMismatchError",
    "as_ids", "corpus_dataset", "corpus_path", "corpus_token_ids", "data_dir",
    "datasets_output", "download_corpus", "get_batch", "load_corpus", "load_text", "sha256_of",
    "tokenize", "train_val_split",
]  # fmt: skip


def corpus_dataset(path: str | os.PathLike | None = None, progress: bool | None = None):
    """The sales textbook (or the UTF-8 file at ``path``) as a Hugging Face ``Dataset`` of one
    row whose column ``"text"`` is the whole file, line breaks kept (01_tokenization).

    ``datasets.load_dataset("text", data_files=..., sample_by="document")`` reads it and caches
    it as Arrow under ``~/.cache/huggingface``; the corpus file comes from :func:`corpus_path`
    (environment variable, data folder, or the Hub). ``progress`` as in :func:`datasets_output`.
    """
    from datasets import load_dataset

    source = Path(path).expanduser() if path is not None else corpus_path(progress=progress)
    with datasets_output(progress):
        return load_dataset("text", data_files=str(source), sample_by="document", split="train")


def _checked_corpus_text(dataset) -> str:
    """The textbook's text from :func:`corpus_dataset`'s one row, checked against its SHA-256.

    :func:`corpus_path` has hashed the file already; this hash is of what the Arrow cache gave
    back (``datasets`` keys that cache on the file's path and mtime, not its content).
    """
    text = dataset[0]["text"]
    actual = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if actual != CORPUS_SHA256:
        raise CorpusMismatchError(
            _(
                "the corpus read through datasets has SHA-256 {actual}, expected {CORPUS_SHA256}; "
                "clear ~/.cache/huggingface/datasets and run again"
            ).format(actual=actual, CORPUS_SHA256=CORPUS_SHA256)
        )
    return text


def load_text(path: str | os.PathLike | None = None) -> str:
    """Return a UTF-8 text: the sales textbook by default, or the file at ``path``.

    The textbook is read through :func:`corpus_dataset` and checked against its SHA-256. Raises
    ``FileNotFoundError`` for a missing file, ``ValueError`` for an empty or non-UTF-8 one, and
    ``ConnectionError`` with instructions when the corpus has to be downloaded and cannot be.
    """
    if path is None:
        return _checked_corpus_text(corpus_dataset())
    source = Path(path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(_("no text file at {source}; check the path").format(source=source))
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            _("{source} is not UTF-8 text ({reason} at byte {start})").format(
                source=source, reason=exc.reason, start=exc.start
            )
        ) from exc
    if not text:
        raise ValueError(
            _("{source} is empty; the course needs some text to tokenize").format(source=source)
        )
    return text


def _encode_batch(batch: dict[str, list[str]], encoding_name: str) -> dict[str, list[list[int]]]:
    # "<|endoftext|>" in a text is ordinary text here, as in the command line and the widgets.
    encoding = tokenizer.get_encoding(encoding_name)
    return {"ids": [encoding.encode_ordinary(text) for text in batch["text"]]}


def tokenize(dataset, encoding_name: str = "cl100k_base", progress: bool | None = None):
    """``dataset`` with a column ``"ids"``: each row's ``"text"`` as tiktoken ids (01_tokenization).

    ``Dataset.map(batched=True)`` runs the tokenizer over batches of rows and caches the result
    beside the dataset's own cache, so the second call reads it back instead of tokenizing.
    """
    with datasets_output(progress):
        return dataset.map(_encode_batch, batched=True, fn_kwargs={"encoding_name": encoding_name})


def corpus_token_ids(text: str | None = None, encoding_name: str = "cl100k_base") -> torch.Tensor:
    """Every token id of the corpus (or of ``text``) under ``encoding_name``, as a LongTensor [N].

    The corpus goes through :func:`corpus_dataset` and :func:`tokenize` (cached); a ``text`` of
    your own is encoded directly. Introduced in 02_embeddings.
    """
    if text is not None:
        return torch.tensor(tokenizer.get_encoding(encoding_name).encode(text), dtype=torch.long)
    return _dataset_token_ids(corpus_dataset(), encoding_name)


def _dataset_token_ids(dataset, encoding_name: str) -> torch.Tensor:
    """The token ids [N] of ``dataset``'s one row, through :func:`tokenize` (cached)."""
    tokens = tokenize(dataset, encoding_name).with_format("torch", columns=["ids"])
    return tokens[0]["ids"].long()  # (N,)


@dataclass
class Codec:
    """Text <-> model ids: tiktoken's encoding, then the compact vocabulary if the model has one
    (11_training; ``vocab=None`` means the model's ids are the encoding's own)."""

    encoding: Any  # tiktoken.Encoding
    vocab: CompactVocabulary | None = None

    def encode(self, text: str, what: str = "the text") -> torch.Tensor:
        """The model ids of ``text`` [T]; a ValueError names the tokens a compact vocabulary lacks
        (calling the text ``what``, e.g. "the prompt")."""
        ids = torch.tensor(self.encoding.encode_ordinary(text), dtype=torch.long)  # (T,)
        if self.vocab is None or ids.numel() == 0:
            return ids
        unknown = ids[~self.vocab.contains(ids)]
        if unknown.numel():
            pieces = ", ".join(repr(self.encoding.decode([int(i)])) for i in unknown[:8])
            raise ValueError(
                _(
                    "{what} has tokens the model's compact vocabulary does not know: {pieces}; "
                    "rephrase it with words from the training text"
                ).format(what=what, pieces=pieces)
            )
        return self.vocab.encode(ids)

    def original_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """Model ids [T] -> the encoding's ids [T]."""
        return ids.cpu() if self.vocab is None else self.vocab.decode(ids.cpu())

    def decode(self, ids: torch.Tensor) -> str:
        """Model ids [T] -> text."""
        return self.encoding.decode(self.original_ids(ids).tolist())

    def meta(self) -> dict[str, Any]:
        """What a checkpoint stores to rebuild this codec (:meth:`from_meta`)."""
        return {
            "vocabulary": self.vocab.to_list() if self.vocab else None,
            "encoding": self.encoding.name,
        }

    @classmethod
    def from_meta(cls, saved: dict[str, Any]) -> Codec:
        """The codec a checkpoint's metadata describes (written by :meth:`meta`)."""
        vocab = saved.get("vocabulary")
        return cls(
            tokenizer.get_encoding(saved.get("encoding", "cl100k_base")),
            CompactVocabulary(torch.tensor(vocab)) if vocab else None,
        )


@dataclass
class Corpus:
    """A text ready for training (introduced in 11_training): its model ids, the 90/10 split
    and the codec between text and ids."""

    text: str
    codec: Codec
    ids: torch.Tensor  # (N,) model ids: compact, or the encoding's own
    train_ids: torch.Tensor  # (N_train,) the first 90 %
    val_ids: torch.Tensor  # (N_val,) the rest

    @property
    def vocab_size(self) -> int:
        """Rows of the model's embedding table: the compact size, or the largest id + 1."""
        vocab = self.codec.vocab
        return vocab.size if vocab is not None else int(self.ids.max()) + 1


def load_corpus(
    path: str | os.PathLike | None = None,
    vocab: str = "compact",
    train_fraction: float = 0.9,
    encoding_name: str = "cl100k_base",
) -> Corpus:
    """The sales textbook (or the text at ``path``) tokenized, in model ids, and split.

    ``vocab="compact"`` renumbers the ids the text uses as 0..V−1 (3,771 for the textbook);
    ``"full"`` keeps the encoding's ids. Introduced in 11_training; the command line uses it.
    """
    if vocab not in ("compact", "full"):
        raise ValueError(_("vocab must be 'compact' or 'full', got {vocab!r}").format(vocab=vocab))
    # The textbook: one read through datasets serves the text and the ids (both cached).
    dataset = corpus_dataset() if path is None else None
    text = load_text(path) if dataset is None else _checked_corpus_text(dataset)
    encoding = tokenizer.get_encoding(encoding_name)
    if dataset is not None:
        original = _dataset_token_ids(dataset, encoding_name)  # (N,)
    else:
        original = torch.tensor(encoding.encode_ordinary(text), dtype=torch.long)  # (N,)
    codec = Codec(encoding, CompactVocabulary.from_ids(original) if vocab == "compact" else None)
    ids = codec.vocab.encode(original) if codec.vocab is not None else original  # (N,)
    train_ids, val_ids = train_val_split(ids, train_fraction)
    return Corpus(text, codec, ids, train_ids, val_ids)


def as_ids(ids: Sequence[int] | torch.Tensor, name: str = "ids") -> torch.Tensor:
    """``ids`` (a list or a tensor) as a LongTensor [N]; a ValueError naming ``name`` unless 1-D
    (used by ``get_batch``, ``train`` and ``evaluate``; 02_embeddings, 11_training)."""
    tensor = ids if isinstance(ids, torch.Tensor) else torch.as_tensor(list(ids), dtype=torch.long)
    if tensor.dim() != 1:
        raise ValueError(
            _("{name} must be a 1-D stream of token ids, got shape {tensor_shape}").format(
                name=name, tensor_shape=tuple(tensor.shape)
            )
        )
    if tensor.dtype != torch.long:
        tensor = tensor.long()
    return tensor


def train_val_split(
    ids: Sequence[int] | torch.Tensor, train_fraction: float = 0.9
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split a token stream ``ids`` [N] into its first ``train_fraction`` and the rest,
    ``([N_train], [N_val])`` (no shuffling: the validation text is text the model never
    saw, not a sample of the same pages)."""
    check.number("train_fraction", train_fraction, above=0, below=1)
    tensor = as_ids(ids)
    if tensor.numel() < 2:
        raise ValueError(
            _("need at least 2 token ids to split, got {n_ids}").format(n_ids=tensor.numel())
        )
    cut = min(max(int(tensor.numel() * train_fraction), 1), tensor.numel() - 1)
    return tensor[:cut], tensor[cut:]


def get_batch(
    ids: Sequence[int] | torch.Tensor,
    batch_size: int,
    context_length: int,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample ``batch_size`` windows of ``context_length`` tokens at random offsets.

    Returns ``(x, y)``, LongTensors of shape ``[B, T]``, with ``y`` the next
    token for every position of ``x`` (``x`` shifted left by one). Pass a seeded
    ``torch.Generator`` for reproducible batches.
    """
    check.integer("batch_size", batch_size, minimum=1)
    check.integer("context_length", context_length, minimum=1)
    tensor = as_ids(ids)
    if tensor.numel() < context_length + 1:
        raise ValueError(
            _(
                "context_length={context_length} needs at least {needed} token ids (inputs plus "
                "one target), but the data has {n_ids}; use a shorter context"
            ).format(context_length=context_length, needed=context_length + 1, n_ids=tensor.numel())
        )
    # (B,)
    starts = torch.randint(tensor.numel() - context_length, (batch_size,), generator=generator)
    offsets = torch.arange(context_length)  # (T,)
    index = starts[:, None] + offsets[None, :]  # (B, T)
    x, y = tensor[index], tensor[index + 1]  # (B, T), (B, T)
    if device is not None:
        x, y = x.to(device), y.to(device)
    return x, y
