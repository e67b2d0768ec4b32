"""Exercises of 08_v_attention: build causal attention and a whole multi-head layer."""

from __future__ import annotations

from functools import partial

import torch

from .. import attention
from ..i18n import N_, _
from . import Feedback, check_value, checker
from .build import build_exercise, hard_case
from .solutions.v_attention import causal_attention, multi_head_attention


@checker(
    hint=N_("""
        list the layer's Linear maps and the shape of each weight and bias. Does splitting C
        columns into more, narrower heads add or remove any of them?
    """)
)
def check_mha_params(
    answer: object, d_model: int = 64, n_heads: int = 8, hint: bool = False
) -> Feedback:
    """The parameter count of MultiHeadAttention(d_model, n_heads) with biases (it does not depend on n_heads)."""
    expected = 4 * (d_model * d_model + d_model)
    return check_value(
        answer,
        expected,
        _(
            "W_Q, W_K, W_V and W_O, each {d_model}·{d_model} + {d_model}: {expected}, with {n_heads} heads or with 1 — the heads only decide how the columns are grouped."
        ).format(d_model=d_model, expected=expected, n_heads=n_heads),
        _(
            "four Linear(d_model, d_model) layers with biases; the number of heads does not change the count."
        ),
    )


def _causal_attention_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    out, _weights = attention.scaled_dot_product_attention(
        q, k, v, mask=attention.causal_mask(T, device=q.device)
    )
    return out  # (B, H, T, D)


def _random_qkv(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v (B, H, T, D) with T ≠ D; T = 1 (one token sees only itself) in one trial of five,
    2 ≤ T ≤ 7 in the others, where a mask applied after the softmax shows."""
    B = int(torch.randint(1, 4, (1,), generator=generator))
    H = int(torch.randint(1, 5, (1,), generator=generator))
    T = 1 if hard_case(generator, 5) == 0 else int(torch.randint(2, 8, (1,), generator=generator))
    # odd head sizes: 1/√D, not 1/√C or 1/√T; never D = T, where a transpose slip keeps its shape
    D = int(torch.randint(1, 9, (1,), generator=generator))
    D = D + 1 if D >= T else D
    shape = (B, H, T, D)
    return tuple(torch.randn(shape, generator=generator) for _qkv in range(3))  # 3 × (B, H, T, D)


def _masked_after_softmax(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Slip: softmax over every key, then the future zeroed: the rows no longer sum to 1."""
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (B, H, T, T)
    weights = torch.softmax(scores, dim=-1) * attention.causal_mask(T)  # (B, H, T, T)
    return weights @ v  # (B, H, T, D)


def _attention_without_mask(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    out = attention.scaled_dot_product_attention(q, k, v)[0]  # (B, H, T, D) every key visible
    return out


def _attention_not_scaled(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)).masked_fill(~attention.causal_mask(T), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # (B, H, T, D)


check_causal_attention = build_exercise(
    notebook="08_v_attention",
    solution=causal_attention,
    hint=N_("""
        four steps, all on (B, H, T, ·) tensors: scores = q @ k.transpose(-2, -1) / √D with
        D = q.shape[-1]; set the future (column > row) to −inf with the lower-triangular
        mask of notebook 06; softmax over the last axis; multiply the weights by v.
    """),
    success=N_("""
        The same as the library's `scaled_dot_product_attention` with the causal mask, and
        as PyTorch's `F.scaled_dot_product_attention(q, k, v, is_causal=True)`.
    """),
    reference=_causal_attention_reference,
    make_inputs=_random_qkv,
    slips={
        N_(
            "a missing causal mask (every query also sees the keys after it)"
        ): _attention_without_mask,
        N_("the scores not divided by √D"): _attention_not_scaled,
        N_(
            "masking after the softmax: the softmax already gave the future keys weight, so "
            "zeroing them leaves rows that no longer sum to 1; set the future scores to −inf "
            "before the softmax"
        ): _masked_after_softmax,
    },
)


def _layer_reference(layer: attention.MultiHeadAttention, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return layer(x, causal=True)  # (B, T, C)


def _random_layer_and_input(
    generator: torch.Generator,
) -> tuple[attention.MultiHeadAttention, torch.Tensor]:
    # Every check: T = 1, one head, and three trials with H ≥ 2 heads and T ≥ 2 tokens, where
    # a missing mask, a missing transpose or a missing W_O all show.
    case = hard_case(generator, 5)
    H = 1 if case == 1 else int(torch.randint(2, 5, (1,), generator=generator))
    D = int(torch.randint(1, 6, (1,), generator=generator))
    B = int(torch.randint(1, 4, (1,), generator=generator))
    T = 1 if case == 0 else int(torch.randint(2, 8, (1,), generator=generator))
    layer = attention.MultiHeadAttention(H * D, H)
    with torch.no_grad():
        # drawn from the generator: the same layer for both calls
        for parameter in layer.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return layer, torch.randn(B, T, H * D, generator=generator)  # (B, T, C)


def _layer_without(
    layer: attention.MultiHeadAttention,
    x: torch.Tensor,
    *,
    causal: bool = True,
    out_proj: bool = True,
    transpose: bool = True,
) -> torch.Tensor:
    """The layer's forward pass with one step left out: the known slips of the exercise."""
    B, T, C = x.shape
    H = layer.n_heads

    def split(y: torch.Tensor) -> torch.Tensor:  # (B, T, C) -> (B, H, T, D)
        if transpose:
            return attention.split_heads(y, H)
        return y.view(B, H, T, C // H)  # the right shape, the numbers of the wrong heads

    with torch.no_grad():
        q, k, v = split(layer.q_proj(x)), split(layer.k_proj(x)), split(layer.v_proj(x))
        mask = attention.causal_mask(T) if causal else None
        heads, _weights = attention.scaled_dot_product_attention(q, k, v, mask=mask)  # (B, H, T, D)
        merged = attention.merge_heads(heads)  # (B, T, C)
        return layer.out_proj(merged) if out_proj else merged


check_multi_head_attention = build_exercise(
    notebook="08_v_attention",
    solution=multi_head_attention,
    hint=N_("""
        project x with layer.q_proj, layer.k_proj and layer.v_proj; split each into
        layer.n_heads heads ((B, T, C) → (B, H, T, D): view, then transpose(1, 2)); causal
        attention per head as in the previous exercise; merge the heads back to (B, T, C);
        finish with layer.out_proj.
    """),
    success=N_("""
        That is the whole layer: `layer(x, causal=True)` does the same, and
        nn.MultiheadAttention too.
    """),
    reference=_layer_reference,
    make_inputs=_random_layer_and_input,
    slips={
        N_("a missing W_O: the merged heads are returned without `layer.out_proj`"): (
            partial(_layer_without, out_proj=False)
        ),
        N_("a missing causal mask (every token also sees the tokens after it)"): (
            partial(_layer_without, causal=False)
        ),
        N_("a split into heads by `.view(B, H, T, D)` without the transpose"): (
            partial(_layer_without, transpose=False)
        ),
    },
)
