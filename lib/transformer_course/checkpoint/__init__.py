"""Checkpoints: save a model (and its optimizer) safely, load it back safely (11_training).

Two promises, both shown in 11_training:

- **atomic writes** — the bytes go to a temporary file beside the target, which is flushed to disk
  and then renamed over it with ``os.replace``. A run killed half-way through a save leaves the
  previous checkpoint intact, never a half-written one. A save that fails (a full disk, a
  read-only folder) raises :class:`CheckpointSaveError` saying so, and weights that are no longer
  finite are never written (:class:`NonFiniteWeightsError`).
- **safe loads** — ``torch.load(..., weights_only=True)`` unpickles only tensors and plain
  Python containers, so opening a checkpoint cannot run code hidden in it. That is why
  everything a checkpoint holds (configs, history, RNG states) is stored as dicts, lists,
  numbers, strings and tensors.

A file that cannot be used raises an error whose message names the file, the cause and the next
step: ``FileNotFoundError`` (missing), ``IsADirectoryError``, ``PermissionError`` (unreadable), or
:class:`CheckpointError` (not a checkpoint, damaged, refused by the safe loader, another kind of
model, another config, an optimizer state that does not fit).

This module says what a checkpoint holds and how it meets a model; the file itself (the atomic
write, the checks of a file before and after ``torch.load``) is :mod:`.checkpoint_io`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .. import _checks as check
from ..i18n import _
from ..machine import unwrap
from .files import (
    FORMAT,
    CheckpointError,
    CheckpointSaveError,
    megabytes,
    read_checkpoint,
    write_atomically,
)

__all__ = [
    "FORMAT", "MAX_BUFFER_BYTES", "CheckpointError", "CheckpointSaveError", "NonFiniteWeightsError",
    "load_checkpoint", "model_config", "model_from_checkpoint", "non_finite_tensors",
    "read_checkpoint", "save_checkpoint", "unwrap",
]  # fmt: skip

#: Non-persistent buffers (e.g. a sinusoidal table) a stored config may ask for before the
#: loader refuses it: they are not in the file, so their size is only the config's claim.
MAX_BUFFER_BYTES = 1 << 30

_RESERVED = frozenset({"format", "model", "model_config", "model_class", "optimizer"})


class NonFiniteWeightsError(ValueError):
    """The model's weights hold NaN or inf, so they were not saved (11_training).

    ``history`` is set when ``train()`` raised it.
    """

    history: Any = None


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
        _(
            "{where} is a {kind}; checkpoint metadata must be numbers, strings, lists, dicts, "
            "dataclasses or tensors (what weights_only loading accepts)"
        ).format(where=where, kind=type(value).__name__)
    )


def non_finite_tensors(state: dict[str, torch.Tensor]) -> list[str]:
    """Names of the floating-point tensors in ``state`` that hold NaN or ±inf (11_training)."""
    return [
        name
        for name, tensor in state.items()
        if isinstance(tensor, torch.Tensor)
        and tensor.is_floating_point()
        and not bool(torch.isfinite(tensor).all())
    ]


def save_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    **meta: Any,
) -> Path:
    """Write ``model`` (its ``state_dict`` and config), ``optimizer`` and ``meta`` to ``path`` atomically.

    ``meta`` holds anything else worth keeping (the step, the loss history, RNG states, the
    vocabulary…) as plain values. Returns the path written. Missing folders are created.
    Weights holding NaN or inf raise :class:`NonFiniteWeightsError` and are not written; a
    failed write raises :class:`CheckpointSaveError`. Either way an earlier file at ``path`` is
    left as it was.
    """
    check.instance("model", model, nn.Module, expected="torch.nn.Module")
    reserved = _RESERVED & meta.keys()
    if reserved:
        raise ValueError(
            _("meta keys {keys} are reserved for the checkpoint itself; rename them").format(
                keys=sorted(reserved)
            )
        )
    target = Path(path).expanduser()
    state = unwrap(model).state_dict()
    broken = non_finite_tensors(state)
    if broken:
        shown = ", ".join(broken[:3]) + (
            _(" and {n} more").format(n=len(broken) - 3) if len(broken) > 3 else ""
        )
        raise NonFiniteWeightsError(
            _(
                "not saving to {target}: the model's weights hold NaN or inf ({shown}), so "
                "training has diverged; an earlier checkpoint there is left intact. Resume from "
                "it with a lower learning rate, or start again"
            ).format(target=target, shown=shown)
        )
    payload: dict[str, Any] = {
        "format": FORMAT,
        "model": state,
        "model_config": model_config(model),
        "model_class": type(unwrap(model)).__name__,
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
    }
    payload.update({key: _plain(value, f"meta[{key!r}]") for key, value in meta.items()})
    return write_atomically(payload, target)


def _with_defaults(saved: Any, model: nn.Module) -> Any:
    """``saved`` plus the values of config fields added after it was written (e.g. GPTConfig's
    ``norm_eps`` and ``rope_base``): an older checkpoint still matches the model it describes.
    A field whose default changed the model's behaviour names, in its metadata, the ``legacy``
    value that reproduces the old behaviour (GPTConfig's ``embedding_scale``: "none")."""
    return _with_legacy_fields(saved, getattr(model, "config", None))


def _with_legacy_fields(saved: Any, config: Any) -> Any:
    """The stored config dict ``saved``, completed for the dataclass ``config`` (an instance or
    the class): each missing field gets its ``legacy`` metadata value, else its default."""
    if not isinstance(saved, dict) or not dataclasses.is_dataclass(config):
        return saved
    filled = dict(saved)
    for field in dataclasses.fields(config):
        if field.name in filled:
            continue
        if "legacy" in field.metadata:
            filled[field.name] = field.metadata["legacy"]
        elif field.default is not dataclasses.MISSING:
            filled[field.name] = field.default
    return filled


def _config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    keys = sorted(saved.keys() | current.keys())
    return [
        _("{key}: checkpoint {saved!r}, model {current!r}").format(
            key=key, saved=saved.get(key, "(absent)"), current=current.get(key, "(absent)")
        )
        for key in keys
        if saved.get(key, "(absent)") != current.get(key, "(absent)")
    ]


def _kind(class_name: str | None, config: dict[str, Any] | None) -> str | None:
    """The model class a checkpoint was saved from (older files: guessed from the config)."""
    if class_name:
        return class_name
    if config is None:
        return None
    return "EncoderDecoder" if "n_encoder_layers" in config else "GPT"


def _check_kind(checkpoint: dict[str, Any], path: Any, model: nn.Module) -> None:
    saved = _kind(checkpoint.get("model_class"), checkpoint.get("model_config"))
    current = type(model).__name__
    if saved is not None and current in ("GPT", "EncoderDecoder") and saved != current:
        raise CheckpointError(
            _(
                "{path} holds a {saved} model, not a {current}: build a {saved} from the "
                "checkpoint's config ({saved}({saved}Config(**checkpoint['model_config'])) after "
                "read_checkpoint(path)) and load into that, or pass a {current} checkpoint"
            ).format(path=path, saved=saved, current=current)
        )


def _optimizer_mismatch(saved: dict[str, Any], optimizer: torch.optim.Optimizer) -> str | None:
    groups = saved.get("param_groups") if isinstance(saved, dict) else None
    if not isinstance(groups, list):
        return _("the stored optimizer state has no parameter groups")
    stored = [len(g.get("params", [])) for g in groups if isinstance(g, dict)]
    current = [len(g["params"]) for g in optimizer.param_groups]
    if stored != current:
        return _(
            "the checkpoint's optimizer has {n} parameter group(s) of {stored} tensors, this one "
            "{n_current} group(s) of {current}"
        ).format(n=len(stored), stored=stored, n_current=len(current), current=current)
    return None


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    map_location: str | torch.device = "cpu",
) -> dict[str, Any]:
    """Read a checkpoint (``weights_only=True``); if given, fill ``model`` and ``optimizer`` from it.

    Returns the checkpoint dict: ``"model"`` (state dict), ``"model_config"``, ``"optimizer"``
    and whatever metadata was saved. Another kind of model, a differing config or an optimizer
    state that does not fit raises :class:`CheckpointError` saying so, before any weight is touched.
    """
    checkpoint = read_checkpoint(path, map_location=map_location)
    _load_into(checkpoint, path, model, optimizer)
    return checkpoint


