"""The library's feedback in Chinese: every checker, the widgets, the progress table and the
training messages come out in Chinese after ``setup_notebook(lang="zh")``, and unchanged in
English.

Chinese runs in strict mode (``TRANSFORMER_COURSE_I18N_STRICT=1``): a sentence the catalog lacks
raises :class:`~transformer_course.i18n.MissingTranslation` instead of slipping through in
English. A checker turns every exception into a verdict, so the tests also look for the name of
that exception in the text, and for any run of English words outside code, quotes and fields
(:func:`english_runs`). The catalog itself (``locale/zh_CN/LC_MESSAGES/transformer_course.po``)
must be complete, without fuzzy entries, and compiled: ``tools/i18n.py compile`` would change
nothing. The Chinese notebooks' outputs are checked by strict nbval like the English ones.
"""

from __future__ import annotations

import datetime
import io
import re
from pathlib import Path

import pytest
import torch
from script_loader import load_script

from transformer_course import i18n
from transformer_course.exercises import (
    NOT_ANSWERED,
    Feedback,
    Option,
    check_choice,
    checker,
    prose,
    report,
)
from transformer_course.exercises.build import BuildExercise
from transformer_course.exercises.mask import suspect_model
from transformer_course.exercises.progress import (
    PROGRESS_COLUMNS,
    all_checkers,
    export_progress,
    import_progress,
    notebook_exercises,
    progress_summary,
    shown_progress,
)
from transformer_course.i18n import N_, MissingTranslation, set_language

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "transformer_course.po"

#: The verdict labels in each language (what ``str(feedback)`` starts with).
LABELS = {
    "en": ("✅ Correct: ", "❌ Not quite: ", "✏️  Not answered yet: ", "💡 Hint: "),
    "zh": ("✅ 正确：", "❌ 还不对：", "✏️  尚未作答：", "💡 提示："),
}


@pytest.fixture(autouse=True)
def _language_reset(monkeypatch):
    """Every test starts in English, whatever the environment says, and leaves English behind:
    the tests share one process."""
    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    monkeypatch.delenv(i18n.STRICT_ENVIRONMENT, raising=False)
    set_language(None)
    yield
    set_language(None)


@pytest.fixture
def chinese(monkeypatch):
    """Chinese, strict: a sentence without a translation raises instead of showing English."""
    monkeypatch.setenv(i18n.STRICT_ENVIRONMENT, "1")
    set_language("zh")


# ---- what counts as English left in a Chinese text ------------------------------------------

#: Code, quotes, fields and math are left as they are in a translation.
_VERBATIM = re.compile(
    r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|\{[^{}]*\}|\[[^\[\]]*\]|\$[^$\n]*\$|<[^<>]*>"
)
#: Three or more English words in a row (words of two letters or more; single letters are math).
_ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}\b")


def english_runs(text: str) -> list[str]:
    """Runs of three or more English words outside backticks, quotes, {…}, […] (shapes, lists),
    $…$ and HTML tags."""
    return _ENGLISH_RUN.findall(_VERBATIM.sub(" ", text))


def test_english_runs_finds_sentences_and_skips_code():
    assert english_runs("❌ 还不对：the result has shape (2, 3)") == ["the result has shape"]
    assert english_runs("请用 `torch.ones(T, T, dtype=torch.bool).tril()` 构造") == []
    assert english_runs("输入为 ('the cat sat', 3) 时：{label} is wrong") == []
    assert english_runs("sin a cos b + cos a sin b") == []


def chinese_text(feedback: object) -> str:
    """``str(feedback)``, checked to be Chinese: a Chinese label, no English sentence, and no
    strict-mode failure turned into a verdict by the checker's safety net."""
    text = str(feedback)
    assert "MissingTranslation" not in text, text
    assert text.startswith(LABELS["zh"]), text
    assert not english_runs(text), (english_runs(text), text)
    assert re.search(r"[\u4e00-\u9fff]", text), text
    return text


