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

from ..i18n import N_, _
from . import Feedback, checker, give_hint, prose, report, unanswered
from .answers import first_difference

#: A learner's function that answers with this is still the stub (declared in English, ``N_``;
#: shown as ``_(STUB_MESSAGE).format(name=…, check=…)``).
STUB_MESSAGE = N_(
    "`{name}` still returns None — its body is the `...` placeholder. Write the body, run the cell "
    "again. Stuck? Ask for a hint: `{check}({name}, hint=True)`."
)
#: The label of a whole result in the comparison sentences (a tuple's items get their own).
THE_RESULT = N_("the result")


def _type_name(value: object) -> str:
    return type(value).__name__


def _tensor_kind(tensor: torch.Tensor) -> str:
    if tensor.dtype == torch.bool:
        return "bool"
    return "floating-point" if tensor.is_floating_point() else "integer"


#: The sentence that says a tensor has the wrong kind of dtype, one per kind (a whole sentence
#: each, so a translation need not glue an adjective in).
_WRONG_KIND = {
    "bool": N_("{label} has dtype {dtype}; expected a bool tensor ({expected})."),
    "floating-point": N_(
        "{label} has dtype {dtype}; expected a floating-point tensor ({expected})."
    ),
    "integer": N_("{label} has dtype {dtype}; expected an integer tensor ({expected})."),
}


def _label(label: str | None) -> str:
    """The label of a compared value as the learner reads it (``None``: the whole result)."""
    return _(THE_RESULT) if label is None else label


def compare_tensors(
    given: object, expected: torch.Tensor, atol: float, label: str | None = None
) -> str | None:
    """``None`` when ``given`` matches ``expected``; otherwise a sentence that says what differs.

    ``label`` names the compared value in the sentence (already in the learner's language);
    ``None`` is the whole result.
    """
    where = "" if label is None else _("{label}: ").format(label=label)  # an item of a tuple
    label = _label(label)
    if not isinstance(given, torch.Tensor):
        return _("{label} should be a torch.Tensor, but your function returned a {kind}.").format(
            label=label, kind=_type_name(given)
        )
    if tuple(given.shape) != tuple(expected.shape):
        return _("{label} has shape {shape}; expected {expected}.").format(
            label=label, shape=tuple(given.shape), expected=tuple(expected.shape)
        )
    if _tensor_kind(given) != _tensor_kind(expected):
        return _(_WRONG_KIND[_tensor_kind(expected)]).format(
            label=label, dtype=given.dtype, expected=expected.dtype
        )
    given = given.detach().cpu()
    expected = expected.detach().cpu()
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
        return _("{label} contains NaN where the library's has none ({n} entries).").format(
            label=label, n=int(torch.isnan(given64).sum())
        )
    if not torch.equal(torch.isnan(given64), torch.isnan(expected64)):  # a slip's NaNs, say
        return where + first_difference(given64, expected64, atol)
    finite = torch.isfinite(expected64)
    close = torch.allclose(given64[finite], expected64[finite], atol=atol, rtol=1e-4)
    if close and same_infinities:
        return None
    return where + first_difference(given64, expected64, atol)


