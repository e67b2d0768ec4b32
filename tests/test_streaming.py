"""Streaming never prints half a character: Chinese and emoji split across cl100k_base tokens."""

from __future__ import annotations

import pytest

from transformer_course.streaming import TokenStreamer, stream_text

TEXTS = [
    "销售是一门艺术，而不是一门科学。",
    "与客户建立信任 🤝 需要时间 😀!",
    "Emoji only: 👩‍💻🧑🏽‍🚀",
    "plain English, no surprises",
]


@pytest.fixture
def encoding(cl100k):
    return cl100k


@pytest.mark.parametrize("text", TEXTS)
def test_stream_equals_the_full_decode_and_never_shows_a_broken_character(encoding, text):
    ids = encoding.encode(text)
    pieces = list(stream_text(ids, encoding.decode_single_token_bytes))
    assert "".join(pieces) == text
    assert all("\ufffd" not in piece for piece in pieces)


def test_the_samples_really_split_characters_across_tokens(encoding):
    # Without the buffer, decoding one token at a time shows U+FFFD for the split characters.
    for text in TEXTS[:3]:
        ids = encoding.encode(text)
        naive = "".join(encoding.decode([i]) for i in ids)
        assert "\ufffd" in naive and naive != text


def test_push_holds_back_the_bytes_of_an_incomplete_character(encoding):
    ids = encoding.encode("销售")  # 售 is split into two tokens
    streamer = TokenStreamer(encoding.decode_single_token_bytes)
    assert streamer.push(ids[0]) == "销"
    assert streamer.push(ids[1]) == "" and len(streamer.pending) == 2  # 2 of 售's 3 bytes wait
    assert streamer.push(ids[2]) == "售" and streamer.pending == b""
    assert streamer.flush() == ""


def test_final_flush_reports_an_unfinished_character(encoding):
    ids = encoding.encode("好😀")
    cut = ids[:-1]  # the emoji's last byte never arrives
    streamer = TokenStreamer(encoding.decode_single_token_bytes)
    text = "".join(streamer.push(i) for i in cut)
    assert "\ufffd" not in text and streamer.pending
    assert streamer.flush() == "\ufffd"  # one replacement character at the very end, not per token
    assert streamer.pending == b""  # reset: ready for the next stream
    strict = TokenStreamer(encoding.decode_single_token_bytes, errors="strict")
    for i in cut:
        strict.push(i)
    with pytest.raises(UnicodeDecodeError):
        strict.flush()


def test_bad_arguments_have_clear_errors():
    with pytest.raises(TypeError, match="token_bytes"):
        TokenStreamer("not a function")
    with pytest.raises(ValueError, match="errors"):
        TokenStreamer(lambda i: b"", errors="ignore")
    with pytest.raises(TypeError, match="bytes"):
        TokenStreamer(lambda i: "text").push(1)


def test_streaming_what_generate_produces(encoding):
    # A random model over the whole cl100k_base vocabulary samples byte pieces at will.
    import torch

    from transformer_course.generate import generate
    from transformer_course.model import GPT, GPTConfig
    from transformer_course.streaming import TokenStreamer

    torch.manual_seed(0)
    model = GPT(
        GPTConfig(vocab_size=encoding.n_vocab, context_length=8, d_model=8, n_heads=2, n_layers=1)
    )
    prompt = encoding.encode("销售")
    streamer, pieces = TokenStreamer(encoding.decode_single_token_bytes), []
    out = generate(
        model, prompt, 12, generator=torch.Generator().manual_seed(0),
        on_token=lambda token: pieces.append(streamer.push(int(token[0]))),
    )  # fmt: skip
    pieces.append(streamer.flush())
    assert len(pieces) == 13
    assert "".join(pieces) == encoding.decode(out[len(prompt) :].tolist())
