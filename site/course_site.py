"""Build the course website: stage the stored notebooks and pages, then run Sphinx on them.

    python site/course_site.py            # what `make site` runs: site/_build/html

The site has two editions of the same course (:data:`EDITIONS`): English at the root of
``site/_build/html`` and Chinese under ``zh/``. Each is one Sphinx run of the same configuration
(site/conf.py; ``-D language=…`` picks the edition, site/editions.py applies its settings and
puts a language switch on every page) over a staged copy of its pages (git-ignored:
``site/_build/src``, ``site/_build/zh/src``). Both editions stage the same layout, so a page and
its translation have the same name (``notebooks/07_softmax``), and every relative link keeps
working:

- ``index.md``: the edition's README (``README.md``, ``README.zh-CN.md``: what the course is,
  the two commands, the course map), with the roadmap picture when the README does not show it
  already, and the table of contents;
- ``notebooks/NN_*.ipynb``: the stored notebooks (``notebooks/``, ``notebooks/zh/``), never
  executed (nbval already checks their outputs); each widget view becomes its still picture from
  the notebook's saved widget state with a note, in the edition's language, that it comes alive
  in JupyterLab or Colab (a static page has no kernel);
- ``images/``: the repository's pictures;
- the "Reference" part, where the files exist: ``GLOSSARY.md`` (bilingual: both editions show
  it), ``SOURCES.md`` and ``API_REFERENCE.md``, which is not a file of the repository: it is
  generated here from the library's docstrings (``tools/api_reference.py``), so the reference
  always matches the library it documents.

Links to repository files that are pages of the other edition (the Chinese README's link to
``README.md``) lead there; links to files that are not pages of the site (``lib/…``,
``data/README.md``) point to the repository on GitHub. Nothing is fetched from the network, at
build time or when a page is viewed: MathJax is copied from the ``django-static-mathjax``
package into the site, the Colab badge is a local picture, and the Chinese search index is cut
into words by ``jieba`` (its dictionary ships with it).
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

SITE = Path(__file__).resolve().parent
REPO = SITE.parent
BUILD = SITE / "_build"
HTML = BUILD / "html"
#: Top-level Markdown pages, in the order of the site's "Reference" part; absent ones are skipped.
REFERENCE_PAGES = ["GLOSSARY.md", "SOURCES.md", "API_REFERENCE.md"]
#: Reference pages written at build time rather than read from the repository.
GENERATED_PAGES = {"API_REFERENCE.md"}
#: The course map on the landing page: the whole model (gpt_overview), as README.md shows it.
ROADMAP_NAMES = ["images/roadmap.svg", "images/roadmap.png", "images/gpt_overview.png"]
#: Where the pictures drawn in another language than English lie: images/zh/ (tools/images.py).
LANGUAGE_PICTURES = {"zh_CN": "images/zh/"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "site_assets/open-in-colab.svg"
#: Markdown links and images: [text](target "title") -- the target is group 2.
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
#: Targets in raw HTML: <img src="..."> and <a href="..."> -- the target is group 2.
HTML_LINK = re.compile(r"""((?:src|href)=["'])([^"']+)(["'])""")
#: A fenced code block in Markdown: shown as written, its links never rewritten.
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)
#: Widget models that a learner turns, and how to read the value they show.
KNOB_MODELS = {
    "IntSliderModel",
    "FloatSliderModel",
    "FloatLogSliderModel",
    "IntTextModel",
    "FloatTextModel",
    "CheckboxModel",
    "TextModel",
    "TextareaModel",
    "DropdownModel",
    "ToggleButtonsModel",
    "SelectionSliderModel",
    "RadioButtonsModel",
}


@dataclass(frozen=True, eq=False)
class Edition:
    """One language of the site: the repository files it shows, where it is built, its words."""

    #: Sphinx's code for the language: the theme's own words and the search's word splitter.
    language: str
    #: The language in its own words: what the switch to this edition says.
    name: str
    #: Where the edition lies in the site: "" (the root) or a folder ("zh/").
    folder: str
    #: The repository page that becomes the landing page (index.md).
    readme: str
    #: The repository folder of its notebooks.
    notebooks: str
    #: Its "Reference" part, in order (absent ones are skipped).
    references: tuple[str, ...]
    #: The site's title in this language.
    title: str
    #: The words the site writes itself (widget notes, captions, the switch's tooltip, and the
    #: search box's placeholder, a theme option that the theme's translations do not cover).
    words: Mapping[str, str] = field(default_factory=dict)

    @property
    def build(self) -> Path:
        """Its working folder: the staged source, Sphinx's doctrees, the raw pictures."""
        return BUILD / self.folder if self.folder else BUILD

    @property
    def stage(self) -> Path:
        return self.build / "src"

    @property
    def doctrees(self) -> Path:
        return self.build / "doctrees"

    @property
    def extra(self) -> Path:
        """Copied as it is to the edition's root: images/ for raw HTML's <img src=...>."""
        return self.build / "extra"

    @property
    def html(self) -> Path:
        return HTML / self.folder

    @property
    def hreflang(self) -> str:
        return self.language.replace("_", "-")


