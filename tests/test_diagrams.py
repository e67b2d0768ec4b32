"""The diagrams in images/ are what the code draws (make images).

Compared by meaning, not bytes: every file carries the SHA-256 of what its figure shows
(``diagrams.base.figure_meaning``: each artist's text, place, size and colours), because another
matplotlib release rasterises the same figure with other bytes (3.10.0 and 3.11.2 share the bytes
of none of the 30 pictures). The tests below prove the comparison ignores how a figure is
rasterised and catches a changed label, box or colour.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from transformer_course import diagrams
from transformer_course.diagrams.base import (
    figure_meaning,
    picture_meaning,
    picture_size,
    render,
    same_picture,
)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import images  # noqa: E402  (tools/images.py)

NOTEBOOK_PATHS = sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb"))


@pytest.fixture(scope="module")
def drawn() -> dict[str, bytes]:
    return images.diagram_files()


def test_every_committed_diagram_is_current(drawn, tmp_path):
    """Regenerate into a temporary folder and compare: fails when a diagram is missing or stale."""
    for name, data in drawn.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)  # images/zh/ holds the Chinese diagrams
        (tmp_path / name).write_bytes(data)
    problems = []
    for name in sorted(drawn):
        committed = REPO / "images" / name
        if not committed.exists():
            problems.append(f"missing: images/{name}")
        elif not same_picture(committed.read_bytes(), (tmp_path / name).read_bytes()):
            problems.append(f"stale: images/{name}")
    assert not problems, "run `make images` and commit images/:\n" + "\n".join(problems)


def test_every_committed_picture_carries_its_meaning(drawn):
    for name in drawn:
        data = (REPO / "images" / name).read_bytes()
        assert picture_meaning(data) is not None, f"images/{name}: run `make images`"
        assert picture_size(data), name


def test_same_picture_ignores_how_it_is_rasterised():
    """The same figure saved with other rasterisation settings (what a matplotlib release
    changes) has other bytes but the same meaning and size."""
    import matplotlib as mpl

    fig = diagrams.gpt_overview()
    plain = render(fig, "png")
    with mpl.rc_context({"text.antialiased": False, "lines.antialiased": False}):
        fig_rough = diagrams.gpt_overview()
    for artist in fig_rough.findobj():
        if hasattr(artist, "set_antialiased"):
            artist.set_antialiased(False)
    rough = render(fig_rough, "png")
    assert rough != plain
    assert same_picture(plain, rough)
    svg = render(fig, "svg")
    assert same_picture(svg, svg.replace(b"stroke-linejoin: round", b"stroke-linejoin: miter"))


def test_same_picture_catches_a_changed_label_box_or_colour():
    from matplotlib.patches import FancyBboxPatch
    from matplotlib.text import Text

    def drawn(change) -> tuple[bytes, bytes]:
        fig = diagrams.gpt_overview()
        change(fig)
        return render(fig, "png"), render(fig, "svg")

    plain = drawn(lambda fig: None)
    texts = lambda fig: [t for t in fig.findobj(Text) if t.get_text()]  # noqa: E731
    boxes = lambda fig: list(fig.findobj(FancyBboxPatch))  # noqa: E731
    changes = {
        "label": lambda fig: texts(fig)[3].set_text(texts(fig)[3].get_text() + "!"),
        "box": lambda fig: boxes(fig)[0].set_x(boxes(fig)[0].get_x() + 0.1),
        "colour": lambda fig: boxes(fig)[0].set_facecolor("#ff0000"),
    }
    for what, change in changes.items():
        png, svg = drawn(change)
        assert not same_picture(plain[0], png), f"a changed {what} went unnoticed (PNG)"
        assert not same_picture(plain[1], svg), f"a changed {what} went unnoticed (SVG)"
    assert not same_picture(plain[0], render(diagrams.roadmap("04"), "png"))
    assert figure_meaning(diagrams.gpt_overview()) == figure_meaning(diagrams.gpt_overview())


def test_no_orphan_images(drawn):
    """Every file in images/ is drawn by the code (no hand-made binaries nobody can regenerate)."""
    folder = REPO / "images"
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    orphans = sorted(name for name in files if name not in drawn and name != ".gitkeep")
    assert not orphans, f"images/ holds files no diagram draws: {orphans}"


def test_drawing_is_deterministic():
    first = render(diagrams.gpt_overview(), "svg")
    assert first == render(diagrams.gpt_overview(), "svg")
    assert b"<dc:date>" not in first and b"Matplotlib v" not in first, (
        "no date or version in the SVG"
    )
    png = render(diagrams.roadmap("04"), "png")
    assert png == render(diagrams.roadmap("04"), "png")
    assert b"Software" not in png[:200] and b"matplotlib" not in png[:400].lower()


def test_diagrams_use_the_course_numbers(drawn):
    """The shapes on the arrows are the course's (B=4, T=16, C=64, H=4, D=16, V=3,771/100,070)."""
    svg = {name: data.decode() for name, data in drawn.items() if name.endswith(".svg")}
    assert "(4, 16, 64)" in svg["gpt_overview.svg"] and "(4, 16)" in svg["gpt_overview.svg"]
    assert "3,771" in svg["gpt_overview.svg"] and "100,070" in svg["gpt_overview.svg"]
    # 04–08's running example has windows of T = 12 tokens, so T×T and T×D never look alike.
    assert "(4, 4, 12, 16)" in svg["multi_head_attention.svg"]
    assert "(4, 4, 12, 12)" in svg["multi_head_attention.svg"]
    assert "(4, 4, 16, 16)" not in svg["multi_head_attention.svg"]
    for step in ("split", "scale", "mask", "softmax", "weights @ V", "concatenate", "W_O"):
        assert step in svg["multi_head_attention.svg"], step
    for word in ("RoPE", "RMSNorm", "SwiGLU", "2 K/V heads", "64 → 171 → 64"):
        assert word in svg["llama_vs_classic.svg"], word
    # The course's classic model has sinusoidal positions: not GPT-2's (learned ones).
    assert "GPT-2" not in svg["llama_vs_classic.svg"]
    assert "× √C = × 8" in svg["gpt_overview.svg"], "the token path's scale (GPT.embed)"
    assert "cross-attention" in svg["encoder_decoder.svg"]
    assert svg["block_pre_post_norm.svg"].count("LayerNorm") == 4
    assert "× 8 blocks" in svg["gpt_overview.svg"]


