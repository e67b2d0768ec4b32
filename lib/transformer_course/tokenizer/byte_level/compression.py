"""How much text a token carries: bytes per token, on English and on Chinese
(introduced in 01b_byte_level_bpe).

The Chinese text is ``zh_sample.txt``, shipped with the package: the prose lines of the Chinese
edition's notebooks 01–03 (links, code and formulas taken out), a fixed snapshot.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd

from ...i18n import _


def chinese_sample() -> str:
    """About 13,000 characters of the course's own Chinese prose (UTF-8: mostly 3 bytes each)."""
    return resources.files(__package__).joinpath("zh_sample.txt").read_text(encoding="utf-8")


def bytes_per_token(tokenizer: Any, text: str) -> float:
    """UTF-8 bytes of ``text`` divided by its number of tokens (higher: more text per token).

    ``tokenizer`` is anything with ``encode(text) -> ids`` (a :class:`~.Tokenizer`, or tiktoken's
    encoding).
    """
    n_tokens = len(tokenizer.encode(text))
    if n_tokens == 0:
        raise ValueError(_("text is empty: it has no tokens to divide by"))
    return len(text.encode("utf-8")) / n_tokens


def plot_bytes_per_token(table: pd.DataFrame, ax: Any = None) -> Any:
    """Grouped bars of ``table`` (index: tokenizers; columns: texts; values: bytes per token),
    labelled in the learner's language. Returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _figure, ax = plt.subplots(figsize=(7, 3.5))
    table.plot.bar(ax=ax, rot=0)
    ax.set_ylabel(_("UTF-8 bytes per token"))
    ax.set_xlabel(_("tokenizer"))
    ax.set_title(_("More bytes per token: fewer tokens for the same text"))
    for container in ax.containers:
        ax.bar_label(container, fmt="%.2f", fontsize=8)
    return ax
