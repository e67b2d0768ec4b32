"""Every build exercise: its solution passes its checker, a stub is "not answered", a wrong
function is told what differs, a hint is a hint — and every notebook 01–14 (and 02b) has at least
two build exercises whose stored stubs are unanswered.

The checkers are found by the mark :func:`transformer_course.exercises.build.build_exercise` leaves
on them, so a new exercise is tested without being listed here.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import torch

from transformer_course.exercises import Feedback
from transformer_course.exercises.build import BuildExercise, compare_results, show_solution
from transformer_course.exercises.progress import all_checkers

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
#: Notebooks that must each have at least two build exercises (issue: "every notebook 01–14").
BUILD_NOTEBOOKS = [
    path for path in sorted(NOTEBOOKS.glob("*.ipynb")) if re.match(r"(0[1-9]|1[0-4])b?_", path.name)
]


CHECKERS = all_checkers()
BUILD_CHECKERS = [
    (name, check)
    for name, check in CHECKERS
    if isinstance(getattr(check, "exercise", None), BuildExercise)
]


def test_there_are_build_exercises():
    assert len(BUILD_CHECKERS) >= 1


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_the_solution_passes(name, check, seed):
    feedback = check(check.exercise.solution, seed=seed)
    assert isinstance(feedback, Feedback)
    assert feedback.correct, f"{name}: {feedback}"


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
def test_the_checker_is_declared_where_it_lives(name, check):
    """build_exercise gives the checker its name, its module and a docstring from the solution's
    signature; its hint and success message read as one line whatever the source's wrapping."""
    module = inspect.getmodule(check)
    assert check.__name__ == name and getattr(module, name) is check
    assert check.__module__.startswith("transformer_course.exercises.")
    arguments = ", ".join(inspect.signature(check.exercise.solution).parameters)
    assert f"``{check.exercise.name}({arguments})``" in check.__doc__
    assert re.match(r"\d\d[b]?_[a-z0-9_]+ build exercise", check.__doc__), check.__doc__
    assert list(inspect.signature(check).parameters) == ["answer", "hint", "seed"]
    for text in (check.exercise.shown_hint, check.exercise.shown_success):
        assert text == " ".join(text.split()) and text, f"{name}: {text!r}"


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
def test_a_stub_is_not_answered(name, check):
    def stub(*args, **kwargs):
        """The notebook's stub: its body is `...`, so it returns None."""
        ...

    for answer in (stub, ..., None):
        feedback = check(answer)
        assert not feedback.correct and not feedback.answered, f"{name}: {feedback}"
        assert "Not answered yet" in str(feedback)


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
def test_wrong_functions_are_told_what_differs(name, check):
    def raises(*args, **kwargs):
        raise RuntimeError("boom")

    def wrong_type(*args, **kwargs):
        return "not a result"

    feedback = check(raises, seed=0)
    assert (
        not feedback.correct
        and "RuntimeError: boom" in feedback.message
        and "seed=0" in feedback.message
    )
    feedback = check(wrong_type, seed=0)
    assert not feedback.correct and feedback.message, f"{name}: {feedback}"
    for odd in (3, "text", True, torch.zeros(2), [1, 2]):
        feedback = check(odd)
        assert isinstance(feedback, Feedback) and not feedback.correct, (
            f"{name}: {odd!r} → {feedback}"
        )


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
def test_a_slightly_wrong_result_is_caught(name, check):
    """The solution's result, nudged: the checker must notice (this is what makes it a check)."""
    exercise = check.exercise

    def nudged(*args):
        return _nudge(exercise.solution(*args))

    feedback = check(nudged, seed=0)
    assert not feedback.correct, f"{name} accepted a nudged result: {feedback}"
    assert "seed=0" in feedback.message


def _nudge(result):
    if isinstance(result, torch.Tensor):
        if result.dtype == torch.bool:
            return ~result
        if result.is_floating_point():
            return torch.where(torch.isfinite(result), result + 0.5, torch.zeros_like(result))
        return result + 1
    if isinstance(result, tuple):
        return (_nudge(result[0]), *result[1:])
    if isinstance(result, list):
        return [*result, result[-1]] if result else [0]
    if isinstance(result, bool):
        return not result
    if isinstance(result, (int, float)):
        return result + 1
    return object()


SLIPS = [
    (f"{name}: {slip}", check, slip, wrong)
    for name, check in BUILD_CHECKERS
    for slip, wrong in (check.exercise.slips or {}).items()
]


@pytest.mark.parametrize("check, slip, wrong", [s[1:] for s in SLIPS], ids=[s[0] for s in SLIPS])
def test_a_known_slip_is_named(check, slip, wrong):
    """A learner who makes a declared slip is told which one, not only where the numbers differ."""
    feedback = check(wrong, seed=0)
    assert not feedback.correct, f"the slip {slip!r} passed: {feedback}"
    assert slip in feedback.message, feedback.message


