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
import os
import sys
from dataclasses import replace
from pathlib import Path

DEFAULT_CHECKPOINT = "checkpoints/gpt.pt"

#: Below this many multiply-adds per training step (parameters x tokens per step) one torch thread
#: is fastest: the work per operation is too small to share, and extra threads mostly wait for
#: each other. Every model measured on the 2-core machine (benchmarks/bench_threads.py, up to
#: 8.5e9 per step) was faster on one thread; see auto_threads for the numbers.
SMALL_STEP_MACS = 5e10


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def auto_threads(parameters: int, tokens_per_step: int, cores: int | None = None) -> int:
    """The torch thread count the command line trains with (11_training; issue 18).

    One thread when a step is small (``parameters × tokens_per_step`` below
    :data:`SMALL_STEP_MACS`), else every core. Measured on a 2-core machine shared with other
    jobs, tokens/s at 2 threads relative to 1 (benchmarks/bench_threads.py, medians): the
    default CLI model (642 k parameters × 512 tokens per step) 0.22×, and through the CLI itself
    10,541 vs 7,436 tokens/s (0.71×); the full-vocabulary model (6.8 M × 512) 0.39×; the "gpu"
    preset's model (2.1 M × 4,096) 0.42×. The gap narrows as steps grow, so steps far larger than
    any measured here get every core. ``--threads`` overrides the rule.
    """
    cores = cores or os.cpu_count() or 1
    if parameters * tokens_per_step < SMALL_STEP_MACS:
        return 1
    return max(1, cores)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: …)" only where there is a default worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m transformer_course`` (every option has a help text)."""
    from .model import POSITIONALS
    from .train import MODEL_PRESETS, PRESETS

    demo, model = PRESETS["cpu-demo"], MODEL_PRESETS["cpu-demo"]
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course",
        description="Train the course's tiny GPT on the sales textbook, or generate text with it.",
        epilog="Run 'python -m transformer_course COMMAND --help' for the options of a command.",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error instead of one 'error:' line",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    group.add_argument(
        "--text", default=None, help="UTF-8 text file to train on (default: the sales textbook)"
    )
    group.add_argument(
        "--vocab",
        choices=["compact", "full"],
        default="compact",
        help="'compact': only the token ids the text uses (3,771 for the textbook); 'full': every id up to the largest one",
    )
    group = train.add_argument_group("model (a GPTConfig; unset options come from --preset)")
    group.add_argument(
        "--d-model",
        type=_positive_int,
        help=f"width of every token vector, C (cpu-demo: {model['d_model']})",
    )
    group.add_argument(
        "--n-heads",
        type=_positive_int,
        help=f"attention heads per block, must divide --d-model (cpu-demo: {model['n_heads']})",
    )
    group.add_argument(
        "--n-layers",
        type=_positive_int,
        help=f"number of Transformer blocks (cpu-demo: {model['n_layers']})",
    )
    group.add_argument(
        "--dropout",
        type=_non_negative_float,
        help=f"dropout probability during training (cpu-demo: {model['dropout']})",
    )
    group.add_argument(
        "--positional",
        choices=list(POSITIONALS),
        help=f"how the model knows positions: the seed's sinusoidal table, a learned table, RoPE, or none (cpu-demo: {model['positional']})",
    )
    group = train.add_argument_group("training (a TrainConfig; unset options come from --preset)")
    group.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="cpu-demo",
        help="recipe: 'cpu-demo' (11_training's run), 'seed' (the source's batch 4, lr 1e-3, 5000 steps), 'gpu' (longer, bigger batches)",
    )
    group.add_argument(
        "--steps", type=_positive_int, help=f"optimisation steps in total (cpu-demo: {demo.steps})"
    )
    group.add_argument(
        "--batch-size", type=_positive_int, help=f"sequences per step (cpu-demo: {demo.batch_size})"
    )
    group.add_argument(
        "--context-length",
        type=_positive_int,
        help=f"tokens per sequence, also the model's context (cpu-demo: {demo.context_length})",
    )
    group.add_argument(
        "--lr", type=_positive_float, help=f"peak learning rate (cpu-demo: {demo.lr})"
    )
    group.add_argument(
        "--min-lr",
        type=_non_negative_float,
        help="learning rate at the end of the cosine (default: lr / 10)",
    )
    group.add_argument(
        "--warmup",
        type=_non_negative_int,
        help=f"steps of linear warm-up (cpu-demo: {demo.warmup})",
    )
    group.add_argument(
        "--weight-decay",
        type=_non_negative_float,
        help=f"AdamW weight decay on matrices (cpu-demo: {demo.weight_decay})",
    )
    group.add_argument(
        "--grad-clip",
        type=_non_negative_float,
        help=f"clip the gradient norm to this; 0 = no clipping (cpu-demo: {demo.grad_clip})",
    )
    group.add_argument(
        "--eval-interval",
        type=_non_negative_int,
        help=f"validate (whole validation split) every N steps; 0 = only at the end (cpu-demo: {demo.eval_interval})",
    )
    group.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed for the initial weights, the batches and dropout",
    )
    group.add_argument(
        "--device",
        default=None,
        help="cpu, cuda or mps (default: the best available; under torchrun, cuda:LOCAL_RANK)",
    )
    group.add_argument(
        "--no-autocast",
        action="store_true",
        help="train in float32 even on CUDA (default: bf16 autocast there)",
    )
    group.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    group.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="torch threads on the CPU (default: 1 for small models, where more threads only "
        "wait for each other; every core for big ones)",
    )
    group = train.add_argument_group("checkpoints")
    group.add_argument(
        "--checkpoint",
        default=DEFAULT_CHECKPOINT,
        help="where the checkpoint is written and resumed from",
    )
    group.add_argument(
        "--checkpoint-interval",
        type=_non_negative_int,
        default=500,
        help="also checkpoint every N steps; 0 = only at the end and on Ctrl-C",
    )
    group.add_argument(
        "--checkpoint-seconds",
        type=_non_negative_float,
        default=60.0,
        help="also checkpoint whenever this many seconds of training have passed since the last "
        "save, so a killed run loses at most that much; 0 = never by time",
    )
    group.add_argument(
        "--fresh",
        action="store_true",
        help="ignore an existing checkpoint and start from step 0 (it is overwritten)",
    )

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
    gen.add_argument(
        "--max-new-tokens", type=_non_negative_int, default=50, help="how many tokens to add"
    )
    gen.add_argument(
        "--temperature",
        type=_non_negative_float,
        default=0.8,
        help="softmax temperature; 0 = greedy (always the most probable token)",
    )
    gen.add_argument(
        "--top-k",
        type=_positive_int,
        default=None,
        help="sample only among the k most probable tokens",
    )
    gen.add_argument(
        "--top-p",
        type=_positive_float,
        default=None,
        help="sample only among the most probable tokens whose probabilities add up to p (0 < p ≤ 1)",
    )
    gen.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed of the sampling, for a reproducible continuation",
    )
    gen.add_argument(
        "--device", default=None, help="cpu, cuda or mps (default: the best available)"
    )
    for sub in (train, gen):
        sub.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show the full traceback of an error instead of one 'error:' line",
        )
    return parser


