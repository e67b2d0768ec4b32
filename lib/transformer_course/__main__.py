"""The course's command line (introduced in 11_training):

    python -m transformer_course train [options]            # train the tiny GPT, with a progress bar
    python -m transformer_course generate "prompt" [options]  # continue a prompt from a checkpoint
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
from dataclasses import MISSING, fields, replace
from pathlib import Path
from typing import Any

from .launch import (
    SMALL_STEP_MACS,
    auto_threads,
    check_writable,
    choose_threads,
    distributed_setup,
    interrupt_status,
)

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


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


#: How an option's text becomes the field's type (the annotation's first name: ``float | None``).
PARSERS = {"int": _whole_number, "float": _number, "str": str}


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: …)" only where there is a default worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def add_config_options(
    group: argparse._ArgumentGroup,
    config_class: type,
    preset: dict[str, Any],
    preset_name: str,
    *,
    only: dict[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    choices: dict[str, tuple[str, ...]] | None = None,
    groups: dict[str, argparse._ArgumentGroup] | None = None,
) -> None:
    """One option per field of the dataclass ``config_class``: ``--field-name``, parsed by the
    field's type, help from the field's metadata (or ``only[name]``, which also limits the fields).

    An option left out is None, so the field keeps ``preset``'s value, named in the help; a bool
    field becomes a flag (``--no-name`` when it defaults to True). Metadata may rename the
    option (``option``), move it to another of ``groups`` (``group``) or hide it (``cli=False``).
    """
    for spec in fields(config_class):
        meta = spec.metadata
        if (only is not None and spec.name not in only) or meta.get("cli") is False:
            continue
        text = (only or {}).get(spec.name) or meta["help"]
        where = (groups or {}).get(meta.get("group", ""), group)
        kind = str(spec.type).split("|")[0].strip()
        if kind == "bool":
            flag = meta.get("option") or ("--no-" if spec.default else "--") + spec.name.replace(
                "_", "-"
            )
            where.add_argument(
                flag, dest=spec.name, action="store_const", const=not spec.default, help=text
            )
            continue
        default = (defaults or {}).get(spec.name)
        shown = preset.get(spec.name, None if spec.default is MISSING else spec.default)
        if default is None and shown is not None:
            text += f" ({preset_name}: {shown})"
        option = meta.get("option") or "--" + spec.name.replace("_", "-")
        where.add_argument(
            option,
            dest=spec.name,
            metavar=option[2:].upper().replace("-", "_"),
            type=PARSERS[kind],
            choices=(choices or {}).get(spec.name),
            default=default,
            help=text,
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m transformer_course`` (every option has a help text)."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course",
        description="Train the course's tiny GPT on the sales textbook, or generate text with it.",
        epilog="Run 'python -m transformer_course COMMAND --help' for the options of a command.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_train(commands)
    _add_generate(commands)
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

    from .model import POSITIONALS, GPTConfig
    from .train import MODEL_PRESETS, PRESETS, TrainConfig

    train = commands.add_parser(
        "train",
        help="train a GPT (resumes from --checkpoint if it exists)",
        description=(
            "Train model.GPT with a progress bar. Options left out take their value from --preset. "
            "Under torchrun each process trains on its own batches and DistributedDataParallel "
            "averages the gradients (gloo on the CPU, nccl on CUDA GPUs)."
        ),
        formatter_class=_HelpFormatter,
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
        type=_whole_number,
        help="torch threads on the CPU (default: 1 for small models, where more threads only "
        "wait for each other; every core for big ones)",
    )


def _add_generate(commands) -> None:
    gen = commands.add_parser(
        "generate",
        help="continue a prompt with a trained checkpoint",
        description="Load a checkpoint written by 'train' and continue PROMPT token by token.",
        formatter_class=_HelpFormatter,
    )
    gen.add_argument("prompt", help="the text to continue (at least one token)")
    gen.add_argument(
        "--checkpoint", default=DEFAULT_CHECKPOINT, help="checkpoint written by 'train'"
    )
    options = (
        ("--max-new-tokens", _whole_number, 50, "how many tokens to add"),
        ("--temperature", _number, 0.8, "softmax temperature; 0 = greedy (always the most probable token)"),
        ("--top-k", _whole_number, None, "sample only among the k most probable tokens"),
        ("--top-p", _number, None, "sample only among the most probable tokens whose probabilities "
         "add up to p (0 < p ≤ 1)"),
        ("--seed", _whole_number, 0, "seed of the sampling, for a reproducible continuation"),
    )  # fmt: skip
    for option, parse, default, text in options:
        gen.add_argument(option, type=parse, default=default, help=text)
    gen.add_argument("--device", help="cpu, cuda or mps (default: the best available)")


def training_config(args: argparse.Namespace):
    """The ``TrainConfig`` the options ask for: ``--preset``'s recipe with every given option set."""
    from .train import PRESETS, TrainConfig

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
    elif args.seed < 0:
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
    import torch
    from torch import distributed as dist

    from . import data, tokenizer
    from .checkpoint import CheckpointError, read_checkpoint
    from .model import GPT
    from .train import model_preset
    from .vocabulary import CompactVocabulary

    say = print
    checkpoint = Path(args.train_config.checkpoint_path)
    try:
        device, rank, world = distributed_setup(args.device)
        say = print if rank == 0 else (lambda *a, **k: None)
        text = data.load_text(args.text)
        # A text may contain "<|endoftext|>": train on it as ordinary characters.
        ids = torch.tensor(
            tokenizer.get_encoding().encode(text, disallowed_special=()), dtype=torch.long
        )  # (N,)
        if args.vocab == "compact":
            vocab = CompactVocabulary.from_ids(ids)
            vocab_size, stream, meta = (
                vocab.size,
                vocab.encode(ids),
                {"vocabulary": vocab.to_list()},
            )
        else:
            vocab_size, stream, meta = int(ids.max()) + 1, ids, {"vocabulary": None}
        meta["encoding"] = "cl100k_base"
        train_ids, val_ids = data.train_val_split(stream)
        config = replace(args.train_config, device=str(device))
        chosen = {
            name: getattr(args, name) for name in MODEL_OPTIONS if getattr(args, name) is not None
        }
        model_config = model_preset(
            args.preset, vocab_size, **chosen, context_length=config.context_length
        )
        if checkpoint.exists() and config.resume:
            saved = read_checkpoint(checkpoint)
            if saved.get("vocabulary") != meta["vocabulary"]:
                raise CheckpointError(
                    f"{checkpoint} was trained on a different vocabulary (another --text or --vocab); "
                    "use --fresh to start over or pass another --checkpoint"
                )
            say(f"resuming from {checkpoint} at step {saved.get('step', 0)} of {config.steps}")
        if rank == 0:
            check_writable(checkpoint)
        torch.manual_seed(config.seed)  # the same initial weights on every process
        model = GPT(model_config)
        threads = choose_threads(
            args.threads, model.num_parameters(), config.batch_size * config.context_length, device
        )
        say(
            f"{model.num_parameters():,} parameters, vocabulary {vocab_size:,} ({args.vocab}), "
            f"{train_ids.numel():,} training / {val_ids.numel():,} validation tokens, "
            f"{world} process{'es' if world > 1 else ''} on {device.type}, "
            f"{threads} torch thread{'s' if threads > 1 else ''}; {_describe_saves(config)}"
        )
        from .train import train

        history = train(model, train_ids, val_ids, config, meta=meta)
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    if history.interrupted:
        say(
            f"interrupted ({history.stopped_by}) after step {history.steps}; checkpoint kept at "
            f"{checkpoint} — run the same command to resume"
        )
        return interrupt_status(history.stopped_by)
    if history.val_loss:
        from .diagnostics import perplexity

        say(
            f"step {history.steps}: validation loss {history.val_loss[-1]:.3f}, perplexity "
            f"{perplexity(history.val_loss[-1]):.1f} (whole validation split)"
        )
    if history.seconds > 0:
        say(f"{history.tokens / history.seconds:,.0f} tokens/s this run; checkpoint: {checkpoint}")
    return 0


