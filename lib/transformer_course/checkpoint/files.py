"""Checkpoint files on disk: written atomically, read safely, every failure explained (11_training).

:func:`write_atomically` writes through a temporary file that is flushed and renamed into place;
:func:`read_checkpoint` opens a file with ``torch.load(weights_only=True)`` after checking its
first bytes, and turns every way a file can be wrong (missing, a folder, unreadable, empty,
truncated, text, JSON, a foreign zip, refused by the safe loader, without the course's marker)
into an error that names the file, the cause and the next step. What a checkpoint holds, and how
it is loaded into a model, is :mod:`transformer_course.checkpoint`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import torch

from ..i18n import _

#: Written into every checkpoint; a file without it was not written by this course.
FORMAT = "transformer_course.checkpoint/1"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used: corrupt, foreign, or for another model shape."""


class CheckpointSaveError(OSError):
    """A checkpoint could not be written (full disk, read-only folder, no permission…).

    The message names the target, the cause and whether an earlier checkpoint there is intact
    (it always is: saves are atomic). ``history`` is set when ``train()`` raised it, so the run's
    loss curve is not lost with the save.
    """

    history: Any = None


def _tensor_bytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(_tensor_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(v) for v in value)
    return 0


def megabytes(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _save_cause(folder: Path, exc: BaseException, needed: int) -> str:
    """What went wrong in words: torch reports a full disk as 'enforce fail … unexpected pos'."""
    code = getattr(exc, "errno", None)
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if code == errno.ENOSPC or (free is not None and free < needed):
        room = _("{free} free").format(free=megabytes(free)) if free is not None else _("no room")
        return _(
            "no space left on the disk holding {folder} ({room}; this checkpoint needs about {needed}, and the old and new copies coexist while saving). Free some space or save to another disk"
        ).format(folder=folder, room=room, needed=megabytes(needed))
    if code == errno.EROFS:
        return _("{folder} is on a read-only file system; save to a writable folder").format(
            folder=folder
        )
    if code in (errno.EACCES, errno.EPERM):
        return _(
            "no permission to write in {folder}; fix its permissions or save to another folder"
        ).format(folder=folder)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{type(exc).__name__}: {first}"


def _save_failed(target: Path, existed: bool, cause: str) -> CheckpointSaveError:
    previous = (
        _("the previous checkpoint {target} is intact").format(target=target)
        if existed
        else _("nothing was written there (there was no earlier checkpoint)")
    )
    return CheckpointSaveError(
        _("could not save to {target}: {cause}; {previous}").format(
            target=target, cause=cause, previous=previous
        )
    )


def _remove_stale_temporaries(target: Path) -> None:
    """A process killed inside a save leaves its hidden temporary file; the next save removes it."""
    for stale in target.parent.glob(f".{_glob_escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()


def _glob_escape(name: str) -> str:
    """``name`` with glob's special characters escaped (``[`` ``*`` ``?``)."""
    return re.sub(r"([\[\]*?])", r"[\1]", name)


def _new_file_mode(target: Path) -> int:
    """Keep the mode of the file being replaced; a new file gets the usual 0o666 minus the umask."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomically(payload: dict[str, Any], target: Path) -> Path:
    """``torch.save(payload)`` to ``target`` through a temporary file beside it, flushed to disk and
    renamed over it, so a reader sees the old file or the new one, never half. A failure raises
    :class:`CheckpointSaveError` naming the cause, and any earlier file at ``target`` is intact."""
    existed = target.is_file()
    needed = _tensor_bytes(payload) + (1 << 16)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(target)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _save_failed(target, existed, _save_cause(target.parent, exc, needed)) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, _new_file_mode(target))
        # Atomic on POSIX and Windows: readers see the old file or the new one, never half.
        os.replace(tmp_name, target)
    except (OSError, RuntimeError) as exc:
        # torch reports a failed write (e.g. a full disk) as RuntimeError "enforce fail … pos".
        _remove_quietly(tmp_name)
        raise _save_failed(target, existed, _save_cause(target.parent, exc, needed)) from exc
    finally:
        _remove_quietly(tmp_name)
    _sync_folder(target.parent)
    return target


def _remove_quietly(name: str) -> None:
    with contextlib.suppress(OSError):
        if os.path.exists(name):
            os.remove(name)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a power cut right after it keeps the new file)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _describe_start(head: bytes) -> str:
    """What the first bytes of a file that is no checkpoint suggest it is."""
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return _("it looks like JSON")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return _("it starts with the bytes {start!r}").format(start=head[:8])
    if text.isprintable() or all(ch.isprintable() or ch.isspace() for ch in text):
        return _("it looks like text")
    return _("it starts with the bytes {start!r}").format(start=head[:8])


def _opened(source: Path):
    """Open ``source`` for reading, turning each OS refusal into a message that says what to do."""
    if source.is_dir():
        raise IsADirectoryError(
            _(
                "{source} is a folder, not a checkpoint file; pass the .pt file inside it (the command line writes {example} style files)"
            ).format(source=source, example=source / "gpt.pt")
        )
    if not source.exists():
        raise FileNotFoundError(
            _(
                "no checkpoint at {source}; train first (it is written by train() when TrainConfig.checkpoint_path is set) or check the path"
            ).format(source=source)
        )
    try:
        return open(source, "rb")
    except PermissionError as exc:
        raise PermissionError(
            _(
                "cannot read {source}: permission denied. The file itself may be fine; make it readable for you (e.g. chmod u+r) or ask its owner"
            ).format(source=source)
        ) from exc
    except OSError as exc:
        raise OSError(
            _("cannot read {source}: {error}").format(source=source, error=exc.strerror or exc)
        ) from exc


def read_checkpoint(
    path: str | os.PathLike, map_location: str | torch.device = "cpu"
) -> dict[str, Any]:
    """Open a checkpoint with ``weights_only=True`` and check it is one of the course's.

    Raises ``FileNotFoundError`` (missing), ``IsADirectoryError``, ``PermissionError``
    (unreadable) and :class:`CheckpointError` for a file that is empty, truncated, corrupt, not a
    checkpoint at all, refused by the safe loader, or not written by the course.
    """
    source = Path(path).expanduser()
    with _opened(source) as handle:
        _check_start(source, handle)
        try:
            checkpoint = torch.load(handle, map_location=map_location, weights_only=True)
        except pickle.UnpicklingError as exc:
            if "weights only load failed" in str(exc).lower():
                raise _refused(source, exc) from exc
            raise _damaged(source, exc) from exc
        except Exception as exc:  # noqa: BLE001 - a damaged file fails in many different ways
            raise _damaged(source, exc) from exc
    _check_contents(source, checkpoint)
    return checkpoint


def _check_start(source: Path, handle) -> None:
    """Before unpickling: is this a complete zip written by torch.save (or an old pickle)?"""
    head = handle.read(64)
    handle.seek(0)
    if not head:
        raise CheckpointError(
            _(
                "{source} is empty (0 bytes): a copy or download that stopped before any data arrived. Use another copy, or train again into a new checkpoint path"
            ).format(source=source)
        )
    is_zip, is_pickle = head.startswith(b"PK\x03\x04"), head[:1] == b"\x80"
    if not (is_zip or is_pickle):
        raise CheckpointError(
            _(
                "{source} is not a checkpoint: {start}, while torch.save writes a zip archive. Check the path: pass a file written by save_checkpoint(), train() or 'python -m transformer_course train'"
            ).format(source=source, start=_describe_start(head))
        )
    if not is_zip:
        return
    try:
        names = zipfile.ZipFile(handle).namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _damaged(source, _("its end is missing: a zip archive keeps its index last")) from exc
    handle.seek(0)
    if not any(name.endswith("/data.pkl") for name in names):
        raise CheckpointError(
            _(
                "{source} is a zip archive but not one written by torch.save (it holds {names}…); pass a checkpoint written by the course"
            ).format(source=source, names=", ".join(names[:3]) or _("nothing"))
        )


def _check_contents(source: Path, checkpoint: Any) -> None:
    """After unpickling: the course's marker, a dict of weight tensors, a dict config."""
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise CheckpointError(
            _(
                "{source} loads, but it is not a transformer_course checkpoint (no {marker!r} marker); pass a file written by save_checkpoint() or train()"
            ).format(source=source, marker=FORMAT)
        )
    weights = checkpoint.get("model")
    if not isinstance(weights, dict) or not all(
        isinstance(v, torch.Tensor) for v in weights.values()
    ):
        raise CheckpointError(
            _(
                "{source} has the course's marker but no model weights (its 'model' entry is {kind}); it was not written by save_checkpoint(). Use another file"
            ).format(source=source, kind=type(weights).__name__)
        )
    config = checkpoint.get("model_config")
    if config is not None and not isinstance(config, dict):
        raise CheckpointError(
            _(
                "{source} has a model config that is a {kind}, not a dict of settings; it was not written by save_checkpoint(). Use another file"
            ).format(source=source, kind=type(config).__name__)
        )


def _damaged(source: Path, exc: BaseException | str) -> CheckpointError:
    """A file that starts like a checkpoint but cannot be read to its end."""
    text = _ANSI.sub("", str(exc)).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    return CheckpointError(
        _(
            "{source} is damaged ({reason}): truncated or corrupt, for instance copied only in part. Resume from another copy, or train again into a new checkpoint path; the course's own saves are atomic, so they never leave such a file."
        ).format(source=source, reason=reason)
    )


def _refused(source: Path, exc: BaseException) -> CheckpointError:
    torch_message = " ".join(_ANSI.sub("", str(exc)).split())
    return CheckpointError(
        _(
            "{source} was refused by the safe loader (torch.load with weights_only=True): it holds Python objects other than tensors and plain containers, and loading such objects can run code hidden in the file. A checkpoint written by this course never contains them, so the file was not written by the course. Do not load it; train a model here instead, or ask whoever sent it for a course checkpoint. PyTorch's message: {torch_message}"
        ).format(source=source, torch_message=torch_message)
    )
