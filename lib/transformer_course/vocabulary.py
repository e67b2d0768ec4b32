"""A compact vocabulary: only the token ids a corpus uses (introduced in 11_training).

``cl100k_base`` knows 100,256 tokens, but the sales textbook uses only 3,771 of them (the largest
id it uses is 100,069). A model sized for the largest id carries a 100,070-row embedding table and
a 100,070-way output layer, of which 96 % of the rows are never a target. ``CompactVocabulary``
maps the ids the corpus uses onto 0..V'−1 (keeping their order) and back, so the model only needs
V' = 3,771 rows. The mapping is a bijection on those ids; ids outside it raise a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .i18n import _


def _as_long(ids: Sequence[int] | torch.Tensor, name: str) -> torch.Tensor:
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point or ids.dtype == torch.bool:
            raise TypeError(
                _("{name} must hold integer token ids, got dtype {dtype}").format(
                    name=name, dtype=ids.dtype
                )
            )
        return ids.long()
    return torch.as_tensor(list(ids), dtype=torch.long)


@dataclass(frozen=True)
class CompactVocabulary:
    """Original token ids ``ids`` (sorted, unique) ↔ compact ids 0..len(ids)−1.

    ``ids[c]`` is the original id of compact id ``c``; ``encode`` and ``decode`` work on tensors
    of any shape, on any device.
    """

    ids: torch.Tensor  # (V',) sorted unique original ids

    def __post_init__(self) -> None:
        ids = self.ids
        if not isinstance(ids, torch.Tensor) or ids.dim() != 1 or ids.numel() == 0:
            raise ValueError(_("ids must be a non-empty 1-D tensor of original token ids"))
        if ids.numel() > 1 and not bool((ids[1:] > ids[:-1]).all()):
            raise ValueError(
                _(
                    "ids must be sorted and unique; build the vocabulary with "
                    "CompactVocabulary.from_ids"
                )
            )
        if int(ids[0]) < 0:
            raise ValueError(
                _("token ids are non-negative, got {smallest}").format(smallest=int(ids[0]))
            )

    @classmethod
    def from_ids(cls, corpus_ids: Sequence[int] | torch.Tensor) -> CompactVocabulary:
        """The vocabulary of every distinct id in ``corpus_ids`` (any shape)."""
        tensor = _as_long(corpus_ids, "corpus_ids")
        if tensor.numel() == 0:
            raise ValueError(_("corpus_ids is empty; a vocabulary needs at least one token id"))
        return cls(torch.unique(tensor.flatten().cpu()))  # (V',), torch.unique sorts

    def __len__(self) -> int:
        return self.ids.numel()

    @property
    def size(self) -> int:
        """V', the number of rows a compact model needs in its embedding and output layers."""
        return self.ids.numel()

    @property
    def full_size(self) -> int:
        """The rows a model indexed by original ids needs: the largest id + 1."""
        return int(self.ids[-1]) + 1

    def encode(self, original: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """Original ids (any shape) → compact ids of the same shape; unknown ids raise ``ValueError``."""
        tensor = _as_long(original, "original")
        table = self.ids.to(tensor.device)  # (V',)
        # (...) index where each id would sit
        position = torch.searchsorted(table, tensor.contiguous())
        found = table[position.clamp(max=table.numel() - 1)] == tensor  # (...)
        if not bool(found.all()):
            missing = sorted({int(i) for i in tensor[~found].flatten()[:10]})
            raise ValueError(
                _(
                    "token ids {missing} are not in this compact vocabulary of {size} ids "
                    "(a compact model can only read and write the tokens of its corpus); "
                    "rephrase the text or train with the full vocabulary"
                ).format(missing=missing, size=self.size)
            )
        return position  # (...)

    def decode(self, compact: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """Compact ids (any shape) → original ids of the same shape."""
        tensor = _as_long(compact, "compact")
        if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= self.size):
            raise ValueError(
                _("compact ids must lie in 0..{last}, got {low}..{high}").format(
                    last=self.size - 1, low=int(tensor.min()), high=int(tensor.max())
                )
            )
        return self.ids.to(tensor.device)[tensor]  # (...)

    def contains(self, original: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """A boolean tensor: which original ids this vocabulary knows."""
        tensor = _as_long(original, "original")
        return torch.isin(tensor, self.ids.to(tensor.device))

    def to_list(self) -> list[int]:
        """The original ids as a plain list (what a checkpoint stores)."""
        return [int(i) for i in self.ids]
