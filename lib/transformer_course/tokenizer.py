"""Tokenizers: tiktoken's cl100k_base and a byte-pair encoder built from scratch
(introduced in 01_tokenization).

``get_encoding`` is tiktoken's own ``get_encoding``; it reads the BPE ranks from
``$TIKTOKEN_CACHE_DIR`` when set (the course's ``data/tiktoken_cache`` when not),
and downloads them once when online.
"""

from __future__ import annotations

import os

import tiktoken

TIKTOKEN_ENV_VAR = "TIKTOKEN_CACHE_DIR"


def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """Return the tiktoken encoding ``name`` (``cl100k_base`` is the one of seed 000).

    Offline with no cached copy, raises ``RuntimeError`` naming ``TIKTOKEN_CACHE_DIR``.
    """
    if name not in tiktoken.list_encoding_names():
        raise ValueError(f"unknown encoding {name!r}; choose one of {tiktoken.list_encoding_names()}")
    if not os.environ.get(TIKTOKEN_ENV_VAR):
        from .data import data_dir

        # Keep tiktoken's download with the course data instead of a temp folder.
        os.environ[TIKTOKEN_ENV_VAR] = str(data_dir() / "tiktoken_cache")
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # requests/urllib errors differ by version; all mean "not available"
        raise RuntimeError(
            f"could not load the tiktoken encoding {name!r}: no cached copy in "
            f"{os.environ[TIKTOKEN_ENV_VAR]} and the download failed ({type(exc).__name__}). "
            f"Offline, copy a tiktoken cache folder there or set {TIKTOKEN_ENV_VAR} to one, "
            "then run again."
        ) from exc