def command_generate(args: argparse.Namespace) -> int:
    import torch

    from . import tokenizer
    from .checkpoint import model_from_checkpoint
    from .device import pick_device
    from .generate import generate
    from .streaming import TokenStreamer
    from .vocabulary import CompactVocabulary

    # A prompt with undecodable bytes arrives as lone surrogates; print them as "?", never fail.
    with contextlib.suppress(AttributeError, ValueError):  # a replaced stdout may not reconfigure
        sys.stdout.reconfigure(errors="replace")
    try:
        device = pick_device(args.device)
        model, saved = model_from_checkpoint(args.checkpoint, device=device)
        encoding = tokenizer.get_encoding(saved.get("encoding", "cl100k_base"))
        # "<|endoftext|>" in a prompt is ordinary text here, as in training.
        ids = torch.tensor(
            encoding.encode(args.prompt, disallowed_special=()), dtype=torch.long
        )  # (T,)
        if ids.numel() == 0:
            raise ValueError("the prompt is empty; give at least one word to continue from")
        vocab = (
            CompactVocabulary(torch.tensor(saved["vocabulary"]))
            if saved.get("vocabulary")
            else None
        )
        if vocab is not None:
            unknown = ids[~vocab.contains(ids)]
            if unknown.numel():
                pieces = ", ".join(repr(encoding.decode([int(i)])) for i in unknown[:8])
                raise ValueError(
                    f"the prompt has tokens the model's compact vocabulary does not know: {pieces}; "
                    "rephrase it with words from the training text"
                )
            ids = vocab.encode(ids)
        context = model.config.context_length
        # Print each token as it comes; the streamer holds back a character split across
        # tokens (a Chinese character or an emoji) until its last byte arrives.
        streamer = TokenStreamer(encoding.decode_single_token_bytes)
        shown = []

        def show(token: torch.Tensor) -> None:  # token: (1,)
            if not shown:
                print(args.prompt, end="", flush=True)
                shown.append(True)
            original = token.cpu() if vocab is None else vocab.decode(token.cpu())  # (1,)
            print(streamer.push(int(original[0])), end="", flush=True)

        generate(
            model,
            ids[-context:].to(device),
            args.max_new_tokens,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            generator=torch.Generator(device=device).manual_seed(args.seed),
            on_token=show,
        )  # (T' + n,)
    except _user_errors() as exc:
        if getattr(args, "debug", False):
            raise
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    print(("" if shown else args.prompt) + streamer.flush(), flush=True)
    note = _undertrained_note(saved, model.config.vocab_size)
    if note:
        print(note, file=sys.stderr)
    return 0


