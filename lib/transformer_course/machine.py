"""The learner's machine (introduced in 00_setup): which device tensors run on, how runs are
seeded and made reproducible, and where the course keeps its files.

The course runs on CUDA, Apple MPS or the CPU. ``pick_device`` prefers them in
that order; the environment variable ``TRANSFORMER_COURSE_DEVICE`` overrides.
``reproducible_cpu_environment`` names the settings under which the stored notebook
outputs are computed, so a machine of the same processor family prints exactly the same numbers.
:func:`data_dir` is the folder for downloaded data (the corpus, the tokenizer's tables).
The small helpers that every layer above uses with a model on a device live here too:
:func:`evaluating` (eval mode inside a ``with``), :func:`unwrap` (the plain model inside DDP or
``torch.compile``) and :func:`dist_info`.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

from . import _checks as check
from .i18n import _

DEVICE_ENV_VAR = "TRANSFORMER_COURSE_DEVICE"
DATA_DIR_ENV_VAR = "TRANSFORMER_COURSE_DATA"
_KNOWN_DEVICES = ("cuda", "mps", "cpu")


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def pick_device(preferred: str | None = None) -> torch.device:
    """Return the device the course should use.

    Order: ``preferred`` if given, else ``$TRANSFORMER_COURSE_DEVICE``, else the
    first available of cuda, mps, cpu. Asking for a device that is not there
    raises ``ValueError`` saying what is available.
    """
    requested = preferred or os.environ.get(DEVICE_ENV_VAR) or None
    if requested is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    kind = requested.split(":")[0]
    if kind not in _KNOWN_DEVICES:
        raise ValueError(
            _(
                "device {requested!r} is not one of {devices} (check the argument or ${variable})"
            ).format(
                requested=requested, devices=", ".join(_KNOWN_DEVICES), variable=DEVICE_ENV_VAR
            )
        )
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            _(
                "device {requested!r} was asked for but CUDA is not available here; use 'cpu'"
            ).format(requested=requested)
        )
    if kind == "mps" and not _mps_available():
        raise ValueError(
            _(
                "device {requested!r} was asked for but Apple MPS is not available here; use 'cpu'"
            ).format(requested=requested)
        )
    return torch.device(requested)


def synchronize(device: torch.device) -> None:
    """Wait until ``device`` has finished its queued work, so that a clock read after it times the
    work itself: CUDA and MPS run kernels asynchronously (12_generation's step timings)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy (when installed) and torch; return a CPU generator seeded the same.

    Notebooks reseed at the top of every cell that draws random numbers, so a
    cell gives the same output however often and in whatever order it runs.
    """
    check.integer("seed", seed, minimum=None)
    random.seed(seed)
    try:
        import numpy as np
    except ImportError:  # numpy is optional for the library itself
        pass
    else:
        np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def autocast_dtype(device: torch.device) -> torch.dtype | None:
    """The mixed-precision dtype the course uses on ``device``: bf16 on CUDA, none elsewhere."""
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return None


def autocast_context(device: torch.device, enabled: bool = True):
    """``torch.autocast`` in :func:`autocast_dtype` on ``device``, or a context that does nothing
    (introduced in 11_training: ``train`` and ``evaluate`` run their forward passes inside it)."""
    dtype = autocast_dtype(device) if enabled else None
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def reproducible_cpu_environment(machine: str | None = None) -> dict[str, str]:
    """Environment variables under which CPU results are bit-identical from run to run.

    PyTorch and MKL pick their kernels by instruction set: an AVX-512 machine sums in a
    different order than an AVX2 one, and a model trained for hundreds of steps turns those
    last-bit differences into a different loss in the second decimal and different generated
    text. Pinning every x86-64 machine to its AVX2 kernels (``ATEN_CPU_CAPABILITY``, MKL's
    conditional numerical reproducibility ``MKL_CBWR``, oneDNN's ``ONEDNN_MAX_CPU_ISA``) and
    to one thread makes the stored notebook outputs what nbval recomputes on a machine of the
    same processor family. It does not make every vendor agree: under the same pins an Intel
    Xeon with AVX-512 and an AMD AVX2 processor still differ in the last bits (measured: a few
    printed numbers of 09 and 11 move by one in the last digit), so the stored outputs are
    recorded on the machine CI runs on.
    ``tools/nbtool.py`` and the test suite put these into the environment that notebook
    kernels inherit, before any kernel starts: a process reads them when it loads ``torch``,
    so setting them inside a running kernel is too late. Other processors (Apple silicon,
    Arm) get the thread settings only: their kernels differ anyway, and PyTorch would warn
    about an x86 value. ``machine`` defaults to ``platform.machine()``.
    """
    environment = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if (machine or platform.machine()).lower() in ("x86_64", "amd64"):
        environment.update(ATEN_CPU_CAPABILITY="avx2", MKL_CBWR="AVX2", ONEDNN_MAX_CPU_ISA="AVX2")
    return environment


@contextlib.contextmanager
def evaluating(model: nn.Module):
    """Switch ``model`` to eval mode (no dropout) inside the ``with``, then restore its mode
    (introduced in 11_training; generation, evaluation and the KV-cache timings use it)."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def unwrap(model: nn.Module) -> nn.Module:
    """The plain model inside ``DistributedDataParallel`` (``.module``) or ``torch.compile`` (``._orig_mod``)."""
    while True:
        if isinstance(model, nn.parallel.DistributedDataParallel):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


def dist_info() -> tuple[bool, int, int]:
    """(distributed, rank, world size) of this process: (False, 0, 1) outside torch.distributed."""
    if dist.is_available() and dist.is_initialized():
        return True, dist.get_rank(), dist.get_world_size()
    return False, 0, 1


def data_dir() -> Path:
    """The folder where the course keeps downloaded data (00_setup; the corpus of 01_tokenization).

    ``$TRANSFORMER_COURSE_DATA`` if set; else ``data/`` of a cloned course, found by looking for
    ``data/README.md`` two folders above the package; else ``~/.cache/transformer_course``.
    """
    override = os.environ.get(DATA_DIR_ENV_VAR)
    if override:
        folder = Path(override).expanduser()
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(
                _(
                    "${variable} is {folder}, which is a file, not a folder; point it at a folder "
                    "for the course's data, or unset it"
                ).format(variable=DATA_DIR_ENV_VAR, folder=folder)
            )
        return folder
    project_data = Path(__file__).resolve().parents[2] / "data"
    if (project_data / "README.md").is_file():  # a clone of the course
        return project_data
    return Path.home() / ".cache" / "transformer_course"