def english_text(feedback: object) -> str:
    text = str(feedback)
    assert text.startswith(LABELS["en"]), text
    assert not re.search(r"[\u4e00-\u9fff]", text), text
    return text


# ---- the checkers ---------------------------------------------------------------------------

CHECKERS = all_checkers()
BUILD = {
    name: check
    for name, check in CHECKERS
    if isinstance(getattr(check, "exercise", None), BuildExercise)
}
QUESTIONS = {name: check for name, check in CHECKERS if name not in BUILD}


def _vocabulary():
    from transformer_course import word2vec as w2v

    words = ["price", "cost", "value", "smile"]
    return w2v.Vocabulary(words, torch.ones(4), {w: i for i, w in enumerate(words)})


#: Arguments the checkers cannot default (they describe the learner's own run), as in
#: tests/test_exercise_answers.py.
REQUIRED_ARGS = {
    "check_broken_layer": lambda: {"model": suspect_model()},
    "check_warmup_lr": lambda: {"step": 3, "steps": 100, "lr": 1e-3, "warmup": 10, "min_lr": None},
    "check_validation_windows": lambda: {"val_tokens": 101, "context_length": 16},
    "check_nearest": lambda: {
        "vectors": torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]]),
        "vocab": _vocabulary(),
        "word": "price",
    },
}
#: Wrong answers of every kind a question meets: a wrong number, a wrong word, a wrong shape, a
#: tensor, a pair of strings, a yes/no, a function.
WRONG_ANSWERS = (
    123457,
    0.5,
    "nonsense",
    (1, 2, 3, 4, 5),
    ("q", "z"),
    torch.zeros(3),
    True,
    lambda *args, **kwargs: 7,
)


def _ask(name: str, check, answer, **kwargs) -> Feedback:
    arguments = REQUIRED_ARGS.get(name, dict)()
    return check(answer, **arguments, **kwargs)


def _wrong_type(*args):
    return 12345


def _raises(*args):
    raise RuntimeError(
        "出错了"
    )  # a message of its own in Chinese: only the checker's words are judged


def _unanswered_build(*args):
    """A stub: its body is ``...``."""


def test_the_checkers_were_found():
    assert len(BUILD) >= 30 and len(QUESTIONS) >= 25


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_a_question_speaks_chinese(name, chinese):
    check = QUESTIONS[name]
    unanswered = _ask(name, check, ...)
    text = chinese_text(unanswered)
    if not unanswered.answered and not unanswered.is_hint:
        assert text.startswith(LABELS["zh"][2])
    assert chinese_text(_ask(name, check, ..., hint=True)).startswith(LABELS["zh"][3])
    for answer in WRONG_ANSWERS:
        feedback = _ask(name, check, answer)
        assert not feedback.correct, (name, answer)
        chinese_text(feedback)


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_a_question_keeps_its_english(name):
    check = QUESTIONS[name]
    for feedback in (_ask(name, check, ...), *(_ask(name, check, a) for a in WRONG_ANSWERS[:3])):
        english_text(feedback)
    hint = _ask(name, check, ..., hint=True)
    assert english_text(hint).startswith("💡 Hint: ")
    assert hint.message == prose(hint.message)


@pytest.mark.parametrize("name", sorted(BUILD))
def test_a_build_exercise_speaks_chinese(name, chinese):
    check = BUILD[name]
    for stub in (..., _unanswered_build):
        assert chinese_text(check(stub)).startswith(LABELS["zh"][2])
    hint = check(check.exercise.solution, hint=True)
    assert chinese_text(hint).startswith(LABELS["zh"][3])
    assert hint.message == check.exercise.shown_hint == prose(hint.message)
    for description, wrong in (check.exercise.slips or {}).items():
        # A known slip is named, in Chinese, when the checker matches it.
        text = chinese_text(check(wrong, seed=0))
        assert "看起来" not in text or i18n.gettext(description) in text, text
    for wrong in (_wrong_type, _raises):
        chinese_text(check(wrong, seed=1))
    right = check(check.exercise.solution, seed=2)
    assert right.correct and chinese_text(right).startswith(LABELS["zh"][0])
    assert check.exercise.shown_success in str(right)


