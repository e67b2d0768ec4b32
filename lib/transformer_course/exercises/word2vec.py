"""Exercises of 02b_word2vec: build skip-gram's (centre, context) pairs and the negative-sampling
loss, and find a nearest neighbour by hand."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import word2vec as w2v
from ..i18n import N_, _
from . import Feedback, checker, report, unanswered
from .build import build_exercise
from .solutions.word2vec import negative_sampling_loss, skipgram_pairs


@checker(
    hint=N_("""
        `unit = F.normalize(vectors, dim=1)` makes every row length 1, so `unit @
        unit[vocab.id(word)]` is the cosine with every word. Set the word's own entry to
        -inf (its cosine is 1), take the argmax and read the word with `vocab.words[index]`.
    """)
)
def check_nearest(
    answer: object, vectors: torch.Tensor, vocab: w2v.Vocabulary, word: str, hint: bool = False
) -> Feedback:
    """Which word's vector (a row of ``vectors`` [V, E]) has the highest cosine similarity with
    ``word``'s, itself excluded?"""
    if unanswered(answer):
        return report(False, "", _("replace the `...` with a word (a str)."), answered=False)
    if not isinstance(answer, str):
        return report(
            False,
            "",
            _("answer with a word (a str), got a {kind}.").format(kind=type(answer).__name__),
        )
    expected = w2v.nearest(vectors, vocab, word, k=1)[0][0]
    if answer == word:
        return report(
            False,
            "",
            _(
                "{word!r} itself always has cosine 1 with itself; leave it out before taking the max."
            ).format(word=word),
        )
    return report(
        answer == expected,
        _("{expected!r} is the nearest neighbour of {word!r}.").format(
            expected=expected, word=word
        ),
        _(
            "normalise every row to length 1, multiply by the normalised vector of the word, and take the argmax "
            "of the others."
        ),
    )


# --------------------------------------------------------------------------- build exercises


def _random_stream(generator: torch.Generator) -> tuple[torch.Tensor, int]:
    """A stream of 1–12 word ids and a window of 1–4 — sometimes wider than the stream itself."""
    n = int(torch.randint(1, 13, (), generator=generator))
    window = int(torch.randint(1, 5, (), generator=generator))
    return torch.randint(0, 20, (n,), generator=generator), window  # (N,), int