def test_course_numbers_match_the_model():
    """The diagram's numbers are the model's defaults, not a second copy that can drift."""
    from transformer_course.model import GPTConfig

    config = GPTConfig(vocab_size=diagrams.COURSE.V_compact)
    n = diagrams.COURSE
    assert (config.context_length, config.d_model, config.n_heads, config.n_layers) == (
        n.T,
        n.C,
        n.H,
        n.n_layers,
    )
    assert (config.head_size, config.hidden_size) == (n.D, n.d_ff)


def test_every_notebook_has_a_roadmap_image(drawn):
    for path in sorted((REPO / "notebooks").glob("[0-9][0-9]*.ipynb")):
        assert f"roadmap_{images.notebook_number(path)}.png" in drawn


def test_bad_input():
    with pytest.raises(ValueError, match="here must be a notebook number"):
        diagrams.roadmap("99")
    with pytest.raises(ValueError, match="notebook must be one of"):
        diagrams.show_roadmap("99")
    with pytest.raises(ValueError, match="fmt must be"):
        render(diagrams.gpt_overview(), "jpg")


def _demo_notebook():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# 05 · x\n\n[![Open In Colab](https://colab.research.google.com/assets/"
            "colab-badge.svg)](https://colab.research.google.com/github/a/b/blob/main/x.ipynb)"
        ),
        nbformat.v4.new_markdown_cell(images.OLD_MARKER + ' -->\n<img src="https://x/y.png">'),
        nbformat.v4.new_code_cell("x = 1  # the setup cell", execution_count=1),
        nbformat.v4.new_code_cell("x + 1", execution_count=2),
    ]
    nb.cells[3].outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=2)
    ]
    return nb


