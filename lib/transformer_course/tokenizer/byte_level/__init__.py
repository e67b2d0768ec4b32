"""Byte-level BPE from scratch: training (naive and incremental), a ``Tokenizer`` class, and
GPT-4's cl100k_base rebuilt from tiktoken's ranks, id for id (introduced in 01b_byte_level_bpe).

- :mod:`.training`: the pre-tokenizer (``CL100K_PATTERN``), ``merge_ids``,
  ``most_frequent_pair`` (ties: the lexicographically greater pair), ``train_naive``,
  ``train_incremental``.
- :mod:`.tokenizer`: ``Tokenizer`` (``encode``, ``decode``, ``encode_iterable``),
  ``recover_merges``, ``cl100k_base()``.
- :mod:`.compression`: bytes per token on the book and on Chinese text, and its plot.

The notebook imports it as ``from transformer_course.tokenizer import byte_level as bpe``.
"""

from .compression import bytes_per_token, chinese_sample, plot_bytes_per_token
from .tokenizer import (
    Tokenizer,
    cl100k_base,
    encode_chunk,
    from_ranks,
    recover_merges,
    trained_tokenizer,
)
from .training import (
    CL100K_PATTERN,
    base_vocab,
    merge_ids,
    most_frequent_pair,
    pretoken_counts,
    pretokenize,
    train_incremental,
    train_naive,
    vocab_from_merges,
)

__all__ = [
    "CL100K_PATTERN",
    "Tokenizer",
    "base_vocab",
    "bytes_per_token",
    "chinese_sample",
    "cl100k_base",
    "encode_chunk",
    "from_ranks",
    "merge_ids",
    "most_frequent_pair",
    "plot_bytes_per_token",
    "pretoken_counts",
    "pretokenize",
    "recover_merges",
    "train_incremental",
    "train_naive",
    "trained_tokenizer",
    "vocab_from_merges",
]