def _pairs_reference(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    return w2v.skipgram_pairs(ids, window)  # (P,), (P,) — full windows: no generator


def _as_pair_table(arguments: tuple, result: object) -> object:
    """Pairs in any order compare equal: the (centre, context) pairs as rows of a (P, 2) tensor,
    sorted by position of centre then context. Anything that is not two id sequences is passed on
    unchanged, so the comparison names what came back."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        return result
    try:
        centres, contexts = (torch.as_tensor(part).reshape(-1) for part in result)
    except (TypeError, ValueError, RuntimeError):
        return result
    # torch.as_tensor([]) is float: an empty answer is an empty list of ids
    centres, contexts = (part.long() if part.numel() == 0 else part for part in (centres, contexts))
    if centres.shape != contexts.shape:
        return (centres, contexts)  # the tuple branch of the comparison names the difference
    table = torch.stack([centres, contexts.to(centres.dtype)], dim=1)  # (P, 2)
    key = table[:, 0].double() * 1e6 + table[:, 1].double()  # (P,) sort by centre, then context
    return table[key.argsort(stable=True)]  # (P, 2)


def _pairs_with_itself(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Slip: distance 0 included, so every word is also its own context."""
    centres, contexts = w2v.skipgram_pairs(ids, window)  # (P,), (P,)
    return torch.cat([centres, ids]), torch.cat([contexts, ids])  # (P + N,) each


def _pairs_one_side(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Slip: only the words after the centre (j > i), not those before it."""
    pairs = [
        (ids[i], ids[j])
        for i in range(len(ids))
        for j in range(i + 1, min(len(ids), i + window + 1))
    ]
    return (
        torch.tensor([int(c) for c, _outside in pairs], dtype=torch.long),
        torch.tensor([int(o) for _centre, o in pairs], dtype=torch.long),
    )


def _pairs_window_short(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Slip: distances 1 … window − 1 (range(1, window)), the farthest neighbours missed."""
    if window == 1:
        empty = torch.zeros(0, dtype=torch.long)
        return empty, empty
    return w2v.skipgram_pairs(ids, window - 1)


check_skipgram_pairs = build_exercise(
    notebook="02b_word2vec",
    solution=skipgram_pairs,
    hint=N_("""
        two nested loops: for every position i, for every j with 1 ≤ |i − j| ≤ window and 0
        ≤ j < len(ids), collect (ids[i], ids[j]). Return two LongTensors, centres and
        contexts, of the same length (torch.tensor(list, dtype=torch.long) keeps an empty
        list a LongTensor). The order does not matter: the checker sorts the pairs into a
        (P, 2) table before comparing.
    """),
    success=N_("""
        Those are skip-gram's training pairs (`word2vec.skipgram_pairs`, which does it with
        one shifted slice per offset instead of a loop).
    """),
    reference=_pairs_reference,
    make_inputs=_random_stream,
    outcome=_as_pair_table,
    slips={
        N_("the centre paired with itself (distance 0 is not a context)"): _pairs_with_itself,
        N_("only the words after the centre (the window reaches both ways)"): _pairs_one_side,
        N_("a window one short (distances 1 to window, both included)"): _pairs_window_short,
    },
)


def _random_vectors(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """v_c (B, d), u_o (B, d), u_k (B, K, d). In about every other draw one row is scaled up so
    that its scores reach ±100s, and in every draw one true pair scores below −100: there
    log(sigmoid(x)) underflows to −inf, logsigmoid does not."""
    B = int(torch.randint(1, 5, (), generator=generator))
    K = int(torch.randint(1, 7, (), generator=generator))
    d = int(torch.randint(2, 9, (), generator=generator))
    v_c = torch.randn(B, d, generator=generator)  # (B, d)
    u_o = torch.randn(B, d, generator=generator)  # (B, d)
    u_k = torch.randn(B, K, d, generator=generator)  # (B, K, d)
    if float(torch.rand((), generator=generator)) < 0.5:
        v_c[0] *= 100.0  # row 0's scores become large: a test of numerical care
    # Every draw: the last row's true context points away from its centre, a score below −100,
    # where log(sigmoid(x)) underflows to −inf and logsigmoid stays finite.
    length = 1.5 + float(torch.rand((), generator=generator))
    u_o[-1] = -v_c[-1] / v_c[-1].norm() * (100.0 / v_c[-1].norm() + 1.0) * length
    return v_c, u_o, u_k


def _loss_reference(v_c: torch.Tensor, u_o: torch.Tensor, u_k: torch.Tensor) -> torch.Tensor:
    """The library's ``Word2Vec`` loss on tables that hold exactly these vectors."""
    B, K, d = u_k.shape
    model = w2v.Word2Vec(B * (K + 1), dim=d)  # centre ids 0..B-1; context ids 0..B-1; noise ids B..
    with torch.no_grad():
        model.in_embed.weight[:B] = v_c  # (B, d)
        model.out_embed.weight.copy_(torch.cat([u_o, u_k.reshape(B * K, d)]))  # (B + B·K, d)
    centres = torch.arange(B)  # (B,)
    negatives = B + torch.arange(B * K).view(B, K)  # (B, K)
    return model(centres, centres, negatives).detach()  # () the batch's mean loss


def _loss_log_of_sigmoid(v_c: torch.Tensor, u_o: torch.Tensor, u_k: torch.Tensor) -> torch.Tensor:
    """Slip: torch.log(torch.sigmoid(x)), which is −inf once x < −104 in float32."""
    positive = torch.log(torch.sigmoid((u_o * v_c).sum(-1)))  # (B,)
    negative = torch.log(torch.sigmoid(-(u_k * v_c[:, None, :]).sum(-1))).sum(-1)  # (B, K) -> (B,)
    return -(positive + negative).mean()


def _loss_summed(v_c: torch.Tensor, u_o: torch.Tensor, u_k: torch.Tensor) -> torch.Tensor:
    """Slip: the sum over the rows instead of their mean."""
    return _loss_reference(v_c, u_o, u_k) * v_c.shape[0]


def _loss_negatives_unflipped(
    v_c: torch.Tensor, u_o: torch.Tensor, u_k: torch.Tensor
) -> torch.Tensor:
    """Slip: logσ(u_k·v_c) for the noise words, without the minus sign."""
    positive = F.logsigmoid((u_o * v_c).sum(-1))  # (B,)
    negative = F.logsigmoid((u_k * v_c[:, None, :]).sum(-1)).sum(-1)  # (B, K) -> (B,)
    return -(positive + negative).mean()


check_negative_sampling_loss = build_exercise(
    notebook="02b_word2vec",
    solution=negative_sampling_loss,
    hint=N_("""
        the positive score of row b is (u_o[b] * v_c[b]).sum(); the K negative scores are
        (u_k[b] * v_c[b]).sum(-1) — broadcast v_c[:, None, :] against u_k for all rows at
        once. The loss of a row is −logσ(positive) − Σ_k logσ(−negative_k); return the mean
        over rows. Use F.logsigmoid: torch.log(torch.sigmoid(x)) is −inf once x < −104 in
        float32.
    """),
    success=N_("""
        That is the loss `word2vec.Word2Vec` trains skip-gram with.
    """),
    reference=_loss_reference,
    make_inputs=_random_vectors,
    atol=1e-4,
    slips={
        N_(
            "torch.log(torch.sigmoid(x)) (it is −inf for large negative scores; use F.logsigmoid)"
        ): _loss_log_of_sigmoid,
        N_("the sum over rows (return their mean)"): _loss_summed,
        N_("the noise scores without their minus sign (logσ(−u_k·v_c))"): _loss_negatives_unflipped,
    },
)
