"""K-composition in one picture: how layer 1's induction head finds its key through what layer
0's previous-token head wrote (introduced in 16_induction_heads, its Going-deeper section)."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..i18n import _
from .base import PALETTE, Box, arrow, box, canvas, localised, mono_family, note, title

#: Token strip ``… A B … A``: (token, position label, x in inches); s−1 and t hold the same token.
_STRIP = (("…", "", 0.9), ("A", "s−1", 1.9), ("B", "s", 3.3), ("…", "", 5.0), ("A", "t", 7.2))
#: Heights in inches: the token strip, layer 0's row, layer 1's row, the prediction.
_TOKENS_Y, _LAYER0_Y, _LAYER1_Y, _OUTPUT_Y = 0.85, 2.0, 3.45, 4.75
_S_X, _T_X, _PREVIOUS_X = 3.3, 7.2, 1.9
_WIDTH, _HEIGHT = 9.0, 5.75


@localised
def k_composition() -> Figure:
    """The induction circuit on the strip ``… A B … A``: layer 0's previous-token head writes
    "previous token A" at s, so layer 1's query at t (token A) matches the key at s
    (K-composition, the term x_tᵀ W_Qᵀ W_K W_OV x_{s−1}) and its value copies B out as the
    prediction at t. Introduced in 16_induction_heads."""
    fig, ax = canvas(_WIDTH, _HEIGHT)
    title(
        ax,
        _WIDTH / 2,
        _HEIGHT - 0.35,
        _("K-composition: how the induction head finds B"),
        fontsize=13,
    )
    tokens = _token_strip(ax)
    layer0 = _previous_token_head(ax, tokens)
    _induction_head(ax, tokens, layer0)
    return fig


def _token_strip(ax) -> dict[str, Box]:
    """The context's tokens with their positions underneath; returns the boxes at s−1, s, t."""
    boxes = {}
    for token, position, x in _STRIP:
        boxes[position] = box(ax, x, _TOKENS_Y, 0.7, 0.5, token, PALETTE["data"], fontsize=12)
        ax.text(
            x,
            _TOKENS_Y - 0.5,
            position,
            ha="center",
            va="center",
            fontsize=10,
            family=mono_family(),
        )
    note(ax, 0.15, _TOKENS_Y + 0.55, _("context"), fontsize=9)
    return boxes


def _previous_token_head(ax, tokens: dict[str, Box]) -> Box:
    """Layer 0: the previous-token head at s reads s−1 and adds "previous token A" to s."""
    text = _("{token} + previous token {previous}").format(token="B", previous="A")
    written = box(ax, _S_X, _LAYER0_Y, 2.1, 0.55, text, PALETTE["attention"], fontsize=10.5)
    arrow(ax, tokens["s"].top, written.bottom)
    arrow(ax, tokens["s−1"].top, written.left, connection="arc3,rad=-0.25")
    note(ax, 0.15, _LAYER0_Y + 0.6, _("layer 0: previous-token head copies A from s−1 to s"))
    return written


def _induction_head(ax, tokens: dict[str, Box], written: Box) -> None:
    """Layer 1: the query at t matches the key at s (K-composition); the value at s is copied out."""
    key = box(
        ax,
        _S_X,
        _LAYER1_Y,
        2.1,
        0.8,
        _("key: previous token {previous}").format(previous="A")
        + "\n"
        + _("value: {token}").format(token="B"),
        PALETTE["modern"],
        fontsize=10.5,
    )
    query = box(
        ax,
        _T_X,
        _LAYER1_Y,
        1.4,
        0.55,
        _("query: {token}").format(token="A"),
        PALETTE["modern"],
        fontsize=10.5,
    )
    arrow(ax, written.top, key.bottom)
    arrow(ax, tokens["t"].top, query.bottom)
    arrow(ax, query.left, key.right, _("K-composition: match"), side="above", offset=0.08)
    note(
        ax,
        (key.right[0] + query.left[0]) / 2,
        _LAYER1_Y - 0.3,
        r"$x_t^\top W_Q^\top W_K\, W_{OV}\, x_{s-1}$",
        ha="center",
        style="normal",
        fontsize=10.5,
    )
    _copy_out(ax, key)
    note(ax, 0.15, _LAYER1_Y + 0.62, _("layer 1: induction head"))


def _copy_out(ax, key: Box) -> None:
    """The value at s (token B) copied out of the induction head: the prediction at t."""
    prediction = box(
        ax,
        _T_X,
        _OUTPUT_Y,
        1.7,
        0.55,
        _("prediction at t: {token}").format(token="B"),
        PALETTE["output"],
        fontsize=10.5,
    )
    arrow(
        ax,
        key.top,
        prediction.left,
        _("copy the value"),
        side="above",
        connection="arc3,rad=-0.15",
        offset=0.12,
    )
