"""Turning a language model into a text generator (introduced in 12_generation).

The model gives, for the last position of a context, a distribution over the next token.
Autoregressive decoding appends one token and repeats (seed 004: y_t = f(y_1 … y_{t−1})).
How the next token is picked is the decoding strategy:

* greedy — always the most probable token (``temperature=0``);
* sampling — draw from softmax(logits / temperature), optionally only among the
  ``top_k`` most probable tokens or the smallest set whose probability reaches ``top_p``;
* beam search — keep the ``beam_width`` best partial continuations by total log-probability.

Every function accepts a prompt [T] (returns [T + n]) or a batch [B, T] (returns [B, T + n])
and any model whose ``forward(idx)`` returns ``(logits [B, T, V], ...)``; when the model has a
``config.context_length`` the context is cropped to its last ``context_length`` tokens.

A model that offers ``new_cache()`` (the course's :class:`~.model.GPT`) is run with a KV cache
(:mod:`.kv_cache`): each step feeds only the new token while the sequence fits in the context
window, and recomputes the cropped window once it does not. ``use_cache=False`` turns it off;
the tokens are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import torch
from torch import nn

from . import _checks as check
from .attention import divide_by_temperature
from .i18n import N_, _
from .machine import evaluating


def _context_length(model: nn.Module) -> int | None:
    return getattr(getattr(model, "config", None), "context_length", None)


def _as_batch(idx: torch.Tensor | Sequence[int], name: str = "idx") -> tuple[torch.Tensor, bool]:
    """A prompt [T] or [B, T] (or a list of ids) -> ([B, T] long, whether it was 1-D)."""
    if not isinstance(idx, torch.Tensor):
        try:
            idx = torch.as_tensor(list(idx), dtype=torch.long)
        except (TypeError, ValueError):
            raise TypeError(
                _("{name} must be a tensor or a list of token ids, got {kind}").format(
                    name=name, kind=type(idx).__name__
                )
            ) from None
    if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == torch.bool:
        raise TypeError(
            _("{name} must hold integer token ids (torch.long), got dtype {dtype}").format(
                name=name, dtype=idx.dtype
            )
        )
    if idx.dim() not in (1, 2):
        raise ValueError(
            _("{name} must have shape [T] or [B, T], got {idx_shape}").format(
                name=name, idx_shape=tuple(idx.shape)
            )
        )
    single = idx.dim() == 1
    batch = idx[None] if single else idx  # (T,) -> (1, T)
    if batch.shape[1] == 0:
        raise ValueError(
            _("{name} is an empty prompt: give at least one token to continue from").format(
                name=name
            )
        )
    return batch.long(), single


def check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """Raise ValueError/TypeError naming the knob when a sampling setting is out of range."""
    check.number("temperature", temperature, minimum=0.0, hint=N_("(0 = greedy)"))
    if top_k is not None:
        check.integer("top_k", top_k)
    if top_p is not None:
        check.number("top_p", top_p, above=0.0, maximum=1.0)


def next_token_logits(model: nn.Module, idx: torch.Tensor) -> torch.Tensor:
    """The model's logits for the token after ``idx`` [B, T], cropped to its context: [B, V]."""
    limit = _context_length(model)
    context = idx if limit is None else idx[:, -limit:]  # (B, T) -> (B, ≤ context_length)
    logits = model(context)[0]  # (B, T', V)
    return logits[:, -1, :].float()  # (B, V) only the last position predicts a new token


