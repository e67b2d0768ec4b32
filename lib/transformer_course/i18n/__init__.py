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
error, so a Chinese notebook cannot print English feedback unnoticed: gettext hands a message it
does not find to the catalog's fallback (:meth:`gettext.NullTranslations.add_fallback`), and ours
raises :class:`MissingTranslation` there.

The labels the notebooks' code cells print (``say``, ``label``) are declared in
:mod:`transformer_course.i18n.printed`: ``from transformer_course.i18n.printed import say``.
"""

from __future__ import annotations

import contextlib
import functools
import gettext as _gettext
import os
from collections.abc import Iterable, Iterator
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


@contextlib.contextmanager
def in_language(lang: str | None) -> Iterator[str]:
    """Everything inside the ``with`` block in ``lang``; the language in force before comes back
    after it. For tools and tests, not the notebooks (``tools/images.py`` draws images/ in
    English whatever the environment says; ``tools/i18n.py`` draws the Chinese roadmaps)."""
    global _chosen
    before = _chosen
    try:
        yield set_language(lang)
    finally:
        _chosen = before


def language() -> str:
    """The language feedback is shown in now: "en" or "zh". An unknown value of the environment
    variable is a :class:`ValueError` that names it (the command line and ``setup_notebook()``
    call this first, so the error comes before anything else happens)."""
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENVIRONMENT, "").strip()
    if not value:
        return "en"
    try:
        return _check(value)
    except ValueError:
        accepted = ", ".join(f"{code!r} ({name})" for code, (_folder, name) in LANGUAGES.items())
        # Not through _(): the language is unknown, so English it is (and _() would ask
        # language() again, which raises again).
        raise ValueError(
            f"the environment variable {ENVIRONMENT} is {value!r}, not a language of the course;"
            f" accepted values: {accepted}. Unset it (unset {ENVIRONMENT}) for English, or set"
            " it to one of them"
        ) from None


class _Missing(_gettext.NullTranslations):
    """The last fallback of a catalog (:meth:`gettext.NullTranslations.add_fallback`): a message
    the catalog does not translate ends up here. It gives the English back, or, in strict mode,
    raises :class:`MissingTranslation`."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def _missing(self, message: str, where: str = "") -> None:
        if not _strict() or _untranslatable(message):
            return
        folder = LANGUAGES[self.lang][0]
        raise MissingTranslation(
            f"no {self.lang} translation of {message!r}{where}: add it to"
            f" locale/{folder}/LC_MESSAGES/{DOMAIN}.po (python tools/i18n.py lib-update,"
            " translate, python tools/i18n.py compile)"
        )

    def gettext(self, message: str) -> str:
        self._missing(message)
        return message

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        self._missing(singular)
        return singular if n == 1 else plural

    def pgettext(self, context: str, message: str) -> str:
        self._missing(message, f" (context {context!r})")
        return message


@functools.cache
def _catalog(lang: str) -> _gettext.NullTranslations:
    """The compiled catalog of ``lang``, with :class:`_Missing` behind it."""
    try:
        catalog = _gettext.translation(DOMAIN, localedir=LOCALE, languages=[LANGUAGES[lang][0]])
    except FileNotFoundError:
        catalog = _gettext.NullTranslations()
    catalog.add_fallback(_Missing(lang))
    return catalog


def _strict() -> bool:
    return os.environ.get(STRICT_ENVIRONMENT, "") not in ("", "0")


def gettext(message: str) -> str:
    """``message`` in the current language (the English itself when there is no translation)."""
    lang = language()
    if LANGUAGES[lang][0] is None or not message:
        return message
    return _catalog(lang).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message for ``n``, in the current language."""
    lang = language()
    if LANGUAGES[lang][0] is None:
        return singular if n == 1 else plural
    return _catalog(lang).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, where the same English means something else
    elsewhere (``pgettext("GPT stage", "head")`` is the output layer, not an attention head)."""
    lang = language()
    if LANGUAGES[lang][0] is None or not message:
        return message
    return _catalog(lang).pgettext(context, message)


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


#: Every message a notebook cell shows by name: printed (``i18n.printed.say``/``.label``) or
#: drawn on a picture (``viz.label``). One registry, filled by :func:`declare` where the two
#: lists are written (``i18n.printed.MESSAGES``, ``viz.labels.PLOT_LABELS``) and read by :func:`declared`.
DECLARED: set[str] = set()


def declare(messages: Iterable[str]) -> frozenset[str]:
    """Add ``messages`` (each marked with ``N_``) to :data:`DECLARED`; return them as a frozenset
    (introduced in 00_setup)."""
    group = frozenset(messages)
    DECLARED.update(group)
    return group


def declared(message: str, /, **values: object) -> str:
    """``message`` (in :data:`DECLARED`) in the learner's language, its named fields filled: the one
    lookup behind ``printed.label`` and ``printed.say`` (00_setup) and ``viz.label`` (01_tokenization).
    """
    if message not in DECLARED:
        raise ValueError(
            f"{message!r} is not declared: add it to transformer_course.i18n.printed.MESSAGES (printed)"
            " or transformer_course.viz.labels.PLOT_LABELS (drawn on a picture);"
            " python tools/i18n.py lib-update then puts it in the catalog to translate"
        )
    translated = gettext(message)
    return translated.format(**values) if values else translated
