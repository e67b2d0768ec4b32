"""Every widget of the course, built and turned knob by knob without a browser.

Colab ships ipywidgets 7.7, local installs get 8.x: ``make test`` runs this file with 8.x and
``make test-colab`` with 7.7, in the environment Colab preloads. Each ipywidgets wrapper in ``transformer_course.widgets`` is
built with course-like inputs; then every knob (slider, dropdown, checkbox, text, toggle
buttons) is moved one step. What the widget shows — the PNG bytes of its figures, the HTML
of its HTML children, the text it prints or displays — must change, nothing may raise, and
putting the knob back must show exactly the first picture again (a widget's view is a pure
function of its knobs). The browser test (tests/test_browser.py) does the same by hand in
JupyterLab.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import pkgutil
import sys

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import transformer_course.widgets as widget_package  # noqa: E402

KNOBS = (
    widgets.IntSlider,
    widgets.FloatSlider,
    widgets.Dropdown,
    widgets.Checkbox,
    widgets.Text,
    widgets.Textarea,
    widgets.ToggleButtons,
)
SENTENCE = "Transformers read tokens, not words."


def _widget_factories() -> dict[str, object]:
    """Public functions of transformer_course.widgets.* that build ipywidgets (they import it)."""
    found = {}
    for info in pkgutil.iter_modules(widget_package.__path__, prefix=f"{widget_package.__name__}."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                name.startswith("_")
                or not inspect.isfunction(obj)
                or obj.__module__ != module.__name__
            ):
                continue
            if "import ipywidgets" in inspect.getsource(obj):
                found[f"{info.name.rsplit('.', 1)[-1]}.{name}"] = obj
    return found


def _tokens(batch: int, length: int) -> list[list[str]]:
    words = [
        "the",
        "customer",
        "asked",
        "about",
        "the",
        "price",
        "and",
        "we",
        "listened",
        "before",
        "we",
        "answered",
    ]
    return [[f" {words[(b * 3 + t) % len(words)]}" for t in range(length)] for b in range(batch)]


def _course_bpe():
    from transformer_course.tokenizer import train_bpe

    return train_bpe("a tidy tiger tied a tie tighter to tidy her tiny tail", 10)


def _attention_qk():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(4, 4, 16, 16, generator=g)  # (B, H, T, D)
    k = torch.randn(4, 4, 16, 16, generator=g)  # (B, H, T, D)
    return q, k


def _trained_like_weights():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 4, 8, 8, generator=g)  # (L, H, T, S)
    mask = torch.ones(8, 8, dtype=torch.bool).tril()  # (T, S)
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)  # (L, H, T, S)


def _tiny_model_and_codec(tiny_gpt):
    model = tiny_gpt(vocab_size=40, context_length=16, d_model=32).eval()
    letters = "abcdefghijklmnopqrstuvwxyz .,!?'-:;0123456789"[: model.config.vocab_size]

    def encode(text: str) -> list[int]:
        return [letters.index(c) for c in text.lower() if c in letters]

    def decode_token(token_id: int) -> str:
        return letters[int(token_id)]

    return model, encode, decode_token


#: How to build each widget the way its notebook does (with small, seeded inputs);
#: ``tiny`` is the ``tiny_gpt`` fixture.
CASES = {
    "generation.generation_widget": lambda f, tiny: f(*_tiny_model_and_codec(tiny)),
    "tokens.token_widget": lambda f, tiny: f(_course_bpe()),
    "positional.positional_widget": lambda f, tiny: f(),
    "attention.attention_explorer": lambda f, tiny: f(*_attention_qk(), _tokens(4, 16)),
    "attention.weights_explorer": lambda f, tiny: f(_trained_like_weights(), _tokens(1, 8)[0]),
    "scale_knobs.scale_widget": lambda f, tiny: f(),
    "softmax_knobs.temperature_widget": lambda f, tiny: f(
        torch.linspace(-2.0, 2.0, 8), _tokens(1, 8)[0]
    ),
    "flash_steps.online_softmax_widget": lambda f, tiny: f(
        torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0, 4.0, 6.0, -1.0]), 2
    ),
    # CS336's example and its six merges (st, est, ow, low, west, ne)
    "bpe_replay.replay_widget": lambda f, tiny: f(
        {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6},
        [(115, 116), (101, 256), (111, 119), (108, 258), (119, 257), (110, 101)],
    ),
}
FACTORIES = _widget_factories()
#: Knobs that matter only for some value of another knob: turn that one first (then back).
CONTEXT_KNOBS = {
    "generation.generation_widget": {
        "top-p": ("method", "top-p"),
        "beam width": ("method", "beam"),
    },
}
#: Knobs whose effect this file's small stand-in inputs cannot show, with the reason; each has
#: its own test below that the knob's value reaches the code behind the widget.
INVISIBLE_HERE = {
    (
        "generation.generation_widget",
        "beam width",
    ): "an untrained toy model: every width finds the same text",
}


class Screen:
    """Records what the widget code displays or prints, as comparable values."""

    def __init__(self) -> None:
        self.shown: list[object] = []

    def display(self, *objects, **_kwargs) -> None:
        for obj in objects:
            if isinstance(obj, Figure):
                buffer = io.BytesIO()
                obj.savefig(buffer, format="png", dpi=50)  # small is enough to see a change
                self.shown.append(("png", buffer.getvalue()))
            elif isinstance(obj, widgets.HTML):
                self.shown.append(("html-widget", obj.value))
            elif hasattr(obj, "to_html"):
                self.shown.append(("table", obj.to_html()))
            else:
                self.shown.append(("repr", repr(obj)))


def _walk(widget) -> list:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found.extend(_walk(child))
    return found


def _view(root, screen: Screen, printed: io.StringIO) -> tuple:
    """Everything the widget shows now: its HTML children and what was displayed/printed."""
    html = tuple(w.value for w in _walk(root) if isinstance(w, widgets.HTML))
    return html, tuple(screen.shown), printed.getvalue()


def _moves(knob) -> list:
    """New values a learner would try, smallest move first: one step, then the ends of a slider."""
    old = knob.value
    if isinstance(knob, (widgets.IntSlider, widgets.FloatSlider)):
        step = knob.step or 1
        near = old + step if old + step <= knob.max else old - step
        return [v for v in dict.fromkeys([near, knob.max, knob.min]) if v != old]
    if isinstance(knob, (widgets.Dropdown, widgets.ToggleButtons)):
        values = [o[1] if isinstance(o, tuple) else o for o in knob.options]
        return [values[(values.index(old) + 1) % len(values)]]
    if isinstance(knob, widgets.Checkbox):
        return [not old]
    return [SENTENCE if old != SENTENCE else SENTENCE.upper()]


@pytest.fixture
def screen(monkeypatch):
    recorder = Screen()
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", recorder.display)
    monkeypatch.setattr(IPython.display, "clear_output", lambda *a, **k: recorder.shown.clear())
    monkeypatch.setattr(
        widgets.widgets.interaction, "clear_output", lambda *a, **k: recorder.shown.clear()
    )
    for name, module in list(sys.modules.items()):
        if name.startswith(widget_package.__name__) and hasattr(module, "display"):
            monkeypatch.setattr(module, "display", recorder.display)
    return recorder


def test_every_widget_has_a_case():
    missing = sorted(set(FACTORIES) - set(CASES))
    assert not missing, f"add how to build these widgets to CASES in {__file__}: {missing}"
    assert FACTORIES, "no widget factories found"


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_knob_changes_what_the_widget_shows(tiny_gpt, name, screen):
    if name not in FACTORIES:
        pytest.skip(f"{name} is not in the library (yet)")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        root = CASES[name](FACTORIES[name], tiny_gpt)
    assert isinstance(root, widgets.Widget), f"{name} must return the widget to display"
    knobs = [w for w in _walk(root) if isinstance(w, KNOBS)]
    assert knobs, f"{name} has no knob"
    unchanged = []
    for knob in knobs:
        if isinstance(knob, (widgets.IntSlider, widgets.FloatSlider)) and knob.min == knob.max:
            continue  # a slider with one value (e.g. one layer) has nothing to turn
        context = CONTEXT_KNOBS.get(name, {}).get(knob.description)
        with contextlib.redirect_stdout(printed):
            if context:  # e.g. the top-p knob is read only when the method is top-p
                other = next(w for w in knobs if w.description == context[0])
                other_old, other.value = other.value, context[1]
            before = _view(root, screen, printed)
            old = knob.value
            for value in _moves(knob):  # a small step first; sampling may need a bigger one
                knob.value = value
                changed = _view(root, screen, printed) != before
                knob.value = old
                restored = _view(root, screen, printed)
                assert restored[:2] == before[:2], (
                    f"{name}: putting {knob.description!r} back from {value!r} to {old!r} "
                    "did not restore the view"
                )
                if changed:
                    break
            else:
                if (name, knob.description) not in INVISIBLE_HERE:
                    unchanged.append(f"{type(knob).__name__} {knob.description!r} from {old!r}")
            if context:
                other.value = other_old
    assert not unchanged, f"{name}: these knobs changed nothing shown: {unchanged}"
    assert "Traceback" not in printed.getvalue()


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_slider_starts_on_its_own_grid(tiny_gpt, name, screen):
    """The browser snaps a slider to min + k·step; Python does not. A start value off that grid
    shows one number and computes with another (the base slider of 03 showed 10002 for 10000)."""
    if name not in FACTORIES:
        pytest.skip(f"{name} is not in the library (yet)")
    with contextlib.redirect_stdout(io.StringIO()):
        root = CASES[name](FACTORIES[name], tiny_gpt)
    off_grid = []
    for slider in (
        w for w in _walk(root) if isinstance(w, (widgets.IntSlider, widgets.FloatSlider))
    ):
        steps = (slider.value - slider.min) / (slider.step or 1)
        if abs(steps - round(steps)) > 1e-6:
            off_grid.append(
                f"{slider.description!r}: {slider.value} with min {slider.min}, step {slider.step}"
            )
    assert not off_grid, f"{name}: sliders whose start value the browser would move: {off_grid}"


def test_bad_knob_values_give_a_message_not_a_traceback(screen):
    """Odd d_model in the positional widget: a message in the widget, no exception."""
    factory = FACTORIES.get("positional.positional_widget")
    if factory is None:
        pytest.skip("positional_widget is not in the library (yet)")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        root = factory()
        d_model = next(w for w in _walk(root) if getattr(w, "description", "") == "d_model")
        d_model.value = 63
    assert printed.getvalue().strip(), "an odd d_model must explain itself in the widget"
    assert "Traceback" not in printed.getvalue()


def test_generation_beam_width_reaches_the_decoder(tiny_gpt, screen, monkeypatch):
    factory = FACTORIES.get("generation.generation_widget")
    if factory is None:
        pytest.skip("generation_widget is not in the library (yet)")
    from transformer_course.widgets import generation

    calls = []
    real = generation.decode_with

    def spy(*args, **kwargs):
        calls.append(inspect.signature(real).bind(*args, **kwargs).arguments)
        return real(*args, **kwargs)

    monkeypatch.setattr(generation, "decode_with", spy)
    root = CASES["generation.generation_widget"](factory, tiny_gpt)
    knobs = {w.description: w for w in _walk(root) if isinstance(w, KNOBS)}
    knobs["method"].value = "beam"
    knobs["beam width"].value = 7
    assert calls[-1]["method"] == "beam" and calls[-1]["beam_width"] == 7
