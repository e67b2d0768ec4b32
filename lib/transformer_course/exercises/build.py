"""Build exercises: the learner writes a function, the checker runs it on fresh random inputs.

A build exercise gives the learner a stub — the signature and docstring of a piece the notebook
has just built, with ``...`` as its body — and a checker. The checker

1. calls the learner's function and the library's (the *reference*) on the same fresh random
   inputs, several times (a new seed each call, so a function cannot pass by matching one example);
2. compares the results and says what differs: the type, the shape, the dtype, the first wrong
   entry and the largest error — never just "wrong"; when the wrong result equals one of the
   exercise's known *slips* (say, the variance divided by d − 1), the verdict names that slip;
3. treats a stub that still returns ``None`` as "not answered yet", so a stored notebook shows a
   gentle reminder, not a failure.

``check_x(fn, hint=True)`` prints the exercise's hint instead of judging, and
:func:`show_solution` prints the solution, which lives in :mod:`.solutions` where a learner cannot
see it by accident. ``tests/test_build_exercises.py`` runs every solution through its checker.

An exercise module declares each exercise once: ``check_x = build_exercise(notebook=…,
solution=x, hint=…, success=…, reference=…, make_inputs=…)`` makes ``check_x`` its checker, with
the signature ``(answer, hint=False, seed=None)`` and a docstring that names the solution's arguments.

Introduced in 01_tokenization (the first build exercise); every notebook 01–14 has at least two.
"""

from __future__ import annotations

import inspect
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from . import Feedback, checker, give_hint, prose, report, unanswered
from .answers import first_difference

#: A learner's function that answers with this is still the stub.
STUB_MESSAGE = (
    "`{name}` still returns None — its body is the `...` placeholder. Write the body, run the cell "
    "again. Stuck? Ask for a hint: `{check}({name}, hint=True)`."
)


def _type_name(value: object) -> str:
    return type(value).__name__


def _tensor_kind(tensor: torch.Tensor) -> str:
    if tensor.dtype == torch.bool:
        return "bool"
    return "floating-point" if tensor.is_floating_point() else "integer"


def compare_tensors(
    given: object, expected: torch.Tensor, atol: float, label: str = "the result"
) -> str | None:
    """``None`` when ``given`` matches ``expected``; otherwise a sentence that says what differs."""
    if not isinstance(given, torch.Tensor):
        return (
            f"{label} should be a torch.Tensor, but your function returned a {_type_name(given)}."
        )
    if tuple(given.shape) != tuple(expected.shape):
        return f"{label} has shape {tuple(given.shape)}; expected {tuple(expected.shape)}."
    if _tensor_kind(given) != _tensor_kind(expected):
        return f"{label} has dtype {given.dtype}; expected a {_tensor_kind(expected)} tensor ({expected.dtype})."
    given = given.detach().cpu()
    expected = expected.detach().cpu()
    where = "" if label == "the result" else f"{label}: "  # which item of a tuple, say (x, y)
    if expected.dtype == torch.bool:
        return (
            None
            if torch.equal(given, expected)
            else where + first_difference(given, expected, atol)
        )
    given64, expected64 = given.double(), expected.double()
    same_infinities = torch.equal(torch.isinf(given64), torch.isinf(expected64)) and torch.equal(
        given64[torch.isinf(given64)], expected64[torch.isinf(expected64)]
    )
    if torch.isnan(given64).any() and not torch.isnan(expected64).any():
        return f"{label} contains NaN where the library's has none ({int(torch.isnan(given64).sum())} entries)."
    if not torch.equal(torch.isnan(given64), torch.isnan(expected64)):  # a slip's NaNs, say
        return where + first_difference(given64, expected64, atol)
    finite = torch.isfinite(expected64)
    close = torch.allclose(given64[finite], expected64[finite], atol=atol, rtol=1e-4)
    if close and same_infinities:
        return None
    return where + first_difference(given64, expected64, atol)


def compare_results(
    given: object, expected: object, atol: float, label: str = "the result"
) -> str | None:
    """Compare a learner's result with the reference's: tensors, numbers, tuples, lists, anything."""
    if isinstance(expected, torch.Tensor):
        return compare_tensors(given, expected, atol, label)
    if isinstance(expected, (tuple, list)):
        return _compare_sequences(given, expected, atol, label)
    if isinstance(expected, bool):
        if not isinstance(given, bool):
            return f"{label} should be True or False, got {_describe(given)}."
        return None if given == expected else f"{label} is {given}; expected {expected}."
    if isinstance(expected, (int, float)):
        if isinstance(given, bool) or not isinstance(given, (int, float)):
            if isinstance(given, torch.Tensor) and given.numel() == 1:
                given = given.item()
            else:
                return f"{label} should be a number, got {_describe(given)}."
        if abs(given - expected) <= atol + 1e-4 * abs(expected):
            return None
        return (
            f"{label} is {given:.6g}; expected {expected:.6g} (off by {abs(given - expected):.3g})."
        )
    if isinstance(expected, Mapping):
        return _compare_mappings(given, expected, atol, label)
    same = given == expected
    return None if same is True else f"{label} is {given!r}; expected {expected!r}."


