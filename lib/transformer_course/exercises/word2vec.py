"""Exercises of 02b_word2vec."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import word2vec as w2v
from . import Feedback, check_value, checker, report, unanswered


@checker
def check_pair_count(
    answer: object, sentence: str = "the man loves his son", window: int = 2
) -> Feedback:
    """How many (centre, context) pairs does skip-gram make from ``sentence`` with a full ``window``?"""
    tokens = sentence.split()
    vocab = {w: i for i, w in enumerate(dict.fromkeys(tokens))}
    ids = torch.tensor([vocab[t] for t in tokens])  # (N,)
    expected = w2v.skipgram_pairs(ids, window)[0].numel()
    return check_value(
        answer,
        expected,
        f"{expected} pairs: words near the ends have fewer neighbours than the {2 * window} of a word in the middle.",
        f"count, for each of the {len(tokens)} words, the neighbours at most {window} places away on either side "
        "(a word near an end has fewer).",
    )


@checker
def check_one_hot_cosine(answer: object) -> Feedback:
    """What is the cosine similarity between the one-hot vectors of two different words?"""
    a, b = torch.eye(5)[1], torch.eye(5)[3]  # (5,), (5,)
    expected = float(F.cosine_similarity(a, b, dim=0))
    return check_value(
        answer,
        expected,
        "0: one-hot vectors of different words are orthogonal, so every pair of words is equally unrelated.",
        "the two vectors have their single 1 in different places; what is their dot product?",
        tolerance=1e-6,
    )


@checker
def check_nearest(
    answer: object, vectors: torch.Tensor, vocab: w2v.Vocabulary, word: str
) -> Feedback:
    """Which word's vector (a row of ``vectors`` [V, E]) has the highest cosine similarity with
    ``word``'s, itself excluded?"""
    if unanswered(answer):
        return report(False, "", "replace the `...` with a word (a str).", answered=False)
    if not isinstance(answer, str):
        return report(False, "", f"answer with a word (a str), got a {type(answer).__name__}.")
    expected = w2v.nearest(vectors, vocab, word, k=1)[0][0]
    if answer == word:
        return report(
            False,
            "",
            f"{word!r} itself always has cosine 1 with itself; leave it out before taking the max.",
        )
    return report(
        answer == expected,
        f"{expected!r} is the nearest neighbour of {word!r}.",
        "normalise every row to length 1, multiply by the normalised vector of the word, and take the argmax "
        "of the others.",
    )
