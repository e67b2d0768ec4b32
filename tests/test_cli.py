"""The command line: a tiny training run, resuming it, generating from it, help and bad arguments."""

from __future__ import annotations

import argparse
import runpy
import sys

import pytest

from transformer_course.checkpoint import load_checkpoint
from transformer_course.cli import build_parser, main

TEXT = (
    "The salesperson listens to the customer. The customer explains the need, and the salesperson "
    "asks a question about the need. Good questions build trust, and trust builds sales. "
) * 20

TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--context-length", "8", "--batch-size", "4",
        "--eval-interval", "0", "--checkpoint-interval", "0", "--no-progress", "--device", "cpu"]  # fmt: skip


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


def run_train(text_file, checkpoint, *extra):
    return main(["train", "--text", text_file, "--checkpoint", str(checkpoint), *TINY, *extra])


def test_train_resume_and_generate(tmp_path, text_file, capsys):
    checkpoint = tmp_path / "gpt.pt"
    assert run_train(text_file, checkpoint, "--steps", "3") == 0
    out = capsys.readouterr().out
    assert "validation loss" in out and "parameters" in out
    saved = load_checkpoint(checkpoint)
    assert saved["step"] == 3 and saved["world_size"] == 1
    assert saved["train_config"]["batch_size"] == 4 and saved["model_config"]["d_model"] == 16
    assert saved["vocabulary"] == sorted(set(saved["vocabulary"])) and len(saved["vocabulary"]) < 60

    assert run_train(text_file, checkpoint, "--steps", "5") == 0
    assert "resuming from" in capsys.readouterr().out
    assert load_checkpoint(checkpoint)["step"] == 5
    assert len(load_checkpoint(checkpoint)["history"]["train_loss"]) == 5

    assert main(["generate", "The customer", "--checkpoint", str(checkpoint), "--max-new-tokens", "4",
                 "--temperature", "0", "--device", "cpu"]) == 0  # fmt: skip
    first = capsys.readouterr().out
    assert first.startswith("The customer") and len(first.strip()) > len("The customer")
    assert main(["generate", "The customer", "--checkpoint", str(checkpoint), "--max-new-tokens", "4",
                 "--temperature", "0", "--device", "cpu"]) == 0  # fmt: skip
    assert capsys.readouterr().out == first, "greedy decoding is deterministic"


def test_changed_model_options_do_not_silently_resume(tmp_path, text_file, capsys):
    checkpoint = tmp_path / "gpt.pt"
    assert run_train(text_file, checkpoint, "--steps", "2") == 0
    capsys.readouterr()
    assert run_train(text_file, checkpoint, "--steps", "3", "--n-layers", "2") == 2
    err = capsys.readouterr().err
    assert "n_layers: checkpoint 1, model 2" in err and "new checkpoint path" in err
    assert run_train(text_file, checkpoint, "--steps", "3", "--n-layers", "2", "--fresh") == 0
    assert load_checkpoint(checkpoint)["model_config"]["n_layers"] == 2