def test_a_slip_is_named_only_when_it_matches():
    """The slip's name comes from agreeing with its result, not from failing: a different wrong
    answer is told what differs, and no slip."""
    exercise = BuildExercise(
        name="double",
        reference=lambda x: 2 * x,
        make_inputs=lambda g: (torch.randn(3, generator=g),),
        hint="multiply by two",
        solution=lambda x: 2 * x,
        success="",
        slips={"adding one instead of doubling": lambda x: x + 1},
    )
    named = exercise.check(lambda x: x + 1, seed=0)
    assert not named.correct and "adding one instead of doubling" in named.message
    other = exercise.check(lambda x: 3 * x, seed=0)
    assert not other.correct and "adding one" not in other.message and "seed=0" in other.message


@pytest.mark.parametrize("name, check", BUILD_CHECKERS, ids=[name for name, _ in BUILD_CHECKERS])
def test_hint_and_solution_on_request(name, check):
    feedback = check(..., hint=True)
    assert feedback.is_hint and str(feedback).startswith("💡 Hint:") and len(feedback.message) > 20
    source = show_solution(check)
    assert "def " in source and "..." not in source.split('"""')[-1]


@pytest.mark.parametrize("name, check", CHECKERS, ids=[name for name, _ in CHECKERS])
def test_every_checker_gives_a_hint(name, check):
    """Every exercise, question or build, has a hint the learner can ask for."""
    parameters = inspect.signature(check).parameters
    assert "hint" in parameters, f"{name} takes no hint=True"
    feedback = check(..., hint=True)  # a hint needs no other argument, not even a required one
    assert feedback.is_hint and len(feedback.message) > 20, (
        f"{name}(..., hint=True) gave {feedback}"
    )


def test_compare_results_names_what_differs():
    assert compare_results(torch.ones(2, 3), torch.ones(2, 3), 1e-6) is None
    assert "shape (3, 2)" in compare_results(torch.ones(3, 2), torch.ones(2, 3), 1e-6)
    assert "dtype" in compare_results(torch.ones(2), torch.ones(2, dtype=torch.bool), 1e-6)
    assert "largest error 0.5" in compare_results(
        torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]), 1e-6
    )
    assert "NaN" in compare_results(torch.tensor([float("nan")]), torch.tensor([1.0]), 1e-6)
    assert (
        compare_results(
            torch.tensor([float("-inf"), 1.0]), torch.tensor([float("-inf"), 1.0]), 1e-6
        )
        is None
    )
    assert "tuple of 2" in compare_results(torch.ones(1), (torch.ones(1), torch.ones(1)), 1e-6)
    assert "expected 3" in compare_results(2, 3, 1e-6)
    assert compare_results(["a", "b"], ["a", "b"], 0) is None
    assert "item 1" in compare_results(["a", "c"], ["a", "b"], 0)


def _code_cells(path: Path) -> list[dict]:
    return [
        cell
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "code"
    ]


def _output_text(cell: dict) -> str:
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append("".join(output["text"]))
        for key in ("text/plain", "text/markdown"):
            if key in output.get("data", {}):
                texts.append("".join(output["data"][key]))
    return "\n".join(texts)


BUILD_NAMES = {name for name, _ in BUILD_CHECKERS}


@pytest.mark.parametrize("path", BUILD_NOTEBOOKS, ids=[path.stem for path in BUILD_NOTEBOOKS])
def test_every_notebook_has_two_unanswered_build_exercises(path):
    """≥ 2 cells per notebook call a build checker on a stub, and store "Not answered yet"."""
    found = []
    for cell in _code_cells(path):
        source = "".join(cell["source"])
        called = set(re.findall(r"\b(check_\w+)\(", source)) & BUILD_NAMES
        if called:
            assert re.search(r"^\s+\.\.\.\s*$", source, re.MULTILINE), (
                f"{path.name}: {called} without a `...` stub"
            )
            assert "Not answered yet" in _output_text(cell), (
                f"{path.name}: {called}'s stored output is not the stub's"
            )
            found.extend(called)
    assert len(set(found)) >= 2, (
        f"{path.name} has {len(set(found))} build exercises: {sorted(set(found))}"
    )


@pytest.mark.parametrize("name, check", CHECKERS, ids=[name for name, _ in CHECKERS])
def test_every_hint_reads_as_one_line(name, check):
    """Hints are written as wrapped triple-quoted blocks; the learner sees one line of prose."""
    feedback = check(..., hint=True)
    assert feedback.is_hint, f"{name}: {feedback}"
    assert feedback.message == " ".join(feedback.message.split()), f"{name}: {feedback.message!r}"


def test_compare_results_sees_nans_in_other_places():
    """Two results with NaNs in different rows differ (a slip's NaNs must not hide the learner's)."""
    nan = float("nan")
    assert compare_results(torch.tensor([nan, 1.0]), torch.tensor([1.0, nan]), 1e-6) is not None
    assert compare_results(torch.tensor([nan, 1.0]), torch.tensor([nan, 1.0]), 1e-6) is None
