"""The course where learners use it: a real JupyterLab driven by a real (headless) Chromium.

Run with ``make test-browser`` (``.ci/run`` runs it after ``make test``). For every notebook
that shows widgets, the test opens it in JupyterLab, clears the stored outputs, runs all cells
from the Run menu and then, like a learner, turns every knob of every widget and checks that
what the widget draws really changed (the plot's PNG bytes, or the HTML it shows). In the
token widget it types a sentence and checks that coloured tokens of that sentence appear.
No cell may show an error or a warning, and the browser console must stay free of errors.
Every other notebook is opened with its stored outputs and checked the same way (no run).

Screenshots of each notebook go to ``screenshots/`` (git-ignored; ``COURSE_SCREENSHOTS``
overrides), one PNG per screenful plus one per widget before and after the knobs moved.

Nothing is downloaded: Chromium is Debian's ``/usr/bin/chromium`` (``COURSE_CHROMIUM``
overrides), driven by Playwright for Python without ``playwright install``. JupyterLab runs on
loopback with a known token, a free port and its own temporary config, data, runtime, settings
and workspace folders, on a temporary copy of ``notebooks/`` (autosave never touches the
committed notebooks). Every request that would leave the machine is refused and fails the test:
the course must work offline, every picture included. Each notebook, as it opens, must show
every "Going deeper" section folded (its heading collapsed, its cells hidden: the metadata
``tools/nbtool.py fold`` writes); the test then expands all headings and checks that every
image, in markdown and in outputs, has loaded (naturalWidth > 0).

The kernel runs ipywidgets 8 here. ipywidgets 7.7 (Colab's) cannot be driven this way:
JupyterLab 4's widget manager refuses a 7.x kernel ("Module @jupyter-widgets/base, version
^1.2.0 is not registered"), and Colab's own front end cannot run offline. ``make
test-colab`` therefore builds every widget and turns every knob under 7.7 in Python
(tests/test_colab_widgets.py), the same checks this file makes by hand.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = REPO / "notebooks"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(os.environ.get("COURSE_SCREENSHOTS", REPO / "screenshots"))
TOKEN = "course-browser-test"
# The flags these offline machines need (no background connections to Google's hosts).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The notebooks with widgets that issue 7 names; each must exist and pass in the browser.
REQUIRED_WIDGET_NOTEBOOKS = [
    "01_tokenization",
    "03_positional_encoding",
    "05_scale",
    "07_softmax",
    "08_v_attention",
    "12_generation",
]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Knobs that matter only for one value of another knob: set that one first (then back).
CONTEXT_KNOBS = {"top-p": ("method", "top-p"), "beam width": ("method", "beam")}
#: Knobs allowed to change nothing visible in a notebook, with the reason (keep this short).
INVISIBLE_KNOBS: dict[str, dict[str, str]] = {}
RUN_TIMEOUT_S = 600
VIEWPORT = {"width": 1280, "height": 1000}
SENTENCE = "Transformers read tokens, not words: tokenization matters!"
#: What the learner types where a widget only knows the corpus's tokens (12's compact vocabulary).
TYPED = {"12_generation": "The customer"}
#: Notebooks whose text widget colours the typed text itself (so every typed word must show).
TOKEN_COLOURING = {"01_tokenization"}


def _notebooks() -> list[Path]:
    return sorted(NOTEBOOK_DIR.glob("[0-9][0-9]*.ipynb"))


def _shows_widgets(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    return any(
        WIDGET_MIME in output.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


#: The widgets tqdm draws for a progress bar: nothing a learner can turn.
PROGRESS_BAR_MODELS = {
    "FloatProgressModel", "HBoxModel", "HTMLModel", "HTMLStyleModel", "LayoutModel",
    "ProgressStyleModel",
}  # fmt: skip
#: The one training notebook whose Run All proves, in this browser, that a progress bar and a
#: live plot (display(display_id=True), then .update) render while a model trains.
LIVE_TRAINING_NOTEBOOK = "11_training"


def _only_progress_bars(path: Path) -> bool:
    """The stored notebook's widgets (its saved widget state) are all parts of progress bars."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = {model["model_name"] for model in state.get("state", {}).values()}
    return bool(models) and models <= PROGRESS_BAR_MODELS


