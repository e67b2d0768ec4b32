"""progress.progress_bar: in a notebook a finished bar is stored as its final state, never 0%."""

from __future__ import annotations

import nbformat
import pytest

from transformer_course.exercises.notebook_runner import run_notebook
from transformer_course.progress import WIDGET_MIME, progress_bar

CELL = """\
from transformer_course.progress import progress_bar
bar = progress_bar(total=7, desc="training", unit="step")
for _ in range(7):
    bar.update()
bar.set_postfix(loss="3.62", refresh=False)
bar.close()
bar.close()  # a second close (as __exit__ or __del__ do) adds nothing
for _ in progress_bar(range(3), desc="variants"):
    pass
with progress_bar(total=4, desc="stopped") as stopped:
    stopped.update(1)
"""


@pytest.fixture(scope="module")
def outputs():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    return run_notebook(nb, timeout=120).cells[0].outputs


def test_stored_text_is_the_final_state(outputs):
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert text.splitlines() == [
        "training: 100%|██████████| 7/7, loss=3.62",
        "variants: 100%|██████████| 3/3",
        "stopped:  25%|██▌       | 1/4",  # an interrupted run says where it stopped
    ]
    plain = [o.data.get("text/plain") for o in outputs if o.output_type == "display_data"]
    assert plain == ["", "", ""]  # the widgets' fallbacks no longer freeze at "0%"
    assert all(WIDGET_MIME in o.data for o in outputs if o.output_type == "display_data")
    assert "0%|" not in str(outputs).replace("100%|", "")


def test_outside_a_notebook_it_is_plain_tqdm(capsys):
    from tqdm.std import tqdm

    bar = progress_bar(total=2, desc="cli", disable=False)
    assert type(bar) is tqdm or not hasattr(bar, "container")
    bar.update(2)
    bar.close()
    assert "2/2" in capsys.readouterr().err
