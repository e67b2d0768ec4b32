"""The course's command line (introduced in 11_training):

    python -m transformer_course train [options]            # train the tiny GPT, with a progress bar
    python -m transformer_course generate "prompt" [options]  # continue a prompt from a checkpoint
    python -m transformer_course check notebooks/ [--run]     # which exercises of yours pass
    python -m transformer_course grade SUBMISSIONS/ --out grades.csv   # a teacher grades a class
    torchrun --nproc_per_node=2 -m transformer_course train [options]   # several processes (DDP)

``transformer-course`` (installed with the package) is the same program. The defaults are the
notebooks': 11_training's "cpu-demo" recipe on the sales textbook with the compact vocabulary.
Training writes a checkpoint (``checkpoints/gpt.pt`` by default) and resumes from it when run
again with the same options; Ctrl-C, SIGTERM or SIGHUP stops after the current step and keeps a
checkpoint (exit status 128 + the signal's number), and a checkpoint is also written every
``--checkpoint-seconds``. Every user error (a bad option, a damaged checkpoint, a full disk,
missing offline data…) prints one ``error: …`` line and exits with status 2; ``--debug`` shows
the traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ..i18n import _, language
from .launch import (
    SMALL_STEP_MACS,
    auto_threads,
    check_writable,
    choose_threads,
    distributed_setup,
    interrupt_status,
    interrupted_message,
    no_interrupts,
    signals_interrupt,
)
from .options import HelpFormatter, add_config_options, number, whole_number
from .teaching import command_check, command_grade

__all__ = ["SMALL_STEP_MACS", "auto_threads", "build_parser", "main", "parse_args"]

DEFAULT_CHECKPOINT = "checkpoints/gpt.pt"

#: Where the command line's default differs from the preset's: it always keeps a checkpoint.
TRAIN_DEFAULTS = {"checkpoint_path": DEFAULT_CHECKPOINT, "checkpoint_interval": 500}

#: The ``GPTConfig`` fields ``train`` offers as options, with their help (a new one: one line).
MODEL_OPTIONS = {
    "d_model": "width of every token vector, C",
    "n_heads": "attention heads per block, must divide --d-model",
    "n_layers": "number of Transformer blocks",
    "dropout": "dropout probability during training",
    "positional": "how the model knows positions: the seed's sinusoidal table, a learned table, "
    "RoPE, or none",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m transformer_course`` (every option has a help text)."""
    # Imported here, not at the top: the exercises import torch (seconds), and main() must be
    # inside its Ctrl-C handling before anything slow starts.
    from ..exercises.grading import add_grade_command
    from ..exercises.progress import add_check_command

    parser = argparse.ArgumentParser(
        prog="python -m transformer_course",
        description="Train the course's tiny GPT, generate text with it, or table your exercises.",
        epilog="Run 'python -m transformer_course COMMAND --help' for the options of a command.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_train(commands)
    _add_generate(commands)
    add_check_command(commands)
    add_grade_command(commands)
    for sub in (parser, *commands.choices.values()):
        sub.add_argument(
            "--debug",
            action="store_true",
            default=False if sub is parser else argparse.SUPPRESS,
            help="show the full traceback of an error instead of one 'error:' line",
        )
    return parser


def _add_train(commands) -> None:
    from dataclasses import asdict

    from ..model import POSITIONALS, GPTConfig
    from ..train import MODEL_PRESETS, PRESETS, TrainConfig

    train = commands.add_parser(
        "train",
        help="train a GPT (resumes from --checkpoint if it exists)",
        description=(
            "Train model.GPT with a progress bar. Options left out take their value from --preset. "
            "Under torchrun each process trains on its own batches and DistributedDataParallel "
            "averages the gradients (gloo on the CPU, nccl on CUDA GPUs)."
        ),
        formatter_class=HelpFormatter,
    )
    group = train.add_argument_group("data")
    group.add_argument("--text", help="UTF-8 text file to train on (default: the sales textbook)")
    group.add_argument(
        "--vocab",
        choices=["compact", "full"],
        default="compact",
        help="'compact': only the token ids the text uses (3,771 for the textbook); "
        "'full': every id up to the largest one",
    )
    group = train.add_argument_group("model (a GPTConfig; unset options come from --preset)")
    add_config_options(
        group, GPTConfig, MODEL_PRESETS["cpu-demo"], "cpu-demo", only=MODEL_OPTIONS,
        choices={"positional": POSITIONALS},
    )  # fmt: skip
    group = train.add_argument_group("training (a TrainConfig; unset options come from --preset)")
    group.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="cpu-demo",
        help="recipe: 'cpu-demo' (11_training's run), 'seed' (the source's batch 4, lr 1e-3, "
        "5000 steps), 'gpu' (longer, bigger batches)",
    )
    checkpoints = train.add_argument_group("checkpoints")
    add_config_options(
        group, TrainConfig, asdict(PRESETS["cpu-demo"]), "cpu-demo", defaults=TRAIN_DEFAULTS,
        groups={"checkpoints": checkpoints},
    )  # fmt: skip
    group.add_argument(
        "--threads",
        type=whole_number,
        help="torch threads on the CPU (default: 1 for small models, where more threads only "
        "wait for each other; every core for big ones)",
    )