def _compare_mappings(given: object, expected: Mapping, atol: float, label: str) -> str | None:
    """A dict (or Counter) result: the first missing key, extra key or wrong value, by name."""
    if not isinstance(given, Mapping):
        return f"{label} should be a dict (a Counter is one), got {_describe(given)}."
    missing = [key for key in expected if key not in given]
    if missing:
        return f"{label} lacks the key {missing[0]!r} ({len(missing)} of the {len(expected)} keys are missing)."
    extra = [key for key in given if key not in expected]
    if extra:
        return f"{label} has the key {extra[0]!r}, which the library's result has not ({len(extra)} extra keys)."
    for key, one_expected in expected.items():
        problem = compare_results(given[key], one_expected, atol, f"{label}[{key!r}]")
        if problem:
            return problem
    return None


def _compare_sequences(
    given: object, expected: tuple | list, atol: float, label: str
) -> str | None:
    kind = type(expected).__name__
    if not isinstance(given, type(expected)):
        return f"{label} should be a {kind} of {len(expected)} items, got {_describe(given)}."
    if len(given) != len(expected):
        return f"{label} has {len(given)} items; expected {len(expected)}."
    for index, (one_given, one_expected) in enumerate(zip(given, expected, strict=True)):
        problem = compare_results(one_given, one_expected, atol, f"item {index} of {label}")
        if problem:
            return problem
    return None


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)):
        return f"a {_type_name(value)} of {len(value)} items"
    return f"a {_type_name(value)}"


def describe_inputs(arguments: Sequence[Any]) -> str:
    """A short description of the inputs of one trial, for feedback: shapes, not values."""
    parts = []
    for value in arguments:
        if isinstance(value, torch.Tensor):
            parts.append(f"a {tuple(value.shape)} tensor")
        elif isinstance(value, torch.nn.Module):
            parts.append(f"a {_type_name(value)}")
        elif isinstance(value, (int, float, str, bool)) or value is None:
            parts.append(repr(value))
        elif isinstance(value, (tuple, list, dict)) and len(repr(value)) <= 160:
            parts.append(repr(value))  # a short word or word-count table: show it, it is the clue
        else:
            parts.append(_describe(value))
    return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True)
