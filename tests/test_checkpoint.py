"""Checkpoints: atomic writes, weights_only loads, clear errors for corrupt or mismatched files."""

from __future__ import annotations

import os

import pytest
import torch

from transformer_course import checkpoint as ckpt
from transformer_course.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_from_checkpoint,
    save_checkpoint,
)
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import make_optimizer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny(vocab_size: int = 40, seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return GPT(
        GPTConfig(vocab_size=vocab_size, context_length=8, d_model=16, n_heads=2, n_layers=2)
    )


def one_step(model: GPT, optimizer: torch.optim.Optimizer) -> None:
    x = torch.randint(
        0, model.config.vocab_size, (2, 8), generator=torch.Generator().manual_seed(1)
    )
    _, loss = model(x, x.roll(-1, dims=1))
    loss.backward()
    optimizer.step()


def test_round_trip(tmp_path):
    model = tiny()
    optimizer = make_optimizer(model)
    one_step(model, optimizer)
    path = save_checkpoint(
        tmp_path / "sub" / "model.pt", model, optimizer, step=7, history={"loss": [1.5, 1.25]}
    )
    assert path.is_file()
    assert [p.name for p in path.parent.iterdir()] == ["model.pt"], "no temporary file left behind"

    raw = torch.load(path, weights_only=True)  # the format loads with the safe unpickler
    assert raw["format"] == ckpt.FORMAT and raw["step"] == 7

    fresh = tiny(seed=1)
    fresh_optimizer = make_optimizer(fresh)
    saved = load_checkpoint(path, fresh, fresh_optimizer)
    for (name, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert torch.equal(a, b), name
    assert saved["history"] == {"loss": [1.5, 1.25]}
    assert saved["model_config"]["vocab_size"] == 40
    state, fresh_state = optimizer.state_dict()["state"], fresh_optimizer.state_dict()["state"]
    assert state.keys() == fresh_state.keys()
    for key in state:
        assert torch.equal(state[key]["exp_avg"], fresh_state[key]["exp_avg"])


def test_model_from_checkpoint(tmp_path):
    model = tiny()
    save_checkpoint(tmp_path / "m.pt", model)
    rebuilt, saved = model_from_checkpoint(tmp_path / "m.pt")
    assert rebuilt.config == model.config and not rebuilt.training
    x = torch.randint(0, 40, (1, 8))
    model.eval()
    torch.testing.assert_close(rebuilt(x)[0], model(x)[0])
    assert saved["optimizer"] is None


def test_interrupted_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    save_checkpoint(path, tiny(), step=1)
    before = path.read_bytes()

    def broken_save(obj, handle, *args, **kwargs):
        handle.write(b"half a checkpoint")
        raise KeyboardInterrupt  # the process is stopped in the middle of writing

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, tiny(seed=2), step=2)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_file_has_a_clear_error(tmp_path, damage):
    path = tmp_path / "model.pt"
    save_checkpoint(path, tiny(), step=1)
    data = path.read_bytes()
    path.write_bytes(
        {"truncate": data[: len(data) // 2], "garbage": b"\x00not a checkpoint" * 50, "empty": b""}[
            damage
        ]
    )
    with pytest.raises(CheckpointError, match="not a readable checkpoint.*corrupt.*Delete it"):
        load_checkpoint(path, tiny())


def test_foreign_file(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match="not a transformer_course checkpoint"):
        load_checkpoint(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "nothing.pt")


def test_mismatched_config_names_the_difference(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", tiny(vocab_size=40))
    other = tiny(vocab_size=41)
    before = [p.clone() for p in other.parameters()]
    with pytest.raises(
        CheckpointError, match=r"vocab_size: checkpoint 40, model 41.*GPTConfig\(\*\*checkpoint"
    ):
        load_checkpoint(path, other)
    assert all(torch.equal(a, b) for a, b in zip(before, other.parameters())), "weights untouched"


def test_state_dict_mismatch_without_config(tmp_path):
    path = save_checkpoint(tmp_path / "lin.pt", torch.nn.Linear(3, 4))
    with pytest.raises(CheckpointError, match="does not fit this model"):
        load_checkpoint(path, torch.nn.Linear(3, 5))


def test_metadata_must_be_plain(tmp_path):
    with pytest.raises(TypeError, match=r"meta\['when'\] is a object"):
        save_checkpoint(tmp_path / "m.pt", tiny(), when=object())
    with pytest.raises(ValueError, match="reserved"):
        save_checkpoint(tmp_path / "m.pt", tiny(), model_config=1)


def test_no_optimizer_state_to_resume(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", tiny())
    model = tiny()
    with pytest.raises(CheckpointError, match="no optimizer state"):
        load_checkpoint(path, model, make_optimizer(model))