def _add_generate(commands) -> None:
    gen = commands.add_parser(
        "generate",
        help="continue a prompt with a trained checkpoint",
        description="Load a checkpoint written by 'train' and continue PROMPT token by token.",
        formatter_class=HelpFormatter,
    )
    gen.add_argument("prompt", help="the text to continue (at least one token)")
    gen.add_argument(
        "--checkpoint", default=DEFAULT_CHECKPOINT, help="checkpoint written by 'train'"
    )
    options = (
        ("--max-new-tokens", whole_number, 50, "how many tokens to add"),
        ("--temperature", number, 0.8, "softmax temperature; 0 = greedy (always the most probable token)"),
        ("--top-k", whole_number, None, "sample only among the k most probable tokens"),
        ("--top-p", number, None, "sample only among the most probable tokens whose probabilities "
         "add up to p (0 < p ≤ 1)"),
        ("--seed", whole_number, 0, "seed of the sampling, for a reproducible continuation"),
    )  # fmt: skip
    for option, parse, default, text in options:
        gen.add_argument(option, type=parse, default=default, help=text)
    gen.add_argument("--device", help="cpu, cuda or mps (default: the best available)")


def training_config(args: argparse.Namespace):
    """The ``TrainConfig`` the options ask for: ``--preset``'s recipe with every given option set."""
    from ..train import PRESETS, TrainConfig

    overrides = {}
    for spec in fields(TrainConfig):
        value = getattr(args, spec.name, None)
        if value is not None:
            zero_is_none = spec.metadata.get("zero_is_none") and value == 0
            overrides[spec.name] = None if zero_is_none else value
    return replace(PRESETS[args.preset], **overrides)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; a bad training setting exits with status 2 and argparse's usage,
    as a malformed option does. ``train``'s namespace carries its ``train_config``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    refuse = command.choices[args.command].error
    if args.command == "train":
        try:
            args.train_config = training_config(args)
        except (TypeError, ValueError) as exc:
            refuse(str(exc))
        if args.threads is not None and args.threads < 1:
            refuse(f"argument --threads: must be at least 1, got {args.threads}")
    elif args.command == "generate" and args.seed < 0:
        refuse(f"argument --seed: must be 0 or more, got {args.seed}")
    return args


def _describe_saves(config) -> str:
    parts = []
    if config.checkpoint_interval:
        parts.append(f"every {config.checkpoint_interval} steps")
    if config.checkpoint_seconds:
        parts.append(f"every {config.checkpoint_seconds:g} s")
    when = " and ".join(parts) if parts else "only at the end"
    return f"checkpoint {when} to {config.checkpoint_path}"


