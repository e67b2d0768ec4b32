"""Tests of 16_induction_heads: the toy's config, data layout and attention (against PyTorch's
own), the three metrics on fixed attention tensors, one short deterministic training run, the
plot and ablation table, and the exercises' checkers (solutions pass, stubs are "not answered",
the named wrong versions fail on 40 seeds, the run gates on hand-made numbers).

No test trains the 2,000-step recipe: the notebook's nbval run does, once, with the gates."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from transformer_course import induction
from transformer_course.attention import MultiHeadAttention
from transformer_course.exercises import induction as ex
from transformer_course.exercises.solutions import induction as sol
from transformer_course.induction import gates

SMALL = dict(d_model=16, n_heads=2, vocab_size=20, context_length=64)


def _batch(seed=0, batch=4, filler=(2, 9), period=(3, 8), **config):
    cfg = induction.ToyConfig(**{**SMALL, **config})
    return cfg, induction.repeated_tokens(
        batch, cfg, torch.Generator().manual_seed(seed), filler=filler, period=period
    )


# ---- config and data ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(n_heads=3), ValueError),
        (dict(n_layers=0), ValueError),
        (dict(vocab_size=1), ValueError),
        (dict(context_length=2.5), TypeError),
    ],
)
def test_config_errors_name_the_argument(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        induction.ToyConfig(**kwargs)


def test_rows_are_filler_then_a_segment_repeated_with_masks_that_match():
    cfg, b = _batch()
    T = cfg.context_length
    for row in range(4):
        f, p = int(b.filler[row]), int(b.period[row])
        tokens = b.tokens[row]
        assert 2 <= f <= 9 and 3 <= p <= 8
        assert torch.equal(tokens[f + p :], tokens[f : T - p])  # one period back, every token
        t = torch.arange(T)
        assert torch.equal(b.repeat[row], (t >= f + p) & (t < T - 1))
        assert torch.equal(b.first[row], (t + 1 >= f) & (t + 1 < f + p))
    segments = {
        tuple(b.tokens[r, int(b.filler[r]) :][: int(b.period[r])].tolist()) for r in range(4)
    }
    assert len(segments) == 4  # every row draws its own segment


def test_a_two_copy_probe_marks_the_second_copy_only():
    cfg = induction.ToyConfig(**SMALL)
    probe = induction.toy_probe(cfg, batch=16)
    t = torch.arange(cfg.context_length)
    for row in range(16):
        f, p = int(probe.filler[row]), int(probe.period[row])
        end = min(f + 2 * p, cfg.context_length)
        assert torch.equal(probe.tokens[row, f + p : end], probe.tokens[row, f : end - p])
        assert torch.equal(probe.repeat[row], (t >= f + p) & (t + 1 < end))
    after = [r for r in range(16) if int(probe.filler[r] + 3 * probe.period[r]) <= 64]
    assert (
        after
        and any(  # what follows the second copy is not a third one
            not torch.equal(probe.tokens[r, f + 2 * p : f + 3 * p], probe.tokens[r, f : f + p])
            for r in after
            for f, p in [(int(probe.filler[r]), int(probe.period[r]))]
        )
    )
    assert torch.equal(probe.tokens, induction.toy_probe(cfg, batch=16).tokens)


def test_no_filler_is_the_shortcut_data_and_a_seed_fixes_the_batch():
    _cfg, b = _batch(filler=(0, 0))
    assert torch.equal(b.filler, torch.zeros(4, dtype=torch.long))
    _cfg, again = _batch(filler=(0, 0))
    assert torch.equal(b.tokens, again.tokens)
    assert not torch.equal(b.tokens, _batch(seed=1, filler=(0, 0))[1].tokens)


@pytest.mark.parametrize("kwargs", [dict(filler=(5, 2)), dict(period=(0, 3)), dict(filler=(0, 60))])
def test_bad_spans_are_refused(kwargs):
    with pytest.raises(ValueError):
        _batch(**kwargs)


# ---- the model ------------------------------------------------------------------------------


def test_attention_matches_pytorchs_and_the_weights_are_causal_rows():
    torch.manual_seed(0)
    cfg, b = _batch(n_layers=2)
    model = induction.AttentionOnlyTransformer(cfg)
    logits = model(b.tokens)  # (B, T, V)
    assert logits.shape == (4, cfg.context_length, cfg.vocab_size)
    w = model.last_attention  # (L, B, H, T, T)
    assert w.shape == (2, 4, 2, cfg.context_length, cfg.context_length)
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    assert (w.triu(1) == 0).all()
    # The same stack with the course's layer in its fused path (PyTorch's SDPA).
    x = model.token_embedding(b.tokens) + model.position_embedding.weight[: cfg.context_length]
    for layer in model.layers:
        x = x + MultiHeadAttention.forward(layer, x, causal=True)
    torch.testing.assert_close(logits, model.unembedding(x), atol=1e-5, rtol=1e-5)


def test_the_fused_kernel_gives_the_same_logits_and_keeps_no_weights():
    torch.manual_seed(2)
    cfg, b = _batch()
    model = induction.AttentionOnlyTransformer(cfg)
    by_hand = model(b.tokens, ablate=[(1, 0)])
    model.record_attention = False
    torch.testing.assert_close(model(b.tokens, ablate=[(1, 0)]), by_hand, atol=1e-5, rtol=1e-5)
    assert model.last_attention is None


def test_ablating_a_head_equals_zeroing_its_columns_of_the_output_projection():
    torch.manual_seed(1)
    cfg, b = _batch()
    model = induction.AttentionOnlyTransformer(cfg)
    ablated = model(b.tokens, ablate=[(0, 1)])
    D = cfg.d_model // cfg.n_heads
    with torch.no_grad():
        model.layers[0].out_proj.weight[:, D : 2 * D] = 0.0
    torch.testing.assert_close(ablated, model(b.tokens))


@pytest.mark.parametrize("ablate", [[(2, 0)], [(0, 5)], [0], [(0,)]])
def test_bad_ablations_are_refused(ablate):
    cfg, b = _batch()
    with pytest.raises((ValueError, TypeError)):
        induction.AttentionOnlyTransformer(cfg)(b.tokens, ablate=ablate)


# ---- the metrics on fixed attention tensors --------------------------------------------------


def _heads(b, T):
    """Three fixed heads [B, 3, T, T]: previous token, induction, uniform over the past."""
    B = b.tokens.shape[0]
    t = torch.arange(T)
    prev = F.one_hot((t - 1).clamp(min=0), T).float().expand(B, T, T)  # (B, T, T)
    key = torch.where(b.repeat, t[None] - b.period[:, None] + 1, t[None])  # (B, T)
    ind = F.one_hot(key, T).float()  # (B, T, T)
    uniform = torch.ones(T, T).tril() / torch.arange(1, T + 1)[:, None]  # (T, T)
    return torch.stack([prev, ind, uniform.expand(B, T, T)], dim=1)  # (B, 3, T, T)


def test_metrics_on_fixed_heads():
    cfg, b = _batch()
    T = cfg.context_length
    w = _heads(b, T)
    prev = induction.previous_token_score(w)
    uniform = sum(1 / (t + 1) for t in range(1, T)) / (T - 1)
    torch.testing.assert_close(prev[[0, 2]], torch.tensor([1.0, uniform]))
    ind = induction.induction_score(w, b)
    assert ind[1] == pytest.approx(1.0) and ind[0] < 0.2
    # A leading layer dimension is kept: [L, B, H, T, T] -> [L, H].
    stacked = torch.stack([w, w.flip(1)])
    assert induction.induction_score(stacked, b).shape == (2, 3)
    torch.testing.assert_close(induction.previous_token_score(stacked)[1], prev.flip(0))


def test_copy_losses_and_in_context_score():
    cfg, b = _batch()
    torch.manual_seed(0)
    logits = torch.randn(4, cfg.context_length, cfg.vocab_size)
    nxt = F.one_hot(b.tokens.roll(-1, 1), cfg.vocab_size).float() * 30.0
    knows = logits + nxt * b.repeat[..., None]  # certain of the next token on the repeat
    first, repeat = induction.copy_losses(knows, b)
    per = F.cross_entropy(logits[:, :-1].transpose(1, 2), b.tokens[:, 1:], reduction="none")
    assert first == pytest.approx(per[b.first[:, :-1]].mean().item(), abs=1e-5)
    assert repeat < 1e-6 < first
    assert induction.in_context_score(knows, b) == pytest.approx(repeat - first)
    assert sol.in_context_score(knows, b) == pytest.approx(repeat - first, abs=1e-5)


def test_metric_errors_are_clear():
    _cfg, b = _batch()
    with pytest.raises(ValueError, match="weights"):
        induction.previous_token_score(torch.rand(2, 3, 4, 5))
    with pytest.raises(TypeError, match="RepeatBatch"):
        induction.induction_score(torch.rand(4, 2, 64, 64), b.tokens)
    with pytest.raises(ValueError, match="batch.repeat"):
        induction.induction_score(torch.rand(3, 2, 64, 64), b)


# ---- training, plot, ablation table ---------------------------------------------------------


def test_a_short_run_is_deterministic_and_calls_live_after_each_measurement():
    cfg = induction.ToyConfig(**SMALL)
    seen = []
    run = induction.train_toy(
        cfg,
        steps=20,
        every=10,
        batch=8,
        progress=False,
        live=lambda step, history: seen.append((step, len(history))),
    )
    again = induction.train_toy(cfg, steps=20, every=10, batch=8, progress=False)
    assert seen == [(10, 2), (20, 3)]
    assert list(run.history.columns) == [
        "step",
        "loss",
        "first_loss",
        "repeat_loss",
        "induction",
        "previous_token",
    ]
    pd.testing.assert_frame_equal(run.history, again.history)
    assert run.phase_change_step is None and run.history["loss"].iloc[1:].notna().all()
    assert run.history["first_loss"].iloc[0] == pytest.approx(math.log(cfg.vocab_size), abs=0.5)
    ax = induction.plot_toy_run(run.history, phase_change_step=10)
    assert len(ax.lines) == 2 and len(ax.right.lines) == 1
    with pytest.raises(ValueError, match="history"):
        induction.plot_toy_run(run.history.drop(columns="induction"))
    table = induction.ablation_table(run.model, induction.toy_probe(cfg, batch=8))
    assert len(table) == cfg.n_heads and list(table.columns) == [
        "head",
        "repeat_loss_increase",
        "induction_before",
        "induction_after",
        "previous_token",
    ]
    assert induction.check_toy_run(run).message.startswith("the run stopped at step 20")


def test_the_repeat_row_colours_filler_first_copy_and_repeat():
    cfg = induction.ToyConfig(**SMALL)
    probe = induction.toy_probe(cfg, batch=2)
    ax = induction.plot_repeat_row(probe, row=1)
    f, p = int(probe.filler[1]), int(probe.period[1])
    colours = [patch.get_facecolor() for patch in ax.patches]
    assert len(colours) == cfg.context_length and len(ax.texts) == cfg.context_length
    assert colours[f] == colours[f + p - 1] != colours[f + p] == colours[f + 2 * p - 1]
    assert colours[0] == colours[f + 2 * p] != colours[f]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["filler", "first copy", "repeat"]
    with pytest.raises(ValueError, match="row"):
        induction.plot_repeat_row(probe, row=2)


def test_train_toy_argument_errors():
    cfg = induction.ToyConfig(**SMALL)
    with pytest.raises(TypeError, match="probe"):
        induction.train_toy(cfg, steps=1, probe="probe", progress=False)
    with pytest.raises(ValueError, match="steps"):
        induction.train_toy(cfg, steps=0, progress=False)


# ---- checkers --------------------------------------------------------------------------------

BUILD = [ex.check_previous_token_score, ex.check_induction_score, ex.check_in_context_score]


@pytest.mark.parametrize("check", BUILD, ids=lambda c: c.__name__)
def test_solutions_pass_stubs_are_not_answered_and_slips_are_named(check):
    assert check(check.exercise.solution, seed=0).correct
    stub = check(lambda *args: None)
    assert not stub.answered and not stub.correct
    for description, wrong in check.exercise.slips.items():
        feedback = check(wrong, seed=3)
        assert not feedback.correct and description in feedback.message, feedback


@pytest.mark.parametrize(
    "check, wrong",
    [
        (ex.check_previous_token_score, ex._offset_zero),  # the wrong diagonal
        (ex.check_induction_score, ex._previous_occurrence),  # t - period, not t - period + 1
        (ex.check_induction_score, ex._own_position),  # offset 0
        (ex.check_induction_score, ex._repeat_from_period),  # a probe without filler
        (ex.check_in_context_score, ex._over_both_copies),  # the loss over both copies
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_the_issues_wrong_metrics_fail_on_40_seeds(check, wrong):
    assert not [seed for seed in range(40) if check(wrong, seed=seed).correct]


def _fake_run(layers: int, steps: int = 2000) -> induction.ToyRun:
    cfg = induction.ToyConfig(n_layers=layers)
    history = pd.DataFrame({"step": [0, steps]})
    return induction.ToyRun(induction.AttentionOnlyTransformer(cfg), history, None)


@pytest.mark.parametrize(
    "numbers, correct, words",
    [
        (dict(induction=0.62, repeat_loss=0.40, first_loss=4.6), True, "an induction head formed"),
        (dict(induction=0.45, repeat_loss=0.40, first_loss=4.6), False, "no induction head yet"),
        (dict(induction=0.62, repeat_loss=1.20, first_loss=4.6), False, "no induction head yet"),
        (dict(induction=0.62, repeat_loss=0.40, first_loss=3.0), False, "not random"),
    ],
)
def test_toy_run_gates(monkeypatch, numbers, correct, words):
    monkeypatch.setattr(gates, "_fresh_measure", lambda run: {"previous_token": 0.5, **numbers})
    feedback = induction.check_toy_run(_fake_run(2))
    assert bool(feedback) is correct and words in feedback.message, feedback


def test_run_checkers_measure_the_model_itself_and_refuse_the_wrong_run():
    untrained = induction.check_toy_run(_fake_run(2))  # an untrained model on the checker's probe
    assert not untrained and "no induction head yet" in untrained.message
    assert "repeat loss 4." in untrained.message
    assert "wants the 2-layer toy" in induction.check_toy_run(_fake_run(1)).message
    assert "wants the 1-layer toy" in induction.check_control_run(_fake_run(2)).message
    assert "step 1,500" not in induction.check_control_run(_fake_run(1, 1500)).message
    assert "stopped at step 1500" in induction.check_control_run(_fake_run(1, 1500)).message
    control = induction.check_control_run(_fake_run(1))  # untrained: repeat loss near ln 64 ≥ 2.3
    assert control.passed and str(control).startswith("✓ "), control
    for check in (induction.check_toy_run, induction.check_control_run, induction.check_ablation):
        verdict = check("run")
        assert not verdict and str(verdict).startswith("✗ ")
        assert "got str" in verdict.message or "DataFrame" in verdict.message


def _table(increase, before, after):
    return pd.DataFrame(
        {
            "head": range(len(increase)),
            "repeat_loss_increase": increase,
            "induction_before": [before] * len(increase),
            "induction_after": after,
            "previous_token": [0.1] * len(increase),
        }
    )


def test_ablation_needs_a_head_that_costs_nats_and_halves_induction():
    passing = induction.check_ablation(_table([0.1, 2.4, 0.0, 0.3], 0.7, [0.7, 0.1, 0.69, 0.6]))
    assert passing and "head 1" in passing.message, passing
    assert not induction.check_ablation(_table([0.1, 1.2, 0.0, 0.3], 0.7, [0.7, 0.1, 0.7, 0.6]))
    assert not induction.check_ablation(_table([0.1, 2.4, 0.0, 0.3], 0.7, [0.7, 0.4, 0.7, 0.6]))
    assert "columns" in induction.check_ablation(pd.DataFrame({"head": [0, 1]})).message
    assert "row" in induction.check_ablation(_table([2.4], 0.7, [0.1])).message


@pytest.mark.parametrize(
    "inside, filler, correct, words",
    [
        (0.3, 4.5, True, "not how to find"),
        ((4.6, 0.3), (4.6, 4.5), True, "not how to find"),
        (torch.tensor(0.3), 4.5, True, "not how to find"),
        (0.3, 0.35, False, "Was this probe drawn with filler"),  # a probe without filler
        (4.5, 0.3, False, "swapped"),
        (2.0, 4.5, False, "has not learned its task"),
        ("low", 4.5, False, "numbers"),
    ],
)
def test_shortcut(inside, filler, correct, words):
    feedback = induction.check_shortcut(inside, filler)
    assert bool(feedback) is correct and words in feedback.message, feedback


def test_shortcut_prediction():
    assert ex.check_shortcut_prediction("high").correct
    assert not ex.check_shortcut_prediction("low").correct
    assert not ex.check_shortcut_prediction(...).answered
    assert "low" in ex.check_shortcut_prediction("medium").message
