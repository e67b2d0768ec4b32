"""The generation playground of 12_generation.

Plain functions do the work and are tested without a browser:

* :func:`make_codec` — text <-> model ids, for the full ``cl100k_base`` vocabulary or a
  compact one (11_training);
* :func:`decode_with` — one decoding strategy by name ("greedy", "sample", "top-k", "top-p",
  "beam") on a prompt of ids;
* :func:`continue_text` — prompt text in, :class:`Continuation` out (new tokens, their
  probabilities, and a note when the prompt was empty or longer than the context);
* :func:`continuation_html` — the continuation with every token coloured by its probability.

:func:`generation_widget` is the thin ipywidgets wrapper around them.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from matplotlib import colormaps
from matplotlib.colors import to_hex
from torch import nn

from .. import _checks
from ..data import Codec
from ..generate import beam_search, continuation_log_probs, generate
from ..i18n import N_, _

METHODS = ("greedy", "sample", "top-k", "top-p", "beam")
#: The methods as the playground's dropdown names them (the values stay :data:`METHODS`).
METHOD_LABELS = {
    "greedy": N_("greedy"),
    "sample": N_("sample"),
    "top-k": N_("top-k"),
    "top-p": N_("top-p"),
    "beam": N_("beam"),
}
COLOURMAP = "RdYlGn"  # red = improbable, green = probable (log scale, see probability_colour)


def make_codec(
    encoding, vocabulary=None
) -> tuple[Callable[[str], list[int]], Callable[[int], str]]:
    """``(encode, decode_token)`` for a model over ``encoding``'s ids, or over the compact ids
    of ``vocabulary`` (a ``CompactVocabulary``): :class:`~transformer_course.data.Codec`
    (11_training) as the two plain functions the widget calls. ``encode`` raises the compact
    vocabulary's ValueError for text it cannot represent."""
    codec = Codec(encoding, vocabulary)

    def encode(text: str) -> list[int]:
        # Not codec.encode: the widget shows the vocabulary's own message, with the token ids.
        ids = encoding.encode_ordinary(text)  # "<|endoftext|>" typed is plain text
        return vocabulary.encode(ids).tolist() if vocabulary is not None and ids else ids

    def decode_token(token_id: int) -> str:
        return codec.decode(torch.tensor([int(token_id)]))  # (1,)

    return encode, decode_token


def make_token_bytes(encoding, vocabulary=None) -> Callable[[int], bytes]:
    """``token_bytes(id)``: the bytes of one model id (a ``cl100k_base`` id, or a compact id of
    ``vocabulary``), for :class:`~transformer_course.streaming.TokenStreamer` (12_generation)."""
    codec = Codec(encoding, vocabulary)

    def token_bytes(token_id: int) -> bytes:
        original = int(codec.original_ids(torch.tensor([int(token_id)]))[0])  # (1,) -> id
        return encoding.decode_single_token_bytes(original)

    return token_bytes


def decode_with(
    model: nn.Module,
    prompt_ids: list[int] | torch.Tensor,
    method: str = "greedy",
    max_new_tokens: int = 20,
    temperature: float = 1.0,
    top_k: int = 10,
    top_p: float = 0.9,
    beam_width: int = 4,
    seed: int = 0,
    on_token: Callable[[int], object] | None = None,
) -> list[int]:
    """The new token ids that ``method`` appends to ``prompt_ids`` (12_generation).

    "greedy" = temperature 0; "sample" = plain sampling at ``temperature``; "top-k" and
    "top-p" sample at ``temperature`` from the filtered distribution; "beam" runs a beam
    search of ``beam_width``. Sampling draws from a generator seeded with ``seed``.
    ``on_token(id)`` is called as each token is produced; beam search knows its best beam
    only at the end, so it reports its tokens then.
    """
    _checks.choice("method", method, METHODS)
    prompt = torch.as_tensor(prompt_ids, dtype=torch.long)  # (T,)
    generator = torch.Generator().manual_seed(seed)
    report = None if on_token is None else (lambda token: on_token(int(token[0])))  # token: (1,)
    if method == "beam":
        out = beam_search(model, prompt, max_new_tokens, beam_width=beam_width)  # (T + n,)
        for token in out[prompt.numel() :].tolist() if on_token is not None else []:
            on_token(token)
    elif method == "greedy":
        out = generate(model, prompt, max_new_tokens, temperature=0, on_token=report)  # (T + n,)
    else:
        out = generate(
            model,
            prompt,
            max_new_tokens,
            temperature=temperature,
            top_k=top_k if method == "top-k" else None,
            top_p=top_p if method == "top-p" else None,
            generator=generator,
            on_token=report,
        )  # (T + n,)
    return out[prompt.numel() :].tolist()


