"""Command-line options made from dataclass fields (introduced in 11_training).

:func:`add_config_options` turns each field of a config dataclass into an ``argparse`` option:
its name (``steps`` -> ``--steps``), its parser (from the annotation), and its help (the field's
``metadata["help"]``). ``python -m transformer_course train`` builds its options this way from
``TrainConfig`` and ``GPTConfig``, so a new config field reaches the command line without a
second declaration.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields
from typing import Any

from ..i18n import _


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a whole number, got {text!r}").format(text=text)
        ) from None


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a number, got {text!r}").format(text=text)
        ) from None


#: How an option's text becomes the field's type (the annotation's first name: ``float | None``).
PARSERS = {"int": whole_number, "float": number, "str": str}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: …)" only where there is a default worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def add_config_options(
    group: argparse._ArgumentGroup,
    config_class: type,
    preset: dict[str, Any],
    preset_name: str,
    *,
    only: dict[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    choices: dict[str, tuple[str, ...]] | None = None,
    groups: dict[str, argparse._ArgumentGroup] | None = None,
) -> None:
    """One option per field of the dataclass ``config_class``: ``--field-name``, parsed by the
    field's type, help from the field's metadata (or ``only[name]``, which also limits the fields).

    An option left out is None, so the field keeps ``preset``'s value, named in the help; a bool
    field becomes a flag (``--no-name`` when it defaults to True). Metadata may rename the
    option (``option``), move it to another of ``groups`` (``group``) or hide it (``cli=False``).
    """
    for spec in fields(config_class):
        meta = spec.metadata
        if (only is not None and spec.name not in only) or meta.get("cli") is False:
            continue
        text = (only or {}).get(spec.name) or meta["help"]
        where = (groups or {}).get(meta.get("group", ""), group)
        kind = str(spec.type).split("|")[0].strip()
        if kind == "bool":
            flag = meta.get("option") or ("--no-" if spec.default else "--") + spec.name.replace(
                "_", "-"
            )
            where.add_argument(
                flag, dest=spec.name, action="store_const", const=not spec.default, help=text
            )
            continue
        default = (defaults or {}).get(spec.name)
        shown = preset.get(spec.name, None if spec.default is MISSING else spec.default)
        if default is None and shown is not None:
            text += f" ({preset_name}: {shown})"
        option = meta.get("option") or "--" + spec.name.replace("_", "-")
        where.add_argument(
            option,
            dest=spec.name,
            metavar=option[2:].upper().replace("-", "_"),
            type=PARSERS[kind],
            choices=(choices or {}).get(spec.name),
            default=default,
            help=text,
        )
