"""Exercises of the attention steps: 04_qkv, 05_scale, 06_mask, 07_softmax, 08_v_attention."""

from __future__ import annotations

import math

import torch

from ..attention import MultiHeadAttention
from ..model import GPT, GPTConfig
from . import NOT_ANSWERED, Feedback, check_value, checker, report, unanswered
from .answers import first_difference, read_bool, read_tensor


def _check_tensor(
    answer: object, expected: torch.Tensor, success: str, hint: str, *, atol: float = 1e-4
) -> Feedback:
    if unanswered(answer):
        return report(False, success, NOT_ANSWERED, answered=False)
    want = expected.detach().to(torch.bool if expected.dtype == torch.bool else torch.float64)
    given, problem = read_tensor(answer, want.dtype)
    if problem:
        return report(False, success, f"{problem} {hint}")
    if tuple(given.shape) != tuple(want.shape):
        return report(False, success, f"expected shape {tuple(want.shape)}, got {tuple(given.shape)}. {hint}")
    if want.dtype == torch.bool:
        ok = bool(torch.equal(given, want))
    else:
        ok = bool(torch.allclose(given, want, atol=atol, rtol=1e-4, equal_nan=False)) and bool(
            torch.equal(torch.isinf(given), torch.isinf(want))
        )
    return report(ok, success, hint if ok else f"{first_difference(given, want, atol)} {hint}")


# ---- 04_qkv -------------------------------------------------------------------------------


@checker
def check_split_shape(answer: object, B: int = 2, T: int = 10, C: int = 96, H: int = 8) -> Feedback:
    """The shape of split_heads on a [B, T, C] tensor with H heads: (B, H, T, C // H)."""
    expected = (B, H, T, C // H)
    return check_value(
        answer,
        expected,
        f"({B}, {T}, {C}) → ({B}, {T}, {H}, {C // H}) → {expected}: D = {C} / {H} = {C // H}.",
        "the head axis moves in front of time: (B, T, C) → (B, T, H, D) → (B, H, T, D) with D = C // H.",
    )


@checker
def check_head_of_column(
    answer: object, column: int = 37, d_model: int = 64, n_heads: int = 4
) -> Feedback:
    """Which head receives column ``column`` of Q after the split."""
    D = d_model // n_heads
    expected = column // D
    return check_value(
        answer,
        expected,
        f"each head owns a block of D = {D} consecutive columns, so column {column} belongs to head "
        f"{column} // {D} = {expected}.",
        f"head h gets columns h·D … (h+1)·D − 1, with D = d_model // n_heads = {D}.",
    )


@checker
def check_projection_params(answer: object, d_model: int = 64) -> Feedback:
    """The number of parameters of W_Q, W_K and W_V together (each a Linear(d_model, d_model) with bias)."""
    expected = 3 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        f"3 × ({d_model}·{d_model} weights + {d_model} biases) = {expected}; the number of heads does not change it.",
        "each of the three maps is a d_model × d_model matrix plus a bias of d_model numbers; "
        "splitting into heads adds no parameters.",
    )


# ---- 05_scale -----------------------------------------------------------------------------


@checker
def check_scale_factor(answer: object, d_model: int = 64, n_heads: int = 4) -> Feedback:
    """The factor the scores of one head are multiplied by: 1 / √(d_model / n_heads)."""
    d_k = d_model // n_heads
    expected = 1 / math.sqrt(d_k)
    return check_value(
        answer,
        expected,
        f"each head works in d_k = {d_model} / {n_heads} = {d_k} dimensions, so the factor is 1/√{d_k} = {expected:g}.",
        "d_k is the size of one head (d_model // n_heads), not d_model; the factor is 1 / √d_k.",
        tolerance=1e-6,
    )


@checker
def check_score_variance(answer: object, d_k: int = 256) -> Feedback:
    """The variance of q·k for random q, k with d_k independent unit-variance entries (unscaled)."""
    return check_value(
        answer,
        d_k,
        f"q·k is a sum of {d_k} independent products of variance 1, so its variance is {d_k}; "
        f"dividing by √{d_k} brings it back to 1.",
        "each product q_i k_i has mean 0 and variance 1, and variances of independent terms add up.",
        tolerance=1e-6,
    )