def test_roadmap_refresh_is_idempotent_and_keeps_other_cells(drawn):
    nb = _demo_notebook()
    sources = [nb.cells[0].source, nb.cells[2].source, nb.cells[3].source]
    assert images.refresh_roadmap(nb, "05", drawn)
    # The old markdown roadmap is gone; the new cell sits right after the setup cell, numbered
    # as tools/nbtool.py numbers cells, and the counts after it are what a fresh run gives.
    assert [c.id for c in nb.cells] == ["c000", "c001", "c002", "c003"]
    assert [nb.cells[0].source, nb.cells[1].source, nb.cells[3].source] == sources
    assert nb.cells[2].source == images.roadmap_source("05")
    assert [c.get("execution_count") for c in nb.cells] == [None, 1, 2, 3]
    assert nb.cells[3].outputs[0].execution_count == 3
    assert not images.refresh_roadmap(nb, "05", drawn), "a second run changes nothing"
    assert not images.number_cells(nb) and not images.number_executions(nb)
    nb.cells.append(nb.cells.pop(2))  # a roadmap cell at the end moves back
    assert images.refresh_roadmap(nb, "05", drawn)
    assert nb.cells[2].source == images.roadmap_source("05")
    assert images.refresh_badge(nb, "05_x.ipynb")
    assert "colab-badge.svg" not in nb.cells[0].source and not images.remote_images(nb)
    assert not images.refresh_badge(nb, "05_x.ipynb")


def test_remote_images_are_listed():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell('a ![x](https://e.org/a.png) <img src="http://e/b">')]
    nb.cells[0].id = "c000"
    assert len(images.remote_images(nb)) == 2