@dataclass
class Continuation:
    """What :func:`continue_text` produced: the ids and texts of the prompt and the new
    tokens, each new token's probability under the model, and a note for the learner."""

    prompt: str
    prompt_ids: list[int]
    new_ids: list[int]
    tokens: list[str]
    probs: list[float]
    note: str = ""
    error: str = ""
    settings: dict = field(default_factory=dict)

    @property
    def log_prob(self) -> float:
        """Total log-probability of the new tokens (0 for none, −inf if one has probability 0)."""
        return sum(math.log(p) if p > 0 else -math.inf for p in self.probs)

    @property
    def text(self) -> str:
        return "".join(self.tokens)


def continue_text(
    model: nn.Module,
    prompt: str,
    encode: Callable[[str], list[int]],
    decode_token: Callable[[int], str],
    method: str = "greedy",
    max_new_tokens: int = 20,
    temperature: float = 1.0,
    top_k: int = 10,
    top_p: float = 0.9,
    beam_width: int = 4,
    seed: int = 0,
    on_token: Callable[[int], object] | None = None,
) -> Continuation:
    """Continue ``prompt`` with ``method`` (12_generation); never raises for bad input.

    An empty prompt, text the vocabulary cannot encode, or a knob out of range come back as
    ``Continuation.error``. A prompt longer than the model's context is kept whole, and the
    ``note`` says that the model reads only its last ``context_length`` tokens.
    ``on_token(id)`` sees each new token as it is produced (the widget streams text with it).
    """
    settings = dict(
        method=method,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        beam_width=beam_width,
        seed=seed,
    )
    empty = Continuation(
        prompt=prompt, prompt_ids=[], new_ids=[], tokens=[], probs=[], settings=settings
    )
    prompt_ids, empty.error = _prompt_ids(prompt, seed, encode)
    if empty.error:
        return empty
    empty.prompt_ids = list(prompt_ids)
    try:
        new_ids = decode_with(model, prompt_ids, **settings, on_token=on_token)
    except (ValueError, TypeError) as error:
        empty.error = _("Cannot generate with these settings: {error}").format(error=error)
        return empty
    return _finished(model, prompt, prompt_ids, new_ids, decode_token, settings)


def _finished(
    model: nn.Module,
    prompt: str,
    prompt_ids: Sequence[int],
    new_ids: list[int],
    decode_token: Callable[[int], str],
    settings: dict,
) -> Continuation:
    """The continuation :func:`continue_text` returns: each new token's text and probability,
    and the note on a prompt longer than the context."""
    probs = continuation_log_probs(model, prompt_ids, new_ids).exp().tolist() if new_ids else []
    return Continuation(
        prompt=prompt,
        prompt_ids=list(prompt_ids),
        new_ids=new_ids,
        tokens=[decode_token(i) for i in new_ids],
        probs=probs,
        note=_context_note(model, len(prompt_ids)),
        settings=settings,
    )


def _prompt_ids(
    prompt: object, seed: object, encode: Callable[[str], list[int]]
) -> tuple[list[int], str]:
    """The prompt's ids, or an error message for the learner (an empty prompt, a seed that is
    not a whole number, text the vocabulary cannot encode)."""
    if not isinstance(prompt, str) or not prompt.strip():
        return [], _("The prompt is empty: type a few words for the model to continue.")
    if isinstance(seed, bool) or not isinstance(seed, int):
        return [], _(
            "Cannot generate with these settings: seed must be a whole number, got {seed!r}"
        ).format(seed=seed)
    try:
        prompt_ids = encode(prompt)
    except ValueError as error:
        return [], _("This text cannot be encoded for this model: {error}").format(error=error)
    if not prompt_ids:
        return [], _("The prompt encodes to no tokens: type a few words for the model to continue.")
    return prompt_ids, ""


def _context_note(model: nn.Module, n_prompt: int) -> str:
    """A note when the prompt is longer than the model's context window, else ""."""
    context_length = getattr(getattr(model, "config", None), "context_length", None)
    if context_length is None or n_prompt <= context_length:
        return ""
    return _(
        "The prompt has {n_prompt} tokens but the model reads at most {context_length}: "
        "it continues from the last {context_length} (the rest is shown, but not seen)."
    ).format(n_prompt=n_prompt, context_length=context_length)


def probability_colour(p: float) -> str:
    """The background colour of a token with probability ``p``: red at 0.001 or less, yellow
    around 0.03, green at 1. The scale is logarithmic because a small model gives most tokens
    well under 0.5; the colours are lightened so black text stays readable on them."""
    position = (math.log10(min(max(float(p), 1e-3), 1.0)) + 3.0) / 3.0  # 0.001 -> 0, 1 -> 1
    r, g, b, _alpha = colormaps[COLOURMAP](position)
    return to_hex((0.55 * r + 0.45, 0.55 * g + 0.45, 0.55 * b + 0.45))


