"""The Colab path, as far as it can be tested without Colab.

Every notebook's setup cell is run here the way Colab runs it: IPython's own input
transformer turns ``%pip …`` into ``get_ipython().run_line_magic("pip", …)``, a fake shell
records that call instead of installing, and a simulated ``google.colab`` module makes the
cell believe it is in Colab. The install must be exactly the course library from the one
repository address, without extras and without anything that would upgrade Colab's torch,
numpy or ipywidgets (an upgrade forces a runtime restart); outside Colab nothing is
installed. The device follows what the runtime has (CUDA GPU, else CPU).

A notebook opened in Colab has no clone beside it: no ``../data``, ``../lib``, ``images/``.
The last tests check that no notebook reaches for files of a local clone (the corpus comes
through ``data.load_text()``, which downloads it in Colab) and that Markdown shows no image
by a relative path.
"""

from __future__ import annotations

import re
import shlex
import sys
import types
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
import torch
from IPython.core.inputtransformer2 import TransformerManager
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from transformer_course import REPOSITORY, machine
from transformer_course.notebook import colab_install_command

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]
#: What Colab preloads and the course must never upgrade (versions Colab ships today).
COLAB_PRELOADED = {"torch": "2.11.0", "numpy": "2.0.2", "ipywidgets": "7.7.1"}
UPGRADE_FLAGS = {
    "-U",
    "--upgrade",
    "--force-reinstall",
    "-I",
    "--ignore-installed",
    "--upgrade-strategy",
}


class FakeShell:
    """Stands in for ``get_ipython()``: records magics and shell commands instead of running them."""

    def __init__(self) -> None:
        self.magics: list[tuple[str, str]] = []
        self.system_calls: list[str] = []

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1) -> None:
        self.magics.append((name, line))

    def run_cell_magic(self, name: str, line: str, cell: str) -> None:
        self.magics.append((name, f"{line}\n{cell}"))

    def system(self, command: str) -> None:
        self.system_calls.append(command)

    getoutput = system


