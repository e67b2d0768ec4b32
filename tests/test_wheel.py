"""The installed package carries what it reads: a wheel, installed without the repository and
with every outside connection refused, shows the glossary, draws the diagrams and runs 00_setup.

This is how Colab uses the course (``%pip install`` from the repository builds a wheel; no clone
sits beside the notebook). The wheel is built from a copy of the project files, offline
(``--no-build-isolation``: this environment's setuptools builds it). It goes into a bare venv
whose only other path is this environment's site-packages (a ``.pth`` line, which does not
process the editable install's own ``.pth``), so ``transformer_course`` can only come from the
wheel. The venv's ``sitecustomize.py`` is the course's network guard
(``transformer_course.exercises.grading.offline``), which also logs every refused attempt: a fetch that a library
caught and recovered from still fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from transformer_course.exercises.grading import offline

REPO = Path(__file__).resolve().parents[1]
#: What building the wheel needs from the project (pyproject's readme is README.md;
#: transformer_course/i18n/locale links to locale/, whose compiled catalogs the wheel carries).
PROJECT_FILES = ["pyproject.toml", "README.md", "GLOSSARY.md", "locale"]


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (
        f"{command[:4]} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("project")
    for name in PROJECT_FILES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name)
        else:
            shutil.copy(REPO / name, source / name)
    # symlinks=True keeps transformer_course/glossary/GLOSSARY.md a link, as in the repository.
    shutil.copytree(
        REPO / "lib",
        source / "lib",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    out = tmp_path_factory.mktemp("wheel")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"]
        + ["--no-build-isolation", "--wheel-dir", str(out), str(source)]
    )
    (path,) = out.glob("transformer_course-*.whl")
    return path


@pytest.fixture(scope="module")
def offline_venv(tmp_path_factory, wheel) -> Path:
    """A venv holding only the course wheel and the network guard; the dependencies (torch,
    pandas, ipykernel…) come from this environment's site-packages through a ``.pth`` line."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    (purelib / "course_dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    _run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
        + ["--target", str(purelib), str(wheel)]
    )
    offline.write_sitecustomize(purelib)
    return venv


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no checkout's lib/
    env[offline.BLOCKED_LOG_ENV_VAR] = str(tmp_path / "blocked.log")
    # The corpus and the tiktoken cache are the learner's data, not the package's: the tests
    # get them from the environment (.ci/run), as everywhere else.
    return env


def _python_offline(venv: Path, tmp_path: Path, code: str, timeout: int = 120):
    """``code`` run by the offline venv's Python with the guard on, in ``tmp_path`` (not the
    checkout: nothing beside the process to read)."""
    command = [str(venv / "bin" / "python"), "-c", code]
    return _run(command, env=_offline_env(tmp_path), cwd=tmp_path, timeout=timeout)


def _blocked(tmp_path: Path) -> str:
    log = tmp_path / "blocked.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_the_wheel_holds_the_glossary_file_not_the_link(wheel):
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("transformer_course/glossary/GLOSSARY.md").decode("utf-8")
    assert text == (REPO / "GLOSSARY.md").read_text(encoding="utf-8")