@pytest.mark.parametrize("name", sorted(BUILD))
def test_a_build_exercise_keeps_its_english(name):
    check = BUILD[name]
    assert english_text(check(...)).startswith("✏️  Not answered yet: `")
    hint = check(check.exercise.solution, hint=True)
    assert hint.message == prose(check.exercise.hint)  # the English is the declared text itself
    right = check(check.exercise.solution, seed=2)
    assert str(right).endswith(prose(check.exercise.success))
    for wrong in (*list((check.exercise.slips or {}).values())[:1], _wrong_type):
        english_text(check(wrong, seed=1))


def test_the_framework_texts_in_english_are_what_they_always_were():
    """The English the stored notebooks hold: labels, the placeholder, the stub reminder."""
    assert str(report(False, "", NOT_ANSWERED, answered=False)) == (
        "✏️  Not answered yet: replace the `...` with your answer and run the cell again."
    )
    stub = BUILD["check_stable_softmax"](...)
    assert str(stub) == (
        "✏️  Not answered yet: `stable_softmax` still returns None — its body is the `...` "
        "placeholder. Write the body, run the cell again. Stuck? Ask for a hint: "
        "`check_stable_softmax(stable_softmax, hint=True)`."
    )
    assert str(Feedback(True, "x")) == "✅ Correct: x"
    assert str(Feedback(False, "x")) == "❌ Not quite: x"
    assert str(Feedback(False, "x", answered=False, is_hint=True)) == "💡 Hint: x"


def test_the_labels_in_chinese(chinese):
    assert str(Feedback(True, "好")) == "✅ 正确：好"
    assert str(Feedback(False, "好")) == "❌ 还不对：好"
    assert str(Feedback(False, "好", answered=False)) == "✏️  尚未作答：好"
    assert str(Feedback(False, "好", answered=False, is_hint=True)) == "💡 提示：好"


def test_check_choice_defaults_speak_chinese(chinese):
    options = [Option(lambda w: w == "yes", True, "对")]
    assert chinese_text(check_choice(..., ("yes", "no"), options))
    assert chinese_text(check_choice(3, ("yes", "no"), options))
    assert chinese_text(check_choice("maybe", ("yes", "no"), options))


def test_the_safety_net_speaks_chinese(chinese):
    @checker
    def check_boom(answer: object, hint: bool = False) -> Feedback:
        raise ValueError("坏了")

    text = str(check_boom(1))
    assert text.startswith(LABELS["zh"][1]) and "ValueError: 坏了" in text
    assert not english_runs(text.replace("ValueError", "")), text


def test_a_declared_hint_is_translated_when_shown(monkeypatch, chinese):
    """``N_`` leaves the English where it is declared; the checker translates it, then
    ``prose`` makes it one line. A hint the catalog lacks fails loudly in strict mode."""

    @checker(hint=N_("a hint nobody translated"))
    def check_untranslated(answer: object, hint: bool = False) -> Feedback:
        return report(True, "好", "")

    assert "MissingTranslation" in str(check_untranslated(1, hint=True))
    with pytest.raises(MissingTranslation):
        i18n.gettext("a sentence nobody translated")


# ---- the language switch ----------------------------------------------------------------------


def test_setup_notebook_sets_the_language():
    from transformer_course.notebook import setup_notebook

    session = setup_notebook(seed=0, lang="zh")
    assert session.lang == "zh" and i18n.language() == "zh"
    assert str(Feedback(True, "好")).startswith("✅ 正确")
    session = setup_notebook(seed=0, lang="en")
    assert session.lang == "en" and str(Feedback(True, "x")) == "✅ Correct: x"