def _distributed_setup(requested_device: str | None):
    """Join the process group torchrun describes (if any); return (device, rank, world)."""
    import torch
    from torch import distributed as dist

    from .device import pick_device

    world = _env_int("WORLD_SIZE", 1)
    if world <= 1:
        return pick_device(requested_device), 0, 1
    missing = [name for name in ("RANK", "MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        raise ValueError(
            f"WORLD_SIZE={world} is set but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
            "not: start several processes with 'torchrun --nproc_per_node=N -m transformer_course "
            "train', or unset WORLD_SIZE to train in one process"
        )
    rank = _env_int("RANK", 0)
    local_rank = _env_int("LOCAL_RANK", 0)
    if not 0 <= rank < world:
        raise ValueError(f"RANK={rank} must lie in 0..WORLD_SIZE-1 = 0..{world - 1}; start with torchrun")
    device = pick_device(requested_device)
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")  # gloo trains on the CPU; MPS has no collective backend
        backend = "gloo"
    try:
        dist.init_process_group(backend=backend)
    except (ValueError, RuntimeError) as exc:
        raise ValueError(
            f"could not join the {world} training processes ({str(exc).splitlines()[0]}); start "
            "them with torchrun, or unset WORLD_SIZE to train in one process"
        ) from exc
    return device, dist.get_rank(), dist.get_world_size()


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"the environment variable {name}={text!r} is not a whole number; torchrun sets it, "
            f"so unset it (unset {name}) or start the run with torchrun"
        ) from None
    if value < 0:
        raise ValueError(f"the environment variable {name}={value} must be 0 or more; unset it")
    return value


