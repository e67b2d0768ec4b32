"""Pick and install the right PyTorch build for this machine (called by the Makefile).

Why a script: on Linux, PyPI's ``torch`` is the CUDA build (about 2.7 GB of wheels, a 6 GB
``.venv``) even on a machine without a GPU; PyTorch's own CPU index serves a ~200 MB wheel.
The decision is made by pure functions (``Machine`` -> ``Plan``) that the tests call with
made-up machines; only ``detect_machine``, ``index_reachable`` and ``main`` touch the system.

    python tools/choose_torch.py plan [--torch auto|cpu|cuda] [--spec "torch==2.13.0"] [--index URL]
    .venv/bin/python tools/choose_torch.py install --venv .venv [--torch ...] [--spec ...] [--index URL]
    python tools/choose_torch.py check --venv .venv [--torch ...] [--spec ...]

``--index`` (the Makefile's ``TORCH_INDEX``, or the environment variable itself) names a mirror of
PyTorch's CPU index, for networks where download.pytorch.org is slow or blocked. When the CPU
index does not answer, ``install`` stops and says how to choose (a mirror, or ``TORCH=cuda`` for
pip's own ~2.7 GB CUDA build): it never falls back to the CUDA build on its own.

``install`` runs pip with the interpreter that runs it (so call it with the venv's python) and
records the choice in ``<venv>/.torch``; ``check`` refuses (exit 2, with the command that
fixes it) when an explicitly requested choice differs from the recorded one. Standard library
only: it runs before anything is installed. Introduced by the README's "Two commands".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: A mirror of CPU_INDEX (README.zh-CN.md lists some); the Makefile passes TORCH_INDEX as --index.
INDEX_ENV_VAR = "TORCH_INDEX"
CHOICES = ("auto", "cpu", "cuda")
RECORD_NAME = ".torch"
#: Seconds to wait for the CPU index before falling back: a blocked host must cost seconds,
#: not pip's retries (pip's default-timeout is 180 s on some machines, times 5 retries).
PROBE_TIMEOUT_S = 5.0

# What each choice downloads and what the whole .venv (course + JupyterLab + dev tools) weighs.
# Measured on Linux x86-64, CPython 3.11 (see the README section "Which PyTorch").
SIZE_NOTE = {
    "cpu": "the CPU build: a ~190 MB download, .venv about 1.8 GB in all",
    "cuda": "the CUDA build: ~2.7 GB of wheels (torch, triton, nvidia-*), .venv about 6 GB",
    "macos": "the macOS build (CPU + Apple's MPS GPU)",
    "pip": "the build pip resolves (on Linux, PyPI's is the CUDA one: ~2.7 GB)",
}
#: Systems whose PyPI wheel is a CPU build (macOS's includes MPS): its size note, and what to
#: do when TORCH=cuda is asked for there.
NO_CUDA = {
    "Darwin": (
        SIZE_NOTE["macos"],
        "TORCH=cuda: PyTorch has no CUDA build for macOS; use TORCH=cpu "
        "(the macOS build includes Apple's MPS GPU backend)",
    ),
    "Windows": (
        SIZE_NOTE["cpu"],
        "TORCH=cuda on native Windows: run the course in WSL (README: Two commands), "
        "or install the CUDA build that https://pytorch.org/get-started/locally/ names",
    ),
}


@dataclass(frozen=True)
class Machine:
    """What decides the build: ``platform.system()``, WSL or not, an NVIDIA driver or not."""

    system: str  # "Linux", "Darwin", "Windows"
    wsl: bool = False
    nvidia: bool = False


@dataclass(frozen=True)
class Plan:
    """How to install torch: ``pip install <requirement> [--index-url index]``.

    ``backend`` is what was chosen ("cpu", "cuda", "pip": whatever pip's own index gives);
    ``fallback`` is True when the CPU index was wanted but could not be reached.
    """

    backend: str
    requirement: str
    index: str | None
    note: str
    fallback: bool = False

    def pip_args(self) -> list[str]:
        """The arguments after ``python -m pip``."""
        args = ["install", "--quiet", self.requirement]
        if self.index:
            # --index-url replaces PyPI for torch's own wheels; its dependencies
            # (sympy, networkx, ...) are mirrored on the PyTorch index too.
            args += ["--index-url", self.index]
        return args


def detect_machine() -> Machine:
    """This machine: OS, WSL (its kernel names Microsoft), and an NVIDIA driver or tool."""
    system = platform.system()
    release = platform.release().lower()
    wsl = system == "Linux" and ("microsoft" in release or "WSL_DISTRO_NAME" in os.environ)
    nvidia = bool(
        shutil.which("nvidia-smi")
        or Path("/proc/driver/nvidia/version").exists()
        or Path("/usr/lib/wsl/lib/nvidia-smi").exists()  # WSL's GPU passthrough
    )
    return Machine(system=system, wsl=wsl, nvidia=nvidia)


def choose(machine: Machine, torch: str = "", spec: str = "") -> Plan:
    """The install plan for ``machine`` given ``TORCH`` (auto/cpu/cuda/"") and ``TORCH_SPEC``.

    ``TORCH_SPEC`` alone installs exactly that requirement through pip's own configuration
    (CI's local CPU wheel); with ``TORCH=cpu`` it is taken from the CPU index instead.
    """
    torch = (torch or "").strip().lower()
    spec = (spec or "").strip()
    if torch and torch not in CHOICES:
        raise ValueError(f"TORCH={torch!r}: use one of {', '.join(CHOICES)} (or leave it unset)")
    requirement = spec or "torch"
    if spec and not torch:
        return Plan("pip", requirement, None, f"TORCH_SPEC={spec} through pip's own index")
    if machine.system in NO_CUDA:
        note, refusal = NO_CUDA[machine.system]
        if torch == "cuda":
            raise ValueError(refusal)
        return Plan("cpu", requirement, None, note)
    if machine.system != "Linux":
        return Plan("pip", requirement, None, f"{machine.system}: {SIZE_NOTE['pip']}")
    backend = torch if torch in ("cpu", "cuda") else ("cuda" if machine.nvidia else "cpu")
    if backend == "cuda":
        # PyPI's Linux torch is the CUDA build.
        return Plan("cuda", requirement, None, SIZE_NOTE["cuda"])
    return Plan("cpu", requirement, CPU_INDEX, SIZE_NOTE["cpu"])


class IndexUnreachable(RuntimeError):
    """The CPU index did not answer: the message says what pip's own index would give instead
    and how to choose."""


def with_fallback(plan: Plan, reachable: bool) -> Plan:
    """``plan`` itself when its index answers; otherwise :class:`IndexUnreachable`, never a
    silent switch to pip's own index (on Linux, PyPI's torch and its mirrors' is the CUDA
    build: ~2.7 GB)."""
    if plan.index is None or reachable:
        return plan
    raise IndexUnreachable(
        f"{plan.index} did not answer within {PROBE_TIMEOUT_S:.0f} s, so {describe(plan.backend, plan.requirement)} "
        "cannot be installed from it.\n"
        f"  pip's own index (PyPI, or the mirror in your pip config) would give {SIZE_NOTE['pip']}.\n"
        "  Choose one, then run make again:\n"
        f"    make lab {INDEX_ENV_VAR}=<a mirror of {CPU_INDEX}>   (README.zh-CN.md lists mirrors)\n"
        "    make lab TORCH=cuda    to take the CUDA build from pip's own index\n"
        "    or try again later: the index may only be slow."
    )


def index_reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when ``url`` answers within ``timeout`` seconds (any HTTP status counts)."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/torch/", timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # the host answered
    except (urllib.error.URLError, OSError, ValueError):
        return False


def installed_torch() -> str | None:
    """The version of torch installed for the interpreter running this script, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def read_record(venv: Path) -> dict | None:
    """The choice recorded in ``<venv>/.torch`` by ``install``, or None."""
    path = venv / RECORD_NAME
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


def mismatch(
    record: dict | None,
    venv_exists: bool,
    plan: Plan | None,
    backend_asked: bool = True,
    installed: str | None = None,
) -> str | None:
    """Why an explicit request ``plan`` cannot use the existing venv, or None when it can.

    ``plan`` is None when nothing was requested explicitly: the venv is used as it is. With
    ``backend_asked`` False (only TORCH_SPEC given) only the requirement must match. A venv
    without a record (made before choices were recorded) is judged by its ``installed`` torch
    version, so an existing CI environment keeps working with the same TORCH_SPEC.
    """
    if plan is None or not venv_exists:
        return None
    if record is None:
        record = infer_record(installed)
        if record is None:
            return "it was created before the PyTorch choice was recorded"
    same_backend = record.get("backend") == plan.backend or not backend_asked
    # A bare "torch" (no TORCH_SPEC) accepts any version of the asked-for build.
    same_requirement = plan.requirement == "torch" or record.get("requirement") == plan.requirement
    if not (same_backend and same_requirement):
        have = describe(record.get("backend", "?"), record.get("requirement", "?"))
        return f"it holds {have}, and you asked for {describe(plan.backend, plan.requirement)}"
    return None


def infer_record(installed: str | None) -> dict | None:
    """What an unrecorded venv holds, from its torch version ("2.13.0+cpu"), or None."""
    if not installed:
        return None
    base, _, local = installed.partition("+")
    backend = "cpu" if local == "cpu" else "cuda" if local.startswith("cu") else "existing"
    return {"backend": backend, "requirement": f"torch=={base}", "inferred": True}


def venv_torch(venv: Path) -> str | None:
    """The torch version installed in ``venv`` (read from its dist-info folder), or None."""
    for info in sorted(venv.glob("lib/python*/site-packages/torch-*.dist-info")):
        return info.name.removeprefix("torch-").removesuffix(".dist-info")
    return None


def describe(backend: str, requirement: str) -> str:
    """A build in words, e.g. ``the CPU build (torch)``."""
    words = {
        "cpu": "the CPU build",
        "cuda": "the CUDA build",
        "pip": "the build pip's own index gives",
        "existing": "a PyTorch installed before the choice was recorded",
    }.get(backend, backend)
    return f"{words} ({requirement})"


def _check(args: argparse.Namespace, plan: Plan) -> int:
    """``check``: 0 when the existing .venv suits the TORCH/TORCH_SPEC asked for, else 2 with
    how to switch or keep it."""
    explicit = plan if (args.torch or args.spec) else None
    why = mismatch(
        read_record(args.venv),
        (args.venv / "bin").is_dir(),
        explicit,
        bool(args.torch),
        venv_torch(args.venv),
    )
    if not why:
        return 0
    wanted = " ".join(
        f'{k}="{v}"' for k, v in (("TORCH", args.torch), ("TORCH_SPEC", args.spec)) if v
    )
    print(
        f"error: {args.venv} already exists and {why}.\n"
        f"  To switch, remove it and create it again:  make clean-env && make lab {wanted}\n"
        f"  To keep it, run make without TORCH/TORCH_SPEC.",
        file=sys.stderr,
    )
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("plan", "install", "check"))
    parser.add_argument("--torch", default="", help="auto, cpu or cuda (empty: auto)")
    parser.add_argument("--spec", default="", help="a pip requirement, e.g. torch==2.13.0")
    parser.add_argument("--venv", type=Path, default=Path(".venv"))
    parser.add_argument(
        "--index",
        default="",
        help=f"a mirror of PyTorch's CPU index (default: ${INDEX_ENV_VAR}, else {CPU_INDEX})",
    )
    args = parser.parse_args(argv)
    machine = detect_machine()
    try:
        plan = choose(machine, args.torch, args.spec)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if plan.index:
        index = (args.index or os.environ.get(INDEX_ENV_VAR, "")).strip() or CPU_INDEX
        plan = Plan(plan.backend, plan.requirement, index, plan.note)

    if args.action == "check":
        return _check(args, plan)

    if args.action == "plan":
        print(json.dumps({"machine": asdict(machine), **asdict(plan), "pip": plan.pip_args()}))
        return 0

    return _install(args, plan)


