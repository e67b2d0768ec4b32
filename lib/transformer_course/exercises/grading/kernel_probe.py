"""The grader's calls, made in a student's kernel after the student's notebook has run.

Runs inside the sandbox (:mod:`.driver` appends one cell that calls :func:`answer_probes`). It
evaluates what the course's check calls pass to their checkers (``answer``, ``stable_softmax``),
calls a build exercise's function on the inputs of the seeds the grader chose, and writes the
values, as plain data only, to a file the grader reads with ``torch.load(weights_only=True)``.
Nothing here judges: the verdicts are made in the grader's own process (:mod:`.probes`), so a
student who patches this module only changes the values of their own answers.
"""

from __future__ import annotations

import importlib
import os
import signal
from typing import Any

import torch

#: How deep a returned value's containers may nest, and the longest string sent back.
MAX_DEPTH = 6
MAX_TEXT = 20_000


class Unplain(Exception):
    """A value that is not plain data (a function, a module, a custom object)."""


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data (numbers, strings, tuples, lists, dicts, tensors), or Unplain."""
    if depth > MAX_DEPTH:
        raise Unplain("nested too deeply")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone().as_subclass(torch.Tensor)
    if type(value).__module__ == "numpy":
        return plain(torch.as_tensor(value.tolist()) if value.ndim else value.item(), depth + 1)
    if isinstance(value, tuple):  # a torch.Size too
        return tuple(plain(item, depth + 1) for item in value)
    if isinstance(value, list):
        return [plain(item, depth + 1) for item in value]
    if isinstance(value, dict):  # a Counter too
        return {plain(key, depth + 1): plain(item, depth + 1) for key, item in value.items()}
    raise Unplain(type(value).__name__)


def encode(value: Any) -> dict[str, Any]:
    """One value as the grader reads it (:func:`.probes.decode`)."""
    if value is Ellipsis:
        return {"ellipsis": True}
    try:
        return {"value": plain(value)}
    except Unplain:
        return {"unreadable": type(value).__name__}
    except Exception:  # noqa: BLE001 - a value whose own methods raise
        return {"unreadable": type(value).__name__}


def _raised(error: BaseException) -> dict[str, Any]:
    return {"raised": [type(error).__name__, str(error)[:500]]}


def _on_alarm(_signal: int, _frame: Any) -> None:
    raise TimeoutError("the grader's call ran past its time limit")


#: The grader's requests by column, and each build exercise as the course declared it, taken
#: by :func:`prepare` before any student code runs (a later ``setattr`` on a checker module
#: does not change them).
PREPARED: dict[str, dict[str, Any]] = {}
#: The values of each column's expressions, taken right after its check cell ran.
CAPTURED: dict[str, dict[str, Any]] = {}


def prepare(requests: list[dict[str, Any]]) -> None:
    """The first cell: note the grader's requests and the build exercises they judge."""
    for request in requests:
        exercise = None
        if "seeds" in request:
            try:
                checker = getattr(importlib.import_module(request["module"]), request["checker"])
                exercise = checker.exercise
            except Exception:  # noqa: BLE001, S112 - that column gets no answer; the others do
                continue
        PREPARED[request["column"]] = {**request, "exercise": exercise}


def _evaluated(request: dict[str, Any]) -> dict[str, Any]:
    from IPython import get_ipython

    namespace = get_ipython().user_ns
    try:
        return {"objects": [eval(text, namespace) for text in request["expressions"]]}  # noqa: S307
    except BaseException as error:  # noqa: BLE001 - a name the student deleted, anything
        return _raised(error)


def capture(column: str) -> None:
    """The cell after an exercise's check cell: keep what its check call passed, as it was then
    (``answer`` is reused by the next question)."""
    if column in PREPARED:
        CAPTURED[column] = _evaluated(PREPARED[column])


def _trials(request: dict[str, Any], function: Any, seconds: int) -> list[dict[str, Any]]:
    """The learner's function's outcome on each of the request's seeds (stops at an error)."""
    exercise = request["exercise"]
    trials = []
    for seed in request["seeds"]:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            arguments = exercise.make_inputs(torch.Generator().manual_seed(seed))
            signal.alarm(seconds)
            try:
                result = function(*arguments)
                outcome = None if result is None else exercise._outcome(arguments, result)
            except BaseException as error:  # noqa: BLE001 - the learner's code, any error
                trials.append(_raised(error))
                break
            finally:
                signal.alarm(0)
        trials.append(encode(outcome))
    return trials


def _answer(request: dict[str, Any], seconds: int) -> dict[str, Any]:
    found = CAPTURED.get(request["column"]) or _evaluated(request)
    if "raised" in found:
        return found
    try:
        if request["exercise"] is not None:
            return {"trials": _trials(request, found["objects"][0], seconds)}
        return {"values": [encode(value) for value in found["objects"]]}
    except BaseException as error:  # noqa: BLE001 - whatever the student's objects do
        return _raised(error)


def answer_probes(path: str, seconds: int) -> None:
    """The last cell: answer each prepared request and write the answers to ``path`` after each
    one (what was answered before a time-out still reaches the grader)."""
    signal.signal(signal.SIGALRM, _on_alarm)
    answers: dict[str, Any] = {}
    for column, request in PREPARED.items():
        answers[column] = _answer(request, seconds)
        torch.save(answers, f"{path}.part")
        os.replace(f"{path}.part", path)
