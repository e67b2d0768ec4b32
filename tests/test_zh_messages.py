"""In the Chinese edition, what the library says to a learner is Chinese (issue 36, item 2).

Runs now, without the notebooks: every argument error a learner can reach in the model layers,
the data and training entry points and ``_checks`` goes through ``_()`` (a static scan); a
sample of them, triggered in Chinese with the catalog in strict mode, reads as Chinese by the
rule of ``tests/zh_english.py``; so do ``check_causal``'s reports and every label the notebooks
print through :mod:`transformer_course.i18n.printed`. ``tests/test_zh_outputs.py`` applies the same
rule to the stored outputs of the Chinese notebooks.
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch
from torch import nn
from zh_english import english_run, has_cjk

from transformer_course import data, i18n
from transformer_course.attention import MultiHeadAttention, scaled_dot_product_attention
from transformer_course.causality import CausalityError, check_causal
from transformer_course.feedforward import FeedForward
from transformer_course.generate import generate
from transformer_course.i18n.printed import MESSAGES, label, say
from transformer_course.kv_cache import KVCache
from transformer_course.model import GPT, GPTConfig, model_preset
from transformer_course.norm import LayerNorm
from transformer_course.positional import sinusoidal_encoding
from transformer_course.train import TrainConfig, evaluate, train
from transformer_course.viz.labels import label as viz_label

LIB = Path(__file__).resolve().parents[1] / "lib" / "transformer_course"
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: The modules whose errors a learner reaches from a notebook: argument checks, data, training,
#: the model layers and the causality check.
LEARNER_MODULES = [
    "_checks.py",
    "causality.py",
    "data/__init__.py",
    "data/source.py",
    "train/config.py",
    "train/estimate.py",
    "train/evaluation.py",
    "train/run.py",
    "model.py",
    "attention/__init__.py",
    "norm.py",
    "feedforward.py",
    "positional.py",
    "embedding.py",
    "kv_cache.py",
    "generate.py",
    "encoder_decoder.py",
]

GETTEXT = {"_", "N_", "ngettext", "pgettext"}


def _untranslated_raises(path: Path) -> list[str]:
    """``raise X("…")`` / ``raise X(f"…")`` whose message does not go through gettext."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
            continue
        message = node.exc.args[0]
        literal = isinstance(message, ast.JoinedStr) or (
            isinstance(message, ast.Constant) and isinstance(message.value, str)
        )
        if literal:
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(message)[:80]}")
    return found


def test_learner_errors_go_through_the_catalog():
    untranslated = [hit for name in LEARNER_MODULES for hit in _untranslated_raises(LIB / name)]
    assert not untranslated, "English-only error messages:\n" + "\n".join(untranslated)


def test_the_scan_sees_an_untranslated_raise(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('def f(x):\n    raise ValueError(f"x must be positive, got {x}")\n')
    assert len(_untranslated_raises(sample)) == 1


@pytest.fixture
def chinese(monkeypatch):
    """Chinese, strict: a message the catalog lacks raises MissingTranslation."""
    monkeypatch.setenv(i18n.STRICT_ENVIRONMENT, "1")
    with i18n.in_language("zh"):
        yield


def _tiny() -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=50, context_length=8, d_model=16, n_heads=2, n_layers=1))


def _stream() -> torch.Tensor:
    return torch.arange(40) % 50