def test_generate_errors(tmp_path, text_file, capsys):
    assert main(["generate", "hello", "--checkpoint", str(tmp_path / "missing.pt")]) == 2
    assert "no checkpoint at" in capsys.readouterr().err
    checkpoint = tmp_path / "gpt.pt"
    assert run_train(text_file, checkpoint, "--steps", "1") == 0
    capsys.readouterr()
    assert main(["generate", "", "--checkpoint", str(checkpoint)]) == 2
    assert "prompt is empty" in capsys.readouterr().err
    assert main(["generate", "Quantum chromodynamics", "--checkpoint", str(checkpoint)]) == 2
    assert "compact vocabulary does not know" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--steps", "0"], "must be at least 1"),
        (["train", "--lr", "fast"], "expected a number"),
        (["train", "--vocab", "tiny"], "invalid choice"),
        (["generate"], "required: prompt"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_model_shape_is_explained(tmp_path, text_file, capsys):
    assert run_train(text_file, tmp_path / "m.pt", "--steps", "1", "--n-heads", "3") == 2
    assert "n_heads (3) must divide d_model (16)" in capsys.readouterr().err


def test_every_option_is_explained():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == {"train", "generate", "check", "grade"}
    for name, sub in commands.choices.items():
        text = sub.format_help()
        for action in sub._actions:
            assert action.help and action.help != argparse.SUPPRESS, (
                f"{name} {action.option_strings} has no help"
            )
            for option in action.option_strings:
                assert option in text


def test_module_entry_point(monkeypatch, capsys):
    """``python -m transformer_course`` runs ``main`` (run in-process: a subprocess would pay
    PyTorch's import again)."""
    monkeypatch.setattr(sys, "argv", ["transformer_course", "train", "--help"])
    monkeypatch.delitem(
        sys.modules, "transformer_course.__main__", raising=False
    )  # as a fresh `python -m`
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module("transformer_course", run_name="__main__")
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--checkpoint" in out and "torchrun" in out


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "env, argv, message",
    [
        ({}, ["train", "--device", "foo"], "device 'foo' is not one of cuda, mps, cpu"),
        ({"TRANSFORMER_COURSE_DEVICE": "foo"}, ["train"], "TRANSFORMER_COURSE_DEVICE"),
        ({"WORLD_SIZE": "abc"}, ["train"], "WORLD_SIZE='abc' is not a whole number"),
        ({"WORLD_SIZE": "2"}, ["train"], "WORLD_SIZE=2 is set but RANK, MASTER_ADDR, MASTER_PORT are not"),
        ({"TRANSFORMER_COURSE_CORPUS": "", "TRANSFORMER_COURSE_DATA": "{file}"}, ["train"],
         "$TRANSFORMER_COURSE_DATA is .*, which is a file, not a folder"),
        ({"TIKTOKEN_CACHE_DIR": "{file}"}, ["train", "--text", "{file}"], "$TIKTOKEN_CACHE_DIR is .*a file"),
    ],
)  # fmt: skip
def test_environment_and_device_errors_are_one_line(
    tmp_path, monkeypatch, capsys, env, argv, message
):
    import re

    file = tmp_path / "notes.txt"
    file.write_text(TEXT, encoding="utf-8")
    for name in ("WORLD_SIZE", "TRANSFORMER_COURSE_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(file=file))
    assert main([a.format(file=file) for a in argv]) == 2
    assert re.search(message.replace("$", r"\$"), _error_line(capsys))


def test_cuda_without_cuda_is_one_line(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["train", "--device", "cuda"]) == 2
    assert "CUDA is not available here" in _error_line(capsys)
    assert main(["generate", "hi", "--device", "cuda"]) == 2
    assert "CUDA is not available here" in _error_line(capsys)


@pytest.mark.parametrize(
    "content", [b"hello world", b"these are my notes", b'{"a": 1}', b"", b"\x80\x02garbage"]
)
@pytest.mark.parametrize("command", ["train", "generate"])
def test_bad_checkpoint_files_are_one_line(tmp_path, text_file, capsys, content, command):
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    argv = (
        ["generate", "The customer", "--checkpoint", str(path)]
        if command == "generate"
        else ["train", "--text", text_file, "--checkpoint", str(path), *TINY, "--steps", "2"]
    )
    assert main(argv) == 2
    assert str(path) in _error_line(capsys)


def test_checkpoint_folder_is_one_line(tmp_path, capsys):
    assert main(["generate", "hi", "--checkpoint", str(tmp_path)]) == 2
    assert "is a folder, not a checkpoint file" in _error_line(capsys)


def test_tokenizer_missing_offline_is_one_line(tmp_path, text_file, monkeypatch, capsys):
    import tiktoken

    def offline(name):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert run_train(text_file, tmp_path / "gpt.pt", "--steps", "2") == 2
    line = _error_line(capsys)
    assert "could not load the tiktoken encoding" in line and "TIKTOKEN_CACHE_DIR" in line


def test_diverging_run_is_one_line_and_keeps_the_checkpoint(tmp_path, text_file, capsys):
    checkpoint = tmp_path / "gpt.pt"
    assert run_train(text_file, checkpoint, "--steps", "3") == 0
    before = checkpoint.read_bytes()
    capsys.readouterr()
    assert run_train(text_file, checkpoint, "--steps", "40", "--lr", "1e30") == 2
    line = _error_line(capsys)
    assert "the training loss became NaN at step" in line and "learning rate" in line
    assert checkpoint.read_bytes() == before


def test_debug_shows_the_traceback(capsys):
    with pytest.raises(ValueError, match="device 'foo'"):
        main(["--debug", "train", "--device", "foo"])
    with pytest.raises(ValueError, match="device 'foo'"):
        main(["train", "--device", "foo", "--debug"])


def test_special_token_text_is_ordinary_text(tmp_path, capsys):
    text = tmp_path / "special.txt"
    text.write_text(TEXT + " <|endoftext|> " + TEXT, encoding="utf-8")
    checkpoint = tmp_path / "gpt.pt"
    assert (
        main(["train", "--text", str(text), "--checkpoint", str(checkpoint), *TINY, "--steps", "2"])
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "generate",
                "The customer <|endoftext|>",
                "--checkpoint",
                str(checkpoint),
                "--max-new-tokens",
                "2",
            ]
        )
        == 0
    )


def test_summary_line_shows_threads_and_save_interval(tmp_path, text_file, capsys):
    assert (
        run_train(
            text_file,
            tmp_path / "gpt.pt",
            "--steps",
            "2",
            "--threads",
            "1",
            "--checkpoint-seconds",
            "30",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "1 torch thread;" in out and "checkpoint every 30 s to" in out


def test_thread_rule():
    from transformer_course.cli import auto_threads

    assert auto_threads(642_368, 32 * 16, cores=2) == 1  # the CLI default model
    assert auto_threads(10**9, 4096, cores=8) == 8


def test_unwritable_checkpoint_folder_is_refused_before_training(tmp_path, text_file, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert run_train(text_file, blocker / "gpt.pt", "--steps", "2") == 2
    captured = capsys.readouterr()
    assert (
        captured.err.startswith("error: cannot write checkpoints to")
        and "--checkpoint" in captured.err
    )
    assert "parameters" not in captured.out, "refused before the model is built and trained"