class _NextLogits:
    """Next-token logits for a growing sequence, with a KV cache when the model has one.

    While the sequence fits in the context window only the tokens not yet cached are run
    (12_generation). Past the window :func:`next_token_logits` crops to the last
    ``context_length`` tokens, which shifts every token's position and changes what each kept
    token saw; cached keys computed with the longer past would no longer match, so from then
    on every step honestly recomputes the cropped window (the cache is dropped).
    """

    def __init__(self, model: nn.Module, use_cache: bool) -> None:
        check.boolean("use_cache", use_cache)
        self.model = model
        self.limit = _context_length(model)
        # A model without layers has nothing to cache (and no cache to count its tokens).
        self.cache = (
            (model.new_cache() or None) if use_cache and hasattr(model, "new_cache") else None
        )

    def __call__(self, idx: torch.Tensor) -> torch.Tensor:
        """idx [B, T] (the whole sequence so far) -> logits [B, V] for the token after it."""
        if self.cache is not None and self.limit is not None and idx.shape[1] > self.limit:
            self.cache = None  # past the window: recompute on the cropped window from now on
        if self.cache is None:
            return next_token_logits(self.model, idx)  # (B, V)
        new = idx[:, self.cache[0].length :]  # (B, T − cached) only what the cache has not seen
        logits = self.model(new, cache=self.cache)[0]  # (B, T', V)
        return logits[:, -1, :].float()  # (B, V)

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the cached rows ``index`` [B'] (beam search keeps the best beams' parents)."""
        if self.cache is not None:
            for layer in self.cache:
                layer.reorder(index)


class NextLogits(Protocol):
    """What the decoding loops need from a model: the next-token logits of a batch of growing
    sequences, and a way to keep the rows beam search keeps (a KV cache follows them)."""

    def __call__(self, idx: torch.Tensor) -> torch.Tensor: ...  # (K, t) -> (K, V)

    def reorder(self, index: torch.Tensor) -> None: ...  # keep rows index [K']


def decode_loop(
    step: NextLogits,
    idx: torch.Tensor,
    max_new_tokens: int,
    choose: Callable[[torch.Tensor], torch.Tensor],
    *,
    eos_id: int | None = None,
    pad_id: int = 0,
    on_token: Callable[[torch.Tensor], object] | None = None,
) -> torch.Tensor:
    """The autoregressive loop of every model of the course (12_generation, 14_encoder_decoder):
    ``idx`` [B, T] -> [B, T + n], appending ``choose(logits [B, V]) -> [B, 1]`` each step.

    With ``eos_id`` a row that has emitted it gets ``pad_id`` from then on, and the loop stops
    early once every row has. ``on_token`` sees each step's new tokens [B].
    """
    out = idx  # (B, T)
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)  # (B,)
    for _step in range(max_new_tokens):
        logits = step(out)  # (B, V)
        if torch.isnan(logits).any():
            raise ValueError(
                _(
                    "the model's logits are NaN: its weights are not finite (a training run that "
                    "diverged?); load an earlier checkpoint or train again with a lower learning "
                    "rate"
                )
            )
        token = choose(logits)  # (B, 1)
        if eos_id is not None:
            token = token.masked_fill(done[:, None], pad_id)  # (B, 1) finished rows only pad
            done |= token[:, 0] == eos_id
        out = torch.cat([out, token], dim=1)  # (B, T) -> (B, T + 1)
        if on_token is not None:
            on_token(token[:, 0])  # (B,)
        if eos_id is not None and bool(done.all()):
            break
    return out


def beam_search_loop(
    step: NextLogits,
    prompt: torch.Tensor,
    max_new_tokens: int,
    beam_width: int,
    *,
    eos_id: int | None = None,
    pad_id: int = 0,
    score_dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam search from one ``prompt`` [T] (12_generation, 14_encoder_decoder): returns the best
    continuation [T + n] and its total log-probability [].

    Each step extends every live beam by every token and keeps the ``beam_width`` best by total
    log-probability (summed in ``score_dtype``). With ``eos_id`` a beam that emits it is
    finished: it keeps its score, competes with the live ones, and grows only by ``pad_id``;
    the search stops once every kept beam is finished.
    """
    beams = prompt[None]  # (1, T) the kept continuations, prompt included
    scores = torch.zeros(1, dtype=score_dtype, device=prompt.device)  # (1,) their log-probabilities
    finished = torch.zeros(1, dtype=torch.bool, device=prompt.device)  # (1,)
    for _step in range(max_new_tokens):
        if bool(finished.all()):
            break
        live, done = (~finished).nonzero().flatten(), finished.nonzero().flatten()  # (Kl,), (Kf,)
        log_probs = step(beams[live]).log_softmax(dim=-1).to(score_dtype)  # (Kl, V)
        V = log_probs.shape[1]
        pool = torch.cat([scores[done], (scores[live, None] + log_probs).flatten()])  # (Kf + Kl·V,)
        scores, pick = torch.topk(pool, min(beam_width, pool.numel()))  # (K',), (K',) best first
        kept = pick < len(done)  # (K',) a finished beam, kept as it is
        extension = (pick - len(done)).clamp(min=0)  # (K',) index into the live beams' candidates
        parent_row, token = extension // V, extension % V  # (K',) row among the live beams, token
        parent = live[parent_row]  # (K',)
        if kept.any():
            parent[kept], token[kept] = done[pick[kept]], pad_id
        beams = torch.cat([beams[parent], token[:, None]], dim=1)  # (K', t + 1)
        finished = kept | (token == eos_id) if eos_id is not None else kept  # (K',)
        step.reorder(parent_row[~finished])  # each live beam continues its parent's cached keys
    return beams[0], scores[0]


