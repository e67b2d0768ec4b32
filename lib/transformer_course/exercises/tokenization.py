"""Exercises of 01_tokenization."""

from __future__ import annotations

from . import Feedback, check_value, checker, report, unanswered

SEED_SENTENCE = "a tidy tiger tied a tie tighter to tidy her tiny tail"


@checker
def check_second_merge(answer: object) -> Feedback:
    """Which pair does BPE merge second on the seed sentence? Answer as a tuple of two strings."""
    from ..tokenizer import train_bpe

    expected = train_bpe(SEED_SENTENCE, 2).merges[1]
    if unanswered(answer):
        return report(False, "", "replace the `...` with a pair such as ('t', 'i').", answered=False)
    if not (
        isinstance(answer, (tuple, list))
        and len(answer) == 2
        and all(isinstance(symbol, str) for symbol in answer)
    ):
        return report(False, "", "answer with a pair of two strings, such as ('t', 'i').")
    given = tuple(answer)
    if given == expected:
        return report(True, f"{expected} occurs 3 times and is seen first among the pairs tied at 3.", "")
    hint = (
        "recount the pairs after merging t+i: several pairs occur 3 times; the tie goes to the "
        "one seen first in the sentence (remember the end-of-word symbol '</w>')."
    )
    if isinstance(given, tuple) and len(given) == 2 and set(given) == set(expected):
        hint = "right symbols, wrong order: the pair is (left symbol, right symbol)."
    return report(False, "", hint)


@checker
def check_token_count(answer: object, text: str = "Tokenization isn't magic!") -> Feedback:
    """How many cl100k_base tokens does ``text`` have?"""
    from ..tokenizer import get_encoding

    count = len(get_encoding("cl100k_base").encode(text))
    return check_value(
        answer,
        count,
        f"{text!r} is {count} tokens: longer or rarer words split into several pieces.",
        "encode the text with encoding.encode(...) and take len() of the list of ids.",
    )


@checker
def check_space_token(answer: object) -> Feedback:
    """Which cl100k_base id is the text ' ' (one space) on its own?"""
    from ..tokenizer import get_encoding

    (space_id,) = get_encoding("cl100k_base").encode(" ")
    return check_value(
        answer,
        space_id,
        f"id {space_id} is a lone space; in running text the space usually rides on the next word's token.",
        "encode the string ' ' and read the single id it gives.",
    )