def _setup_cell(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code")


def run_setup_cell(path: Path, monkeypatch, *, colab: bool, cuda: bool = False, mps: bool = False):
    """Run a notebook's setup cell as Colab's IPython would; return the fake shell and namespace."""
    python = TransformerManager().transform_cell(_setup_cell(path))
    shell = FakeShell()
    if colab:
        # Only the submodule: a real ``google`` namespace package (protobuf) must stay importable.
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.delenv(machine.DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(machine, "_mps_available", lambda: mps)
    namespace = {"__name__": "__main__", "get_ipython": lambda: shell}
    exec(compile(python, f"<setup cell of {path.name}>", "exec"), namespace)
    return shell, namespace


@pytest.fixture(params=NOTEBOOKS, ids=IDS)
def notebook(request) -> Path:
    return request.param


def test_in_colab_the_setup_cell_installs_exactly_the_course(notebook, monkeypatch):
    shell, namespace = run_setup_cell(notebook, monkeypatch, colab=True)
    assert not shell.system_calls, f"shell commands in the setup cell: {shell.system_calls}"
    assert len(shell.magics) == 1, f"expected one %pip line, got {shell.magics}"
    name, line = shell.magics[0]
    assert name == "pip", f"install with %pip (the kernel's own pip), not %{name}"
    assert f"pip {line}" == colab_install_command(REPOSITORY), (
        "the install comes from colab_install_command"
    )

    words = shlex.split(line)
    assert words[0] == "install"
    flags = [w for w in words[1:] if w.startswith("-")]
    requirements = [w for w in words[1:] if not w.startswith("-")]
    assert not set(flags) & UPGRADE_FLAGS, f"{flags} would upgrade what Colab preloads"
    assert set(flags) <= {"--quiet", "-q"}, f"unexpected pip options {flags}"
    assert len(requirements) == 1, f"install the course only, not {requirements}"
    requirement = Requirement(requirements[0])
    assert canonicalize_name(requirement.name) == "transformer-course"
    assert requirement.url == f"git+{REPOSITORY}.git@main", (
        "install from the one repository address"
    )
    assert not requirement.extras, (
        "no extras in Colab: [lab]/[dev] would pull JupyterLab and test tools"
    )
    assert namespace["course"].in_colab


def test_outside_colab_nothing_is_installed(notebook, monkeypatch):
    shell, namespace = run_setup_cell(notebook, monkeypatch, colab=False)
    assert shell.magics == [] and shell.system_calls == []
    assert not namespace["course"].in_colab


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"),
    [(True, False, "cuda"), (False, False, "cpu"), (False, True, "mps"), (True, True, "cuda")],
    ids=["colab-gpu", "colab-cpu", "mps", "gpu-and-mps"],
)
def test_setup_cell_picks_the_device_the_runtime_has(notebook, monkeypatch, cuda, mps, expected):
    _, namespace = run_setup_cell(notebook, monkeypatch, colab=True, cuda=cuda, mps=mps)
    assert namespace["course"].device.type == expected
    assert namespace["device"] == namespace["course"].device, (
        "device = course.device in the setup cell"
    )


def test_the_environment_variable_overrides_the_device(monkeypatch):
    monkeypatch.setenv(machine.DEVICE_ENV_VAR, "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert machine.pick_device().type == "cpu"


def _core_requirements() -> list[Requirement]:
    """What ``pip install transformer-course`` (no extras) asks for, from the installed metadata."""
    return [
        Requirement(r) for r in metadata.requires("transformer-course") or [] if "extra ==" not in r
    ]


def _walk(requirements: list[Requirement], seen: set[str]):
    environment = default_environment()
    environment["extra"] = ""
    for requirement in requirements:
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        yield requirement
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            below = [Requirement(r) for r in metadata.requires(name) or []]
        except metadata.PackageNotFoundError:
            continue
        yield from _walk(below, seen)


def test_colab_preloaded_versions_satisfy_every_requirement_on_them():
    """pip's default strategy upgrades a package only when a requirement rejects its version.

    Walk the course's dependency tree (as installed here) and check that each requirement on
    torch, numpy or ipywidgets accepts the version Colab preloads.
    """
    checked = []
    for requirement in _walk(_core_requirements(), set()):
        name = canonicalize_name(requirement.name)
        if name in COLAB_PRELOADED:
            checked.append(f"{requirement}")
            assert requirement.specifier.contains(
                Version(COLAB_PRELOADED[name]), prereleases=True
            ), (
                f"'{requirement}' would upgrade Colab's {name} {COLAB_PRELOADED[name]} (forces a restart)"
            )
    assert any(c.startswith("torch") for c in checked) and any(
        c.startswith("ipywidgets") for c in checked
    )


# --- nothing from a local clone ------------------------------------------------------------
CLONE_PATH = re.compile(
    r"""["'](?:\.\.?/)*(?:data|lib|images|notebooks|tests|tools|build|benchmarks)/"""
)
FILE_READERS = re.compile(
    # /proc is the operating system's (Colab's too), not a file of a local clone.
    r"""\b(?:open|read_text|read_bytes|read_csv|read_json|read_parquet|imread|np\.load|torch\.load|load_text)\(\s*(?:[rbf]*["'])(?!/proc/)"""
)
RELATIVE_IMAGE = re.compile(
    r"""!\[[^\]]*\]\((?!https?://|data:)(?P<md>[^)\s]+)|<img[^>]+src=["'](?!https?://|data:)(?P<html>[^"']+)"""
)


def _code_cells(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_no_notebook_reaches_into_a_local_clone(notebook):
    problems = []
    for source in _code_cells(notebook):
        for line in source.splitlines():
            code = line.split("#", 1)[0] if not line.lstrip().startswith("%") else line
            if "../" in code or CLONE_PATH.search(code):
                problems.append(f"a path into the clone: {line.strip()}")
            if re.search(r"\bsys\.path\.(insert|append)|\bos\.chdir\(|^\s*%cd\b", code):
                problems.append(f"changes the import path or folder: {line.strip()}")
            if FILE_READERS.search(code):
                problems.append(
                    f"reads a file by a literal path (use data.load_text()): {line.strip()}"
                )
    assert not problems, f"{notebook.name} would fail in Colab:\n" + "\n".join(problems)


def test_markdown_images_are_not_relative(notebook):
    nb = nbformat.read(notebook, as_version=4)
    found = [
        m["md"] or m["html"]
        for c in nb.cells
        if c.cell_type == "markdown"
        for m in RELATIVE_IMAGE.finditer(c.source)
        if not (m["md"] or m["html"] or "").startswith("attachment:")
    ]
    assert not found, f"{notebook.name}: Colab cannot show images by a relative path: {found}"


def test_corpus_is_loaded_through_the_library(notebook):
    """Whoever needs the corpus text asks ``data.load_text()`` (cache, env var or download)."""
    sources = "\n".join(_code_cells(notebook))
    if re.search(r"sales_textbook", sources):
        assert "load_text(" in sources, (
            f"{notebook.name} names the corpus file but does not call load_text()"
        )
