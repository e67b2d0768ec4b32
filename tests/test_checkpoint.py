"""Checkpoints: atomic writes, weights_only loads, clear errors for corrupt or mismatched files."""

from __future__ import annotations

import os
import pickle
import re
import zipfile

import pytest
import torch

from transformer_course import checkpoint as ckpt
from transformer_course.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_from_checkpoint,
    save_checkpoint,
)
from transformer_course.checkpoint import files as checkpoint_io
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import make_optimizer


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


@pytest.mark.parametrize(
    "damage, message",
    [
        ("half", r"is damaged \(its end is missing.*truncated or corrupt.*another copy"),
        ("last_bytes", r"is damaged.*truncated or corrupt"),
        ("middle", r"is damaged.*truncated or corrupt"),
        ("empty", r"is empty \(0 bytes\).*another copy"),
    ],
)
def test_damaged_file_has_a_clear_error(tmp_path, damage, message):
    path = tmp_path / "model.pt"
    save_checkpoint(path, tiny(), step=1)
    data = path.read_bytes()
    middle = len(data) // 2
    damaged = {
        "half": data[:middle],
        "last_bytes": data[:-10],
        # bytes flipped inside the stored tensors/pickle, the zip index left whole
        "middle": data[:middle]
        + bytes(b ^ 0xFF for b in data[middle : middle + 64])
        + data[middle + 64 :],
        "empty": b"",
    }[damage]
    path.write_bytes(damaged)
    model = tiny(seed=3)
    before = [p.clone() for p in model.parameters()]
    try:
        load_checkpoint(path, model)
    except CheckpointError as error:
        assert re.search(message, str(error)), str(error)
        assert "Delete it" not in str(error)
    else:  # a flip that lands in padding can leave a loadable file; then it must be the same model
        assert damage == "middle"
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters())) or damage == "middle"


