"""README.zh-CN.md's route from mainland China: every address in one table, and the variables it
sets are the ones the course reads.

- The section "在中国大陆安装和运行" keeps every address in its table (a maintainer updates one
  place); the prose and the other rows name the variables, not the hosts.
- ``HF_ENDPOINT`` as the table writes it: the corpus download through a mirror, tested with the
  fake Hub of tests/test_corpus_download.py (a loopback server; every other connection refused).
- ``TORCH_INDEX`` and ``PIP_INDEX_URL``: the Makefile passes the first to tools/choose_torch.py
  (tests/test_choose_torch.py runs it against a mirror and an unreachable index); pip reads the
  second itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_corpus_download import _download, corpus_bytes, guard, hub  # noqa: F401 (fixtures)

from transformer_course.data.source import CORPUS_DATASET, CORPUS_FILENAME

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.zh-CN.md"
HEADING = "## 在中国大陆安装和运行"
ADDRESS = re.compile(r"https?://[^\s`)|>\"']+")


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start : end if end > 0 else len(text)]


def _table_rows(section: str) -> list[list[str]]:
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _setting(name: str) -> str:
    """The address the table's ``export NAME=...`` gives."""
    for row in _table_rows(_section()):
        found = re.search(rf"`export {name}=([^`]+)`", row[1])
        if found:
            return found.group(1)
    raise AssertionError(f"README.zh-CN.md's table sets no {name}")


def test_every_address_of_the_route_is_in_its_table_once():
    section = _section()
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    outside = [line for line in section.splitlines() if not line.startswith("|")]
    assert ADDRESS.findall(table), "the table lists the addresses"
    assert [a for line in outside for a in ADDRESS.findall(line)] == []
    addresses = ADDRESS.findall(table)
    assert len(addresses) == len(set(addresses)), "an address is listed twice"


@pytest.mark.parametrize("name", ["PIP_INDEX_URL", "TORCH_INDEX", "HF_ENDPOINT"])
def test_the_table_sets_the_variables_the_course_reads(name):
    assert _setting(name).startswith("https://")
    makefile = (REPO / "Makefile").read_text()
    if name == "TORCH_INDEX":
        assert '--index "$(TORCH_INDEX)"' in makefile
    if name == "PIP_INDEX_URL":  # pip reads it: every install in the Makefile goes through pip
        assert "python -m pip install" in makefile and "--index-url" not in makefile


def test_the_corpus_comes_through_a_mirror_named_by_hf_endpoint(
    hub,  # noqa: F811
    tmp_path,
    guard,  # noqa: F811
    corpus_bytes,  # noqa: F811
):
    # The README's mirror is a Hub at another host; the fake Hub stands in for it. Written as the
    # table writes it: a host with no path. A trailing slash (datasets 5.2 alone builds
    # "//api/models/atasets/..." from "https://host/" and gets a 404) the course strips, as the
    # table says: tests/test_corpus_download.py downloads through "http://host/".
    mirror = _setting("HF_ENDPOINT")
    assert mirror.count("/") == 2 and not mirror.endswith("/"), mirror
    assert "末尾多写的 / 由课程去掉" in _section() and CORPUS_DATASET in _section()
    line, data = _download(hub, tmp_path, guard)
    assert line == f"saved {data / CORPUS_FILENAME}"
    assert (data / CORPUS_FILENAME).read_bytes() == corpus_bytes
    assert hub.file_requests >= 1, "the file came from the mirror"
