"""Exercises of 14_encoder_decoder: two build exercises (the cross-attention mask, cross-attention
itself) and questions to work out or predict before a cell is run."""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention, padding_mask
from ..i18n import N_, _
from . import Feedback, Option, check_choice, check_value, checker
from .answers import read_shape
from .build import build_exercise
from .solutions.encoder_decoder import cross_attention, cross_attention_mask


@checker(
    hint=N_("""
        attention weights are always [batch, heads, queries, keys]. Ask where the queries
        come from (which stack, how many tokens) and where the keys come from.
    """)
)
def check_cross_attention_shape(
    answer: object, B: int = 2, H: int = 4, T: int = 9, S: int = 8, hint: bool = False
) -> Feedback:
    """Shape of the cross-attention weights for B sources of S tokens, H heads, T decoder tokens."""
    expected = (B, H, T, S)
    given, _problem = read_shape(answer)
    hint_text = _(
        "the queries come from the decoder (T of them) and the keys from the encoder (S of them): "
        "the weights are [B, H, queries, keys]."
    )
    if given == (B, H, S, T):
        hint_text = _(
            "rows and columns swapped: each ROW is one decoder query, each COLUMN one source key."
        )
    return check_value(
        answer,
        expected,
        _("{expected}: one row per decoder query, one column per source token.").format(
            expected=expected
        ),
        hint_text,
    )


@checker(
    hint=N_("""
        write a 3-digit example: the source 'abc' reversed is 'cba'. Which source position
        does answer digit 0 come from, and digit 1? Generalise to n digits.
    """)
)
def check_reversal_alignment(
    answer: object, n: int = 7, k: int = 1, hint: bool = False
) -> Feedback:
    """Reversing an n-digit source: which source position (0-based) holds answer digit k?"""
    expected = n - 1 - k
    return check_value(
        answer,
        expected,
        _(
            "answer digit {k} is source digit n − 1 − k = {expected}: the anti-diagonal of the map."
        ).format(k=k, expected=expected),
        _(
            "the answer's first digit (k = 0) is the source's LAST digit (position n − 1); count back from there."
        ),
    )


FIRST_LOSS_CHOICES = ("below", "equal", "above")


@checker(
    hint=N_("""
        ln V is the loss of logits that are all EQUAL. The output layer is PyTorch's default
        nn.Linear, so the untrained logits are random, not equal. Does randomness help or
        hurt on average, when the right token is no more likely than the others?
    """)
)
def check_first_loss(answer: object, hint: bool = False) -> Feedback:
    """14_encoder_decoder, before training: is the untrained model's first loss below, about equal
    to, or above ln 13 (the loss of a uniform guess over the 13 tokens)? One of ``FIRST_LOSS_CHOICES``."""
    return check_choice(
        answer,
        FIRST_LOSS_CHOICES,
        [
            Option(
                lambda word: word.startswith("above") or word in {"higher", "greater", "more", ">"},
                True,
                _(
                    "random logits make the model confidently wrong as often as confidently right, and "
                    "the loss (the log of an average of exponentials) punishes that: about ln V + σ²/2 "
                    "for logits of standard deviation σ. The cell after training measures both."
                ),
            ),
            Option(
                lambda word: word.startswith("below") or word in {"lower", "less", "<"},
                False,
                _(
                    "below ln V would mean the untrained model already prefers the right tokens. "
                    "Nothing has taught it that yet."
                ),
            ),
            Option(
                lambda word: word.startswith(("equal", "about")) or word in {"same", "=", "near"},
                False,
                _("that holds only if all logits are equal. Are the output layer's weights zero?"),
            ),
        ],
    )


# --- Build exercises -------------------------------------------------------------------------


def _source_ids(generator: torch.Generator, pad_id: int) -> torch.Tensor:
    """Right-padded source ids (B, S): every row holds 1 … S real tokens (never ``pad_id``)."""
    B, S = (
        int(torch.randint(1, 5, (), generator=generator)),
        int(torch.randint(1, 9, (), generator=generator)),
    )
    lengths = torch.randint(1, S + 1, (B,), generator=generator)  # (B,) real tokens per row
    ids = torch.randint(0, 12, (B, S), generator=generator)  # (B, S)
    ids = torch.where(ids >= pad_id, ids + 1, ids)  # (B, S) real tokens never equal pad_id
    return torch.where(
        torch.arange(S)[None, :] < lengths[:, None], ids, torch.full_like(ids, pad_id)
    )


def _mask_inputs(generator: torch.Generator) -> tuple[torch.Tensor, int, int]:
    pad_id = int(torch.randint(0, 3, (), generator=generator))  # not always 0
    T = int(torch.randint(1, 8, (), generator=generator))
    return _source_ids(generator, pad_id), T, pad_id


def _mask_reference(src: torch.Tensor, T: int, pad_id: int) -> torch.Tensor:
    return padding_mask(src != pad_id).expand(-1, -1, T, -1)  # (B, 1, 1, S) -> (B, 1, T, S)


def _mask_inverted(src: torch.Tensor, T: int, pad_id: int) -> torch.Tensor:
    """Slip: True at the padding (PyTorch's key_padding_mask convention, True = ignore)."""
    return ~_mask_reference(src, T, pad_id)


def _mask_with_causal_triangle(src: torch.Tensor, T: int, pad_id: int) -> torch.Tensor:
    """Slip: a causal triangle on top of the padding mask."""
    triangle = torch.ones(T, src.shape[1], dtype=torch.bool).tril()  # (T, S)
    return _mask_reference(src, T, pad_id) & triangle  # (B, 1, T, S)