@checker
def check_scaled_std(answer: object, d_k: int = 256) -> Feedback:
    """The standard deviation of q·k / √d_k for the same random vectors."""
    return check_value(
        answer,
        1.0,
        "Var(q·k / √d_k) = d_k / d_k = 1, so the standard deviation is 1 whatever d_k is.",
        f"dividing by √{d_k} divides the variance ({d_k}) by {d_k}.",
        tolerance=1e-6,
    )


# ---- 06_mask ------------------------------------------------------------------------------


@checker
def check_causal_mask(answer: object, T: int = 5) -> Feedback:
    """A boolean [T, T] mask, True where query i may attend to key j (j ≤ i)."""
    expected = torch.ones(T, T, dtype=torch.bool).tril()
    return _check_tensor(
        answer,
        expected,
        f"the lower triangle (diagonal included) of a {T} × {T} matrix: each query sees itself and the past.",
        "build a bool tensor with torch.ones(T, T, dtype=torch.bool) and keep its lower triangle (.tril()); "
        "True means 'may attend'.",
    )


@checker
def check_visible_keys(answer: object, query: int = 5) -> Feedback:
    """How many keys query position ``query`` (0-based) may attend to under the causal mask."""
    return check_value(
        answer,
        query + 1,
        f"positions 0 … {query}: {query + 1} keys (itself included).",
        "a query sees every earlier position and itself, and positions start at 0.",
    )


@checker
def check_masked_fraction(answer: object, T: int = 16) -> Feedback:
    """The fraction of the T × T scores that the causal mask sets to −inf."""
    expected = (T * (T - 1) / 2) / (T * T)
    return check_value(
        answer,
        expected,
        f"the strict upper triangle holds T(T−1)/2 = {T * (T - 1) // 2} of {T * T} entries: {expected:.5f}.",
        "count the entries strictly above the diagonal and divide by T².",
        tolerance=1e-4,
    )


# ---- 07_softmax ---------------------------------------------------------------------------


@checker
def check_softmax_row(answer: object, scores: torch.Tensor | None = None) -> Feedback:
    """softmax of one row of scores ``scores`` [T] (default ``[2, 1, 0, -inf]``); the answer is [T] too."""
    if scores is None:
        scores = torch.tensor([2.0, 1.0, 0.0, float("-inf")])
    expected = torch.softmax(scores.double(), dim=-1)
    return _check_tensor(
        answer,
        expected,
        f"exp(s − max) / Σ exp(s − max) = {[round(v, 4) for v in expected.tolist()]}; the −inf entry gets exactly 0.",
        "subtract the row max, exponentiate (exp(−inf) = 0) and divide by the sum of the row.",
    )


@checker
def check_uniform_entropy(answer: object, n: int = 16) -> Feedback:
    """The entropy (nats) of a row that spreads its weight evenly over ``n`` keys."""
    expected = math.log(n)
    return check_value(
        answer,
        expected,
        f"−Σ (1/{n}) log(1/{n}) = log {n} ≈ {expected:.4f} nats, the largest entropy {n} keys allow.",
        "every weight is 1/n, so the entropy is −n · (1/n) · log(1/n).",
        tolerance=1e-4,
    )


@checker
def check_temperature_limit(answer: object) -> Feedback:
    """Which key wins all the weight as τ → 0 for scores ``[0.5, 2.0, 1.9, -1.0]`` (index)."""
    return check_value(
        answer,
        1,
        "as τ → 0 the gaps between scores are multiplied by 1/τ and the largest score (2.0, index 1) takes all.",
        "dividing by a tiny τ stretches the differences: the largest score wins. Answer with its index.",
    )


# ---- 08_v_attention -----------------------------------------------------------------------


@checker
def check_mha_params(answer: object, d_model: int = 64) -> Feedback:
    """The parameter count of MultiHeadAttention(d_model, n_heads) with biases (any n_heads)."""
    expected = 4 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        f"W_Q, W_K, W_V and W_O, each {d_model}·{d_model} + {d_model}: {expected}.",
        "four Linear(d_model, d_model) layers with biases; the number of heads does not change the count.",
    )


@checker
def check_attention_output(answer: object, weights: torch.Tensor, v: torch.Tensor) -> Feedback:
    """The output of one head: ``weights`` [T, T] @ ``v`` [T, D]."""
    expected = weights @ v  # (T, T) @ (T, D) -> (T, D)
    return _check_tensor(
        answer,
        expected,
        f"row i is the weighted average Σ_j w_ij v_j: a {tuple(expected.shape)} tensor.",
        "multiply the weight matrix by V (weights @ v), rows of weights against the rows of V.",
    )


