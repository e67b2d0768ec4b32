"""The capstone: the learner's own GPT class (written in 10_logits_and_loss, trained in 11_training).

The learner writes ``class MyGPT(nn.Module)`` from their own pieces — the sinusoidal table (03),
causal attention (08), LayerNorm (09) — with one method per stage of the model, so that a wrong
model can be told *which* stage is wrong:

- ``token_vectors(idx)``: the table's rows × √d_model (stage "embedding");
- ``add_positions(h)``: + the sinusoidal table's first T rows ("+ positions");
- ``attention_step(k, h)``: h + causal attention of LayerNorm(h) ("block k attention");
- ``feed_forward_step(k, h)``: h + FFN of LayerNorm(h) ("block k feed-forward");
- ``final_layer_norm(h)``: the LayerNorm after the last block ("final norm");
- ``output_logits(h)``: h @ tableᵀ, the tied output layer ("head");
- ``forward(idx, targets)``: the stages in order, and the loss.

:func:`check_my_gpt` builds the library's :class:`~transformer_course.model.GPT` of the same
sizes (the course's defaults: tied table, ×√d_model, sinusoidal positions, pre-norm, ReLU),
copies its weights into the learner's model by parameter name (the names the stub's docstring
lists, which are the library's own), runs every stage of both on the library's input to that
stage, and names the first stage whose output differs; then it compares ``forward``'s logits and
loss. :func:`check_your_gpt_trains` trains the learner's class with the learner's training step
(11) and lets it write.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from .. import data
from ..diagnostics import check_initial_loss
from ..i18n import N_, NC_, _, pgettext
from ..model import GPT, GPTConfig
from ..train import evaluate, lr_at, make_optimizer
from . import Feedback, checker, report, unanswered
from .build import compare_tensors
from .solutions.my_gpt import MyGPT

#: What to look at when a stage differs (declared in English, shown as ``_(STAGE_HINTS[kind])``).
STAGE_HINTS = {
    "embedding": N_(
        "the token vectors are the table's rows times √d_model (`token_embedding.weight[idx]`)."
    ),
    "+ positions": N_(
        "add the sinusoidal table's first T rows (notebook 03) to the token vectors."
    ),
    "attention": N_(
        "pre-norm: h + attention(LayerNorm(h)) — the norm goes on the sub-layer's input, never on the "
        "residual path; split (B, T, C) → (B, H, T, D), scores / √D, the causal mask, softmax, "
        "weights @ V, merge the heads, then out_proj (W_O)."
    ),
    "feed-forward": N_("h + down(ReLU(up(LayerNorm(h)))), with norm2's γ and β."),
    "final norm": N_(
        "LayerNorm with final_norm's γ and β, the variance divided by C, ε = 1e-5 inside the root."
    ),
    "head": N_(
        "the output layer is the table itself: h @ token_embedding.weight.T, no bias (tied)."
    ),
    "forward": N_(
        "your stages are right, so look at forward: token_vectors → add_positions → for every block "
        "attention_step then feed_forward_step → final_layer_norm → output_logits; the loss is "
        "F.cross_entropy over all B·T positions (None without targets)."
    ),
}
#: The stages as a learner reads their names (``block {k} …`` for the stages of block k), in the
#: context "GPT stage": "head" is the output layer here, an attention head in the widgets.
STAGE = "GPT stage"  # written out in each NC_() below: Babel extracts literals only
STAGE_NAMES = {
    "embedding": NC_("GPT stage", "embedding"),
    "+ positions": NC_("GPT stage", "+ positions"),
    "attention": NC_("GPT stage", "block {k} attention"),
    "feed-forward": NC_("GPT stage", "block {k} feed-forward"),
    "final norm": NC_("GPT stage", "final norm"),
    "head": NC_("GPT stage", "head"),
}


#: What check_my_gpt says of the stub and of a class that passes (shown with ``_()``).
MY_GPT_STUB = N_(
    "MyGPT is still the stub — write its constructor and methods, run the cell again. "
    "Stuck? `check_my_gpt(MyGPT, hint=True)`."
)
MY_GPT_MATCHES = N_(
    "MyGPT, given the library's weights, matches the course's GPT at every stage and end to end "
    "(logits and loss) on 3 random models: a GPT of your own. Notebook 11 trains it."
)


def _stage_kind(stage: str) -> str:
    """``block 2 attention`` -> ``attention``; other stages are their own kind."""
    return stage.split(" ", 2)[-1] if stage.startswith("block") else stage


def _shown_stage(stage: str) -> str:
    """A stage's name in the learner's language."""
    k = stage.split(" ", 2)[1] if stage.startswith("block") else ""
    return pgettext(STAGE, STAGE_NAMES[_stage_kind(stage)]).format(k=k)


@dataclass(frozen=True)
class ClassExercise:
    """A build exercise whose answer is a class (the capstone): what :func:`.build.show_solution`
    and the progress table need to know about it."""

    name: str
    solution: type


def _sizes(generator: torch.Generator) -> dict[str, int]:
    """A random small model: 1–3 heads of an even size (sinusoidal pairs), 1–3 blocks, a context
    of 3–8 (so that a batch can be shorter than it, as in generation)."""
    n_heads = int(torch.randint(1, 4, (), generator=generator))
    return {
        "vocab_size": int(torch.randint(5, 40, (), generator=generator)),
        "context_length": int(torch.randint(3, 9, (), generator=generator)),
        "d_model": n_heads * 2 * int(torch.randint(1, 4, (), generator=generator)),
        "n_heads": n_heads,
        "n_layers": int(torch.randint(1, 4, (), generator=generator)),
    }


def _batch_shape(sizes: dict[str, int], trial: int, generator: torch.Generator) -> tuple[int, int]:
    """(B, T) of trial 0, 1, 2: T is the whole context, one token (generation's first step), and
    a length in between (a text's last window): a model that adds the whole positional table fails."""
    B, context_length = int(torch.randint(1, 4, (), generator=generator)), sizes["context_length"]
    if trial == 0:
        return B, context_length
    if trial == 1:
        return B, 1
    return B, int(torch.randint(2, context_length, (), generator=generator))


def _library_gpt(sizes: dict[str, int], generator: torch.Generator) -> GPT:
    """The library GPT of these sizes with weights that make every stage matter: trained-looking
    norms and biases (a skipped norm or bias shows) and linear weights of std 1/√fan_in (each
    block changes the stream by about as much as it carries)."""
    model = GPT(GPTConfig(**sizes, dropout=0.0)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name == "token_embedding.weight":
                continue  # the course's init: the table at std 1/√(2C)
            if "norm" in name:
                base = 1.0 if name.endswith("weight") else 0.0
                p.copy_(base + 0.3 * torch.randn(p.shape, generator=generator))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=generator))
            else:
                p.copy_(torch.randn(p.shape, generator=generator) / p.shape[1] ** 0.5)
    return model


def _is_stub(model: nn.Module, idx: torch.Tensor) -> bool:
    """The notebook's stub: no parameters yet, and a forward whose body is ``...``."""
    if any(True for _parameter in model.parameters()):
        return False
    try:
        return model(idx) is None
    except Exception:
        return False


def _copy_weights(library: GPT, mine: nn.Module) -> str | None:
    """Copy ``library``'s parameters into ``mine`` by name; a sentence when the names do not fit."""
    theirs = dict(library.named_parameters())  # the tied table once: lm_head.weight is the same
    ours = dict(mine.named_parameters())
    missing = [name for name in theirs if name not in ours]
    if missing:
        return _(
            "MyGPT has no parameter named {key!r} ({n} of the {total} names the checker copies into are missing). Name them as the stub's docstring lists."
        ).format(key=missing[0], n=len(missing), total=len(theirs))
    extra = [name for name in ours if name not in theirs]
    if extra:
        return _(
            "MyGPT has a parameter {key!r} that the course's GPT has not ({n} extra). Hold only the listed parameters; the output layer is the table itself (tied)."
        ).format(key=extra[0], n=len(extra))
    for name, p in theirs.items():
        if tuple(ours[name].shape) != tuple(p.shape):
            return _("MyGPT's {name!r} has shape {shape}; the course's GPT has {expected}.").format(
                name=name, shape=tuple(ours[name].shape), expected=tuple(p.shape)
            )
    with torch.no_grad():
        for name, p in theirs.items():
            ours[name].copy_(p)
    return None


def _reference_stages(model: GPT, idx: torch.Tensor):
    """(stage name, method, arguments, expected output) for every stage of the library model."""
    h = model.token_embedding(idx) * model.config.embedding_multiplier  # (B, T, C)
    yield "embedding", "token_vectors", (idx,), h
    h_in, h = h, h + model.positional_table[: idx.shape[1]]  # (B, T, C)
    yield "+ positions", "add_positions", (h_in,), h
    for k, block in enumerate(model.blocks):
        h_in, h = h, h + block.attn(block.norm1(h), causal=True)  # (B, T, C)
        yield f"block {k} attention", "attention_step", (k, h_in), h
        h_in, h = h, h + block.ffn(block.norm2(h))  # (B, T, C)
        yield f"block {k} feed-forward", "feed_forward_step", (k, h_in), h
    h_in, h = h, model.final_norm(h)  # (B, T, C)
    yield "final norm", "final_layer_norm", (h_in,), h
    yield "head", "output_logits", (h,), model.lm_head(h)  # (B, T, V)


def _stage_problem(
    mine: nn.Module, library: GPT, idx: torch.Tensor, targets: torch.Tensor
) -> str | None:
    """The first stage (then forward) where ``mine`` differs from ``library``, as a sentence."""
    for stage, method, args, expected in _reference_stages(library, idx):
        shown = ", ".join(
            ["idx" if a is idx else "h" if isinstance(a, torch.Tensor) else str(a) for a in args]
        )
        call = f"`{method}({shown})`"
        name = _shown_stage(stage)
        if not callable(getattr(mine, method, None)):
            return _(
                "MyGPT has no method `{method}` (stage {stage}); the stub lists one method per stage."
            ).format(method=method, stage=name)
        try:
            given = getattr(mine, method)(*args)
        except Exception as error:
            if stage == "+ positions" and idx.shape[1] < library.config.context_length:
                problem = _("your {call} raised {kind}: {error}.").format(
                    call=call, kind=type(error).__name__, error=error
                )
                return _short_batch_problem(problem, idx.shape[1], library.config.context_length)
            return _("stage {stage}: your {call} raised {kind}: {error}.").format(
                stage=name, call=call, kind=type(error).__name__, error=error
            )
        if given is None:
            return _("stage {stage}: your {call} still returns None — write its body.").format(
                stage=name, call=call
            )
        problem = compare_tensors(given, expected, 1e-4)
        if problem and stage == "+ positions" and idx.shape[1] < library.config.context_length:
            return _short_batch_problem(problem, idx.shape[1], library.config.context_length)
        if problem:
            return _(
                "the first stage that differs is {stage}, {call}: {problem} Look at: {hint}"
            ).format(
                stage=name, call=call, problem=problem, hint=_(STAGE_HINTS[_stage_kind(stage)])
            )
    return _forward_problem(mine, library, idx, targets)


def _short_batch_problem(problem: str, T: int, context_length: int) -> str:
    """The verdict on a ``+ positions`` stage that fails only on a batch shorter than the context."""
    return _(
        "the first stage that differs is {stage}, on a batch of T = {T} tokens, shorter than context_length = {context_length}: {problem} Look at: it looks like the whole positional table is added; add only its first T rows, `positions[:T]` (generation starts from one token, and a text's last window is shorter than the context)."
    ).format(stage=_shown_stage("+ positions"), T=T, context_length=context_length, problem=problem)


def _forward_problem(
    mine: nn.Module, library: GPT, idx: torch.Tensor, targets: torch.Tensor
) -> str | None:
    """Where ``mine(idx, targets)`` differs from the library's (logits, loss), as a sentence."""
    expected_logits, expected_loss = library(idx, targets)
    try:
        given = mine(idx, targets)
    except Exception as error:
        return _("your `forward(idx, targets)` raised {kind}: {error}.").format(
            kind=type(error).__name__, error=error
        )
    if not (isinstance(given, tuple) and len(given) == 2):
        return _(
            "forward(idx, targets) should return a pair (logits, loss), like the course's GPT."
        )
    problem = compare_tensors(
        given[0], expected_logits, 1e-4, _("forward's logits")
    ) or compare_tensors(given[1], expected_loss, 1e-4, _("forward's loss"))
    if problem:
        forward_hint = STAGE_HINTS["forward"]
        return _("every stage matches, but {problem} Look at: {hint}").format(
            problem=problem, hint=_(forward_hint)
        )
    return None


def _build_my_gpt(answer: type, sizes: dict[str, int], arguments: str, again: str):
    """The learner's ``MyGPT(**sizes)``, or the verdict when building it raised."""
    try:
        return answer(**sizes)
    except Exception as error:
        return report(
            False,
            "",
            _("`MyGPT({arguments})` raised {kind}: {error} {again}").format(
                arguments=arguments, kind=type(error).__name__, error=error, again=again
            ),
        )


@checker(
    hint=N_("""
        one method per stage, each a line or two: token_vectors = the table's rows × √d_model;
        add_positions = + the sinusoidal table (03); attention_step = h + your causal
        multi-head attention (08) of your LayerNorm (09) of h; feed_forward_step = h +
        down(ReLU(up(LayerNorm(h)))); final_layer_norm; output_logits = h @ the table's
        transpose. Hold the weights under the names the stub lists (nn.Embedding, nn.Linear and
        nn.LayerNorm are fine as holders of the numbers), and let forward chain the stages.
    """)
)
def check_my_gpt(answer: object, hint: bool = False, seed: int | None = None) -> Feedback:
    """10_logits_and_loss build exercise (the capstone): the learner's class ``MyGPT(vocab_size,
    context_length, d_model, n_heads, n_layers)``, given the library GPT's weights, must match it
    stage by stage and end to end, on 3 random models and batches (T = context_length, T = 1,
    and a T in between); the verdict names the first stage that differs."""
    if unanswered(answer):
        return report(False, "", _("write the class MyGPT and run the cell again."), answered=False)
    if not (isinstance(answer, type) and issubclass(answer, nn.Module)):
        return report(
            False,
            "",
            _("pass your class itself — `check_my_gpt(MyGPT)` — got a {kind}.").format(
                kind=type(answer).__name__
            ),
        )
    seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
    again = _(
        "(random models from seed {seed}: `check_my_gpt(MyGPT, seed={seed})` repeats them)"
    ).format(seed=seed)
    for trial in range(3):
        generator = torch.Generator().manual_seed(seed + trial)
        sizes = _sizes(generator)
        B, T = _batch_shape(sizes, trial, generator)
        idx, targets = torch.randint(
            0, sizes["vocab_size"], (2, B, T), generator=generator
        )  # (B, T) each
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + trial)
            library = _library_gpt(sizes, generator)
            arguments = ", ".join(f"{k}={v}" for k, v in sizes.items())
            mine = _build_my_gpt(answer, sizes, f"{arguments}", again)
            if isinstance(mine, Feedback):
                return mine
            if trial == 0 and _is_stub(mine, idx):
                return report(False, "", _(MY_GPT_STUB), answered=False)
            mine.eval()
            problem = _copy_weights(library, mine)
            if problem is None:
                with torch.no_grad():
                    problem = _stage_problem(mine, library, idx, targets)
        if problem:
            return report(
                False,
                "",
                _("on MyGPT({arguments}) and a ({B}, {T}) batch: {problem} {again}").format(
                    arguments=arguments, B=B, T=T, problem=problem, again=again
                ),
            )
    return report(True, _(MY_GPT_MATCHES), "")


