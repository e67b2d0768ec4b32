"""The generation playground's plain logic, tested without a browser."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course.generate import beam_search, generate
from transformer_course.vocabulary import CompactVocabulary
from transformer_course.widgets.generation import (
    METHODS,
    continuation_html,
    continue_text,
    decode_with,
    generation_widget,
    make_codec,
    make_token_bytes,
    probability_colour,
    streaming_html,
)


@pytest.fixture(scope="module")
def setup(cl100k, tiny_gpt):
    text = "the cat sat on the mat. the dog sat on the log. a cat and a dog."
    vocabulary = CompactVocabulary.from_ids(cl100k.encode(text))
    model = tiny_gpt(vocab_size=vocabulary.size, n_heads=2, dropout=0.1)
    encode, decode = make_codec(cl100k, vocabulary)
    return model, encode, decode, vocabulary


def test_codec_round_trip(cl100k, setup):
    _, encode, decode, vocabulary = setup
    ids = encode("the cat sat")
    assert max(ids) < vocabulary.size
    assert "".join(decode(i) for i in ids) == "the cat sat"
    full_encode, full_decode = make_codec(cl100k)
    assert full_encode("the cat") == cl100k.encode("the cat")
    assert full_decode(cl100k.encode(" cat")[0]) == " cat"
    with pytest.raises(ValueError, match="not in this compact vocabulary"):
        encode("zebra crossing")


@pytest.mark.parametrize("method", METHODS)
def test_decode_with_matches_the_library(setup, method):
    model, encode, *_ = setup
    prompt = encode("the cat sat")
    new = decode_with(
        model,
        prompt,
        method,
        max_new_tokens=5,
        temperature=0.7,
        top_k=3,
        top_p=0.8,
        beam_width=3,
        seed=4,
    )
    p = torch.tensor(prompt)
    expected = {
        "greedy": lambda: generate(model, p, 5, temperature=0),
        "sample": lambda: generate(
            model, p, 5, temperature=0.7, generator=torch.Generator().manual_seed(4)
        ),
        "top-k": lambda: generate(
            model, p, 5, temperature=0.7, top_k=3, generator=torch.Generator().manual_seed(4)
        ),
        "top-p": lambda: generate(
            model, p, 5, temperature=0.7, top_p=0.8, generator=torch.Generator().manual_seed(4)
        ),
        "beam": lambda: beam_search(model, p, 5, beam_width=3),
    }[method]()
    assert new == expected[len(prompt) :].tolist()


def test_continue_text(setup):
    model, encode, decode, _ = setup
    result = continue_text(model, "the cat", encode, decode, method="greedy", max_new_tokens=6)
    assert not result.error and not result.note
    assert len(result.new_ids) == len(result.tokens) == len(result.probs) == 6
    assert all(0 < p <= 1 for p in result.probs)
    assert result.text == "".join(decode(i) for i in result.new_ids)
    assert math.isclose(result.log_prob, sum(math.log(p) for p in result.probs))
    # greedy picks the most probable token, so each probability is the largest available
    context = torch.tensor(result.prompt_ids + result.new_ids)
    logits = model.eval()(context[None, :-1])[0][0, len(result.prompt_ids) - 1 :]  # (6, V)
    top = logits.softmax(-1).max(-1).values
    torch.testing.assert_close(torch.tensor(result.probs), top, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("prompt", ["", "   ", "\n"])
def test_empty_prompt_is_a_message_not_an_error(setup, prompt):
    model, encode, decode, _ = setup
    result = continue_text(model, prompt, encode, decode)
    assert result.error.startswith("The prompt is empty")
    assert result.new_ids == []
    page = continuation_html(result)
    assert "The prompt is empty" in page and "color:#b00" in page


def test_too_long_prompt_continues_from_the_last_tokens(setup):
    model, encode, decode, _ = setup
    prompt = "the cat sat on the mat. the dog sat on the log. a cat"
    assert len(encode(prompt)) > 8
    result = continue_text(model, prompt, encode, decode, method="greedy", max_new_tokens=3)
    assert "reads at most 8" in result.note and not result.error
    tail = continue_text(
        model,
        "".join(decode(i) for i in encode(prompt)[-8:]),
        encode,
        decode,
        method="greedy",
        max_new_tokens=3,
    )
    assert result.new_ids == tail.new_ids
    assert "reads at most 8" in continuation_html(result)


def test_unknown_words_and_bad_knobs_are_messages(setup):
    model, encode, decode, _ = setup
    assert "cannot be encoded" in continue_text(model, "zebra", encode, decode).error
    assert (
        "temperature"
        in continue_text(model, "the cat", encode, decode, method="sample", temperature=-1.0).error
    )
    assert (
        "top_p" in continue_text(model, "the cat", encode, decode, method="top-p", top_p=0.0).error
    )
    assert (
        "method must be one of"
        in continue_text(model, "the cat", encode, decode, method="magic").error
    )


def test_html_escapes_and_colours(setup):
    model, encode, decode, _ = setup
    result = continue_text(model, "a <cat>", lambda s: encode("the cat"), decode, max_new_tokens=4)
    page = continuation_html(result)
    assert "&lt;cat&gt;" in page and "<cat>" not in page
    assert page.count("title='p = ") == 4
    assert probability_colour(0.0) != probability_colour(1.0)
    assert probability_colour(2.0) == probability_colour(1.0)
    assert probability_colour(1e-6) == probability_colour(1e-3) != probability_colour(1e-2)


def test_widget_builds_and_renders(setup):
    pytest.importorskip("ipywidgets")
    model, encode, decode, _ = setup
    box = generation_widget(model, encode, decode, prompt="the dog")
    shown = box.children[2]
    assert "title='p = " in shown.value
    box.children[0].value = ""
    assert "The prompt is empty" in shown.value


@pytest.mark.parametrize("method", METHODS)
def test_tokens_are_reported_as_they_come(setup, method):
    model, encode, *_ = setup
    seen = []
    new = decode_with(model, encode("the cat"), method, max_new_tokens=5, on_token=seen.append)
    assert seen == new and len(new) == 5


def test_widget_streams_whole_characters(cl100k, setup):
    pytest.importorskip("ipywidgets")
    model, encode, decode, vocabulary = setup
    frames = []
    token_bytes = make_token_bytes(cl100k, vocabulary)
    assert token_bytes(encode(" cat")[0]) == b" cat"
    box = generation_widget(model, encode, decode, prompt="the dog", token_bytes=token_bytes)
    shown = box.children[2]
    shown.observe(lambda change: frames.append(change["new"]), names="value")
    box.children[0].value = "the cat"
    streamed = [f for f in frames if f.endswith("▌</div>")]
    assert len(streamed) == 20  # one frame per new token (the default of 20), then the colours
    assert streamed[-1].startswith(streaming_html("the cat", "")[: -len("▌</div>")])
    assert "title='p = " in frames[-1]


def test_widget_streaming_with_chinese_bytes(cl100k, tiny_gpt):
    pytest.importorskip("ipywidgets")
    text = "销售是一门艺术 🤝"
    ids = cl100k.encode(text)
    vocabulary = CompactVocabulary.from_ids(ids)
    model = tiny_gpt(vocab_size=vocabulary.size, n_heads=2, n_layers=1, dropout=0.1)
    encode, decode = make_codec(cl100k, vocabulary)
    frames = []
    box = generation_widget(
        model, encode, decode, prompt="销", token_bytes=make_token_bytes(cl100k, vocabulary)
    )
    box.children[2].observe(lambda change: frames.append(change["new"]), names="value")
    box.children[1].children[0].children[0].value = "sample"  # random picks: many split characters
    streamed = [f for f in frames if f.endswith("▌</div>")]
    new = decode_with(model, encode("销"), "sample", max_new_tokens=20, top_k=10, temperature=0.8)
    full = cl100k.decode(vocabulary.decode(torch.tensor(new)).tolist())  # all at once
    assert any(len(cl100k.decode_single_token_bytes(int(vocabulary.ids[i]))) < 3 for i in new)
    for frame in streamed:  # every frame is a prefix of the whole text: no character shown
        body = frame.split("</span>", 1)[1][: -len("▌</div>")]  # broken and later repaired
        assert full.startswith(body)
    last = streamed[-1].split("</span>", 1)[1][: -len("▌</div>")]
    assert full[len(last) :] in ("", "\ufffd")  # at most an unfinished last character held back
