"""The command line's options come from the config dataclasses: one field, one option."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields

import pytest

from transformer_course.cli import DEFAULT_CHECKPOINT, MODEL_OPTIONS, build_parser, parse_args
from transformer_course.cli.options import add_config_options
from transformer_course.train import PRESETS, TrainConfig


def _train_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices["train"]


def test_every_train_config_field_is_an_option_with_its_help():
    options = {a.dest: a for a in _train_parser()._actions}
    for spec in fields(TrainConfig):
        if spec.metadata.get("cli") is False:
            assert spec.name not in options
            continue
        assert spec.name in options, f"TrainConfig.{spec.name} has no command-line option"
        assert options[spec.name].help.startswith(spec.metadata["help"])
    for name in MODEL_OPTIONS:
        assert name in options


def test_options_left_out_keep_the_preset_and_given_ones_replace_it():
    args = parse_args(["train"])
    assert args.train_config == TrainConfig(
        **{
            **PRESETS["cpu-demo"].__dict__,
            "checkpoint_path": DEFAULT_CHECKPOINT,
            "checkpoint_interval": 500,
        }
    )
    config = parse_args(
        ["train", "--preset", "seed", "--steps", "7", "--grad-clip", "0", "--fresh", "--no-autocast",
         "--no-progress", "--checkpoint", "x.pt", "--min-lr", "0"]
    ).train_config  # fmt: skip
    assert (config.steps, config.batch_size, config.lr) == (7, 4, 1e-3)  # the rest: seed recipe
    assert config.grad_clip is None and config.min_lr == 0.0
    assert not config.resume and not config.autocast and not config.progress
    assert config.checkpoint_path == "x.pt"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "steps must be at least 1"),
        (["--steps", "1.5"], "expected a whole number"),
        (["--grad-clip", "-1"], "grad_clip must be a positive finite number or None"),
        (["--checkpoint-seconds", "-1"], "checkpoint_seconds must be"),
        (["--threads", "0"], "--threads: must be at least 1"),
    ],
)
def test_a_bad_setting_exits_with_usage(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["train", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m transformer_course train" in err and message in err


def test_a_new_field_needs_no_other_edit():
    @dataclass
    class Settings:
        width: int = field(default=8, metadata={"help": "how wide"})
        rate: float | None = field(default=None, metadata={"help": "how fast"})
        loud: bool = field(default=True, metadata={"help": "be quiet"})
        hidden: str = field(default="x", metadata={"help": "internal", "cli": False})

    parser = argparse.ArgumentParser()
    add_config_options(parser.add_argument_group("settings"), Settings, {"width": 16}, "big")
    assert parser.parse_args([]).__dict__ == {"width": None, "rate": None, "loud": None}
    parsed = parser.parse_args(["--width", "3", "--rate", "0.5", "--no-loud"])
    assert parsed.__dict__ == {"width": 3, "rate": 0.5, "loud": False}
    assert "how wide (big: 16)" in " ".join(parser.format_help().split())
