"""The Colab-pinned stage of CI (``make test-colab``), run with the Colab environment's Python.

    python tests/colab/colab_stage.py install                  # the course, as the Colab cell does
    python tests/colab/colab_stage.py notebooks                # the English notebooks, offline
    python tests/colab/colab_stage.py notebooks --editions en,zh   # and the Chinese ones

``install`` checks that the environment holds exactly the pins of ``colab-pins.txt``, installs
the course with the command of the notebooks' Colab cell (``notebook.colab_install_command``),
the checkout standing in for the GitHub address, and fails if pip changed any package that was
installed before (what Colab preloads must survive the install: an upgrade forces a restart).

``notebooks`` runs every ``notebooks/NN_*.ipynb`` in a kernel of this environment, each copy
alone in a fresh folder as in Colab (no clone beside it), with every outside connection refused
(``transformer_course.exercises.grading.offline``), and prints each notebook's time. It runs them
with the course's own runner (``transformer_course.exercises.notebook_runner``, from the installed
package), whose kernel client carries the polling fix Colab's jupyter_client needs. Outputs are
not compared (that is nbval's job in ``make test``): a notebook passes when no cell raises.

Only the English edition by default. A Chinese notebook's code cells are its English one's but
for the set-up lines that ask for Chinese (32 of the course's 415 code cells), so the Colab
environment runs the same code either way; and ``make test`` already runs every Chinese notebook
under strict nbval (``TRANSFORMER_COURSE_I18N_STRICT``: a library sentence without its Chinese
fails the cell). Running them here again doubled the stage's time to catch only a Chinese-only
failure of those set-up lines that Colab's pinned packages alone would cause. ``--editions en,zh``
(or ``zh``) runs the Chinese copies too, strict as well.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINS = Path(__file__).with_name("colab-pins.txt")
#: The course's editions and their notebooks' folders (``--editions``; the default is ``en``).
EDITIONS = {"en": "notebooks", "zh": "notebooks/zh"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path = PINS) -> dict[str, str]:
    """``name -> version`` of the ``name==version`` lines (comments and blanks skipped)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[_normal(name)] = version.strip()
    return pins


def installed() -> dict[str, str]:
    """``name -> version`` of every distribution in this environment (``pip freeze``'s view)."""
    from importlib import metadata

    return {_normal(d.metadata["Name"]): d.version for d in metadata.distributions()}


def colab_command() -> list[str]:
    """The notebooks' Colab install line, with this checkout instead of the GitHub address."""
    sys.path.insert(0, str(REPO / "lib"))
    try:
        from transformer_course import REPOSITORY
        from transformer_course.notebook import colab_install_command
    finally:
        sys.path.remove(str(REPO / "lib"))
    words = shlex.split(colab_install_command(REPOSITORY))
    (source,) = [i for i, w in enumerate(words) if w.startswith("transformer-course @ git+")]
    words[source] = f"transformer-course @ {REPO.as_uri()}"
    assert words[0] == "pip", words
    return [sys.executable, "-m", *words]


def install() -> int:
    pins, before = read_pins(), installed()
    wrong = {n: (v, before.get(n)) for n, v in pins.items() if before.get(n) != v}
    if wrong:
        print(f"error: the environment does not hold Colab's pins: {wrong} (pin, installed)")
        return 1
    subprocess.run(
        [sys.executable, "-m", "pip", "uninstall", "--quiet", "--yes", "transformer-course"],
        check=False,
        capture_output=True,
    )
    before = installed()
    command = colab_command()
    print("$", shlex.join(command))
    subprocess.run(command, check=True)
    after = installed()
    changed = {n: (v, after.get(n)) for n, v in before.items() if after.get(n) != v}
    added = sorted(f"{n}=={after[n]}" for n in after.keys() - before.keys())
    print(f"added: {', '.join(added)}")
    if changed:
        print(f"error: the course's install changed preloaded packages (before, after): {changed}")
        return 1
    print(
        f"no preloaded package changed ({len(before)} packages, {len(pins)} of them Colab's pins)"
    )
    return 0


def _run_one(path: str, timeout: int) -> tuple[str, float, str]:
    from nbclient.exceptions import CellExecutionError

    from transformer_course.exercises.grading import offline
    from transformer_course.exercises.notebook_runner import run_notebook

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="colab-nb-") as folder:
        copy = Path(folder) / Path(path).name
        shutil.copy(path, copy)
        guard = Path(folder) / ".guard"
        offline.write_sitecustomize(guard)
        # The network guard first on the kernel's path: outside connections are refused, as
        # the offline machines refuse them (the notebooks must work offline in Colab too).
        python_path = os.pathsep.join(filter(None, [str(guard), os.environ.get("PYTHONPATH")]))
        env = dict(os.environ, PYTHONPATH=python_path, TRANSFORMER_COURSE_I18N_STRICT="1")
        try:
            run_notebook(copy, timeout=timeout, env=env)
            error = ""
        except CellExecutionError as exc:
            error = str(exc).strip().splitlines()[-1]
        except Exception as exc:  # noqa: BLE001 - a time-out or a dead kernel fails the notebook too
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return str(Path(path).relative_to(REPO / "notebooks")), time.monotonic() - start, error


def notebook_paths(editions: list[str]) -> list[str]:
    """The course notebooks of each edition (``en``: ``notebooks/``, ``zh``: ``notebooks/zh``)."""
    return [
        str(path)
        for edition in editions
        for path in sorted((REPO / EDITIONS[edition]).glob("[0-9][0-9]*.ipynb"))
    ]


def notebooks(jobs: int, timeout: int, editions: list[str]) -> int:
    import transformer_course

    if Path(transformer_course.__file__).is_relative_to(REPO / "lib"):
        print(f"error: transformer_course comes from the checkout ({transformer_course.__file__}), "
              "not from the installed package; unset PYTHONPATH")  # fmt: skip
        return 1
    paths = notebook_paths(editions)
    start, failed = time.monotonic(), []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, seconds, error in pool.map(_run_one, paths, [timeout] * len(paths)):
            print(
                f"{name:32s} {seconds:7.1f} s  {'FAILED: ' + error if error else 'ok'}", flush=True
            )
            if error:
                failed.append(name)
    print(f"{len(paths) - len(failed)} of {len(paths)} notebooks ({','.join(editions)}) ran in the "
          f"Colab-pinned environment ({time.monotonic() - start:.0f} s, {jobs} at a time)")  # fmt: skip
    return 1 if failed else 0


def editions_option(text: str) -> list[str]:
    """``--editions``' value: a comma-separated list of ``EDITIONS``' keys, in the order given."""
    editions = [word.strip() for word in text.split(",") if word.strip()]
    unknown = [edition for edition in editions if edition not in EDITIONS]
    if unknown or not editions:
        raise argparse.ArgumentTypeError(
            f"unknown edition(s) {unknown or text!r}: choose from {', '.join(EDITIONS)}"
        )
    return list(dict.fromkeys(editions))


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=("install", "notebooks"))
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds one cell may run")
    parser.add_argument(
        "--editions",
        type=editions_option,
        default=["en"],
        help="which notebooks to run: en (notebooks/, the default), zh (notebooks/zh), or en,zh",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.stage == "install":
        return install()
    return notebooks(args.jobs, args.timeout, args.editions)


if __name__ == "__main__":
    sys.exit(main())
