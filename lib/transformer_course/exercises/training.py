"""Exercises of 11_training."""

from __future__ import annotations

from typing import Any

import torch

from ..i18n import N_, _
from ..model import GPT, GPTConfig
from ..train import evaluate, lr_at, make_optimizer, train_step
from . import Feedback, check_value, checker, report, unanswered
from .answers import read_number
from .build import build_exercise, hard_case
from .solutions.training import lr_schedule, one_training_step, validation_loss


@checker(
    hint=N_("""
        during warm-up the rate climbs in equal steps from lr / warmup (step 0) to lr (step
        warmup − 1); count which rung step 9 is on.
    """)
)
def check_warmup_lr(
    answer: object,
    step: int,
    steps: int,
    lr: float,
    warmup: int,
    min_lr: float | None,
    hint: bool = False,
) -> Feedback:
    """What learning rate does the schedule give at ``step``?"""
    expected = lr_at(step, steps=steps, lr=lr, warmup=warmup, min_lr=min_lr)
    value, problem = read_number(answer) if not unanswered(answer) else (None, None)
    off_by_one = step < warmup and value is not None and problem is None
    if off_by_one and abs(value - lr * step / warmup) <= abs(expected) * 1e-6 + 1e-12:
        return report(False, "", _("it looks like {slip}.").format(slip=_(WARMUP_OFF_BY_ONE)))
    return check_value(
        answer,
        expected,
        _(
            "lr_at({step}) = {expected:.6g}: during warm-up the rate grows linearly, lr · (step + 1) / warmup."
        ).format(step=step, expected=expected),
        _(
            "step is 0-based and warm-up reaches the full rate at step warmup − 1: lr · (step + 1) / warmup."
        ),
        tolerance=abs(expected) * 1e-6 + 1e-12,
    )


@checker(
    hint=N_("""
        a window of T inputs has T targets, the inputs shifted by one: it uses T + 1 tokens,
        and the next window starts T tokens later.
    """)
)
def check_validation_windows(
    answer: object, val_tokens: int, context_length: int, hint: bool = False
) -> Feedback:
    """How many non-overlapping windows does ``evaluate`` cut the validation split into?"""
    expected = (val_tokens - 1) // context_length
    return check_value(
        answer,
        expected,
        _(
            "(N − 1) // T = ({val_tokens} − 1) // {context_length} = {expected} windows: every window needs its T inputs plus the next token as the last target."
        ).format(val_tokens=val_tokens, context_length=context_length, expected=expected),
        _(
            "each window of T inputs needs one more token for its last target, so N tokens give (N − 1) // T windows."
        ),
    )


# ---- build exercises ------------------------------------------------------------------------


def _lr_at_reference(step: int, steps: int, lr: float, warmup: int, min_lr: float | None) -> float:
    return lr_at(step, steps=steps, lr=lr, warmup=warmup, min_lr=min_lr)