def command_train(args: argparse.Namespace) -> int:
    """``train``: read and tokenize the text, build the model, train it; returns the exit status."""
    import torch
    from torch import distributed as dist

    from ..data import load_corpus
    from ..model import GPT
    from ..train import model_preset, train

    checkpoint = Path(args.train_config.checkpoint_path)
    try:
        device, rank, world = distributed_setup(args.device)
        say = print if rank == 0 else _silent
        corpus = load_corpus(args.text, vocab=args.vocab)
        config = replace(args.train_config, device=str(device))
        chosen = {
            name: getattr(args, name) for name in MODEL_OPTIONS if getattr(args, name) is not None
        }
        model_config = model_preset(
            args.preset, corpus.vocab_size, **chosen, context_length=config.context_length
        )
        _check_resumable(checkpoint, config, corpus.codec.meta(), say)
        if rank == 0:
            check_writable(checkpoint)
        torch.manual_seed(config.seed)  # the same initial weights on every process
        model = GPT(model_config)
        tokens_per_step = config.batch_size * config.context_length
        threads = choose_threads(args.threads, model.num_parameters(), tokens_per_step, device)
        say(
            f"{model.num_parameters():,} parameters, vocabulary {corpus.vocab_size:,} ({args.vocab}), "
            f"{corpus.train_ids.numel():,} training / {corpus.val_ids.numel():,} validation tokens, "
            f"{world} process{'es' if world > 1 else ''} on {device.type}, "
            f"{threads} torch thread{'s' if threads > 1 else ''}; {_describe_saves(config)}"
        )
        history = train(model, corpus.train_ids, corpus.val_ids, config, meta=corpus.codec.meta())
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    return _report(history, checkpoint, say)


def _silent(*_args: Any, **_kwargs: Any) -> None:
    """``print`` for the processes other than rank 0, which say nothing."""


def _check_resumable(checkpoint: Path, config, meta: dict[str, Any], say) -> None:
    """Refuse to resume a checkpoint trained on another vocabulary; say where a resume starts."""
    from ..checkpoint import CheckpointError, read_checkpoint

    if not (checkpoint.exists() and config.resume):
        return
    saved = read_checkpoint(checkpoint)
    if saved.get("vocabulary") != meta["vocabulary"]:
        raise CheckpointError(
            _(
                "{checkpoint} was trained on a different vocabulary (another --text or --vocab); "
                "use --fresh to start over or pass another --checkpoint"
            ).format(checkpoint=checkpoint)
        )
    say(f"resuming from {checkpoint} at step {saved.get('step', 0)} of {config.steps}")


def _report(history, checkpoint: Path, say) -> int:
    """The closing lines of a run, and its exit status (128 + the signal's number if stopped)."""
    from ..diagnostics import perplexity

    if history.interrupted:
        say(
            f"interrupted ({history.stopped_by}) after step {history.steps}; checkpoint kept at "
            f"{checkpoint} — run the same command to resume"
        )
        return interrupt_status(history.stopped_by)
    if history.val_loss:
        say(
            f"step {history.steps}: validation loss {history.val_loss[-1]:.3f}, perplexity "
            f"{perplexity(history.val_loss[-1]):.1f} (whole validation split)"
        )
    if history.seconds > 0:
        say(f"{history.tokens / history.seconds:,.0f} tokens/s this run; checkpoint: {checkpoint}")
    return 0


class _StreamPrinter:
    """Prints the prompt, then each generated token as it comes: the streamer holds back a
    character split across tokens (a Chinese character or an emoji) until its last byte arrives."""

    def __init__(self, prompt: str, codec) -> None:
        from ..streaming import TokenStreamer

        self.prompt, self.codec, self.started = prompt, codec, False
        self.streamer = TokenStreamer(codec.encoding.decode_single_token_bytes)

    def show(self, token) -> None:  # token: (1,)
        if not self.started:
            print(self.prompt, end="", flush=True)
            self.started = True
        print(self.streamer.push(int(self.codec.original_ids(token)[0])), end="", flush=True)

    def finish(self) -> None:
        """The characters still held back, and the end of the line."""
        print(("" if self.started else self.prompt) + self.streamer.flush(), flush=True)