def _visible(text: str) -> str:
    escaped = html.escape(text)
    return escaped.replace("\n", "↵<br>").replace("\t", "⇥")


def continuation_html(result: Continuation) -> str:
    """An HTML block: the prompt in grey, then each new token on a background coloured by its
    probability (hover for the number), the total log-probability, and any note or error."""
    parts = ["<div style='font-family: monospace; line-height: 1.9'>"]
    if result.error:
        parts.append(f"<b style='color:#b00'>{html.escape(result.error)}</b>")
        parts.append("</div>")
        return "".join(parts)
    parts.append(f"<span style='color:#777'>{_visible(result.prompt)}</span>")
    for token, p in zip(result.tokens, result.probs):
        parts.append(
            f"<span title='p = {p:.3f}' style='background:{probability_colour(p)}; "
            f"color:black; border-radius:3px; padding:1px 1px'>{_visible(token)}</span>"
        )
    parts.append("</div>")
    legend = "".join(
        f"<span style='background:{probability_colour(p)}; color:black; padding:0 6px'>{p:g}</span>"
        for p in (0.001, 0.01, 0.1, 1.0)
    )
    summary = _(
        "probability of each new token: {legend} · {n} new tokens, total log-probability {log_prob}"
    ).format(legend=legend, n=len(result.new_ids), log_prob=f"{result.log_prob:.2f}")
    parts.append(f"<div style='font-size:90%'>{summary}</div>")
    if result.note:
        parts.append(f"<div style='color:#a60'>{html.escape(result.note)}</div>")
    return "".join(parts)


def streaming_html(prompt: str, text: str) -> str:
    """The continuation while it is being produced: the prompt in grey, the text so far, a cursor."""
    return (
        "<div style='font-family: monospace; line-height: 1.9'>"
        f"<span style='color:#777'>{_visible(prompt)}</span>{_visible(text)}▌</div>"
    )


def generation_widget(
    model: nn.Module,
    encode: Callable[[str], list[int]],
    decode_token: Callable[[int], str],
    prompt: str = "The key to a successful sale is",
    token_bytes: Callable[[int], bytes] | None = None,
):
    """The playground of 12_generation: a prompt box, the decoding method and its knobs; the
    text appears as it is produced (whole characters only, with ``token_bytes`` from
    :func:`make_token_bytes`), then with every token coloured by its probability. Returns the widget."""
    import ipywidgets as widgets

    from ..streaming import TokenStreamer

    if token_bytes is None:
        token_bytes = lambda token_id: decode_token(token_id).encode("utf-8")  # noqa: E731

    text = widgets.Textarea(
        value=prompt,
        description=_("prompt"),
        continuous_update=False,
        layout=widgets.Layout(width="95%"),
    )
    knobs = _knobs()
    shown = widgets.HTML()

    def show(prompt: str, **settings) -> None:
        streamer, so_far = TokenStreamer(token_bytes), []

        def stream(token_id: int) -> None:
            so_far.append(streamer.push(token_id))
            shown.value = streaming_html(prompt, "".join(so_far))

        result = continue_text(model, prompt, encode, decode_token, **settings, on_token=stream)
        shown.value = continuation_html(result)

    out = widgets.interactive_output(show, {"prompt": text, **knobs})
    rows = widgets.VBox(
        [
            widgets.HBox([knobs[name] for name in ("method", "max_new_tokens", "seed")]),
            widgets.HBox([knobs[name] for name in ("temperature", "top_k", "top_p", "beam_width")]),
        ]
    )
    return widgets.VBox([text, rows, shown, out])


def _knobs() -> dict:
    """The playground's knobs, named like :func:`continue_text`'s arguments."""
    import ipywidgets as widgets

    methods = [(_(METHOD_LABELS[method]), method) for method in METHODS]
    return {
        "method": widgets.Dropdown(options=methods, value="top-k", description=_("method")),
        "max_new_tokens": widgets.IntSlider(value=20, min=1, max=60, description=_("new tokens")),
        "temperature": widgets.FloatSlider(
            value=0.8,
            min=0.05,
            max=2.0,
            step=0.05,
            description=_("temperature"),
            style={"description_width": "initial"},  # the default width cuts it to "temperat…"
        ),
        "top_k": widgets.IntSlider(value=10, min=1, max=100, description="top-k"),
        "top_p": widgets.FloatSlider(value=0.9, min=0.05, max=1.0, step=0.05, description="top-p"),
        "beam_width": widgets.IntSlider(value=4, min=1, max=10, description=_("beam width")),
        "seed": widgets.IntSlider(value=0, min=0, max=99, description=_("seed")),
    }
