"""Each student's notebook runs in a sandbox of its own: bubblewrap on Linux (README "For teachers").

bubblewrap (``bwrap``, Debian's ``bubblewrap``, the sandbox Flatpak uses) starts the
:mod:`.driver` in new mount, process, network, IPC and UTS namespaces, where:

- the only writable places are a fresh copy of the student's own files (``/home/student``), the
  grader's exchange folder of this run (``/grading``) and a private ``/tmp``; the system, Python
  and the course's library are mounted read-only, and nothing else of the machine is there (not
  the other students, not the teacher's home, not the gradebook);
- the course's solutions are replaced by stubs that raise (:func:`write_solution_stubs`);
- there is no network, only a loopback of its own (the kernel talks to the driver over it);
- the processes run as the unprivileged user 65534 (``nobody``), with no capabilities and
  ``no_new_privs``; as root, bwrap mounts and ``setpriv`` drops to that user; as another user,
  a user namespace maps the teacher's user to 65534;
- the environment is an explicit, clean one (:func:`sandbox_environment`): none of the
  teacher's variables reach it but the course's own settings;
- limits (:class:`Limits`) cap the memory, CPU time, processes, file size and open files of
  each process, and the grader stops the whole sandbox after the notebook's wall-clock budget;
- every process of the student ends with the run (a process namespace, ``--die-with-parent``).

Without bubblewrap (macOS, Windows, a Linux without user namespaces) ``grade`` refuses unless
the teacher passes ``--trusted-submissions``; the driver then runs as the teacher, with the clean
environment, the limits and the network guard of :mod:`.offline`, and nothing more.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pkgutil
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ...i18n import _

#: The user the sandbox runs students' code as (``nobody`` on Debian).
SANDBOX_UID = 65534
#: Where the student's files and the grader's exchange folder are inside the sandbox.
HOME = "/home/student"
EXCHANGE = "/grading"
#: The files of the exchange folder the driver and the kernel write: the answers to the
#: grader's calls (``torch.save``), and how the run ended (JSON).
ANSWERS_FILE = "answers.pt"
STATUS_FILE = "status.json"
#: The teacher's variables that do reach a student's kernel: the course's own settings.
PASSED_VARIABLES = (
    "TRANSFORMER_COURSE_LANG",
    "TRANSFORMER_COURSE_CORPUS",
    "TIKTOKEN_CACHE_DIR",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)
#: System paths mounted read-only when they exist.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
ETC_FILES = ("passwd", "group", "hosts", "nsswitch.conf", "ld.so.cache", "localtime",
             "alternatives", "fonts", "mime.types")  # fmt: skip


class SandboxUnavailableError(OSError):
    """``grade`` cannot sandbox students' code on this machine (and was not told to trust it)."""


@dataclass(frozen=True)
class Limits:
    """What one student's notebook may use: per process (``setrlimit``), and in all (wall)."""

    memory_mib: int = 6144
    cpu_seconds: int = 1800
    processes: int | None = 256  # None: no cap (the teacher's own processes would count)
    file_mib: int = 256
    open_files: int = 1024
    wall_seconds: int = 1800


def _apply_limits(limits: Limits) -> None:
    """In the child, before ``exec``: the limits, inherited by every process of the sandbox."""
    os.umask(0o022)
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_mib * 2**20),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_FSIZE, limits.file_mib * 2**20),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ):
        if value is not None:
            resource.setrlimit(which, (value, value))


@functools.cache
def sandbox_problem() -> str | None:
    """None when bubblewrap can build a sandbox here; otherwise why not, in one sentence."""
    bwrap = shutil.which("bwrap")
    if not sys.platform.startswith("linux") or bwrap is None:
        return _("bubblewrap (bwrap) is not installed")
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return _("setpriv (util-linux) is not installed")
    try:
        trial = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                                "true"], capture_output=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    if trial.returncode != 0:
        return trial.stderr.decode(errors="replace").strip()[:300] or f"rc {trial.returncode}"
    return None


def write_solution_stubs(folder: Path) -> Path:
    """Write, into ``folder``, a ``solutions`` package whose every function and class raises:
    mounted over the course's own, the exercise modules still import, the solutions do not run."""
    from .. import solutions

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text('"""Not available while grading."""\n', encoding="utf-8")
    header = "import torch\n\n_GONE = 'the course solutions are not available while grading'\n"
    for info in pkgutil.iter_modules(solutions.__path__):
        module = importlib.import_module(f"{solutions.__name__}.{info.name}")
        lines = [header]
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) != module.__name__ or name.startswith("__"):
                continue
            if inspect.isclass(value):
                import torch

                base = "torch.nn.Module" if issubclass(value, torch.nn.Module) else "object"
                lines.append(f"\nclass {name}({base}):\n    def __init__(self, *a, **k):\n"
                             "        raise RuntimeError(_GONE)\n")  # fmt: skip
            elif callable(value):
                lines.append(f"\ndef {name}(*a, **k):\n    raise RuntimeError(_GONE)\n")
        (folder / f"{info.name}.py").write_text("".join(lines), encoding="utf-8")
    return folder


