"""How the command line sets up its processes (introduced in 11_training).

Joining the processes ``torchrun`` starts (:func:`distributed_setup`), choosing the torch thread
count (:func:`auto_threads`, measured in benchmarks/bench_threads.py), refusing an unwritable
checkpoint folder before any training, the exit status of a run stopped by a signal, and what
an interrupt that got through says (:func:`interrupted_message`, printed under
:func:`no_interrupts`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path
from typing import Any

from ..i18n import _, ngettext

#: Below this many multiply-adds per training step (parameters x tokens per step) one torch thread
#: is fastest: the work per operation is too small to share, and extra threads mostly wait for
#: each other. Every model measured on the 2-core machine (benchmarks/bench_threads.py, up to
#: 8.5e9 per step) was faster on one thread; see auto_threads for the numbers.
SMALL_STEP_MACS = 5e10


def auto_threads(parameters: int, tokens_per_step: int, cores: int | None = None) -> int:
    """The torch thread count the command line trains with (11_training; issue 18).

    One thread when a step is small (``parameters × tokens_per_step`` below
    :data:`SMALL_STEP_MACS`), else every core. Measured on a 2-core machine shared with other
    jobs, tokens/s at 2 threads relative to 1 (benchmarks/bench_threads.py, medians): the
    default CLI model (642 k parameters × 512 tokens per step) 0.22×, and through the CLI itself
    10,541 vs 7,436 tokens/s (0.71×); the full-vocabulary model (6.8 M × 512) 0.39×; the "gpu"
    preset's model (2.1 M × 4,096) 0.42×. The gap narrows as steps grow, so steps far larger than
    any measured here get every core. ``--threads`` overrides the rule.
    """
    cores = cores or os.cpu_count() or 1
    if parameters * tokens_per_step < SMALL_STEP_MACS:
        return 1
    return max(1, cores)


def distributed_setup(requested_device: str | None):
    """Join the process group torchrun describes (if any); return (device, rank, world)."""
    import torch
    from torch import distributed as dist

    from ..machine import pick_device

    world = env_int("WORLD_SIZE", 1)
    if world <= 1:
        return pick_device(requested_device), 0, 1
    missing = [name for name in ("RANK", "MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        raise ValueError(
            ngettext(
                "WORLD_SIZE={world} is set but {missing} is not: start several processes with "
                "'torchrun --nproc_per_node=N -m transformer_course train', or unset WORLD_SIZE "
                "to train in one process",
                "WORLD_SIZE={world} is set but {missing} are not: start several processes with "
                "'torchrun --nproc_per_node=N -m transformer_course train', or unset WORLD_SIZE "
                "to train in one process",
                len(missing),
            ).format(world=world, missing=", ".join(missing))
        )
    rank = env_int("RANK", 0)
    local_rank = env_int("LOCAL_RANK", 0)
    if not 0 <= rank < world:
        raise ValueError(
            _("RANK={rank} must lie in 0..WORLD_SIZE-1 = 0..{last}; start with torchrun").format(
                rank=rank, last=world - 1
            )
        )
    device = pick_device(requested_device)
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")  # gloo trains on the CPU; MPS has no collective backend
        backend = "gloo"
    try:
        dist.init_process_group(backend=backend)
    except (ValueError, RuntimeError) as exc:
        raise ValueError(
            _(
                "could not join the {world} training processes ({reason}); start them with "
                "torchrun, or unset WORLD_SIZE to train in one process"
            ).format(world=world, reason=str(exc).splitlines()[0])
        ) from exc
    return device, dist.get_rank(), dist.get_world_size()


def env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            _(
                "the environment variable {name}={text!r} is not a whole number; torchrun sets "
                "it, so unset it (unset {name}) or start the run with torchrun"
            ).format(name=name, text=text)
        ) from None
    if value < 0:
        raise ValueError(
            _("the environment variable {name}={value} must be 0 or more; unset it").format(
                name=name, value=value
            )
        )
    return value


def choose_threads(requested: int | None, parameters: int, tokens_per_step: int, device) -> int:
    """Set and return the torch thread count: ``requested`` (--threads), else the size rule, shared by the
    processes of this machine under torchrun."""
    import torch

    if requested is not None:
        threads = requested
    else:
        local = env_int("LOCAL_WORLD_SIZE", 1) or 1
        cores = max(1, (os.cpu_count() or 1) // local)
        threads = auto_threads(parameters, tokens_per_step, cores)
    if device.type == "cpu" or requested is not None:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def check_writable(checkpoint: Path) -> None:
    """Refuse an unwritable --checkpoint before training, not after the work is done."""
    import tempfile

    from ..checkpoint import CheckpointSaveError

    try:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=checkpoint.parent):
            pass
    except OSError as exc:
        raise CheckpointSaveError(
            _(
                "cannot write checkpoints to {parent} ({reason}); pass a --checkpoint path in a "
                "writable folder"
            ).format(parent=checkpoint.parent, reason=exc.strerror or exc)
        ) from exc


def interrupt_status(name: str) -> int:
    """The shell's convention: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    number = getattr(signal, name, None) if name.startswith("SIG") else None
    return 128 + int(number) if number is not None else 130


#: The signals the command line turns into :class:`SignalInterrupt` outside the training loop
#: (whose ``train.interrupts.InterruptGuard`` stops them between steps instead): SIGTERM (kill,
#: timeout, docker stop, batch schedulers) and SIGHUP (a closed terminal; not on Windows).
#: Without this they would kill the process silently while it starts.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class SignalInterrupt(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived outside the training loop: handled as a Ctrl-C is, but the
    closing line names the signal and the exit status is 128 + its number."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


def _raise_interrupt(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise SignalInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def signals_interrupt():
    """Inside the ``with``, SIGTERM and SIGHUP raise :class:`SignalInterrupt`; the handlers of
    before come back on exit, or earlier through the function it yields (for the commands that
    keep the default: only ``train`` says what a signal left behind)."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):  # e.g. an embedded interpreter
                previous[signum] = signal.signal(signum, _raise_interrupt)

    def restore() -> None:
        while previous:
            signum, handler = previous.popitem()
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    try:
        yield restore
    finally:
        restore()


def interrupted_message(args, signal_name: str = "SIGINT") -> str:
    """What an interrupt that got through (a second Ctrl-C, or one outside the training loop)
    leaves behind: the checkpoint on disk and its step, read back, and how to go on. A signal
    other than Ctrl-C's SIGINT is named: "interrupted (SIGTERM) …"."""
    stopped = "interrupted" if signal_name == "SIGINT" else f"interrupted ({signal_name})"
    if args is None:
        return f"{stopped} while starting, before anything was trained or saved"
    if args.command != "train":
        return stopped
    path = Path(args.train_config.checkpoint_path)
    again = "run the same command to resume" if args.train_config.resume else "run it again"
    if not path.is_file():
        return f"{stopped} before the first checkpoint was written: nothing is saved at {path}; {again}"
    try:
        from ..checkpoint import read_checkpoint

        step = f"step {read_checkpoint(path).get('step', '?')}"
    except Exception:  # noqa: BLE001 - the message must get out whatever the file holds
        step = "unreadable"
    return (
        f"{stopped}; nothing more was saved: the last checkpoint, {path} ({step} of "
        f"{args.train_config.steps}), is intact — {again}"
    )


@contextlib.contextmanager
def no_interrupts():
    """Ignore Ctrl-C, SIGTERM and SIGHUP inside the ``with`` (the closing message must get out),
    then restore them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, *STOP_SIGNALS)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
