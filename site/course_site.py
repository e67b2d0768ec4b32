"""Build the course website: stage the stored notebooks and pages, then run Sphinx on them.

    python site/course_site.py            # what `make site` runs: site/_build/html

The site is Sphinx + MyST-NB + sphinx-book-theme (configured in site/conf.py) over a staged
copy of the repository's pages in ``site/_build/src`` (git-ignored), laid out as in the
repository so every relative link keeps working:

- ``index.md``: the README (what the course is, the two commands, the course map), with the
  roadmap picture when ``images/roadmap.svg`` (or .png) exists, and the table of contents;
- ``notebooks/NN_*.ipynb``: the stored notebooks, never executed (nbval already checks their
  outputs); each widget view becomes its still picture from the notebook's saved widget state
  with a note that it comes alive in JupyterLab or Colab (a static page has no kernel);
- ``GLOSSARY.md`` and ``SOURCES.md`` when they exist, and ``API_REFERENCE.md``, which is not a
  file of the repository: it is generated here from the library's docstrings
  (``tools/api_reference.py``), so the reference always matches the library it documents.

Links to repository files that are not pages of the site (``lib/…``, ``data/README.md``) point
to the repository on GitHub. Nothing is fetched from the network, at build time or when a page
is viewed: MathJax is copied from the ``django-static-mathjax`` package into the site, and the
Colab badge is a local picture.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
REPO = SITE.parent
BUILD = SITE / "_build"
STAGE = BUILD / "src"
HTML = BUILD / "html"
#: Top-level Markdown pages, in the order of the site's "Reference" part; absent ones are skipped.
REFERENCE_PAGES = ["GLOSSARY.md", "SOURCES.md", "API_REFERENCE.md"]
#: Reference pages written at build time rather than read from the repository.
GENERATED_PAGES = {"API_REFERENCE.md"}
#: The course map on the landing page: the whole model (gpt_overview), as README.md shows it.
ROADMAP_NAMES = ["images/roadmap.svg", "images/roadmap.png", "images/gpt_overview.png"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "site_assets/open-in-colab.svg"
#: Markdown links and images: [text](target "title") -- the target is group 2.
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
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


def notebook_paths() -> list[Path]:
    """The course's notebooks in course order (00, 01, 02, 02b, 03, ...)."""
    return sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


# -- links ------------------------------------------------------------------------------------
def rewrite_links(text: str, page: str, staged: set[str], repository_url: str) -> str:
    """Keep links to pages and pictures of the site; send other repository files to GitHub.

    ``page`` is the page's path in the repository (e.g. ``notebooks/01_x.ipynb``), ``staged``
    the repository paths the site has.
    """
    folder = Path(page).parent

    def fix(match: re.Match) -> str:
        target = match.group(2)
        if target == COLAB_BADGE_URL:
            depth = len(folder.parts)
            return f"{match.group(1)}{'../' * depth}{LOCAL_BADGE}{match.group(3)}"
        if re.match(r"^([a-z]+:|#|/)", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = _normalise(folder / path)
        if resolved is None or resolved in staged or not (REPO / resolved).exists():
            return match.group(0)
        url = f"{repository_url}/blob/main/{resolved}" + (f"#{anchor}" if anchor else "")
        return f"{match.group(1)}{url}{match.group(3)}"

    return LINK.sub(fix, text)


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


def still_outputs(view: dict, models: dict, colab_url: str) -> list[dict]:
    """What a stored widget view becomes on the site: a note and the pictures it last showed."""
    model_id = view.get("model_id", "")
    tree = _walk(models, model_id)
    progress = _progress(tree)
    if progress is not None:
        return [_html_output(progress, "progress bar (as it ended when the notebook ran)")]
    knobs = [k for k in (_knob(m) for m in tree) if k]
    shown: list[dict] = []
    for model in tree:
        state = model.get("state", {})
        if model.get("model_name") == "HTMLModel" and state.get("value"):
            shown.append(_html_output(f'<div class="course-widget-html">{state["value"]}</div>'))
        elif model.get("model_name") == "OutputModel":
            shown.extend(state.get("outputs", []))
    knob_text = f" Its knobs here: {'; '.join(knobs)}." if knobs else ""
    what = "a still picture of what it showed" if shown else "no picture saved for this page"
    note = (
        '<div class="course-widget-note" role="note"><p><strong>Interactive widget</strong>'
        f" — on this page, {what} when the notebook ran.{knob_text} It comes alive when you run"
        f' the notebook in JupyterLab (<code>make lab</code>) or <a href="{html.escape(colab_url)}">'
        "in Colab</a>.</p></div>"
    )
    plain = "Interactive widget: run the notebook in JupyterLab or Colab to use it."
    return [_html_output(note, plain), *shown]


def _html_output(markup: str, plain: str = "") -> dict:
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": markup, "text/plain": plain or "(widget display)"},
    }


