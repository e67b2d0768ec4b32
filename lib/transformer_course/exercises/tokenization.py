"""Exercises of 01_tokenization: predict BPE's second merge, count tokens, and build the two
pieces of BPE training — one merge step and the pair counter."""

from __future__ import annotations

from collections import Counter

import torch

from .. import tokenizer
from ..i18n import N_, _
from . import Feedback, check_value, checker, report, unanswered
from .build import build_exercise
from .solutions.tokenization import count_pairs, merge_pair

SEED_SENTENCE = "a tidy tiger tied a tie tighter to tidy her tiny tail"


@checker(
    hint=N_("""
        after t+i became 'ti', recount the adjacent pairs of the spelled words (each word
        weighted by its count, '</w>' included): several pairs now occur 3 times, and a tie
        goes to the pair seen first in the sentence.
    """)
)
def check_second_merge(answer: object, hint: bool = False) -> Feedback:
    """Which pair does BPE merge second on the seed sentence? Answer as a tuple of two strings."""
    expected = tokenizer.train_bpe(SEED_SENTENCE, 2).merges[1]
    if unanswered(answer):
        return report(
            False, "", _("replace the `...` with a pair such as ('t', 'i')."), answered=False
        )
    if not (
        isinstance(answer, (tuple, list))
        and len(answer) == 2
        and all(isinstance(symbol, str) for symbol in answer)
    ):
        return report(False, "", _("answer with a pair of two strings, such as ('t', 'i')."))
    given = tuple(answer)
    if given == expected:
        return report(
            True,
            _("{expected} occurs 3 times and is seen first among the pairs tied at 3.").format(
                expected=expected
            ),
            "",
        )
    hint_text = _(
        "recount the pairs after merging t+i: several pairs occur 3 times; the tie goes to the "
        "one seen first in the sentence (remember the end-of-word symbol '</w>')."
    )
    if set(given) == set(expected):
        hint_text = _("right symbols, wrong order: the pair is (left symbol, right symbol).")
    return report(False, "", hint_text)


@checker(
    hint=N_("""
        guess first (a common word with its leading space is one token; a rare or long word
        splits; the apostrophe ending and the '!' are pieces of their own), then check with
        len(encoding.encode(text)).
    """)
)
def check_token_count(
    answer: object, text: str = "Tokenization isn't magic!", hint: bool = False
) -> Feedback:
    """How many cl100k_base tokens does ``text`` have?"""
    count = len(tokenizer.get_encoding("cl100k_base").encode(text))
    return check_value(
        answer,
        count,
        _("{text!r} is {count} tokens: longer or rarer words split into several pieces.").format(
            text=text, count=count
        ),
        _("encode the text with encoding.encode(...) and take len() of the list of ids."),
    )


# --------------------------------------------------------------------------- build exercises

#: Symbols a spelled word is made of in the exercises: letters, merged pieces, the end marker.
_SYMBOLS = ["t", "i", "e", "r", "ti", "er", "e</w>"]


def _random_word(generator: torch.Generator) -> tuple[str, ...]:
    """A spelled word: 0–7 symbols, then '</w>'; sometimes a run of one letter ('e e e …'),
    where merging ('e', 'e') must go left to right without overlapping."""
    length = int(torch.randint(0, 8, (), generator=generator))
    if float(torch.rand((), generator=generator)) < 0.25:
        return ("e",) * max(length, 2) + ("</w>",)
    picks = torch.randint(len(_SYMBOLS), (length,), generator=generator).tolist()
    return (*(_SYMBOLS[k] for k in picks), "</w>")


def _random_merge_inputs(generator: torch.Generator) -> tuple[tuple[str, ...], tuple[str, str]]:
    """A spelled word and a pair; the word always holds a *trap*: the pair's letters inside
    longer symbols, ('t' + a, b) or (a, b + 'r'), which must stay apart. Joining the symbols
    into a string and replacing "a b" would merge them."""
    word, pair = _random_word_and_pair(generator)
    a, b = pair
    letter = _LETTERS[int(torch.randint(len(_LETTERS), (), generator=generator))]
    if b == "</w>":  # '</w>' ends a word: the trap is (letter + a) just before it
        return (*word[:-1], letter + a, "</w>"), pair
    trap = (letter + a, b) if float(torch.rand((), generator=generator)) < 0.5 else (a, b + letter)
    at = int(torch.randint(len(word), (), generator=generator))  # before '</w>' at the latest
    return (*word[:at], *trap, *word[at:]), pair


#: Letters a trap glues to the pair's symbols (see :func:`_random_merge_inputs`).
_LETTERS = ["t", "i", "r"]


def _random_word_and_pair(generator: torch.Generator) -> tuple[tuple[str, ...], tuple[str, str]]:
    word = _random_word(generator)
    if word[:2] == ("e", "e"):
        return word, ("e", "e")
    if len(word) >= 2 and float(torch.rand((), generator=generator)) < 0.8:
        j = int(torch.randint(len(word) - 1, (), generator=generator))
        return word, (word[j], word[j + 1])  # a pair the word holds (maybe several times)
    a, b = torch.randint(len(_SYMBOLS), (2,), generator=generator).tolist()
    return word, (_SYMBOLS[a], _SYMBOLS[b])  # usually absent: the word must come back unchanged