#: (what the learner did, the call): each raises an argument error with a translated message.
TRIGGERS = {
    "n_heads does not divide d_model": lambda: GPTConfig(vocab_size=50, d_model=30, n_heads=4),
    "dropout outside [0, 1)": lambda: GPTConfig(vocab_size=50, dropout=2.0),
    "vocab_size a string": lambda: GPTConfig(vocab_size="50"),
    "bias not a bool": lambda: GPTConfig(vocab_size=50, bias=1),
    "unknown preset": lambda: model_preset("huge", 50),
    "float token ids": lambda: _tiny()(torch.zeros(2, 3)),
    "token id past the vocabulary": lambda: _tiny()(torch.full((2, 3), 99)),
    "no cache with start_pos": lambda: _tiny()(torch.zeros(1, 2, dtype=torch.long), start_pos=3),
    "attention: x of the wrong width": lambda: MultiHeadAttention(16, 2)(torch.zeros(1, 3, 8)),
    "attention: float mask": lambda: scaled_dot_product_attention(
        torch.zeros(1, 3, 4), torch.zeros(1, 3, 4), torch.zeros(1, 3, 4), mask=torch.zeros(3, 3)
    ),
    "attention: q and k of different D": lambda: scaled_dot_product_attention(
        torch.zeros(1, 3, 4), torch.zeros(1, 3, 5), torch.zeros(1, 3, 5)
    ),
    "LayerNorm of the wrong size": lambda: LayerNorm(8)(torch.zeros(2, 4)),
    "feed-forward d_ff zero": lambda: FeedForward(8, 0),
    "sinusoidal table of odd width": lambda: sinusoidal_encoding(4, 7),
    "KV cache of mismatched shapes": lambda: KVCache().append(
        torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 5)
    ),
    "generate from an empty prompt": lambda: generate(_tiny(), torch.zeros(0, dtype=torch.long), 2),
    "generate with a negative temperature": lambda: generate(
        _tiny(), torch.zeros(3, dtype=torch.long), 2, temperature=-1.0
    ),
    "split of one token": lambda: data.train_val_split(torch.tensor([1])),
    "batch longer than the data": lambda: data.get_batch(torch.arange(5), 2, 8),
    "data not a stream": lambda: data.get_batch(torch.zeros(3, 3, dtype=torch.long), 2, 2),
    "missing text file": lambda: data.load_text("/nonexistent/course.txt"),
    "train with a dict for config": lambda: train(_tiny(), _stream(), _stream(), {"steps": 2}),
    "train on a stream too short": lambda: train(
        _tiny(), torch.arange(4), _stream(), TrainConfig(steps=1, progress=False, device="cpu")
    ),
    "evaluate on a stream too short": lambda: evaluate(_tiny(), torch.arange(4), 8),
    "train config min_lr above lr": lambda: TrainConfig(lr=1e-3, min_lr=1.0),
    "check_causal with T = 1": lambda: check_causal(_tiny(), T=1),
    "check_causal on a function": lambda: check_causal(print),
}


def _assert_chinese(text: str) -> None:
    assert has_cjk(text), f"no Chinese in {text!r}"
    for line in text.splitlines():
        assert not english_run(line), f"English prose {english_run(line)!r} in {line!r}"


@pytest.mark.parametrize("what", sorted(TRIGGERS))
def test_argument_errors_read_as_chinese(chinese, what):
    with pytest.raises((TypeError, ValueError, FileNotFoundError)) as caught:
        TRIGGERS[what]()
    _assert_chinese(str(caught.value))


def test_the_same_errors_stay_english_in_english():
    with i18n.in_language("en"), pytest.raises(ValueError) as caught:
        GPTConfig(vocab_size=50, d_model=30, n_heads=4)
    assert not has_cjk(str(caught.value)) and english_run(str(caught.value))


class _Leaky(nn.Module):
    """Output t sees every input: the report names the missing mask."""

    d_model = 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, C) -> (B, T, C)
        return x.sum(1, keepdim=True).expand_as(x)


def test_check_causal_reports_in_chinese(chinese):
    _assert_chinese(str(check_causal(_tiny())))
    with pytest.raises(CausalityError) as caught:
        check_causal(_Leaky())
    report = str(caught.value)
    _assert_chinese(report)
    assert "掩码" in report  # the diagnosis (the mask is missing) is in it, translated


def test_every_printed_label_is_translated(chinese):
    for message in MESSAGES:
        shown = i18n._(message)
        assert shown != message or i18n._untranslatable(message), message
        assert not english_run(shown.replace("{", " {").replace("}", "} ")), (message, shown)


def test_say_prints_the_translation_and_refuses_an_undeclared_label(chinese, capsys):
    say("whole split: {loss:.2f}", loss=4.6512)
    assert capsys.readouterr().out == "整个验证集：4.65\n"
    with pytest.raises(ValueError, match="not declared"):
        label("a label nobody declared")


def test_a_field_may_share_the_name_of_the_message_argument(capsys):
    # 12_generation fills a field called "message": the template is positional-only.
    say("empty prompt: {message}", message="x")
    assert capsys.readouterr().out == "empty prompt: x\n"
    for function in (say, label, viz_label):
        first = next(iter(inspect.signature(function).parameters.values()))
        assert first.kind is inspect.Parameter.POSITIONAL_ONLY, function


def _notebook_labels() -> dict[str, str]:
    """Every say()/label() message in the English notebooks' code, with where it is."""
    found = {}
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            lines = "".join(cell["source"]).splitlines()
            # IPython magics (%pip) are not Python: a `pass` keeps the block structure.
            source = "\n".join(
                line[: len(line) - len(line.lstrip())] + "pass"
                if line.lstrip().startswith(("%", "!"))
                else line
                for line in lines
            )
            for node in ast.walk(ast.parse(source)):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("say", "label")
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    found[node.args[0].value] = f"{path.name} {cell.get('id')}"
    return found


def test_every_label_a_notebook_prints_is_declared():
    missing = {m: where for m, where in _notebook_labels().items() if m not in MESSAGES}
    assert not missing, f"declare these in transformer_course.i18n.printed.MESSAGES: {missing}"