def compare_results(
    given: object, expected: object, atol: float, label: str | None = None
) -> str | None:
    """Compare a learner's result with the reference's: tensors, numbers, tuples, lists, anything.

    ``label`` names the compared value in the sentence (``None``: the whole result).
    """
    if isinstance(expected, torch.Tensor):
        return compare_tensors(given, expected, atol, label)
    if isinstance(expected, (tuple, list)):
        return _compare_sequences(given, expected, atol, _label(label))
    if isinstance(expected, Mapping):
        return _compare_mappings(given, expected, atol, _label(label))
    label = _label(label)
    if isinstance(expected, bool):
        if not isinstance(given, bool):
            return _("{label} should be True or False, got {given}.").format(
                label=label, given=_describe(given)
            )
        if given == expected:
            return None
        return _("{label} is {given}; expected {expected}.").format(
            label=label, given=given, expected=expected
        )
    if isinstance(expected, (int, float)):
        if isinstance(given, bool) or not isinstance(given, (int, float)):
            if isinstance(given, torch.Tensor) and given.numel() == 1:
                given = given.item()
            else:
                return _("{label} should be a number, got {given}.").format(
                    label=label, given=_describe(given)
                )
        if abs(given - expected) <= atol + 1e-4 * abs(expected):
            return None
        return _("{label} is {given}; expected {expected} (off by {off}).").format(
            label=label,
            given=f"{given:.6g}",
            expected=f"{expected:.6g}",
            off=f"{abs(given - expected):.3g}",
        )
    same = given == expected
    if same is True:
        return None
    return _("{label} is {given!r}; expected {expected!r}.").format(
        label=label, given=given, expected=expected
    )


def _compare_mappings(given: object, expected: Mapping, atol: float, label: str) -> str | None:
    """A dict (or Counter) result: the first missing key, extra key or wrong value, by name."""
    if not isinstance(given, Mapping):
        return _("{label} should be a dict (a Counter is one), got {given}.").format(
            label=label, given=_describe(given)
        )
    missing = [key for key in expected if key not in given]
    if missing:
        return _("{label} lacks the key {key!r} ({n} of the {total} keys are missing).").format(
            label=label, key=missing[0], n=len(missing), total=len(expected)
        )
    extra = [key for key in given if key not in expected]
    if extra:
        return _(
            "{label} has the key {key!r}, which the library's result has not ({n} extra keys)."
        ).format(label=label, key=extra[0], n=len(extra))
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
        return _("{label} should be a {kind} of {n} items, got {given}.").format(
            label=label, kind=kind, n=len(expected), given=_describe(given)
        )
    if len(given) != len(expected):
        return _("{label} has {n} items; expected {expected}.").format(
            label=label, n=len(given), expected=len(expected)
        )
    for index, (one_given, one_expected) in enumerate(zip(given, expected, strict=True)):
        item = _("item {index} of {label}").format(index=index, label=label)
        problem = compare_results(one_given, one_expected, atol, item)
        if problem:
            return problem
    return None


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return _("a tensor of shape {shape}").format(shape=tuple(value.shape))
    if isinstance(value, (list, tuple)):
        return _("a {kind} of {n} items").format(kind=_type_name(value), n=len(value))
    return _("a {kind}").format(kind=_type_name(value))


def hard_case(generator: torch.Generator, cases: int) -> int:
    """Which of ``cases`` hard cases this trial's draw holds, 0 to ``cases`` − 1 (01–14).

    A checker's trials draw from consecutive seeds (``seed``, ``seed + 1``, …), so with ``cases``
    no larger than its trials every check meets every case, whatever the seed: a verdict never
    depends on luck. ``make_inputs`` reads it from the generator it is given.
    """
    return generator.initial_seed() % cases


def describe_inputs(arguments: Sequence[Any]) -> str:
    """A short description of the inputs of one trial, for feedback: shapes, not values."""
    parts = []
    for value in arguments:
        if isinstance(value, torch.Tensor):
            parts.append(_("a {shape} tensor").format(shape=tuple(value.shape)))
        elif isinstance(value, torch.nn.Module):
            parts.append(_("a {kind}").format(kind=_type_name(value)))
        elif isinstance(value, (int, float, str, bool)) or value is None:
            parts.append(repr(value))
        elif isinstance(value, (tuple, list, dict)) and len(repr(value)) <= 160:
            parts.append(repr(value))  # a short word or word-count table: show it, it is the clue
        else:
            parts.append(_describe(value))
    return "(" + ", ".join(parts) + ")"


