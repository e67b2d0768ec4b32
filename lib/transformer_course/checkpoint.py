"""Checkpoints: save a model (and its optimizer) safely, load it back safely (11_training).

Two promises, both shown in 11_training:

- **atomic writes** — the bytes go to a temporary file beside the target, which is flushed to disk
  and then renamed over it with ``os.replace``. A run killed half-way through a save leaves the
  previous checkpoint intact, never a half-written one.
- **safe loads** — ``torch.load(..., weights_only=True)`` unpickles only tensors and plain
  Python containers, so opening a checkpoint cannot run code hidden in it. That is why
  everything a checkpoint holds (configs, history, RNG states) is stored as dicts, lists,
  numbers, strings and tensors.

A file that is not a readable checkpoint, or one saved for a differently shaped model, raises
:class:`CheckpointError` with a message that says what to do.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

#: Written into every checkpoint; a file without it was not written by this course.
FORMAT = "transformer_course.checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used: corrupt, foreign, or for another model shape."""


def unwrap(model: nn.Module) -> nn.Module:
    """The plain model inside ``DistributedDataParallel`` (``.module``) or ``torch.compile`` (``._orig_mod``)."""
    while True:
        if isinstance(model, nn.parallel.DistributedDataParallel):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


def model_config(model: nn.Module) -> dict[str, Any] | None:
    """The model's dataclass config (``model.config``) as a plain dict, or None if it has none."""
    config = getattr(unwrap(model), "config", None)
    if config is not None and dataclasses.is_dataclass(config) and not isinstance(config, type):
        return _plain(dataclasses.asdict(config), "model.config")
    return None


def _plain(value: Any, where: str) -> Any:
    """``value`` as the containers ``weights_only`` loading accepts, or a TypeError naming ``where``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value), where)
    if isinstance(value, dict):
        return {str(k): _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return value
    raise TypeError(
        f"{where} is a {type(value).__name__}; checkpoint metadata must be numbers, strings, "
        "lists, dicts, dataclasses or tensors (what weights_only loading accepts)"
    )


def save_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    **meta: Any,
) -> Path:
    """Write ``model`` (its ``state_dict`` and config), ``optimizer`` and ``meta`` to ``path`` atomically.

    ``meta`` holds anything else worth keeping (the step, the loss history, RNG states, the
    vocabulary…) as plain values. Returns the path written. Missing folders are created.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    reserved = {"format", "model", "model_config", "optimizer"} & meta.keys()
    if reserved:
        raise ValueError(
            f"meta keys {sorted(reserved)} are reserved for the checkpoint itself; rename them"
        )
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, Any] = {
        "format": FORMAT,
        "model": unwrap(model).state_dict(),
        "model_config": model_config(model),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
    }
    payload.update({key: _plain(value, f"meta[{key!r}]") for key, value in meta.items()})
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(
            tmp_name, target
        )  # atomic on POSIX and Windows: readers see old or new, never half
    finally:
        if os.path.exists(tmp_name):
            os.remove(tmp_name)
    return target


def _config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    keys = sorted(saved.keys() | current.keys())
    return [
        f"{key}: checkpoint {saved.get(key, '(absent)')!r}, model {current.get(key, '(absent)')!r}"
        for key in keys
        if saved.get(key, "(absent)") != current.get(key, "(absent)")
    ]


def read_checkpoint(
    path: str | os.PathLike, map_location: str | torch.device = "cpu"
) -> dict[str, Any]:
    """Open a checkpoint with ``weights_only=True`` and check it is one of the course's.

    Raises ``FileNotFoundError`` for a missing file and :class:`CheckpointError` for a file that
    is truncated, corrupt or not a course checkpoint.
    """
    source = Path(path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {source}; train first (it is written by train() when "
            "TrainConfig.checkpoint_path is set) or check the path"
        )
    try:
        checkpoint = torch.load(source, map_location=map_location, weights_only=True)
    except (
        RuntimeError,
        pickle.UnpicklingError,
        EOFError,
        zipfile.BadZipFile,
        ValueError,
        OSError,
    ) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(
            f"{source} is not a readable checkpoint ({reason[:200]}). It is truncated or corrupt, "
            "for instance copied only in part. Delete it and train again (or resume from an "
            "older copy); the course's own saves are atomic, so they never leave such a file."
        ) from exc
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise CheckpointError(
            f"{source} loads, but it is not a transformer_course checkpoint (no {FORMAT!r} marker); "
            "pass a file written by save_checkpoint() or train()"
        )
    return checkpoint


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    map_location: str | torch.device = "cpu",
) -> dict[str, Any]:
    """Read a checkpoint (``weights_only=True``); if given, fill ``model`` and ``optimizer`` from it.

    Returns the checkpoint dict: ``"model"`` (state dict), ``"model_config"``, ``"optimizer"``
    and whatever metadata was saved. A model whose config differs from the saved one raises
    :class:`CheckpointError` listing the differences, before any weight is touched.
    """
    checkpoint = read_checkpoint(path, map_location=map_location)
    _fill(checkpoint, path, model, optimizer)
    return checkpoint


def _fill(
    checkpoint: dict[str, Any],
    path: str | os.PathLike,
    model: nn.Module | None,
    optimizer: torch.optim.Optimizer | None,
) -> None:
    if model is not None:
        target = unwrap(model)
        saved, current = checkpoint.get("model_config"), model_config(target)
        if saved is not None and current is not None and saved != current:
            differences = "; ".join(_config_differences(saved, current))
            raise CheckpointError(
                f"{path} was saved for a differently configured model ({differences}). Build the "
                "model from the checkpoint's config (model_from_checkpoint(path), or "
                "GPTConfig(**checkpoint['model_config'])), or train into a new checkpoint path."
            )
        try:
            target.load_state_dict(checkpoint["model"])
        except RuntimeError as exc:
            raise CheckpointError(
                f"{path} does not fit this model: {str(exc).splitlines()[0]} … Build the model the "
                "checkpoint was saved for, or train into a new checkpoint path."
            ) from exc
    if optimizer is not None:
        if checkpoint.get("optimizer") is None:
            raise CheckpointError(
                f"{path} holds no optimizer state; it cannot resume training, only load weights"
            )
        optimizer.load_state_dict(checkpoint["optimizer"])


def model_from_checkpoint(
    path: str | os.PathLike, device: str | torch.device | None = None
) -> tuple[nn.Module, dict[str, Any]]:
    """Build a ``model.GPT`` from the config a checkpoint stores, load its weights, return both.

    The model is in eval mode on ``device`` (the CPU by default).
    """
    from .model import (  # imported here: the checkpoint module does not need the model
        GPT,
        GPTConfig,
    )

    checkpoint = read_checkpoint(path)
    if checkpoint.get("model_config") is None:
        raise CheckpointError(
            f"{path} stores no model config; build the model yourself and call load_checkpoint(path, model)"
        )
    try:
        model = GPT(GPTConfig(**checkpoint["model_config"]))
    except TypeError as exc:
        raise CheckpointError(
            f"{path} has a model config this version of the course cannot build: {exc}"
        ) from exc
    _fill(checkpoint, path, model, None)
    return model.to(device or "cpu").eval(), checkpoint
