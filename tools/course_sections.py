"""The main path and the folded "Going deeper" sections of a course notebook.

One rule, used by every tool that needs it (``tools/measure_course.py`` counts words with it,
``tools/nbtool.py fold`` writes the folding metadata from it, ``site/course_site.py`` folds the
same sections on the website), and the same rule as the word counter of the project's
before-stop hook:

- a *Going-deeper heading* is a markdown cell whose first line is a heading (``#`` … ``######``)
  containing "Going deeper" (any case), e.g. ``## Going deeper: the AVX2 pins``;
- its section covers every cell after it up to the next heading cell of the same or a higher
  level (fewer ``#``), which is what JupyterLab hides under a collapsed heading;
- *main-path words* are the prose of the markdown cells outside those sections and outside
  ``<details>`` blocks, with code blocks, ``$$…$$``, ``$…$``, HTML tags and link targets removed.

A heading cell that carries ``jp-MarkdownHeadingCollapsed`` also counts as folded (the hook
counts it so); ``check_folding`` reports such a heading when it is not a Going-deeper heading,
because the fold tool only ever collapses Going-deeper headings.

Pure Python on the notebook's JSON (no nbformat needed), so every tool and test can import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

#: The Chinese edition's headings say 深入一步 ("one step deeper"; tools/i18n.py).
GOING_DEEPER = re.compile(r"(?i)going deeper|深入一步")
HEADING = re.compile(r"\s*(#{1,6})\s")
#: JupyterLab's cell metadata for a collapsed heading (JupyterLab >= 3.1 reads and writes it).
JUPYTERLAB_COLLAPSED = "jp-MarkdownHeadingCollapsed"
DETAILS = re.compile(r"<details.*?</details>", re.S)
_WORD = re.compile(r"[A-Za-z0-9\u4e00-\u9fff][\w'\u4e00-\u9fff-]*")


def source(cell: Mapping) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def heading_level(cell: Mapping) -> int | None:
    """1–6 for a markdown cell that starts with a heading, else None."""
    if cell.get("cell_type") != "markdown":
        return None
    match = HEADING.match(source(cell))
    return len(match.group(1)) if match else None


def is_going_deeper(cell: Mapping) -> bool:
    """A markdown heading cell whose first line says "Going deeper"."""
    text = source(cell).strip()
    return heading_level(cell) is not None and bool(GOING_DEEPER.search(text.splitlines()[0]))


def folded_flags(cells: list[Mapping]) -> Iterator[tuple[Mapping, bool]]:
    """Each cell with True when it lies in a folded section (its heading included)."""
    folded: int | None = None  # the level of the open folded section's heading
    for cell in cells:
        level = heading_level(cell)
        if level is not None:
            if folded is not None and level <= folded:
                folded = None
            collapsed = cell.get("metadata", {}).get(JUPYTERLAB_COLLAPSED)
            if folded is None and (is_going_deeper(cell) or collapsed):
                folded = level
        yield cell, folded is not None


def words(markdown: str) -> int:
    """The prose words of a markdown text (code, maths, tags and link targets removed)."""
    markdown = re.sub(r"```.*?```|\$\$.*?\$\$", " ", markdown, flags=re.S)
    markdown = re.sub(r"\$[^$\n]+\$|<img[^>]*>|<[^>]+>|\]\([^)]*\)", " ", markdown)
    return len(_WORD.findall(markdown))


def count_words(nb: Mapping) -> tuple[int, int]:
    """(main-path words, folded words) of a notebook: Going-deeper sections and <details> fold."""
    main = folded = 0
    for cell, in_fold in folded_flags(nb["cells"]):
        if cell.get("cell_type") != "markdown":
            continue
        text = source(cell)
        if in_fold:
            folded += words(text)
        else:
            main += words(DETAILS.sub(" ", text))
            folded += sum(words(block) for block in DETAILS.findall(text))
    return main, folded


# -- folding metadata --------------------------------------------------------------------------
#: Colab keeps the headings it shows collapsed in the notebook's metadata, as the ids of those
#: heading cells (Colab's cell id is ``cell.metadata.id``): ``{"colab": {"collapsed_sections":
#: ["<id>", ...]}}``.
COLAB = "colab"
COLAB_COLLAPSED = "collapsed_sections"


def fold(nb: dict) -> bool:
    """Fold every Going-deeper section where learners read; True when ``nb`` changed.

    JupyterLab: ``jp-MarkdownHeadingCollapsed: true`` on each Going-deeper heading cell, and on
    no other heading (a collapsed main-path heading would hide the main path). Colab: the same
    cells' ids in ``metadata.colab.collapsed_sections``, each cell's ``metadata.id`` equal to
    its nbformat id. A Going-deeper heading cell holding more than its heading is split first
    (:func:`split_headings`). (The website folds the same sections when it is built:
    site/going_deeper.py.) Needs nbformat 4.5 cell ids; idempotent.
    """
    before = repr((nb.get("metadata"), [(c.get("metadata"), source(c)) for c in nb["cells"]]))
    split_headings(nb)
    collapsed = []
    for cell in nb["cells"]:
        meta = cell.setdefault("metadata", {})
        if is_going_deeper(cell):
            if not cell.get("id"):
                raise ValueError("fold needs cell ids (nbformat 4.5): run tools/nbtool.py run")
            meta[JUPYTERLAB_COLLAPSED] = True
            meta["id"] = cell["id"]
            collapsed.append(cell["id"])
        else:
            meta.pop(JUPYTERLAB_COLLAPSED, None)
            meta.pop("id", None)
    colab = nb.setdefault("metadata", {}).get(COLAB, {})
    if collapsed:
        nb["metadata"][COLAB] = {**colab, COLAB_COLLAPSED: collapsed}
    elif COLAB in nb["metadata"]:
        colab.pop(COLAB_COLLAPSED, None)
        if not colab:
            del nb["metadata"][COLAB]
    return before != repr(
        (nb.get("metadata"), [(c.get("metadata"), source(c)) for c in nb["cells"]])
    )


def split_headings(nb: dict) -> None:
    """Give each Going-deeper heading a cell of its own: a collapsed heading hides the cells
    after it, not the rest of its own cell. The rest becomes a markdown cell right after it
    (id: the heading's id + ``-body``; ``tools/nbtool.py`` renumbers ids on its next run)."""
    ids = {c.get("id") for c in nb["cells"]}
    cells = []
    for cell in nb["cells"]:
        cells.append(cell)
        heading, _, rest = source(cell).strip().partition("\n")
        if is_going_deeper(cell) and rest.strip():
            cell["source"] = heading
            body_id = f"{cell.get('id')}-body"
            while body_id in ids:
                body_id += "-"
            ids.add(body_id)
            body = {"cell_type": "markdown", "id": body_id, "metadata": {}, "source": rest.strip()}
            if type(cell) is not dict:  # an nbformat NotebookNode: keep attribute access
                from nbformat import from_dict

                body = from_dict(body)
            cells.append(body)
    nb["cells"][:] = cells


def check_folding(nb: Mapping) -> list[str]:
    """What is not folded as :func:`fold` folds it (empty when consistent)."""
    problems = []
    expected = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {})
        first = source(cell).strip().splitlines()[0][:60] if source(cell).strip() else ""
        if is_going_deeper(cell):
            expected.append(cell.get("id"))
            if meta.get(JUPYTERLAB_COLLAPSED) is not True:
                problems.append(f"{cell.get('id')} {first!r}: not collapsed in JupyterLab")
            if meta.get("id") != cell.get("id"):
                problems.append(f"{cell.get('id')} {first!r}: metadata.id (Colab's id) differs")
            if "\n" in source(cell).strip():
                problems.append(f"{cell.get('id')} {first!r}: more than the heading (stays shown)")
        elif JUPYTERLAB_COLLAPSED in meta:
            problems.append(
                f"{cell.get('id')} {first!r}: collapsed, but not a Going-deeper heading"
            )
    colab = nb.get("metadata", {}).get(COLAB, {}).get(COLAB_COLLAPSED, [])
    if colab != expected:
        problems.append(f"Colab's collapsed_sections {colab} != Going-deeper headings {expected}")
    return problems
