"""Run Stanford CS336 assignment 1's tokenizer tests against the course's BPE (01b).

    python tests/cs336/run_cs336.py PATH/TO/assignment1-basics [pytest args]

Their tests (MIT licence) stay in their checkout: this copies its ``tests/`` to a temporary
folder, replaces their ``adapters.py`` with one that imports ``course_adapters`` and runs
``test_tokenizer.py`` and ``test_train_bpe.py``. Their reference, ``tiktoken``'s ``gpt2``, is
read offline from their own fixtures (``gpt2_vocab.json`` is OpenAI's ``encoder.json``;
``gpt2_merges.txt`` is ``vocab.bpe`` less its version line), put where tiktoken's cache looks;
tiktoken checks both files' SHA-256, so the reference is OpenAI's exact encoding. The memory tests
need the 5 MB TinyStories fixture, which some snapshots of the repository leave out.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = f"import sys\nsys.path.insert(0, {str(HERE)!r})\nfrom course_adapters import *  # noqa\n"


GPT2_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


def gpt2_cache(fixtures: Path, cache: Path) -> None:
    """tiktoken's cache files for ``gpt2`` (named by the SHA-1 of their URL), from the fixtures."""
    cache.mkdir()
    files = {
        "encoder.json": (fixtures / "gpt2_vocab.json").read_bytes(),
        "vocab.bpe": b"#version: 0.2\n" + (fixtures / "gpt2_merges.txt").read_bytes(),
    }
    for name, data in files.items():
        (cache / hashlib.sha1((GPT2_URL + name).encode()).hexdigest()).write_bytes(data)


def main(checkout: str, *pytest_args: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tests = Path(tmp) / "tests"
        shutil.copytree(Path(checkout) / "tests", tests)
        (tests / "adapters.py").write_text(SHIM)
        gpt2_cache(tests / "fixtures", Path(tmp) / "tiktoken_cache")
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(Path(tmp) / "tiktoken_cache")}
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "--rootdir",
            tmp,
            "tests/test_tokenizer.py",
            "tests/test_train_bpe.py",
        ]
        return subprocess.call([*command, *pytest_args], cwd=tmp, env=env)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
