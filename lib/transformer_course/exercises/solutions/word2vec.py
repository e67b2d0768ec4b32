"""Solutions of 02b_word2vec's build exercises."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def skipgram_pairs(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (centre, context) pair of the stream ``ids`` (N,), context at most ``window`` places away."""
    centres, contexts = [], []
    for i in range(len(ids)):
        for j in range(max(0, i - window), min(len(ids), i + window + 1)):
            if j != i:  # a word is not its own context
                centres.append(int(ids[i]))
                contexts.append(int(ids[j]))
    # (P,), (P,); dtype=long keeps an empty list an id tensor
    return torch.tensor(centres, dtype=torch.long), torch.tensor(contexts, dtype=torch.long)


def negative_sampling_loss(v_c: torch.Tensor, u_o: torch.Tensor, u_k: torch.Tensor) -> torch.Tensor:
    """Mean over the B rows of −logσ(u_o·v_c) − Σ_k logσ(−u_k·v_c); v_c, u_o (B, d), u_k (B, K, d)."""
    positive = (u_o * v_c).sum(-1)  # (B, d) · (B, d) -> (B,)
    negative = (u_k * v_c[:, None, :]).sum(-1)  # (B, K, d) · (B, 1, d) -> (B, K)
    # logsigmoid, not log(sigmoid): sigmoid of a very negative score is 0 in float32, its log −inf.
    return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(-1)).mean()  # ()
