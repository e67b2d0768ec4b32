"""The learner's machine (device, seeding), the notebook setup call and the exercise feedback."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from transformer_course import machine, notebook
from transformer_course.exercises import check_value
from transformer_course.exercises.setup import check_dot_product_std


def test_cpu_when_nothing_else(monkeypatch):
    monkeypatch.delenv(machine.DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(machine, "_mps_available", lambda: False)
    assert machine.pick_device().type == "cpu"


def test_cuda_first_then_mps(monkeypatch):
    monkeypatch.delenv(machine.DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert machine.pick_device().type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(machine, "_mps_available", lambda: True)
    assert machine.pick_device().type == "mps"


def test_environment_variable_overrides(monkeypatch):
    monkeypatch.setenv(machine.DEVICE_ENV_VAR, "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert machine.pick_device().type == "cpu"


def test_unknown_or_missing_device_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="not one of"):
        machine.pick_device("tpu")
    with pytest.raises(ValueError, match="CUDA is not available"):
        machine.pick_device("cuda")


def test_seed_everything_makes_draws_repeat():
    machine.seed_everything(3)
    first = torch.randn(5)
    generator = machine.seed_everything(3)
    torch.testing.assert_close(torch.randn(5), first)
    assert torch.equal(
        torch.randn(2, generator=generator),
        torch.randn(2, generator=torch.Generator().manual_seed(3)),
    )
    with pytest.raises(TypeError):
        machine.seed_everything(1.5)


def test_autocast_is_bf16_only_on_cuda():
    assert machine.autocast_dtype(torch.device("cpu")) is None


def test_setup_notebook_prints_nothing(capsys, monkeypatch):
    monkeypatch.delenv(machine.DEVICE_ENV_VAR, raising=False)
    session = notebook.setup_notebook(seed=5, device="cpu")
    assert capsys.readouterr().out == ""
    assert session.device.type == "cpu" and session.seed == 5 and not session.in_colab
    assert torch.equal(
        torch.randn(3, generator=session.generator()),
        torch.randn(3, generator=torch.Generator().manual_seed(5)),
    )


def test_colab_is_detected_from_its_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert notebook.in_colab()
    command = notebook.colab_install_command("https://github.com/o/r")
    assert command.startswith("pip install") and "git+https://github.com/o/r.git@main" in command
    assert "--upgrade" not in command and "-U " not in command


def test_environment_checks_table():
    table = notebook.environment_checks()
    assert list(table.columns) == ["check", "status", "detail", "if not ok"]
    assert set(table["status"]) <= {"ok", "MISSING"}
    assert (table.loc[table["check"] == "PyTorch", "status"] == "ok").all()


def test_environment_checks_name_a_damaged_corpus(tmp_path, monkeypatch):
    wrong = tmp_path / "sales_textbook.txt"
    wrong.write_text("not the textbook", encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_COURSE_CORPUS", str(wrong))
    table = notebook.environment_checks()
    row = table[table["check"] == "corpus (sales textbook)"].iloc[0]
    assert row["status"] == "MISSING" and "SHA-256" in row["detail"]
    assert str(wrong) in row["if not ok"]


def test_feedback_says_right_wrong_or_unanswered(capsys):
    feedback = check_value(..., 3, "yes", "no")
    assert not feedback and "Not answered yet" in repr(feedback)
    feedback = check_value(3, 3, "yes", "no")
    assert feedback and repr(feedback) == "✅ Correct: yes"
    feedback = check_value(4, 3, "yes", "because")
    assert not feedback and repr(feedback) == "❌ Not quite: because"
    assert capsys.readouterr().out == "", "checks return their verdict, they do not print it"
    assert check_value(0.5001, 0.5, "ok", "no", tolerance=1e-3)
    assert (
        check_dot_product_std(16) and check_dot_product_std(15.5) and not check_dot_product_std(8)
    )
    assert check_dot_product_std(8, d=64) and not check_dot_product_std(256)
    assert check_dot_product_std(..., hint=True).is_hint