def test_roadmap_cell_output_is_what_a_kernel_prints(drawn):
    """The outputs make images writes without a kernel equal a fresh run's (strict nbval)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(images.roadmap_source("09"))]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert nb.cells[0].outputs == images.roadmap_outputs("09", drawn)


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=[p.stem for p in NOTEBOOK_PATHS])
def test_every_notebook_shows_its_current_roadmap_and_no_remote_image(drawn, path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    number = images.notebook_number(path)
    assert not images.refresh_roadmap(nb, number, drawn), "run `make images`"
    assert not images.refresh_badge(nb, path.name), "run `make images`"
    assert not images.remote_images(nb), "pictures must load offline: see diagrams.py's DESIGN"


def test_training_loop_cycle(drawn):
    """11's cycle: the six stations in order, with the course's shapes on the arrows."""
    svg = drawn["training_loop.svg"].decode()
    stations = ["1  batch", "2  forward", "3  loss", "4  backward", "5  step", "6  clear"]
    positions = [svg.find(station) for station in stations]
    assert -1 not in positions, positions
    for text in ("(4, 16)", "(4, 16, 3,771)", "optimizer.zero_grad()", "loss.backward()"):
        assert text in svg, text
    assert render(diagrams.all_diagrams()["training_loop"](), "svg") == drawn["training_loop.svg"]


def _texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def test_query_row_numbers_are_the_librarys():
    """The schematic's numbers are one row of the library's causal attention on the course batch
    (window 0, head 0, query 3), the same tensors notebooks 04–08 build."""
    import math

    import torch
    from torch import nn

    from transformer_course import attention, embedding
    from transformer_course.diagrams.query_row import query_row

    state = torch.random.get_rng_state()
    row = query_row(query=3, head=0, n_keys=6)
    assert torch.equal(state, torch.random.get_rng_state()), "the global random state is untouched"
    x = embedding.course_batch(seed=0).crop(12).inputs  # (B, T, C) = (4, 12, 64), as in 04–08
    torch.manual_seed(0)
    w_q, w_k, w_v = nn.Linear(64, 64), nn.Linear(64, 64), nn.Linear(64, 64)
    with torch.no_grad():
        q, k, v = (attention.split_heads(w(x), 4) for w in (w_q, w_k, w_v))  # 3 × (B, H, T, D)
    out, weights = attention.scaled_dot_product_attention(q, k, v, mask=attention.causal_mask(12))
    assert (row.window, row.d_k) == (12, 16), "the strip's window and head size differ"
    torch.testing.assert_close(row.scores, (q @ k.transpose(-2, -1))[0, 0, 3, :6])
    torch.testing.assert_close(row.scaled, row.scores / math.sqrt(16))
    assert torch.isinf(row.masked[4:]).all() and torch.equal(row.masked[:4], row.scaled[:4])
    torch.testing.assert_close(row.weights, weights[0, 0, 3, :6])
    torch.testing.assert_close(row.weights.sum(), torch.tensor(1.0))  # keys 0–3 are all it sees
    torch.testing.assert_close(row.values, v[0, 0, :6, :3])
    torch.testing.assert_close(row.output, out[0, 0, 3, :3])


def test_query_row_grows_stage_by_stage():
    """Each notebook's stage shows its own row and every earlier stage's numbers, none later."""
    from transformer_course.diagrams.query_row import (
        QUERY_ROW_STAGES,
        _number,
        query_row,
        query_row_steps,
    )

    row = query_row()
    numbers = {
        "scores": row.scores,
        "scale": row.scaled,
        "mask": row.masked,
        "softmax": row.weights,
    }
    stages = list(QUERY_ROW_STAGES)
    for i, stage in enumerate(stages):
        texts = _texts(query_row_steps(stage, row))
        badges = [t for t in texts if t in QUERY_ROW_STAGES.values()]
        assert badges == [QUERY_ROW_STAGES[s] for s in stages[: i + 1]], (stage, badges)
        for earlier in stages[: i + 1]:
            if earlier in numbers:
                for value in numbers[earlier].tolist():
                    assert _number(value) in texts, (stage, earlier, value)
        assert ("−∞" in texts) == (i >= stages.index("mask")), stage
        assert any(t.startswith("o = Σ") for t in texts) == (stage == "weighted_sum"), stage
    last = _texts(query_row_steps("weighted_sum", row))
    output = next(t for t in last if t.startswith("o = Σ"))
    assert all(_number(value) in output for value in row.output.tolist())
    with pytest.raises(ValueError, match="stage must be one of"):
        query_row_steps("attention")


def test_attention_pictures_tell_T_from_D():
    """04–08's pictures draw T = 12 ≠ D = 16: the formula's Kᵀ is (B, H, D, T), the scores
    (B, H, T, T), and the query-row strip names both; a transposed shape would read differently."""
    from transformer_course.diagrams.attention import attention_formula
    from transformer_course.diagrams.query_row import query_row_steps

    n = diagrams.ATTENTION_EXAMPLE
    assert (n.T, n.D) == (12, 16) and n.T != n.D
    assert (n.B, n.C, n.H) == (diagrams.COURSE.B, diagrams.COURSE.C, diagrams.COURSE.H)
    formula = "\n".join(_texts(attention_formula()))
    assert "(B, H, D, T) = (4, 4, 16, 12)" in formula
    assert "(4, 4, 12, 16)" in formula and "(4, 4, 12, 12)" in formula
    assert "(12, 12)" in formula and "(4, 4, 16, 16)" not in formula
    strip = _texts(query_row_steps("scores"))
    assert any("T = 12" in t and "D = 16" in t for t in strip), strip


def test_query_row_is_deterministic():
    from transformer_course.diagrams.query_row import query_row_steps

    assert render(query_row_steps("softmax"), "png") == render(query_row_steps("softmax"), "png")
