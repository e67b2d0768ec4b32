"""README.md's shell blocks run as written: every make target and program they name exists, and
the quick ones (the command line's help, a tiny train, generate) are run for real.

Runs in a scratch folder holding the Makefile, pyproject.toml and tools/, with the venv that runs
the tests standing in for `.venv`, so a checkpoint written by `make train` lands there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
VENV = Path(sys.prefix)
#: Programs the README may name that are not part of the course.
EXTERNAL = {"git", "conda", "jupyter"}
#: make targets that are run, not only looked up: the ones that take seconds.
RUN_TARGETS = {"train", "generate"}
#: Course commands that are run (after `.venv/bin/`): help and a short train / generate.
RUN_COURSE = re.compile(r"-m transformer_course (--help|\w+ --help|generate )")


def shell_commands(markdown: str) -> list[str]:
    """The commands of every ```bash block: comments dropped, continuation lines joined."""
    commands = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", markdown, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def split(command: str) -> tuple[dict[str, str], list[str]]:
    """``VAR=value ... program args`` -> ({VAR: value}, [program, args...])."""
    words = shlex.split(command)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    return env, words


def test_the_readme_has_the_commands_a_newcomer_needs():
    commands = shell_commands(README.read_text(encoding="utf-8"))
    assert "make lab" in commands and "make test" in commands
    assert "source .venv/bin/activate" in commands
    assert any(c.startswith("make train") for c in commands)
    assert any(c.startswith("make generate PROMPT=") for c in commands)
    assert any(".venv/bin/torchrun" in c for c in commands)


def test_shell_commands_parse_blocks_comments_and_variables():
    text = "x\n```bash\nmake lab   # opens\n# a comment\nA=1 .venv/bin/python \\\n -m x\n```\n"
    assert shell_commands(text) == ["make lab", "A=1 .venv/bin/python   -m x"]
    assert split("A=1 B=two prog --flag") == ({"A": "1", "B": "two"}, ["prog", "--flag"])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The Makefile and what its recipes read, in a folder of its own; .venv is this venv."""
    folder = tmp_path_factory.mktemp("readme")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, folder / name)
    shutil.copytree(ROOT / "tools", folder / "tools")
    os.symlink(VENV, folder / ".venv")
    return folder


def _make(scratch, words, env, *, dry):
    # -o: never rebuild the environment here (it is the one running the tests).
    cmd = ["make", "-s", "-o", f"{VENV}/bin/.installed", f"VENV={VENV}", *words[1:]]
    if dry:
        cmd.insert(1, "-n")
    return subprocess.run(
        cmd, cwd=scratch, capture_output=True, text=True, timeout=240,
        env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **env},
    )  # fmt: skip


def check_commands(scratch: Path, run: bool) -> list[tuple[str, str]]:
    """Look up every README command (make -n for targets); with ``run``, run the quick ones.

    Returns (command, output) of those run, in README order.
    """
    ran = []
    for command in shell_commands(README.read_text(encoding="utf-8")):
        env, words = split(command)
        program = words[0]
        if program == "make":
            target = next((w for w in words[1:] if "=" not in w and not w.startswith("-")), "")
            quick = run and target in RUN_TARGETS
            if quick and target == "train":
                words = [*words, "ARGS=--no-progress --fresh"]
            done = _make(scratch, words, env, dry=not quick)
            assert done.returncode == 0, f"README: `{command}`:\n{done.stdout}\n{done.stderr}"
            if quick:
                ran.append((command, done.stdout + done.stderr))
        elif program == "source":
            assert (scratch / words[1]).is_file(), f"README: `{command}`: no {words[1]}"
        elif program.startswith(".venv/bin/"):
            path = scratch / program
            assert path.exists(), f"README: `{command}`: {program} does not exist"
            if run and RUN_COURSE.search(command):
                done = subprocess.run(
                    [str(path), *words[1:]], cwd=scratch, capture_output=True, text=True,
                    timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1", **env},
                )  # fmt: skip
                assert done.returncode == 0, f"README: `{command}`:\n{done.stderr}"
                ran.append((command, done.stdout + done.stderr))
        else:
            assert program in EXTERNAL, f"README: `{command}`: unknown program {program!r}"
    return ran


def test_every_readme_command_exists(scratch):
    assert check_commands(scratch, run=False) == []


def test_the_quick_readme_commands_run(scratch, corpus_text, cl100k):
    # corpus_text / cl100k: skip (outside CI) where the offline data is missing.
    ran = check_commands(scratch, run=True)
    names = [c for c, _ in ran]
    assert any(c.startswith("make train") for c in names), names
    assert any(c.startswith("make generate") for c in names), names
    assert any(c.endswith("--help") for c in names), names
    trained = next(out for c, out in ran if c.startswith("make train"))
    assert "validation loss" in trained and (scratch / "checkpoints" / "gpt.pt").is_file()
    generated = next(out for c, out in ran if c.startswith("make generate"))
    assert "The key to a successful sale is" in generated
    # The README's tiny run is undertrained, and generate says what its text means.
    assert "note: this model trained" in generated and "'and and and'" in generated
    # The greedy continuation the README quotes for 40 steps is what the README's own
    # `generate … --temperature 0` line prints from `make train STEPS=40`'s checkpoint.
    quote = readme_quote(40)
    greedy = next(out for c, out in ran if c.endswith("--temperature 0"))
    assert printed_loss(trained, 40) == quote.loss, trained
    assert greedy.startswith(quote.text), (quote.text, greedy)


def test_a_make_target_the_makefile_lacks_is_caught(scratch):
    done = _make(scratch, ["make", "no-such-target"], {}, dry=True)
    assert done.returncode != 0 and "No rule to make target" in done.stderr


def test_generate_notes_an_undertrained_checkpoint_only():
    from transformer_course.cli import UNDERTRAINED_LOSS, _undertrained_note

    early = {"step": 40, "history": {"val_loss": [8.2, 6.46]}}
    note = _undertrained_note(early, 3771)
    assert note.startswith("note: this model trained 40 steps to validation loss 6.46")
    assert "ln 3,771 = 8.24" in note and "'and and and'" in note
    assert _undertrained_note({"history": {"val_loss": [UNDERTRAINED_LOSS - 0.01]}}, 3771) is None
    assert _undertrained_note({}, 3771) is None  # a checkpoint without history: no guess


# --- The numbers and samples the README quotes ---------------------------------------------
#
# README.md's "What a short run's text means" quotes the command line's validation loss and
# greedy text after 40 and 200 steps, and 11_training's final validation loss. The runs repeat
# exactly: the weights, the batches and dropout are seeded (--seed 0), the CLI trains a model
# this small on one torch thread, and the root conftest.py pins every x86-64 machine to the
# same AVX2 kernels in the environment the subprocess inherits. So the test compares exactly.


class Quote(NamedTuple):
    loss: str  # the validation loss as the README prints it, e.g. "6.50"
    text: str  # the quoted greedy continuation, without its closing "…"


def readme_quote(steps: int) -> Quote:
    """The validation loss and greedy text that the README quotes for a ``steps``-step run."""
    text = " ".join(README.read_text(encoding="utf-8").split())  # undo the line wrapping
    # The loss in brackets, then the first code span that ends in "…" (past `--temperature 0`).
    found = re.search(
        rf"[Aa]fter {steps} steps \((?:validation )?loss (\d\.\d\d)[^)]*\)"
        r"(?:[^`]|`[^`…]*`)*?`([^`]*?) ?…`",
        text,
    )
    assert found, f"README: no quoted sample after {steps} steps"
    return Quote(found[1], found[2].removeprefix("… ").removeprefix("…"))


def printed_loss(output: str, steps: int) -> str:
    """The validation loss that `train` printed after ``steps`` steps, rounded as the README does."""
    found = re.search(rf"step {steps}: validation loss (\d+\.\d+)", output)
    assert found, output
    return f"{float(found[1]):.2f}"


def test_readme_quotes_11_trainings_stored_validation_loss():
    readme = " ".join(README.read_text(encoding="utf-8").split())
    quoted = re.search(r"The 700 steps of `11_training` reach (\d\.\d\d)", readme)
    nb = json.loads((ROOT / "notebooks" / "11_training.ipynb").read_text(encoding="utf-8"))
    outputs = "".join(
        "".join(output.get("text", ""))
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )
    stored = re.findall(r"after\s+700 steps: validation loss (\d\.\d\d)", outputs)
    assert quoted and stored, (quoted, stored)
    assert quoted[1] == stored[-1], f"README says {quoted[1]}, 11_training stores {stored[-1]}"


def test_readme_quotes_what_200_steps_print(tmp_path, corpus_text, cl100k):
    """The 200-step sample, rerun (about 20 s on one thread): train, then greedy generate."""
    quote = readme_quote(200)
    checkpoint = tmp_path / "gpt.pt"
    course = [sys.executable, "-m", "transformer_course"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    trained = subprocess.run(
        [*course, "train", "--steps", "200", "--no-progress", "--checkpoint", str(checkpoint)],
        capture_output=True, text=True, timeout=300, env=env, check=True,
    ).stdout  # fmt: skip
    greedy = subprocess.run(
        [*course, "generate", "The key to a successful sale is", "--temperature", "0",
         "--checkpoint", str(checkpoint)],
        capture_output=True, text=True, timeout=120, env=env, check=True,
    ).stdout  # fmt: skip
    assert printed_loss(trained, 200) == quote.loss, trained
    assert quote.text in greedy, (quote.text, greedy)
