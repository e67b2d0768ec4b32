"""The pinned CPU kernels behind strict nbval: the same bits on every run of one processor family.

The stored outputs of the notebooks that train (11–14) were computed under
``machine.reproducible_cpu_environment()``. Without it an AVX-512 machine trains along a
slightly different path than an AVX2 one and nbval fails on numbers like "5.00" vs "4.99"
(seen here: the outputs stored on one CI machine failed 17 cells on another). These tests
check the premise directly, in fresh interpreters, so a machine where the pins do not take
fails here with one clear message.
"""

from __future__ import annotations

import os

import pytest
import torch
from pinned_probe import MACHINES, NOTEBOOKS_RECORDED_ON, run_probe

from transformer_course.machine import reproducible_cpu_environment

#: Three AdamW steps of a small GPT; prints the float64 sum of every parameter in hex (exact).
PROBE = """
import torch
from transformer_course.model import GPT, GPTConfig
from transformer_course.train import make_optimizer
torch.manual_seed(0)
# GPT-2's plain init ("none"): the recorded bits predate embedding_scale, and kernels are the point.
model = GPT(GPTConfig(vocab_size=256, context_length=16, d_model=64, n_heads=4, n_layers=2, dropout=0.0, embedding_scale="none"))
optimizer = make_optimizer(model, lr=1e-2)
x = torch.randint(0, 256, (8, 17), generator=torch.Generator().manual_seed(1))  # (B, T + 1)
for _ in range(3):
    _, loss = model(x[:, :-1], x[:, 1:])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(sum(p.double().sum() for p in model.parameters()).item().hex())
"""
#: The probe's answer under the pinned environment, recorded with the torch CI installs
#: (.ci/run: torch==2.13.0, CPU build) on each processor family of ``pinned_probe.MACHINES``.
RECORDED_TORCH = "2.13.0"
RECORDED = {"amd-avx2": "0x1.5eb2b86c6a959p+8", "intel-avx512": "0x1.5eb2bae743564p+8"}
RECORDED_CHECKSUM = RECORDED[NOTEBOOKS_RECORDED_ON]

X86 = "ATEN_CPU_CAPABILITY" in reproducible_cpu_environment()  # pins only on x86-64


def _probe(**environment: str) -> str:
    return run_probe(PROBE, **environment)


def test_pins_are_x86_only():
    x86 = reproducible_cpu_environment("x86_64")
    assert x86 == {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_CBWR": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    }
    assert reproducible_cpu_environment("AMD64") == x86
    assert reproducible_cpu_environment("arm64") == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def test_the_test_run_applies_the_pins():
    """conftest.py sets them before nbval starts a kernel (kernels inherit this environment)."""
    for name, value in reproducible_cpu_environment().items():
        if name.endswith("_NUM_THREADS"):
            assert os.environ.get(name), name  # the Makefile's THREADS may choose another count
        else:
            assert os.environ.get(name) == value, name


@pytest.mark.skipif(not X86, reason="the pins and the recorded bits are for x86-64 processors")
def test_pinned_kernels_give_the_recorded_bits_and_other_kernels_do_not():
    if not torch.__version__.startswith(RECORDED_TORCH):
        pytest.skip(f"bits recorded with torch {RECORDED_TORCH}; this is {torch.__version__}")
    pinned = _probe(**reproducible_cpu_environment())
    known = [MACHINES[name] for name, bits in RECORDED.items() if bits == pinned]
    assert pinned == RECORDED_CHECKSUM, (
        f"the pinned CPU kernels gave {pinned}, not the {RECORDED_CHECKSUM} of "
        f"{MACHINES[NOTEBOOKS_RECORDED_ON]}, where the stored notebook outputs were computed "
        f"({'this machine computes like ' + known[0] if known else 'an unknown processor family'}):"
        " strict nbval will fail on numbers in the last printed digit here; re-run the notebooks "
        "(tools/nbtool.py run) on CI's machine (see machine.reproducible_cpu_environment)"
    )
    # The probe is sensitive to the kernels: without the pins (scalar ATen kernels, MKL's
    # compatibility path) the same steps give other bits, so the equality above means something.
    other = _probe(OMP_NUM_THREADS="1", ATEN_CPU_CAPABILITY="default", MKL_CBWR="COMPATIBLE")
    assert other != pinned