def _wrong_result(slip: str | None, inputs: str, problem: str, again: str) -> str:
    """The verdict on a wrong result: what differs, and the known slip it equals, if any."""
    if slip:
        return _(
            "it looks like {slip}: your result equals that mistake's. "
            "on inputs {inputs}: {problem} {again}"
        ).format(slip=_(slip), inputs=inputs, problem=problem, again=again)
    return _("on inputs {inputs}: {problem} {again}").format(
        inputs=inputs, problem=problem, again=again
    )


@dataclass(frozen=True)
class BuildExercise:
    """One implement-and-check exercise (see the module docstring).

    ``make_inputs(generator)`` draws the arguments of one trial; it is called twice with the same
    seed, once for the library and once for the learner, so a function that changes its inputs in
    place cannot spoil the comparison. ``outcome(arguments, result)`` picks what is compared (by
    default the result itself; a training step compares the loss *and* the updated weights).

    :attr:`hint`, :attr:`success` and the descriptions of :attr:`slips` are the English the module
    declares (``N_("…")``, wrapped like a docstring); :attr:`shown_hint` and :attr:`shown_success`
    are what the learner reads: translated into the current language, then made one line.
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

    @property
    def shown_hint(self) -> str:
        """The hint as the learner reads it: in the current language, on one line."""
        return prose(_(self.hint))

    @property
    def shown_success(self) -> str:
        """The success message as the learner reads it: in the current language, on one line."""
        return prose(_(self.success))

    def _outcome(self, arguments: tuple, result: Any) -> Any:
        return result if self.outcome is None else self.outcome(arguments, result)

    def check(
        self, function: object, *, hint: bool = False, seed: int | None = None, check_name: str = ""
    ) -> Feedback:
        """Judge the learner's ``function`` against :attr:`reference` on :attr:`trials` inputs."""
        if hint:
            return give_hint(self.shown_hint)
        check_name = check_name or f"check_{self.name}"
        stub = _(STUB_MESSAGE).format(name=self.name, check=check_name)
        if unanswered(function):
            return report(False, "", stub, answered=False)
        if not callable(function) or isinstance(function, (torch.Tensor, type)):
            return report(
                False,
                "",
                _(
                    "pass your function itself — `{check}({name})`, without calling it — got {given}."
                ).format(check=check_name, name=self.name, given=_describe(function)),
            )
        seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
        again = _(
            "(random inputs from seed {seed}: `{check}({name}, seed={seed})` repeats them)"
        ).format(seed=seed, check=check_name, name=self.name)
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
                    return self._raised(error, inputs, again)
                if result is None and trial == 0:
                    return report(False, "", stub, answered=False)
                problem = compare_results(self._outcome(learner_args, result), expected, self.atol)
            if problem:
                slip = self._matching_slip(trial_seed, self._outcome(learner_args, result))
                return report(False, "", _wrong_result(slip, inputs, problem, again))
        return report(
            True,
            _("`{name}` matches the library on {trials} random inputs. {success}").format(
                name=self.name, trials=self.trials, success=self.shown_success
            ),
            "",
        )

    def _raised(self, error: Exception, inputs: str, again: str) -> Feedback:
        """The verdict when the learner's function raised ``error`` on ``inputs``."""
        return report(
            False,
            "",
            _("your `{name}` raised {kind}: {error} — on inputs {inputs} {again}.").format(
                name=self.name, kind=_type_name(error), error=error, inputs=inputs, again=again
            ),
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
    the slip, e.g. ``slips={N_("the unbiased variance (divides by d − 1)"): layer_norm_unbiased}``).
    ``hint``, ``success`` and the slips' descriptions are declared in English with ``N_("…")``;
    the checker translates them when it shows them.
    The checker carries the exercise as ``.exercise`` (the tests find build exercises by it).
    """
    exercise = BuildExercise(
        name=solution.__name__,
        reference=reference,
        make_inputs=make_inputs,
        hint=hint,
        solution=solution,
        success=success,
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
            _("{name!r} is not the checker of a build exercise").format(
                name=getattr(check, "__name__", check)
            )
        )
    return SolutionText(inspect.getsource(solution))
