"""The one setup call of every notebook's first code cell (introduced in 00_setup)."""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass

import torch

from .i18n import _, language
from .i18n import set_language as set_language  # the learner's switch, beside setup_notebook
from .machine import pick_device, seed_everything


@dataclass(frozen=True)
class CourseSession:
    """What ``setup_notebook`` decided: the device, the seed, whether this is Colab, and the
    language the library's feedback is shown in ("en" or "zh")."""

    device: torch.device
    seed: int
    in_colab: bool
    lang: str = "en"

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
    seed: int = 0, device: str | None = None, quiet_warnings: bool = True, lang: str | None = None
) -> CourseSession:
    """Seed everything, set print options, pick the device; print nothing.

    Nothing is printed on purpose: a notebook's stored outputs must be the same
    on every machine, and the device differs between them.

    ``lang`` is the language of everything the library shows the learner (checkers' verdicts and
    hints, widget labels, the progress table, training messages): ``"en"`` or ``"zh"`` (the
    Chinese notebooks pass ``lang="zh"``). ``None`` leaves it to the environment variable
    ``TRANSFORMER_COURSE_LANG`` (English when unset); :func:`set_language` changes it later.
    """
    # First: a wrong lang, or a wrong TRANSFORMER_COURSE_LANG when lang is None, fails before
    # anything else changes.
    if lang is not None:
        set_language(lang)
    else:
        language()
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
    _use_picture_font(language())
    if quiet_warnings:
        # Library deprecation chatter lands in stderr, which strict nbval compares.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", message=".*Glyph.*missing from font.*")
    return CourseSession(
        device=pick_device(device), seed=seed, in_colab=in_colab(), lang=language()
    )


def _use_picture_font(lang: str) -> None:
    """Plots drawn in the notebook write Chinese with the package's CJK font behind DejaVu Sans
    (``viz.fonts.font_family``): matplotlib has no Chinese glyph of its own. English leaves
    matplotlib's settings as they are."""
    if lang == "en":
        return
    import matplotlib as mpl

    from .viz.fonts import font_family

    mpl.rcParams["font.family"] = font_family(lang)


def _row(check: str, ok: bool, detail: str, fix: str) -> dict[str, str]:
    return {
        _("check"): check,
        _("status"): _("ok") if ok else _("MISSING"),
        _("detail"): detail,
        _("if not ok"): "" if ok else fix,
    }


def _package_rows() -> list[dict[str, str]]:
    import platform

    version = sys.version_info
    accelerators = {
        "cuda": "CUDA GPU",
        "mps": "Apple MPS",
        "cpu": _("none (CPU only: every notebook still runs)"),
    }
    rows = [
        _row("Python 3.10–3.13", (3, 10) <= version[:2] <= (3, 13), platform.python_version(),
             _("install Python 3.10–3.13 and run `make lab` again")),
        _row("PyTorch", True, torch.__version__, ""),
        _row(_("accelerator"), True, accelerators[pick_device().type], ""),
    ]  # fmt: skip
    widgets = _("ipywidgets 7.7+ (widgets)")
    try:
        import ipywidgets

        rows.append(_row(widgets, True, ipywidgets.__version__, ""))
    except ImportError:
        rows.append(_row(widgets, False, _("not installed"), "pip install 'ipywidgets>=7.7'"))
    return rows


def _data_rows() -> list[dict[str, str]]:
    from .data import CORPUS_ENV_VAR, CORPUS_FILENAME, CorpusMismatchError, corpus_path
    from .tokenizer import TIKTOKEN_ENV_VAR, get_encoding

    corpus = _("corpus (sales textbook)")
    try:
        path = corpus_path(download=False)
        detail = _("{name}, {size:,} bytes").format(name=path.name, size=path.stat().st_size)
        rows = [_row(corpus, True, detail, "")]
    except CorpusMismatchError as exc:  # there, but not the course's file: say so, not "missing"
        rows = [_row(corpus, False, _("damaged or a different file (SHA-256 differs)"), str(exc))]
    except (FileNotFoundError, ValueError):
        rows = [_row(corpus, False, _("not downloaded yet"),
                     _("run `data.load_text()` online once, or put {filename} in the course's "
                       "data/ folder, or set ${variable}").format(
                         filename=CORPUS_FILENAME, variable=CORPUS_ENV_VAR))]  # fmt: skip
    tokenizer = _("tokenizer (tiktoken cl100k_base)")
    try:
        count = _("{n:,} tokens").format(n=get_encoding("cl100k_base").n_vocab)
        rows.append(_row(tokenizer, True, count, ""))
    except RuntimeError:
        rows.append(_row(tokenizer, False, _("no cached copy"),
                         _("run once online, or set ${variable} to a folder holding the tiktoken "
                           "cache").format(variable=TIKTOKEN_ENV_VAR)))  # fmt: skip
    return rows


def environment_checks():
    """What 00_setup checks, as a pandas table: check, status, detail, what to do if not ok.

    The corpus is looked up without downloading, so the table is quick and safe offline.
    """
    import pandas as pd

    return pd.DataFrame(_package_rows() + _data_rows())
