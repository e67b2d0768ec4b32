"""Exercises of 06_mask."""

from __future__ import annotations

import torch

from .. import _checks as check
from ..attention import MultiHeadAttention, causal_mask
from ..attention import padding_mask as library_padding_mask
from ..i18n import N_, _
from ..model import GPT, GPTConfig
from . import NOT_ANSWERED, Feedback, check_value, checker, report, unanswered
from .answers import read_bool
from .build import build_exercise, hard_case
from .solutions.mask import find_broken_layer, mask_future, padding_mask, sees_the_future


@checker(
    hint=N_("""
        row `query` of the causal mask is True in columns 0 … query (the past and the query
        itself). Positions count from 0.
    """)
)
def check_visible_keys(answer: object, query: int = 5, hint: bool = False) -> Feedback:
    """How many keys query position ``query`` (0-based) may attend to under the causal mask."""
    return check_value(
        answer,
        query + 1,
        _("positions 0 … {query}: {n} keys (itself included).").format(query=query, n=query + 1),
        _("a query sees every earlier position and itself, and positions start at 0."),
    )


class _LeakyAttention(MultiHeadAttention):
    """A MultiHeadAttention whose causal mask is subtly wrong (for 06_mask's exercises and the
    causality tests). ``diagonal=1``: query i also sees key i + 1 (an off-by-one ``tril``);
    ``diagonal=None``: the mask is dropped; ``peek=(i, j)``: only query i also sees key j."""

    def __init__(
        self,
        source: MultiHeadAttention,
        diagonal: int | None = 1,
        peek: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(
            source.d_model,
            source.n_heads,
            n_kv_heads=source.n_kv_heads,
            dropout=source.dropout,
            bias=source.q_proj.bias is not None,
            rope=source.rope,
            rope_base=source.rope_base,
        )
        self.load_state_dict(source.state_dict())
        self.to(source.q_proj.weight.device)
        self._diagonal = diagonal
        self._peek = peek

    def _get_name(self) -> str:  # prints as the real thing: the bug is not in the name
        return "MultiHeadAttention"

    def forward(self, x, context=None, mask=None, causal=False, return_weights=False, cache=None):
        if causal:
            T = x.shape[1]
            if self._peek is not None:
                leaky = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # (T, T)
                i, j = self._peek
                if i < T and j < T:
                    leaky[i, j] = True
            elif self._diagonal is None:
                leaky = torch.ones(T, T, dtype=torch.bool, device=x.device)  # (T, T) nothing hidden
            else:
                # (T, T)
                leaky = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(self._diagonal)
            mask = leaky if mask is None else mask & leaky
        return super().forward(
            x, context=context, mask=mask, causal=False, return_weights=return_weights, cache=cache
        )


def leaky_gpt(
    config: GPTConfig,
    layer: int = 0,
    *,
    diagonal: int | None = 1,
    peek: tuple[int, int] | None = None,
    seed: int = 0,
) -> GPT:
    """A GPT (06_mask exercise) whose block ``layer`` has a broken causal mask; see
    :class:`_LeakyAttention` for ``diagonal`` and ``peek``. Everything else, weights included
    (seeded with ``seed``), is the course's model."""
    check.instance("config", config, GPTConfig)
    check.integer("layer", layer, 0, config.n_layers - 1)
    with torch.random.fork_rng(devices=[]):  # seeded weights, the caller's random state untouched
        torch.manual_seed(seed)
        model = GPT(config)
    block = model.blocks[layer]
    block.attn = _LeakyAttention(block.attn, diagonal=diagonal, peek=peek)
    return model


def suspect_model(seed: int = 6) -> GPT:
    """06_mask's suspect: a 4-block GPT (vocabulary 50, context 12) with one block whose mask
    is off by one. Which block depends on ``seed``."""
    config = GPTConfig(
        vocab_size=50, context_length=12, d_model=32, n_heads=4, n_layers=4, dropout=0.0
    )
    layer = int(
        torch.randint(0, config.n_layers, (1,), generator=torch.Generator().manual_seed(seed))
    )
    return leaky_gpt(config, layer, diagonal=1, seed=seed)


def _truth(model: torch.nn.Module, idx: torch.Tensor, t: int) -> bool:
    with torch.no_grad():
        changed = idx.clone()
        # (B, T) every later token differs
        changed[:, t + 1 :] = (changed[:, t + 1 :] + 1) % model.config.vocab_size
        before, _loss = model(idx)  # (B, T, V)
        after, _loss = model(changed)  # (B, T, V)
    return not torch.equal(before[:, : t + 1], after[:, : t + 1])


def _suspects(config: GPTConfig, seed: int) -> dict[str, GPT]:
    """A causal GPT and two that peek: the models ``sees_the_future`` must tell apart."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        causal = GPT(config)
    return {
        _("a causal GPT"): causal,
        _("a GPT whose block 1 is off by one"): leaky_gpt(config, 1, seed=seed + 1),
        _("a GPT where only query 2 peeks at key 5"): leaky_gpt(
            config, 0, peek=(2, 5), seed=seed + 2
        ),
    }


def _judge_one(answer, model: GPT, idx: torch.Tensor, t: int, where: str) -> Feedback | None:
    """The learner's verdict on one (model, t), or None when it is right."""
    try:
        got = answer(model, idx.clone(), t)
    except Exception as error:  # the learner's code: report, never crash the notebook
        return report(
            False,
            "",
            _("your function raised {kind}: {error} ({where}).").format(
                kind=type(error).__name__, error=error, where=where
            ),
        )
    if unanswered(got):  # the stub's body is still `...`: it returns None
        return report(
            False,
            "",
            _("your function returns None: replace the `...` in its body with your code."),
            answered=False,
        )
    got, problem = read_bool(got)
    if problem:
        return report(
            False,
            "",
            _("your function should {problem} ({where})").format(
                problem=problem[0].lower() + problem[1:], where=where
            ),
        )
    want = _truth(model, idx, t)
    if got != want:
        return report(
            False,
            "",
            _(
                "{where}: the right answer is {want}, yours is {got}. Hint: copy idx, change "
                "every token after position t, run the model on both, and compare the logits of "
                "positions 0 … t (torch.equal, not a tolerance: a causal model gives identical "
                "numbers)."
            ).format(where=where, want=want, got=bool(got)),
        )
    return None


@checker(
    hint=N_("""
        copy `idx` (`idx.clone()`), give every position after t a different token, e.g. `(id
        + 1) % model.config.vocab_size`, run `model(...)` on both under `torch.no_grad()`
        (it returns `(logits, loss)`), and compare `logits[:, : t + 1]` of the two runs with
        `torch.equal` — no tolerance: a causal model gives identical numbers there.
    """)
)
def check_sees_the_future(answer: object, seed: int = 0, hint: bool = False) -> Feedback:
    """06_mask exercise: ``answer`` is the learner's ``sees_the_future(model, idx, t) -> bool``.

    It is run on fresh models (a causal one, one with an off-by-one block, one where a single
    query peeks at a single later key) and must say, for every t, whether changing the tokens
    after t moves any output at positions 0 … t."""
    if unanswered(answer):
        return report(False, "", _(NOT_ANSWERED), answered=False)
    if not callable(answer):
        return report(
            False,
            "",
            _("answer with your function sees_the_future itself (no call), got {kind}.").format(
                kind=type(answer).__name__
            ),
        )
    config = GPTConfig(
        vocab_size=40, context_length=8, d_model=16, n_heads=2, n_layers=2, dropout=0.0
    )
    idx = torch.randint(
        0,
        config.vocab_size,
        (2, config.context_length),
        generator=torch.Generator().manual_seed(seed),
    )  # (B, T)
    for name, model in _suspects(config, seed).items():
        model.eval()
        for t in range(config.context_length - 1):
            problem = _judge_one(
                answer, model, idx, t, _("on {name}, t = {t}").format(name=name, t=t)
            )
            if problem is not None:
                return problem
    return report(
        True,
        _(
            "your test catches an off-by-one mask and a single leaking cell, and passes the "
            "causal model. `causality.check_causal` does the same for every t, and adds the "
            "gradient test."
        ),
        "",
    )


@checker(
    hint=N_("""
        loop over `enumerate(suspect.blocks)` and run `check_causal(block.attn, causal=True,
        raise_on_leak=False)` on each; its `.ok` is False for the leaking block. Answer with
        that index.
    """)
)
def check_broken_layer(answer: object, model: GPT | None = None, hint: bool = False) -> Feedback:
    """06_mask exercise: which block of ``model`` (the suspect, by default ``suspect_model()``)
    has the leaking mask?"""
    if model is None:
        model = suspect_model()
    from ..causality import check_causal

    leaking = [
        i
        for i, block in enumerate(model.blocks)
        if not check_causal(
            block.attn, T=model.config.context_length, causal=True, raise_on_leak=False
        )
    ]
    expected = leaking[0] if len(leaking) == 1 else leaking
    return check_value(
        answer,
        expected,
        _(
            "block {expected}: `check_causal(model.blocks[{expected}].attn, causal=True)` names "
            "the pairs (t, t + 1) — an off-by-one diagonal."
        ).format(expected=expected),
        _(
            "run `causality.check_causal(block.attn, causal=True, raise_on_leak=False)` on each "
            "block of the model and answer with the index (0-based) of the one that is not "
            "causal."
        ),
    )


check_sees_the_future.solution = sees_the_future  # type: ignore[attr-defined]
check_broken_layer.solution = find_broken_layer  # type: ignore[attr-defined]


def _masked_scores_reference(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    return scores.masked_fill(~causal_mask(T, device=scores.device), float("-inf"))  # (B, H, T, T)


def _random_scores(generator: torch.Generator) -> tuple[torch.Tensor]:
    B, H, T = (int(n) for n in torch.randint(1, 6, (3,), generator=generator))
    T = 1 if hard_case(generator, 5) == 0 else max(T, 2)  # T ≥ 2 in four trials: a future to hide
    return (torch.randn(B, H, T, T, generator=generator),)  # (B, H, T, T)


def _triu_with_the_diagonal(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    hidden = torch.ones(T, T, dtype=torch.bool, device=scores.device).triu()  # diagonal=0: j >= i
    return scores.masked_fill(hidden, float("-inf"))  # (B, H, T, T) each token's own key hidden too


def _future_set_to_zero(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    return scores.masked_fill(~causal_mask(T, device=scores.device), 0.0)  # e^0 = 1: still a share


check_mask_future = build_exercise(
    notebook="06_mask",
    solution=mask_future,
    hint=N_("""
        build the (T, T) boolean lower triangle (`torch.ones(T, T,
        dtype=torch.bool).tril()`), then `scores.masked_fill(~visible, float('-inf'))`: the
        ~ selects the future. T is `scores.shape[-1]`; the (T, T) mask broadcasts over B and
        H.
    """),
    success=N_("""
        Softmax turns every −∞ into a weight of exactly 0.
    """),
    reference=_masked_scores_reference,
    make_inputs=_random_scores,
    slips={
        N_(
            "`triu()` with the diagonal: `torch.triu` keeps the diagonal by default (diagonal=0), "
            "so it hides each token's own key too; the future is `triu(diagonal=1)`"
        ): (_triu_with_the_diagonal),
        N_(
            "0 instead of −∞ for the future (softmax gives e⁰ = 1, a share, not 0)"
        ): _future_set_to_zero,
    },
)


def _padding_mask_reference(lengths: torch.Tensor, S: int) -> torch.Tensor:
    # (1, S) < (B, 1) -> (B, S)
    valid = torch.arange(S, device=lengths.device)[None, :] < lengths[:, None]
    return library_padding_mask(valid)  # (B, S) -> (B, 1, 1, S)


def _random_lengths(generator: torch.Generator) -> tuple[torch.Tensor, int]:
    padded = hard_case(generator, 5) != 0  # four trials of five hold a padded window
    B = int(torch.randint(2 if padded else 1, 6, (1,), generator=generator))
    S = int(torch.randint(2 if padded else 1, 9, (1,), generator=generator))
    # (B,) every window has ≥ 1 real token
    lengths = torch.randint(1, S + 1, (B,), generator=generator)
    lengths[0] = S  # a window with no padding at all: a sloppy `<=` or off-by-one shows here too
    if padded:
        lengths[-1] = int(torch.randint(1, S, (), generator=generator))  # (B,) and a padded one
    return lengths, S


def _one_padded_key_too_many(lengths: torch.Tensor, S: int) -> torch.Tensor:
    valid = torch.arange(S, device=lengths.device)[None, :] <= lengths[:, None]  # (B, S)
    return valid[:, None, None, :]  # (B, 1, 1, S)


check_padding_mask = build_exercise(
    notebook="06_mask",
    solution=padding_mask,
    hint=N_("""
        compare the positions `torch.arange(S)` with each window's length: a (1, S) row
        against a (B, 1) column broadcasts to (B, S), True where position < length. Then add
        two axes of size 1 in the middle, `[:, None, None, :]`, so the mask broadcasts over
        heads and queries.
    """),
    success=N_("""
        `attention.padding_mask` does the last step; `&` with the causal mask gives (B, 1,
        T, T).
    """),
    reference=_padding_mask_reference,
    make_inputs=_random_lengths,
    slips={
        N_(
            "`<=` instead of `<` (position `length` is the first padded key, not the last real one)"
        ): (_one_padded_key_too_many),
    },
)
