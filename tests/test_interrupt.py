"""Signals, full disks and diverging runs: nothing lost, nothing cryptic (issue 17).

- SIGTERM and SIGINT sent to a real training subprocess (the command line): it finishes the
  step, saves, says how to resume and exits with 128 + the signal's number; resuming gives
  weights and a loss history bit-identical to an uninterrupted run.
- A save on a full disk (a 1 MiB tmpfs when the tests run as root, else a patched writer) says
  "could not save to X: no space left …; the previous checkpoint X is intact", and ``train()``
  hands its history over with the error.
- A huge learning rate makes the loss NaN: training stops with the step, the learning rate, the
  dtype and the likely cause, and the good checkpoint is not overwritten.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from transformer_course.checkpoint import (
    CheckpointSaveError,
    NonFiniteWeightsError,
    save_checkpoint,
)
from transformer_course.cli import main
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import TrainConfig, train
from transformer_course.train.numerics import NonFiniteLossError, non_finite_loss_message

TEXT = (
    "The salesperson listens to the customer. The customer explains the need, and the salesperson "
    "asks a question about the need. Good questions build trust, and trust builds sales. "
) * 20

STEPS = 30
ARGS = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--context-length", "8",
        "--batch-size", "4", "--eval-interval", "10", "--checkpoint-interval", "0",
        "--checkpoint-seconds", "0", "--steps", str(STEPS), "--no-progress", "--device", "cpu"]  # fmt: skip

# The subprocess runs the real command line; its training loop is slowed by a callback that
# sleeps (numbers unchanged) and announces step 3, so the signal lands mid-run, between steps.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import transformer_course.train as training
    from transformer_course.cli import main

    real_train, marker = training.train, Path(sys.argv[1])

    def slow(step, history):
        if step == 3:
            marker.write_text("started")
        time.sleep(0.05)

    def train(*args, **kwargs):
        return real_train(*args, callback=slow, **kwargs)

    training.train = train
    sys.exit(main(sys.argv[2:]))
    """
)


def _child_env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    src = str(Path(__file__).resolve().parents[1] / "lib")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def _weights(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    saved = torch.load(path, weights_only=True)
    return saved["model"], saved["history"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_saves_and_resume_is_bit_identical(tmp_path, signum):
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    marker, interrupted = tmp_path / "started", tmp_path / "interrupted.pt"
    argv = ["train", "--text", str(text), *ARGS]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), *argv, "--checkpoint", str(interrupted)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), child.communicate()
    child.send_signal(signum)
    out, err = child.communicate(timeout=120)
    name = signal.Signals(signum).name
    assert child.returncode == 128 + signum, (out, err)
    assert f"interrupted ({name}) after step" in out and "run the same command to resume" in out
    assert "Traceback" not in err and f"{name}: stopping after this step" in err
    done = int(out.split("after step ")[1].split(";")[0])
    saved = torch.load(interrupted, weights_only=True)
    assert saved["step"] == done and 3 <= done < STEPS, "no completed step may be lost"

    # Resume (same command) and compare with one uninterrupted run: bit for bit.
    assert main([*argv, "--checkpoint", str(interrupted)]) == 0
    reference = tmp_path / "reference.pt"
    assert main([*argv, "--checkpoint", str(reference)]) == 0
    (resumed_w, resumed_h), (ref_w, ref_h) = _weights(interrupted), _weights(reference)
    assert resumed_w.keys() == ref_w.keys()
    assert all(torch.equal(resumed_w[k], ref_w[k]) for k in ref_w)
    assert resumed_h["train_loss"] == ref_h["train_loss"] and len(ref_h["train_loss"]) == STEPS
    assert resumed_h["val_loss"] == ref_h["val_loss"]


def tiny(seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=32, context_length=8, d_model=16, n_heads=2, n_layers=1))


def streams() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(0, 32, (300,), generator=torch.Generator().manual_seed(0))
    return ids[:250], ids[250:]


def quick(**overrides) -> TrainConfig:
    values = dict(steps=8, batch_size=4, context_length=8, lr=3e-3, warmup=1, eval_interval=0,
                  progress=False, device="cpu", checkpoint_seconds=0)  # fmt: skip
    values.update(overrides)
    return TrainConfig(**values)


def test_huge_learning_rate_stops_with_a_diagnosis_and_keeps_the_good_checkpoint(tmp_path):
    path = tmp_path / "good.pt"
    model = tiny()
    good = train(model, *streams(), quick(checkpoint_path=str(path)))
    assert good.steps == 8
    before = path.read_bytes()
    with pytest.raises(NonFiniteLossError) as caught:
        train(model, *streams(), quick(steps=40, lr=1e30, checkpoint_path=str(path)))
    error = caught.value
    message = str(error)
    assert f"at step {error.step}" in message and error.step > 8
    assert "learning rate" in message and "float32" in message
    assert "far too high" in message and "lower it" in message
    assert error.history is not None and error.history.steps == error.step
    assert error.history.train_loss[:8] == good.train_loss
    assert path.read_bytes() == before, "the good checkpoint must not be overwritten"