def test_setup_notebook_leaves_the_language_to_the_environment(monkeypatch):
    from transformer_course.notebook import setup_notebook

    monkeypatch.setenv(i18n.ENVIRONMENT, "zh")
    assert setup_notebook(seed=0).lang == "zh"
    assert str(Feedback(False, "x")).startswith("❌ 还不对")
    monkeypatch.setenv(i18n.ENVIRONMENT, "en")
    assert setup_notebook(seed=0).lang == "en"
    monkeypatch.delenv(i18n.ENVIRONMENT)
    assert setup_notebook(seed=0).lang == "en"


def test_set_language_none_goes_back_to_the_environment(monkeypatch):
    from transformer_course.notebook import set_language as exported

    assert exported is set_language
    monkeypatch.setenv(i18n.ENVIRONMENT, "zh")
    assert set_language("en") == "en"
    assert set_language(None) == "zh"
    monkeypatch.delenv(i18n.ENVIRONMENT)
    assert set_language(None) == "en"
    assert set_language("zh-CN") == "zh" and set_language("English") == "en"


@pytest.mark.parametrize("bad", ["fr", "", "klingon", 3])
def test_a_bad_language_is_a_clear_value_error(bad):
    from transformer_course.notebook import setup_notebook

    with pytest.raises(ValueError, match=r"lang must be one of \['en', 'zh'\]"):
        setup_notebook(seed=0, lang=bad)
    assert i18n.language() == "en"  # nothing changed


def _names_the_variable(message: str, bad: str) -> None:
    """The error of an unknown TRANSFORMER_COURSE_LANG: the variable, its value, the accepted
    values and what to do."""
    assert f"the environment variable TRANSFORMER_COURSE_LANG is {bad!r}" in message, message
    assert "'en' (English), 'zh' (中文)" in message, message
    assert "Unset it (unset TRANSFORMER_COURSE_LANG) for English, or set it to one of them" in (
        message
    )


@pytest.mark.parametrize("bad", ["xx", "fr", "en-US"])
def test_an_unknown_language_in_the_environment_names_the_variable(monkeypatch, bad):
    from transformer_course.notebook import setup_notebook

    # A context, undone before _language_reset's set_language(None) reads the environment again.
    with monkeypatch.context() as environment:
        environment.setenv(i18n.ENVIRONMENT, bad)
        with pytest.raises(ValueError) as raised:
            setup_notebook(seed=0)
        _names_the_variable(str(raised.value), bad)
        with pytest.raises(ValueError) as raised:
            i18n.gettext("check")  # what every checker's verdict goes through
        _names_the_variable(str(raised.value), bad)
        assert setup_notebook(seed=0, lang="en").lang == "en"  # an explicit lang still wins


def test_a_valid_language_in_the_environment_is_unchanged(monkeypatch):
    for value, expected in [(" zh ", "zh"), ("zh_CN", "zh"), ("ZH-hans", "zh"), ("", "en")]:
        monkeypatch.setenv(i18n.ENVIRONMENT, value)
        assert i18n.language() == expected


