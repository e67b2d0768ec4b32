"""Where the course corpus comes from, and the checks that it is the right text (01_tokenization).

The course trains on the *sales textbook* of seed 000, a Hugging Face dataset. ``corpus_path``
finds the file in this order:

1. the file named by ``$TRANSFORMER_COURSE_CORPUS``;
2. the course's data folder, :func:`~transformer_course.machine.data_dir` (``data/`` of a
   cloned course, else ``~/.cache/transformer_course``; ``$TRANSFORMER_COURSE_DATA`` overrides);
3. the Hugging Face Hub: ``datasets.load_dataset`` on :data:`CORPUS_DATASET` (cached by
   ``datasets``), written into that folder, so the next run needs no network.

Every copy must match the corpus's SHA-256 (:class:`CorpusMismatchError` names the file, both
hashes and what to do); the Hub's text is checked before it is written, and it is written to a
temporary file first, so a partial or corrupt file never stays. :func:`datasets_output` switches
``datasets``' progress bars and log lines off where notebooks are compared with their stored
outputs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from pathlib import Path

from ..i18n import _
from ..machine import data_dir

CORPUS_ENV_VAR = "TRANSFORMER_COURSE_CORPUS"
CORPUS_FILENAME = "sales_textbook.txt"
CORPUS_SHA256 = "1994f20f5becd3f0b3d7a632e5a68513cc38cf6c9737a9f38243f1b652e962da"
CORPUS_BYTES = 460_319
CORPUS_DATASET = "goendalf666/sales-textbook_for_convincing_and_selling"
CORPUS_URL = f"https://huggingface.co/datasets/{CORPUS_DATASET}/resolve/main/{CORPUS_FILENAME}"


class CorpusMismatchError(ValueError):
    """A file offered as the course corpus is not it: its SHA-256 differs (01_tokenization)."""


def sha256_of(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def datasets_output(progress: bool | None = None):
    """Inside the ``with``, ``datasets`` shows its progress bars and log lines when ``progress``
    is True and stays silent when False; afterwards its settings are as before (01_tokenization).

    ``None`` follows ``datasets``' own setting (``HF_DATASETS_DISABLE_PROGRESS_BARS``, which
    ``notebook.setup_notebook`` sets), and is silent under pytest, where nbval compares every
    notebook's output with the stored one.
    """
    from datasets.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )
    from datasets.utils import logging as hf_logging

    was_disabled, verbosity = are_progress_bars_disabled(), hf_logging.get_verbosity()
    if progress is None:
        progress = not was_disabled and "PYTEST_CURRENT_TEST" not in os.environ
    if progress:
        enable_progress_bars()
    else:
        disable_progress_bars()
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        (disable_progress_bars if was_disabled else enable_progress_bars)()
        hf_logging.set_verbosity(verbosity)


def _offline_help(target: Path, reason: str = "") -> str:
    because = f": {reason}" if reason else ""
    return (
        f"Could not download the course corpus (the Hugging Face dataset {CORPUS_DATASET})"
        f"{because}. Run the cell again later; if this machine is offline or the download keeps "
        f"failing, put the file {CORPUS_FILENAME} (SHA-256 {CORPUS_SHA256}) at {target}, or set "
        f"${CORPUS_ENV_VAR} to its path, then run the cell again."
    )


def _failure_reason(exc: BaseException) -> str:
    """What ``datasets`` said about a failed download, on one short line (``404 Client Error.
    Entry Not Found for url: …``, ``peer closed connection without sending complete …``). Its
    own message, not the innermost cause's, which is the HTTP library's, with links to MDN."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 240 else text[:237] + "..."


def _endpoint_without_trailing_slash() -> None:
    """Strip a trailing ``/`` from ``HF_ENDPOINT`` (a mirror is often written so): ``datasets``
    joins it with ``/datasets/…`` as it is, and the ``//`` path that makes is a 404
    (``huggingface_hub`` strips it itself). Done in the environment before ``datasets`` reads it,
    and in ``datasets.config`` when it has already read it."""
    endpoint = os.environ.get("HF_ENDPOINT", "")
    if endpoint.endswith("/"):
        os.environ["HF_ENDPOINT"] = endpoint.rstrip("/")
    config = sys.modules.get("datasets.config")
    if config is not None and config.HF_ENDPOINT.endswith("/"):
        config.HF_ENDPOINT = config.HF_ENDPOINT.rstrip("/")
        config.HUB_DATASETS_URL = (
            config.HF_ENDPOINT + "/datasets/{repo_id}/resolve/{revision}/{path}"
        )


