"""Shared fixtures. Tests never touch the network: the corpus and the tiktoken cache
come from the environment (``.ci/run`` points them at ``../shared/data``)."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def one_torch_thread():
    """Run a test on one torch thread. Tiny models run fastest that way: several threads
    spin-wait for each other when other processes (xdist workers, notebooks) share the cores.
    Test modules that train tiny models opt in with
    ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def corpus_text() -> str:
    from transformer_course import data

    try:
        return data.load_text()
    except (FileNotFoundError, ConnectionError) as exc:  # pragma: no cover - depends on machine
        if os.environ.get("CI"):
            raise  # CI has the shared corpus; its absence is a broken set-up, not a skip
        pytest.skip(f"corpus not available offline: {exc}")


@pytest.fixture(scope="session")
def cl100k():
    from transformer_course import tokenizer

    return tokenizer.get_encoding("cl100k_base")