def _choose_threads(args: argparse.Namespace, parameters: int, tokens_per_step: int, device) -> int:
    """Set and return the torch thread count: --threads, else the size rule, shared by the
    processes of this machine under torchrun."""
    import torch

    if args.threads is not None:
        threads = args.threads
    else:
        local = _env_int("LOCAL_WORLD_SIZE", 1) or 1
        cores = max(1, (os.cpu_count() or 1) // local)
        threads = auto_threads(parameters, tokens_per_step, cores)
    if device.type == "cpu" or args.threads is not None:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def _training_config(args: argparse.Namespace, device, checkpoint: str):
    from .train import PRESETS

    overrides = {
        name: getattr(args, name)
        for name in (
            "steps",
            "batch_size",
            "context_length",
            "lr",
            "min_lr",
            "warmup",
            "weight_decay",
            "eval_interval",
        )
        if getattr(args, name) is not None
    }
    if args.grad_clip is not None:
        overrides["grad_clip"] = args.grad_clip or None
    preset = PRESETS[args.preset]
    return replace(
        preset,
        **overrides,
        seed=args.seed,
        device=str(device),
        autocast=not args.no_autocast,
        progress=not args.no_progress,
        checkpoint_path=checkpoint,
        checkpoint_interval=args.checkpoint_interval,
        checkpoint_seconds=args.checkpoint_seconds,
        resume=not args.fresh,
    )


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
    checkpoint = Path(args.checkpoint)
    try:
        device, rank, world = _distributed_setup(args.device)
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
        config = _training_config(args, device, args.checkpoint)
        chosen = {
            name: getattr(args, name)
            for name in ("d_model", "n_heads", "n_layers", "dropout", "positional")
            if getattr(args, name) is not None
        }
        model_config = model_preset(
            args.preset, vocab_size, **chosen, context_length=config.context_length
        )
        if checkpoint.exists() and not args.fresh:
            saved = read_checkpoint(checkpoint)
            if saved.get("vocabulary") != meta["vocabulary"]:
                raise CheckpointError(
                    f"{checkpoint} was trained on a different vocabulary (another --text or --vocab); "
                    "use --fresh to start over or pass another --checkpoint"
                )
            say(f"resuming from {checkpoint} at step {saved.get('step', 0)} of {config.steps}")
        if rank == 0:
            _check_writable(checkpoint)
        torch.manual_seed(config.seed)  # the same initial weights on every process
        model = GPT(model_config)
        threads = _choose_threads(
            args, model.num_parameters(), config.batch_size * config.context_length, device
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
        return _interrupt_status(history.stopped_by)
    if history.val_loss:
        from .diagnostics import perplexity

        say(
            f"step {history.steps}: validation loss {history.val_loss[-1]:.3f}, perplexity "
            f"{perplexity(history.val_loss[-1]):.1f} (whole validation split)"
        )
    if history.seconds > 0:
        say(f"{history.tokens / history.seconds:,.0f} tokens/s this run; checkpoint: {checkpoint}")
    return 0


def _check_writable(checkpoint: Path) -> None:
    """Refuse an unwritable --checkpoint before training, not after the work is done."""
    import tempfile

    from .checkpoint import CheckpointSaveError

    try:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=checkpoint.parent):
            pass
    except OSError as exc:
        raise CheckpointSaveError(
            f"cannot write checkpoints to {checkpoint.parent} ({exc.strerror or exc}); pass a "
            "--checkpoint path in a writable folder"
        ) from exc


def _interrupt_status(name: str) -> int:
    """The shell's convention: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    import signal

    number = getattr(signal, name, None) if name.startswith("SIG") else None
    return 128 + int(number) if number is not None else 130


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
        ids = torch.tensor(encoding.encode(args.prompt, disallowed_special=()), dtype=torch.long)  # (T,)
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
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    command = command_train if args.command == "train" else command_generate
    try:
        return command(args)
    except KeyboardInterrupt:
        if debug:
            raise
        print(
            "error: stopped at once by a second interrupt, without saving; the last checkpoint "
            f"({getattr(args, 'checkpoint', DEFAULT_CHECKPOINT)}) is intact — run the same command to resume",
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