ENGLISH = Edition(
    language="en",
    name="English",
    folder="",
    readme="README.md",
    notebooks="notebooks",
    references=tuple(REFERENCE_PAGES),
    title="Transformer course",
    words={
        "notebooks": "Notebooks",
        "reference": "Reference",
        "roadmap": "The course's roadmap: the model and the notebook for each part",
        "switch": "Read this page in English",
        "search": "Search...",
        "widget": (
            "<strong>Interactive widget</strong> — on this page, {what} when the notebook ran."
            "{knobs} It comes alive when you run the notebook in JupyterLab (<code>make lab</code>)"
            ' or <a href="{colab}">in Colab</a>.'
        ),
        "widget_shown": "a still picture of what it showed",
        "widget_none": "no picture saved for this page",
        "widget_knobs": " Its knobs here: {knobs}.",
        "knob_separator": "; ",
        "widget_plain": "Interactive widget: run the notebook in JupyterLab or Colab to use it.",
        "progress": "progress bar (as it ended when the notebook ran)",
    },
)
CHINESE = Edition(
    language="zh_CN",
    name="中文",
    folder="zh/",
    readme="README.zh-CN.md",
    notebooks="notebooks/zh",
    references=("GLOSSARY.md",),
    title="Transformer 课程",
    words={
        "notebooks": "课程 notebook",
        "reference": "参考",
        "roadmap": "课程路线图：整个模型，以及实现每个部分的 notebook",
        "switch": "阅读本页的中文版",
        "search": "搜索…",
        "widget": (
            "<strong>交互控件</strong> — {what}{knobs}在 JupyterLab（<code>make lab</code>）"
            '或 <a href="{colab}">Colab</a> 中运行这个 notebook，它就会动起来。'
        ),
        "widget_shown": "本页显示的是 notebook 运行时它所显示内容的静态图片。",
        "widget_none": "notebook 运行时没有为本页保存它的图片。",
        "widget_knobs": "图中控件的取值：{knobs}。",
        "knob_separator": "；",
        "widget_plain": "交互控件：在 JupyterLab 或 Colab 中运行这个 notebook 即可使用。",
        "progress": "进度条（notebook 运行结束时的状态）",
    },
)
#: The site's editions by Sphinx language code, the one at the root first.
EDITIONS = {edition.language: edition for edition in (ENGLISH, CHINESE)}


def repository() -> str:
    """The course's GitHub address (``transformer_course.REPOSITORY``, the one constant)."""
    sys.path.insert(0, str(REPO / "lib"))
    try:
        from transformer_course import REPOSITORY
    finally:
        sys.path.remove(str(REPO / "lib"))
    return REPOSITORY


def site_url(repository_url: str) -> str:
    """Where GitHub Pages publishes a repository's site: https://OWNER.github.io/NAME/."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", repository_url)
    if match is None:
        raise ValueError(
            f"repository_url must look like https://github.com/OWNER/NAME, got {repository_url!r}"
        )
    owner, name = match.groups()
    return f"https://{owner.lower()}.github.io/{name}/"


def api_reference_page() -> str:
    """The API reference, rendered now from the library's docstrings by tools/api_reference.py."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import api_reference
    finally:
        sys.path.remove(str(REPO / "tools"))
    return api_reference.render()