def _check_model_fits(checkpoint: dict[str, Any], path, target: nn.Module) -> None:
    """Refuse a checkpoint saved for another kind or configuration of model than ``target``."""
    _check_kind(checkpoint, path, target)
    saved, current = checkpoint.get("model_config"), model_config(target)
    saved = _with_defaults(saved, target)
    if saved is not None and current is not None and saved != current:
        differences = "; ".join(_config_differences(saved, current))
        raise CheckpointError(
            _(
                "{path} was saved for a differently configured model ({differences}). Build the "
                "model from the checkpoint's config (model_from_checkpoint(path), or "
                "GPTConfig(**checkpoint['model_config'])), or train into a new checkpoint path."
            ).format(path=path, differences=differences)
        )


def _check_optimizer_fits(
    checkpoint: dict[str, Any], path, optimizer: torch.optim.Optimizer
) -> None:
    """Refuse a checkpoint without optimizer state, or with state another optimizer saved."""
    if checkpoint.get("optimizer") is None:
        raise CheckpointError(
            _(
                "{path} holds no optimizer state; it cannot resume training, only load weights"
            ).format(path=path)
        )
    mismatch = _optimizer_mismatch(checkpoint["optimizer"], optimizer)
    if mismatch:
        raise CheckpointError(
            _(
                "{path} holds optimizer state that does not fit this optimizer: {mismatch}. It "
                "was saved with another optimizer setup (e.g. AdamW(model.parameters()) rather "
                "than make_optimizer(model)); resume with the same setup, or start afresh "
                "(resume=False, --fresh) into a new checkpoint path. load_checkpoint(path, model) "
                "loads the weights alone."
            ).format(path=path, mismatch=mismatch)
        )