check_my_gpt.exercise = ClassExercise(name="MyGPT", solution=MyGPT)  # type: ignore[attr-defined]


def _greedy(
    model: nn.Module, prompt: torch.Tensor, n_tokens: int, context_length: int
) -> torch.Tensor:
    """Greedy continuation of ``prompt`` (P,) by ``n_tokens``, reading the last ``context_length``."""
    ids = prompt[None]  # (1, P)
    with torch.no_grad():
        for _step in range(n_tokens):
            logits, _loss = model(ids[:, -context_length:])  # (1, T, V)
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)  # (1, P + 1)
    return ids[0, prompt.numel() :]  # (n_tokens,)


@checker(
    hint=N_("""
        nothing new to write: paste your MyGPT class (10, passed by check_my_gpt) and your
        one_training_step (passed by check_one_training_step above) into the cell, and run it.
        If the loss does not fall, check that the step clears the gradients, steps the
        optimizer, and that the model is in training mode.
    """)
)
def check_your_gpt_trains(
    answer: object,
    training_step: Callable[..., float] | None = None,
    train_ids: torch.Tensor | None = None,
    val_ids: torch.Tensor | None = None,
    vocab_size: int | None = None,
    decode: Callable[[list[int]], str] | None = None,
    prompt: Sequence[int] | torch.Tensor | None = None,
    steps: int = 300,
    hint: bool = False,
) -> Feedback:
    """11_training: train the learner's class ``answer`` (MyGPT, 2 blocks of width 32, context 16)
    for ``steps`` steps of 16 windows with the learner's ``training_step`` (warm-up + cosine
    from 1e-2, clip 1), then score the whole ``val_ids`` [N] and continue ``prompt`` [P]
    greedily. ``train_ids`` [N] are token ids below ``vocab_size``; ``decode`` turns ids into
    text. Passes when the validation loss fell by more than one nat."""
    problem = _training_arguments_problem(
        answer, training_step, (train_ids, val_ids, vocab_size, decode, prompt)
    )
    if problem is not None:
        return problem
    T = 16
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = _build_your_gpt(answer, vocab_size, T)
        if isinstance(model, Feedback):
            return model
        run = _your_training_run(
            model, training_step, (train_ids, val_ids, vocab_size), steps, T, decode, prompt
        )
        if isinstance(run, Feedback):
            return run
        before, after, written = run
    result = _(
        "validation loss {before:.2f} before, {after:.2f} after {steps} steps of your own step; your GPT continues the prompt with {written!r}."
    ).format(before=before, after=after, steps=steps, written=written)
    if after < before - 1.0:
        return report(True, result, "")
    return report(
        False,
        "",
        _("{result} The loss should fall by more than a nat in {steps} steps.").format(
            result=result, steps=steps
        ),
    )


