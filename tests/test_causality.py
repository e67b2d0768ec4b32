"""check_causal (06_mask): passes every causal configuration, catches subtly broken masks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from transformer_course.attention import MultiHeadAttention
from transformer_course.causality import CausalityError, CausalityReport, check_causal
from transformer_course.exercises.build import show_solution
from transformer_course.exercises.mask import (
    check_broken_layer,
    check_sees_the_future,
    leaky_gpt,
    suspect_model,
)
from transformer_course.exercises.solutions.mask import find_broken_layer
from transformer_course.model import GPT, Block, GPTConfig

BASE = dict(vocab_size=40, context_length=10, d_model=32, n_heads=4, n_layers=2)
CONFIGS = {
    "sinusoidal": {},
    "learned": {"positional": "learned"},
    "none": {"positional": "none"},
    "post-norm": {"norm_placement": "post"},
    "llama": {
        "positional": "rope",
        "norm": "rmsnorm",
        "feedforward": "swiglu",
        "n_kv_heads": 2,
        "bias": False,
    },
    "mqa": {"positional": "rope", "n_kv_heads": 1},
    "untied-gelu": {"tie_weights": False, "feedforward": "gelu"},
}


def config(name: str, **extra) -> GPTConfig:
    return GPTConfig(**{**BASE, **CONFIGS[name], **extra})


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_course_config_is_causal(name):
    torch.manual_seed(0)
    model = GPT(config(name, dropout=0.1))
    model.train()
    report = check_causal(model)
    assert report.ok and report.positions == BASE["context_length"] and report.mode == "token ids"
    assert report.max_change == 0.0 and report.max_gradient == 0.0
    assert model.training, "the model's mode is restored"


def test_blocks_and_bare_attention_are_checked_on_vectors():
    torch.manual_seed(0)
    attn = MultiHeadAttention(32, 4, n_kv_heads=2, rope=True)
    assert check_causal(attn, T=7, causal=True).mode == "vectors"
    assert check_causal(Block(config("llama")), T=6)  # the width comes from its attention layer
    with pytest.raises(CausalityError, match="mask is missing"):
        check_causal(attn, T=7)


@pytest.mark.parametrize("name", ["sinusoidal", "learned", "llama"])
@pytest.mark.parametrize("layer", [0, 1])
def test_off_by_one_diagonal_is_caught_and_named(name, layer):
    model = leaky_gpt(config(name), layer, diagonal=1)
    with pytest.raises(AssertionError) as caught:
        check_causal(model)
    report = caught.value.report
    T = BASE["context_length"]
    assert set(report.leaks) == {(t, t + 1) for t in range(T - 1)}
    assert report.changed == tuple(range(T - 1))
    assert "off-by-one" in str(report) and "output 3 depends on input 4" in str(report)


def test_mask_dropped_in_one_layer_is_caught():
    model = leaky_gpt(config("learned", n_layers=4), 2, diagonal=None)
    report = check_causal(model, raise_on_leak=False)
    T = BASE["context_length"]
    assert not report and len(report.leaks) == T * (T - 1) // 2
    assert "mask is missing" in report.diagnosis


def test_a_single_leaking_cell_is_located():
    model = leaky_gpt(config("sinusoidal", n_layers=1), 0, peek=(3, 7))
    report = check_causal(model, raise_on_leak=False)
    assert report.leaks == ((3, 7),)
    assert report.changed == (3, 4, 5, 6)  # changing tokens after t = 3 … 6 includes token 7
    assert "output 3 depends on input 7" in str(report) and "only some pairs" in str(report)
    # With a second block the leak spreads: positions 4 … 6 read position 3, which read token 7…
    spread = check_causal(leaky_gpt(config("sinusoidal"), 0, peek=(3, 7)), raise_on_leak=False)
    assert spread.leaks == ((3, 7), (4, 7), (5, 7), (6, 7))
    # …and in the second block, key 7 already carries inputs 4 … 7 from the first.
    deeper = check_causal(leaky_gpt(config("sinusoidal"), 1, peek=(3, 7)), raise_on_leak=False)
    assert deeper.leaks == ((3, 4), (3, 5), (3, 6), (3, 7))


def test_gradient_alone_catches_a_tiny_leak():
    # The sinusoidal model's leak moves logits by ~1e-4 only; the gradient is still non-zero.
    model = leaky_gpt(config("sinusoidal"), 0, diagonal=1)
    report = check_causal(model, raise_on_leak=False, atol=1.0)
    assert report.changed == () and len(report.leaks) == BASE["context_length"] - 1


def test_clear_errors():
    model = GPT(config("learned"))
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        check_causal(lambda x: x)
    with pytest.raises(ValueError, match="T must be an int of at least 2"):
        check_causal(model, T=1)
    with pytest.raises(ValueError, match="d_model"):
        check_causal(torch.nn.Linear(4, 4))
    with pytest.raises(ValueError, match=r"must start with \[B, T\]"):
        check_causal(_Pool(), T=4)
    assert isinstance(check_causal(model, raise_on_leak=False), CausalityReport)


class _Pool(torch.nn.Module):
    d_model = 8

    def forward(self, x):  # (B, T, C) -> (B, C): not a per-position output
        return x.mean(dim=1)


def test_suspect_exercise_answers():
    suspect = suspect_model()
    leaking = [
        i
        for i, b in enumerate(suspect.blocks)
        if not check_causal(b.attn, causal=True, raise_on_leak=False)
    ]
    assert len(leaking) == 1
    assert check_broken_layer(leaking[0], suspect).correct
    assert not check_broken_layer((leaking[0] + 1) % 4, suspect).correct
    assert not check_broken_layer(..., suspect).answered
    assert not check_broken_layer("two", suspect).correct
    assert "def find_broken_layer" in show_solution(check_broken_layer)
    assert check_broken_layer(find_broken_layer(suspect), suspect).correct


def test_the_notebook_solution_passes_and_wrong_answers_fail():
    """The solution 06_mask shows on request (show_solution) passes; wrong answers fail."""
    source = show_solution(check_sees_the_future)
    assert "def sees_the_future" in source
    namespace: dict = {"torch": torch}
    exec(source, namespace)
    assert check_sees_the_future(namespace["sees_the_future"]).correct
    assert check_sees_the_future(namespace["sees_the_future"], seed=3).correct
    # Whatever the learner types, the checker answers with a verdict, never a crash.
    for wrong in (
        lambda m, i, t: True,
        lambda m, i, t: False,
        lambda m, i, t: 1 / 0,
        lambda m, i, t: "yes",
        lambda m, i, t: torch.tensor([True, False]),
        lambda m, i, t: not torch.allclose(m(i)[0], m(i)[0]),
        3,
    ):
        feedback = check_sees_the_future(wrong)
        assert feedback.answered and not feedback.correct
    assert not check_sees_the_future(...).answered

    def stub(model, idx, t): ...

    assert not check_sees_the_future(stub).answered


def test_stored_notebook_keeps_the_stubs_unanswered():
    notebook = json.loads(Path(__file__).parents[1].joinpath("notebooks/06_mask.ipynb").read_text())
    outputs = [
        "".join(o.get("data", {}).get("text/plain", ""))
        for c in notebook["cells"]
        if c["cell_type"] == "code"
        and (
            "check_sees_the_future(" in "".join(c["source"])
            or "check_broken_layer(" in "".join(c["source"])
        )
        for o in c.get("outputs", [])
    ]
    assert len(outputs) == 2 and all(o.startswith("✏️  Not answered yet") for o in outputs), outputs
