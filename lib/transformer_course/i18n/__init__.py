"""Learner feedback in the learner's language: English, or Chinese (introduced in 00_setup).

Every sentence the library shows a learner (checker verdicts and hints, "not answered yet", the
progress table, widget labels, training diagnostics) is English in the code and goes through
Python's :mod:`gettext`, which looks it up in the compiled catalog
``i18n/locale/zh_CN/LC_MESSAGES/transformer_course.mo``. ``python tools/i18n.py compile`` makes
it from the ``.po`` beside it; ``i18n/locale`` is a link to the repository's top-level
``locale/``, where the catalogs of the notebooks live too. Two markers, the names gettext tools
know:

- ``_("…")`` where a sentence is shown: translated right away, in the current language;
- ``N_("…")`` where a sentence is only declared (a hint handed to a decorator when the module is
  imported): it stays English there, and whoever shows it calls ``_()`` on it then.

A sentence with values in it is one message with named fields, ``_("{n} of {total}").format(…)``,
never English pieces glued together, so a translation may put the fields in its own order.

The language is ``"en"`` unless :func:`set_language` (``setup_notebook(lang="zh")`` in the Chinese
notebooks) or the environment variable ``TRANSFORMER_COURSE_LANG`` says otherwise. With
``TRANSFORMER_COURSE_I18N_STRICT=1`` (the tests set it) a sentence the Chinese catalog lacks is an
error, so a Chinese notebook cannot print English feedback unnoticed.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import os
from pathlib import Path

#: The languages of the course: short code -> (catalog folder, name shown to a learner).
LANGUAGES = {"en": (None, "English"), "zh": ("zh_CN", "中文")}
ENVIRONMENT = "TRANSFORMER_COURSE_LANG"
STRICT_ENVIRONMENT = "TRANSFORMER_COURSE_I18N_STRICT"
DOMAIN = "transformer_course"
LOCALE = Path(__file__).resolve().parent / "locale"

_chosen: str | None = None


class MissingTranslation(LookupError):
    """Strict mode: a sentence shown in Chinese that the catalog does not translate."""


def _check(lang: str) -> str:
    short = str(lang).strip().lower().replace("_", "-")
    short = {"zh-cn": "zh", "zh-hans": "zh", "cn": "zh", "chinese": "zh", "english": "en"}.get(
        short, short
    )
    if short not in LANGUAGES:
        raise ValueError(
            f"lang must be one of {sorted(LANGUAGES)} ('en' English, 'zh' 中文), got {lang!r}"
        )
    return short


def set_language(lang: str | None) -> str:
    """Show feedback in ``lang`` ("en" or "zh") from now on; ``None`` goes back to the
    environment variable. Returns the language now in force."""
    global _chosen
    _chosen = None if lang is None else _check(lang)
    return language()


def language() -> str:
    """The language feedback is shown in now: "en" or "zh"."""
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENVIRONMENT, "").strip()
    return _check(value) if value else "en"


@functools.cache
def _catalog(folder: str) -> _gettext.NullTranslations:
    try:
        return _gettext.translation(DOMAIN, localedir=LOCALE, languages=[folder])
    except FileNotFoundError:
        return _gettext.NullTranslations()


def _strict() -> bool:
    return os.environ.get(STRICT_ENVIRONMENT, "") not in ("", "0")


def gettext(message: str) -> str:
    """``message`` in the current language (the English itself when there is no translation)."""
    lang = language()
    folder = LANGUAGES[lang][0]
    if folder is None or not message:
        return message
    catalog = _catalog(folder)
    translated = catalog.gettext(message)
    known = message in getattr(catalog, "_catalog", {})
    if _strict() and not known and not _untranslatable(message):
        raise MissingTranslation(
            f"no {lang} translation of {message!r}: add it to"
            f" locale/{folder}/LC_MESSAGES/{DOMAIN}.po (python tools/i18n.py lib-update,"
            " translate, python tools/i18n.py compile)"
        )
    return translated


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message for ``n``, in the current language."""
    lang = language()
    folder = LANGUAGES[lang][0]
    if folder is None:
        return singular if n == 1 else plural
    catalog = _catalog(folder)
    translated = catalog.ngettext(singular, plural, n)
    if _strict() and (singular, 0) not in getattr(catalog, "_catalog", {}):
        raise MissingTranslation(f"no {lang} translation of {singular!r}")
    return translated


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, where the same English means something else
    elsewhere (``pgettext("GPT stage", "head")`` is the output layer, not an attention head)."""
    lang = language()
    folder = LANGUAGES[lang][0]
    if folder is None or not message:
        return message
    catalog = _catalog(folder)
    known = f"{context}\x04{message}" in getattr(catalog, "_catalog", {})
    if _strict() and not known and not _untranslatable(message):
        raise MissingTranslation(f"no {lang} translation of {message!r} (context {context!r})")
    return catalog.pgettext(context, message)


def _untranslatable(message: str) -> bool:
    """A message with no word to translate (only symbols, numbers and fields)."""
    import re

    return re.search(r"[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", message)) is None


_ = gettext


def N_(message: str) -> str:
    """Mark ``message`` for translation where it is declared; it is translated when shown."""
    return message


def NC_(context: str, message: str) -> str:
    """:func:`N_` with a context: shown later with ``pgettext(context, message)``."""
    return message
