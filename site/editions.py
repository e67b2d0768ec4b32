"""Sphinx extension of the course site: the editions (English, 中文) and the switch between them.

course_site.py runs Sphinx once per edition with the same conf.py and ``-D language=…``; the
language names the edition (``course_site.EDITIONS``). This extension

- gives the build its edition's settings (``config-inited``): its title, its folder of raw
  pictures and the search box's placeholder; the Chinese edition also needs ``jieba``, without
  which Sphinx's Chinese search indexes no Chinese word at all, so its absence fails the build
  instead of the search;
- puts the language switch on every page (``html-page-context``): a relative link to the same
  page in the other edition (both editions stage the same layout, so it has the same name),
  or to the other edition's landing page where it has no such page; the template
  ``site/_templates/language-switch.html`` shows it in the article header, and the page's head
  gets the matching ``<link rel="alternate" hreflang=…>``;
- points the theme's Colab launch button of a translated notebook at that notebook
  (``notebooks/zh/…``), not at the English one the theme derives from the page's name;
- works around Sphinx 9.0's broken Chinese search script (see :data:`BROKEN_STEMMER`).
"""

from __future__ import annotations

import html
import logging
import re
import sys
from pathlib import Path

from sphinx.errors import ConfigError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course_site  # noqa: E402

COLAB = "https://colab.research.google.com/github/"


def edition_of(config) -> course_site.Edition:
    edition = course_site.EDITIONS.get(config.language)
    if edition is None:
        raise ConfigError(
            f"language must name an edition of the course site, one of"
            f" {sorted(course_site.EDITIONS)}; got {config.language!r}"
        )
    return edition


def configure(app, config) -> None:
    """The edition's own settings (conf.py holds what the editions share)."""
    edition = edition_of(config)
    config.project = edition.title
    config.html_title = edition.title
    config.html_extra_path = [str(edition.extra)]
    options = dict(config.html_theme_options)
    options["search_bar_text"] = edition.words["search"]
    config.html_theme_options = options
    if edition.language.startswith("zh"):
        try:
            import jieba
        except ImportError as error:
            raise ConfigError(
                "the Chinese edition's search needs jieba to cut words:"
                ' pip install -e ".[docs]" (make site does)'
            ) from error
        jieba.setLogLevel(logging.WARNING)  # not its "Building prefix dict" lines
        # Sphinx loads jieba's own dictionary a second time as a user dictionary unless told
        # otherwise: the words are the same, only slower.
        config.html_search_options = {"dict": "", **(config.html_search_options or {})}


def remember_editions(app) -> None:
    """The other editions' page names, once per build (the switch needs them on every page)."""
    edition = edition_of(app.config)
    app.course_other_editions = [
        (other, course_site.docnames(other))
        for other in course_site.EDITIONS.values()
        if other is not edition
    ]
    app.course_repository_paths = {
        staged: page for page, staged in course_site.edition_pages(edition).items()
    }


def add_switch(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The page's link to its counterpart in the other edition (relative: works offline)."""
    edition = edition_of(app.config)
    (other, others), *_ = app.course_other_editions
    href = course_site.counterpart_url(pagename, edition, other, others)
    context["course_language_switch"] = {
        "href": href,
        "label": other.name,
        "hreflang": other.hreflang,
        "title": other.words["switch"],
    }
    alternate = f'<link rel="alternate" hreflang="{other.hreflang}" href="{html.escape(href)}">'
    context["metatags"] = context.get("metatags", "") + "\n" + alternate


def retarget_colab(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The theme's Colab button opens the page's own notebook (``notebooks/zh/…``)."""
    repository_path = app.course_repository_paths.get(f"{pagename}.ipynb")
    if repository_path is None or repository_path == f"{pagename}.ipynb":
        return
    buttons = list(context.get("header_buttons", []))
    while buttons:
        button = buttons.pop()
        buttons.extend(button.get("buttons", []))
        url = button.get("url", "")
        if url.startswith(COLAB) and url.endswith(f"/{pagename}.ipynb"):
            button["url"] = url.removesuffix(f"{pagename}.ipynb") + repository_path


#: Sphinx 9.0's Chinese search names a stemmer that no script defines (it uses the English one):
#: every page then logs "ChineseStemmer is not defined" and the search page finds nothing
#: (sphinx-doc/sphinx#14229, fixed upstream by pull request #14416 in a later release).
BROKEN_STEMMER = "window.Stemmer = ChineseStemmer;"


def fix_chinese_stemmer(app, exception) -> None:
    """Point the search at the stemmer Sphinx ships for Chinese, the English one."""
    path = Path(app.outdir) / "_static" / "language_data.js"
    if exception is not None or not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    defined = re.search(r"\bChineseStemmer\s*=", text)
    if BROKEN_STEMMER in text and not defined and "EnglishStemmer" in text:
        path.write_text(text.replace(BROKEN_STEMMER, "window.Stemmer = EnglishStemmer;"), "utf-8")


def setup(app):
    app.connect("config-inited", configure)
    app.connect("builder-inited", remember_editions)
    # Before the theme drops the header's templates that render empty (priority 500).
    app.connect("html-page-context", add_switch, priority=400)
    # After the theme's header buttons (priority 501), whose Colab link it corrects.
    app.connect("html-page-context", retarget_colab, priority=600)
    app.connect("build-finished", fix_chinese_stemmer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
