"""The Colab pins (tests/colab/colab-pins.txt) are well formed and the project accepts them.

``make test-colab`` builds an environment from the pins and runs the notebooks in it; this test
runs in ``make test`` and catches, without building anything, a refreshed list that the project
would refuse: Colab's Python outside ``requires-python`` (Colab moving to 3.14 while the project
says ``<3.14``), or a preloaded version outside a dependency's range (pip would then upgrade it
in Colab, which forces a runtime restart).
"""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "tests" / "colab" / "colab-pins.txt"


def _pins() -> dict[str, str]:
    pins = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_pins_name_their_source_and_colab_python():
    text = PINS.read_text(encoding="utf-8")
    assert "googlecolab/backend-info" in text and re.search(r"# python: 3\.\d+", text)
    assert len(_pins()) >= 15


def test_requires_python_admits_colab_python():
    colab_python = re.search(r"# python: (3\.\d+)", PINS.read_text(encoding="utf-8")).group(1)
    requires = SpecifierSet(_project()["requires-python"])
    assert requires.contains(f"{colab_python}.0"), (
        f"Colab runs Python {colab_python} but pyproject.toml's requires-python is {requires}: "
        "Colab's pip would refuse the course; widen it (and environment.yml's python)"
    )


def test_every_preloaded_version_satisfies_the_project_ranges():
    pins = _pins()
    for line in _project()["dependencies"]:
        requirement = Requirement(line)
        version = pins.get(canonicalize_name(requirement.name))
        if version is not None:
            assert requirement.specifier.contains(version, prereleases=True), (
                f"Colab preloads {requirement.name}=={version}, outside {requirement}: "
                "installing the course in Colab would replace it"
            )
