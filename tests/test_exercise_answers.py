"""Every exercise checker answers whatever a learner types with feedback, never a traceback.

The odd answers are the reliability review's (section 6 of ``reviews/reliability.md``): numpy
scalars and arrays, tensors of every dtype, text, booleans, None, ``...``, functions, hostile
objects. The right answer in every form a learner might hold it (numpy, tensor, ``torch.Size``)
must be accepted, and a plausible slip must be told what kind of answer was expected.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
import torch

import transformer_course.exercises as exercises
from transformer_course import word2vec as w2v
from transformer_course.exercises import Feedback
from transformer_course.exercises.answers import (
    call_learner,
    first_difference,
    read_number,
    read_shape,
    read_tensor,
)
from transformer_course.exercises.mask import suspect_model


def _vocabulary() -> w2v.Vocabulary:
    words = ["price", "cost", "value", "smile"]
    return w2v.Vocabulary(words, torch.ones(4), {w: i for i, w in enumerate(words)})


#: Arguments the checkers cannot default (they describe the learner's own run).
REQUIRED_ARGS = {
    "check_broken_layer": {"model": suspect_model()},
    "check_warmup_lr": {"step": 3, "steps": 100, "lr": 1e-3, "warmup": 10, "min_lr": None},
    "check_validation_windows": {"val_tokens": 101, "context_length": 16},
    "check_nearest": {
        "vectors": torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]]),
        "vocab": _vocabulary(),
        "word": "price",
    },
}


def _all_checkers() -> list[tuple[str, object]]:
    found = []
    for module_info in pkgutil.iter_modules(exercises.__path__):
        module = importlib.import_module(f"{exercises.__name__}.{module_info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("check_") and function.__module__ == module.__name__:
                found.append((f"{module_info.name}.{name}", function))
    return sorted(found, key=lambda item: item[0])


CHECKERS = _all_checkers()


def _call(name: str, check, answer) -> Feedback:
    short = name.split(".")[-1]
    return check(answer, **REQUIRED_ARGS.get(short, {}))


class _EqRaises:
    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __hash__ = object.__hash__


class _FloatRaises:
    def __float__(self):
        raise ArithmeticError("no float for you")


def _raises():
    raise ValueError("a learner's broken function")


ODD_ANSWERS = {
    "np.array(3 values)": np.array([1, 2, 3]),
    "np.zeros((2, 2))": np.zeros((2, 2)),
    "0-d float16 tensor": torch.tensor(7.5, dtype=torch.float16),
    "3-value int64 tensor": torch.tensor([1, 2, 3]),
    "bool tensor": torch.tensor([True, False]),
    "complex tensor": torch.ones(2, 2, dtype=torch.complex64),
    "tensor requiring grad": torch.ones(3, requires_grad=True),
    "empty tensor": torch.empty(0),
    "NaN tensor": torch.tensor([float("nan")] * 3),
    "nested list": [[1, 2], [3, 4]],
    "text '12'": "12",
    "empty text": "",
    "True": True,
    "False": False,
    "a function that raises": _raises,
    "dict": {"a": 1},
    "inf": float("inf"),
    "NaN": float("nan"),
    "set": {1, 2},
    "generator": (i for i in range(3)),
    "10**400": 10**400,
    "__eq__ raises": _EqRaises(),
    "__float__ raises": _FloatRaises(),
    "complex": 1 + 2j,
}


@pytest.mark.parametrize("name, check", CHECKERS, ids=[name for name, _ in CHECKERS])
def test_odd_answers_get_feedback_not_tracebacks(name, check):
    assert len(CHECKERS) >= 40, "the exercise modules were not found"
    for label, answer in ODD_ANSWERS.items():
        feedback = _call(name, check, answer)
        assert isinstance(feedback, Feedback), f"{name}({label}) returned {feedback!r}"
        assert not feedback.correct, f"{name} accepted the odd answer {label}"
        assert feedback.answered, f"{name}({label}) calls a real answer unanswered"
        assert len(feedback.message) > 10, f"{name}({label}) says too little: {feedback!r}"
        assert "Traceback" not in str(feedback)


@pytest.mark.parametrize("name, check", CHECKERS, ids=[name for name, _ in CHECKERS])
def test_placeholder_is_not_answered_yet(name, check):
    for placeholder in (..., None):
        feedback = _call(name, check, placeholder)
        assert isinstance(feedback, Feedback)
        assert not feedback.answered and not feedback.correct
        assert str(feedback).startswith("✏️  Not answered yet")


def test_every_checker_is_guarded():
    for name, check in CHECKERS:
        assert hasattr(check, "__wrapped__"), f"{name} is not decorated with @checker"


@pytest.mark.parametrize(
    "answer",
    [
        6,
        6.0,
        np.int64(6),
        np.float32(6.0),
        np.array(6),
        np.array([6]),
        torch.tensor(6),
        torch.tensor([6.0], dtype=torch.float16),
        torch.tensor(6, requires_grad=False),
    ],
    ids=repr,
)
def test_a_right_number_is_right_in_any_form(answer):
    from transformer_course.exercises.mask import check_visible_keys

    assert check_visible_keys(answer, query=5).correct


@pytest.mark.parametrize(
    "answer",
    [
        (2, 8, 10, 12),
        [2, 8, 10, 12],
        torch.Size([2, 8, 10, 12]),
        np.array([2, 8, 10, 12]),
        torch.tensor([2, 8, 10, 12]),
        tuple(np.int64(v) for v in (2, 8, 10, 12)),
    ],
    ids=repr,
)
def test_a_right_shape_is_right_in_any_form(answer):
    from transformer_course.exercises.qkv import check_split_shape

    assert check_split_shape(answer).correct


def test_plausible_slips_are_named():
    from transformer_course.exercises.mask import check_visible_keys
    from transformer_course.exercises.softmax import check_temperature_limit

    mask = torch.ones(16, 16, dtype=torch.bool).tril()  # (T, T)
    feedback = check_visible_keys(mask[5])  # the row instead of its count
    assert not feedback.correct and "16 values" in feedback.message
    feedback = check_temperature_limit(True)
    assert not feedback.correct and "yes/no" in feedback.message
    feedback = check_visible_keys("6")
    assert not feedback.correct and "without quotes" in feedback.message


def test_tensor_feedback_says_where_and_how_much():
    from transformer_course.exercises import check_tensor, checker

    weights, v = torch.eye(3), torch.arange(6.0).reshape(3, 2)

    @checker
    def check_attention_output(answer: object, weights: torch.Tensor, v: torch.Tensor) -> Feedback:
        """One head's output weights @ v, checked as 08's question once was."""
        return check_tensor(
            answer, weights @ v, "row i is Σ_j w_ij v_j.", "multiply the weights by V."
        )

    wrong = v.clone()
    wrong[1, 0] += 0.5
    feedback = check_attention_output(wrong, weights, v)
    assert not feedback.correct
    assert "(1, 0)" in feedback.message and "largest error 0.5" in feedback.message
    assert check_attention_output(v.numpy(), weights, v).correct
    assert check_attention_output(v.tolist(), weights, v).correct
    shape = check_attention_output(v.T, weights, v)
    assert "expected shape (3, 2), got (2, 3)" in shape.message


def test_readers_directly():
    assert read_number(np.float64(2.5)) == (2.5, None)
    assert read_number(torch.tensor([[3]])) == (3, None)
    assert read_number(True)[0] is None
    assert read_number(float("nan"))[0] is None
    assert read_shape(torch.Size([1, 2])) == ((1, 2), None)
    assert read_shape((1.5, 2))[0] is None
    assert read_shape(torch.ones(2, 2))[0] is None
    given, problem = read_tensor([[True, False]], torch.bool)
    assert problem is None and given.dtype == torch.bool
    assert read_tensor([1.0, 2.0], torch.bool)[0] is None
    assert "largest error" in first_difference(torch.zeros(2), torch.ones(2), 1e-4)


def test_call_learner_turns_exceptions_into_sentences():
    assert call_learner(lambda x: x + 1, 1) == (2, None)
    result, problem = call_learner(_raises)
    assert result is None and "ValueError" in problem and "broken function" in problem
    assert "expected a function" in call_learner(42)[1]


def test_the_net_under_the_readers_catches_a_broken_checker():
    from transformer_course.exercises import checker

    @checker
    def check_broken(answer):
        raise KeyError("expected value could not be computed")

    feedback = check_broken(3)
    assert isinstance(feedback, Feedback) and not feedback.correct
    assert "could not judge this int" in feedback.message and "KeyError" in feedback.message


def test_checker_with_a_hint_answers_hint_true_before_the_body():
    calls = []

    @exercises.checker(hint="think first")
    def check_thing(answer: object, size: int = 3, hint: bool = False) -> Feedback:
        calls.append(answer)
        return exercises.check_value(answer, size, "yes", "no")

    assert str(check_thing(..., hint=True)) == "💡 Hint: think first"
    assert check_thing(..., 3, True).is_hint  # hint by position too
    assert calls == []
    assert check_thing(3).correct and not check_thing(4, hint=False).correct
    assert (
        check_thing.__name__ == "check_thing"
        and "hint" in inspect.signature(check_thing).parameters
    )


def test_check_choice_says_what_is_wrong_with_an_answer():
    options = [
        exercises.Option(lambda word: word.startswith("up"), True, "right: up"),
        exercises.Option(lambda word: word == "down", False, "not down"),
    ]

    def choose(answer: object, **options_of_the_call: object) -> str:
        return str(exercises.check_choice(answer, ("up", "down"), options, **options_of_the_call))

    assert choose(...) == f"✏️  Not answered yet: {exercises.NOT_ANSWERED}"
    assert (
        choose(3)
        == "❌ Not quite: answer with one of the words ['up', 'down'] as a string, got a int."
    )
    assert choose(3, noun="names").endswith("the names ['up', 'down'] as a string, got a int.")
    assert choose(" UPWARDS ") == "✅ Correct: right: up"
    assert choose("down") == "❌ Not quite: not down"
    assert choose("sideways") == "❌ Not quite: answer with one of ['up', 'down']."
    assert choose("sideways", unknown="pick one") == "❌ Not quite: pick one"
    assert choose(None, not_answered="type a word") == "✏️  Not answered yet: type a word"