def test_train_refuses_an_unknown_language_before_any_work(monkeypatch, tmp_path, capsys):
    from transformer_course.cli import main

    checkpoint = tmp_path / "gpt.pt"
    with monkeypatch.context() as environment:
        environment.setenv(i18n.ENVIRONMENT, "xx")
        assert main(["train", "--steps", "1", "--checkpoint", str(checkpoint)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    _names_the_variable(err, "xx")
    assert not checkpoint.exists() and not any(tmp_path.iterdir())


# ---- widgets, tables, training messages ---------------------------------------------------------


def _descriptions(widget) -> list[str]:
    found = [getattr(widget, "description", "")]
    for child in getattr(widget, "children", ()):
        found += _descriptions(child)
    return [d for d in found if d]


def _html(widget) -> str:
    import ipywidgets as widgets

    text = widget.value if isinstance(widget, widgets.HTML) else ""
    return text + "".join(_html(child) for child in getattr(widget, "children", ()))


def _option_labels(widget) -> list[str]:
    import ipywidgets as widgets

    labels = list(widget._options_labels) if isinstance(widget, widgets.Dropdown) else []
    for child in getattr(widget, "children", ()):
        labels += _option_labels(child)
    return labels


def _widgets(tiny_gpt):
    """Each widget of the course, built as its notebook builds it (small inputs)."""
    from transformer_course.tokenizer import train_bpe
    from transformer_course.widgets import (
        attention,
        generation,
        positional,
        scale_knobs,
        softmax_knobs,
        tokens,
    )

    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 2, 6, 4, generator=g), torch.randn(2, 2, 6, 4, generator=g)
    words = [[f" w{b}{t}" for t in range(6)] for b in range(2)]
    model = tiny_gpt(vocab_size=40, context_length=16, d_model=32).eval()
    letters = "abcdefghijklmnopqrstuvwxyz .,!?'-:;0123456789"[:40]
    return {
        "attention_explorer": attention.attention_explorer(q, k, words),
        "weights_explorer": attention.weights_explorer(
            torch.softmax(torch.randn(2, 2, 6, 6, generator=g), -1), words[0]
        ),
        "generation_widget": generation.generation_widget(
            model,
            lambda text: [letters.index(c) for c in text.lower() if c in letters],
            lambda i: letters[int(i)],
            prompt="the cat",
        ),
        "positional_widget": positional.positional_widget(),
        "scale_widget": scale_knobs.scale_widget(),
        "temperature_widget": softmax_knobs.temperature_widget(torch.linspace(-2, 2, 6)),
        "token_widget": tokens.token_widget(train_bpe("a tidy tiger tied a tie", 5), "a tidy tie"),
    }


#: Labels that are names or symbols in both languages.
_SAME_IN_CHINESE = {"d_model", "d_k", "τ", "top-k", "top-p"}


def test_widgets_show_chinese_labels(tiny_gpt, chinese):
    import matplotlib.pyplot as plt

    for name, widget in _widgets(tiny_gpt).items():
        labels = _descriptions(widget) + _option_labels(widget)
        assert labels, name
        for label in labels:
            if label in _SAME_IN_CHINESE or label.startswith("cl100k") or label.isdigit():
                continue
            assert re.search(r"[\u4e00-\u9fff]", label), (name, label)
        html = _html(widget)
        assert not english_runs(html), (name, english_runs(html))
        plt.close("all")


def test_widgets_keep_their_english_labels(tiny_gpt):
    built = _widgets(tiny_gpt)
    assert {"batch row", "head", "causal mask", "scale by 1/√D", "table: query"} <= set(
        _descriptions(built["attention_explorer"])
    )
    assert {"prompt", "method", "new tokens", "temperature", "beam width", "seed"} <= set(
        _descriptions(built["generation_widget"])
    )
    assert _option_labels(built["generation_widget"]) == [
        "greedy",
        "sample",
        "top-k",
        "top-p",
        "beam",
    ]
    assert {"text", "left", "right"} <= set(_descriptions(built["token_widget"]))
    assert "trained BPE" in _option_labels(built["token_widget"])


def test_widget_messages_in_chinese(chinese):
    from transformer_course.widgets import attention, positional, scale_knobs, softmax_knobs, tokens

    for text in (
        positional.check_knobs(0, 64, 10000.0, 0),
        positional.check_knobs(16, 63, 10000.0, 0),
        positional.check_knobs(16, 64, 1.0, 0),
        positional.check_knobs(16, 64, 10000.0, 99),
        scale_knobs.check_knobs(0),
        scale_knobs.check_knobs(16, 1),
        scale_knobs.check_knobs(16, 4, 9),
        softmax_knobs.check_temperature(-1.0),
        softmax_knobs.check_temperature("hot"),
        softmax_knobs.temperature_view(torch.ones(2, 2)),
        tokens.render_tokens_html("", "characters"),
        tokens.render_tokens_html("a tidy tie", "words"),
        tokens.render_tokens_html("a tidy tie", "trained BPE"),
    ):
        assert re.search(r"[\u4e00-\u9fff]", text) and not english_runs(text), text
    table = attention.attention_row_table(torch.softmax(torch.randn(2, 3, 3), -1), query=1)
    for label in [*table.columns, table.index[-1]]:
        assert re.search(r"[\u4e00-\u9fff]", str(label)), label


def test_the_generation_playground_in_chinese(tiny_gpt, chinese):
    from transformer_course.widgets import generation

    model = tiny_gpt(vocab_size=40, context_length=4, d_model=32).eval()
    letters = "abcdefghijklmnopqrstuvwxyz .,!?'-:;0123456789"[:40]

    def encode(text):
        return [letters.index(c) for c in text.lower() if c in letters]

    def decode(i):
        return letters[int(i)]

    long = generation.continue_text(model, "the cat sat", encode, decode, method="greedy")
    html = generation.continuation_html(long).replace("the cat sat", "")  # the learner's prompt
    assert "4" in long.note and re.search(r"[\u4e00-\u9fff]", long.note)
    assert not english_runs(re.sub(r"<[^>]*>", " ", html)), html
    for prompt in ("", "###"):
        error = generation.continue_text(model, prompt, encode, decode).error
        assert re.search(r"[\u4e00-\u9fff]", error) and not english_runs(error), error


def _progress_rows():
    import pandas as pd

    return pd.DataFrame(
        [
            ("01_tokenization", "check_merge_pair", "build", "passed"),
            ("01_tokenization", "check_token_count", "question", "not yet right"),
            ("02_embeddings", "check_sample_batch", "build", "not answered"),
            ("02_embeddings", "check_table_parameters", "question", "hint shown"),
            ("03_positional_encoding", "check_wavelength", "question", "not run"),
        ],
        columns=PROGRESS_COLUMNS,
    )


def test_the_progress_table_in_chinese(tmp_path, chinese):
    english = _progress_rows()
    shown = shown_progress(english)
    assert list(shown.columns) == ["所属 notebook", "练习", "类型", "状态"]
    assert set(shown["状态"]) == {"已通过", "还不对", "尚未作答", "看过提示", "未运行"}
    assert set(shown["类型"]) == {"编程题", "问答题"}
    summary = progress_summary(shown)
    assert all(re.search(r"[\u4e00-\u9fff]", str(c)) for c in summary.columns), summary.columns
    assert summary.iloc[0].tolist() == [1, 1, 1, 2, 0, 0]
    # The saved file holds the English words, whichever language showed the table...
    path = export_progress(tmp_path / "p.json", shown)
    assert '"passed"' in path.read_text(encoding="utf-8")
    # ...and reads back into the table the learner saw.
    assert import_progress(path).equals(shown)
    assert import_progress(path, current=shown).equals(shown)


def test_the_progress_table_in_english_is_unchanged():
    english = _progress_rows()
    assert shown_progress(english) is english
    columns = ["build", "questions", "passed", "of", "optional", "optional passed"]
    assert list(progress_summary(english).columns) == columns


def test_verdicts_printed_in_chinese_are_read_by_the_progress_table(chinese):
    check = BUILD["check_stable_softmax"]
    names = ({"check_stable_softmax"}, {"check_stable_softmax"})
    for answer, status in ((..., "not answered"), (check.exercise.solution, "passed")):
        verdict = repr(check(answer, seed=0))
        cell = {
            "cell_type": "code",
            "source": "check_stable_softmax(stable_softmax)",
            "outputs": [{"output_type": "execute_result", "data": {"text/plain": verdict}}],
        }
        rows = notebook_exercises({"cells": [cell]}, "07_softmax", names)
        assert [row.status for row in rows] == [status], verdict


def test_environment_checks_in_chinese(chinese):
    from transformer_course.notebook import environment_checks

    table = environment_checks()
    assert all(re.search(r"[\u4e00-\u9fff]", column) for column in table.columns), table.columns
    for value in table.to_numpy().ravel():
        assert not english_runs(str(value)) or "$" in str(value) or "pip install" in str(value), (
            value
        )


def test_training_messages_in_chinese(chinese):
    from transformer_course.diagnostics import check_initial_loss, describe_loss
    from transformer_course.train.estimate import RunEstimate
    from transformer_course.train.numerics import non_finite_loss_message

    texts = [
        describe_loss(4.7),
        str(check_initial_loss(4.6, 100)),
        str(check_initial_loss(9.0, 100, logits=torch.randn(4, 100))),
        str(check_initial_loss(2.0, 100)),
        str(check_initial_loss(float("nan"), 100)),
        str(RunEstimate(700, 0.05, 1, 2.0, 5)),
        str(RunEstimate(700, 0.05, 3, 2.0, 5)),
    ]
    for lr, dtype, losses, fresh in (
        (1e-3, torch.float32, [], False),
        (1e-3, torch.float16, [], True),
        (1.0, torch.float32, [], True),
        (1e-3, torch.float32, [3.0, 2.0, 5.0], True),
        (1e-3, torch.bfloat16, [3.0, 2.9], True),
    ):
        texts.append(
            non_finite_loss_message(
                10, lr, dtype, recent_losses=losses, weights_finite_at_start=fresh
            )
        )
    for text in texts:
        assert re.search(r"[\u4e00-\u9fff]", text) and not english_runs(text), text
    assert texts[5].startswith("⏱")  # the mark nbval's sanitizer looks for stays first


def test_checkpoint_messages_in_chinese(tmp_path, chinese):
    from transformer_course.checkpoint import CheckpointError, load_checkpoint

    missing, empty, text = tmp_path / "none.pt", tmp_path / "empty.pt", tmp_path / "notes.pt"
    empty.write_bytes(b"")
    text.write_text("hello", encoding="utf-8")
    for path, error in (
        (missing, FileNotFoundError),
        (empty, CheckpointError),
        (text, CheckpointError),
    ):
        with pytest.raises(error) as raised:
            load_checkpoint(path)
        message = str(raised.value).replace(str(path), "")
        assert re.search(r"[\u4e00-\u9fff]", message) and not english_runs(message), message


# ---- the catalog ------------------------------------------------------------------------------------


def test_every_library_message_is_translated_and_none_is_fuzzy():
    from babel.messages.pofile import read_po

    with CATALOG.open("rb") as handle:
        catalog = read_po(handle)
    fields = re.compile(r"\{[^{}]*\}")
    messages = [m for m in catalog if m.id]
    assert len(messages) >= 400
    for message in messages:
        assert message.string, f"untranslated: {message.id!r}"
        assert not message.fuzzy, f"fuzzy: {message.id!r}"
        # A plural message (ngettext) has a tuple of forms: every Chinese form carries the
        # fields and code spans of the English plural (Chinese has one form).
        english = message.id[-1] if isinstance(message.id, tuple) else message.id
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        for chinese in forms:
            assert chinese, f"untranslated plural form: {message.id!r}"
            assert sorted(fields.findall(english)) == sorted(fields.findall(chinese)), message.id
            assert english.count("`") == chinese.count("`"), message.id


def test_the_compiled_catalog_is_fresh():
    """``python tools/i18n.py compile`` would change nothing: the committed .mo means what the
    .po says (compared as parsed messages, so another Babel release is no reason to fail)."""
    tools_i18n = load_script("tools/i18n.py")
    assert tools_i18n.compile_all(check=True) == []


def test_a_compiled_catalog_is_compared_by_meaning_not_bytes(tmp_path, monkeypatch):
    """Compiled by another Babel release on another day, the same messages are fresh, and
    ``compile`` leaves that .mo alone; a changed translation, or a fuzzy entry let in, is stale."""
    import babel.messages.catalog
    from babel.messages.mofile import write_mo

    tools_i18n = load_script("tools/i18n.py")
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / CATALOG.name).write_bytes(CATALOG.read_bytes())
    monkeypatch.setattr(tools_i18n, "LOCALE", tmp_path)
    mo = folder / "transformer_course.mo"

    def compiled_by_another_babel(change=None, use_fuzzy=False) -> bytes:
        catalog = tools_i18n.read_library(folder / CATALOG.name)
        catalog.creation_date = catalog.revision_date = datetime.datetime(2031, 5, 6, 7, 8)
        if change is not None:
            change(catalog)
        buffer = io.BytesIO()
        with monkeypatch.context() as patch:
            patch.setattr(babel.messages.catalog, "VERSION", "9.99.0")
            write_mo(buffer, catalog, use_fuzzy=use_fuzzy)
        return buffer.getvalue()

    other = compiled_by_another_babel()
    assert b"Generated-By: Babel 9.99.0" in other and b"2031-05-06" in other
    assert other != tools_i18n.compiled()
    mo.write_bytes(other)
    assert tools_i18n.compile_all(check=True) == []
    assert tools_i18n.compile_all() == [] and mo.read_bytes() == other  # left as it was

    def retranslate(catalog):
        message = catalog.get("Softmax", context="roadmap chip")
        message.string = message.string + "！"

    mo.write_bytes(compiled_by_another_babel(retranslate))
    assert tools_i18n.compile_all(check=True) == [str(mo)]

    # Fuzzy in the .po: gettext must not show it, so a .mo that holds it is stale.
    mo.write_bytes(other)
    catalog = tools_i18n.read_library(folder / CATALOG.name)
    catalog.get("Softmax", context="roadmap chip").flags.add("fuzzy")
    tools_i18n.write_library(catalog, folder / CATALOG.name)
    assert tools_i18n.compile_all(check=True) == [str(mo)]
    assert tools_i18n.compile_all() == [str(mo)]  # compiled again, without the fuzzy entry
    assert tools_i18n.compile_all(check=True) == []
    assert ("roadmap chip", "Softmax") not in tools_i18n.mo_meaning(mo.read_bytes())[1]