def command_generate(args: argparse.Namespace) -> int:
    """``generate``: continue the prompt with a checkpoint's model, printing each token as it comes."""
    import torch

    from ..checkpoint import model_from_checkpoint
    from ..data import Codec
    from ..generate import generate
    from ..machine import pick_device

    # A prompt with undecodable bytes arrives as lone surrogates; print them as "?", never fail.
    with contextlib.suppress(AttributeError, ValueError):  # a replaced stdout may not reconfigure
        sys.stdout.reconfigure(errors="replace")
    try:
        device = pick_device(args.device)
        model, saved = model_from_checkpoint(args.checkpoint, device=device)
        codec = Codec.from_meta(saved)
        # "<|endoftext|>" in a prompt is ordinary text here, as in training.
        ids = codec.encode(args.prompt, what="the prompt")  # (T,)
        if ids.numel() == 0:
            raise ValueError(_("the prompt is empty; give at least one word to continue from"))
        printer = _StreamPrinter(args.prompt, codec)
        generate(
            model,
            ids[-model.config.context_length :].to(device),
            args.max_new_tokens,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            generator=torch.Generator(device=device).manual_seed(args.seed),
            on_token=printer.show,
        )  # (T' + n,)
    except _user_errors() as exc:
        if getattr(args, "debug", False):
            raise
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    printer.finish()
    note = _undertrained_note(saved, model.config.vocab_size)
    if note:
        print(note, file=sys.stderr)
    return 0


#: Above this validation loss the CLI says what the text means (measured with the cpu-demo model
#: on the textbook: 40 steps, loss 6.50: greedy gives "and and and ..."; 200 steps, 5.57: runs of
#: textbook phrases, then a loop; 11_training's 700 steps reach 4.65; README.md quotes the runs).
UNDERTRAINED_LOSS = 5.0


def _undertrained_note(saved: dict, vocab_size: int) -> str | None:
    """One line explaining the output of an undertrained checkpoint, or None (README: Command line)."""
    import math

    losses = (saved.get("history") or {}).get("val_loss") or []
    if not losses or losses[-1] < UNDERTRAINED_LOSS:
        return None
    return (
        f"note: this model trained {saved.get('step', '?')} steps to validation loss "
        f"{losses[-1]:.2f} (guessing uniformly: ln {vocab_size:,} = {math.log(vocab_size):.2f}); "
        "near 6.5 it knows little beyond a few common words, so --temperature 0 repeats one "
        "of them ('and and and'), near 5.5 it strings textbook phrases together until it "
        "loops; train longer (--steps 700 reaches about 4.65) for text that reads more like "
        "English"
    )


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the input or the environment is wrong", not "the code is"."""
    from ..tokenizer import EncodingUnavailableError
    from ..train.numerics import NonFiniteLossError

    return (ValueError, OSError, NonFiniteLossError, EncodingUnavailableError)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m transformer_course`` and of the ``transformer-course`` script.

    Returns the exit status: 0 done, 2 a user error (one ``error:`` line on stderr, an unknown
    ``TRANSFORMER_COURSE_LANG`` included), 128 + N when signal N stopped training (after saving)
    or, for ``train``, when SIGTERM or SIGHUP got through at any other moment, 130 when a Ctrl-C
    did (while starting, a second Ctrl-C during a save, after training): then one line says what
    the checkpoint on disk holds and how to go on. ``--debug`` re-raises errors with their traceback.
    """
    args = None
    with signals_interrupt() as default_signals:
        try:
            # Inside the try: parsing imports torch (seconds), a window a Ctrl-C often lands in.
            args = parse_args(argv)
            if args.command != "train":
                default_signals()  # SIGTERM and SIGHUP stop the other commands as they always did
            language()  # a wrong TRANSFORMER_COURSE_LANG is an error now, not after the work
            command = {
                "train": command_train,
                "generate": command_generate,
                "check": command_check,
                "grade": command_grade,
            }[args.command]
            return command(args)
        except KeyboardInterrupt as exc:
            if getattr(args, "debug", False):
                raise
            return _interrupted(args, getattr(exc, "signal_name", "SIGINT"))
        except _user_errors() as exc:
            if getattr(args, "debug", False):
                raise
            print(f"error: {_one_line(exc)}", file=sys.stderr)
            return 2


def _interrupted(args: argparse.Namespace | None, signal_name: str) -> int:
    """An interrupt that got through to ``main``: one line of what is saved; 128 + the signal's
    number (130 for Ctrl-C, 143 for SIGTERM)."""
    with no_interrupts():
        print(f"\n{interrupted_message(args, signal_name)}", file=sys.stderr, flush=True)
    return interrupt_status(signal_name)
