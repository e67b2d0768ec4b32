"""Training diagnostics that say what is normal (10_logits_and_loss, 11_training, 13_modern_blocks).

The questions a learner asks while a model trains, answered with numbers:

- *Is my starting loss right?* :func:`check_initial_loss` compares the loss at step 0 with
  ln V, the loss of a model that spreads its probability evenly over the V tokens, and says
  what a large gap means. ``train`` runs it on the first batch and warns
  (:class:`InitialLossWarning`) when the gap is large.
- *What does a loss of 5 mean?* :func:`perplexity` turns a loss into "as unsure as a uniform
  choice among N tokens"; :func:`describe_loss` prints both.
- *What does the model write at that loss?* :class:`SampleRecorder` is a ``train`` callback
  that stores a greedy sample the first time the (smoothed) training loss drops below each
  threshold; :func:`repetition_rate` measures how much a sample loops.
- *How long will this take?* ``estimate_training_time`` (with ``RunEstimate`` and
  ``TIMING_MARK``) lives in :mod:`transformer_course.train.estimate`, since it runs ``train``;
  notebooks 11 and 13 import it from here, and the module-level ``__getattr__`` below forwards
  those three names on first use (PEP 562) so this leaf module never imports the training loop.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from . import _checks
from .i18n import N_, _

__all__ = [
    "InitialLossCheck",
    "InitialLossWarning",
    "Milestone",
    "SampleRecorder",
    "check_initial_loss",
    "describe_loss",
    "perplexity",
    "repetition_rate",
    "warn_if_initial_loss_off",
]


def _check_loss(name: str, loss: object) -> float:
    if isinstance(loss, torch.Tensor):
        if loss.numel() != 1:
            raise ValueError(
                _("{name} must be a single number, got a tensor of shape {shape}").format(
                    name=name, shape=tuple(loss.shape)
                )
            )
        loss = float(loss.detach().float().item())
    return _checks.number(name, loss, hint=N_("(a loss in nats)"), finite=False)


def perplexity(loss: float | torch.Tensor) -> float:
    """exp(loss) (introduced in 10_logits_and_loss): the number of equally likely tokens the
    model is as unsure as. ``loss`` is a number or a one-element tensor (shape [] or [1]). A loss of ln V gives V; a loss of 0 gives 1; NaN stays NaN, and a
    loss too large for exp gives inf."""
    value = _check_loss("loss", loss)
    if math.isnan(value):
        return math.nan
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def describe_loss(loss: float | torch.Tensor) -> str:
    """``"loss 4.73 (perplexity 113)"`` (11_training): the loss with its perplexity beside it.

    ``loss`` is a number or a one-element tensor (shape [] or [1])."""
    value = _check_loss("loss", loss)
    ppl = perplexity(value)
    shown = f"{ppl:,.0f}" if ppl >= 10 else f"{ppl:.2f}"
    return _("loss {value:.2f} (perplexity {shown})").format(value=value, shown=shown)


@dataclass(frozen=True)
class InitialLossCheck:
    """What :func:`check_initial_loss` found (10_logits_and_loss).

    ``expected`` is ln V; ``gap`` = loss − ln V; ``ok`` is True when |gap| ≤ ``tolerance``.
    ``logit_std`` (when the logits were given) is the spread of the untrained logits: for
    roughly Gaussian logits with a small σ (well below 1) the loss is about ln V + σ²/2,
    ``predicted``.
    """

    loss: float
    vocab_size: int
    tolerance: float
    logit_std: float | None = None

    @property
    def expected(self) -> float:
        return math.log(self.vocab_size)

    @property
    def gap(self) -> float:
        return self.loss - self.expected

    @property
    def predicted(self) -> float | None:
        return None if self.logit_std is None else self.expected + self.logit_std**2 / 2

    @property
    def ok(self) -> bool:
        return math.isfinite(self.loss) and abs(self.gap) <= self.tolerance

    def __bool__(self) -> bool:
        return self.ok

    @property
    def meaning(self) -> str:
        """What the gap means, in a sentence or two."""
        if not math.isfinite(self.loss):
            return _(
                "the very first loss is not finite: the forward pass itself overflows (inputs or "
                "weights of absurd size, a division by zero in a norm); check the model before "
                "training."
            )
        if self.ok:
            return _(
                "normal: an untrained model spreads its probability almost evenly, so it scores "
                "about ln V, and training starts from there."
            )
        if self.gap > 0:
            too_high = _(
                "too high: the untrained model is already confident, and wrong. Its logits are far "
                "from equal, which usually means weights initialised too large (std 1 instead of "
                "0.02, an output layer that skipped the small init), logits that are not centred "
                "(a large output bias), or missing scaling. The first steps will be spent undoing "
                "it; fix the init instead."
            )
            if self.vocab_size < 1000 and self.gap < 1.0:  # the one harmless cause of a small gap
                too_high += _(
                    " Or harmless: with a tied output layer, the scaled token table "
                    "(embedding_scale='sqrt_d_model') and a vocabulary this small, the input "
                    "token's own logit stands out and lifts the first loss by about half a nat."
                )
            return too_high
        return _(
            "too low: an untrained model cannot beat uniform guessing. Either V is not the "
            "model's vocabulary size (ln V of another vocabulary), the weights are not fresh "
            "(a loaded or already trained model), or the model sees its targets (inputs not "
            "shifted against targets, a leaking causal mask)."
        )

    def __str__(self) -> str:
        values = dict(
            loss=self.loss,
            vocab_size=self.vocab_size,
            expected=self.expected,
            gap=self.gap,
            tolerance=self.tolerance,
            std=self.logit_std,
            predicted=self.predicted,
        )
        if self.logit_std is None:
            head = _(
                "step-0 loss {loss:.2f} vs ln V = ln {vocab_size:,} = {expected:.2f} "
                "(gap {gap:+.2f}, tolerance ±{tolerance:g})"
            )
        elif self.logit_std < 1.5:  # the σ²/2 estimate holds for small spreads only
            head = _(
                "step-0 loss {loss:.2f} vs ln V = ln {vocab_size:,} = {expected:.2f} "
                "(gap {gap:+.2f}, tolerance ±{tolerance:g}); logit std σ = {std:.2f}, "
                "which predicts ln V + σ²/2 = {predicted:.2f}"
            )
        else:
            head = _(
                "step-0 loss {loss:.2f} vs ln V = ln {vocab_size:,} = {expected:.2f} "
                "(gap {gap:+.2f}, tolerance ±{tolerance:g}); logit std σ = {std:.2f}"
            )
        return _("{head}: {meaning}").format(head=head.format(**values), meaning=self.meaning)

    __repr__ = __str__


def check_initial_loss(
    loss: float | torch.Tensor,
    vocab_size: int,
    *,
    logits: torch.Tensor | None = None,
    tolerance: float = 0.5,
) -> InitialLossCheck:
    """Compare the untrained loss with ln V (10_logits_and_loss; ``train`` calls it at step 0).

    ``loss`` is the mean cross-entropy of one batch before any update; ``vocab_size`` is V, the
    number of classes the logits score. ``logits`` [..., V], when given, adds their spread σ,
    which predicts the loss as ln V + σ²/2 (log-mean-exp of Gaussian logits). ``tolerance`` is
    in nats: the course's init lands within a few hundredths of ln V, a std-1 init several nats
    above it.
    """
    value = _check_loss("loss", loss)
    _checks.integer("vocab_size", vocab_size, 2)
    _checks.number("tolerance", tolerance, above=0.0, hint=N_("(in nats)"))
    std = None
    if logits is not None:
        _checks.tensor("logits", logits, 1, floating=True, shape="[..., V]")
        if logits.shape[-1] != vocab_size:
            raise ValueError(
                _(
                    "logits score {classes} classes but vocab_size is {vocab_size}; pass the "
                    "model's own vocabulary size"
                ).format(classes=logits.shape[-1], vocab_size=vocab_size)
            )
        detached = logits.detach().float()  # (..., V)
        # The spread within each row is what moves the loss; a shift of a whole row does not.
        std = float((detached - detached.mean(dim=-1, keepdim=True)).pow(2).mean().sqrt())
    return InitialLossCheck(
        loss=value, vocab_size=vocab_size, tolerance=float(tolerance), logit_std=std
    )


class InitialLossWarning(UserWarning):
    """The loss at step 0 is far from ln V (see :func:`check_initial_loss`)."""


def warn_if_initial_loss_off(
    loss: float | torch.Tensor, vocab_size: int, *, tolerance: float = 0.5
) -> InitialLossCheck:
    """Run :func:`check_initial_loss` and warn (:class:`InitialLossWarning`) when the gap is
    large; stay quiet on a normal start (11_training: ``train`` calls it on its first batch).
    ``loss`` is a number or a one-element tensor (shape [] or [1])."""
    check = check_initial_loss(loss, vocab_size, tolerance=tolerance)
    if not check.ok:
        warnings.warn(str(check), InitialLossWarning, stacklevel=3)
    return check


# ---- samples at the losses a learner passes -------------------------------------------------


def repetition_rate(ids: Sequence[int] | torch.Tensor, n: int = 2) -> float:
    """The share of a sample's n-grams (bigrams by default) that already occurred earlier in it
    (11_training). 0 for text that never repeats itself; close to 1 for ``the the the …``.
    ``ids`` is a 1-D sequence of token ids; fewer than n + 1 tokens give 0."""
    values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    _checks.integer("n", n)
    grams = [tuple(values[i : i + n]) for i in range(len(values) - n + 1)]
    if len(grams) < 2:
        return 0.0
    repeats = len(grams) - len(set(grams))  # every occurrence of an n-gram after its first
    return repeats / len(grams)


@dataclass(frozen=True)
class Milestone:
    """One stored sample: at ``step`` the training loss (mean of the last ``window`` steps) was
    ``train_loss``; ``label`` says which threshold (or "final") it was stored for."""

    label: str
    step: int
    train_loss: float
    ids: tuple[int, ...]
    text: str

    @property
    def perplexity(self) -> float:
        return perplexity(self.train_loss)

    @property
    def repetition(self) -> float:
        return repetition_rate(self.ids)


@dataclass
class SampleRecorder:
    """A ``train`` callback that stores a sample the first time the training loss passes each
    threshold (11_training).

    ``sample()`` returns ``(ids, text)`` of a continuation of a fixed prompt; greedy decoding
    (temperature 0) draws no random numbers, so recording samples leaves the run itself
    unchanged. The loss compared with the thresholds is the mean of the last ``window`` steps
    (a single batch's loss jumps by several tenths). Call :meth:`final` after the run to add
    the last sample.
    """

    sample: Callable[[], tuple[Sequence[int], str]]
    thresholds: Sequence[float] = (6.5, 5.5)
    window: int = 25
    milestones: list[Milestone] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not callable(self.sample):
            raise TypeError(_("sample must be a function returning (ids, text)"))
        _checks.integer("window", self.window)
        self.thresholds = sorted((float(t) for t in self.thresholds), reverse=True)
        self._pending = list(self.thresholds)

    def _store(self, label: str, step: int, loss: float) -> None:
        ids, text = self.sample()
        self.milestones.append(Milestone(label, step, loss, tuple(int(i) for i in ids), text))

    def __call__(self, step: int, history: Any) -> None:
        losses = history.train_loss[-self.window :]
        if len(losses) < self.window or not self._pending:
            return
        smoothed = sum(losses) / len(losses)
        passed = [t for t in self._pending if smoothed <= t]
        if passed:
            # Several thresholds passed at once share one sample, labelled by the lowest.
            self._pending = [t for t in self._pending if smoothed > t]
            self._store(f"≤ {min(passed):g}", step, smoothed)

    def final(self, history: Any) -> Milestone:
        """Store (and return) the sample of the trained model, labelled "final"."""
        losses = history.train_loss[-self.window :]
        self._store(_("final"), history.steps, sum(losses) / max(len(losses), 1))
        return self.milestones[-1]


#: Names that live in :mod:`.train.estimate` and stay importable from here (11, 13 import them).
_FORWARDED = ("TIMING_MARK", "RunEstimate", "estimate_training_time")


def __getattr__(name: str) -> Any:
    if name in _FORWARDED:
        from .train import estimate

        return getattr(estimate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