def _random_schedule_point(generator: torch.Generator) -> tuple:
    """A step anywhere in (or past) a random schedule; warm-up 0 and min_lr None included. Every
    check meets a step inside a warm-up (one trial in four), where an off-by-one shows."""
    steps = int(torch.randint(5, 400, (), generator=generator))
    warmup = int(torch.randint(0, steps // 2 + 1, (), generator=generator))
    step = int(torch.randint(0, steps + 3, (), generator=generator))  # a few steps past the end too
    if hard_case(generator, 4) == 0:
        warmup = max(warmup, 1)
        step = int(torch.randint(0, warmup, (), generator=generator))  # inside the warm-up
    lr = float(torch.empty(()).uniform_(1e-4, 1e-2, generator=generator))
    min_lr = None if torch.rand((), generator=generator) < 0.5 else lr / 20
    return step, steps, lr, warmup, min_lr


def _warmup_off_by_one(
    step: int, steps: int, lr: float, warmup: int, min_lr: float | None
) -> float:
    """Slip: lr · step / warmup during the warm-up, 0 at step 0 (a step that trains nothing)."""
    if step < warmup:
        return lr * step / warmup
    return _lr_at_reference(step, steps, lr, warmup, min_lr)


#: The warm-up off by one, as the learner is told (checks 11's question and build exercise).
WARMUP_OFF_BY_ONE = N_(
    "the warm-up off by one: lr · step / warmup gives 0 at step 0, a step that trains nothing, "
    "and reaches lr one step late; the course's warm-up is lr · (step + 1) / warmup"
)


check_lr_schedule = build_exercise(
    notebook="11_training",
    solution=lr_schedule,
    hint=N_("""
        three cases: step < warmup gives lr · (step + 1) / warmup; otherwise p = (step −
        warmup) / (steps − warmup), capped at 1, and the rate is min_lr + ½ (lr − min_lr)(1
        + cos(π p)). min_lr None means lr / 10; with steps ≤ warmup there is no cosine (just
        lr).
    """),
    success=N_("""
        That is `train.lr_at`, the schedule `train` sets before every step.
    """),
    reference=_lr_at_reference,
    make_inputs=_random_schedule_point,
    trials=20,
    atol=1e-12,
    slips={WARMUP_OFF_BY_ONE: _warmup_off_by_one},
)


def _evaluate_reference(model: GPT, ids: torch.Tensor, context_length: int) -> float:
    return evaluate(model, ids, context_length)


def _random_model_and_text(generator: torch.Generator) -> tuple:
    """A fresh tiny GPT in training mode (dropout on) and a random token stream whose length
    sometimes leaves a partial window at the end and sometimes fills the windows exactly."""
    V = int(torch.randint(5, 40, (), generator=generator))
    T = int(torch.randint(1, 9, (), generator=generator))
    windows = int(torch.randint(1, 12, (), generator=generator))
    extra = int(torch.randint(0, T + 1, (), generator=generator))  # 0: exactly W·T + 1 tokens
    config = GPTConfig(
        vocab_size=V, context_length=T, d_model=16, n_heads=2, n_layers=1, dropout=0.3
    )
    model = GPT(config).train()  # the global seed is set by the checker: the same weights twice
    ids = torch.randint(0, V, (windows * T + 1 + min(extra, T - 1),), generator=generator)  # (N,)
    return model, ids, T


def _validation_in_training_mode(model: GPT, ids: torch.Tensor, context_length: int) -> float:
    """Slip: the solution without ``model.eval()``: dropout stays on and the number is noisy."""
    T = context_length
    windows = (ids.numel() - 1) // T
    x = ids[: windows * T].view(windows, T)  # (W, T)
    y = ids[1 : windows * T + 1].view(windows, T)  # (W, T)
    with torch.no_grad():
        return model(x, y)[1].item()  # dropout still on


check_validation_loss = build_exercise(
    notebook="11_training",
    solution=validation_loss,
    hint=N_("""
        W = (N − 1) // T windows; inputs ids[: W·T] and targets ids[1 : W·T + 1], each
        viewed as (W, T); switch dropout off with model.eval(), run model(x, y) under
        torch.no_grad() and return the loss as a float.
    """),
    success=N_("""
        That is `train.evaluate`: every token but the last few is predicted exactly once,
        with dropout off, so the number is the same every time.
    """),
    reference=_evaluate_reference,
    make_inputs=_random_model_and_text,
    slips={
        N_(
            "validation without model.eval(): dropout stays on, so the loss is noisy (another "
            "number every run) and not the model's own; call model.eval() before measuring"
        ): _validation_in_training_mode,
    },
)


def _train_step_reference(*step: Any) -> float:
    """``train.train_step`` called as the learner's function is: (model, optimizer, x, y, lr, grad_clip)."""
    model, optimizer, x, y, lr, grad_clip = step
    return float(train_step(model, optimizer, x, y, lr=lr, grad_clip=grad_clip))


def _random_training_batch(generator: torch.Generator) -> tuple:
    """A tiny GPT (dropout on) with its AdamW after one step whose gradients are still in place (so
    forgetting ``optimizer.zero_grad()`` shows), a random batch, a learning rate unlike the
    optimizer's own (so forgetting to set it shows) and a clip that is mostly shorter than the
    gradient (so forgetting it shows) and sometimes None (no clipping)."""
    V = int(torch.randint(5, 40, (), generator=generator))
    T = int(torch.randint(1, 9, (), generator=generator))  # T = 1 included
    B = int(torch.randint(1, 5, (), generator=generator))
    config = GPTConfig(
        vocab_size=V, context_length=T, d_model=16, n_heads=2, n_layers=1, dropout=0.1
    )
    model = GPT(config).train()  # the global seed is set by the checker: the same weights twice
    optimizer = make_optimizer(model, lr=1e-4, weight_decay=0.1)
    # One earlier step, so AdamW has running averages: on its very first step Adam moves every
    # weight by about ±lr whatever the gradient's scale, and a missing clip would go unseen.
    warm_x, warm_y = torch.randint(0, V, (2, B, T), generator=generator)  # (B, T) each
    # train_step clears the gradients before its backward, not after: the warm-up step's stay.
    train_step(model, optimizer, warm_x, warm_y, lr=1e-2)
    x = torch.randint(0, V, (B, T), generator=generator)  # (B, T) input ids
    y = torch.randint(0, V, (B, T), generator=generator)  # (B, T) target ids
    lr = float(torch.empty(()).uniform_(1e-3, 3e-2, generator=generator))
    # The gradient's length here is about 1 to 4: a clip below that rescales it, None switches it off.
    clip = float(torch.empty(()).uniform_(0.05, 2.0, generator=generator))
    grad_clip = None if torch.rand((), generator=generator) < 0.2 else clip
    return model, optimizer, x, y, lr, grad_clip


def _step_without_zero_grad(
    model: GPT,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    lr: float,
    grad_clip,
) -> float:
    """A slip: the step never clears the gradients, so the previous step's are added to this one's."""
    _logits, loss = model(x, y)  # (B, T) -> (B, T, V) logits and the mean cross-entropy
    loss.backward()  # accumulates onto the gradients already there
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    return loss.item()


def _loss_and_weights(arguments: tuple, result: object) -> dict:
    """What a training step is judged by: the loss it returns and every weight after the update."""
    model = arguments[0]
    weights = {
        _("weight {name}").format(name=name): p.detach().clone()
        for name, p in model.named_parameters()
    }
    return {_("returned loss"): result, **weights}


check_one_training_step = build_exercise(
    notebook="11_training",
    solution=one_training_step,
    hint=N_("""
        forward with model(x, y), which returns (logits, loss); optimizer.zero_grad()
        before loss.backward(), because backward adds to whatever gradients the previous
        step left; if grad_clip is not None, torch.nn.utils.clip_grad_norm_(
        model.parameters(), grad_clip); write lr into every optimizer.param_groups entry's
        "lr"; optimizer.step(); return loss.item(). Do not switch dropout off: a training
        step runs in training mode.
    """),
    success=N_("""
        That is `train.train_step`, the body of `train`'s loop: the same loss and, after
        AdamW's update, the same weights.
    """),
    reference=_train_step_reference,
    make_inputs=_random_training_batch,
    trials=8,
    atol=1e-6,
    outcome=_loss_and_weights,
    slips={
        N_(
            "a missing optimizer.zero_grad() before loss.backward(): backward adds to the gradients "
            "the previous step left, so the update used both steps' gradients"
        ): _step_without_zero_grad,
    },
)