def reference_text(name: str) -> str:
    """The Markdown of one of REFERENCE_PAGES: generated, or the repository's file."""
    if name in GENERATED_PAGES:
        return api_reference_page()
    return (REPO / name).read_text(encoding="utf-8")


def notebook_paths(edition: Edition = ENGLISH) -> list[Path]:
    """An edition's notebooks in course order (00, 01, 02, 02b, 03, ...)."""
    return sorted((REPO / edition.notebooks).glob("[0-9][0-9]*.ipynb"))


def reference_names(edition: Edition = ENGLISH) -> list[str]:
    """The edition's reference pages that the site has (generated, or files that exist)."""
    return [n for n in edition.references if n in GENERATED_PAGES or (REPO / n).exists()]


def edition_pages(edition: Edition) -> dict[str, str]:
    """The edition's pages: repository path -> path in its staged source.

    Every edition stages the same layout (``index.md``, ``notebooks/NN_x.ipynb``, the reference
    pages at the top), so a page and its translation have the same name on the site.
    """
    pages = {edition.readme: "index.md"}
    for path in notebook_paths(edition):
        pages[f"{edition.notebooks}/{path.name}"] = f"notebooks/{path.name}"
    pages.update({name: name for name in reference_names(edition)})
    return pages


def docnames(edition: Edition) -> set[str]:
    """The edition's pages as Sphinx names them (``notebooks/07_softmax``), its own included."""
    staged = {posixpath.splitext(p)[0] for p in edition_pages(edition).values()}
    return staged | {"search", "genindex"}


def root_to_root(source: Edition, target: Edition) -> str:
    """The relative URL from one edition's root folder to another's: "zh/", "../"."""
    return "../" * source.folder.count("/") + target.folder


def counterpart_url(docname: str, edition: Edition, other: Edition, others: Collection[str]) -> str:
    """The URL, relative to page ``docname`` of ``edition``, of the same page in ``other``.

    ``others`` are the other edition's docnames; a page it lacks leads to its landing page.
    """
    target = docname if docname in others else "index"
    return "../" * docname.count("/") + root_to_root(edition, other) + target + ".html"


def other_editions_pages(edition: Edition) -> dict[str, str]:
    """Pages of the other editions only: repository path -> URL from ``edition``'s root."""
    mine = edition_pages(edition)
    found: dict[str, str] = {}
    for other in EDITIONS.values():
        if other is edition:
            continue
        for page, staged in edition_pages(other).items():
            if page not in mine:
                url = root_to_root(edition, other) + posixpath.splitext(staged)[0] + ".html"
                found.setdefault(page, url)
    return found