#: Above this validation loss the CLI says what the text means (measured with the cpu-demo model
#: on the textbook: 40 steps, loss 6.46: greedy gives "the the the ..."; 200 steps, 5.52: runs of
#: textbook phrases; 11_training's 700 steps reach 4.73).
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
        "near 6.5 it knows little beyond the commonest word, so --temperature 0 repeats "
        "'the the the', near 5.5 it strings textbook phrases together; train longer "
        "(--steps 700 reaches about 4.7) for text that reads more like English"
    )


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the input or the environment is wrong", not "the code is"."""
    from .numerics import NonFiniteLossError
    from .tokenizer import EncodingUnavailableError

    return (ValueError, OSError, NonFiniteLossError, EncodingUnavailableError)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m transformer_course`` and of the ``transformer-course`` script.

    Returns the exit status: 0 done, 2 a user error (one ``error:`` line on stderr), 128 + N when
    signal N stopped training (after saving). ``--debug`` re-raises errors with their traceback.
    """
    args = parse_args(argv)
    debug = getattr(args, "debug", False)
    command = command_train if args.command == "train" else command_generate
    try:
        return command(args)
    except KeyboardInterrupt:
        if debug:
            raise
        print(
            "error: stopped at once by a second interrupt, without saving; the last checkpoint "
            f"({getattr(args, 'checkpoint_path', None) or DEFAULT_CHECKPOINT}) is intact — run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except _user_errors() as exc:
        if debug:
            raise
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
