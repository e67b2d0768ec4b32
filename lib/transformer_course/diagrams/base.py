"""Drawing primitives for the course's diagrams (boxes, arrows with shapes, byte-stable files).

Introduced in 00_setup (the roadmap) and used by every diagram of the package. A canvas's
data coordinates are inches, so a box of width 2 is 2 inches wide whatever the figure size,
and a font size in points means the same thing everywhere.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.artist import Artist
from matplotlib.collections import Collection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.text import Text

from .. import _checks as check
from ..i18n import language
from ..viz.fonts import font_family

#: Fixed fonts that ship with matplotlib, a fixed SVG id salt and no dates: the same code gives
#: the same bytes, so a test can regenerate every diagram and compare.
STYLE = {
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "svg.fonttype": "path",  # text as glyph outlines: the SVG looks the same on every viewer
    "svg.hashsalt": "transformer-course",
    "path.sketch": None,
    "figure.dpi": 100,
    "savefig.dpi": 100,
}
SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
PNG_METADATA = {"Software": None}
#: The metadata field (PNG tEXt, SVG <dc:description>) that carries a picture's meaning.
MEANING_FIELD = "Description"
MEANING_PREFIX = "course-diagram sha256:"

#: Colours: one per kind of stage, so the same colour means the same kind of thing in every picture.
PALETTE = {
    "data": "#e8eef7",
    "embed": "#dbeedd",
    "attention": "#fde2c8",
    "norm": "#efe3f6",
    "ffn": "#d6eef2",
    "output": "#f7dada",
    "block": "#f6f6f6",
    "modern": "#fff2b3",
    "muted": "#f2f2f2",
    "highlight": "#ff9f1c",
}
EDGE = "#333333"
SHAPE_COLOUR = "#1f4e8c"
MONO = "DejaVu Sans Mono"


def mono_family() -> list[str]:
    """The monospace family for shapes and code in the current language: DejaVu Sans Mono, and
    for Chinese the CJK subset behind it (an arrow label such as "权重 (4, 4, 16, 16)")."""
    return [MONO, *font_family(language())[1:]]


def localised(draw: Callable[..., Figure]) -> Callable[..., Figure]:
    """Draw a diagram in the learner's language (``setup_notebook(lang=...)`` or
    ``i18n.in_language``): its texts come through the catalog, its font can draw them."""

    @functools.wraps(draw)
    def drawn_in_language(*args, **kwargs) -> Figure:
        with mpl.rc_context({"font.family": font_family(language())}):
            return draw(*args, **kwargs)

    return drawn_in_language


@dataclass(frozen=True)
class Box:
    """A drawn box: its centre and size in inches, for attaching arrows."""

    x: float
    y: float
    w: float
    h: float

    @property
    def top(self) -> tuple[float, float]:
        return (self.x, self.y + self.h / 2)

    @property
    def bottom(self) -> tuple[float, float]:
        return (self.x, self.y - self.h / 2)

    @property
    def left(self) -> tuple[float, float]:
        return (self.x - self.w / 2, self.y)

    @property
    def right(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y)


def canvas(width: float, height: float) -> tuple[Figure, object]:
    """A figure of ``width`` × ``height`` inches whose one axes uses inches as data units."""
    check.number("width", width, above=0)  # inches
    check.number("height", height, above=0)
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(width, height))
        ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def box(
    ax,
    x: float,
    y: float,
    w: float,
    h: float,
    text: str,
    colour: str = PALETTE["data"],
    *,
    fontsize: float = 11,
    bold: bool = False,
    edge: str | None = None,
    linewidth: float = 1.2,
    zorder: float = 2,
) -> Box:
    """A rounded box centred at (x, y) with centred text."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.08",
            facecolor=colour,
            edgecolor=edge or EDGE,
            linewidth=linewidth,
            zorder=zorder,
        )
    )
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=fontsize,
        color="black",
        fontweight="bold" if bold else "normal",
        zorder=zorder + 0.1,
    )
    return Box(x, y, w, h)


def frame(
    ax,
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    colour: str = PALETTE["block"],
    *,
    dashed: bool = False,
    edge: str = EDGE,
    linewidth: float = 1.2,
) -> None:
    """A large background rectangle (a block, an encoder) from corner (x0, y0) to (x1, y1)."""
    ax.add_patch(
        FancyBboxPatch(
            (x0, y0),
            x1 - x0,
            y1 - y0,
            boxstyle="round,pad=0,rounding_size=0.15",
            facecolor=colour,
            edgecolor=edge,
            linewidth=linewidth,
            linestyle="--" if dashed else "-",
            zorder=0.5,
        )
    )