def test_the_wheel_holds_the_chinese_catalog_and_font_not_the_notebook_catalogs(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        mo = archive.read("transformer_course/i18n/locale/zh_CN/LC_MESSAGES/transformer_course.mo")
    assert mo == (REPO / "locale/zh_CN/LC_MESSAGES/transformer_course.mo").read_bytes()
    for font in ("course-cjk-regular.otf", "course-cjk-bold.otf", "OFL.txt"):
        assert f"transformer_course/diagrams/fonts/{font}" in names
    assert not [n for n in names if n.endswith(".po")]  # translators' files stay in the repository


def test_the_wheel_holds_the_chinese_sample_of_01b(wheel):
    """01b's bytes per token on Chinese text reads ``zh_sample.txt`` beside its module."""
    name = "transformer_course/tokenizer/byte_level/zh_sample.txt"
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(name).decode("utf-8")
    assert text == (REPO / "lib" / name).read_text(encoding="utf-8")


def test_chinese_feedback_and_roadmap_from_the_wheel_offline(offline_venv, tmp_path):
    code = (
        "import json\n"
        "from transformer_course.notebook import setup_notebook\n"
        "from transformer_course.exercises import NOT_ANSWERED, Feedback\n"
        "from transformer_course.diagrams.roadmap import roadmap_strip\n"
        "from transformer_course.diagrams.base import render\n"
        "setup_notebook(seed=0, lang='zh')\n"
        "print(json.dumps({'verdict': str(Feedback(False, 'x', answered=False)),\n"
        "                  'png': len(render(roadmap_strip('07', lang='zh'), 'png'))}))\n"
    )
    env_code = f"import os; os.environ['TRANSFORMER_COURSE_I18N_STRICT'] = '1'\n{code}"
    result = _python_offline(offline_venv, tmp_path, env_code)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["verdict"].startswith("✏️  尚未作答"), report
    assert report["png"] > 10_000
    assert "findfont" not in result.stderr  # the Chinese glyphs came from the packaged font


def test_the_guard_refuses_outside_connections_and_logs_them(offline_venv, tmp_path):
    code = (
        "import urllib.request\n"
        "try:\n"
        "    urllib.request.urlopen('http://192.0.2.1/', timeout=5)\n"
        "except OSError as error:\n"
        "    print('refused:', error)\n"
    )
    result = _python_offline(offline_venv, tmp_path, code)
    assert "network access is blocked here" in result.stdout
    assert "192.0.2.1" in _blocked(tmp_path)


def test_glossary_and_diagrams_from_the_wheel_offline(offline_venv, tmp_path):
    code = (
        "import json, transformer_course\n"
        "from transformer_course import diagrams, glossary\n"
        "from transformer_course.diagrams.base import render\n"
        "table = glossary.glossary_table()\n"
        "pngs = {name: len(render(draw(), 'png')) for name, draw in diagrams.all_diagrams().items()}\n"
        "shown = diagrams.show('gpt_overview')\n"
        "print(json.dumps({'file': transformer_course.__file__, 'terms': len(table),\n"
        "                  'pngs': pngs, 'shown': len(shown.data)}))\n"
    )
    result = _python_offline(offline_venv, tmp_path, code)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).is_relative_to(offline_venv), report["file"]
    expected_terms = (REPO / "GLOSSARY.md").read_text(encoding="utf-8").count("\n|") - 2
    assert report["terms"] == expected_terms >= 80
    assert report["pngs"] and all(size > 1000 for size in report["pngs"].values()), report["pngs"]
    assert report["shown"] > 1000
    assert _blocked(tmp_path) == ""


def test_00_setup_runs_from_the_wheel_offline(offline_venv, tmp_path):
    """Every code cell of 00 in a kernel of the offline venv, in a folder with no checkout, run
    by the course's own notebook runner as the wheel installs it (what the Colab stage uses)."""
    shutil.copy(REPO / "notebooks" / "00_setup.ipynb", tmp_path / "00_setup.ipynb")
    runner = (
        "import nbformat\n"
        "from transformer_course.exercises.notebook_runner import run_notebook\n"
        "nb = nbformat.read('00_setup.ipynb', as_version=4)\n"
        "probe = 'import sys, transformer_course; print(sys.executable, transformer_course.__file__)'\n"
        "nb.cells.append(nbformat.v4.new_code_cell(probe))\n"
        "run_notebook(nb, timeout=300, cwd='.')  # a cell that raises fails this process\n"
        "print('kernel:', nb.cells[-1].outputs[0]['text'])\n"
    )
    result = _python_offline(offline_venv, tmp_path, runner, timeout=300)
    executable, library = result.stdout.split("kernel:")[1].split()
    assert Path(executable).parent == offline_venv / "bin", executable
    assert Path(library).is_relative_to(offline_venv), library
    assert _blocked(tmp_path) == ""


def test_the_guard_names_its_log_variable_once():
    guard = offline.GUARD_FILE.read_text(encoding="utf-8")
    assert f'BLOCKED_LOG_ENV_VAR = "{offline.BLOCKED_LOG_ENV_VAR}"' in guard