def test_no_library_module_binds_a_throwaway_underscore():
    """In the library ``_`` is gettext's: a local ``_`` (``for _ in``, ``x, _ =``, a
    comprehension's, ``with … as _``) would shadow it. lib/ruff.toml flags most of these; this
    finds the ones ruff does not look at (comprehensions, ``with``, an argument)."""
    import ast

    library = REPO / "lib" / "transformer_course"
    bound = []
    for path in sorted(library.rglob("*.py")):
        if path == library / "i18n" / "__init__.py":
            continue  # where `_ = gettext` is defined
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            stored = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
            if (stored and node.id == "_") or (isinstance(node, ast.arg) and node.arg == "_"):
                bound.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert bound == [], "name the throwaway (_step, _weights, …): " + ", ".join(bound)


def test_the_library_catalog_stores_no_source_locations():
    """A refactor that moves a message changes nothing in the catalog: no ``#:`` lines, and the
    entries sorted by their English (``tools/i18n.py lib-export`` says where each one is)."""
    text = CATALOG.read_text(encoding="utf-8")
    assert not [line for line in text.splitlines() if line.startswith("#:")]


def test_an_english_word_with_two_meanings_gets_two_translations(chinese):
    """ "head" is my_gpt's output stage (context "GPT stage") and the widgets' attention head."""
    from transformer_course.exercises.my_gpt import _shown_stage

    assert _shown_stage("head") == "输出层"
    assert _shown_stage("block 3 attention") == "第 3 块的注意力"
    assert i18n._("head") == "头"
