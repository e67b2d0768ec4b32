"""The token-colouring widget of 01_tokenization.

Type any text and see it cut into tokens, each token on its own colour with its id, under two
schemes side by side (tiktoken's ``cl100k_base``, a BPE trained in the notebook, single
characters, whitespace-separated words). The logic is plain functions returning data or an
HTML string; :func:`token_widget` only wires them to ipywidgets.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from .. import _checks
from ..i18n import N_, _
from ..tokenizer import BPE, END_OF_WORD, get_encoding, split_words

SCHEMES = ("cl100k_base", "trained BPE", "characters", "words")
#: The schemes as the widget names them (the values stay :data:`SCHEMES`; cl100k_base is a name).
SCHEME_LABELS = {
    "trained BPE": N_("trained BPE"),
    "characters": N_("characters"),
    "words": N_("words"),
}
PALETTE = ("#fde2a7", "#b8e0d2", "#f7c6c7", "#c6d8f7", "#e0cffc", "#d6f5b0", "#fcd5b5", "#c9f0f0")
DEFAULT_TEXT = "Chapter 1: Building Rapport and Capturing 🙂 你好，世界"


@dataclass(frozen=True)
class TokenPiece:
    """One token as the widget shows it.

    ``text`` is the characters that start inside the token (empty when a byte-level token only
    holds the tail bytes of a character begun by the previous token); ``token_id`` is ``None``
    where the scheme has no id (whitespace runs, unseen characters, words); ``detail`` is the
    token exactly as the tokenizer holds it (bytes or the string with ``</w>``).
    """

    text: str
    token_id: int | None
    detail: str


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (not encodable as UTF-8) replaced by U+FFFD."""
    _checks.instance("text", text, str)
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def tiktoken_pieces(text: str, encoding=None) -> list[TokenPiece]:
    """The tokens of a tiktoken encoding (``cl100k_base`` by default), mapped back to characters.

    cl100k_base works on UTF-8 bytes, so one emoji or Chinese character may span several
    tokens; the character is shown on the token where its first byte lies.
    """
    encoding = encoding if encoding is not None else get_encoding("cl100k_base")
    text = clean_text(text)
    # Special-token text such as "<|endoftext|>" typed by a learner is just text here.
    ids = encoding.encode(text, disallowed_special=())
    chunks = encoding.decode_tokens_bytes(ids)
    starts: list[int] = []  # byte offset where each character starts
    offset = 0
    for ch in text:
        starts.append(offset)
        offset += len(ch.encode("utf-8"))
    pieces: list[TokenPiece] = []
    char_index, byte_start = 0, 0
    for token_id, chunk in zip(ids, chunks):
        byte_end = byte_start + len(chunk)
        first = char_index
        while char_index < len(text) and starts[char_index] < byte_end:
            char_index += 1
        pieces.append(TokenPiece(text[first:char_index], token_id, repr(chunk)))
        byte_start = byte_end
    return pieces


def bpe_pieces(text: str, bpe: BPE) -> list[TokenPiece]:
    """The tokens of a :class:`~transformer_course.tokenizer.BPE`; ids from ``bpe.token_to_id``.

    Whitespace runs and characters never seen in training have no id (``None``).
    """
    lookup = bpe.token_to_id
    pieces: list[TokenPiece] = []
    for token in bpe.tokenize(clean_text(text)):
        shown = (
            token[: -len(END_OF_WORD)]
            if token.endswith(END_OF_WORD) and not token.isspace()
            else token
        )
        pieces.append(TokenPiece(shown, None if token.isspace() else lookup.get(token), token))
    return pieces


def character_pieces(text: str) -> list[TokenPiece]:
    """One token per character; the id is its Unicode code point."""
    return [TokenPiece(ch, ord(ch), f"U+{ord(ch):04X}") for ch in clean_text(text)]


def word_pieces(text: str) -> list[TokenPiece]:
    """One token per whitespace-separated word or whitespace run (no ids: no fixed vocabulary)."""
    return [TokenPiece(run, None, repr(run)) for run in split_words(clean_text(text))]


def pieces_for(text: str, scheme: str, bpe: BPE | None = None) -> list[TokenPiece]:
    """The tokens of ``text`` under one of :data:`SCHEMES`."""
    if scheme == "cl100k_base":
        return tiktoken_pieces(text)
    if scheme == "trained BPE":
        if bpe is None:
            raise ValueError(
                _("scheme 'trained BPE' needs bpe= (train one with tokenizer.train_bpe)")
            )
        return bpe_pieces(text, bpe)
    if scheme == "characters":
        return character_pieces(text)
    if scheme == "words":
        return word_pieces(text)
    raise ValueError(
        _("scheme must be one of {schemes}, got {scheme!r}").format(schemes=SCHEMES, scheme=scheme)
    )


