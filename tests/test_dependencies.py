"""pyproject.toml is the one list of packages: environment.yml installs the project with every extra
and the same Python range, and the ranges accept what Colab ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip(
    "tomllib"
)  # Python 3.11+; the check needs to run once, not everywhere

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _environment_pip_lines() -> list[str]:
    lines, inside = [], False
    for raw in (REPO / "environment.yml").read_text(encoding="utf-8").splitlines():
        if raw.strip() == "- pip:":
            inside = True
            continue
        if inside:
            match = re.match(r"^\s+- (.+)$", raw)
            if not match:
                break
            lines.append(match.group(1).strip())
    return lines


def _requirements() -> set[str]:
    project = _pyproject()["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements.extend(extra)
    return {r.replace(" ", "") for r in requirements}


def test_environment_lists_nothing_but_the_project():
    """A second list of packages would drift from pyproject.toml's; pip reads that one."""
    pip_lines = _environment_pip_lines()
    assert len(pip_lines) == 1 and pip_lines[0].startswith("-e ."), pip_lines


def test_environment_installs_the_project_with_every_extra():
    extras = set(_pyproject()["project"]["optional-dependencies"])
    editable = [line for line in _environment_pip_lines() if line.startswith("-e")]
    assert len(editable) == 1
    named = set(re.search(r"\[(.*)\]", editable[0]).group(1).split(","))
    assert named == extras


def test_python_range_is_the_same():
    requires = _pyproject()["project"]["requires-python"].replace(" ", "")
    text = (REPO / "environment.yml").read_text(encoding="utf-8")
    assert f"python{requires}" in text.replace(" ", "")


def test_course_packages_are_declared_with_ranges_not_pins():
    names = {re.split(r"[<>=!~\[]", r)[0].lower() for r in _requirements()}
    for needed in [
        "torch",
        "tiktoken",
        "datasets",
        "pandas",
        "matplotlib",
        "seaborn",
        "ipywidgets",
        "jupyterlab",
        "nbval",
        "tqdm",
        "pytest",
        "hypothesis",
        "ruff",
    ]:
        assert needed in names, f"{needed} is not declared"
    assert not [r for r in _requirements() if "==" in r], "use ranges, not exact pins"


def test_floors_accept_what_colab_ships():
    # Colab preloads these; a floor above them would upgrade and force a runtime restart.
    colab = {"torch": (2, 11), "ipywidgets": (7, 7)}
    for requirement in _requirements():
        name = re.split(r"[<>=!~\[]", requirement)[0].lower()
        if name in colab:
            floor = re.search(r">=(\d+)\.(\d+)", requirement)
            assert floor and (int(floor[1]), int(floor[2])) <= colab[name], requirement
