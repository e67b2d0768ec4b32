"""Run a snippet of Python in a fresh interpreter under chosen CPU-kernel pins (shared by the
tests that compare recorded bits: test_reproducible_numerics, test_train_step)."""

from __future__ import annotations

import os
import subprocess
import sys

from transformer_course.device import reproducible_cpu_environment

#: The pins make a run repeatable on one processor family, not across vendors: the same pinned
#: probe gives other last bits on an AMD AVX2 machine than on an Intel Xeon with AVX-512
#: (Sapphire Rapids class), measured 2026-11-25. The stored notebook outputs are recorded on
#: the machine CI runs on, which is this family since then.
MACHINES = {
    "amd-avx2": "an AMD processor with AVX2 (where the bits were first recorded)",
    "intel-avx512": "an Intel Xeon with AVX-512 (CI's machine; the stored notebooks' outputs)",
}
NOTEBOOKS_RECORDED_ON = "intel-avx512"

#: Every variable the pins may set; a probe starts without any of them from this process.
PINNED_NAMES = tuple(reproducible_cpu_environment("x86_64"))


def run_probe(code: str, **environment: str) -> str:
    """The stdout of ``python -c code`` with ``environment`` set and no other pin inherited."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED_NAMES}
    env.update(environment)
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout.strip()
