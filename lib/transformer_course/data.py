"""The corpus and batches of token ids (introduced in 01_tokenization and 02_embeddings).

The course trains on the *sales textbook* of seed 000. ``load_text`` finds it
in this order:

1. an explicit ``path`` argument;
2. the file named by ``$TRANSFORMER_COURSE_CORPUS``;
3. the course's data folder (``data/`` of a cloned course, else
   ``~/.cache/transformer_course``; ``$TRANSFORMER_COURSE_DATA`` overrides);
4. a download from the Hugging Face dataset below, into that folder.

A downloaded or cached corpus, and the file named by the environment variable,
must match its SHA-256 (:class:`CorpusMismatchError` names the file, both hashes
and what to do); a download is written to a temporary file first, so a partial or
corrupt file never stays. A text of your own is passed as ``path`` and is not
checked.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import torch

CORPUS_ENV_VAR = "TRANSFORMER_COURSE_CORPUS"
DATA_DIR_ENV_VAR = "TRANSFORMER_COURSE_DATA"
CORPUS_FILENAME = "sales_textbook.txt"
CORPUS_SHA256 = "1994f20f5becd3f0b3d7a632e5a68513cc38cf6c9737a9f38243f1b652e962da"
CORPUS_BYTES = 460_319
CORPUS_DATASET = "goendalf666/sales-textbook_for_convincing_and_selling"
CORPUS_URL = f"https://huggingface.co/datasets/{CORPUS_DATASET}/resolve/main/{CORPUS_FILENAME}"


class CorpusMismatchError(ValueError):
    """A file offered as the course corpus is not it: its SHA-256 differs (01_tokenization)."""


def data_dir() -> Path:
    """The folder where the course keeps downloaded data (see the module docstring)."""
    override = os.environ.get(DATA_DIR_ENV_VAR)
    if override:
        folder = Path(override).expanduser()
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(
                f"${DATA_DIR_ENV_VAR} is {folder}, which is a file, not a folder; point it at a "
                "folder for the course's data, or unset it"
            )
        return folder
    project_data = Path(__file__).resolve().parents[2] / "data"
    if (project_data / "README.md").is_file():  # a clone of the course
        return project_data
    return Path.home() / ".cache" / "transformer_course"


def sha256_of(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _offline_help(target: Path) -> str:
    return (
        f"Could not download the course corpus from {CORPUS_URL}. If this machine is offline, "
        f"put the file {CORPUS_FILENAME} (SHA-256 {CORPUS_SHA256}) at {target}, "
        f"or set ${CORPUS_ENV_VAR} to its path, then run the cell again."
    )


def download_corpus(target: Path | None = None, url: str = CORPUS_URL) -> Path:
    """Download the corpus to ``target`` with a progress bar, check its hash, return the path.

    The bytes go to a temporary file in the same folder, which is renamed into
    place only after the hash matches; on any failure it is removed.
    """
    from .progress import progress_bar

    target = Path(target) if target is not None else data_dir() / CORPUS_FILENAME
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".download-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(url, timeout=30)
            except (urllib.error.URLError, OSError) as exc:
                raise ConnectionError(_offline_help(target)) from exc
            with response:
                total = int(response.headers.get("Content-Length") or 0) or None
                with progress_bar(total=total, unit="B", unit_scale=True, desc=CORPUS_FILENAME) as bar:
                    for chunk in iter(lambda: response.read(1 << 16), b""):
                        out.write(chunk)
                        bar.update(len(chunk))
        actual = sha256_of(tmp_name)
        if actual != CORPUS_SHA256:
            raise ValueError(
                f"the downloaded {CORPUS_FILENAME} has SHA-256 {actual}, expected {CORPUS_SHA256}; "
                "the download was discarded — run again, or fetch the file by hand"
            )
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.remove(tmp_name)
    return target


def _mismatch(path: Path, actual: str, what_to_do: str) -> CorpusMismatchError:
    size = path.stat().st_size
    return CorpusMismatchError(
        f"{path} is not the course corpus: its SHA-256 is {actual} ({size:,} bytes), expected "
        f"{CORPUS_SHA256} ({CORPUS_BYTES:,} bytes) — damaged, cut short or another text. {what_to_do}"
    )


def corpus_path(download: bool = True) -> Path:
    """Where the sales textbook is: the environment variable, the data folder, or a fresh download.

    A file whose SHA-256 is not the corpus's raises :class:`CorpusMismatchError`; a damaged cached
    copy is replaced by a download when ``download`` is True and the download works.
    """
    override = os.environ.get(CORPUS_ENV_VAR)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise FileNotFoundError(
                f"${CORPUS_ENV_VAR} points at {path}, which is not a file; "
                f"fix the variable or unset it to use {data_dir() / CORPUS_FILENAME}"
            )
        actual = sha256_of(path)
        if actual != CORPUS_SHA256:
            raise _mismatch(
                path,
                actual,
                f"${CORPUS_ENV_VAR} must name the course's {CORPUS_FILENAME}: replace the file, or "
                "unset the variable. To train on a text of your own, pass it as "
                "load_text(path) (or --text on the command line).",
            )
        return path
    cached = data_dir() / CORPUS_FILENAME
    if cached.is_file():
        actual = sha256_of(cached)
        if actual == CORPUS_SHA256:
            return cached
        if not download:
            raise _mismatch(
                cached, actual, "Delete it (the next load_text() downloads it again) or replace it."
            )
        try:
            return download_corpus(cached)
        except ConnectionError as exc:
            raise _mismatch(
                cached,
                actual,
                "A fresh copy could not be downloaded (offline?): replace the file with the "
                f"course's {CORPUS_FILENAME}, or delete it and run again online.",
            ) from exc
    if not download:
        raise FileNotFoundError(_offline_help(cached))
    return download_corpus(cached)


def load_text(path: str | os.PathLike | None = None) -> str:
    """Return a UTF-8 text: the sales textbook by default, or the file at ``path``.

    Raises ``FileNotFoundError`` for a missing file, ``ValueError`` for an empty
    or non-UTF-8 one, and ``ConnectionError`` with instructions when the corpus
    has to be downloaded and cannot be.
    """
    source = Path(path).expanduser() if path is not None else corpus_path()
    if not source.is_file():
        raise FileNotFoundError(f"no text file at {source}; check the path")
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not text:
        raise ValueError(f"{source} is empty; the course needs some text to tokenize")
    return text


def as_ids(ids: Sequence[int] | torch.Tensor, name: str = "ids") -> torch.Tensor:
    """``ids`` (a list or a tensor) as a LongTensor [N]; a ValueError naming ``name`` unless 1-D."""
    tensor = ids if isinstance(ids, torch.Tensor) else torch.as_tensor(list(ids), dtype=torch.long)
    if tensor.dim() != 1:
        raise ValueError(f"{name} must be a 1-D stream of token ids, got shape {tuple(tensor.shape)}")
    if tensor.dtype != torch.long:
        tensor = tensor.long()
    return tensor


def train_val_split(
    ids: Sequence[int] | torch.Tensor, train_fraction: float = 0.9
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split a token stream ``ids`` [N] into its first ``train_fraction`` and the rest,
    ``([N_train], [N_val])`` (no shuffling: the validation text is text the model never
    saw, not a sample of the same pages)."""
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must be strictly between 0 and 1, got {train_fraction}")
    tensor = as_ids(ids)
    if tensor.numel() < 2:
        raise ValueError(f"need at least 2 token ids to split, got {tensor.numel()}")
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
    for name, value in (("batch_size", batch_size), ("context_length", context_length)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    tensor = as_ids(ids)
    if tensor.numel() < context_length + 1:
        raise ValueError(
            f"context_length={context_length} needs at least {context_length + 1} token ids "
            f"(inputs plus one target), but the data has {tensor.numel()}; use a shorter context"
        )
    starts = torch.randint(tensor.numel() - context_length, (batch_size,), generator=generator)  # (B,)
    offsets = torch.arange(context_length)  # (T,)
    index = starts[:, None] + offsets[None, :]  # (B, T)
    x, y = tensor[index], tensor[index + 1]  # (B, T), (B, T)
    if device is not None:
        x, y = x.to(device), y.to(device)
    return x, y