class BuildExercise:
    """One implement-and-check exercise (see the module docstring).

    ``make_inputs(generator)`` draws the arguments of one trial; it is called twice with the same
    seed, once for the library and once for the learner, so a function that changes its inputs in
    place cannot spoil the comparison. ``outcome(arguments, result)`` picks what is compared (by
    default the result itself; a training step compares the loss *and* the updated weights).
    """

    name: str
    reference: Callable[..., Any]
    make_inputs: Callable[[torch.Generator], tuple]
    hint: str
    solution: Callable[..., Any]
    success: str
    trials: int = 5
    atol: float = 1e-5
    outcome: Callable[[tuple, Any], Any] | None = None
    #: Known wrong versions, ``{"what the slip is": function}``: each takes the reference's
    #: arguments. A wrong answer that agrees with one of them is told which slip it made.
    slips: Mapping[str, Callable[..., Any]] | None = None

    def _outcome(self, arguments: tuple, result: Any) -> Any:
        return result if self.outcome is None else self.outcome(arguments, result)

    def check(
        self, function: object, *, hint: bool = False, seed: int | None = None, check_name: str = ""
    ) -> Feedback:
        """Judge the learner's ``function`` against :attr:`reference` on :attr:`trials` inputs."""
        if hint:
            return give_hint(self.hint)
        check_name = check_name or f"check_{self.name}"
        if unanswered(function):
            return report(
                False, "", STUB_MESSAGE.format(name=self.name, check=check_name), answered=False
            )
        if not callable(function) or isinstance(function, (torch.Tensor, type)):
            return report(
                False,
                "",
                f"pass your function itself — `{check_name}({self.name})`, without calling it — "
                f"got {_describe(function)}.",
            )
        seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
        again = f"(random inputs from seed {seed}: `{check_name}({self.name}, seed={seed})` repeats them)"
        for trial in range(self.trials):
            trial_seed = seed + trial
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(trial_seed)
                reference_args = self.make_inputs(torch.Generator().manual_seed(trial_seed))
                expected = self._outcome(reference_args, self.reference(*reference_args))
                torch.manual_seed(trial_seed)
                learner_args = self.make_inputs(torch.Generator().manual_seed(trial_seed))
                inputs = describe_inputs(learner_args)
                try:
                    result = function(*learner_args)
                except Exception as error:  # the learner's code: report it, never crash the cell
                    return report(
                        False,
                        "",
                        f"your `{self.name}` raised {_type_name(error)}: {error} — on inputs {inputs} {again}.",
                    )
                if result is None and trial == 0:
                    return report(
                        False,
                        "",
                        STUB_MESSAGE.format(name=self.name, check=check_name),
                        answered=False,
                    )
                problem = compare_results(self._outcome(learner_args, result), expected, self.atol)
            if problem:
                slip = self._matching_slip(trial_seed, self._outcome(learner_args, result))
                named = f"it looks like {slip}: your result equals that mistake's. " if slip else ""
                return report(False, "", f"{named}on inputs {inputs}: {problem} {again}")
        return report(
            True,
            f"`{self.name}` matches the library on {self.trials} random inputs. {self.success}",
            "",
        )

    def _matching_slip(self, trial_seed: int, learner_outcome: Any) -> str | None:
        """The first of :attr:`slips` whose result on this trial's inputs equals the learner's."""
        for description, wrong in (self.slips or {}).items():
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(trial_seed)
                arguments = self.make_inputs(torch.Generator().manual_seed(trial_seed))
                try:
                    wrong_outcome = self._outcome(arguments, wrong(*arguments))
                except Exception:  # a slip that cannot run on these inputs is not the one
                    continue
            if compare_results(learner_outcome, wrong_outcome, self.atol) is None:
                return description
        return None


def build_exercise(
    *,
    notebook: str,
    solution: Callable[..., Any],
    hint: str,
    success: str,
    reference: Callable[..., Any],
    make_inputs: Callable[[torch.Generator], tuple],
    check_name: str | None = None,
    **options: Any,
) -> Callable[..., Feedback]:
    """The checker ``check_<solution>(answer, hint=False, seed=None)`` of one build exercise.

    ``notebook`` introduces the exercise; ``solution`` is the function the learner writes (its name
    and signature name the exercise), judged against ``reference`` on ``make_inputs`` draws;
    ``options`` are the other fields of :class:`BuildExercise` (``trials``, ``atol``, ``outcome``,
    ``slips``: the known wrong versions a failed answer is matched against, so the verdict names
    the slip, e.g. ``slips={"the unbiased variance (divides by d − 1)": layer_norm_unbiased}``).
    The checker carries the exercise as ``.exercise`` (the tests find build exercises by it).
    """
    exercise = BuildExercise(
        name=solution.__name__,
        reference=reference,
        make_inputs=make_inputs,
        hint=prose(hint),
        solution=solution,
        success=prose(success),
        **options,
    )
    name = check_name or f"check_{exercise.name}"

    def check(answer: object, hint: bool = False, seed: int | None = None) -> Feedback:
        return exercise.check(answer, hint=hint, seed=seed, check_name=name)

    check.__name__ = check.__qualname__ = name
    # The module that declares the exercise, as collections.namedtuple finds it: the caller's.
    check.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    arguments = ", ".join(inspect.signature(solution).parameters)
    check.__doc__ = (
        f"{notebook} build exercise: the learner's ``{exercise.name}({arguments})``, "
        f"run against the library on fresh random inputs (``hint=True`` shows the hint)."
    )
    guarded = checker(check)
    guarded.exercise = exercise  # type: ignore[attr-defined]
    return guarded


class SolutionText(str):
    """A solution's source; Jupyter shows it as highlighted Python."""

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}```"


def show_solution(check: Callable[..., Feedback]) -> SolutionText:
    """The solution of the build exercise that ``check`` judges, as source code.

    Only for after an honest try: ``show_solution(check_causal_mask_function)``. A checker that
    is not a build exercise but whose answer is code shows the function it carries as
    ``.solution`` (06_mask's ``check_sees_the_future``).
    """
    exercise = getattr(check, "exercise", None)
    # A question that asks for code but is judged another way carries its solution as .solution.
    solution = exercise.solution if exercise is not None else getattr(check, "solution", None)
    if solution is None:
        raise ValueError(
            f"{getattr(check, '__name__', check)!r} is not the checker of a build exercise"
        )
    return SolutionText(inspect.getsource(solution))
