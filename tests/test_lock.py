"""requirements/lock.txt: the versions CI and ``make test`` install, inside pyproject.toml's ranges.

Learners who ``pip install`` the course get pyproject.toml's ranges; CI and ``make test`` install
every package at the version the lock pins (``pip install -c requirements/lock.txt``), so a new
release of a dependency cannot turn main red until ``make lock`` takes it on purpose. These tests
keep the two files honest with each other: the lock covers every requirement of the project and
its extras, each pinned version is inside the project's range, and torch, which
``tools/choose_torch.py`` installs (CPU or CUDA build), is left out of the lock and pinned for CI
in ``requirements/torch.txt``.
"""

from __future__ import annotations

import os
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import tomllib
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements" / "lock.txt"
TORCH_PIN = REPO / "requirements" / "torch.txt"
COLAB_PINS = REPO / "tests" / "colab" / "colab-pins.txt"
COLAB_LOCK = REPO / "tests" / "colab" / "colab-lock.txt"


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def project_requirements() -> list[Requirement]:
    project = _pyproject()["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        found += [Requirement(r) for r in extra]
    return found


def read_pins(path: Path) -> list[Requirement]:
    """The ``name==version ; marker`` lines of a pip requirements file (comments dropped)."""
    pins = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            pins.append(Requirement(line))
    return pins


def pinned_version(requirement: Requirement) -> Version:
    (spec,) = requirement.specifier
    assert spec.operator == "==", f"{requirement} is not an exact pin"
    return Version(spec.version)


LOCKED = read_pins(LOCK)


def test_every_line_of_the_lock_is_an_exact_pin():
    assert len(LOCKED) > 100, "the lock should hold the whole environment, dependencies included"
    for requirement in LOCKED:
        pinned_version(requirement)


def test_every_project_requirement_is_locked_inside_its_range():
    by_name: dict[str, list[Requirement]] = {}
    for pin in LOCKED:
        by_name.setdefault(canonicalize_name(pin.name), []).append(pin)
    problems = []
    for requirement in project_requirements():
        name = canonicalize_name(requirement.name)
        if name == "torch":
            continue
        pins = by_name.get(name)
        if not pins:
            problems.append(f"{requirement.name} is not in the lock")
            continue
        for pin in pins:
            if not requirement.specifier.contains(pinned_version(pin), prereleases=True):
                problems.append(f"lock pins {pin} outside pyproject.toml's {requirement}")
    assert not problems, "run `make lock`:\n" + "\n".join(problems)


def test_the_lock_was_made_for_every_extra():
    """``make lock`` resolves the project with all its extras (lab, dev, docs)."""
    header = LOCK.read_text(encoding="utf-8").split("\n\n", 1)[0]
    command = re.search(r"uv pip compile .*", header)
    assert command, "the lock's header names the command that made it"
    for extra in _pyproject()["project"]["optional-dependencies"]:
        assert f"--extra {extra}" in command.group(0), f"the lock leaves out the {extra} extra"
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "uv pip compile pyproject.toml" in makefile and "lock:" in makefile


def test_torch_is_chosen_by_the_machine_and_pinned_for_ci():
    assert "torch" not in {canonicalize_name(p.name) for p in LOCKED}, (
        "tools/choose_torch.py installs torch (CPU or CUDA build): the lock must not pin it"
    )
    (pin,) = read_pins(TORCH_PIN)
    (torch_range,) = [r for r in project_requirements() if r.name == "torch"]
    assert torch_range.specifier.contains(pinned_version(pin))
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "requirements/torch.txt" in ci, (
        ".ci/run takes its TORCH_SPEC from requirements/torch.txt"
    )


@pytest.mark.skipif(
    not os.environ.get("COURSE_LOCK"),
    reason="only in an environment built from the lock (make test sets COURSE_LOCK)",
)
def test_this_environment_is_the_locked_one():
    """What ``make test`` runs on is what the lock says, package by package."""
    lock = REPO / os.environ["COURSE_LOCK"]
    environment = default_environment()
    wrong = []
    for pin in read_pins(lock):
        if pin.marker is not None and not pin.marker.evaluate(environment):
            continue
        try:
            installed = Version(version(pin.name))
        except PackageNotFoundError:
            continue  # the lock constrains versions; it never adds a package (pip -c)
        if installed != pinned_version(pin):
            wrong.append(f"{pin.name}: installed {installed}, locked {pinned_version(pin)}")
    assert not wrong, "rebuild the environment (make clean-env test):\n" + "\n".join(wrong)


def test_the_colab_lock_keeps_every_colab_pin():
    """The Colab stage's lock fixes the rest of that environment, never one of Colab's own pins."""
    pins = {canonicalize_name(p.name): p for p in read_pins(COLAB_PINS)}
    locked: dict[str, list[Requirement]] = {}
    for pin in read_pins(COLAB_LOCK):
        locked.setdefault(canonicalize_name(pin.name), []).append(pin)
    for name, pin in pins.items():
        assert name in locked, f"{pin} is missing from {COLAB_LOCK.name}: run `make lock`"
        for entry in locked[name]:
            assert pinned_version(entry) == pinned_version(pin), (
                f"{COLAB_LOCK.name} has {entry}, Colab preloads {pin}: run `make lock`"
            )
    assert "torch" not in locked