@checker
def check_merged_shape(
    answer: object, B: int = 4, H: int = 4, T: int = 16, D: int = 16
) -> Feedback:
    """The shape of merge_heads on a [B, H, T, D] tensor."""
    expected = (B, T, H * D)
    return check_value(
        answer,
        expected,
        f"(B, H, T, D) → (B, T, H, D) → (B, T, H·D) = {expected}.",
        "move the head axis back behind time and glue the heads' columns side by side.",
    )


# ---- 06_mask: catch a leaking model ----------------------------------------------------------


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
                leaky = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(
                    self._diagonal
                )  # (T, T)
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
    if not isinstance(config, GPTConfig):
        raise TypeError(f"config must be a GPTConfig, got {type(config).__name__}")
    if not 0 <= layer < config.n_layers:
        raise ValueError(f"layer must lie in 0 … {config.n_layers - 1}, got {layer}")
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
        changed[:, t + 1 :] = (
            changed[:, t + 1 :] + 1
        ) % model.config.vocab_size  # (B, T) every later token differs
        before, _ = model(idx)  # (B, T, V)
        after, _ = model(changed)  # (B, T, V)
    return not torch.equal(before[:, : t + 1], after[:, : t + 1])


@checker
def check_sees_the_future(answer: object, seed: int = 0) -> Feedback:
    """06_mask exercise: ``answer`` is the learner's ``sees_the_future(model, idx, t) -> bool``.

    It is run on fresh models (a causal one, one with an off-by-one block, one where a single
    query peeks at a single later key) and must say, for every t, whether changing the tokens
    after t moves any output at positions 0 … t."""
    if unanswered(answer):
        return report(False, "", NOT_ANSWERED, answered=False)
    if not callable(answer):
        return report(
            False,
            "",
            f"answer with your function sees_the_future itself (no call), got {type(answer).__name__}.",
        )
    config = GPTConfig(
        vocab_size=40, context_length=8, d_model=16, n_heads=2, n_layers=2, dropout=0.0
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        causal = GPT(config)
    models = {
        "a causal GPT": causal,
        "a GPT whose block 1 is off by one": leaky_gpt(config, 1, seed=seed + 1),
        "a GPT where only query 2 peeks at key 5": leaky_gpt(config, 0, peek=(2, 5), seed=seed + 2),
    }
    idx = torch.randint(
        0,
        config.vocab_size,
        (2, config.context_length),
        generator=torch.Generator().manual_seed(seed),
    )
    for name, model in models.items():
        model.eval()
        for t in range(config.context_length - 1):
            want = _truth(model, idx, t)
            try:
                got = answer(model, idx.clone(), t)
            except Exception as error:  # the learner's code: report, never crash the notebook
                return report(
                    False,
                    "",
                    f"your function raised {type(error).__name__}: {error} (on {name}, t = {t}).",
                )
            if unanswered(got):  # the stub's body is still `...`: it returns None
                return report(
                    False,
                    "",
                    "your function returns None: replace the `...` in its body with your code.",
                    answered=False,
                )
            got, problem = read_bool(got)
            if problem:
                return report(False, "", f"your function should {problem[0].lower()}{problem[1:]} (on {name}, t = {t})")
            if got != want:
                return report(
                    False,
                    "",
                    f"on {name}, t = {t}: the right answer is {want}, yours is {bool(got)}. Hint: copy idx, "
                    "change every token after position t, run the model on both, and compare the logits "
                    "of positions 0 … t (torch.equal, not a tolerance: a causal model gives identical numbers).",
                )
    return report(
        True,
        "your test catches an off-by-one mask and a single leaking cell, and passes the causal model. "
        "`causality.check_causal` does the same for every t, and adds the gradient test.",
        "",
    )


@checker
def check_broken_layer(answer: object, model: GPT) -> Feedback:
    """06_mask exercise: which block of ``model`` (the suspect) has the leaking mask?"""
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
        f"block {expected}: `check_causal(model.blocks[{expected}].attn, causal=True)` names the pairs (t, t + 1) — "
        "an off-by-one diagonal.",
        "run `causality.check_causal(block.attn, causal=True, raise_on_leak=False)` on each block of the model "
        "and answer with the index (0-based) of the one that is not causal.",
    )