def filter_logits(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    """Logits [..., V] divided by ``temperature``, with the tokens that ``top_k`` / ``top_p``
    exclude set to −inf (12_generation). ``temperature`` must be > 0 here.

    top-k keeps the k largest logits (ties with the k-th are kept too). top-p (nucleus) keeps
    the most probable tokens, in order, until their probability reaches ``top_p``; the most
    probable token is always kept. With both, top-k is applied first.
    """
    check_sampling(temperature, top_k, top_p)
    if temperature == 0:
        raise ValueError(
            _("temperature=0 means greedy decoding: take logits.argmax(-1) instead of filtering")
        )
    scaled = divide_by_temperature(logits, temperature)  # (..., V)
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]  # (..., 1) the k-th largest logit
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))  # (..., V)
    if top_p is not None and top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, dim=-1, descending=True)  # (..., V)
        probs = torch.softmax(sorted_logits, dim=-1)  # (..., V)
        # (..., V) probability of the tokens ranked above
        mass_before = probs.cumsum(dim=-1) - probs
        drop_sorted = mass_before >= top_p  # (..., V) the nucleus already holds top_p without them
        drop = drop_sorted.scatter(-1, order, drop_sorted)  # (..., V) back to vocabulary order
        scaled = scaled.masked_fill(drop, float("-inf"))  # (..., V)
    return scaled


def next_token_probs(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    """The distribution the sampler draws from: softmax of :func:`filter_logits` [..., V].
    ``temperature=0`` gives the greedy one-hot distribution."""
    check_sampling(temperature, top_k, top_p)
    if temperature == 0:
        # (..., V)
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    return torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)  # (..., V)


@torch.no_grad()
def generate(
    model: nn.Module,
    idx: torch.Tensor | Sequence[int],
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    on_token: Callable[[torch.Tensor], object] | None = None,
) -> torch.Tensor:
    """Append ``max_new_tokens`` tokens to the prompt ``idx`` [T] or [B, T] (introduced in
    10_logits_and_loss, where ``temperature=0`` is the greedy loop written by hand; sampling and
    the KV cache are 12_generation's).

    ``temperature=0`` is greedy decoding (``top_k``/``top_p`` are then irrelevant); otherwise
    each token is drawn from softmax(logits / temperature) restricted by ``top_k``/``top_p``,
    using ``generator`` (e.g. ``course.generator(seed)``) for reproducible draws. The model runs
    in eval mode (no dropout) and its mode is restored. Returns prompt + new tokens, same
    number of dimensions as ``idx``.

    ``use_cache`` keeps every layer's keys and values (a KV cache) for models that offer
    ``new_cache()``, so each step runs only the new token while the sequence fits in the
    context window; beyond it each step recomputes the cropped window. The tokens are the
    same either way. ``on_token``, if given, is called after every step with the new tokens
    [B], so that text can be shown as it is produced (see :mod:`.streaming`).
    """
    batch, single = _as_batch(idx)
    check.integer("max_new_tokens", max_new_tokens, 0)
    check_sampling(temperature, top_k, top_p)
    device = next(model.parameters()).device

    def choose(logits: torch.Tensor) -> torch.Tensor:  # (B, V) -> (B, 1)
        if temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)  # (B, 1)
        probs = next_token_probs(logits, temperature, top_k, top_p)  # (B, V)
        sample_device = generator.device if generator is not None else probs.device
        # (B, 1)
        return torch.multinomial(probs.to(sample_device), 1, generator=generator).to(device)

    with evaluating(model):
        out = decode_loop(
            _NextLogits(model, use_cache),
            batch.to(device),
            max_new_tokens,
            choose,
            on_token=on_token,
        )
    return out[0] if single else out