def _merge_stepping_by_one(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Slip: after a merge the index moves on by 1, so the pair's right symbol is kept as well."""
    merged: list[str] = []
    for i, symbol in enumerate(word):
        is_pair = i + 1 < len(word) and (symbol, word[i + 1]) == pair
        merged.append(symbol + word[i + 1] if is_pair else symbol)
    return tuple(merged)


def _merge_by_string_replace(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Slip: the symbols joined by spaces and "a b" replaced by "ab", which also glues the pair's
    letters inside longer symbols: ('te', 'e') merged on ('e', 'e') becomes ('tee',)."""
    a, b = pair
    return tuple(" ".join(word).replace(f"{a} {b}", a + b).split(" "))


def _merge_dropping_the_last(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Slip: the loop runs while i < len(word) - 1, so an unmerged last symbol is lost."""
    merged = tokenizer.merge_pair(word, pair)
    # A symbol is never empty, so the result ends in word[-1] only when it stayed unmerged.
    return merged[:-1] if merged and merged[-1] == word[-1] else merged


check_merge_pair = build_exercise(
    notebook="01_tokenization",
    solution=merge_pair,
    hint=N_("""
        walk through the word with an index i. If (word[i], word[i + 1]) is the pair, append
        word[i] + word[i + 1] and jump by 2; otherwise append word[i] and step by 1. Return
        a tuple. A `for` loop cannot jump, so use `while i < len(word)`; mind the last
        symbol, which has no right neighbour. ('e', 'e', 'e') merged on ('e', 'e') is ('ee',
        'e').
    """),
    success=N_("""
        That is one merge step of BPE: `tokenizer.merge_pair`, which `train_bpe` applies to
        every word.
    """),
    reference=tokenizer.merge_pair,
    make_inputs=_random_merge_inputs,
    slips={
        N_(
            "a step of 1 after a merge (the pair's right symbol stays as well: ('t', 'i', 'd') "
            "becomes ('ti', 'i', 'd'); jump by 2 after a merge)"
        ): _merge_stepping_by_one,
        N_(
            "a loop that stops before the last symbol (an unmerged last symbol, such as '</w>', "
            "is dropped)"
        ): _merge_dropping_the_last,
        N_(
            'a string replace on the joined symbols ("a b" → "ab" also glues the pair\'s '
            "letters inside longer symbols: ('te', 'e', '</w>') merged on ('e', 'e') becomes "
            "('tee', '</w>'); compare whole symbols)"
        ): _merge_by_string_replace,
    },
)


def _random_words(generator: torch.Generator) -> tuple[dict[tuple[str, ...], int]]:
    """1–5 spelled words with counts 1–4 (a word repeated in the draw keeps its last count), and
    in every draw a word that holds one pair twice, ('x', 'y', 'x', 'y', '</w>'), counted 2–4
    times: a pair counted once per word, or a word counted once, shows."""
    n_words = int(torch.randint(1, 6, (), generator=generator))
    words: dict[tuple[str, ...], int] = {}
    for _draw in range(n_words):
        word = _random_word(generator)
        words[word] = int(torch.randint(1, 5, (), generator=generator))
    x, y = (_SYMBOLS[k] for k in torch.randint(len(_SYMBOLS), (2,), generator=generator).tolist())
    words[(x, y, x, y, "</w>")] = int(torch.randint(2, 5, (), generator=generator))
    return (words,)


def _count_pairs_unweighted(words: dict[tuple[str, ...], int]) -> Counter:
    """Slip: every word counted once, whatever its count."""
    return Counter(pair for word in words for pair in zip(word, word[1:]))


def _count_pairs_once_per_word(words: dict[tuple[str, ...], int]) -> Counter:
    """Slip: a pair that occurs twice inside a word is counted once (a set of the word's pairs)."""
    counts: Counter = Counter()
    for word, count in words.items():
        for pair in set(zip(word, word[1:])):
            counts[pair] += count
    return counts


check_count_pairs = build_exercise(
    notebook="01_tokenization",
    solution=count_pairs,
    hint=N_("""
        start from `Counter()`. For every (word, count) in words.items(), walk over the
        adjacent pairs — `zip(word, word[1:])` gives them — and add the word's count to each
        pair. A pair that occurs twice inside one word counts twice; a one-symbol word has
        no pairs.
    """),
    success=N_("""
        That is step 2 of the recipe, `tokenizer.pair_counts`; BPE merges its most frequent
        pair.
    """),
    reference=tokenizer.pair_counts,
    make_inputs=_random_words,
    slips={
        N_(
            "every word counted once (its count, how often it occurs, is not added)"
        ): _count_pairs_unweighted,
        N_(
            "a pair counted once per word (a pair that occurs twice inside a word must count twice)"
        ): _count_pairs_once_per_word,
    },
)
