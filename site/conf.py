"""Sphinx configuration of the course website (built by ``make site``; see course_site.py).

The stack is Sphinx + MyST-NB + sphinx-book-theme, the one Jupyter Book 1 is made of, used
directly: it reads the stored notebooks without executing them, and everything it shows is
served from the site itself (theme, fonts, MathJax, search), so the site works offline.

One configuration for both editions: course_site.py runs Sphinx once per edition with
``-D language=en`` or ``-D language=zh_CN``, and the ``editions`` extension (site/editions.py)
gives that edition its title and pictures and puts the language switch on every page.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import course_site  # noqa: E402

REPOSITORY = course_site.repository()

project = "Transformer course"
author = "the Transformer course authors"
copyright = "the Transformer course authors (MIT licence)"
root_doc = "index"

# going_deeper (site/going_deeper.py): every "Going deeper" section is a closed toggle.
# editions (site/editions.py): the edition of `language`, and the switch to the other one.
extensions = ["myst_nb", "going_deeper", "editions"]
# English at the site's root; course_site.py builds the Chinese edition with -D language=zh_CN
# (the theme's own words, e.g. the search box, then are Chinese, and the search index is cut
# into Chinese words by jieba).
language = "en"
# The notebooks' outputs are stored and checked by nbval: show them, never re-run them.
nb_execution_mode = "off"
# No widget JavaScript from a CDN: widget views are replaced by their stills when staging.
nb_ipywidgets_js = {}
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 4
exclude_patterns = ["**/.ipynb_checkpoints", "_build", "**/jupyter_execute"]
suppress_warnings = [
    "myst.header",  # notebooks start sections at "##" under the title: fine for readers
    "misc.highlighting_failure",  # a shell or plain-text cell is not Python: shown as text
]

html_theme = "sphinx_book_theme"
html_title = "Transformer course"
templates_path = ["_templates"]  # language-switch.html
html_static_path = ["_static", "_build/static"]
html_css_files = ["course.css"]
# images/ at the edition's root (see course_site.stage); editions.py sets the edition's folder.
html_extra_path = [str(course_site.ENGLISH.extra)]
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": "main",
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    "show_navbar_depth": 1,
    "home_page_in_toc": True,
    # The language switch (site/_templates/language-switch.html) before the theme's buttons.
    "article_header_end": ["language-switch.html", "article-header-buttons.html"],
}
# MathJax 3 from the site's own _static/ (copied from the django-static-mathjax package).
mathjax_path = "mathjax/tex-chtml.js"
# Light pages: the notebooks' figures are drawn on white. (Left empty, the theme logs a console
# error, "Got invalid theme mode", on every page.)
html_context = {"default_mode": "light"}