def _your_training_run(
    model: nn.Module,
    training_step: Callable[..., float],
    ids: tuple[torch.Tensor, torch.Tensor, int],
    steps: int,
    T: int,
    decode: Callable[[list[int]], str],
    prompt: Sequence[int] | torch.Tensor,
) -> tuple[float, float, str] | Feedback:
    """The validation loss before and after ``steps`` of the learner's ``training_step`` on
    ``ids`` (train, validation), and the model's greedy continuation of ``prompt``; or the
    verdict when the untrained loss fails ``check_initial_loss``, the step still returns None or
    anything raises. ``ids`` are the train and validation ids and the vocabulary size."""
    train_ids, val_ids, vocab_size = ids
    try:
        before = evaluate(model, val_ids, T)
        off = _initial_loss_problem(before, vocab_size, val_ids, T)
        if off is None:  # a Feedback is falsy when it fails: no `or` here
            off = _short_input_problem(model, val_ids, T)
        if off is not None:
            return off
        stopped_at = _train_with_your_step(model, training_step, train_ids, steps, T)
        if stopped_at is not None:
            return report(
                False,
                "",
                _("one_training_step still returns None: paste your step."),
                answered=stopped_at > 0,
            )
        after = evaluate(model, val_ids, T)
        model.eval()
        written = decode(_greedy(model, torch.as_tensor(prompt), 20, T).tolist())
    except Exception as error:
        return report(
            False,
            "",
            _("training raised {kind}: {error}").format(kind=type(error).__name__, error=error),
        )
    return before, after, written


