"""The course website (site/, ``make site``): built from the stored notebooks, checked in Chromium.

``make test-site`` builds the site (the English edition at the root, the Chinese one under
``zh/``), serves ``site/_build/html`` on 127.0.0.1 and opens EVERY page of both editions in
headless Chromium (the launch flags and fixture of tests/test_browser.py): every image has
loaded, every equation was typeset by the site's own MathJax (no raw ``$$`` or ``\\(`` left),
every internal link answers 200 and its #anchor exists, the browser console stays clean, no
request leaves the local server (each one is recorded; an external one fails the test), and the
language switch leads to the same page in the other edition (or to its landing page where it has
no such page), and back. Search must find "softmax" in English and 注意力 in Chinese.
Screenshots go to ``screenshots/site/`` (git-ignored): every page's top, first equation, figure,
table and widget note (``zh_notebooks_07_softmax/`` for the Chinese 07), and the searches.

The tests without the ``site`` marker (the README's link, the widget stills, the landing page)
need no browser and run in ``make test``.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import json
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from script_loader import load_script
from test_browser import CHROMIUM, CHROMIUM_FLAGS, _free_port, _must_run, browser  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
SCREENSHOTS = REPO / "screenshots" / "site"
VIEWPORT = {"width": 1280, "height": 900}


course_site = load_script("site/course_site.py")
HTML = course_site.HTML
ENGLISH, CHINESE = course_site.ENGLISH, course_site.CHINESE
EDITIONS = list(course_site.EDITIONS.values())


def _pages() -> list[str]:
    if not HTML.is_dir():
        return []
    skip = {"_static", "_sources", "_images", "jupyter_execute", ".doctrees"}
    return sorted(
        p.relative_to(HTML).as_posix()
        for p in HTML.rglob("*.html")
        if not skip.intersection(p.relative_to(HTML).parts)
    )


PAGES = _pages()


def _edition_of(page: str):
    """The edition a built page belongs to (the one in the deepest matching folder)."""
    return max((e for e in EDITIONS if page.startswith(e.folder)), key=lambda e: len(e.folder))


def _other(edition):
    (other,) = [e for e in EDITIONS if e is not edition]
    return other


# -- without a browser (make test) ----------------------------------------------------------
def test_readme_links_to_the_site_derived_from_repository():
    url = course_site.site_url(course_site.repository())
    assert url.startswith("https://") and url.endswith(".github.io/" + url.split("/")[-2] + "/")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    head = "\n".join(readme.splitlines()[:12])
    assert url in head, f"README.md must link to the course site {url} near its top"


def test_site_url_is_the_github_pages_address():
    site_url = course_site.site_url
    assert (
        site_url("https://github.com/Some-Org/my-course") == "https://some-org.github.io/my-course/"
    )
    with pytest.raises(ValueError, match="repository_url"):
        site_url("https://gitlab.com/a/b")


@pytest.mark.parametrize(
    ("edition", "says"),
    [(ENGLISH, "comes alive"), (CHINESE, "动起来")],
    ids=lambda e: getattr(e, "language", None),
)
def test_widget_views_become_still_pictures_with_a_note(edition, says):
    path = REPO / edition.notebooks / "03_positional_encoding.ipynb"
    if not path.exists():
        pytest.skip(f"no {path.relative_to(REPO)} yet")
    nb = json.loads(path.read_text(encoding="utf-8"))
    models = course_site._models(nb)
    views = [
        o["data"][course_site.WIDGET_VIEW]
        for cell in nb["cells"]
        for o in cell.get("outputs", [])
        if course_site.WIDGET_VIEW in o.get("data", {})
    ]
    assert views and models, "03 stores a widget and its state"
    outputs = course_site.still_outputs(views[0], models, "https://colab.example/03", edition)
    note = outputs[0]["data"]["text/html"]
    assert says in note and "JupyterLab" in note and "https://colab.example/03" in note
    assert "d_model = 64" in note, "the note names the knobs and where they stood"
    assert any("image/png" in o.get("data", {}) for o in outputs[1:]), "the still picture"


def test_progress_bar_widget_shows_how_it_ended():
    models = {
        "a": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_b", "IPY_MODEL_c"]}},
        "b": {"model_name": "HTMLModel", "state": {"value": "training: 100%"}},
        "c": {"model_name": "FloatProgressModel", "state": {"value": 7.0, "max": 7.0}},
    }
    (output,) = course_site.still_outputs({"model_id": "a"}, models, "https://colab.example")
    assert '<progress value="7.0" max="7.0">' in output["data"]["text/html"]
    assert "training: 100%" in output["data"]["text/html"]


def test_links_to_repository_files_go_to_github():
    staged = {"notebooks/01_tokenization.ipynb", "README.md"}
    text = (
        "[next](01_tokenization.ipynb#goals) [lib](../lib/transformer_course/model.py) "
        f"[web](https://example.org) ![badge]({course_site.COLAB_BADGE_URL})"
    )
    out = course_site.rewrite_links(
        text, "notebooks/00_setup.ipynb", staged, "https://github.com/o/n"
    )
    assert "[next](01_tokenization.ipynb#goals)" in out
    assert "[lib](https://github.com/o/n/blob/main/lib/transformer_course/model.py)" in out
    assert "[web](https://example.org)" in out
    assert f"![badge](../{course_site.LOCAL_BADGE})" in out


def test_chinese_links_are_rewritten_for_the_staged_layout():
    """notebooks/zh/NN.ipynb is staged as notebooks/NN.ipynb: its links follow it."""
    staged = {
        "notebooks/zh/07_softmax.ipynb": "notebooks/07_softmax.ipynb",
        "notebooks/zh/05_scale.ipynb": "notebooks/05_scale.ipynb",
        "README.zh-CN.md": "index.md",
        "GLOSSARY.md": "GLOSSARY.md",
        "images/gpt_overview.png": "images/gpt_overview.png",
    }
    elsewhere = {"SOURCES.md": "../SOURCES.html", "README.md": "../index.html"}
    text = (
        "[前一个](05_scale.ipynb#goals) ![图](../../images/gpt_overview.png) "
        '<img src="../../images/gpt_overview.png"> [术语](../../GLOSSARY.md) '
        "[来源](../../SOURCES.md#seeds) [库](../../lib/transformer_course/model.py)\n"
        "```python\nprint('[not a link](../../SOURCES.md)')\n```\n"
    )
    out = course_site.rewrite_links(
        text, "notebooks/zh/07_softmax.ipynb", staged, "https://github.com/o/n", elsewhere
    )
    assert "[前一个](05_scale.ipynb#goals)" in out
    assert "![图](../images/gpt_overview.png)" in out
    assert '<img src="../images/gpt_overview.png">' in out
    assert "[术语](../GLOSSARY.md)" in out
    assert '<a href="../../SOURCES.html#seeds">来源</a>' in out, "the English page, as raw HTML"
    assert "[库](https://github.com/o/n/blob/main/lib/transformer_course/model.py)" in out
    assert "[not a link](../../SOURCES.md)" in out, "code is left as written"
    landing = course_site.rewrite_links(
        "[English](README.md) [07](notebooks/zh/07_softmax.ipynb)",
        "README.zh-CN.md",
        staged,
        "https://github.com/o/n",
        elsewhere,
    )
    assert landing == '<a href="../index.html">English</a> [07](notebooks/07_softmax.ipynb)'


def test_both_editions_stage_the_same_layout():
    """A page and its translation have one name: the switch and every relative link rely on it."""
    english, chinese = course_site.edition_pages(ENGLISH), course_site.edition_pages(CHINESE)
    assert english["README.md"] == chinese["README.zh-CN.md"] == "index.md"
    for page, staged in chinese.items():
        if page.startswith("notebooks/zh/"):
            assert staged == page.replace("notebooks/zh/", "notebooks/")
            assert staged in english.values(), f"{page} translates no English notebook"
    assert course_site.other_editions_pages(CHINESE)["SOURCES.md"] == "../SOURCES.html"
    assert course_site.other_editions_pages(ENGLISH)["README.zh-CN.md"] == "zh/index.html"


def test_language_switch_urls_are_relative():
    others = {"index", "notebooks/07_softmax", "search"}
    url = course_site.counterpart_url
    assert (
        url("notebooks/07_softmax", ENGLISH, CHINESE, others) == "../zh/notebooks/07_softmax.html"
    )
    assert url("SOURCES", ENGLISH, CHINESE, others) == "zh/index.html", "no counterpart: home"
    assert (
        url("notebooks/07_softmax", CHINESE, ENGLISH, others) == "../../notebooks/07_softmax.html"
    )
    assert url("search", CHINESE, ENGLISH, others) == "../search.html"


def test_landing_page_links_notebooks_and_lists_them_in_order():
    notebooks = course_site.notebook_paths()
    readme = "# Course\n\nRead it at https://o.github.io/n/\n\n| `00_setup` | check |\n"
    page = course_site.landing_page(
        readme, notebooks, ["API_REFERENCE.md"], "https://o.github.io/n/", None
    )
    assert "https://o.github.io/n/" not in page, "the site does not link to itself"
    assert "| [`00_setup`](notebooks/00_setup.ipynb) |" in page
    toc = [line for line in page.splitlines() if line.startswith("notebooks/")]
    assert toc == [f"notebooks/{p.stem}" for p in notebooks]
    assert "\nAPI_REFERENCE\n" in page
    assert "roadmap" not in page
    chinese = course_site.landing_page(
        readme, notebooks, ["GLOSSARY.md"], "https://o.github.io/n/", None, CHINESE
    )
    assert f":caption: {CHINESE.words['notebooks']}" in chinese and "\nGLOSSARY\n" in chinese


def test_landing_page_shows_the_roadmap_once():
    readme = "# Course\n\nIntro mentioning `images/roadmap.svg` in prose.\n"
    page = course_site.landing_page(readme, [], [], "https://o.github.io/n/", "images/roadmap.svg")
    assert page.count("](images/roadmap.svg)") == 1
    already = "# Course\n\n![map](images/roadmap.svg)\n"
    page = course_site.landing_page(already, [], [], "https://o.github.io/n/", "images/roadmap.svg")
    assert page.count("images/roadmap.svg") == 1


# -- in the browser (make test-site) --------------------------------------------------------
class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output for failures
        pass


@pytest.fixture(scope="module")
def site():
    if not PAGES:
        message = f"no built site under {HTML}: run `make site` (make test-site does)"
        if _must_run():
            pytest.fail(message)
        pytest.skip(message)
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", _free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


#: The ids of every page a link led to (None: no such file), shared by all the tests: each page
#: links to every other one (the navigation), and the site does not change during the tests.
_LINK_TARGETS: dict[str, set[str] | None] = {}


class Visitor:
    """One browser tab that records every request and console message of the pages it opens."""

    def __init__(self, browser, base: str):  # noqa: F811 - the fixture's value
        self.base = base
        self.external: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._ids = _LINK_TARGETS  # the site does not change while the tests read it

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.base) or url.startswith("data:") or url.startswith("blob:"):
            route.continue_()
        else:  # this site must not need anything from elsewhere
            self.external.append(url)
            route.abort()

    def open(self, path: str) -> None:
        self.page.goto(self.base + path, wait_until="load")
        # Typesetting is asynchronous: wait for MathJax to finish where the page loads it.
        self.page.wait_for_function(
            "() => !window.MathJax || (MathJax.startup && MathJax.startup.promise"
            " && MathJax.startup.document && MathJax.startup.document.processed !== undefined)",
            timeout=30_000,
        )
        self.page.evaluate(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
            " ? MathJax.startup.promise.then(() => true) : true"
        )
        self.page.evaluate(
            """() => Promise.all([...document.images].map(img => {
                img.loading = 'eager';
                return img.complete ? null : new Promise(r => { img.onload = img.onerror = r; });
            }))"""
        )

    def broken_images(self) -> list[str]:
        return self.page.evaluate(
            "() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.getAttribute('src'))"
        )

    def math(self) -> dict:
        return self.page.evaluate(
            r"""() => {
                const maths = [...document.querySelectorAll('.math')];
                const clone = document.querySelector('main, body').cloneNode(true);
                clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight, textarea')
                    .forEach(e => e.remove());
                const text = clone.textContent;
                const raw = ['$$', '\\(', '\\)', '\\[', '\\]'].filter(s => text.includes(s));
                const inline = text.match(/\$[^$\n]{0,80}\\[a-zA-Z]+[^$\n]{0,80}\$/g) || [];
                return {
                    elements: maths.length,
                    typeset: maths.filter(m => m.querySelector('mjx-container')).length,
                    containers: document.querySelectorAll('mjx-container').length,
                    raw: raw.concat(inline.slice(0, 3)),
                };
            }"""
        )

    def switches(self) -> list[str]:
        """The language switches of the page (their resolved URLs)."""
        return self.page.evaluate(
            "() => [...document.querySelectorAll('a.course-language-switch')].map(a => a.href)"
        )

    def links(self) -> list[str]:
        return self.page.evaluate(
            "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"
        )

    def ids_of(self, url: str) -> set[str] | None:
        """The ids on the page at ``url`` (None when it does not answer 200)."""
        if url not in self._ids:
            try:
                with self.opener.open(url, timeout=10) as response:
                    body = response.read().decode("utf-8", errors="replace")
                    status = response.status
            except urllib.error.URLError:
                status, body = 0, ""
            if status != 200:
                self._ids[url] = None
            else:
                parser = _Ids()
                parser.feed(body) if url.endswith((".html", "/")) else None
                self._ids[url] = parser.ids
        return self._ids[url]

    def broken_links(self) -> list[str]:
        broken = []
        for href in sorted(set(self.links())):
            if not href.startswith(self.base):
                continue  # a link to elsewhere is never fetched by the page
            target, _, anchor = href.partition("#")
            ids = self.ids_of(target)
            if ids is None:
                broken.append(f"{href} (no such file)")
            elif anchor and urllib.parse.unquote(anchor) not in ids:
                broken.append(f"{href} (no #{anchor} there)")
        return broken

    def screenshots(self, folder: Path) -> list[str]:
        """The top of the page, and the first equation, figure, table and widget note."""
        folder.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(folder / "top.png"))
        taken = ["top"]
        for name, selector in [
            ("equation", "div.math"),
            ("figure", "div.cell_output img"),
            ("table", "div.cell_output table"),
            ("widget", ".course-widget-note, .course-widget-progress"),
        ]:
            # The first one a reader sees: one inside a closed Going-deeper toggle has a box
            # but is not rendered, and a screenshot of it would wait for it forever.
            found = self.page.locator(selector)
            shown = [
                found.nth(i)
                for i in range(min(found.count(), 50))
                if found.nth(i).evaluate("e => e.checkVisibility()")
            ]
            if not shown:
                continue
            cell = shown[0].locator(
                "xpath=ancestor::div[contains(concat(' ', @class, ' '), ' cell ')][1]"
            )
            element = cell.first if cell.count() else shown[0]
            element.scroll_into_view_if_needed()
            box = element.bounding_box()
            if not box or box["height"] <= 0:
                continue
            element.screenshot(path=str(folder / f"{name}.png"))
            taken.append(name)
        return taken

    def close(self):
        self.context.close()


@pytest.fixture
def visitor(browser, site):  # noqa: F811 - the fixture of tests/test_browser.py
    person = Visitor(browser, site)
    yield person
    person.close()


@pytest.mark.site
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: e.language)
def test_site_has_every_notebook_and_the_reference_pages(edition):
    assert PAGES, f"no built site under {HTML}: run `make site`"
    root = edition.folder
    for path in course_site.notebook_paths(edition):
        assert f"{root}notebooks/{path.stem}.html" in PAGES
    assert f"{root}index.html" in PAGES and f"{root}search.html" in PAGES
    for name in course_site.reference_names(edition):
        assert f"{root}{Path(name).stem}.html" in PAGES, f"{name} exists but is not on the site"


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_offline_with_math_images_and_links(visitor, page):
    visitor.open(page)
    problems = []
    broken = visitor.broken_images()
    if broken:
        problems.append(f"images that did not load: {broken}")
    math = visitor.math()
    if math["elements"] and math["typeset"] < math["elements"]:
        problems.append(
            f"{math['elements'] - math['typeset']} of {math['elements']} equations not typeset"
        )
    if math["raw"]:
        problems.append(f"raw TeX left in the page: {math['raw']}")
    problems += [f"broken link: {link}" for link in visitor.broken_links()]
    if visitor.external:
        problems.append(f"requests to other hosts: {sorted(set(visitor.external))}")
    if visitor.errors:
        problems.append(f"browser errors: {visitor.errors}")
    edition = _edition_of(page)
    other = _other(edition)
    docname = page.removeprefix(edition.folder).removesuffix(".html")
    expected = urllib.parse.urljoin(
        visitor.base + page,
        course_site.counterpart_url(docname, edition, other, course_site.docnames(other)),
    )
    if visitor.switches() != [expected]:
        problems.append(f"language switch {visitor.switches()}, expected [{expected}]")
    name = page.removesuffix(".html").replace("/", "_")
    taken = visitor.screenshots(SCREENSHOTS / name)
    (SCREENSHOTS / name / "checks.txt").write_text(
        f"equations {math['elements']} (typeset {math['typeset']}, MathJax containers "
        f"{math['containers']}); screenshots {taken}\n",
        encoding="utf-8",
    )
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.site
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: e.language)
def test_pages_with_equations_are_typeset_by_the_local_mathjax(visitor, edition):
    visitor.open(f"{edition.folder}notebooks/05_scale.html")
    math = visitor.math()
    assert math["elements"] > 0 and math["containers"] >= math["elements"]
    scripts = visitor.page.evaluate("() => [...document.scripts].map(s => s.src).filter(s => s)")
    assert any(s.split("?")[0].endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts


def _search(visitor, page: str, query: str, screenshot: str) -> list[str]:
    """Search the site as a reader does (``page`` is ``search.html`` of one edition); the links
    of the results, once the first has appeared."""
    visitor.open(f"{page}?q=" + urllib.parse.quote(query))
    results = visitor.page.locator("#search-results li, ul.search li")
    results.first.wait_for(timeout=30_000)
    hrefs = visitor.page.evaluate(
        "() => [...document.querySelectorAll('#search-results li a, ul.search li a')].map(a => a.href)"
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    visitor.page.screenshot(path=str(SCREENSHOTS / screenshot))
    return hrefs


@pytest.mark.site
def test_search_finds_softmax(visitor):
    hrefs = _search(visitor, "search.html", "softmax", "search-softmax.png")
    assert any("07_softmax" in h for h in hrefs), hrefs
    assert not visitor.external and not visitor.errors, (visitor.external, visitor.errors)


@pytest.mark.site
def test_chinese_search_finds_attention(visitor):
    """Sphinx's Chinese search, its index cut into words by jieba: 注意力 finds the notebooks."""
    hrefs = _search(visitor, f"{CHINESE.folder}search.html", "注意力", "search-zh-attention.png")
    found = {h.split("#")[0] for h in hrefs}
    assert any(f"/{CHINESE.folder}notebooks/08_v_attention.html" in h for h in found), hrefs
    assert all(h.startswith(visitor.base + CHINESE.folder) for h in found), hrefs
    placeholder = visitor.page.locator("input[name=q]").first.get_attribute("placeholder")
    assert placeholder == CHINESE.words["search"], "the theme's words are Chinese"
    assert not visitor.external and not visitor.errors, (visitor.external, visitor.errors)


