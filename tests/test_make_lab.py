"""`make lab` serves JupyterLab, as root too (--allow-root), with JUPYTER_ARGS passed through."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)  # the venv running the tests
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make_n(*args, env=None):
    return subprocess.run(
        ["make", "-n", "-s", "-o", f"{VENV}/bin/.installed", f"VENV={VENV}", *args],
        cwd=ROOT, capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip


def test_allow_root_only_for_root_and_jupyter_args_pass_through(tmp_path):
    lab = _make_n("lab", "JUPYTER_ARGS=--no-browser --port=8899")
    assert "jupyter lab --notebook-dir=notebooks" in lab
    assert "--no-browser --port=8899" in lab
    assert ("--allow-root" in lab) == (os.getuid() == 0)
    fake = tmp_path / "id"  # the Makefile asks `id -u`: pretend to be the other kind of user
    fake.write_text(f"#!/bin/sh\necho {1000 if os.getuid() == 0 else 0}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    assert ("--allow-root" in _make_n("lab", env=env)) == (os.getuid() != 0)


def _stop(server: subprocess.Popen) -> None:
    """Stop make and the Jupyter server it started (their own process group), always."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(server.pid, sig)
            server.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def test_make_lab_serves_jupyterlab():
    with socket.socket() as sock:  # a free port on loopback
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}"
    server = subprocess.Popen(
        ["make", "-o", f"{VENV}/bin/.installed", f"VENV={VENV}", "lab", f"JUPYTER_ARGS={args}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group: make, jupyter and nothing else
    )  # fmt: skip
    try:
        page, deadline = None, time.monotonic() + 90
        while page is None and time.monotonic() < deadline:
            assert server.poll() is None, server.stdout.read()
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/lab?token={token}", timeout=5
                ) as response:
                    page = response.read().decode()
            except OSError:
                time.sleep(0.5)
        assert page is not None, "JupyterLab did not answer within 90 s"
        assert "JupyterLab" in page
    finally:
        _stop(server)
    out = server.stdout.read()
    assert "open the http://127.0.0.1" in out  # the Makefile says where to go
    assert "Running as root is not recommended" not in out