def _short_input_problem(model: nn.Module, val_ids: torch.Tensor, T: int) -> Feedback | None:
    """The verdict when the model cannot read a window shorter than ``T`` (generation reads the
    prompt's few tokens first); None when it can."""
    short = val_ids[: max(1, T // 2)][None]  # (1, T // 2) a window shorter than the context
    try:
        with torch.no_grad():
            logits = model.eval()(short)[0]  # (1, T // 2, V)
        problem = None if tuple(logits.shape[:2]) == tuple(short.shape) else str(logits.shape)
    except Exception as error:
        problem = f"{type(error).__name__}: {error}"
    if problem is None:
        return None
    return report(
        False,
        "",
        _(
            "your MyGPT cannot read {T} tokens, fewer than its context_length = {context_length} ({problem}); generation starts from a short prompt. It looks like the whole positional table is added: add only its first T rows, `positions[:T]`. check_my_gpt (notebook 10) names the stage."
        ).format(T=short.shape[1], context_length=T, problem=problem),
    )


def _initial_loss_problem(
    before: float, vocab_size: int, val_ids: torch.Tensor, T: int
) -> Feedback | None:
    """The verdict when the untrained validation loss ``before`` fails ``check_initial_loss``
    (ln V ± 0.5 nats, notebook 10); None when it passes, or when it is within 0.5 nats of the
    course's own untrained GPT of the same size on the same text (a vocabulary of a few tokens
    with the tied table starts above ln V + 0.5 even with the course's init)."""
    start = check_initial_loss(before, vocab_size)
    if start.ok:
        return None
    config = GPTConfig(vocab_size=vocab_size, context_length=T, d_model=32, n_heads=2, n_layers=2)
    course_start = evaluate(GPT(config), val_ids, T)  # the course's init, same sizes and text
    if abs(before - course_start) <= start.tolerance:
        return None
    return report(
        False,
        "",
        _(
            "before training, your MyGPT fails check_initial_loss (notebook 10): {start} The course's own GPT of this size starts at {course:.2f}. Initialise as the course does: the token table at std 1/√(2·d_model), every nn.Linear's weight at std 0.02 and its bias at 0. PyTorch's default nn.Embedding draws the table from N(0, 1); times √d_model and tied to the output, it makes the untrained model confident and wrong."
        ).format(start=start, course=course_start),
    )


def _build_your_gpt(answer: type, vocab_size: int, T: int) -> nn.Module | Feedback:
    """The learner's MyGPT at 11's small size (2 blocks of width 32), or the verdict when it
    cannot be built or is still the stub."""
    try:
        model = answer(vocab_size=vocab_size, context_length=T, d_model=32, n_heads=2, n_layers=2)
    except Exception as error:
        return report(
            False,
            "",
            _("MyGPT(vocab_size={vocab_size}, …) raised {kind}: {error}").format(
                vocab_size=vocab_size, kind=type(error).__name__, error=error
            ),
        )
    if _is_stub(model, torch.zeros(1, 1, dtype=torch.long)):
        message = _("MyGPT is still the stub: paste your class from notebook 10.")
        return report(False, "", message, answered=False)
    return model


def _training_arguments_problem(
    answer: object, training_step: object, data_arguments: tuple
) -> Feedback | None:
    """The verdict for a class, a step or data the cell did not pass as it should; else None."""
    if unanswered(answer):
        return report(
            False, "", _("paste your MyGPT class, then run the cell again."), answered=False
        )
    if not (isinstance(answer, type) and issubclass(answer, nn.Module)):
        return report(
            False,
            "",
            _("pass your class itself, MyGPT, got a {kind}.").format(kind=type(answer).__name__),
        )
    if unanswered(training_step):
        return report(
            False, "", _("paste your one_training_step, then run the cell again."), answered=False
        )
    if not callable(training_step) or isinstance(training_step, type):
        return report(
            False,
            "",
            _("pass your function one_training_step itself, got a {kind}.").format(
                kind=type(training_step).__name__
            ),
        )
    if any(argument is None for argument in data_arguments):
        return report(
            False, "", _("pass train_ids, val_ids, vocab_size, decode and prompt as the cell does.")
        )
    return None


def _train_with_your_step(
    model: nn.Module, training_step: Callable[..., float], train_ids, steps: int, T: int
) -> int | None:
    """``steps`` steps of the learner's ``training_step`` on batches of 16 windows of ``T``
    tokens (warm-up 20, cosine from 1e-2, clip 1); the step at which it returned None, if any."""
    optimizer = make_optimizer(model, lr=1e-2, weight_decay=0.1)
    generator = torch.Generator().manual_seed(0)
    model.train()
    for step in range(steps):
        x, y = data.get_batch(train_ids, 16, T, generator=generator)  # (B, T) each
        lr = lr_at(step, steps=steps, lr=1e-2, warmup=20, min_lr=None)
        if training_step(model, optimizer, x, y, lr, 1.0) is None:
            return step
    return None