# -- links ------------------------------------------------------------------------------------
def rewrite_links(
    text: str,
    page: str,
    staged: Collection[str] | Mapping[str, str],
    repository_url: str,
    elsewhere: Mapping[str, str] | None = None,
) -> str:
    """Keep links to pages and pictures of the site; send other repository files to GitHub.

    ``page`` is the page's path in the repository (``notebooks/01_x.ipynb``,
    ``notebooks/zh/01_x.ipynb``); its links are written relative to it. ``staged`` maps the
    repository paths the edition has to their paths in its staged source (a set: the same
    paths); ``elsewhere`` maps pages of the other editions to their URLs from this edition's
    root (``../SOURCES.html``). Fenced code blocks are left as written.
    """
    if not isinstance(staged, Mapping):
        staged = {path: path for path in staged}
    elsewhere = elsewhere or {}
    source_folder = Path(page).parent  # the links' targets are relative to the repository file
    here = posixpath.dirname(staged.get(page, page))  # ...and the page lies here on the site
    up = "../" * len(PurePosixPath(here).parts)

    def relative(staged_path: str) -> str:
        return posixpath.relpath(staged_path, here or ".")

    def fix(match: re.Match, raw_html: bool) -> str:
        target = match.group(2)
        if target == COLAB_BADGE_URL:
            return f"{match.group(1)}{up}{LOCAL_BADGE}{match.group(3)}"
        if re.match(r"^([a-z]+:|#|/)", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = _normalise(source_folder / path)
        if resolved is None:
            return match.group(0)
        anchor = f"#{anchor}" if anchor else ""
        if resolved in staged:
            location = relative(staged[resolved])
            if raw_html and location.endswith((".md", ".ipynb")):  # Sphinx does not see it
                location = posixpath.splitext(location)[0] + ".html"
            return f"{match.group(1)}{location}{anchor}{match.group(3)}"
        if resolved in elsewhere and not match.group(1).startswith("!"):
            url = html.escape(f"{up}{elsewhere[resolved]}{anchor}")
            if raw_html:
                return f"{match.group(1)}{url}{match.group(3)}"
            # A page of another Sphinx build: MyST would look for it among this build's
            # documents, so the link is raw HTML (its text is still Markdown).
            title = re.search(r'"([^"]*)"', match.group(3))
            title = f' title="{html.escape(title.group(1))}"' if title else ""
            return f'<a href="{url}"{title}>{match.group(1)[1:-2]}</a>'
        if not (REPO / resolved).exists():
            return match.group(0)
        url = f"{repository_url}/blob/main/{resolved}" + anchor
        return f"{match.group(1)}{url}{match.group(3)}"

    def outside_code(part: str) -> str:
        # Raw HTML first: the Markdown links that become raw HTML are final.
        part = HTML_LINK.sub(lambda m: fix(m, raw_html=True), part)
        return LINK.sub(lambda m: fix(m, raw_html=False), part)

    pieces, last = [], 0
    for code in FENCE.finditer(text):
        pieces += [outside_code(text[last : code.start()]), code.group(0)]
        last = code.end()
    return "".join([*pieces, outside_code(text[last:])])


def _normalise(path: Path) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


# -- widgets ----------------------------------------------------------------------------------
def _models(nb: dict) -> dict:
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _walk(models: dict, model_id: str) -> list[dict]:
    """A widget and all the widgets inside it, depth first, in the order they are shown."""
    model = models.get(model_id)
    if model is None:
        return []
    found = [model]
    for child in model.get("state", {}).get("children", []):
        found.extend(_walk(models, str(child).removeprefix("IPY_MODEL_")))
    return found


def _knob(model: dict) -> str | None:
    state = model.get("state", {})
    name = model.get("model_name")
    if name not in KNOB_MODELS:
        return None
    value = state.get("value")
    if "_options_labels" in state and state.get("index") is not None:
        value = state["_options_labels"][state["index"]]
    if isinstance(value, str) and len(value) > 40:
        value = value[:37] + "…"
    label = state.get("description") or name.removesuffix("Model").lower()
    return f"{html.escape(str(label))} = {html.escape(str(value))}"


def _progress(models: list[dict]) -> str | None:
    """A progress bar (tqdm in a notebook) as it ended: label, bar, counts."""
    bars = [m for m in models if m.get("model_name") in ("FloatProgressModel", "IntProgressModel")]
    if not bars:
        return None
    state = bars[0]["state"]
    texts = [m["state"].get("value", "") for m in models if m.get("model_name") == "HTMLModel"]
    left, right = (texts + ["", ""])[:2]
    bar = f'<progress value="{state.get("value", 0)}" max="{state.get("max", 100)}"></progress>'
    return f'<div class="course-widget-progress">{left} {bar} {right}</div>'


def still_outputs(
    view: dict, models: dict, colab_url: str, edition: Edition = ENGLISH
) -> list[dict]:
    """What a stored widget view becomes on the site: a note and the pictures it last showed."""
    words = edition.words
    model_id = view.get("model_id", "")
    tree = _walk(models, model_id)
    progress = _progress(tree)
    if progress is not None:
        return [_html_output(progress, words["progress"])]
    knobs = [k for k in (_knob(m) for m in tree) if k]
    shown: list[dict] = []
    for model in tree:
        state = model.get("state", {})
        if model.get("model_name") == "HTMLModel" and state.get("value"):
            shown.append(_html_output(f'<div class="course-widget-html">{state["value"]}</div>'))
        elif model.get("model_name") == "OutputModel":
            shown.extend(state.get("outputs", []))
    knob_text = (
        words["widget_knobs"].format(knobs=words["knob_separator"].join(knobs)) if knobs else ""
    )
    what = words["widget_shown"] if shown else words["widget_none"]
    sentence = words["widget"].format(what=what, knobs=knob_text, colab=html.escape(colab_url))
    note = f'<div class="course-widget-note" role="note"><p>{sentence}</p></div>'
    return [_html_output(note, words["widget_plain"]), *shown]


def _html_output(markup: str, plain: str = "") -> dict:
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": markup, "text/plain": plain or "(widget display)"},
    }


