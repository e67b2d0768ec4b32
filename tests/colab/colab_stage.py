"""The Colab-pinned stage of CI (``make test-colab``), run with the Colab environment's Python.

    python tests/colab/colab_stage.py install      # the course, as the notebooks' Colab cell does
    python tests/colab/colab_stage.py notebooks    # every notebook top to bottom, offline

``install`` checks that the environment holds exactly the pins of ``colab-pins.txt``, installs
the course with the command of the notebooks' Colab cell (``notebook.colab_install_command``),
the checkout standing in for the GitHub address, and fails if pip changed any package that was
installed before (what Colab preloads must survive the install: an upgrade forces a restart).

``notebooks`` runs every ``notebooks/NN_*.ipynb`` and its Chinese copy ``notebooks/zh/NN_*.ipynb``
(strict: a library sentence without its Chinese fails the notebook) in a kernel of this environment, each copy
alone in a fresh folder as in Colab (no clone beside it), with every outside connection refused
(``transformer_course.exercises.grading.offline``), and prints each notebook's time. Outputs are not compared
(that is nbval's job in ``make test``): a notebook passes when no cell raises.
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


def _sliced_poll_kernel_manager() -> type:
    """A kernel manager whose client looks for the kernel's messages every half second.

    nbclient waits for a cell's reply with one poll of the shell socket that lasts the cell's
    whole time-out. With Colab's jupyter_client 7.4.9 and a current pyzmq, that poll can miss the
    wake-up of a reply that has already arrived and see it only when the time-out ends
    (jupyter/nbclient#312, a cell that shows a widget). On this 2-core machine under load, the
    cell after a widget started one whole time-out late (45 s with ``--timeout 45``; with the
    default 1200 s the stage looked hung). Polling in half-second slices bounds that wait; a cell
    that really runs past its time-out still fails.
    """
    from queue import Empty

    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Type, default

    # jupyter_client 7 calls its async channel ZMQSocketChannel, 8 AsyncZMQSocketChannel.
    AsyncChannel = AsyncKernelClient.class_traits()["shell_channel_class"].default_value

    class SlicedPollChannel(AsyncChannel):
        async def get_msg(self, timeout: float | None = None) -> dict:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = 0.5 if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    return await super().get_msg(timeout=min(0.5, left))
                except Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise

    class SlicedPollClient(AsyncKernelClient):
        shell_channel_class = Type(SlicedPollChannel)
        iopub_channel_class = Type(SlicedPollChannel)

    class SlicedPollKernelManager(AsyncKernelManager):
        @default("client_factory")
        def _client_factory_default(self) -> type:
            return SlicedPollClient

    return SlicedPollKernelManager


def _run_one(path: str, timeout: int) -> tuple[str, float, str]:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from transformer_course.exercises.grading import offline

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="colab-nb-") as folder:
        copy = Path(folder) / Path(path).name
        shutil.copy(path, copy)
        guard = Path(folder) / ".guard"
        offline.write_sitecustomize(guard)
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(guard), os.environ.get("PYTHONPATH", "")]),
            TRANSFORMER_COURSE_I18N_STRICT="1",
        )
        notebook = nbformat.read(copy, as_version=4)
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            kernel_manager_class=_sliced_poll_kernel_manager(),
            resources={"metadata": {"path": folder}},
        )
        try:
            client.execute(env=env)
            error = ""
        except CellExecutionError as exc:
            error = str(exc).strip().splitlines()[-1]
        except Exception as exc:  # noqa: BLE001 - a time-out or a dead kernel fails the notebook too
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return str(Path(path).relative_to(REPO / "notebooks")), time.monotonic() - start, error


def notebooks(jobs: int, timeout: int) -> int:
    import transformer_course

    if Path(transformer_course.__file__).is_relative_to(REPO / "lib"):
        print(f"error: transformer_course comes from the checkout ({transformer_course.__file__}), "
              "not from the installed package; unset PYTHONPATH")  # fmt: skip
        return 1
    paths = [
        str(p)
        for folder in ("notebooks", "notebooks/zh")
        for p in sorted((REPO / folder).glob("[0-9][0-9]*.ipynb"))
    ]
    start, failed = time.monotonic(), []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, seconds, error in pool.map(_run_one, paths, [timeout] * len(paths)):
            print(
                f"{name:32s} {seconds:7.1f} s  {'FAILED: ' + error if error else 'ok'}", flush=True
            )
            if error:
                failed.append(name)
    print(f"{len(paths) - len(failed)} of {len(paths)} notebooks ran in the Colab-pinned "
          f"environment ({time.monotonic() - start:.0f} s, {jobs} at a time)")  # fmt: skip
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=("install", "notebooks"))
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds one cell may run")
    args = parser.parse_args()
    if args.stage == "install":
        return install()
    return notebooks(args.jobs, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
