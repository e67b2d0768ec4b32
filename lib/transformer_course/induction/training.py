"""Training and probing the toy (16_induction_heads): the recipe, the probe, the ablation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F

from .. import _checks as check
from ..i18n import _
from ..progress import progress_bar
from .data import RepeatBatch, repeated_tokens
from .metrics import copy_losses, induction_score, previous_token_score
from .model import AttentionOnlyTransformer, ToyConfig

__all__ = ["ToyRun", "ablation_table", "measure", "toy_probe", "train_toy"]

#: The induction score at which the circuit counts as formed (the phase change).
FORMED = 0.5
#: The probe's own seed, apart from the training seeds 0, 1, 2, ...
PROBE_SEED = 1234


@dataclass
class ToyRun:
    """What :func:`train_toy` returns (introduced in 16_induction_heads): the trained ``model``,
    its ``history`` (one row every ``every`` steps: step, loss, first_loss, repeat_loss,
    induction, previous_token) and ``phase_change_step``, the first step whose induction score
    reached 0.5 (None if it never did)."""

    model: AttentionOnlyTransformer
    history: pd.DataFrame
    phase_change_step: int | None


def toy_probe(
    config: ToyConfig, filler: tuple[int, int] = (0, 31), batch: int = 64, seed: int = PROBE_SEED
) -> RepeatBatch:
    """A fixed two-copy batch to measure on (introduced in 16_induction_heads): filler, a random
    segment, the segment once more, random tokens; drawn with its own ``seed``. Its ``repeat``
    is the second copy, where each token has exactly one earlier occurrence. The default has
    filler, so only a model that finds the earlier copy passes it."""
    generator = torch.Generator().manual_seed(check.integer("seed", seed, 0))
    return repeated_tokens(batch, config, generator, filler=filler, copies=2)


@torch.no_grad()
def measure(model: AttentionOnlyTransformer, probe: RepeatBatch, ablate=()) -> dict[str, float]:
    """The model on ``probe``, in eval mode without gradients (introduced in
    16_induction_heads): first_loss, repeat_loss, induction (best head of the last layer) and
    previous_token (best head of layer 0)."""
    was_training, was_recording = model.training, model.record_attention
    model.eval()
    model.record_attention = True
    logits = model(probe.tokens, ablate=ablate)  # (B, T, V)
    model.train(was_training)
    model.record_attention = was_recording
    weights = model.last_attention  # (L, B, H, T, T)
    first, repeat = copy_losses(logits, probe)
    return {
        "first_loss": first,
        "repeat_loss": repeat,
        "induction": induction_score(weights[-1], probe).max().item(),
        "previous_token": previous_token_score(weights[0]).max().item(),
    }


def _check_training(steps, seed, filler, every, lr, batch, probe, live) -> None:
    check.integer("steps", steps)
    check.integer("seed", seed, 0)
    check.integer("every", every)
    check.number("lr", lr, above=0.0)
    check.integer("batch", batch)
    if not isinstance(filler, tuple):
        raise TypeError(
            _("filler must be a (min, max) pair of ints, got {value!r}").format(value=filler)
        )
    check.instance("probe", probe, RepeatBatch, optional=True)
    if live is not None and not callable(live):
        raise TypeError(_("live must be a callable live(step, history) or None"))


def train_toy(
    config: ToyConfig,
    steps: int = 2000,
    seed: int = 0,
    filler: tuple[int, int] = (0, 31),
    every: int = 50,
    lr: float = 1e-3,
    batch: int = 32,
    probe: RepeatBatch | None = None,
    live: Callable[[int, pd.DataFrame], None] | None = None,
    progress: bool = True,
) -> ToyRun:
    """Train an :class:`AttentionOnlyTransformer` on :func:`repeated_tokens` with AdamW
    (introduced in 16_induction_heads). ``seed`` fixes the weights and every batch; ``probe``
    (default :func:`toy_probe`: with filler, its own seed) is measured every ``every`` steps and
    at step 0; ``live(step, history)`` runs after each measurement (the notebook's live plot)."""
    _check_training(steps, seed, filler, every, lr, batch, probe, live)
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(config)
    generator = torch.Generator().manual_seed(seed)
    probe = toy_probe(config) if probe is None else probe
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    rows = [{"step": 0, "loss": float("nan"), **measure(model, probe)}]
    model.record_attention = False  # the fused kernel while training; measure() records
    with progress_bar(total=steps, desc="training", unit="step", disable=not progress) as bar:
        for step in range(1, steps + 1):
            data = repeated_tokens(batch, config, generator, filler=filler)
            logits = model(data.tokens)  # (B, T, V)
            loss = F.cross_entropy(  # (B·(T-1), V) vs (B·(T-1),): every next token
                logits[:, :-1].reshape(-1, config.vocab_size), data.tokens[:, 1:].reshape(-1)
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            bar.update()
            if step % every == 0 or step == steps:
                rows.append({"step": step, "loss": loss.item(), **measure(model, probe)})
                bar.set_postfix(repeat=f"{rows[-1]['repeat_loss']:.2f}", refresh=False)
                if live is not None:
                    live(step, pd.DataFrame(rows))
    model.record_attention = True
    history = pd.DataFrame(rows)
    formed = history.loc[history["induction"] >= FORMED, "step"]
    return ToyRun(model, history, int(formed.iloc[0]) if len(formed) else None)


def ablation_table(model: AttentionOnlyTransformer, probe: RepeatBatch) -> pd.DataFrame:
    """Zero each layer-0 head in turn and measure on ``probe`` (introduced in
    16_induction_heads). One row per head: head, repeat_loss_increase (nats, against the
    intact model), induction_before / induction_after (best last-layer head) and
    previous_token (that head's attention mass at offset 1, from the intact model)."""
    if not isinstance(model, AttentionOnlyTransformer):
        raise TypeError(
            _("model must be an AttentionOnlyTransformer, got {kind}").format(
                kind=type(model).__name__
            )
        )
    intact = measure(model, probe)
    offset_one = previous_token_score(model.last_attention[0])  # (H,) layer 0, intact
    rows = []
    for head in range(model.config.n_heads):
        ablated = measure(model, probe, ablate=[(0, head)])
        rows.append(
            {
                "head": head,
                "repeat_loss_increase": ablated["repeat_loss"] - intact["repeat_loss"],
                "induction_before": intact["induction"],
                "induction_after": ablated["induction"],
                "previous_token": offset_one[head].item(),
            }
        )
    return pd.DataFrame(rows)