def hub_text(progress: bool | None = None, fresh: bool = False) -> str:
    """The corpus as ``datasets.load_dataset`` gives it from the Hub: one document, line breaks
    kept (``sample_by="document"``), cached under ``~/.cache/huggingface``; ``fresh=True``
    downloads again instead of reusing that cache. ``HF_ENDPOINT`` may end with ``/``."""
    _endpoint_without_trailing_slash()
    from datasets import load_dataset

    with datasets_output(progress):
        past_the_cache = {"download_mode": "force_redownload"} if fresh else {}
        dataset = load_dataset(
            CORPUS_DATASET,
            data_files=CORPUS_FILENAME,
            sample_by="document",
            split="train",
            **past_the_cache,
        )
    return dataset[0]["text"]


def download_corpus(target: Path | None = None, progress: bool | None = None) -> Path:
    """Fetch the corpus from the Hub (:func:`hub_text`), check its SHA-256, write it to ``target``.

    The bytes go to a temporary file in the same folder, which is renamed into place only after
    the hash matches; on any failure it is removed. A file whose hash differs is fetched once more,
    past ``datasets``' cache, then refused with ``ValueError``. No network, or a server that fails
    (404, a connection cut short), raises ``ConnectionError`` with what went wrong and where to
    put the file by hand.
    """
    target = Path(target) if target is not None else data_dir() / CORPUS_FILENAME
    # A server that sent a short or wrong file leaves it in datasets' cache, where every later
    # run would find it again: after a mismatch, download once more past that cache.
    for fresh in (False, True):
        try:
            payload = hub_text(progress, fresh=fresh).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - datasets and huggingface_hub fail in many ways
            raise ConnectionError(_offline_help(target, _failure_reason(exc))) from exc
        actual = hashlib.sha256(payload).hexdigest()
        if actual == CORPUS_SHA256:
            break
    else:
        raise ValueError(
            _(
                "the downloaded {CORPUS_FILENAME} has SHA-256 {actual} ({n_payload:,} bytes), "
                "expected {CORPUS_SHA256} ({CORPUS_BYTES:,} bytes), twice (the second time past "
                "the cache); the download was discarded and nothing was written to {parent}. Run "
                "again later, or fetch the file by hand and put it there."
            ).format(
                CORPUS_FILENAME=CORPUS_FILENAME,
                actual=actual,
                n_payload=len(payload),
                CORPUS_SHA256=CORPUS_SHA256,
                CORPUS_BYTES=CORPUS_BYTES,
                parent=target.parent,
            )
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".download-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.remove(tmp_name)
    return target


def _mismatch(path: Path, actual: str, what_to_do: str) -> CorpusMismatchError:
    size = path.stat().st_size
    return CorpusMismatchError(
        _(
            "{path} is not the course corpus: its SHA-256 is {actual} ({size:,} bytes), expected "
            "{expected} ({expected_size:,} bytes) — damaged, cut short or another text. {what_to_do}"
        ).format(
            path=path,
            actual=actual,
            size=size,
            expected=CORPUS_SHA256,
            expected_size=CORPUS_BYTES,
            what_to_do=what_to_do,
        )
    )


def _from_environment(override: str) -> Path:
    path = Path(override).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            _(
                "${CORPUS_ENV_VAR} points at {path}, which is not a file; fix the variable or "
                "unset it to use {default}"
            ).format(CORPUS_ENV_VAR=CORPUS_ENV_VAR, path=path, default=data_dir() / CORPUS_FILENAME)
        )
    actual = sha256_of(path)
    if actual != CORPUS_SHA256:
        raise _mismatch(
            path,
            actual,
            _(
                "${variable} must name the course's {filename}: replace the file, or "
                "unset the variable. To train on a text of your own, pass it as "
                "load_text(path) (or --text on the command line)."
            ).format(variable=CORPUS_ENV_VAR, filename=CORPUS_FILENAME),
        )
    return path


def corpus_path(download: bool = True, progress: bool | None = None) -> Path:
    """Where the sales textbook is: the environment variable, the data folder, or a fresh download.

    A file whose SHA-256 is not the corpus's raises :class:`CorpusMismatchError`; a damaged cached
    copy is replaced by a download when ``download`` is True and the download works.
    """
    override = os.environ.get(CORPUS_ENV_VAR)
    if override:
        return _from_environment(override)
    cached = data_dir() / CORPUS_FILENAME
    if not cached.is_file():
        if not download:
            raise FileNotFoundError(_offline_help(cached))
        return download_corpus(cached, progress)
    actual = sha256_of(cached)
    if actual == CORPUS_SHA256:
        return cached
    if not download:
        raise _mismatch(
            cached, actual, _("Delete it (the next load_text() downloads it again) or replace it.")
        )
    try:
        return download_corpus(cached, progress)
    except ConnectionError as exc:
        raise _mismatch(
            cached,
            actual,
            _(
                "A fresh copy could not be downloaded (offline?): replace the file with the "
                "course's {filename}, or delete it and run again online."
            ).format(filename=CORPUS_FILENAME),
        ) from exc
