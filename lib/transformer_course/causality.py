"""Does a model peek at the future? A mask-leak check for any model (introduced in 06_mask).

A decoder's output at position t may depend only on inputs 0 … t. :func:`check_causal` tests
that two ways, on random inputs, with the model in eval mode (dropout off):

1. **Perturbation.** For every t, replace the inputs after t and assert that the outputs at
   positions 0 … t do not change at all.
2. **Gradient.** For every t, back-propagate from output t (a fixed random projection of it)
   to the input vectors (the token embeddings for a language model) and assert that the
   gradient on every position after t is exactly zero.

A leak names its positions: "output 3 depends on input 4". It works on the course's GPT (any
config: learned, sinusoidal, RoPE, GQA, …), on any module whose forward takes token ids
[B, T] or vectors [B, T, C], and on a bare attention layer (``check_causal(attn, causal=True)``
passes ``causal=True`` on to its forward).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from . import _checks as check
from .i18n import N_, _, ngettext, pgettext
from .machine import evaluating

__all__ = ["CausalityError", "CausalityReport", "check_causal"]


class CausalityError(AssertionError):
    """A model's output at some position depends on later inputs; ``report`` says where."""

    def __init__(self, report: CausalityReport) -> None:
        super().__init__(str(report))
        self.report = report


@dataclass(frozen=True)
class CausalityReport:
    """What :func:`check_causal` found (06_mask).

    ``changed`` lists the positions t whose output moved when only inputs after t changed;
    ``leaks`` lists the (t, s) pairs, s > t, where output t has a non-zero gradient with respect
    to input s. ``max_change`` and ``max_gradient`` are the largest such effects.
    """

    positions: int
    mode: str
    changed: tuple[int, ...] = ()
    leaks: tuple[tuple[int, int], ...] = ()
    max_change: float = 0.0
    max_gradient: float = 0.0
    checks: tuple[str, ...] = field(default=("perturbation", "gradient"))

    @property
    def ok(self) -> bool:
        return not self.changed and not self.leaks

    def __bool__(self) -> bool:
        return self.ok

    @property
    def diagnosis(self) -> str:
        """A guess at the bug behind the leak pattern."""
        if self.ok:
            return ""
        if self.leaks and all(s == t + 1 for t, s in self.leaks):
            return _(
                "every leak is one step ahead (s = t + 1): an off-by-one diagonal, e.g. "
                "tril(diagonal=1) or `j <= i + 1` instead of `j <= i`"
            )
        T = self.positions
        every_pair = {(t, s) for t in range(T) for s in range(t + 1, T)}
        if set(self.leaks) == every_pair:
            return _(
                "every output sees every later input: the mask is missing somewhere "
                "(dropped in a layer, causal=False, or applied after the softmax)"
            )
        return _(
            "only some pairs leak: look for a mask built with the wrong shape, slice or offset"
        )

    def __str__(self) -> str:
        # The mode ("token ids" or "vectors") is stored in English and shown translated.
        mode, T = _(self.mode), self.positions
        if self.ok:
            return _(
                "causal ✓ ({mode}, T = {T}): outputs 0 … t never moved when inputs after t "
                "changed, and their gradients on later inputs are exactly 0"
            ).format(mode=mode, T=T)
        lines = [_("causality broken ({mode}, T = {T}):").format(mode=mode, T=T)]
        if self.changed:
            lines.append(
                _(
                    "- outputs at positions {positions} changed when only later inputs changed "
                    "(largest change {change:.3g})"
                ).format(positions=list(self.changed), change=self.max_change)
            )
        if self.leaks:
            lines.append(self._gradient_line())
        lines.append(_("- likely cause: {diagnosis}").format(diagnosis=self.diagnosis))
        return "\n".join(lines)

    def _gradient_line(self) -> str:
        by_output: dict[int, list[int]] = {}
        for t, s in self.leaks:
            by_output.setdefault(t, []).append(s)
        shown = pgettext("list separator", "; ").join(
            ngettext(
                "output {t} depends on input {inputs}",
                "output {t} depends on inputs {inputs}",
                len(ss),
            ).format(t=t, inputs=", ".join(map(str, ss)))
            for t, ss in list(by_output.items())[:6]
        )
        more = ""
        if len(by_output) > 6:
            more = _(" (and {n} more outputs)").format(n=len(by_output) - 6)
        return _(
            "- non-zero gradient on later inputs: {shown}{more} (largest {gradient:.3g})"
        ).format(shown=shown, more=more, gradient=self.max_gradient)

    def __repr__(self) -> str:
        return str(self)


