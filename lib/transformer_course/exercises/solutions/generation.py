"""Solutions of 12_generation's build exercises."""

from __future__ import annotations

import torch


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Logits [*, V] with every token outside the nucleus (the most probable tokens, in order,
    until their probability reaches ``top_p``) set to −∞; the most probable token always stays."""
    probs = torch.softmax(logits, dim=-1)  # (*, V)
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # (*, V), (*, V)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs  # (*, V) probability ranked above
    drop_sorted = mass_before >= top_p  # (*, V) the nucleus is already full without this token
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # (*, V) vocabulary order
    return logits.masked_fill(drop, float("-inf"))  # (*, V)


def sampling_probs(logits: torch.Tensor, temperature: float, top_k: int) -> torch.Tensor:
    """The distribution [*, V] that sampling draws from: logits divided by ``temperature``,
    all but the ``top_k`` largest set to −∞, then softmax."""
    scaled = logits / temperature  # (*, V)
    k = min(top_k, scaled.shape[-1])
    kth = scaled.topk(k, dim=-1).values.narrow(-1, k - 1, 1)  # (*, 1) the k-th largest scaled logit
    scaled = scaled.masked_fill(scaled < kth, float("-inf"))  # (*, V) ties with the k-th stay
    return torch.softmax(scaled, dim=-1)  # (*, V) softmax subtracts the max: no overflow