def _mask_not_expanded(src: torch.Tensor, T: int, pad_id: int) -> torch.Tensor:
    """Slip: the (B, 1, 1, S) padding mask without its T query rows."""
    return padding_mask(src != pad_id)  # (B, 1, 1, S)


check_cross_attention_mask = build_exercise(
    notebook="14_encoder_decoder",
    solution=cross_attention_mask,
    hint=N_("""
        a key (a source token) may be read when it is not padding: `src != pad_id` is (B,
        S). Every decoder query sees the same source tokens, so each of the T rows is that
        same (B, S) row: add the head and query axes with `[:, None, None, :]` and
        `.expand(-1, 1, T, -1)`. Rows are queries, columns are keys.
    """),
    success=N_("""
        The decoder may read every real source token, whatever its own position (no causal
        triangle here).
    """),
    reference=_mask_reference,
    make_inputs=_mask_inputs,
    slips={
        N_(
            "the mask inverted: True must mark the source tokens that MAY be read, not the padding"
        ): _mask_inverted,
        N_(
            "a causal triangle: the decoder may read every real source token, whatever its position"
        ): _mask_with_causal_triangle,
        N_("the mask left at (B, 1, 1, S): expand it to the T query rows"): _mask_not_expanded,
    },
)


def _cross_inputs(
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, MultiHeadAttention]:
    B = int(torch.randint(1, 4, (), generator=generator))
    # T = 1 and S = 1 happen.
    T, S = (int(n) for n in torch.randint(1, 8, (2,), generator=generator))
    H = int(torch.randint(1, 5, (), generator=generator))
    C = H * int(torch.randint(1, 5, (), generator=generator))
    y = torch.randn(B, T, C, generator=generator)  # (B, T, C) decoder states
    memory = torch.randn(B, S, C, generator=generator)  # (B, S, C) encoder output
    # (B,) at least one real source token per row
    lengths = torch.randint(1, S + 1, (B,), generator=generator)
    valid = torch.arange(S)[None, :] < lengths[:, None]  # (B, S)
    # Its weights come from torch.manual_seed(trial seed): the same for the library and the learner.
    attn = MultiHeadAttention(C, H).eval()
    return y, memory, valid, attn


def _cross_reference(
    y: torch.Tensor, memory: torch.Tensor, valid: torch.Tensor, attn: MultiHeadAttention
) -> torch.Tensor:
    return attn(y, context=memory, mask=padding_mask(valid))  # (B, T, C)


def _cross_attention_variant(
    y: torch.Tensor,
    memory: torch.Tensor,
    valid: torch.Tensor,
    attn: MultiHeadAttention,
    *,
    masked: bool = True,
    out_proj: bool = True,
    transpose: bool = True,
) -> torch.Tensor:
    """Cross-attention written out, with one step left out when a flag is False (the slips)."""
    B, T, C = y.shape
    S, H = memory.shape[1], attn.n_heads
    D = C // H

    def split(t: torch.Tensor, L: int) -> torch.Tensor:  # (B, L, C) -> (B, H, L, D)
        return t.view(B, L, H, D).transpose(1, 2) if transpose else t.view(B, H, L, D)

    q, k, v = split(attn.q_proj(y), T), split(attn.k_proj(memory), S), split(attn.v_proj(memory), S)
    scores = q @ k.transpose(-2, -1) / D**0.5  # (B, H, T, S)
    if masked:
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    heads = scores.softmax(dim=-1) @ v  # (B, H, T, D)
    merged = heads.transpose(1, 2).reshape(B, T, C) if transpose else heads.reshape(B, T, C)
    return attn.out_proj(merged) if out_proj else merged  # (B, T, C)


def _cross_unmasked(y, memory, valid, attn):
    return _cross_attention_variant(y, memory, valid, attn, masked=False)


def _cross_without_out_proj(y, memory, valid, attn):
    return _cross_attention_variant(y, memory, valid, attn, out_proj=False)


def _cross_view_without_transpose(y, memory, valid, attn):
    return _cross_attention_variant(y, memory, valid, attn, transpose=False)


check_cross_attention = build_exercise(
    notebook="14_encoder_decoder",
    solution=cross_attention,
    hint=N_("""
        section 2 writes it out: Q from y with attn.q_proj, K and V from memory with
        attn.k_proj / attn.v_proj, each split into attn.n_heads heads of D = C // n_heads
        ((B, L, C) -> (B, H, L, D)). Scores q kᵀ / √D are (B, H, T, S); fill the padded
        columns (~valid[:, None, None, :]) with −∞, softmax over the last axis, times v,
        merge the heads back to (B, T, C) and apply attn.out_proj.
    """),
    success=N_("""
        That is one decoder layer's bridge to the encoder.
    """),
    reference=_cross_reference,
    make_inputs=_cross_inputs,
    slips={
        N_(
            "the padding not masked: fill the scores of the padded source columns with −∞ before the softmax"
        ): _cross_unmasked,
        N_(
            "a missing W_O: the merged heads still go through attn.out_proj"
        ): _cross_without_out_proj,
        N_(
            "`view` without the transpose: split (B, L, C) -> (B, L, H, D), then transpose(1, 2) to (B, H, L, D) (and back before merging)"
        ): _cross_view_without_transpose,
    },
)
