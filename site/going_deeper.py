"""Sphinx extension of the course site: every "Going deeper" section is a closed toggle.

A notebook's Going-deeper section (a heading whose text says "Going deeper", or 深入一步 in the
Chinese edition, and every cell up to the next heading of the same or a higher level:
``tools/course_sections.py``) is exactly the docutils ``section`` that MyST-NB builds from that heading. This post-transform keeps the
section's title (so the page's table of contents and anchors stay) and wraps the rest of the
section in ``<details class="course-going-deeper">``, closed: the site folds what JupyterLab's
collapsed headings and Colab's collapsed sections fold. (MyST-NB's own ``hide-*`` cell tags
hide code cells only, not markdown, and a section spans both.)
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from course_sections import GOING_DEEPER  # noqa: E402

#: The toggle's label, in the language of the edition (conf.py's ``language``).
SUMMARY = {
    "en": "Show this section (folded: not needed on the main path)",
    "zh_CN": "展开本节（已折叠：主线不需要它）",
}


class going_deeper(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes so
    """The folded body of a Going-deeper section."""


def visit_going_deeper(self, node: going_deeper) -> None:
    summary = SUMMARY.get(self.config.language, SUMMARY["en"])
    self.body.append(f'<details class="course-going-deeper"><summary>{summary}</summary>\n')


def depart_going_deeper(self, node: going_deeper) -> None:
    self.body.append("</details>\n")


class FoldGoingDeeper(SphinxPostTransform):
    """Wrap the body of every Going-deeper section in a closed :class:`going_deeper` node."""

    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for section in list(self.document.findall(nodes.section)):
            if not section.children or not isinstance(section[0], nodes.title):
                continue
            if not GOING_DEEPER.search(section[0].astext()) or len(section) < 2:
                continue
            body = list(section.children[1:])
            del section[1:]
            wrapper = going_deeper()
            wrapper.extend(body)
            section.append(wrapper)


def setup(app):
    app.add_node(going_deeper, html=(visit_going_deeper, depart_going_deeper))
    app.add_post_transform(FoldGoingDeeper)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