# Run All in the browser only where it shows something no other run does (issue 33: each
# notebook runs the fewest times). A notebook with a knob runs, and so does 11 for the live
# training display. 13 and 16 train behind the same progress_bar and live plot as 11 (and 12
# trains behind it too), and nbval runs them both editions: here they open with their stored
# outputs, whose saved widget state must render, like every static notebook's.
WIDGET_NOTEBOOKS = [
    p.stem
    for p in _notebooks()
    if _shows_widgets(p) and (p.stem == LIVE_TRAINING_NOTEBOOK or not _only_progress_bars(p))
]
STATIC_NOTEBOOKS = [p.stem for p in _notebooks() if p.stem not in WIDGET_NOTEBOOKS]


def _going_deeper_count(name: str) -> int:
    """How many Going-deeper heading cells the stored notebook has (tools/course_sections.py)."""
    sys.path.insert(0, str(REPO / "tools"))
    from course_sections import is_going_deeper

    nb = json.loads((NOTEBOOK_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
    return sum(is_going_deeper(cell) for cell in nb["cells"])


def _must_run() -> bool:
    return bool(os.environ.get("CI"))


def _skip_or_fail(reason: str):
    if _must_run():
        pytest.fail(f"{reason} (CI must run the browser test: .ci/run installs Chromium)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_json(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content), encoding="utf-8")


class Lab:
    """A JupyterLab server on loopback serving a temporary copy of the notebooks."""

    def __init__(self, root: Path):
        self.root = root
        self.notebooks = root / "notebooks"
        shutil.copytree(
            NOTEBOOK_DIR,
            self.notebooks,
            ignore=shutil.ignore_patterns("checkpoints", ".ipynb_checkpoints"),
        )
        settings = root / "settings" / "@jupyterlab"
        # Render every cell (JupyterLab 4 virtualises long notebooks), and no news pop-ups.
        _write_json(
            settings / "notebook-extension" / "tracker.jupyterlab-settings",
            {"windowingMode": "none"},
        )
        _write_json(
            settings / "apputils-extension" / "notification.jupyterlab-settings",
            {"fetchNews": "false", "checkForUpdates": False},
        )
        env = dict(
            os.environ,
            JUPYTER_CONFIG_DIR=str(root / "config"),
            JUPYTER_DATA_DIR=str(root / "data"),
            JUPYTER_RUNTIME_DIR=str(root / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(root / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(root / "workspaces"),
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            PYTHONWARNINGS="ignore::DeprecationWarning",
            MPLBACKEND="module://matplotlib_inline.backend_inline",
        )
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = root / "jupyterlab.log"
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--no-browser",
                "--allow-root",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={TOKEN}",
                f"--ServerApp.root_dir={self.notebooks}",
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: expand all headings
            ],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait_until_up()

    def _wait_until_up(self, timeout: float = 120.0) -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited early:\n{self.log()}")
            try:
                with opener.open(f"{self.url}/api/status?token={TOKEN}", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer within {timeout} s:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-5000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    server = Lab(tmp_path_factory.mktemp("jupyterlab"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_or_fail("Playwright for Python is not installed (it is in the dev extra)")
    if not CHROMIUM.exists():
        _skip_or_fail(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield instance
        instance.close()


class Learner:
    """One browser tab on one notebook, with the checks a learner would make by eye."""

    def __init__(self, browser, lab: Lab, name: str):
        self.name = name
        self.lab = lab
        self.console_errors: list[str] = []
        self.external: list[str] = []
        self.notes: list[str] = []
        self.shots = SCREENSHOTS / name
        shutil.rmtree(self.shots, ignore_errors=True)
        self.shots.mkdir(parents=True, exist_ok=True)
        self.context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        self.context.route(
            re.compile(r"^(?!(https?|wss?)://127\.0\.0\.1[:/]|data:|blob:)"), self._refuse
        )
        self.page = self.context.new_page()
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda error: self.console_errors.append(f"page error: {error}"))

    # -- plumbing -------------------------------------------------------------------------
    def _refuse(self, route) -> None:
        # Every picture and script of the course is local (diagrams.py's DESIGN note): a request
        # for another machine is refused here, recorded, and fails the test (assert_offline).
        self.external.append(route.request.url)
        route.abort()

    def assert_offline(self) -> None:
        assert not self.external, f"{self.name}: requests that would leave the machine:\n" + (
            "\n".join(sorted(set(self.external)))
        )

    def going_deeper_headings(self) -> list[dict]:
        """Each Going-deeper heading cell as JupyterLab shows it: collapsed, its section hidden."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell')]
            .map(cell => [cell, cell.querySelector('.jp-RenderedMarkdown :is(h1,h2,h3,h4,h5,h6)')])
            .filter(([cell, h]) => h && /going deeper/i.test(h.textContent))
            .map(([cell, h]) => {
                const button = cell.querySelector('.jp-collapseHeadingButton');
                const next = cell.nextElementSibling;
                return {
                    heading: h.textContent.slice(0, 80),
                    collapsed: !!button && button.classList.contains('jp-mod-collapsed'),
                    hidden: !next || !next.classList.contains('jp-Cell')
                        || next.getClientRects().length === 0,
                };
            })"""
        )

    def assert_going_deeper_folded(self) -> None:
        """Opened, every Going-deeper section is folded (its heading collapsed, its cells hidden)."""
        expected = _going_deeper_count(self.name)
        shown = self.going_deeper_headings()
        self.notes.append(f"{len(shown)} Going-deeper sections, folded when opened")
        assert len(shown) == expected, f"{self.name}: {expected} Going-deeper headings, saw {shown}"
        unfolded = [h for h in shown if not (h["collapsed"] and h["hidden"])]
        assert not unfolded, f"{self.name}: Going-deeper sections not folded: {unfolded}"

    def expand_all_headings(self) -> None:
        """Unfold every section (JupyterLab's command), so that every cell can be seen and run."""
        self.page.evaluate(
            "() => window.jupyterapp.commands.execute('notebook:expand-all-headings')"
        )
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
            ".every(c => c.getClientRects().length > 0)",
            timeout=30_000,
        )

    def images_not_loaded(self) -> list[str]:
        """Every <img> in the notebook (markdown and outputs) has loaded: naturalWidth > 0."""
        images = "Array.from(document.querySelectorAll('.jp-Notebook img'))"
        # Scroll to any image not loaded yet (a lazy one loads when seen); change no attribute:
        # the widget checks compare the outputs' HTML.
        self.page.evaluate(
            f"() => {images}.filter(i => !i.complete).forEach(i => i.scrollIntoView())"
        )
        self.page.wait_for_function(f"() => {images}.every(i => i.complete)", timeout=60_000)
        count = self.page.evaluate(f"() => {images}.length")
        self.notes.append(f"{count} images in the notebook")
        return self.page.evaluate(
            f"() => {images}.filter(i => !(i.naturalWidth > 0)).map(i => (i.getAttribute('src') || '').slice(0, 120))"
        )

    def assert_images_loaded(self, when: str) -> None:
        broken = self.images_not_loaded()
        assert not broken, f"{self.name} ({when}): images that did not load:\n" + "\n".join(broken)

    def _on_console(self, message) -> None:
        if message.type == "error":
            self.console_errors.append(f"console error: {message.text}")

    def close(self) -> None:
        self.context.close()

    # -- opening and running ----------------------------------------------------------------
    def open(self) -> None:
        self.page.goto(f"{self.lab.url}/lab/tree/{self.name}.ipynb?token={TOKEN}&reset")
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
        # The kernel must be up before Run All, or the first cells queue behind its start.
        self.page.wait_for_function(
            "() => /\\|\\s*Idle/.test(document.querySelector('.jp-StatusBar-Widget') ? "
            "document.body.innerText : '')",
            timeout=120_000,
        )
        self.page.keyboard.press("Control+b")  # hide the file browser: more room for the notebook
        self.page.wait_for_timeout(500)

    def menu(self, menu: str, command: str) -> None:
        self.page.locator(".lm-MenuBar-item", has_text=menu).first.click()
        self.page.locator(f".lm-Menu-item[data-command='{command}']").first.click()

    def run_all(self) -> float:
        self.menu("Edit", "editmenu:clear-all")
        self.page.wait_for_function(
            "() => ![...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
            ".some(p => /\\[[0-9*]+\\]/.test(p.textContent))",
            timeout=30_000,
        )
        start = time.monotonic()
        self.menu("Run", "runmenu:run-all")
        self.page.wait_for_function(
            """() => {
                const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                    .map(p => p.textContent);
                if (prompts.some(t => t.includes('*'))) return false;
                const errors = document.querySelectorAll(
                    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
                return errors.length > 0 || prompts.every(t => /\\[\\d+\\]/.test(t));
            }""",
            timeout=RUN_TIMEOUT_S * 1000,
            polling=500,
        )
        self.page.wait_for_timeout(1500)  # widgets render after their cell finished
        return time.monotonic() - start

    # -- checks ---------------------------------------------------------------------------
    def execution_counts(self) -> list[str]:
        return self.page.eval_on_selector_all(
            ".jp-CodeCell .jp-InputPrompt", "ps => ps.map(p => p.textContent.trim())"
        )

    def problems_in_cells(self) -> list[str]:
        """Error/warning outputs and widgets that failed to render, with the cell they are in."""
        return self.page.evaluate(
            """() => {
                const found = [];
                for (const cell of document.querySelectorAll('.jp-CodeCell')) {
                    const src = (cell.querySelector('.jp-InputArea-editor') || {}).innerText || '';
                    const where = src.trim().split('\\n').slice(0, 3).join(' | ').slice(0, 160);
                    for (const o of cell.querySelectorAll(
                            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
                        found.push(`error/stderr output in cell [${where}]: ${o.innerText.slice(0, 600)}`);
                    for (const o of cell.querySelectorAll('.jp-OutputArea-output')) {
                        const text = o.innerText;
                        if (/Error displaying widget|Error rendering|model not found|Loading widget\\.\\.\\./i.test(text))
                            found.push(`widget error in cell [${where}]: ${text.slice(0, 300)}`);
                        if (o.getAttribute('data-mime-type') === 'text/plain' &&
                                /^(VBox|HBox|Box|interactive|Output|IntSlider|FloatSlider|Dropdown|Textarea|Text|HTML|Checkbox|ToggleButtons)\\(/.test(text.trim()))
                            found.push(`widget shown as text (no widget front end) in cell [${where}]: ${text.slice(0, 200)}`);
                    }
                }
                return found;
            }"""
        )

    def assert_clean(self, when: str) -> None:
        problems = self.problems_in_cells()
        assert not problems, f"{self.name} ({when}):\n" + "\n".join(problems)
        assert not self.console_errors, f"{self.name} ({when}) browser console:\n" + "\n".join(
            self.console_errors
        )

    # -- screenshots ----------------------------------------------------------------------
    def screenshot_pages(self, prefix: str = "page") -> list[Path]:
        """One PNG per screenful of the notebook, top to bottom."""
        scroller = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
        # The end of the last cell, not scrollHeight: JupyterLab pads the end with empty space.
        height = self.page.eval_on_selector(
            scroller,
            "e => { const cells = e.querySelectorAll('.jp-Cell'); const last = cells[cells.length - 1];"
            " return last.getBoundingClientRect().bottom - e.getBoundingClientRect().top + e.scrollTop + 20; }",
        )
        view = self.page.eval_on_selector(scroller, "e => e.clientHeight")
        paths, top, index = [], 0, 1
        while True:
            self.page.eval_on_selector(scroller, f"e => {{ e.scrollTop = {top}; }}")
            self.page.wait_for_timeout(150)
            path = self.shots / f"{prefix}{index:02d}.png"
            self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").screenshot(path=str(path))
            paths.append(path)
            if top + view >= height or index >= 60:
                break
            top += view - 80  # a little overlap so nothing falls between two pictures
            index += 1
        return paths

    def element_screenshot(self, locator, path: Path) -> None:
        """A whole output, even one taller than the window (the window grows for the picture)."""
        height = locator.evaluate("e => e.getBoundingClientRect().height")
        tall = height > VIEWPORT["height"] - 200
        if tall:
            self.page.set_viewport_size({"width": VIEWPORT["width"], "height": int(height) + 300})
            self.page.wait_for_timeout(500)
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=str(path))
        if tall:
            self.page.set_viewport_size(VIEWPORT)
            self.page.wait_for_timeout(300)

    # -- the learner's hands ----------------------------------------------------------------
    def widget_outputs(self):
        # A rendered widget view sits directly in a cell's output area (Output widgets nest more).
        return self.page.locator(
            ".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output:has(> .jupyter-widgets)"
        )

    @staticmethod
    def shown(widget) -> dict:
        """What a widget currently shows: its plots' PNG bytes and the HTML of its displays."""
        return widget.evaluate(
            """w => {
                const displays = [...w.querySelectorAll('.widget-output, .widget-html-content')];
                return {
                    images: [...w.querySelectorAll('img')].map(i => i.getAttribute('src') || '')
                        .concat([...w.querySelectorAll('svg')].map(g => g.outerHTML)),
                    // clear_output(wait=True) leaves an empty style="" behind: not a change
                    html: displays.map(d => d.innerHTML.replaceAll(' style=""', ''))
                        .join('\\n<!--display-->\\n'),
                    text: displays.map(d => d.innerText).join('\\n'),
                };
            }"""
        )

    def wait_for_change(self, widget, before: dict, timeout_s: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            now = self.shown(widget)
            if now["html"] != before["html"] and (
                now["images"] or not before["images"] or now["text"].strip()
            ):
                self.page.wait_for_timeout(700)  # let clear_output(wait=True) settle
                settled = self.shown(widget)
                if settled == now:
                    return now
            self.page.wait_for_timeout(250)
        return self.shown(widget)

    def wait_for_same(self, widget, target: dict, timeout_s: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout_s
        now = self.shown(widget)
        while now["html"] != target["html"] and time.monotonic() < deadline:
            self.page.wait_for_timeout(250)
            now = self.shown(widget)
        return now

    def controls(self, widget) -> list[tuple[str, object]]:
        found: list[tuple[str, object]] = []
        for kind, selector in [
            ("slider", ".noUi-handle, .ui-slider-handle"),
            ("dropdown", "select"),
            ("checkbox", "input[type='checkbox']"),
            ("toggle", ".widget-toggle-buttons"),
            ("text", "textarea, input[type='text']"),
        ]:
            locator = widget.locator(selector)
            found.extend((kind, locator.nth(i)) for i in range(locator.count()))
        return found

    @staticmethod
    def describe(control) -> str:
        return control.evaluate(
            """c => {
                const box = c.closest('.widget-inline-hbox, .widget-textarea, .widget-text, .widget-toggle-buttons, .widget-checkbox') || c;
                // A checkbox's description sits in its own label; the row label is a zero-width space.
                const names = [...box.querySelectorAll('.widget-label, .widget-label-basic, label')]
                    .map(l => l.innerText.replace(/\u200b/g, '').trim()).filter(t => t);
                return names[0] || c.getAttribute('aria-label') || c.tagName.toLowerCase();
            }"""
        )

    def slider_readout(self, control):
        """The editable number beside a slider (ipywidgets 7 and 8 both have one)."""
        return control.locator(
            "xpath=ancestor::div[contains(concat(' ', @class, ' '), ' widget-slider ')][1]"
            "//*[contains(concat(' ', @class, ' '), ' widget-readout ')]"
        ).first

    def set_slider(self, control, text: str) -> None:
        readout = self.slider_readout(control)
        readout.click()
        readout.press("Control+a")
        readout.type(text)
        readout.press("Enter")

    def attempts(self, kind: str, control) -> list[tuple[str, object]]:
        """Ways a learner moves a knob, smallest first, each as (what, do-it)."""
        if kind == "slider":
            now = control.get_attribute("aria-valuenow")
            low, high = (
                control.get_attribute("aria-valuemin"),
                control.get_attribute("aria-valuemax"),
            )
            if now is not None and low == high:
                return []
            at_top = now is not None and high is not None and float(now) >= float(high)
            key = "ArrowLeft" if at_top else "ArrowRight"

            def press(k):
                return lambda: (control.focus(), control.press(k))

            return [
                (f"pressed {key} on the slider (at {now})", press(key)),
                ("pressed End (slider to its maximum)", press("End")),
                ("pressed Home (slider to its minimum)", press("Home")),
            ]
        if kind == "dropdown":
            count = control.evaluate("s => s.options.length")
            current = control.evaluate("s => s.selectedIndex")
            others = [i for i in range(count) if i != current]
            return [
                (f"picked option {i} of {count}", lambda i=i: control.select_option(index=i))
                for i in others[:2]
            ]
        if kind == "checkbox":
            return [("clicked the checkbox", control.click)]
        if kind == "toggle":
            buttons = control.locator("button")
            classes = [buttons.nth(i).get_attribute("class") or "" for i in range(buttons.count())]
            return [
                (f"clicked toggle button {i}", buttons.nth(i).click)
                for i, c in enumerate(classes)
                if "mod-active" not in c
            ][:2]

        typed = TYPED.get(self.name, SENTENCE)

        def type_sentence():
            control.fill("")
            control.type(typed, delay=5)
            control.press("Tab")  # Text(area) widgets with continuous_update=False update on blur

        return [(f"typed {typed!r}", type_sentence)]

    def remember(self, kind: str, control):
        """A function that puts the knob back where it is now."""
        if kind == "slider":
            text = self.slider_readout(control).inner_text().strip()
            return lambda: self.set_slider(control, text)
        if kind == "dropdown":
            index = control.evaluate("s => s.selectedIndex")
            return lambda: control.select_option(index=index)
        if kind == "checkbox":
            checked = control.is_checked()
            return lambda: control.set_checked(checked)
        if kind == "toggle":
            buttons = control.locator("button")
            active = [
                i
                for i in range(buttons.count())
                if "mod-active" in (buttons.nth(i).get_attribute("class") or "")
            ]
            return (lambda: buttons.nth(active[0]).click()) if active else None
        return None  # typed text stays, as a learner would leave it

    def find_control(self, widget, label: str):
        for kind, control in self.controls(widget):
            if self.describe(control) == label:
                return kind, control
        return None, None

    def play_with_widgets(self) -> list[str]:
        """Turn every knob of every widget; each must change what its widget shows."""
        failures: list[str] = []
        widgets = self.widget_outputs()
        assert widgets.count() > 0, f"{self.name}: no widget was rendered"
        for w in range(widgets.count()):
            widget = widgets.nth(w)
            if not widget.is_visible():  # a finished progress bar hides itself (its text stays)
                self.notes.append(f"widget {w + 1}: hidden (a finished progress bar)")
                continue
            self.element_screenshot(widget, self.shots / f"widget{w + 1}-before.png")
            controls = self.controls(widget)
            if not controls and widget.locator(".widget-hprogress, .widget-progress").count():
                self.notes.append(f"widget {w + 1}: a progress bar")
                continue
            if not controls:
                failures.append(f"widget {w + 1} has no knob a learner can turn")
            for kind, control in controls:
                label = self.describe(control)
                if control.is_disabled():
                    self.notes.append(f"widget {w + 1}, {kind} '{label}': disabled, left alone")
                    continue
                context_undo = None
                if label in CONTEXT_KNOBS:  # e.g. "top-p" is read only when the method is top-p
                    other_label, value = CONTEXT_KNOBS[label]
                    other_kind, other = self.find_control(widget, other_label)
                    if other_kind == "dropdown":
                        context_undo = self.remember(other_kind, other)
                        settled = self.shown(widget)
                        other.select_option(label=value)
                        self.wait_for_change(widget, settled, timeout_s=20)
                failures.extend(self.try_knob(widget, w + 1, kind, control, label))
                if context_undo is not None:
                    settled = self.shown(widget)
                    context_undo()
                    self.wait_for_change(widget, settled, timeout_s=20)
                self.assert_clean(f"after {kind} '{label}' of widget {w + 1}")
            self.element_screenshot(widget, self.shots / f"widget{w + 1}-after.png")
        return failures

    def try_knob(self, widget, index: int, kind: str, control, label: str) -> list[str]:
        """Move one knob (a small move first, bigger if nothing shows), check, put it back."""
        attempts = self.attempts(kind, control)
        if not attempts:
            self.notes.append(
                f"widget {index}, {kind} '{label}': has a single value, nothing to turn"
            )
            return []
        before = self.shown(widget)
        undo = self.remember(kind, control)
        tried = []
        for action, do in attempts:
            do()
            after = self.wait_for_change(widget, before, timeout_s=20)
            changed = after["html"] != before["html"]
            what = "plot changed" if before["images"] != after["images"] else "display changed"
            tried.append(action)
            self.notes.append(
                f"widget {index}, {kind} '{label}': {action} -> {what if changed else 'nothing changed'}"
            )
            if not changed:
                continue  # try a bigger move from here
            problems = self.check_coloured_tokens(widget, index) if kind == "text" else []
            if undo is not None:
                # Back to the first state, so the next knob starts from it; a widget shows a
                # pure function of its knobs, so it must look exactly as before.
                undo()
                restored = self.wait_for_same(widget, before)
                if restored["html"] != before["html"]:
                    problems.append(
                        f"widget {index}: putting {kind} '{label}' back did not restore the display"
                    )
            return problems
        if undo is not None:
            undo()
        if label in INVISIBLE_KNOBS.get(self.name, {}):
            self.notes.append(f"   (allowed: {INVISIBLE_KNOBS[self.name][label]})")
            return []
        return [f"widget {index}: {kind} '{label}' changed nothing it shows ({'; '.join(tried)})"]

    def check_coloured_tokens(self, widget, index: int) -> list[str]:
        """After typing: coloured token spans appear (in 01 they spell every typed word)."""
        spans = widget.evaluate(
            """w => [...w.querySelectorAll('.widget-html-content span[style*="background"]')]
                   .map(s => (s.childNodes[0] && s.childNodes[0].textContent) || '')"""
        )
        self.notes.append(f"widget {index}: {len(spans)} coloured tokens after typing")
        if not spans:
            return [f"widget {index}: typed text but no coloured token appeared"]
        if self.name not in TOKEN_COLOURING:
            return []
        shown = "".join(spans)
        missing = [w for w in re.findall(r"[A-Za-z]+", SENTENCE) if w not in shown]
        return (
            [f"widget {index}: typed words missing from the coloured tokens: {missing}"]
            if missing
            else []
        )


@pytest.fixture
def learner(browser, lab, request):
    person = Learner(browser, lab, request.param)
    yield person
    (person.shots / "learner.txt").write_text(
        "\n".join(
            person.notes + [f"outside request refused: {u}" for u in sorted(set(person.external))]
        )
        + "\n",
        encoding="utf-8",
    )
    person.close()


def test_required_widget_notebooks_exist():
    missing = [
        name for name in REQUIRED_WIDGET_NOTEBOOKS if not (NOTEBOOK_DIR / f"{name}.ipynb").exists()
    ]
    assert not missing, f"widget notebooks issue 7 requires but not written yet: {missing}"
    without = [name for name in REQUIRED_WIDGET_NOTEBOOKS if name not in WIDGET_NOTEBOOKS]
    assert not without, f"these notebooks store no widget output: {without}"
    assert LIVE_TRAINING_NOTEBOOK in WIDGET_NOTEBOOKS, (
        f"{LIVE_TRAINING_NOTEBOOK} stores no progress bar: name another notebook whose Run All "
        "shows the live training display in the browser"
    )


@pytest.mark.parametrize("learner", WIDGET_NOTEBOOKS, indirect=True, ids=WIDGET_NOTEBOOKS)
def test_learner_runs_notebook_and_turns_every_knob(learner):
    learner.open()
    learner.assert_going_deeper_folded()
    learner.expand_all_headings()
    seconds = learner.run_all()
    learner.notes.append(f"Run All took {seconds:.1f} s in the browser")
    learner.assert_clean("after Run All")
    counts = learner.execution_counts()
    expected = [f"[{i}]:" for i in range(1, len(counts) + 1)]
    assert counts == expected, f"{learner.name}: cells did not all run, in order, once: {counts}"
    learner.assert_images_loaded("after Run All")
    learner.screenshot_pages()
    failures = learner.play_with_widgets()
    learner.assert_clean("after turning the knobs")
    assert not failures, f"{learner.name}:\n" + "\n".join(failures)
    learner.assert_offline()


@pytest.mark.parametrize("learner", STATIC_NOTEBOOKS, indirect=True, ids=STATIC_NOTEBOOKS)
def test_notebook_renders_cleanly(learner):
    """Notebooks without widgets: their stored outputs render without errors (nbval runs them)."""
    learner.open()
    learner.assert_going_deeper_folded()
    learner.expand_all_headings()
    learner.assert_images_loaded("opened with stored outputs")
    learner.assert_clean("opened with stored outputs")
    learner.screenshot_pages()
    learner.assert_offline()
