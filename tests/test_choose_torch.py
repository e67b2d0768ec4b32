"""tools/choose_torch.py: machine -> pip arguments, the fallback when the CPU index is
unreachable, and the refusal to switch builds inside an existing .venv."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "choose_torch.py"


ct = load_script("tools/choose_torch.py")
LINUX = ct.Machine("Linux")
LINUX_GPU = ct.Machine("Linux", nvidia=True)
WSL = ct.Machine("Linux", wsl=True)
WSL_GPU = ct.Machine("Linux", wsl=True, nvidia=True)
MAC = ct.Machine("Darwin")
WINDOWS = ct.Machine("Windows")
CPU_ARGS = ["install", "--quiet", "torch", "--index-url", ct.CPU_INDEX]
PYPI_ARGS = ["install", "--quiet", "torch"]


@pytest.mark.parametrize(
    ("machine", "torch", "expected"),
    [
        (LINUX, "", CPU_ARGS),  # no GPU: the CPU index, not PyPI's 2.7 GB CUDA build
        (LINUX, "auto", CPU_ARGS),
        (LINUX, "cuda", PYPI_ARGS),  # asked for: PyPI's Linux wheel is the CUDA build
        (LINUX_GPU, "", PYPI_ARGS),
        (LINUX_GPU, "cpu", CPU_ARGS),
        (WSL, "", CPU_ARGS),
        (WSL_GPU, "", PYPI_ARGS),  # WSL's GPU passthrough runs the Linux CUDA wheel
        (MAC, "", PYPI_ARGS),  # macOS wheels are CPU + MPS already
        (MAC, "cpu", PYPI_ARGS),
        (WINDOWS, "", PYPI_ARGS),  # Windows wheels on PyPI are CPU builds
        (WINDOWS, "CPU", PYPI_ARGS),
    ],
)
def test_choice_to_pip_arguments(machine, torch, expected):
    assert ct.choose(machine, torch).pip_args() == expected


def test_spec_alone_goes_through_pips_own_index_and_wins_over_detection():
    # CI: TORCH_SPEC=torch==2.13.0 must keep taking the CPU wheel lying on its disk
    # (pip's find-links), whatever the machine looks like.
    for machine in (LINUX, LINUX_GPU, MAC):
        plan = ct.choose(machine, "", "torch==2.13.0")
        assert plan.pip_args() == ["install", "--quiet", "torch==2.13.0"]
        assert plan.backend == "pip"


def test_spec_with_torch_cpu_comes_from_the_cpu_index():
    plan = ct.choose(LINUX_GPU, "cpu", "torch==2.5.1")
    assert plan.pip_args() == ["install", "--quiet", "torch==2.5.1", "--index-url", ct.CPU_INDEX]


@pytest.mark.parametrize(
    ("machine", "torch", "match"),
    [
        (LINUX, "gpu", "TORCH='gpu': use one of auto, cpu, cuda"),
        (MAC, "cuda", "no CUDA build for macOS"),
        (WINDOWS, "cuda", "WSL"),
    ],
)
def test_impossible_choices_are_refused_with_what_to_do(machine, torch, match):
    with pytest.raises(ValueError, match=match):
        ct.choose(machine, torch)


def test_an_unreachable_cpu_index_is_never_replaced_by_the_cuda_build_silently():
    plan = ct.choose(LINUX, "cpu")
    assert ct.with_fallback(plan, reachable=True) == plan
    with pytest.raises(ct.IndexUnreachable) as refused:
        ct.with_fallback(plan, reachable=False)
    message = str(refused.value)
    assert ct.CPU_INDEX in message and "2.7 GB" in message  # what is happening
    assert "TORCH_INDEX=" in message and "TORCH=cuda" in message  # how to choose
    no_index = ct.choose(LINUX, "cuda")
    assert ct.with_fallback(no_index, reachable=False) == no_index


def test_unreachable_index_is_detected_in_seconds():
    # A name that cannot resolve, and a port nothing listens on: both answer fast, and a
    # host that drops packets costs at most the probe's timeout.
    for url in ("https://download.invalid/whl/cpu", "http://127.0.0.1:9/whl/cpu"):
        start = time.perf_counter()
        assert not ct.index_reachable(url, timeout=2.0)
        assert time.perf_counter() - start < 5.0
    assert ct.PROBE_TIMEOUT_S <= 10


def _fake_pip(monkeypatch, machine=LINUX):
    calls = []

    def fake_run(cmd, check):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(ct.subprocess, "run", fake_run)
    monkeypatch.setattr(ct, "detect_machine", lambda: machine)
    return calls


def test_install_stops_quickly_and_says_how_to_choose_when_the_index_is_down(
    tmp_path, monkeypatch, capsys
):
    calls = _fake_pip(monkeypatch)
    start = time.perf_counter()
    code = ct.main(["install", "--venv", str(tmp_path), "--torch", "cpu",
                    "--index", "http://127.0.0.1:9/whl/cpu"])  # fmt: skip
    assert code == 2 and time.perf_counter() - start < 10.0
    assert calls == [], "nothing is installed, least of all the CUDA build"
    assert not (tmp_path / ".torch").exists()
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9/whl/cpu did not answer" in err
    assert "make lab TORCH_INDEX=" in err and "make lab TORCH=cuda" in err


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_mirror_of_the_cpu_index_is_used_and_recorded(tmp_path, monkeypatch, capsys, how):
    calls = _fake_pip(monkeypatch)
    mirror = "https://mirror.example/pytorch/whl/cpu"
    asked = []
    monkeypatch.setattr(ct, "index_reachable", lambda url: asked.append(url) or True)
    args = ["install", "--venv", str(tmp_path), "--torch", "cpu"]
    if how == "option":
        args += ["--index", mirror]
    else:
        monkeypatch.setenv(ct.INDEX_ENV_VAR, mirror)
    assert ct.main(args) == 0
    assert asked == [mirror]
    assert calls == [[sys.executable, "-m", "pip", "install", "--quiet", "torch",
                      "--index-url", mirror]]  # fmt: skip
    assert f"from {mirror}" in capsys.readouterr().out
    assert json.loads((tmp_path / ".torch").read_text())["index"] == mirror


def test_without_a_mirror_the_cpu_index_is_pytorchs_own(monkeypatch, capsys):
    monkeypatch.delenv(ct.INDEX_ENV_VAR, raising=False)
    monkeypatch.setattr(ct, "detect_machine", lambda: LINUX)
    assert ct.main(["plan", "--torch", "cpu", "--index", ""]) == 0
    assert json.loads(capsys.readouterr().out)["index"] == ct.CPU_INDEX


def test_the_makefile_passes_torch_index():
    makefile = (ROOT / "Makefile").read_text()
    assert "TORCH_INDEX ?=" in makefile
    assert makefile.count('--index "$(TORCH_INDEX)"') >= 1


def test_install_keeps_the_recorded_choice_when_none_is_given(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(
        ct.subprocess,
        "run",
        lambda cmd, check: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0),
    )
    monkeypatch.setattr(ct, "detect_machine", lambda: LINUX)
    recorded = ct.Plan("cuda", "torch", None, "the CUDA build")
    (tmp_path / ".torch").write_text(json.dumps(ct.asdict(recorded)))
    assert ct.main(["install", "--venv", str(tmp_path)]) == 0
    assert calls == [[sys.executable, "-m", "pip", *PYPI_ARGS]]


def _check(venv, *args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "check", "--venv", str(venv), *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_check_refuses_a_different_explicit_choice_and_says_how_to_switch(tmp_path):
    venv = tmp_path / ".venv"
    assert _check(venv, "--torch", "cuda").returncode == 0  # no venv yet: anything goes
    (venv / "bin").mkdir(parents=True)
    (venv / ".torch").write_text(json.dumps(ct.asdict(ct.Plan("pip", "torch==2.13.0", None, ""))))
    assert _check(venv).returncode == 0  # nothing asked: use the venv as it is
    assert _check(venv, "--spec", "torch==2.13.0").returncode == 0  # CI's repeated calls
    refused = _check(venv, "--torch", "cuda")
    assert refused.returncode == 2
    assert 'make clean-env && make lab TORCH="cuda"' in refused.stderr
    assert "torch==2.13.0" in refused.stderr


def test_check_with_only_the_same_spec_accepts_a_venv_made_with_torch_cpu_and_that_spec(tmp_path):
    (tmp_path / "bin").mkdir()
    made = ct.Plan("cpu", "torch==2.13.0", None, "", fallback=True)
    (tmp_path / ".torch").write_text(json.dumps(ct.asdict(made)))
    assert _check(tmp_path, "--spec", "torch==2.13.0").returncode == 0
    assert _check(tmp_path, "--spec", "torch==2.12.0").returncode == 2
    assert _check(tmp_path, "--torch", "cuda", "--spec", "torch==2.13.0").returncode == 2


def test_check_refuses_an_explicit_choice_for_an_unrecorded_venv(tmp_path):
    (tmp_path / "bin").mkdir()
    refused = _check(tmp_path, "--torch", "cpu")
    assert refused.returncode == 2 and "before the PyTorch choice was recorded" in refused.stderr


@pytest.mark.parametrize(
    ("installed", "args", "code"),
    [
        ("2.13.0+cpu", ["--spec", "torch==2.13.0"], 0),  # CI re-using an older .venv
        ("2.13.0+cpu", ["--torch", "cpu"], 0),
        ("2.13.0+cpu", ["--torch", "cuda"], 2),
        ("2.13.0+cpu", ["--spec", "torch==2.15.0"], 2),
        ("2.15.0", ["--torch", "cpu"], 2),  # PyPI's Linux wheel: the review's 6.2 GB .venv
        ("2.15.0+cu132", ["--torch", "cuda"], 0),
    ],
)
def test_an_unrecorded_venv_is_judged_by_its_installed_torch(tmp_path, installed, args, code):
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib" / "python3.11" / "site-packages" / f"torch-{installed}.dist-info").mkdir(
        parents=True
    )
    assert ct.venv_torch(tmp_path) == installed
    assert _check(tmp_path, *args).returncode == code


def test_a_bare_torch_choice_accepts_any_version_of_that_build(tmp_path):
    (tmp_path / "bin").mkdir()
    made = ct.Plan("cpu", "torch==2.13.0", None, "")
    (tmp_path / ".torch").write_text(json.dumps(ct.asdict(made)))
    assert _check(tmp_path, "--torch", "cpu").returncode == 0


def test_detect_machine_sees_wsl_and_an_nvidia_driver(monkeypatch):
    monkeypatch.setattr(ct.platform, "system", lambda: "Linux")
    monkeypatch.setattr(ct.platform, "release", lambda: "5.15.167.4-microsoft-standard-WSL2")
    monkeypatch.setattr(ct.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    assert ct.detect_machine() == WSL_GPU
    monkeypatch.setattr(ct.platform, "release", lambda: "6.1.0-18-amd64")
    monkeypatch.delenv("WSL_DISTRO_NAME", raising=False)
    monkeypatch.setattr(ct.shutil, "which", lambda name: None)
    monkeypatch.setattr(ct.Path, "exists", lambda self: False)
    assert ct.detect_machine() == LINUX