def arrow(
    ax,
    start: tuple[float, float],
    end: tuple[float, float],
    label: str | None = None,
    *,
    side: str = "right",
    offset: float = 0.1,
    connection: str = "arc3",
    fontsize: float = 9.5,
    label_at: tuple[float, float] | None = None,
) -> None:
    """An arrow from ``start`` to ``end``; ``label`` (a shape) is written beside its middle."""
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=12,
            linewidth=1.2,
            color=EDGE,
            connectionstyle=connection,
            shrinkA=0,
            shrinkB=0,
            zorder=1,
        )
    )
    if label:
        shape_label(
            ax,
            start,
            end,
            label,
            side=side,
            offset=offset,
            fontsize=fontsize,
            at=label_at,
        )


def shape_label(
    ax,
    start: tuple[float, float],
    end: tuple[float, float],
    text: str,
    *,
    side: str = "right",
    offset: float = 0.1,
    fontsize: float = 9.5,
    at: tuple[float, float] | None = None,
) -> None:
    """A shape such as ``(4, 16, 64)`` written in blue monospace beside an arrow's middle."""
    check.choice("side", side, ("right", "left", "above", "below"))
    mx, my = at or ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    dx = {"right": offset, "left": -offset}.get(side, 0.0)
    dy = {"above": offset, "below": -offset}.get(side, 0.0)
    ha = {"right": "left", "left": "right"}.get(side, "center")
    va = {"above": "bottom", "below": "top"}.get(side, "center")
    ax.text(
        mx + dx,
        my + dy,
        text,
        ha=ha,
        va=va,
        fontsize=fontsize,
        family=mono_family(),
        color=SHAPE_COLOUR,
        zorder=3,
    )


def line(ax, points: Sequence[tuple[float, float]], *, arrow_end: bool = True) -> None:
    """A polyline through ``points`` (a residual path), with an arrow head on its last segment."""
    xs, ys = zip(*points[:-1] if arrow_end else points, strict=True)
    ax.plot(xs, ys, color=EDGE, linewidth=1.2, zorder=1, solid_capstyle="butt")
    if arrow_end:
        arrow(ax, points[-2], points[-1])


def plus(ax, x: float, y: float, *, radius: float = 0.16, symbol: str = "+") -> Box:
    """The residual ⊕ node."""
    from matplotlib.patches import Circle

    ax.add_patch(Circle((x, y), radius, facecolor="white", edgecolor=EDGE, linewidth=1.2, zorder=2))
    ax.text(x, y, symbol, ha="center", va="center", fontsize=13, color=EDGE, zorder=3)
    return Box(x, y, 2 * radius, 2 * radius)


def note(
    ax,
    x: float,
    y: float,
    text: str,
    *,
    fontsize: float = 9.5,
    ha: str = "left",
    colour: str = "#444444",
    style: str = "italic",
    **kwargs,
) -> None:
    """A small explanatory note (no box)."""
    ax.text(
        x,
        y,
        text,
        ha=ha,
        va="center",
        fontsize=fontsize,
        color=colour,
        style=style,
        zorder=3,
        **kwargs,
    )


def badge(ax, x: float, y: float, tag: str, colour: str = "#555555") -> None:
    """A small white-on-``colour`` tag (a notebook number) with its top-left corner at (x, y)."""
    ax.text(
        x,
        y,
        tag,
        ha="left",
        va="top",
        fontsize=8.5,
        color="white",
        fontweight="bold",
        zorder=4,
        bbox={"boxstyle": "round,pad=0.18", "facecolor": colour, "edgecolor": "none"},
    )


def title(ax, x: float, y: float, text: str, *, fontsize: float = 15) -> None:
    """A diagram's title."""
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, fontweight="bold", zorder=3)


