"""Project-wide pytest plugin: a per-notebook time table at the end of every run.

nbval turns each notebook cell into a test item (``notebooks/NN_x.ipynb::Cell 3``); the
kernel start is part of the first item's set-up. Summing the set-up, call and tear-down
durations of a notebook's items gives the time that notebook costs the suite. With
pytest-xdist the reports of every worker reach the controller, which prints the table.
The browser tests (``make test-browser``) get the same table, one row per notebook.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict

import pytest

#: Every notebook's share of the suite; above it the table marks the notebook "SLOW".
NOTEBOOK_BUDGET_S = 120.0
#: The whole test command must stay below this on CI's 2-core machine (issue 7).
SUITE_BUDGET_S = 12 * 60

_BROWSER_ID = re.compile(r"^tests/test_browser\.py::(?P<test>\w+)\[(?P<notebook>[^\]]+)\]$")


class _TimeTable:
    def __init__(self) -> None:
        self.notebooks: dict[str, float] = defaultdict(float)
        self.cells: dict[str, int] = defaultdict(int)
        self.failed: set[str] = set()
        self.browser: dict[str, float] = defaultdict(float)
        self.other: dict[str, float] = defaultdict(float)
        self.started = time.monotonic()

    def add(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::")[0]
        if path.endswith(".ipynb"):
            self.notebooks[path] += report.duration
            if report.when == "call":
                self.cells[path] += 1
            if report.failed:
                self.failed.add(path)
            return
        browser = _BROWSER_ID.match(report.nodeid)
        if browser:
            self.browser[browser["notebook"]] += report.duration
        else:
            self.other[path] += report.duration

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.notebooks:
            total = "all notebooks (sum over workers)"
            width = max(len(total), *(len(p) for p in self.notebooks))
            out.append(f"{'notebook':<{width}}  {'cells':>5}  {'seconds':>8}")
            for path in sorted(self.notebooks):
                seconds = self.notebooks[path]
                flags = [
                    " FAILED" if path in self.failed else "",
                    " SLOW" if seconds > NOTEBOOK_BUDGET_S else "",
                ]
                out.append(
                    f"{path:<{width}}  {self.cells[path]:>5}  {seconds:>8.1f}{''.join(flags)}"
                )
            out.append(
                f"{total:<{width}}  {sum(self.cells.values()):>5}  "
                f"{sum(self.notebooks.values()):>8.1f}"
            )
        if self.browser:
            width = max(len(n) for n in self.browser)
            if out:
                out.append("")
            out.append(f"{'notebook in the browser':<{max(width, 23)}}  {'seconds':>8}")
            for name in sorted(self.browser):
                out.append(f"{name:<{max(width, 23)}}  {self.browser[name]:>8.1f}")
        if self.other:
            slowest = sorted(self.other.items(), key=lambda item: -item[1])[:5]
            if out:
                out.append("")
            out.append(
                f"other tests: {sum(self.other.values()):.1f} s in {len(self.other)} file(s); slowest: "
                + ", ".join(f"{path} {seconds:.1f} s" for path, seconds in slowest)
            )
        wall = time.monotonic() - self.started
        line = f"wall time of this pytest run: {wall:.1f} s"
        if self.notebooks:  # the suite with every notebook has a budget; partial runs do not
            verdict = "within" if wall <= SUITE_BUDGET_S else "OVER"
            line += f" ({verdict} the {SUITE_BUDGET_S // 60}-minute budget of the whole suite)"
        out.append(line)
        return out


#: nbval waits only 5 s (hard-coded) for each output message after a cell's reply; a cell that
#: streams many live plot updates on a loaded 2-core machine can lag longer than that and fail
#: with "Timeout of 5 seconds exceeded waiting for output". Outputs are still compared strictly.
NBVAL_OUTPUT_TIMEOUT_S = 60


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if type(item).__name__ == "IPyNbCell" and hasattr(item, "output_timeout"):
            item.output_timeout = NBVAL_OUTPUT_TIMEOUT_S


def pytest_configure(config: pytest.Config) -> None:
    # Before any notebook kernel starts: the pinned CPU kernels the stored outputs were
    # computed with (tools/nbtool.py sets the same), so nbval's strict comparison holds on
    # AVX2 and AVX-512 machines alike. Values already set (the Makefile's THREADS) win.
    from transformer_course.machine import reproducible_cpu_environment

    for name, value in reproducible_cpu_environment().items():
        os.environ.setdefault(name, value)
    # A Chinese notebook (notebooks/zh) that shows a library sentence the Chinese catalog lacks
    # fails its cell instead of printing English (transformer_course.i18n).
    from transformer_course.i18n import STRICT_ENVIRONMENT

    os.environ.setdefault(STRICT_ENVIRONMENT, "1")
    # torch is already imported (by the line above), so it read OMP_NUM_THREADS too early: set
    # its thread count here, once for the whole run. Tiny models run fastest on one thread;
    # several spin-wait for each other when other processes share the cores.
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    if not hasattr(config, "workerinput"):  # only the controller (or a run without xdist) prints
        config.pluginmanager.register(_TimeTablePlugin(), "course-time-table")


class _TimeTablePlugin:
    def __init__(self) -> None:
        self.table = _TimeTable()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.table.add(report)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not (self.table.notebooks or self.table.browser or self.table.other):
            return  # nothing ran (e.g. --collect-only)
        terminalreporter.section("time per notebook")
        for line in self.table.lines():
            terminalreporter.write_line(line)
