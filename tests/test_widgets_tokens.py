"""The token-colouring widget of 01_tokenization, driven without a browser."""

from __future__ import annotations

import pytest

from transformer_course.tokenizer import train_bpe
from transformer_course.widgets import tokens as tv

TEXTS = {
    "english": "Chapter 1: Building Rapport and Capturing",
    "chinese": "建立客户关系需要耐心。你好，世界",
    "emoji": "🙂🚀 ok 👩‍👩‍👧 🇫🇷",
    "mixed": "tab\there\nnew line  <b>&amp;</b> </w> café",
    "empty": "",
}


@pytest.fixture(scope="module")
def bpe(corpus_text):
    return train_bpe(corpus_text[:30000], 150)


@pytest.mark.parametrize("name", list(TEXTS))
def test_tiktoken_pieces_cover_the_text(name, cl100k):
    text = TEXTS[name]
    pieces = tv.tiktoken_pieces(text, cl100k)
    assert [p.token_id for p in pieces] == cl100k.encode(text)
    assert "".join(p.text for p in pieces) == text
    # a piece is empty only when its bytes continue a character started by the previous token
    for piece in pieces:
        if not piece.text:
            assert pieces.index(piece) > 0


def test_emoji_split_over_byte_tokens(cl100k):
    pieces = tv.tiktoken_pieces("🇫🇷", cl100k)
    assert len(pieces) == len(cl100k.encode("🇫🇷"))
    assert "".join(p.text for p in pieces) == "🇫🇷"


@pytest.mark.parametrize("name", list(TEXTS))
def test_bpe_pieces_round_trip(name, bpe):
    text = TEXTS[name]
    pieces = tv.bpe_pieces(text, bpe)
    assert bpe.detokenize([p.detail for p in pieces]) == text
    assert "".join(p.text for p in pieces) == text
    vocab = bpe.token_to_id
    for piece in pieces:
        assert piece.token_id == (None if piece.detail.isspace() else vocab.get(piece.detail))


def test_characters_and_words():
    assert [p.token_id for p in tv.character_pieces("aé🙂")] == [97, 233, 0x1F642]
    assert [p.text for p in tv.word_pieces("a  bc\n")] == ["a", "  ", "bc", "\n"]


def test_token_stats():
    pieces = tv.character_pieces("abcd")
    assert tv.token_stats("abcd", pieces) == {"tokens": 4, "characters": 4, "chars_per_token": 1.0}
    assert tv.token_stats("", []) == {"tokens": 0, "characters": 0, "chars_per_token": 0.0}


@pytest.mark.parametrize("scheme", tv.SCHEMES)
@pytest.mark.parametrize("name", list(TEXTS))
def test_render_every_scheme_and_text(scheme, name, bpe):
    html = tv.render_tokens_html(TEXTS[name], scheme, bpe)
    assert html.startswith("<div")
    if name == "empty":
        assert "Type some text" in html
    else:
        pieces = tv.pieces_for(TEXTS[name], scheme, bpe)
        assert html.count("<sub") == len(pieces)
        assert f"{len(pieces):,} tokens" in html


def test_html_is_escaped(bpe):
    html = tv.render_tokens_html("<script>alert(1)</script>", "characters")
    assert "<script>" not in html
    assert "&lt;" in html


def test_very_long_text_is_truncated_but_counted(bpe):
    text = "Building rapport takes patience. 你好 🙂 " * 3000
    html = tv.render_tokens_html(text, "cl100k_base", bpe, max_tokens=200)
    assert html.count("<sub") == 200
    assert "more tokens not drawn" in html
    total = len(tv.pieces_for(text, "cl100k_base"))
    assert f"{total:,} tokens" in html
    both = tv.compare_html(text, "cl100k_base", "trained BPE", bpe, max_tokens=100)
    assert both.count("more tokens not drawn") == 2


def test_bad_choices_give_messages_not_tracebacks():
    assert "needs bpe" in tv.render_tokens_html("hi", "trained BPE", None)
    assert "scheme must be one of" in tv.render_tokens_html("hi", "nope")
    with pytest.raises(ValueError, match="max_tokens"):
        tv.render_tokens_html("hi", "characters", max_tokens=0)


def test_lone_surrogate_is_cleaned(cl100k):
    text = "a\ud800b"
    pieces = tv.tiktoken_pieces(text, cl100k)
    assert "".join(p.text for p in pieces) == "a\ufffdb"
    assert "tokens" in tv.render_tokens_html(text, "characters")


def test_widget_updates_headless(bpe):
    widget = tv.token_widget(bpe, text="hello")
    box, menus, view = widget.children
    left, right = menus.children
    assert right.value == "trained BPE"
    before = view.value
    box.value = "你好 🙂"
    assert view.value != before and "你" in view.value
    box.value = ""
    assert "Type some text" in view.value
    left.value = "words"
    assert "<b>words</b>" in view.value


def test_widget_without_bpe_defaults_to_characters():
    widget = tv.token_widget(None)
    assert widget.children[1].children[1].value == "characters"
