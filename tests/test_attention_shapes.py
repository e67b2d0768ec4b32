"""Notebooks 04–08 print shapes that tell T from D (issue 34, learner review finding 5).

Their running example is the course batch cut to windows of T = 12 tokens
(``embedding.course_batch(seed=0).crop(12)``, :data:`diagrams.ATTENTION_EXAMPLE`) while a head
holds D = 16 numbers, so a (T, T) matrix never prints like a (T, D) one and a transposed slip
shows in the printout. Read from the stored outputs of both editions (strict nbval keeps them
equal to a fresh run).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from transformer_course.diagrams import ATTENTION_EXAMPLE, COURSE

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["04_qkv", "05_scale", "06_mask", "07_softmax", "08_v_attention"]
SHAPE = re.compile(r"\((\d+(?:, \d+)+)\)")
#: The one place a (B, H, D, D) shape is printed on purpose: 04's transposed slip QᵀK.
SLIP = ("04_qkv", "c029")


def _printed(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _shapes(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(d) for d in found.split(", ")) for found in SHAPE.findall(text)]


@pytest.mark.parametrize("edition", ["", "zh/"])
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_running_example_tells_T_from_D(name, edition):
    T, D, B, H, C = (
        ATTENTION_EXAMPLE.T,
        ATTENTION_EXAMPLE.D,
        ATTENTION_EXAMPLE.B,
        ATTENTION_EXAMPLE.H,
        ATTENTION_EXAMPLE.C,
    )
    assert T != D and (B, H, C, D) == (COURSE.B, COURSE.H, COURSE.C, COURSE.D)
    nb = nbformat.read(REPO / "notebooks" / f"{edition}{name}.ipynb", as_version=4)
    setup = next(cell for cell in nb.cells if cell.id == "c004")
    assert f"embedding.course_batch(seed=0).crop({T})" in setup.source, "the running example"
    printed = {cell.id: _printed(cell) for cell in nb.cells if cell.cell_type == "code"}
    shapes = [(cid, shape) for cid, text in printed.items() for shape in _shapes(text)]
    if name != "07_softmax":  # 07 prints rows and tables, no shapes
        assert any(shape in {(B, T, C), (B, H, T, D), (B, H, T, T)} for _, shape in shapes), name
    for cid, shape in shapes:
        assert shape != (B, COURSE.T, C), (cid, shape)  # the uncut window of 02–03
        if len(shape) == 4 and shape[:2] == (B, H) and (name, cid) != SLIP:
            assert shape[2:] in {(T, D), (T, T)}, (cid, shape)
    if name == SLIP[0]:
        assert _shapes(printed[SLIP[1]]) == [(B, H, T, D), (B, H, T, T), (B, H, D, D)]
