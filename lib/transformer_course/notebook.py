"""The one setup call of every notebook's first code cell (introduced in 00_setup)."""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass

import torch

from .device import pick_device, seed_everything


@dataclass(frozen=True)
class CourseSession:
    """What ``setup_notebook`` decided: the device, the seed, and whether this is Colab."""

    device: torch.device
    seed: int
    in_colab: bool

    def generator(self, seed: int | None = None) -> torch.Generator:
        """A fresh CPU generator seeded with ``seed`` (the session's seed by default)."""
        return torch.Generator().manual_seed(self.seed if seed is None else seed)


def in_colab() -> bool:
    """True inside Google Colab (its ``google.colab`` module is loaded there)."""
    return "google.colab" in sys.modules


def colab_install_command(repository: str, ref: str = "main") -> str:
    """The pip command that installs the course library in Colab.

    It installs only what Colab lacks: the project's ranges already accept
    Colab's torch, numpy and ipywidgets, and pip's default upgrade strategy
    keeps installed packages that satisfy them, so no runtime restart is needed.
    """
    return f'pip install --quiet "transformer-course @ git+{repository}.git@{ref}"'


def setup_notebook(
    seed: int = 0, device: str | None = None, quiet_warnings: bool = True
) -> CourseSession:
    """Seed everything, set print options, pick the device; print nothing.

    Nothing is printed on purpose: a notebook's stored outputs must be the same
    on every machine, and the device differs between them.
    """
    seed_everything(seed)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import pandas as pd
    except ImportError:  # pandas is a dependency; this only guards odd environments
        pass
    else:
        pd.set_option("display.precision", 4)
        pd.set_option("display.max_columns", 20)
        pd.set_option("display.width", 120)
    if quiet_warnings:
        # Library deprecation chatter lands in stderr, which strict nbval compares.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", message=".*Glyph.*missing from font.*")
    return CourseSession(device=pick_device(device), seed=seed, in_colab=in_colab())


def _row(check: str, ok: bool, detail: str, fix: str) -> dict[str, str]:
    return {
        "check": check,
        "status": "ok" if ok else "MISSING",
        "detail": detail,
        "if not ok": "" if ok else fix,
    }


def _package_rows() -> list[dict[str, str]]:
    import platform

    version = sys.version_info
    rows = [
        _row("Python 3.10–3.13", (3, 10) <= version[:2] <= (3, 13), platform.python_version(),
             "install Python 3.10–3.13 and run `make lab` again"),
        _row("PyTorch", True, torch.__version__, ""),
        _row("accelerator", True, {"cuda": "CUDA GPU", "mps": "Apple MPS",
             "cpu": "none (CPU only: every notebook still runs)"}[pick_device().type], ""),
    ]  # fmt: skip
    try:
        import ipywidgets

        rows.append(_row("ipywidgets 7.7+ (widgets)", True, ipywidgets.__version__, ""))
    except ImportError:
        rows.append(
            _row(
                "ipywidgets 7.7+ (widgets)", False, "not installed", "pip install 'ipywidgets>=7.7'"
            )
        )
    return rows


def _data_rows() -> list[dict[str, str]]:
    from .data import CORPUS_ENV_VAR, CORPUS_FILENAME, CorpusMismatchError, corpus_path
    from .tokenizer import TIKTOKEN_ENV_VAR, get_encoding

    corpus = "corpus (sales textbook)"
    try:
        path = corpus_path(download=False)
        rows = [_row(corpus, True, f"{path.name}, {path.stat().st_size:,} bytes", "")]
    except CorpusMismatchError as exc:  # there, but not the course's file: say so, not "missing"
        rows = [_row(corpus, False, "damaged or a different file (SHA-256 differs)", str(exc))]
    except (FileNotFoundError, ValueError):
        rows = [_row(corpus, False, "not downloaded yet",
                     f"run `data.load_text()` online once, or put {CORPUS_FILENAME} in the course's "
                     f"data/ folder, or set ${CORPUS_ENV_VAR}")]  # fmt: skip
    tokenizer = "tokenizer (tiktoken cl100k_base)"
    try:
        rows.append(_row(tokenizer, True, f"{get_encoding('cl100k_base').n_vocab:,} tokens", ""))
    except RuntimeError:
        rows.append(_row(tokenizer, False, "no cached copy",
                         f"run once online, or set ${TIKTOKEN_ENV_VAR} to a folder holding the tiktoken cache"))  # fmt: skip
    return rows


def environment_checks():
    """What 00_setup checks, as a pandas table: check, status, detail, what to do if not ok.

    The corpus is looked up without downloading, so the table is quick and safe offline.
    """
    import pandas as pd

    return pd.DataFrame(_package_rows() + _data_rows())


def clear_outputs(notebook) -> None:
    """Empty every code cell's outputs and execution count of an nbformat ``notebook``, in place:
    what a fresh kernel starts from (``tools/nbtool.py`` runs, a teacher's ``grade``)."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
