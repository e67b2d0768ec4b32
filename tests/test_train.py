"""The training loop: schedule, optimizer groups, whole-split evaluation, overfitting, resuming."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from transformer_course.checkpoint import load_checkpoint
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import (
    PRESETS,
    History,
    TrainConfig,
    evaluate,
    lr_at,
    make_optimizer,
    sampled_loss,
    train,
    with_preset,
)

VOCAB = 32


def tiny(dropout: float = 0.1, seed: int = 0, **overrides) -> GPT:
    torch.manual_seed(seed)
    settings_ = dict(
        vocab_size=VOCAB, context_length=8, d_model=16, n_heads=2, n_layers=2, dropout=dropout
    )
    settings_.update(overrides)
    return GPT(GPTConfig(**settings_))


def stream(n: int = 400, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (n,), generator=torch.Generator().manual_seed(seed))


def quick(**overrides) -> TrainConfig:
    values = dict(
        steps=12,
        batch_size=4,
        context_length=8,
        lr=3e-3,
        warmup=3,
        eval_interval=5,
        progress=False,
        device="cpu",
    )
    values.update(overrides)
    return TrainConfig(**values)


# --- the schedule -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    steps=st.integers(min_value=2, max_value=5000),
    warmup_fraction=st.floats(min_value=0.0, max_value=0.9),
    lr=st.floats(min_value=1e-5, max_value=1.0),
    floor_fraction=st.floats(min_value=0.0, max_value=1.0),
)
def test_schedule_shape(steps, warmup_fraction, lr, floor_fraction):
    warmup, min_lr = int(warmup_fraction * steps), lr * floor_fraction
    rates = [lr_at(s, steps=steps, lr=lr, warmup=warmup, min_lr=min_lr) for s in range(steps + 3)]
    assert all(0 <= r <= lr * (1 + 1e-12) for r in rates)
    assert all(min_lr * (1 - 1e-12) <= r for r in rates[warmup:]), (
        "after warm-up never below the floor"
    )
    if warmup:
        assert rates[0] == pytest.approx(lr / warmup) and rates[0] > 0
        assert rates[warmup - 1] == pytest.approx(lr)  # warm-up ends at the peak
        assert all(a <= b + 1e-15 for a, b in zip(rates[:warmup], rates[1:warmup]))
    assert rates[warmup] == pytest.approx(lr)
    after = rates[warmup:]
    assert all(b <= a + 1e-12 for a, b in zip(after, after[1:])), "the cosine only goes down"
    assert rates[-1] == pytest.approx(min_lr)


def test_schedule_midpoint_and_default_floor():
    # Halfway through the cosine the rate is halfway between peak and floor.
    assert lr_at(60, steps=110, lr=1.0, warmup=10, min_lr=0.2) == pytest.approx(0.6)
    assert lr_at(10**6, steps=100, lr=3e-3) == pytest.approx(3e-4)  # min_lr=None -> lr / 10


# --- the optimizer ----------------------------------------------------------------------------


def test_weight_decay_only_on_matrices():
    model = tiny()
    optimizer = make_optimizer(model, lr=2e-3, weight_decay=0.1)
    decay, no_decay = optimizer.param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decay["params"]) and all(
        p.dim() < 2 for p in no_decay["params"]
    )
    grouped = [id(p) for g in optimizer.param_groups for p in g["params"]]
    assert len(grouped) == len(set(grouped)) == len(list(model.parameters())), (
        "the tied table appears once"
    )
    assert optimizer.defaults["lr"] == 2e-3
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        make_optimizer("not a model")


def test_fused_optimizer_matches_the_reference():
    model, reference = tiny(dropout=0.0), tiny(dropout=0.0)
    ours = make_optimizer(model, lr=1e-2)
    plain = torch.optim.AdamW(
        [
            {"params": g["params"], "weight_decay": g["weight_decay"]}
            for g in make_optimizer(reference).param_groups
        ],
        lr=1e-2,
        betas=(0.9, 0.95),
        foreach=False,
    )
    x = stream(64).view(8, 8)
    for net, opt in ((model, ours), (reference, plain)):
        for _ in range(3):
            _, loss = net(x, x.roll(-1, dims=1))
            opt.zero_grad()
            loss.backward()
            opt.step()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


# --- evaluation -------------------------------------------------------------------------------


def test_evaluate_covers_the_whole_split_once():
    model = tiny().train()
    ids = stream(8 * 9 + 5)  # 9 full windows of 8 plus a tail that cannot be a whole window
    model.eval()
    with torch.no_grad():
        losses = []
        for w in range(9):
            x = ids[w * 8 : w * 8 + 8][None]  # (1, T)
            y = ids[w * 8 + 1 : w * 8 + 9][None]  # (1, T)
            logits, _ = model(x)
            losses.append(F.cross_entropy(logits[0], y[0], reduction="sum"))
    expected = float(torch.stack(losses).sum()) / (9 * 8)
    model.train()
    for batch_size in (1, 4, 64):
        assert evaluate(model, ids, 8, batch_size=batch_size) == pytest.approx(expected, rel=1e-5)
    assert model.training, "the model's mode is restored"
    with pytest.raises(ValueError, match="fewer than context_length"):
        evaluate(model, ids[:5], 8)


def test_sampled_loss_is_noisy_and_seeded():
    model = tiny()
    ids = stream(2000)
    a = sampled_loss(
        model, ids, 8, batches=2, batch_size=2, generator=torch.Generator().manual_seed(0)
    )
    b = sampled_loss(
        model, ids, 8, batches=2, batch_size=2, generator=torch.Generator().manual_seed(0)
    )
    c = sampled_loss(
        model, ids, 8, batches=2, batch_size=2, generator=torch.Generator().manual_seed(1)
    )
    assert a == b and a != c


# --- training ---------------------------------------------------------------------------------


def test_overfits_one_small_batch():
    pattern = torch.arange(9) % VOCAB  # one sequence the model can memorise: x = 0..7, y = 1..8
    model = tiny(dropout=0.0)
    history = train(
        model,
        pattern,
        pattern,
        quick(steps=150, batch_size=1, lr=1e-2, warmup=10, min_lr=1e-3, eval_interval=0),
    )
    assert history.train_loss[0] > 2.5  # starts near ln 32 ≈ 3.47
    assert history.train_loss[-1] < 0.05
    assert history.val_loss[-1] < 0.05 and history.val_step == [150]
    assert len(history.lr) == 150 and history.tokens == 150 * 8


def test_history_and_schedule_are_recorded():
    config = quick(steps=10, eval_interval=4)
    history = train(tiny(), stream(), stream(200, seed=1), config)
    assert history.steps == 10 and history.val_step == [4, 8, 10]
    assert history.lr == [
        lr_at(s, steps=10, lr=config.lr, warmup=3, min_lr=config.final_lr) for s in range(10)
    ]
    assert all(math.isfinite(v) for v in history.train_loss + history.val_loss)
    assert History.from_dict(history.as_dict()) == history


def test_interrupted_then_resumed_equals_uninterrupted(tmp_path):
    config = quick(steps=12, checkpoint_path=str(tmp_path / "full.pt"))
    reference = tiny()
    full = train(reference, stream(), stream(200, seed=1), config)

    def stop_at_5(step, history):
        if step == 5:
            raise KeyboardInterrupt  # what pressing the stop button does between two steps

    path = tmp_path / "interrupted.pt"
    config = quick(steps=12, checkpoint_path=str(path))
    stopped = train(tiny(), stream(), stream(200, seed=1), config, callback=stop_at_5)
    assert stopped.interrupted and stopped.steps == 5
    assert load_checkpoint(path)["step"] == 5

    resumed_model = tiny(seed=123)  # whatever it starts from, the checkpoint's weights win
    resumed = train(resumed_model, stream(), stream(200, seed=1), config)
    assert not resumed.interrupted and resumed.steps == 12
    assert resumed.train_loss == full.train_loss, "same batches, same dropout, same updates"
    assert resumed.val_step == full.val_step and resumed.val_loss == full.val_loss
    for (name, a), b in zip(reference.state_dict().items(), resumed_model.state_dict().values()):
        assert torch.equal(a, b), name
    assert load_checkpoint(path)["step"] == 12
    again = train(
        resumed_model, stream(), stream(200, seed=1), config
    )  # already done: nothing to do
    assert again.steps == 12 and again.train_loss == full.train_loss


def test_interrupt_can_raise(tmp_path):
    def stop(step, history):
        raise KeyboardInterrupt

    path = tmp_path / "m.pt"
    with pytest.raises(KeyboardInterrupt):
        train(
            tiny(),
            stream(),
            stream(200),
            quick(checkpoint_path=str(path), on_interrupt="raise"),
            callback=stop,
        )
    assert load_checkpoint(path)["step"] == 1


def test_fresh_start_ignores_a_checkpoint(tmp_path):
    path = tmp_path / "m.pt"
    first = train(tiny(), stream(), stream(200), quick(steps=4, checkpoint_path=str(path)))
    second = train(
        tiny(), stream(), stream(200), quick(steps=4, checkpoint_path=str(path), resume=False)
    )
    assert second.train_loss == first.train_loss  # trained again from step 0, same seed


def test_clear_errors():
    with pytest.raises(ValueError, match="steps must be at least 1"):
        TrainConfig(steps=0)
    with pytest.raises(ValueError, match="lr must be a positive"):
        TrainConfig(lr=-1.0)
    with pytest.raises(ValueError, match="min_lr must lie"):
        TrainConfig(lr=1e-3, min_lr=1.0)
    with pytest.raises(ValueError, match="on_interrupt must be one of"):
        TrainConfig(on_interrupt="ignore")
    with pytest.raises(TypeError, match="batch_size must be an int"):
        TrainConfig(batch_size=2.5)
    with pytest.raises(ValueError, match="vocab_size is 32"):
        train(tiny(), torch.full((100,), 40), stream(100), quick())
    with pytest.raises(ValueError, match="longer than the model's context_length=8"):
        train(tiny(), stream(), stream(100), quick(context_length=16))
    with pytest.raises(ValueError, match="preset must be one of"):
        with_preset("fast")


def test_presets():
    seed = PRESETS["seed"]
    assert (seed.steps, seed.batch_size, seed.context_length, seed.lr) == (5000, 4, 16, 1e-3)
    assert seed.final_lr == seed.lr and seed.warmup == 0  # the seed trains at a constant rate
    assert with_preset("cpu-demo", steps=7).steps == 7 and PRESETS["cpu-demo"].steps != 7


def test_exercise_checks():
    from transformer_course.exercises import training as ex

    assert ex.check_warmup_lr(6e-4, 9, 700, 3e-3, 50, None)
    assert not ex.check_warmup_lr(5.4e-4, 9, 700, 3e-3, 50, None)  # the off-by-one step
    assert ex.check_validation_windows(973, 7792, 8) and not ex.check_validation_windows(
        974, 7792, 8
    )
    for feedback in (
        ex.check_warmup_lr(..., 9, 700, 3e-3, 50, None),
        ex.check_validation_windows(..., 9, 3),
    ):
        assert not feedback.answered and "Not answered" in str(feedback)


# --- the CUDA recipe, run on the CPU ----------------------------------------------------------
# No GPU is lent to CI. CUDA training differs from CPU training only in the dtype that
# `machine.autocast_dtype` returns (bf16), and torch.autocast has a CPU bf16 mode too, so the
# same `train`/`evaluate` code that runs under `torch.autocast("cuda", bfloat16)` runs here.


def _record_linear_dtypes(model: GPT) -> list[torch.dtype]:
    seen: list[torch.dtype] = []
    first_linear = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    first_linear.register_forward_hook(lambda _m, _inp, out: seen.append(out.dtype))
    return seen


def test_bf16_autocast_path_trains_like_float32(monkeypatch):
    import transformer_course.machine as device_module

    # A learnable stream (each token fixes the next one), so the loss has somewhere to go.
    train_ids = (torch.arange(2000) * 7) % VOCAB  # (N,)
    val_ids = (torch.arange(400) * 7 + 3) % VOCAB  # (M,)
    config = quick(steps=150, lr=1e-2, warmup=5, eval_interval=0)
    plain = tiny(dropout=0.0)
    history_fp32 = train(plain, train_ids, val_ids, config)

    monkeypatch.setattr(device_module, "autocast_dtype", lambda device: torch.bfloat16)
    mixed = tiny(dropout=0.0)
    linear_dtypes = _record_linear_dtypes(mixed)
    history_bf16 = train(mixed, train_ids, val_ids, config)

    assert set(linear_dtypes) == {torch.bfloat16}, "autocast must really run the matmuls in bf16"
    assert all(p.dtype == torch.float32 for p in mixed.parameters()), "weights stay float32"
    assert history_bf16.train_loss[0] > 3.3 and history_bf16.train_loss[-1] < 2.0  # from ln 32
    # bf16 keeps 8 bits of mantissa: the two runs drift apart a little, never a lot.
    assert history_bf16.val_loss[-1] == pytest.approx(history_fp32.val_loss[-1], abs=0.1)
    with_autocast = evaluate(mixed, val_ids, 8)
    without = evaluate(mixed, val_ids, 8, autocast=False)
    assert with_autocast == pytest.approx(without, abs=0.05) and with_autocast != without


def test_autocast_dtype_follows_the_gpu(monkeypatch):
    from transformer_course.machine import autocast_dtype

    cuda = torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert autocast_dtype(cuda) is torch.bfloat16
    # A GPU without bf16 (before Ampere) trains in float32 rather than risk fp16 overflow.
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert autocast_dtype(cuda) is None
    assert autocast_dtype(torch.device("mps")) is None
