"""Training diagnostics (10, 11, 13): the step-0 check, perplexity, samples, run-time estimate."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from torch import nn

from transformer_course.diagnostics import (
    TIMING_MARK,
    InitialLossWarning,
    RunEstimate,
    SampleRecorder,
    check_initial_loss,
    describe_loss,
    estimate_training_time,
    perplexity,
    repetition_rate,
    warn_if_initial_loss_off,
)
from transformer_course.model import GPT
from transformer_course.train import TrainConfig, train

VOCAB = 64


def model(tiny_gpt, std: float | None = None, seed: int = 0, **overrides) -> GPT:
    net = tiny_gpt(seed, **{"vocab_size": VOCAB, "d_model": 32, **overrides})
    if std is not None:  # the wrong init: every weight at std `std` instead of 0.02
        for module in net.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=std)
    return net


def stream(n: int = 600, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (n,), generator=torch.Generator().manual_seed(seed))


def quick(**overrides) -> TrainConfig:
    values = dict(
        steps=4, batch_size=4, context_length=8, eval_interval=0, progress=False, device="cpu"
    )
    values.update(overrides)
    return TrainConfig(**values)


def first_loss(net: GPT) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randint(0, VOCAB, (8, 8), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, VOCAB, (8, 8), generator=torch.Generator().manual_seed(2))
    logits, loss = net(x, y)
    return logits, loss


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"positional": "learned"},
        {"positional": "rope", "norm": "rmsnorm", "feedforward": "swiglu", "n_kv_heads": 2},
    ],
)
def test_course_init_is_within_tolerance_of_ln_v(tiny_gpt, overrides):
    logits, loss = first_loss(model(tiny_gpt, **overrides))
    check = check_initial_loss(loss, VOCAB, logits=logits)
    assert check.ok and abs(check.gap) < 0.05
    assert check.predicted == pytest.approx(check.loss, abs=0.05)  # ln V + σ²/2
    assert "normal" in str(check)


def test_wrong_init_fires_and_says_why(tiny_gpt):
    logits, loss = first_loss(model(tiny_gpt, std=1.0))
    check = check_initial_loss(loss, VOCAB, logits=logits)
    assert not check and check.gap > 3
    assert "too high" in str(check) and "init" in str(check)


def test_too_low_and_non_finite_are_explained():
    low = check_initial_loss(2.0, VOCAB)
    assert not low.ok and "vocabulary" in low.meaning and "leaking causal mask" in low.meaning
    assert not check_initial_loss(float("nan"), VOCAB).ok
    assert "not finite" in check_initial_loss(float("inf"), VOCAB).meaning


def test_train_warns_at_step_0_on_a_wrong_init_and_stays_quiet_on_the_course_init(tiny_gpt):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InitialLossWarning)
        train(model(tiny_gpt), stream(), stream(seed=1), quick())  # must not raise
    with pytest.warns(InitialLossWarning, match=r"step-0 loss .* ln V = ln 64 = 4\.16.*too high"):
        train(model(tiny_gpt, std=1.0), stream(), stream(seed=1), quick())


def test_warn_helper_returns_the_check():
    with pytest.warns(InitialLossWarning):
        assert not warn_if_initial_loss_off(9.0, VOCAB)


def test_perplexity():
    assert perplexity(math.log(VOCAB)) == pytest.approx(VOCAB)
    assert perplexity(torch.tensor(0.0)) == 1.0
    assert perplexity(1e6) == math.inf and math.isnan(perplexity(float("nan")))
    assert describe_loss(4.73) == "loss 4.73 (perplexity 113)"
    assert describe_loss(0.5) == "loss 0.50 (perplexity 1.65)"


def test_clear_errors(tiny_gpt):
    with pytest.raises(TypeError, match="loss must be a number"):
        perplexity("4.7")
    with pytest.raises(ValueError, match="vocab_size must be at least 2"):
        check_initial_loss(1.0, 1)
    with pytest.raises(ValueError, match="logits score 10 classes"):
        check_initial_loss(1.0, VOCAB, logits=torch.zeros(2, 10))
    with pytest.raises(ValueError, match="tolerance"):
        check_initial_loss(1.0, VOCAB, tolerance=0)
    with pytest.raises(ValueError, match="window"):
        SampleRecorder(lambda: ([], ""), window=0)
    with pytest.raises(ValueError, match="probe_steps"):
        estimate_training_time(model(tiny_gpt), stream(), stream(), quick(), probe_steps=0)


def test_repetition_rate():
    assert repetition_rate([5, 5, 5, 5, 5, 5]) == pytest.approx(4 / 5)
    assert repetition_rate(torch.arange(10)) == 0.0
    assert repetition_rate([1, 2]) == 0.0


def test_sample_recorder_stores_each_threshold_once_and_leaves_the_run_unchanged(tiny_gpt):
    calls = []

    def sample():
        calls.append(1)
        return [1, 2, 3], "text"

    thresholds = (4.1, 3.9)
    recorder = SampleRecorder(sample, thresholds=thresholds, window=5)
    config = quick(steps=80, lr=1e-2)
    plain = train(model(tiny_gpt), stream(), stream(seed=1), config)
    history = train(model(tiny_gpt), stream(), stream(seed=1), config, callback=recorder)
    assert history.train_loss == plain.train_loss
    final = recorder.final(history)
    labels = [m.label for m in recorder.milestones]
    assert labels[-1] == "final" and final.step == 80 and len(calls) == len(labels)
    for milestone in recorder.milestones[:-1]:
        losses = history.train_loss[milestone.step - 5 : milestone.step]
        assert milestone.train_loss == pytest.approx(sum(losses) / 5)
        assert milestone.train_loss <= float(milestone.label.split()[-1])
        # the first step whose mean passes the threshold
        earlier = [sum(history.train_loss[s - 5 : s]) / 5 for s in range(5, milestone.step)]
        assert all(loss > float(milestone.label.split()[-1]) for loss in earlier)
    assert len(set(labels)) == len(labels)


def test_run_estimate_extrapolates_and_leaves_everything_untouched(tiny_gpt):
    net = model(tiny_gpt)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    rng = torch.get_rng_state()
    estimate = estimate_training_time(
        net, stream(), stream(seed=1), quick(steps=500, eval_interval=100), probe_steps=3
    )
    assert torch.equal(rng, torch.get_rng_state())
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert estimate.steps == 500 and estimate.evaluations == 5 and estimate.probe_steps == 3
    assert estimate.seconds_per_step > 0 and estimate.total_seconds == pytest.approx(
        500 * estimate.seconds_per_step + 5 * estimate.seconds_per_evaluation
    )
    assert str(estimate).startswith(TIMING_MARK) and "\n" not in str(estimate)


def test_run_estimate_counts_validations():
    assert RunEstimate(700, 0.1, 7, 1.0, 5).total_seconds == pytest.approx(77.0)
    assert "about 2.5 min for 700 steps" in str(RunEstimate(700, 0.2, 7, 1.0, 5))
    assert "about 77 s" in str(RunEstimate(700, 0.1, 7, 1.0, 5))
