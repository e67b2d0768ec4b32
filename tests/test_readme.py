"""README.md's shell blocks run as written: every make target and program they name exists, and
the quick ones (the command line's help, a tiny train, generate) are run for real.

Runs in a scratch folder holding the Makefile, pyproject.toml and tools/, with the venv that runs
the tests standing in for `.venv`, so a checkpoint written by `make train` lands there.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

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
    assert "note: this model trained" in generated and "'the the the'" in generated


def test_a_make_target_the_makefile_lacks_is_caught(scratch):
    done = _make(scratch, ["make", "no-such-target"], {}, dry=True)
    assert done.returncode != 0 and "No rule to make target" in done.stderr


def test_generate_notes_an_undertrained_checkpoint_only():
    from transformer_course.cli import UNDERTRAINED_LOSS, _undertrained_note

    early = {"step": 40, "history": {"val_loss": [8.2, 6.46]}}
    note = _undertrained_note(early, 3771)
    assert note.startswith("note: this model trained 40 steps to validation loss 6.46")
    assert "ln 3,771 = 8.24" in note and "'the the the'" in note
    assert _undertrained_note({"history": {"val_loss": [UNDERTRAINED_LOSS - 0.01]}}, 3771) is None
    assert _undertrained_note({}, 3771) is None  # a checkpoint without history: no guess