@pytest.mark.site
@pytest.mark.parametrize("docname", ["index", "notebooks/07_softmax", "GLOSSARY"])
def test_language_switch_leads_to_the_counterpart_and_back(visitor, docname):
    """Click the switch on an English page: the same page in Chinese; click again: back."""
    visitor.open(f"{docname}.html")
    for edition in (CHINESE, ENGLISH):
        with visitor.page.expect_navigation():
            visitor.page.locator("a.course-language-switch").click()
        visitor.page.wait_for_load_state("load")
        assert visitor.page.url == f"{visitor.base}{edition.folder}{docname}.html"
        lang = visitor.page.evaluate("() => document.documentElement.lang")
        assert lang == edition.hreflang, (visitor.page.url, lang)
        label = visitor.page.locator("a.course-language-switch").inner_text().strip()
        assert label == _other(edition).name, label
    assert not visitor.external and not visitor.errors, (visitor.external, visitor.errors)


@pytest.mark.site
def test_english_only_pages_switch_to_the_chinese_landing_page(visitor):
    english_only = [n for n in course_site.reference_names(ENGLISH) if n not in CHINESE.references]
    if not english_only:
        pytest.skip("every English reference page has a Chinese one")
    visitor.open(f"{Path(english_only[0]).stem}.html")
    with visitor.page.expect_navigation():
        visitor.page.locator("a.course-language-switch").click()
    assert visitor.page.url == f"{visitor.base}{CHINESE.folder}index.html"