@contextmanager
def drawing() -> Iterator[None]:
    """The course's fixed style while a diagram is drawn and saved."""
    with mpl.rc_context(STYLE):
        yield


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as SVG or PNG bytes, identical on every run of the same code and matplotlib.

    The file carries the figure's meaning (:func:`figure_meaning`) in its metadata, so that
    :func:`same_picture` can tell a changed diagram from the same diagram rasterised by
    another matplotlib release (measured: matplotlib 3.10.0 and 3.11.2 draw none of the
    course's 30 pictures with the same bytes, and every one with the same meaning).
    """
    check.choice("fmt", fmt, ("svg", "png"))
    buffer = io.BytesIO()
    with drawing():
        metadata = dict(SVG_METADATA if fmt == "svg" else PNG_METADATA)
        metadata[MEANING_FIELD] = MEANING_PREFIX + figure_meaning(fig)
        fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


def figure_meaning(fig: Figure) -> str:
    """What a figure shows, as a SHA-256: every visible artist's kind, text, size, colours and
    (for boxes, arrows and lines) place, in drawing order. It is computed from the figure, not from pixels, so it does not
    change when a matplotlib release rasterises the same figure differently (antialiasing,
    glyph hinting, SVG path ids); it does change when a label, a box, an arrow or a colour does.
    """
    fig.draw_without_rendering()  # lay out once, so that extents are final
    described = [
        _artist_meaning(artist)
        for artist in fig.findobj(lambda a: isinstance(a, Artist) and a.get_visible())
    ]
    text = json.dumps([d for d in described if d], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rounded(values, digits: int = 1) -> list:
    return np.round(np.asarray(values, dtype=float), digits).ravel().tolist()


def _artist_meaning(artist: Artist) -> dict | None:
    """One artist's kind and what a reader sees of it (None: nothing of its own to show)."""
    if isinstance(artist, Text):
        if not artist.get_text():
            return None
        # No place: attention_formula lays its pieces out from measured glyph widths, which
        # differ between matplotlib releases (3.10.0 vs 3.11.2: up to 24 px); the boxes and
        # arrows a text labels are placed by the course's code and keep their extents.
        return {
            "text": artist.get_text(),
            "size": artist.get_fontsize(),
            "colour": to_hex(artist.get_color(), keep_alpha=True),
            "weight": str(artist.get_fontweight()),
            "align": [artist.get_horizontalalignment(), artist.get_verticalalignment()],
            "rotation": round(artist.get_rotation(), 1),
        }
    if isinstance(artist, Patch):
        return {
            "patch": type(artist).__name__,
            "extent": _rounded(artist.get_extents().get_points()),
            "fill": to_hex(artist.get_facecolor(), keep_alpha=True),
            "edge": to_hex(artist.get_edgecolor(), keep_alpha=True),
            "width": round(float(artist.get_linewidth()), 2),
        }
    if isinstance(artist, Line2D):
        return {
            "line": _rounded(artist.get_transform().transform(artist.get_xydata())),
            "colour": to_hex(artist.get_color(), keep_alpha=True),
            "style": str(artist.get_linestyle()),
            "marker": str(artist.get_marker()),
        }
    if isinstance(artist, (AxesImage, Collection)):
        array = artist.get_array()
        return {
            "values": None if array is None else _rounded(array, 4),
            "kind": type(artist).__name__,
        }
    return None


def picture_meaning(data: bytes) -> str | None:
    """The meaning :func:`render` wrote into a PNG or SVG file, or None when it has none."""
    if data.startswith(b"\x89PNG"):
        position = 8
        while position + 8 <= len(data):
            (length,) = struct.unpack(">I", data[position : position + 4])
            kind = data[position + 4 : position + 8]
            body = data[position + 8 : position + 8 + length]
            if kind == b"tEXt" and body.startswith(MEANING_FIELD.encode() + b"\0"):
                return body.split(b"\0", 1)[1].decode("latin-1")
            position += 12 + length
        return None
    found = re.search(rb"<dc:description>([^<]*)</dc:description>", data)
    return found.group(1).decode("utf-8") if found else None


def picture_size(data: bytes) -> tuple:
    """A PNG's (width, height) in pixels, or an SVG's width, height and viewBox."""
    if data.startswith(b"\x89PNG"):
        return struct.unpack(">II", data[16:24])
    tag = re.search(rb"<svg [^>]*>", data)
    if tag is None:
        return ()
    return tuple(re.findall(rb'(?:width|height|viewBox)="([^"]*)"', tag.group(0)))


def same_picture(a: bytes, b: bytes) -> bool:
    """True when two rendered pictures show the same diagram at the same size.

    Pictures that carry a meaning (every one :func:`render` writes) are compared by meaning
    and size, so a matplotlib release that draws the same figure with other bytes changes
    nothing; a picture without one is compared byte for byte.
    """
    meaning_a, meaning_b = picture_meaning(a), picture_meaning(b)
    if meaning_a is None or meaning_b is None:
        return a == b
    return meaning_a == meaning_b and picture_size(a) == picture_size(b)


def save(
    fig: Figure, stem: str, directory: Path | str, formats: Sequence[str] = ("svg", "png")
) -> list[Path]:
    """Write ``directory/stem.svg`` and ``.png``; returns the paths (only files whose picture
    changed are rewritten: :func:`same_picture`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = directory / f"{stem}.{fmt}"
        data = render(fig, fmt)
        if not path.exists() or not same_picture(path.read_bytes(), data):
            path.write_bytes(data)
        written.append(path)
    return written
