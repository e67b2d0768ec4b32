"""train_step, the loop body of 11_training, and train() built around it: same numbers as before.

The probe below trains a tiny GPT for 30 steps (dropout on, warm-up, clipping, three
validations), then interrupts a second run at step 12 and resumes it from its checkpoint. Its
digest of every loss and learning rate was recorded with the single 187-line ``train`` that
came before the split into ``train_step``, ``_train_run`` and ``interrupts``: the refactor must
give the same bits.
"""

from __future__ import annotations

import copy

import pytest
import torch
from pinned_probe import run_probe

from transformer_course.exercises.training import check_one_training_step
from transformer_course.machine import reproducible_cpu_environment
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import make_optimizer, train_step
from transformer_course.train.interrupts import StepWatch

PROBE = """
import hashlib, os, tempfile
from dataclasses import replace
import torch
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import TrainConfig, train

def model():
    torch.manual_seed(0)
    # GPT-2's plain table ("none"): the digest was recorded before embedding_scale existed.
    return GPT(GPTConfig(vocab_size=48, context_length=8, d_model=16, n_heads=2, n_layers=2, dropout=0.1,
                         embedding_scale="none"))

ids = torch.randint(0, 48, (600,), generator=torch.Generator().manual_seed(3))
config = TrainConfig(steps=30, batch_size=4, context_length=8, lr=3e-3, warmup=5, eval_interval=10,
                     eval_batch_size=8, progress=False, device="cpu", checkpoint_seconds=0)
h = train(model(), ids[:500], ids[500:], config)
with tempfile.TemporaryDirectory() as folder:
    resumable = replace(config, checkpoint_path=os.path.join(folder, "run.pt"))
    def stop(step, history):
        if step == 12:
            raise KeyboardInterrupt
    first = train(model(), ids[:500], ids[500:], resumable, callback=stop)
    resumed_model = model()
    resumed = train(resumed_model, ids[:500], ids[500:], resumable)
values = [v.hex() for v in h.train_loss + h.val_loss + h.lr] + [str(h.val_step), str(h.tokens)]
weights = sum(p.double().sum() for p in resumed_model.parameters()).item().hex()
print(hashlib.sha256(" ".join(values).encode()).hexdigest()[:32], first.steps,
      resumed.train_loss == h.train_loss, resumed.val_loss == h.val_loss, weights)
"""
#: Recorded with the pre-split ``train`` (torch 2.13.0 CPU build, pinned AVX2 kernels) on each
#: processor family of ``pinned_probe.MACHINES`` (the pins do not give one answer across vendors).
RECORDED = {
    "amd-avx2": "6aeac4fd6e33e1ee5b880bdcb57a4643 12 True True 0x1.3f65be8b0c03ep+6",
    "intel-avx512": "8b5af57782b7746017a8b7ab5c47a015 12 True True 0x1.3f65beb0401e6p+6",
}
X86 = "ATEN_CPU_CAPABILITY" in reproducible_cpu_environment()


@pytest.mark.skipif(not X86, reason="the recorded bits are for x86-64 processors")
def test_train_gives_the_bits_recorded_before_the_refactor():
    if not torch.__version__.startswith("2.13.0"):
        pytest.skip(f"bits recorded with torch 2.13.0; this is {torch.__version__}")
    assert run_probe(PROBE, **reproducible_cpu_environment()) in RECORDED.values()


def _tiny(seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return GPT(
        GPTConfig(vocab_size=40, context_length=8, d_model=16, n_heads=2, n_layers=1, dropout=0.0)
    )


def test_train_step_is_the_textbook_step():
    model = _tiny()
    by_hand = copy.deepcopy(model)
    optimizer, reference = make_optimizer(model, lr=1.0), make_optimizer(by_hand, lr=1.0)
    x = torch.randint(0, 40, (3, 8), generator=torch.Generator().manual_seed(1))  # (B, T)
    y = torch.randint(0, 40, (3, 8), generator=torch.Generator().manual_seed(2))  # (B, T)
    for lr in (1e-2, 5e-3):
        loss = train_step(model, optimizer, x, y, lr=lr, grad_clip=0.5)
        for group in reference.param_groups:
            group["lr"] = lr
        _, expected = by_hand(x, y)
        reference.zero_grad(set_to_none=True)
        expected.backward()
        torch.nn.utils.clip_grad_norm_(by_hand.parameters(), 0.5)
        reference.step()
        assert torch.equal(loss, expected.detach()) and not loss.requires_grad
    assert all(g["lr"] == 5e-3 for g in optimizer.param_groups)
    for mine, theirs in zip(model.parameters(), by_hand.parameters()):
        assert torch.equal(mine, theirs)


def test_train_step_keeps_the_lr_when_none_and_lowers_the_loss():
    model = _tiny()
    optimizer = make_optimizer(model, lr=1e-2)
    x = torch.randint(0, 40, (4, 8), generator=torch.Generator().manual_seed(3))  # (B, T)
    losses = [float(train_step(model, optimizer, x, x.roll(-1, dims=1))) for _ in range(20)]
    assert all(g["lr"] == 1e-2 for g in optimizer.param_groups)
    assert losses[-1] < losses[0] - 1.0


def test_step_watch_sees_the_update_and_removes_its_hooks():
    model = _tiny()
    optimizer = make_optimizer(model)
    seen = []
    with StepWatch(optimizer) as watch:
        model.lm_head.weight.register_hook(lambda grad: seen.append(watch.updating))
        mine = optimizer.register_step_pre_hook(lambda *_: seen.append(watch.updating))
        train_step(
            model,
            optimizer,
            torch.zeros(1, 8, dtype=torch.long),
            torch.ones(1, 8, dtype=torch.long),
        )
        mine.remove()
    assert seen == [False, True] and not watch.updating  # backward: not yet; inside step: yes
    assert not optimizer._optimizer_step_pre_hooks and not optimizer._optimizer_step_post_hooks


def test_one_training_step_rejects_stale_gradients():
    """A step that clears the gradients only after optimizer.step() (or never) updates with the
    warm-up step's gradients too: check_one_training_step rejects it and names the slip."""

    def clears_after_the_step(model, optimizer, x, y, lr, grad_clip):
        _, loss = model(x, y)
        loss.backward()  # adds to the gradients the warm-up step left
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    feedback = check_one_training_step(clears_after_the_step, seed=0)
    assert not feedback and "missing optimizer.zero_grad()" in feedback.message, feedback