def package_folder() -> Path:
    """The folder of the ``transformer_course`` package this grader runs."""
    return Path(__file__).resolve().parents[2]


def read_only_paths() -> list[str]:
    """Python's and the course's folders, mounted read-only in the sandbox (parents only)."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(package_folder().parent)}
    wanted |= {os.path.realpath(p) for p in list(wanted)}
    wanted |= {os.path.realpath(os.path.dirname(sys.executable))}
    wanted |= {
        os.path.abspath(p) for p in sys.path if p.endswith(("site-packages", "dist-packages"))
    }
    for name in ("TRANSFORMER_COURSE_CORPUS", "TIKTOKEN_CACHE_DIR"):
        if os.environ.get(name) and os.path.exists(os.environ[name]):
            wanted.add(os.path.realpath(os.environ[name]))
    kept: list[str] = []
    for path in sorted(p for p in wanted if os.path.exists(p)):
        if path not in SYSTEM_PATHS and not any(path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return [p for p in kept if p != "/" and not p.startswith(SYSTEM_PATHS)]


def sandbox_environment(home: str, temporary: str, extra_path: str | None = None) -> dict[str, str]:
    """The whole environment of a student's driver and kernel: explicit, none of the teacher's
    variables but :data:`PASSED_VARIABLES`."""
    library = str(package_folder().parent)
    env = {
        "PATH": os.pathsep.join(
            [os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]
        ),  # fmt: skip
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": temporary,
        "PYTHONPATH": os.pathsep.join(filter(None, [extra_path, library])),
        "PYTHONDONTWRITEBYTECODE": "1",
        "IPYTHONDIR": f"{temporary}/ipython",
        "JUPYTER_CONFIG_DIR": f"{temporary}/jupyter/config",
        "JUPYTER_DATA_DIR": f"{temporary}/jupyter/data",
        "JUPYTER_RUNTIME_DIR": f"{temporary}/jupyter/runtime",
        "MPLCONFIGDIR": f"{temporary}/matplotlib",
        "HF_HUB_OFFLINE": "1",
    }
    env |= {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
    return env


def _folders_to_make(destinations: list[str], mounted: list[str]) -> list[str]:
    """The parent folders of the mount points that bwrap must make, readable by everyone."""
    parents = {
        str(parent) for d in destinations for parent in Path(d).parents if str(parent) != "/"
    }
    inside = [m.rstrip("/") + "/" for m in mounted]
    return sorted(p for p in parents if p not in mounted and not p.startswith(tuple(inside)))


def bwrap_command(home: Path, exchange: Path, stubs: Path, env: dict[str, str]) -> list[str]:
    """The bwrap command line that runs the driver on ``exchange/request.json`` (module doc)."""
    binds = [("--ro-bind-try", p, p) for p in SYSTEM_PATHS]
    binds += [("--ro-bind-try", f"/etc/{name}", f"/etc/{name}") for name in ETC_FILES]
    binds += [("--ro-bind", p, p) for p in read_only_paths()]
    binds += [("--ro-bind", str(stubs), str(package_folder() / "exercises" / "solutions"))]
    binds += [("--bind", str(home), HOME), ("--bind", str(exchange), EXCHANGE)]
    mounted = [target for _kind, _source, target in binds]
    command = [shutil.which("bwrap") or "bwrap", "--unshare-ipc", "--unshare-pid",
               "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
               "--new-session", "--clearenv", "--chdir", "/"]  # fmt: skip
    for folder in _folders_to_make([target for *_rest, target in binds], mounted):
        command += ["--perms", "0755", "--dir", folder]
    for kind, source, target in binds:
        command += [kind, source, target]
    command += ["--perms", "1777", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"]
    for name, value in env.items():
        command += ["--setenv", name, value]
    if os.geteuid() == 0:  # bwrap mounts as root; setpriv then drops to nobody, for good
        command += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                    "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]  # fmt: skip
    else:  # a user namespace maps the teacher's user to nobody
        command[1:1] = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    return command + [sys.executable, "-m", f"{__package__}.driver", f"{EXCHANGE}/request.json"]


def run_driver(
    command: list[str], env: dict[str, str] | None, limits: Limits, log: Path, cwd: Path
) -> bool:
    """Run ``command`` (a sandbox, or the driver itself when trusted) with ``limits``, its output
    into ``log`` (capped by the file-size limit); stop every process of it after the wall-clock
    budget. Returns False when the budget ran out."""
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env if env is not None else {"PATH": "/usr/bin:/bin"},
            cwd=cwd,
            preexec_fn=functools.partial(_apply_limits, limits),  # noqa: PLW1509 - no threads run here
            start_new_session=True,
        )
        try:
            process.wait(timeout=limits.wall_seconds)
            return True
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return False


def hand_over(folder: Path) -> None:
    """Give ``folder`` and everything in it to the sandbox's user (when the grader is root)."""
    if os.geteuid() != 0:
        return
    for root, folders, files in os.walk(folder):
        for name in [root, *(os.path.join(root, f) for f in folders + files)]:
            os.lchown(name, SANDBOX_UID, SANDBOX_UID)
