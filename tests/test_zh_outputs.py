"""What a Chinese notebook prints is Chinese (issue 36, item 2): its stored outputs hold no
English prose for the learner.

Every stored output of ``notebooks/zh/*.ipynb`` is read as the learner sees it: stream text,
the plain-text form of results, Markdown and error values; of a pandas table, its headers and
index (the ``<th>`` cells of its HTML: its data cells are values and token strings). Each line is judged by ``tests/zh_english.py``'s rule: identifiers, code, numbers,
token strings (in quotes) and PyTorch's own exceptions are exempt; a clause of English words or
an all-lower-case English label is not. Python tracebacks are exempt (the frames are code).
Pictures are checked by the pictures' own test.

The outputs are what ``tools/nbtool.py run`` recorded: after a change to the library's messages
or to a notebook's labels, re-record the Chinese notebooks before this test can pass.
``python tests/test_zh_outputs.py [NB ...]`` lists every English line it finds, by notebook
(or in executed copies elsewhere).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from zh_english import english_run

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "zh"
CHINESE = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
_HEADER = re.compile(r"<th[^>]*>(.*?)</th>", re.S)

#: Lines a Chinese notebook prints in English on purpose, with why: (notebook, text in the line).
ALLOWED: set[tuple[str, str]] = {
    # The seed sentence spelled as BPE symbols after each merge ("ti d y </w> ... t o </w>"):
    # token strings, the same in both editions.
    ("01_tokenization", " t o </w> "),
    # The book's words around "close" (w2v.words of the corpus), quoted as they are.
    ("02b_word2vec", "  ... "),
}


def output_lines(cell: dict) -> Iterator[str]:
    """The lines a learner reads in one code cell's stored outputs."""
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            yield from "".join(output.get("text", "")).splitlines()
        elif kind in ("execute_result", "display_data"):
            bundle = output.get("data", {})
            if "image/png" in bundle or "image/svg+xml" in bundle:
                continue  # a picture: its words are checked where it is drawn
            if "application/vnd.jupyter.widget-view+json" in bundle:
                continue  # a widget's state, not text the learner reads
            html = "".join(bundle.get("text/html", ""))
            if "<table" in html:
                # A pandas table: its headers and index (<th>) are labels; its cells (<td>) are
                # values, token strings among them, which stay as they are.
                yield from (unescape(re.sub(r"<[^>]+>", "", th)) for th in _HEADER.findall(html))
                continue
            text = bundle.get("text/markdown") or bundle.get("text/plain") or ""
            yield from "".join(text).splitlines()
        elif kind == "error":
            yield f"{output.get('ename', '')}: {output.get('evalue', '')}"


def english_lines(path: Path) -> list[tuple[str, str, str]]:
    """(cell id, line, the English in it) for every English line in ``path``'s outputs."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in output_lines(cell):
            english = english_run(line)
            allowed = any(name == path.stem and text in line for name, text in ALLOWED)
            if english and not allowed:
                found.append((cell.get("id", "?"), line.strip(), english))
    return found


def test_the_rule_finds_english_lines(tmp_path):
    sample = tmp_path / "10_x.ipynb"
    cells = [
        {
            "cell_type": "code",
            "id": "c1",
            "outputs": [
                {
                    "output_type": "stream",
                    "name": "stdout",
                    "text": "untrained model: 损失 11.54 against a vocabulary of 100,070\n未训练的模型：损失 11.54\n",
                },
                {
                    "output_type": "execute_result",
                    "data": {
                        "text/plain": "   reads  true next\n0  the  sales person",
                        "text/html": "<table><tr><th>reads</th><th>true next</th></tr>"
                        "<tr><th>0</th><td>the</td><td>sales person</td></tr></table>",
                    },
                },
            ],
        },
    ]
    sample.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert [line for _cid, line, _en in english_lines(sample)] == [
        "untrained model: 损失 11.54 against a vocabulary of 100,070",
        "true next",
    ]


@pytest.mark.parametrize("path", CHINESE, ids=[p.stem for p in CHINESE])
def test_no_english_in_the_stored_outputs(path):
    found = english_lines(path)
    shown = "\n".join(f"  {cid}: {line[:110]}   [{english}]" for cid, line, english in found[:25])
    assert not found, f"{path.name}: {len(found)} English output lines (re-recorded?)\n{shown}"


if __name__ == "__main__":
    paths = [Path(arg) for arg in sys.argv[1:]] or CHINESE
    total = 0
    for path in paths:
        found = english_lines(path)
        total += len(found)
        print(f"{path.name}: {len(found)} English lines")
        for cid, line, english in found:
            print(f"  {cid}: {line[:120]}   [{english}]")
    print(f"total: {total}")