def stage_notebook(
    source: Path,
    target: Path,
    staged: Collection[str] | Mapping[str, str],
    repository_url: str,
    colab_url: str,
    edition: Edition = ENGLISH,
    elsewhere: Mapping[str, str] | None = None,
) -> None:
    """Copy one notebook for the site: widgets as stills, links fixed, widget state dropped."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    models = _models(nb)
    page = source.resolve().relative_to(REPO).as_posix()
    for cell in nb["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            cell["source"] = rewrite_links(text, page, staged, repository_url, elsewhere)
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            outputs.extend(still_outputs(view, models, colab_url, edition) if view else [output])
        if "outputs" in cell:
            cell["outputs"] = outputs
    # Without saved state MyST-NB loads no widget JavaScript (it would come from a CDN).
    nb.get("metadata", {}).pop("widgets", None)
    _write_if_changed(target, json.dumps(nb, ensure_ascii=False, indent=1))


# -- pages ------------------------------------------------------------------------------------
def landing_page(
    readme: str,
    notebooks: list[Path],
    references: list[str],
    site: str,
    roadmap: str | None,
    edition: Edition = ENGLISH,
) -> str:
    """index.md: the README (notebook names linked, roadmap shown) and the table of contents.

    ``roadmap`` is the repository path of the course's roadmap picture, or None.
    """
    words = edition.words
    lines = [line for line in readme.splitlines() if site not in line]  # no link to itself
    text = "\n".join(lines)
    names = {p.stem for p in notebooks}
    text = re.sub(
        r"^\| `([0-9][0-9][a-z]?_[a-z_]+)` \|",
        lambda m: f"| [`{m[1]}`](notebooks/{m[1]}.ipynb) |" if m[1] in names else m[0],
        text,
        flags=re.MULTILINE,
    )
    shown = roadmap and re.search(rf"(\]\(|src=[\"']){re.escape(roadmap)}", text)
    if roadmap and not shown:  # the README may show it already
        title, _, rest = text.partition("\n")
        text = f"{title}\n\n![{words['roadmap']}]({roadmap})\n{rest}"
    toc = ["", "```{toctree}", ":hidden:", f":caption: {words['notebooks']}", ""]
    toc += [f"notebooks/{p.stem}" for p in notebooks]
    toc += ["```", "", "```{toctree}", ":hidden:", f":caption: {words['reference']}", ""]
    toc += [Path(r).stem for r in references]
    toc += ["```", ""]
    return text + "\n" + "\n".join(toc)


def edition_pictures(edition: Edition) -> list[str]:
    """The candidates for the landing page's course map, best first: the edition's own drawing
    (images/zh/gpt_overview.png for the Chinese site), then the English one."""
    folder = LANGUAGE_PICTURES.get(edition.language)
    own = [folder + Path(name).name for name in ROADMAP_NAMES] if folder else []
    return [*own, *ROADMAP_NAMES]


def _write_if_changed(path: Path, text: str) -> None:
    """Write only what changed, so Sphinx re-reads only the pages that changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, dirs_exist_ok=True, copy_function=shutil.copy2)


def mathjax_es5() -> Path:
    """MathJax 3's browser files, shipped inside the django-static-mathjax package."""
    import mathjax  # the package's import name

    folder = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (folder / "tex-chtml.js").exists():
        raise FileNotFoundError(f"MathJax's tex-chtml.js is not in {folder}: reinstall .[docs]")
    return folder


