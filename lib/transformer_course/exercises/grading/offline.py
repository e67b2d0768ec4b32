"""Keep a Python process, and every Python process started from it, off the network.

Used where the course runs code it must keep from reaching the outside: a teacher's grading run
with ``--trusted-submissions`` (no sandbox there: :mod:`.sandbox`, whose network namespace
replaces this guard), and the tests that prove an installed wheel needs nothing from the network. Loopback stays open (Jupyter kernels talk to their client
over 127.0.0.1, and the tests serve a fake Hugging Face Hub there); any other ``connect``
raises ``OfflineError`` (a ``ConnectionRefusedError``) and, when
``$TRANSFORMER_COURSE_BLOCKED_LOG`` names a file, is appended to it, so a caller also sees
attempts that a library caught and recovered from.

The guard lives in ``guard.py`` beside this module, standard library only: importing it guards this
process, and :func:`write_sitecustomize` copies it as a ``sitecustomize.py``, which Python
imports at start when its folder is on ``PYTHONPATH`` (kernels and other child processes). It
guards against accidents (a fetch the course did not mean to make, a student's ``urlopen``); it
is not a security sandbox: code that wants to can undo it, or open sockets from C.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The environment variable naming a file where every refused connection is appended (the
#: guard reads it; kept equal to ``guard.BLOCKED_LOG_ENV_VAR`` by a test).
BLOCKED_LOG_ENV_VAR = "TRANSFORMER_COURSE_BLOCKED_LOG"
#: The guard's source. Not imported here: importing it would take this process offline.
GUARD_FILE = Path(__file__).with_name("guard.py")


def write_sitecustomize(folder: str | os.PathLike) -> Path:
    """Copy the guard as ``folder/sitecustomize.py`` (``folder`` created if needed) and return
    its path; put ``folder`` first on ``PYTHONPATH`` (or in a venv's site-packages) to keep a
    child process and its own children off the network."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sitecustomize.py"
    shutil.copyfile(GUARD_FILE, path)
    return path
