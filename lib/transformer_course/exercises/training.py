"""Exercises of 11_training."""

from __future__ import annotations

from . import Feedback, check_value, checker, report, unanswered


@checker
def check_warmup_lr(
    answer: object, step: int, steps: int, lr: float, warmup: int, min_lr: float | None
) -> Feedback:
    """What learning rate does the schedule give at ``step``?"""
    from ..train import lr_at

    expected = lr_at(step, steps=steps, lr=lr, warmup=warmup, min_lr=min_lr)
    return check_value(
        answer,
        expected,
        f"lr_at({step}) = {expected:.6g}: during warm-up the rate grows linearly, lr · (step + 1) / warmup.",
        "step is 0-based and warm-up reaches the full rate at step warmup − 1: lr · (step + 1) / warmup.",
        tolerance=abs(expected) * 1e-6 + 1e-12,
    )


@checker
def check_validation_windows(answer: object, val_tokens: int, context_length: int) -> Feedback:
    """How many non-overlapping windows does ``evaluate`` cut the validation split into?"""
    expected = (val_tokens - 1) // context_length
    return check_value(
        answer,
        expected,
        f"(N − 1) // T = ({val_tokens} − 1) // {context_length} = {expected} windows: every window needs "
        "its T inputs plus the next token as the last target.",
        "each window of T inputs needs one more token for its last target, so N tokens give (N − 1) // T windows.",
    )


@checker
def check_saved_parameters(
    answer: object, full_vocab: int, compact_vocab: int, d_model: int, tied: bool
) -> Feedback:
    """How many parameters does the compact vocabulary save?"""
    if unanswered(answer):
        return report(
            False, "", "replace the `...` with a number and run the cell again.", answered=False
        )
    tables = 1 if tied else 2
    expected = tables * (full_vocab - compact_vocab) * d_model
    return check_value(
        answer,
        expected,
        f"{tables} table{'s' if tables > 1 else ''} × ({full_vocab:,} − {compact_vocab:,}) rows × {d_model} = {expected:,} "
        "parameters fewer" + (" (the output layer shares the embedding table)." if tied else "."),
        "each vocabulary row has d_model numbers; count the rows removed"
        + (
            " — with tied weights the output layer is the same table, counted once."
            if tied
            else " in the embedding and in the output layer."
        ),
    )


@checker
def check_resume_steps(answer: object, saved_step: int, total_steps: int) -> Feedback:
    """A checkpoint saved after ``saved_step`` steps is resumed with ``steps=total_steps``: how many steps run?"""
    expected = max(0, total_steps - saved_step)
    return check_value(
        answer,
        expected,
        f"{total_steps} − {saved_step} = {expected}: the step count is part of the checkpoint, so training "
        "continues where it stopped rather than starting the schedule again.",
        "the checkpoint remembers how many steps were done; train runs only the missing ones.",
    )