@pytest.mark.site
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: e.language)
def test_next_link_follows_course_order(visitor, edition):
    notebooks = [p.stem for p in course_site.notebook_paths(edition)]
    visitor.open(f"{edition.folder}notebooks/{notebooks[0]}.html")
    following = visitor.page.evaluate(
        "() => { const a = document.querySelector('a.right-next'); return a ? a.href : null; }"
    )
    expected = f"{visitor.base}{edition.folder}notebooks/{notebooks[1]}.html"
    assert following == expected, following


def _going_deeper_headings(path: Path) -> int:
    from course_sections import is_going_deeper  # tools/course_sections.py

    return sum(is_going_deeper(c) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


FOLDING = [
    (edition, path)
    for edition in EDITIONS
    for path in course_site.notebook_paths(edition)
    if _going_deeper_headings(path)
]


@pytest.mark.site
@pytest.mark.parametrize(
    ("edition", "path"), FOLDING, ids=[f"{e.language}-{p.stem}" for e, p in FOLDING]
)
def test_going_deeper_sections_are_closed_toggles(visitor, edition, path):
    """Each Going-deeper section of the notebook is a closed <details> under its heading."""
    from course_sections import GOING_DEEPER  # tools/course_sections.py

    visitor.open(f"{edition.folder}notebooks/{path.stem}.html")
    toggles = visitor.page.evaluate(
        """() => [...document.querySelectorAll('details.course-going-deeper')].map(d => ({
            open: d.open,
            heading: (d.parentElement.querySelector('h1, h2, h3, h4, h5, h6') || {}).textContent,
            hidden: [...d.children].filter(e => e.tagName !== 'SUMMARY')
                .every(e => !e.checkVisibility()),
            summary: !!d.querySelector('summary'),
        }))"""
    )
    assert len(toggles) == _going_deeper_headings(path), toggles
    for toggle in toggles:
        assert GOING_DEEPER.search(toggle["heading"] or ""), toggle
        assert not toggle["open"] and toggle["hidden"] and toggle["summary"], toggle
