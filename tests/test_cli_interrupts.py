"""Ctrl-C at any moment of ``python -m transformer_course train`` ends with one line that says
what is saved and how to go on, exit status 130 or 128 + 2, never a traceback or a silent death
by the signal (exit status -2); so do SIGTERM and SIGHUP before the training loop (whose guard
handles them between steps: ``tests/test_interrupt.py``), with 128 + their number.

The moments: while Python imports the course and torch (the real command, signalled 0.3 s after
it starts); while the text is read and tokenized, and after the parameters line but before the
first step (SIGTERM, SIGHUP); twice in a row while a checkpoint is being written (the second
Ctrl-C stops at once); and after training returned, while the run is closing. All but the first
run the real command line in a child whose ``load_corpus``, ``save_checkpoint`` or ``train`` is
wrapped to signal itself at that moment, so the moment is exact, not a matter of timing. (The
single Ctrl-C between steps is ``tests/test_interrupt.py``.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

TEXT = "The customer explains the need, and the salesperson asks a question about it. " * 40
ARGS = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--context-length", "8",
        "--batch-size", "4", "--eval-interval", "0", "--checkpoint-seconds", "0",
        "--no-progress", "--device", "cpu"]  # fmt: skip
REPO = Path(__file__).resolve().parents[1]

# The child signals itself at the moment its first argument names, then runs the command line.
CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    import transformer_course.train.run as run
    import transformer_course.train as training
    from transformer_course.__main__ import main

    import transformer_course.data as data

    # "SIGTERM:before training" sends SIGTERM; a moment alone, SIGINT.
    name, _, moment = sys.argv[1].rpartition(":")
    stop = getattr(signal, name or "SIGINT")
    real_save, real_train, saves = run.save_checkpoint, training.train, []
    real_load = data.load_corpus

    def load_corpus(*args, **kwargs):
        if moment == "loading data":
            os.kill(os.getpid(), stop)
            time.sleep(1)
        return real_load(*args, **kwargs)

    def save_checkpoint(*args, **kwargs):
        saves.append(1)
        if moment == "second save" and len(saves) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # stop after this step…
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)  # …no, at once: lands inside the write
            time.sleep(1)
        return real_save(*args, **kwargs)

    def train(*args, **kwargs):
        if moment == "before training":  # the parameters line is out; no step has run
            os.kill(os.getpid(), stop)
            time.sleep(1)
        history = real_train(*args, **kwargs)
        if moment == "after training":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        return history

    run.save_checkpoint, training.train, data.load_corpus = save_checkpoint, train, load_corpus
    sys.exit(main(sys.argv[2:]))
    """
)


def _ctrl_c_reaches_the_child() -> None:
    """Run in the child before Python starts: a shell that starts a job in the background with
    ``&`` (no job control) hands it SIGINT ignored, and Python then never raises
    KeyboardInterrupt. A learner's terminal delivers Ctrl-C; so must the test, however CI is run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "lib"), env.get("PYTHONPATH")]))
    return env


def _train_argv(tmp_path: Path, steps: int, interval: int) -> list[str]:
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    return ["train", "--text", str(text), *ARGS, "--steps", str(steps)] + [
        "--checkpoint-interval", str(interval), "--checkpoint", str(tmp_path / "gpt.pt")
    ]  # fmt: skip


def _saved_step(tmp_path: Path) -> int:
    return torch.load(tmp_path / "gpt.pt", weights_only=True)["step"]


def test_ctrl_c_while_starting(tmp_path):
    _signal_while_starting(tmp_path, signal.SIGINT, 130, "interrupted")


def test_sigterm_while_starting(tmp_path):
    _signal_while_starting(tmp_path, signal.SIGTERM, 143, "interrupted (SIGTERM)")


def _signal_while_starting(tmp_path, stop: signal.Signals, status: int, stopped: str) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "transformer_course", *_train_argv(tmp_path, 20, 0)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=tmp_path,
        preexec_fn=_ctrl_c_reaches_the_child,
    )
    time.sleep(0.3)  # Python is up; the course and torch are being imported
    child.send_signal(stop)
    out, err = child.communicate(timeout=120)
    assert child.returncode == status, (child.returncode, out, err)
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] in {
        f"{stopped} while starting, before anything was trained or saved",
        f"{stopped} before the first checkpoint was written: nothing is saved at "
        f"{tmp_path / 'gpt.pt'}; run the same command to resume",
    }, err
    assert not (tmp_path / "gpt.pt").exists()


def _run_child(tmp_path: Path, moment: str, argv: list[str]) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, moment, *argv],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=180,
        preexec_fn=_ctrl_c_reaches_the_child,
    )
    return result.returncode, result.stdout, result.stderr


def test_second_ctrl_c_inside_a_checkpoint_write_keeps_the_previous_one(tmp_path):
    # A save every 5 steps: the second save (step 10) is the one interrupted.
    code, out, err = _run_child(tmp_path, "second save", _train_argv(tmp_path, 20, 5))
    assert code == 130, (code, out, err)
    assert "Traceback" not in err
    assert "SIGINT: stopping after this step" in err
    assert _saved_step(tmp_path) == 5, "the checkpoint of step 5 survives the interrupted write"
    assert err.strip().splitlines()[-1] == (
        "interrupted; nothing more was saved: the last checkpoint, "
        f"{tmp_path / 'gpt.pt'} (step 5 of 20), is intact — run the same command to resume"
    )
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_ctrl_c_after_training_says_what_is_saved(tmp_path):
    code, out, err = _run_child(tmp_path, "after training", _train_argv(tmp_path, 12, 0))
    assert code == 130, (code, out, err)
    assert "Traceback" not in err
    assert _saved_step(tmp_path) == 12
    assert err.strip().splitlines()[-1] == (
        "interrupted; nothing more was saved: the last checkpoint, "
        f"{tmp_path / 'gpt.pt'} (step 12 of 12), is intact — run the same command to resume"
    )


@pytest.mark.parametrize(
    "stop, moment",
    [("SIGTERM", "loading data"), ("SIGTERM", "before training"), ("SIGHUP", "before training")],
)
def test_a_stop_signal_before_the_first_step_says_nothing_is_saved(tmp_path, stop, moment):
    if not hasattr(signal, stop):
        pytest.skip(f"no {stop} on this system")
    code, out, err = _run_child(tmp_path, f"{stop}:{moment}", _train_argv(tmp_path, 12, 0))
    assert code == 128 + getattr(signal, stop), (code, out, err)
    assert "Traceback" not in err
    assert ("parameters, vocabulary" in out) == (moment == "before training"), out
    assert err.strip().splitlines()[-1] == (
        f"interrupted ({stop}) before the first checkpoint was written: nothing is saved at "
        f"{tmp_path / 'gpt.pt'}; run the same command to resume"
    ), err
    assert not (tmp_path / "gpt.pt").exists()
