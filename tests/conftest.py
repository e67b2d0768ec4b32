"""Shared fixtures. Tests never touch the network: the corpus and the tiktoken cache
come from the environment (``.ci/run`` points them at ``../shared/data``).

The torch thread count is set once, in the root ``conftest.py``'s ``pytest_configure``."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from transformer_course.model import GPT, GPTConfig  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


#: The tests' tiny GPT: one size for every test file; a test overrides only what it needs.
TINY_GPT = dict(vocab_size=50, context_length=8, d_model=16, n_heads=4, n_layers=2, dropout=0.0)


class TinyGPT:
    """``tiny_gpt(seed=0, **overrides)`` builds a seeded :class:`GPT` of :data:`TINY_GPT`'s
    size; ``tiny_gpt.config(**overrides)`` gives its :class:`GPTConfig` alone."""

    def config(self, **overrides) -> GPTConfig:
        return GPTConfig(**{**TINY_GPT, **overrides})

    def __call__(self, seed: int = 0, **overrides) -> GPT:
        torch.manual_seed(seed)
        return GPT(self.config(**overrides))


@pytest.fixture(scope="session")
def tiny_gpt() -> TinyGPT:
    """The factory of the tests' tiny GPT (see :class:`TinyGPT`)."""
    return TinyGPT()


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