class Evil:
    """Unpickling this would create a marker file: the safe loader must refuse it."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("container", ["course_format", "raw_pickle"])
@pytest.mark.parametrize("loader", ["load_checkpoint", "model_from_checkpoint"])
def test_hostile_pickle_is_refused_with_the_whole_reason(tmp_path, container, loader):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    if container == "course_format":
        torch.save({"format": ckpt.FORMAT, "model": {}, "evil": Evil(str(marker))}, path)
    else:
        with open(path, "wb") as handle:
            pickle.dump(Evil(str(marker)), handle, protocol=2)
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, tiny()) if loader == "load_checkpoint" else model_from_checkpoint(
            path
        )
    message = str(caught.value)
    assert not marker.exists(), "no code may run while loading"
    assert "can run code" in message and "Do not load it" in message
    # torch's whole message is kept (its last sentence is the warning), with no terminal codes
    assert "Do it only if you got the file from a trusted source" in message
    assert "\x1b" not in message
    assert "truncated or corrupt" not in message


@pytest.mark.parametrize(
    "content, looks_like",
    [
        (b"these are my notes about the course\n", "looks like text"),
        (b"hello world", "looks like text"),
        (b'{"model": [1, 2, 3]}', "looks like JSON"),
        (bytes(range(1, 256)) * 16, "starts with the bytes"),
    ],
)
def test_not_a_checkpoint_at_all(tmp_path, content, looks_like):
    path = tmp_path / "notes.pt"
    path.write_bytes(content)
    for call in (lambda: load_checkpoint(path, tiny()), lambda: model_from_checkpoint(path)):
        with pytest.raises(
            CheckpointError, match=rf"is not a checkpoint: it {looks_like}.*Check the path"
        ):
            call()


def test_unrelated_zip_archive(tmp_path):
    path = tmp_path / "photos.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.txt", "hello")
    with pytest.raises(
        CheckpointError, match=r"zip archive but not one written by torch.save \(it holds a.txt"
    ):
        load_checkpoint(path)


def test_folder_and_unreadable_file(tmp_path, monkeypatch):
    with pytest.raises(IsADirectoryError, match="is a folder, not a checkpoint file"):
        load_checkpoint(tmp_path)
    path = save_checkpoint(tmp_path / "locked.pt", tiny())
    if os.geteuid() == 0:  # root reads any file: simulate the refusal the way the OS gives it

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied", str(path))

        monkeypatch.setattr(checkpoint_io, "open", refuse, raising=False)
    else:
        path.chmod(0)
    with pytest.raises(
        PermissionError, match=r"cannot read .*locked.pt: permission denied.*may be fine"
    ) as caught:
        load_checkpoint(path)
    assert "corrupt" not in str(caught.value) and "Delete" not in str(caught.value)


def test_course_marker_with_broken_contents(tmp_path):
    no_model = tmp_path / "no_model.pt"
    torch.save({"format": ckpt.FORMAT, "model_config": None}, no_model)
    with pytest.raises(CheckpointError, match="no model weights"):
        load_checkpoint(no_model, tiny())
    list_config = tmp_path / "list_config.pt"
    torch.save(
        {"format": ckpt.FORMAT, "model": tiny().state_dict(), "model_config": [1, 2]}, list_config
    )
    for call in (
        lambda: load_checkpoint(list_config, tiny()),
        lambda: model_from_checkpoint(list_config),
    ):
        with pytest.raises(CheckpointError, match="model config that is a list"):
            call()


def test_huge_claimed_config_is_refused_before_allocating(tmp_path, monkeypatch):
    model = tiny()
    path = save_checkpoint(tmp_path / "m.pt", model)
    saved = torch.load(path, weights_only=True)
    saved["model_config"]["vocab_size"] = 10**9  # would be 64 GB of embeddings
    torch.save(saved, path)
    built = []
    monkeypatch.setattr(
        "transformer_course.model.GPT.__init__",
        _recording(built, __import__("transformer_course.model", fromlist=["GPT"]).GPT.__init__),
    )
    with pytest.raises(
        CheckpointError,
        match=r"token_embedding.weight: config gives \[1000000000, 16\], file has \[40, 16\]",
    ):
        model_from_checkpoint(path)
    assert built == ["meta"], "only the shape-only skeleton may be built"


def _recording(log, init):
    def wrapped(self, config):
        log.append(torch.empty(0).device.type)  # the default device the model is built on
        init(self, config)

    return wrapped


def test_encoder_decoder_and_gpt_checkpoints_are_told_apart(tmp_path):
    from transformer_course.encoder_decoder import EncoderDecoder, EncoderDecoderConfig

    seq2seq = EncoderDecoder(EncoderDecoderConfig(vocab_size=20, d_model=16, n_heads=2))
    seq_path = save_checkpoint(tmp_path / "seq2seq.pt", seq2seq)
    with pytest.raises(CheckpointError, match="holds a EncoderDecoder model, not a GPT"):
        load_checkpoint(seq_path, tiny())
    with pytest.raises(CheckpointError, match="holds a EncoderDecoder model, not a GPT"):
        model_from_checkpoint(seq_path)
    gpt_path = save_checkpoint(tmp_path / "gpt.pt", tiny())
    with pytest.raises(CheckpointError, match="holds a GPT model, not a EncoderDecoder"):
        load_checkpoint(gpt_path, seq2seq)


def test_optimizer_state_that_does_not_fit(tmp_path):
    model = tiny()
    plain = torch.optim.AdamW(model.parameters())  # one group, not make_optimizer's two
    one_step(model, plain)
    path = save_checkpoint(tmp_path / "m.pt", model, plain)
    fresh = tiny(seed=5)
    before = [p.clone() for p in fresh.parameters()]
    with pytest.raises(
        CheckpointError, match=r"optimizer state that does not fit.*1 parameter group.*--fresh"
    ):
        load_checkpoint(path, fresh, make_optimizer(fresh))
    assert all(torch.equal(a, b) for a, b in zip(before, fresh.parameters())), "weights untouched"


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


def test_diverged_checkpoint_is_refused_for_generation(tmp_path):
    model = tiny()
    path = save_checkpoint(tmp_path / "m.pt", model)
    saved = torch.load(path, weights_only=True)
    saved["model"]["lm_head.weight"][0, 0] = float("nan")  # what an older version could write
    torch.save(saved, path)
    with pytest.raises(CheckpointError, match=r"NaN or inf \(.*lm_head.weight.*diverged"):
        model_from_checkpoint(path)


def test_saving_over_a_file_keeps_its_mode(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", tiny())
    path.chmod(0o644)
    save_checkpoint(path, tiny(seed=1))
    assert path.stat().st_mode & 0o777 == 0o644