def _first_tensor(output: Any, name: str) -> torch.Tensor:
    if isinstance(output, (tuple, list)) and output:
        output = output[0]  # e.g. GPT's (logits, loss)
    if not isinstance(output, torch.Tensor):
        raise TypeError(
            _("{name} must return a tensor (or a tuple starting with one), got {kind}").format(
                name=name, kind=type(output).__name__
            )
        )
    return output


def _input_embedding(model: nn.Module) -> nn.Embedding | None:
    for attr in ("token_embedding", "tok_emb", "wte", "embed_tokens"):
        module = getattr(model, attr, None)
        if isinstance(module, nn.Embedding):
            return module
    return next((m for m in model.modules() if isinstance(m, nn.Embedding)), None)


def _model_width(model: nn.Module) -> int | None:
    # The module's own d_model (an attention layer), its config's, or its first sub-module's
    # (a Block's attention layer).
    for owner in (model, getattr(model, "config", None), *model.modules()):
        width = getattr(owner, "d_model", None)
        if isinstance(width, int) and not isinstance(width, bool):
            return width
    return None


def check_causal(
    model: nn.Module,
    T: int | None = None,
    *,
    batch_size: int = 2,
    seed: int = 0,
    atol: float = 0.0,
    raise_on_leak: bool = True,
    **forward_kwargs: Any,
) -> CausalityReport:
    """Assert that ``model``'s output at position t depends only on inputs 0 … t (06_mask).

    ``model`` takes token ids [B, T] (when it owns an ``nn.Embedding``: a GPT of any config) or
    vectors [B, T, C] (``C`` from its ``d_model``: a block or a bare attention layer), and
    returns [B, T, ...] or a tuple starting with it. ``forward_kwargs`` go to every call (e.g.
    ``causal=True`` for :class:`~transformer_course.attention.MultiHeadAttention`). ``T``
    defaults to the model's ``config.context_length`` (capped at 16), else 8.

    Runs in eval mode (the model's mode is restored) on seeded random inputs. Raises
    :class:`CausalityError` (an ``AssertionError``) naming the leaking positions, or returns the
    :class:`CausalityReport` with ``raise_on_leak=False``. Outputs must stay identical up to
    ``atol`` (0: bit for bit); gradients must be exactly zero.
    """
    T = _checked_arguments(model, T, batch_size, atol)
    generator = torch.Generator().manual_seed(seed)
    probe = _Probe.build(model, T, batch_size, generator, forward_kwargs)
    with evaluating(model):
        changed, max_change = _perturbation_test(probe, atol, generator)
        leaks, max_gradient = _gradient_test(probe, generator)
    report = CausalityReport(
        positions=T,
        mode=probe.mode,
        changed=tuple(changed),
        leaks=tuple(leaks),
        max_change=max_change,
        max_gradient=max_gradient,
    )
    if raise_on_leak and not report.ok:
        raise CausalityError(report)
    return report