@torch.no_grad()
def continuation_log_probs(
    model: nn.Module,
    prompt: torch.Tensor | Sequence[int],
    continuation: torch.Tensor | Sequence[int],
) -> torch.Tensor:
    """log p(c_i | prompt, c_<i) of every token of ``continuation`` (12_generation).

    ``prompt`` [T] or [B, T], ``continuation`` [n] or [B, n]; returns [n] or [B, n]. The
    context is cropped exactly as :func:`generate` crops it, so the sum is the total
    log-probability that the model gives the continuation. Eval mode, restored afterwards.
    """
    prompt_batch, single = _as_batch(prompt, "prompt")
    if len(continuation) == 0:
        empty = torch.zeros(prompt_batch.shape[0], 0)  # (B, 0) nothing to score
        return empty[0] if single else empty
    cont_batch, _was_1d = _as_batch(continuation, "continuation")
    if cont_batch.shape[0] != prompt_batch.shape[0]:
        raise ValueError(
            _(
                "prompt and continuation must have the same batch size, got {prompt_batch} and "
                "{continuation_batch}"
            ).format(prompt_batch=prompt_batch.shape[0], continuation_batch=cont_batch.shape[0])
        )
    device = next(model.parameters()).device
    full = torch.cat([prompt_batch, cont_batch], dim=1).to(device)  # (B, T + n)
    start, total = prompt_batch.shape[1], full.shape[1]
    limit = _context_length(model)
    with evaluating(model):
        if limit is None or total - 1 <= limit:
            logits = model(full[:, :-1])[0].float()  # (B, T + n − 1, V) every prefix in one pass
            log_probs = logits[:, start - 1 :].log_softmax(dim=-1)  # (B, n, V)
        else:
            # Long sequences: each token sees only the last `limit` tokens before it, as in generate.
            steps = [
                next_token_logits(model, full[:, :i]).log_softmax(-1) for i in range(start, total)
            ]
            log_probs = torch.stack(steps, dim=1)  # n × (B, V) -> (B, n, V)
    chosen = log_probs.gather(-1, full[:, start:, None]).squeeze(-1)  # (B, n)
    return chosen[0].cpu() if single else chosen.cpu()


@torch.no_grad()
def beam_search(
    model: nn.Module,
    idx: torch.Tensor | Sequence[int],
    max_new_tokens: int,
    beam_width: int = 4,
    use_cache: bool = True,
) -> torch.Tensor:
    """The continuation with the highest total log-probability that a beam of
    ``beam_width`` finds (12_generation). Width 1 is greedy decoding.

    At every step each kept continuation is extended by every token, and the ``beam_width``
    best (by the sum of log-probabilities so far) are kept. A wider beam looks further than
    greedy's one step, but is still not an exhaustive search. ``idx`` [T] or [B, T] (each row
    is searched on its own); returns prompt + new tokens like :func:`generate`.
    ``use_cache`` as in :func:`generate`: the cache follows each kept beam's parent.
    """
    batch, single = _as_batch(idx)
    check.integer("max_new_tokens", max_new_tokens, 0)
    check.integer("beam_width", beam_width)
    device = next(model.parameters()).device
    with evaluating(model):
        rows = [
            beam_search_loop(_NextLogits(model, use_cache), prompt, max_new_tokens, beam_width)[0]
            for prompt in batch.to(device)
        ]  # B × (T + n,) the best beam of each row
    out = torch.stack(rows)  # (B, T + n)
    return out[0] if single else out
