"""Import a repository script that is not in a package (tools/*.py, site/*.py) for its tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def load_script(relative_path: str) -> ModuleType:
    """The module of ``REPO/relative_path``, registered under its file's stem (dataclasses look
    their module up by name in ``sys.modules``)."""
    path = REPO / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
