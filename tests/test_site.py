"""The course website (site/, ``make site``): built from the stored notebooks, checked in Chromium.

``make test-site`` builds the site, serves ``site/_build/html`` on 127.0.0.1 and opens EVERY page
in headless Chromium (the launch flags and fixture of tests/test_browser.py): every image has
loaded, every equation was typeset by the site's own MathJax (no raw ``$$`` or ``\\(`` left),
every internal link answers 200 and its #anchor exists, the browser console stays clean, and
no request leaves the local server (each one is recorded; an external one fails the test).
Search must find "softmax". Screenshots go to ``screenshots/site/`` (git-ignored).

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


def _pages() -> list[str]:
    if not HTML.is_dir():
        return []
    skip = ("_static/", "_sources/", "_images/", "jupyter_execute/", ".doctrees/")
    return sorted(
        p.relative_to(HTML).as_posix()
        for p in HTML.rglob("*.html")
        if not p.relative_to(HTML).as_posix().startswith(skip)
    )


PAGES = _pages()


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


def test_widget_views_become_still_pictures_with_a_note():
    path = REPO / "notebooks" / "03_positional_encoding.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    models = course_site._models(nb)
    views = [
        o["data"][course_site.WIDGET_VIEW]
        for cell in nb["cells"]
        for o in cell.get("outputs", [])
        if course_site.WIDGET_VIEW in o.get("data", {})
    ]
    assert views and models, "03 stores a widget and its state"
    outputs = course_site.still_outputs(views[0], models, "https://colab.example/03")
    note = outputs[0]["data"]["text/html"]
    assert "comes alive" in note and "JupyterLab" in note and "https://colab.example/03" in note
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
        "[next](01_tokenization.ipynb#goals) [lib](../lib/transformer_course/attention.py) "
        f"[web](https://example.org) ![badge]({course_site.COLAB_BADGE_URL})"
    )
    out = course_site.rewrite_links(
        text, "notebooks/00_setup.ipynb", staged, "https://github.com/o/n"
    )
    assert "[next](01_tokenization.ipynb#goals)" in out
    assert "[lib](https://github.com/o/n/blob/main/lib/transformer_course/attention.py)" in out
    assert "[web](https://example.org)" in out
    assert f"![badge](../{course_site.LOCAL_BADGE})" in out


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
        self._ids: dict[str, set[str]] = {}

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
def test_site_has_every_notebook_and_the_reference_pages():
    assert PAGES, f"no built site under {HTML}: run `make site`"
    for path in course_site.notebook_paths():
        assert f"notebooks/{path.stem}.html" in PAGES
    assert "index.html" in PAGES and "search.html" in PAGES
    for name in course_site.REFERENCE_PAGES:
        if name in course_site.GENERATED_PAGES or (REPO / name).exists():
            assert f"{Path(name).stem}.html" in PAGES, f"{name} exists but is not on the site"


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
    name = page.removesuffix(".html").replace("/", "_")
    taken = visitor.screenshots(SCREENSHOTS / name)
    (SCREENSHOTS / name / "checks.txt").write_text(
        f"equations {math['elements']} (typeset {math['typeset']}, MathJax containers "
        f"{math['containers']}); screenshots {taken}\n",
        encoding="utf-8",
    )
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.site
def test_pages_with_equations_are_typeset_by_the_local_mathjax(visitor):
    visitor.open("notebooks/05_scale.html")
    math = visitor.math()
    assert math["elements"] > 0 and math["containers"] >= math["elements"]
    scripts = visitor.page.evaluate("() => [...document.scripts].map(s => s.src).filter(s => s)")
    assert any(s.split("?")[0].endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts


@pytest.mark.site
def test_search_finds_softmax(visitor):
    visitor.open("search.html?q=softmax")
    results = visitor.page.locator("#search-results li, ul.search li")
    results.first.wait_for(timeout=30_000)
    hrefs = visitor.page.evaluate(
        "() => [...document.querySelectorAll('#search-results li a, ul.search li a')].map(a => a.href)"
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    visitor.page.screenshot(path=str(SCREENSHOTS / "search-softmax.png"))
    assert any("07_softmax" in h for h in hrefs), hrefs
    assert not visitor.external and not visitor.errors, (visitor.external, visitor.errors)


@pytest.mark.site
def test_next_link_follows_course_order(visitor):
    notebooks = [p.stem for p in course_site.notebook_paths()]
    visitor.open(f"notebooks/{notebooks[0]}.html")
    following = visitor.page.evaluate(
        "() => { const a = document.querySelector('a.right-next'); return a ? a.href : null; }"
    )
    assert following and following.endswith(f"notebooks/{notebooks[1]}.html"), following


def _going_deeper_headings(path: Path) -> int:
    from course_sections import is_going_deeper  # tools/course_sections.py

    return sum(is_going_deeper(c) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


FOLDING = [p for p in course_site.notebook_paths() if _going_deeper_headings(p)]


@pytest.mark.site
@pytest.mark.parametrize("path", FOLDING, ids=[p.stem for p in FOLDING])
def test_going_deeper_sections_are_closed_toggles(visitor, path):
    """Each Going-deeper section of the notebook is a closed <details> under its heading."""
    visitor.open(f"notebooks/{path.stem}.html")
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
        assert "going deeper" in (toggle["heading"] or "").lower(), toggle
        assert not toggle["open"] and toggle["hidden"] and toggle["summary"], toggle