def stage_notebook(
    source: Path, target: Path, staged: set[str], repository_url: str, colab_url: str
) -> None:
    """Copy one notebook for the site: widgets as stills, links fixed, widget state dropped."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    models = _models(nb)
    page = f"notebooks/{source.name}"
    for cell in nb["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            cell["source"] = rewrite_links(text, page, staged, repository_url)
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            outputs.extend(still_outputs(view, models, colab_url) if view else [output])
        if "outputs" in cell:
            cell["outputs"] = outputs
    # Without saved state MyST-NB loads no widget JavaScript (it would come from a CDN).
    nb.get("metadata", {}).pop("widgets", None)
    _write_if_changed(target, json.dumps(nb, ensure_ascii=False, indent=1))


# -- pages ------------------------------------------------------------------------------------
def landing_page(
    readme: str, notebooks: list[Path], references: list[str], site: str, roadmap: str | None
) -> str:
    """index.md: the README (notebook names linked, roadmap shown) and the table of contents.

    ``roadmap`` is the repository path of the course's roadmap picture, or None.
    """
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
        text = f"{title}\n\n![The course's roadmap: the model and the notebook for each part]({roadmap})\n{rest}"
    toc = ["", "```{toctree}", ":hidden:", ":caption: Notebooks", ""]
    toc += [f"notebooks/{p.stem}" for p in notebooks]
    toc += ["```", "", "```{toctree}", ":hidden:", ":caption: Reference", ""]
    toc += [Path(r).stem for r in references]
    toc += ["```", ""]
    return text + "\n" + "\n".join(toc)


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


def stage() -> Path:
    """Lay out site/_build/src from the repository; returns that folder."""
    repository_url = repository()
    notebooks = notebook_paths()
    if not notebooks:
        raise FileNotFoundError(f"no notebooks/NN_*.ipynb under {REPO}")
    references = [n for n in REFERENCE_PAGES if n in GENERATED_PAGES or (REPO / n).exists()]
    if STAGE.exists():  # pages removed from the repository leave the site too
        for path in STAGE.rglob("*"):
            if path.is_file() and path.suffix in (".md", ".ipynb"):
                path.unlink()
    staged = {f"notebooks/{p.name}" for p in notebooks} | set(references) | {"README.md"}
    for copied in (STAGE / "images", BUILD / "extra"):  # pictures removed leave the site too
        shutil.rmtree(copied, ignore_errors=True)
    (BUILD / "extra").mkdir(parents=True, exist_ok=True)
    if (REPO / "images").is_dir():
        _copy_tree(REPO / "images", STAGE / "images")
        # Also as they are, for pictures that raw HTML shows (<img src="../images/...">).
        _copy_tree(REPO / "images", BUILD / "extra" / "images")
        staged |= {p.relative_to(REPO).as_posix() for p in (REPO / "images").rglob("*")}
    _copy_tree(SITE / "assets", STAGE / "site_assets")
    _copy_tree(mathjax_es5(), BUILD / "static" / "mathjax")

    for path in notebooks:
        colab = f"https://colab.research.google.com/github/{repository_url.removeprefix('https://github.com/')}/blob/main/notebooks/{path.name}"
        stage_notebook(path, STAGE / "notebooks" / path.name, staged, repository_url, colab)
    for name in references:
        text = reference_text(name)
        _write_if_changed(STAGE / name, rewrite_links(text, name, staged, repository_url))
    readme = rewrite_links(
        (REPO / "README.md").read_text(encoding="utf-8"), "README.md", staged, repository_url
    )
    roadmap = next((n for n in ROADMAP_NAMES if (REPO / n).exists()), None)
    landing = landing_page(readme, notebooks, references, site_url(repository_url), roadmap)
    _write_if_changed(STAGE / "index.md", landing)
    return STAGE


def build(extra: list[str] | None = None) -> int:
    """Stage, then run Sphinx (warnings are errors: a broken link or page fails the build)."""
    from sphinx.cmd.build import build_main

    stage()
    # Written anew each time (a page removed from the course must leave the site); what Sphinx
    # read is cached in doctrees/, outside the published folder.
    shutil.rmtree(HTML, ignore_errors=True)
    args = ["-b", "html", "-c", str(SITE), "-d", str(BUILD / "doctrees"), "-W", "--keep-going"]
    args.append("-q")
    return build_main([*args, *(extra or []), str(STAGE), str(HTML)])


if __name__ == "__main__":
    raise SystemExit(build(sys.argv[1:]))