def scheme_label(scheme: object) -> str:
    """A scheme's name in the learner's language."""
    return _(SCHEME_LABELS[scheme]) if scheme in SCHEME_LABELS else str(scheme)


def token_stats(text: str, pieces: list[TokenPiece]) -> dict[str, float]:
    """Token count, character count and characters per token (0 for empty text)."""
    n_chars = len(clean_text(text))
    n_tokens = len(pieces)
    return {
        "tokens": n_tokens,
        "characters": n_chars,
        "chars_per_token": round(n_chars / n_tokens, 2) if n_tokens else 0.0,
    }


def _show(piece_text: str) -> str:
    # Make invisible characters visible without changing the line layout.
    shown = html.escape(piece_text).replace(" ", "·").replace("\t", "→").replace("\n", "↵<br>")
    return shown


def render_tokens_html(
    text: str, scheme: str, bpe: BPE | None = None, max_tokens: int = 1500
) -> str:
    """One scheme's tokens as coloured HTML spans with ids, plus a stats line.

    Empty text gives a prompt, an unknown scheme or a missing BPE a message; only the first
    ``max_tokens`` tokens are drawn (the stats always count them all).
    """
    _checks.integer("max_tokens", max_tokens)
    title = f"<b>{html.escape(scheme_label(scheme))}</b>"
    try:
        pieces = pieces_for(text, scheme, bpe)
    except (ValueError, TypeError) as exc:
        return f"<div>{title}<br><i>{html.escape(str(exc))}</i></div>"
    if not pieces:
        prompt = _("Type some text above to see its tokens.")
        return f"<div>{title}<br><i>{prompt}</i></div>"
    stats = token_stats(text, pieces)
    spans = []
    tip_text = _("token {index}: {detail} id {label}")
    for index, piece in enumerate(pieces[:max_tokens]):
        colour = PALETTE[index % len(PALETTE)]
        label = "—" if piece.token_id is None else str(piece.token_id)
        tip = html.escape(
            tip_text.format(index=index, detail=piece.detail, label=label), quote=True
        )
        # An empty piece is a bare end-of-word symbol (BPE) or the tail bytes of a character.
        empty = html.escape(END_OF_WORD) if piece.detail == END_OF_WORD else "◌"
        body = _show(piece.text) if piece.text else f"<span style='color:#888'>{empty}</span>"
        spans.append(
            f'<span title="{tip}" style=\'background:{colour};border-radius:3px;margin:1px;'
            f"padding:0 2px;display:inline-block;text-align:center'>{body}"
            f"<br><sub style='color:#555'>{label}</sub></span>"
        )
    more = len(pieces) - max_tokens
    not_drawn = _("… {more:,} more tokens not drawn").format(more=more)
    note = f"<br><i>{not_drawn}</i>" if more > 0 else ""
    header = _(
        "{title}: {tokens:,} tokens, {characters:,} characters, {per_token} characters per token"
    ).format(
        title=title,
        tokens=stats["tokens"],
        characters=stats["characters"],
        per_token=stats["chars_per_token"],
    )
    return f"<div style='line-height:2.2'>{header}<br>{''.join(spans)}{note}</div>"


def compare_html(
    text: str,
    left: str = "cl100k_base",
    right: str = "trained BPE",
    bpe: BPE | None = None,
    max_tokens: int = 1500,
) -> str:
    """Two schemes side by side (the widget's whole display)."""
    cells = "".join(
        f"<td style='vertical-align:top;text-align:left;width:50%;padding:4px'>{render_tokens_html(text, s, bpe, max_tokens)}</td>"
        for s in (left, right)
    )
    return f"<table style='width:100%;table-layout:fixed'><tr>{cells}</tr></table>"


def token_widget(bpe: BPE | None = None, text: str = DEFAULT_TEXT, max_tokens: int = 1500):
    """The ipywidgets front end: a text box and two scheme menus over :func:`compare_html`."""
    import ipywidgets as widgets

    box = widgets.Textarea(
        value=text, description=_("text"), layout=widgets.Layout(width="95%", height="80px")
    )
    schemes = [(scheme_label(scheme), scheme) for scheme in SCHEMES]
    left = widgets.Dropdown(options=schemes, value="cl100k_base", description=_("left"))
    right = widgets.Dropdown(
        options=schemes,
        value="trained BPE" if bpe is not None else "characters",
        description=_("right"),
    )
    view = widgets.HTML(value=compare_html(box.value, left.value, right.value, bpe, max_tokens))

    def redraw(_change=None) -> None:
        view.value = compare_html(box.value, left.value, right.value, bpe, max_tokens)

    for control in (box, left, right):
        control.observe(redraw, names="value")
    return widgets.VBox([box, widgets.HBox([left, right]), view])
