"""Run a snippet of Python in a fresh interpreter under chosen CPU-kernel pins (shared by the
tests that compare recorded bits: test_reproducible_numerics, test_train_step)."""

from __future__ import annotations

import os
import subprocess
import sys

from transformer_course.machine import reproducible_cpu_environment

#: The pins make a run repeatable on one processor family, not across vendors: the same pinned
#: probe gives other last bits on an AMD AVX2 machine than on an Intel Xeon with AVX-512
#: (Sapphire Rapids class), measured 2026-11-25. CI runs on the machine of the session that
#: submits, so the stored notebook outputs are recorded on that machine's family: an AMD EPYC
#: since 2026-11-28 (the Intel recording failed 26 cells of 04, 09, 11, 12 and 14 there, in
#: both editions). When CI's processor family changes, re-run those notebooks there
#: (tools/nbtool.py run) and change this name; this test says so in one message.
MACHINES = {
    "amd-avx2": "an AMD processor with AVX2 (CI's machine; the stored notebooks' outputs)",
    "intel-avx512": "an Intel Xeon with AVX-512",
}
NOTEBOOKS_RECORDED_ON = "amd-avx2"

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