def test_non_finite_weights_are_never_saved(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", tiny(), step=1)
    before = path.read_bytes()
    broken = tiny()
    with torch.no_grad():
        broken.lm_head.weight[0, 0] = float("nan")
    with pytest.raises(NonFiniteWeightsError, match=r"not saving to .*lm_head.weight.*left intact"):
        save_checkpoint(path, broken, step=2)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "dtype, lr, losses, start_ok, cause",
    [
        (torch.float16, 1e-3, [], True, "float16 overflow"),
        (torch.float32, 1.0, [], True, "far too high"),
        (torch.float32, 1e-3, [3.0, 2.0, 4.5], True, "climbed from 2.000 to 4.500"),
        (torch.float32, 1e-3, [], False, "already NaN or inf when this run began"),
        (torch.bfloat16, 1e-3, [3.0, 2.9], True, "try 0.0001"),
    ],
)
def test_diagnosis_names_step_lr_dtype_and_cause(dtype, lr, losses, start_ok, cause):
    message = non_finite_loss_message(7, lr, dtype, float("inf"), losses, start_ok)
    assert message.startswith(f"the training loss became inf at step 7 (learning rate {lr:.3g}")
    assert str(dtype).replace("torch.", "") in message and cause in message


def _fill_disk(folder: Path) -> None:
    """Leave almost no room on the file system holding ``folder``."""
    handle = open(folder / "filler", "wb")  # noqa: SIM115 - closing it fails on a full disk too
    try:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()
    except OSError:
        pass
    with contextlib.suppress(OSError):
        handle.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB file system (tmpfs) as root; elsewhere None and the tests patch the writer."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0:
        yield None
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_full_disk_keeps_the_previous_checkpoint_and_says_so(small_disk, tmp_path, monkeypatch):
    model = tiny()
    if small_disk is None:  # not root: a writer that fails the way a full disk does
        folder = tmp_path / "disk"
        path = save_checkpoint(folder / "m.pt", model, step=1)

        def full(*args, **kwargs):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(torch, "save", full)
    else:
        folder = small_disk
        path = save_checkpoint(folder / "m.pt", model, step=1)
        _fill_disk(folder)
    before = path.read_bytes()
    with pytest.raises(CheckpointSaveError) as caught:
        save_checkpoint(path, model, step=2)
    message = str(caught.value)
    assert message.startswith(f"could not save to {path}: no space left")
    assert message.endswith(f"the previous checkpoint {path} is intact")
    assert "enforce fail" not in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["m.pt", *(["filler"] if small_disk else [])]
    )

    # train() hands its history over with the error, and the old checkpoint survives.
    with pytest.raises(CheckpointSaveError) as caught:
        train(
            model, *streams(), quick(checkpoint_path=str(path), resume=False, checkpoint_interval=4)
        )
    assert caught.value.history is not None and caught.value.history.steps == 4
    assert path.read_bytes() == before


def test_read_only_folder(tmp_path, monkeypatch):
    path = save_checkpoint(tmp_path / "m.pt", tiny(), step=1)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    with pytest.raises(
        CheckpointSaveError,
        match=r"could not save to .*m.pt: no permission to write in .*previous checkpoint .* is intact",
    ):
        save_checkpoint(path, tiny(), step=2)


def test_time_based_saves(tmp_path, monkeypatch):
    import transformer_course.train.run as training

    saved_at = []
    real = training.save_checkpoint

    def record(path, model, optimizer=None, **meta):
        saved_at.append(meta["step"])
        return real(path, model, optimizer, **meta)

    monkeypatch.setattr(training, "save_checkpoint", record)
    clock = iter(range(0, 10_000, 25))  # each reading 25 s after the last
    monkeypatch.setattr(training.time, "monotonic", lambda: float(next(clock)))
    train(tiny(), *streams(), quick(checkpoint_path=str(tmp_path / "m.pt"), checkpoint_seconds=60))
    # readings at 0 (start), then 25, 50, 75 … per step: a save whenever 60 s have passed
    assert saved_at == [3, 6, 8]


def test_stale_temporary_files_are_removed(tmp_path):
    stale = tmp_path / ".m.pt.abc123.tmp"
    stale.write_bytes(b"left by a killed save")
    save_checkpoint(tmp_path / "m.pt", tiny())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]


def test_training_a_diverged_model_says_so_at_step_one():
    model = tiny()
    with torch.no_grad():
        model.lm_head.weight.fill_(float("nan"))
    with pytest.raises(
        NonFiniteLossError, match="at step 1 .*already NaN or inf when this run began"
    ) as caught:
        train(model, *streams(), quick())
    assert caught.value.history.steps == 1
