"""Multi-process training on the CPU (gloo).

Two processes are started once (each pays PyTorch's import, so there is only one pair) and do
two things:

1. ``train()`` under an initialised process group: both ranks must end with identical weights,
   equal to one process training on both ranks' batches at once (DDP averages the gradients);
2. the command line as ``torchrun --nproc_per_node=2 -m transformer_course train`` runs it: the
   same environment variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), then
   ``main()``; rank 0 alone writes the checkpoint and prints.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
from dataclasses import replace

import pytest
import torch
import torch.multiprocessing as mp
from torch import distributed as dist

from transformer_course import data
from transformer_course.checkpoint import load_checkpoint
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import TrainConfig, lr_at, make_optimizer, train

STEPS, BATCH, CONTEXT, VOCAB = 4, 3, 8, 24

pytestmark = pytest.mark.skipif(
    not dist.is_available(), reason="this PyTorch build has no torch.distributed"
)


def tiny() -> GPT:
    torch.manual_seed(0)
    return GPT(
        GPTConfig(
            vocab_size=VOCAB, context_length=CONTEXT, d_model=16, n_heads=2, n_layers=1, dropout=0.0
        )
    )


def streams() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(0, VOCAB, (300,), generator=torch.Generator().manual_seed(0))
    return ids[:250], ids[250:]


def config() -> TrainConfig:
    return TrainConfig(
        steps=STEPS, batch_size=BATCH, context_length=CONTEXT, lr=1e-2, warmup=1, grad_clip=None,
        eval_interval=2, progress=False, device="cpu",
    )  # fmt: skip


def worker(rank: int, world: int, out: str, port: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{out}/store", rank=rank, world_size=world)
    try:
        model = tiny()
        if rank == 1:  # a different start on purpose: DDP must broadcast rank 0's weights
            torch.nn.init.normal_(model.lm_head.weight)
        train_ids, val_ids = streams()
        history = train(model, train_ids, val_ids, config())
        torch.save(
            {"state": model.state_dict(), "history": history.as_dict()}, f"{out}/rank{rank}.pt"
        )

        # 3. SIGTERM reaches rank 1 alone (after step 2): every rank stops after that same step,
        # and rank 0 alone writes the checkpoint.
        def terminate_rank1(step, _history):
            if rank == 1 and step == 2:
                os.kill(os.getpid(), signal.SIGTERM)

        stopped = train(
            tiny(), train_ids, val_ids,
            replace(config(), steps=50, checkpoint_path=f"{out}/stop.pt", checkpoint_seconds=0),
            callback=terminate_rank1,
        )  # fmt: skip
        with open(f"{out}/stop{rank}.txt", "w") as handle:
            handle.write(f"{stopped.steps} {stopped.interrupted} {stopped.stopped_by}")
    finally:
        dist.destroy_process_group()

    from transformer_course.cli import main

    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
    )  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            ["train", "--text", f"{out}/tiny.txt", "--checkpoint", f"{out}/ddp.pt", "--steps", "3",
             "--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--context-length", "8",
             "--batch-size", "2", "--eval-interval", "0", "--no-progress", "--device", "cpu"]
        )  # fmt: skip
    with open(f"{out}/cli{rank}.txt", "w") as handle:
        handle.write(f"{code}\n{printed.getvalue()}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_two_cpu_processes(tmp_path):
    (tmp_path / "tiny.txt").write_text(
        "Ask the customer what they need, then listen. " * 40, encoding="utf-8"
    )
    mp.spawn(worker, args=(2, str(tmp_path), free_port()), nprocs=2, join=True)

    # 1. train(): identical replicas, each fed its own batches.
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    for name, tensor in ranks[0]["state"].items():
        assert torch.equal(tensor, ranks[1]["state"][name]), f"{name} differs between the ranks"
    first, second = (r["history"] for r in ranks)
    assert first["train_loss"] != second["train_loss"], "each process trains on its own batches"
    assert first["val_loss"] == second["val_loss"] and first["val_step"] == [2, 4]
    assert first["tokens"] == STEPS * BATCH * CONTEXT * 2

    # The same weights from one process that sees both processes' batches in every step.
    model = tiny()
    optimizer = make_optimizer(model, lr=1e-2)
    train_ids, _ = streams()
    generators = [torch.Generator().manual_seed(r) for r in range(2)]  # rank r uses seed + r
    for step in range(STEPS):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, steps=STEPS, lr=1e-2, warmup=1, min_lr=1e-3)
        batches = [data.get_batch(train_ids, BATCH, CONTEXT, generator=g) for g in generators]
        x = torch.cat([b[0] for b in batches])  # (2B, T)
        y = torch.cat([b[1] for b in batches])  # (2B, T)
        _, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for name, tensor in model.state_dict().items():
        if name.endswith("k_proj.bias"):
            # Its true gradient is zero (a key bias shifts a query's scores by a constant, which
            # softmax ignores); Adam blows the rounding noise up into lr-sized steps.
            continue
        torch.testing.assert_close(tensor, ranks[0]["state"][name], rtol=1e-4, atol=1e-5, msg=name)

    # 2. The command line under torchrun's environment.
    stops = [(tmp_path / f"stop{r}.txt").read_text().split() for r in range(2)]
    assert stops == [["2", "True", "KeyboardInterrupt"], ["2", "True", "SIGTERM"]]
    assert load_checkpoint(tmp_path / "stop.pt")["step"] == 2
    assert not list(tmp_path.glob(".stop.pt.*")), "no temporary file may stay"

    outputs = [(tmp_path / f"cli{r}.txt").read_text().split("\n", 1) for r in range(2)]
    assert [code for code, _ in outputs] == ["0", "0"]
    assert "2 processes on cpu" in outputs[0][1] and "validation loss" in outputs[0][1]
    assert outputs[1][1] == "", "only rank 0 prints"
    saved = load_checkpoint(tmp_path / "ddp.pt")
    assert saved["step"] == 3 and saved["world_size"] == 2 and len(saved["rng"]) == 2