def _install(args: argparse.Namespace, plan: Plan) -> int:
    """``install``: pip-install ``plan`` (or the recorded choice when none is asked for) and
    record it in ``<venv>/.torch``; 2 when the CPU index does not answer."""
    # install: an unset choice reuses the recorded one (pyproject.toml changed, venv kept).
    record = read_record(args.venv)
    explicit = bool(args.torch or args.spec)
    if not explicit and record:
        plan = Plan(record["backend"], record["requirement"], record.get("index"), "as recorded")
    elif not explicit and (installed := installed_torch()):
        # A venv made before choices were recorded: keep its torch, and record what it is.
        plan = Plan("existing", f"torch=={installed}", None, f"keeping torch {installed}")
        (args.venv / RECORD_NAME).write_text(json.dumps(asdict(plan)) + "\n")
        print(f"PyTorch: {plan.note} (make clean-env, then make lab TORCH=cpu|cuda, to change it)")
        return 0
    try:
        plan = with_fallback(plan, index_reachable(plan.index) if plan.index else True)
    except IndexUnreachable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    where = f" from {plan.index}" if plan.index else ""
    print(f"Installing PyTorch: {plan.note}{where}", flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", *plan.pip_args()], check=False)
    if done.returncode != 0:
        print(
            f"error: pip install {plan.requirement} failed (exit {done.returncode})",
            file=sys.stderr,
        )
        return done.returncode
    (args.venv / RECORD_NAME).write_text(json.dumps(asdict(plan)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