def _load_into(
    checkpoint: dict[str, Any],
    path: str | os.PathLike,
    model: nn.Module | None,
    optimizer: torch.optim.Optimizer | None,
) -> None:
    # Every check comes before the first weight is touched: a refused load leaves all unchanged.
    target = unwrap(model) if model is not None else None
    if target is not None:
        _check_model_fits(checkpoint, path, target)
    if optimizer is not None:
        _check_optimizer_fits(checkpoint, path, optimizer)
    if target is not None:
        try:
            target.load_state_dict(checkpoint["model"])
        except RuntimeError as exc:
            raise CheckpointError(
                _(
                    "{path} does not fit this model: {reason} … Build the model the checkpoint "
                    "was saved for, or train into a new checkpoint path."
                ).format(path=path, reason=str(exc).splitlines()[0])
            ) from exc
    if optimizer is not None:
        try:
            optimizer.load_state_dict(checkpoint["optimizer"])
        except (ValueError, KeyError, RuntimeError, TypeError) as exc:
            raise CheckpointError(
                _(
                    "{path} holds optimizer state that does not fit this optimizer ({error}); "
                    "resume with the optimizer it was saved with, or start afresh into a new "
                    "checkpoint path"
                ).format(path=path, error=exc)
            ) from exc


def _check_tensors_fit(skeleton: nn.Module, weights: dict[str, torch.Tensor], path: Any) -> None:
    """Compare a meta-device model (no memory) with the tensors in the file, before allocating."""
    expected = {name: tuple(t.shape) for name, t in skeleton.state_dict().items()}
    found = {name: tuple(t.shape) for name, t in weights.items()}
    problems = [
        _("{name}: config gives {shape}, file has {found}").format(
            name=name, shape=list(shape), found=list(found[name])
        )
        for name, shape in expected.items()
        if name in found and found[name] != shape
    ]
    missing = sorted(expected.keys() - found.keys())
    extra = sorted(found.keys() - expected.keys())
    if missing:
        problems.append(_("missing from the file: {names}").format(names=", ".join(missing[:4])))
    if extra:
        problems.append(
            _("not in a model of this config: {names}").format(names=", ".join(extra[:4]))
        )
    if problems:
        raise CheckpointError(
            _(
                "{path} is inconsistent: its stored config does not match the tensors it holds "
                "({problems}). The file was edited or damaged; use another copy"
            ).format(path=path, problems="; ".join(problems[:4]))
        )
    buffers = sum(
        b.numel() * b.element_size() for name, b in skeleton.named_buffers() if name not in expected
    )
    if buffers > MAX_BUFFER_BYTES:
        raise CheckpointError(
            _(
                "{path} stores a config that would need {size} of tables beyond its weights "
                "(context_length or max_len far too large); the file was edited or damaged"
            ).format(path=path, size=megabytes(buffers))
        )


def model_from_checkpoint(
    path: str | os.PathLike, device: str | torch.device | None = None
) -> tuple[nn.Module, dict[str, Any]]:
    """Build a ``model.GPT`` from the config a checkpoint stores, load its weights, return both.

    The model is in eval mode on ``device`` (the CPU by default). The stored config is checked
    against the tensors actually in the file before any memory is allocated for the model.
    """
    from ..model import (  # imported here: the checkpoint module does not need the model
        GPT,
        GPTConfig,
    )

    checkpoint = read_checkpoint(path)
    config = checkpoint.get("model_config")
    if config is None:
        raise CheckpointError(
            _(
                "{path} stores no model config; build the model yourself and call "
                "load_checkpoint(path, model)"
            ).format(path=path)
        )
    kind = _kind(checkpoint.get("model_class"), config)
    if kind != "GPT":
        raise CheckpointError(
            _(
                "{path} holds a {kind} model, not a GPT; model_from_checkpoint builds GPTs only. "
                "Build it with {kind}({kind}Config(**checkpoint['model_config'])) and call "
                "load_checkpoint(path, model)"
            ).format(path=path, kind=kind)
        )
    try:
        gpt_config = GPTConfig(**_with_legacy_fields(config, GPTConfig))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(
            _("{path} has a model config this version of the course cannot build: {error}").format(
                path=path, error=exc
            )
        ) from exc
    with torch.device("meta"):  # shapes only: a config claiming 10**9 tokens allocates nothing
        skeleton = GPT(gpt_config)
    _check_tensors_fit(skeleton, checkpoint["model"], path)
    del skeleton
    broken = non_finite_tensors(checkpoint["model"])
    if broken:  # written by an older version of the course, or edited: it can only generate NaN
        raise CheckpointError(
            _(
                "{path} holds weights that are NaN or inf ({names}): the run that wrote it had "
                "diverged. Use an earlier checkpoint, or train again with a lower learning rate"
            ).format(path=path, names=", ".join(broken[:3]))
        )
    model = GPT(gpt_config)
    _load_into(checkpoint, path, model, None)
    return model.to(device or "cpu").eval(), checkpoint