def stage(edition: Edition = ENGLISH) -> Path:
    """Lay out the edition's source folder from the repository; returns that folder."""
    repository_url = repository()
    notebooks = notebook_paths(edition)
    if not notebooks:
        raise FileNotFoundError(f"no {edition.notebooks}/NN_*.ipynb under {REPO}")
    if not (REPO / edition.readme).exists():
        raise FileNotFoundError(f"{edition.readme}, the {edition.name} landing page, is missing")
    references = reference_names(edition)
    source = edition.stage
    if source.exists():  # pages removed from the repository leave the site too
        for path in source.rglob("*"):
            if path.is_file() and path.suffix in (".md", ".ipynb"):
                path.unlink()
    staged = edition_pages(edition)
    elsewhere = other_editions_pages(edition)
    for copied in (source / "images", edition.extra):  # pictures removed leave the site too
        shutil.rmtree(copied, ignore_errors=True)
    edition.extra.mkdir(parents=True, exist_ok=True)
    if (REPO / "images").is_dir():
        _copy_tree(REPO / "images", source / "images")
        # Also as they are, for pictures that raw HTML shows (<img src="../images/...">).
        _copy_tree(REPO / "images", edition.extra / "images")
        pictures = (p.relative_to(REPO).as_posix() for p in (REPO / "images").rglob("*"))
        staged.update({p: p for p in pictures})
    _copy_tree(SITE / "assets", source / "site_assets")

    owner_name = repository_url.removeprefix("https://github.com/")
    for path in notebooks:
        colab = f"https://colab.research.google.com/github/{owner_name}/blob/main/{edition.notebooks}/{path.name}"
        target = source / staged[f"{edition.notebooks}/{path.name}"]
        stage_notebook(path, target, staged, repository_url, colab, edition, elsewhere)
    for name in references:
        text = reference_text(name)
        _write_if_changed(
            source / name, rewrite_links(text, name, staged, repository_url, elsewhere)
        )
    readme = (REPO / edition.readme).read_text(encoding="utf-8")
    readme = rewrite_links(readme, edition.readme, staged, repository_url, elsewhere)
    roadmap = next((n for n in edition_pictures(edition) if (REPO / n).exists()), None)
    landing = landing_page(
        readme, notebooks, references, site_url(repository_url), roadmap, edition
    )
    _write_if_changed(source / "index.md", landing)
    return source


def sphinx_command(edition: Edition, extra: list[str] | None = None) -> list[str]:
    """Sphinx on one edition (warnings are errors: a broken link or page fails the build)."""
    return [
        *(sys.executable, "-m", "sphinx", "-b", "html", "-c", str(SITE)),
        *("-d", str(edition.doctrees), "-W", "--keep-going", "-q"),
        *("-D", f"language={edition.language}"),
        *(extra or []),
        *(str(edition.stage), str(edition.html)),
    ]


def build(extra: list[str] | None = None) -> int:
    """Stage every edition, then run Sphinx on them side by side (one process each)."""
    for edition in EDITIONS.values():
        stage(edition)
    _copy_tree(mathjax_es5(), BUILD / "static" / "mathjax")  # conf.py: html_static_path
    # Written anew each time (a page removed from the course must leave the site); what Sphinx
    # read is cached in each edition's doctrees/, outside the published folder.
    shutil.rmtree(HTML, ignore_errors=True)
    HTML.mkdir(parents=True)
    runs = []
    for edition in EDITIONS.values():
        log = (edition.build / "sphinx.log").open("w+", encoding="utf-8")
        command = sphinx_command(edition, extra)
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        runs.append((edition, log, subprocess.Popen(command, stdout=log, stderr=log, env=env)))
    status = 0
    for edition, log, run in runs:
        code = run.wait()
        log.seek(0)
        output = log.read().strip()
        log.close()
        if output or code:
            print(f"--- the {edition.name} edition ({edition.language}): exit code {code}")
            print(output)
        status = status or code
    return status


if __name__ == "__main__":
    raise SystemExit(build(sys.argv[1:]))