def _checked_arguments(model: nn.Module, T: int | None, batch_size: int, atol: float) -> int:
    """``T`` (defaulted from the model's config) after checking every argument."""
    check.instance("model", model, nn.Module, expected="torch.nn.Module")
    if T is None:
        limit = getattr(getattr(model, "config", None), "context_length", None)
        T = min(int(limit), 16) if isinstance(limit, int) else 8
    if isinstance(T, bool) or not isinstance(T, int) or T < 2:
        raise ValueError(
            _("T must be an int of at least 2 (a causal check needs a future), got {T!r}").format(
                T=T
            )
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(
            _("batch_size must be a positive int, got {batch_size!r}").format(batch_size=batch_size)
        )
    if not (isinstance(atol, (int, float)) and atol >= 0):
        raise ValueError(_("atol must be a number ≥ 0, got {atol!r}").format(atol=atol))
    return T


@dataclass
class _Probe:
    """The model under test, its seeded inputs and how to read its output [B, T, ...]."""

    model: nn.Module
    inputs: torch.Tensor  # (B, T) token ids or (B, T, C) vectors
    mode: str  # "token ids" or "vectors"
    embedding: nn.Embedding | None
    forward_kwargs: dict

    @classmethod
    def build(cls, model, T, batch_size, generator, forward_kwargs) -> _Probe:
        parameter = next(model.parameters(), None)
        device = parameter.device if parameter is not None else torch.device("cpu")
        dtype = (
            parameter.dtype
            if parameter is not None and parameter.is_floating_point()
            else torch.float32
        )
        embedding = _input_embedding(model)
        if embedding is not None:
            vocab = embedding.num_embeddings
            inputs = torch.randint(0, vocab, (batch_size, T), generator=generator)  # (B, T)
            return cls(model, inputs.to(device), N_("token ids"), embedding, forward_kwargs)
        width = _model_width(model)
        if width is None:
            raise ValueError(
                _(
                    "model has no nn.Embedding and no d_model attribute, so check_causal cannot "
                    "tell what input to build; give the module a d_model attribute"
                )
            )
        inputs = torch.randn(batch_size, T, width, generator=generator).to(dtype)  # (B, T, C)
        return cls(model, inputs.to(device), N_("vectors"), None, forward_kwargs)

    def run(self, x: torch.Tensor) -> torch.Tensor:
        out = _first_tensor(self.model(x, **self.forward_kwargs), "model")
        B, T = self.inputs.shape[:2]
        if out.dim() < 2 or tuple(out.shape[:2]) != (B, T):
            raise ValueError(
                _("model's output must start with [B, T] = [{B}, {T}], got {out_shape}").format(
                    B=B, T=T, out_shape=tuple(out.shape)
                )
            )
        return out

    def with_new_future(self, t: int, generator: torch.Generator) -> torch.Tensor:
        """The inputs with every position after ``t`` replaced by a different one."""
        other = self.inputs.clone()
        B, T = other.shape[:2]
        if self.mode == "token ids":
            vocab = self.embedding.num_embeddings
            shift = torch.randint(1, vocab, (B, T - t - 1), generator=generator)
            other[:, t + 1 :] = (other[:, t + 1 :] + shift.to(other.device)) % vocab  # (B, T-t-1)
        else:
            fresh = torch.randn(B, T - t - 1, other.shape[-1], generator=generator)
            other[:, t + 1 :] = fresh.to(device=other.device, dtype=other.dtype)  # (B, T-t-1, C)
        return other


def _perturbation_test(probe: _Probe, atol: float, generator) -> tuple[list[int], float]:
    """Positions t whose outputs 0 … t moved when the inputs after t changed; the largest move."""
    changed, max_change = [], 0.0
    T = probe.inputs.shape[1]
    with torch.no_grad():
        reference = probe.run(probe.inputs)  # (B, T, ...)
        for t in range(T - 1):
            moved = (
                probe.run(probe.with_new_future(t, generator))[:, : t + 1] - reference[:, : t + 1]
            )
            moved = moved.abs().max().item()
            if moved > atol:
                changed.append(t)
            max_change = max(max_change, moved)
    return changed, max_change


def _gradient_test(probe: _Probe, generator) -> tuple[list[tuple[int, int]], float]:
    """Pairs (t, s > t) where d(output t)/d(input s) is not exactly 0; the largest such entry.

    The input vectors are made a leaf (for a language model, the token embedding's output is
    replaced by a leaf through a forward hook)."""
    B, T = probe.inputs.shape[:2]
    captured: list[torch.Tensor] = []
    handle = None
    if probe.mode == "token ids":

        def as_leaf(module, args, output):
            leaf = output.detach().requires_grad_(True)  # (B, T, C)
            captured.append(leaf)
            return leaf

        handle = probe.embedding.register_forward_hook(as_leaf)
        x = probe.inputs
    else:
        x = probe.inputs.detach().clone().requires_grad_(True)  # (B, T, C)
    try:
        with torch.enable_grad():
            out = probe.run(x)  # (B, T, ...)
    finally:
        if handle is not None:
            handle.remove()
    leaf = captured[0] if probe.mode == "token ids" else x
    flat = out.reshape(B, T, -1).float()  # (B, T, F)
    projection = torch.randn(flat.shape[-1], generator=generator).to(flat.device)  # (F,)
    leaks, max_gradient = [], 0.0
    for t in range(T - 1):
        (grad,) = torch.autograd.grad(
            (flat[:, t] @ projection).sum(), leaf, retain_graph=True, allow_unused=True
        )
        if grad is None:
            continue
        later = grad[:, t + 1 :].abs().reshape(B, T - t - 1, -1).amax(dim=(0, 2))  # (T-t-1,)
        max_gradient = max(max_gradient, float(later.max()))
        leaks.extend((t, t + 1 + int(s)) for s in torch.nonzero(later > 0).flatten().tolist())
    return leaks, max_gradient
