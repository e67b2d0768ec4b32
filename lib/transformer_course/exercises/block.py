"""Exercises of 09_transformer_block: two build exercises (LayerNorm from scratch, the forward
pass of a pre-norm block) and one predict-then-measure question (does a warm-up rescue the deep
post-norm stack?)."""

from __future__ import annotations

import torch

from ..i18n import N_, _
from ..model import Block, GPTConfig
from ..norm import layer_norm
from . import Feedback, Option, check_choice, checker
from .build import build_exercise
from .solutions.block import layer_norm_from_scratch, pre_norm_block


def _layer_norm_inputs(
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """Random (B, T, C) vectors with a large mean, a random gain and shift, and an eps that matters."""
    B, T = (int(n) for n in torch.randint(1, 5, (2,), generator=generator))
    # odd sizes, and C = 1, where x̂ = 0 and the output is β
    C = int(torch.randint(1, 12, (1,), generator=generator))
    offset = float(torch.empty(1).uniform_(-100.0, 100.0, generator=generator))  # a mean far from 0
    spread = float(torch.empty(1).uniform_(0.1, 3.0, generator=generator))
    x = offset + spread * torch.randn(B, T, C, generator=generator)  # (B, T, C)
    gamma = torch.randn(C, generator=generator)  # (C,)
    beta = torch.randn(C, generator=generator)  # (C,)
    # at 0.5, an eps outside the square root shows
    eps = [1e-5, 1e-2, 0.5][int(torch.randint(0, 3, (1,), generator=generator))]
    return x, gamma, beta, eps


def _layer_norm_unbiased(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float):
    """A slip: the variance divided by C − 1 (``torch.var``'s default), not by C."""
    centred = x - x.mean(dim=-1, keepdim=True)  # (*, C)
    return gamma * centred / torch.sqrt(x.var(dim=-1, keepdim=True) + eps) + beta  # (*, C)


def _layer_norm_eps_outside(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float):
    """A slip: ε added to the standard deviation, outside the square root."""
    centred = x - x.mean(dim=-1, keepdim=True)  # (*, C)
    return gamma * centred / (x.std(dim=-1, unbiased=False, keepdim=True) + eps) + beta  # (*, C)


check_layer_norm_from_scratch = build_exercise(
    notebook="09_transformer_block",
    solution=layer_norm_from_scratch,
    hint=N_("""
        mean and variance over the last axis (`dim=-1, keepdim=True`, so they broadcast
        back); the variance divides by C, not C − 1 (`unbiased=False`, or the mean of the
        squared deviations); eps goes inside the square root; then scale by gamma and shift
        by beta. Subtract the mean before squaring: the inputs have means up to ±100.
    """),
    success=N_("""
        `norm.layer_norm` is the same formula; `nn.LayerNorm` runs it as one fused kernel.
    """),
    reference=layer_norm,  # the library's formula, itself tested against nn.LayerNorm
    make_inputs=_layer_norm_inputs,
    atol=1e-4,
    slips={
        N_(
            "the unbiased variance (divided by C − 1, torch.var's default; LayerNorm divides by C)"
        ): _layer_norm_unbiased,
        N_("ε outside the square root (σ + ε instead of √(σ² + ε))"): _layer_norm_eps_outside,
    },
)


def _block_inputs(generator: torch.Generator) -> tuple[Block, torch.Tensor]:
    """A random pre-norm Block (eval mode, random norm gains) and a (B, T, C) input; T may be 1."""
    n_heads = int(torch.randint(1, 4, (1,), generator=generator))
    head_size = int(torch.randint(2, 7, (1,), generator=generator))
    C = n_heads * head_size
    config = GPTConfig(
        vocab_size=2,
        d_model=C,
        n_heads=n_heads,
        positional="none",
        dropout=0.1,
        norm_placement="pre",
    )
    block = Block(config).eval()  # eval: dropout off, so the result is deterministic
    with torch.no_grad():
        # non-trivial gains and shifts, so that swapping norm1 and norm2 shows
        for norm in (block.norm1, block.norm2):
            norm.weight.copy_(1 + 0.5 * torch.randn(C, generator=generator))
            norm.bias.copy_(0.5 * torch.randn(C, generator=generator))
    B, T = (
        int(torch.randint(1, 4, (1,), generator=generator)),
        int(torch.randint(1, 9, (1,), generator=generator)),
    )
    return block, torch.randn(B, T, C, generator=generator)  # (B, T, C)


def _block_reference(block: Block, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return block(x)  # (B, T, C) model.Block's own forward


def _post_norm_block(block: Block, x: torch.Tensor) -> torch.Tensor:
    """A slip: the post-norm layout (norm after the residual add) where pre-norm was asked."""
    x = block.norm1(x + block.attn(x, causal=True))  # (B, T, C)
    return block.norm2(x + block.ffn(x))  # (B, T, C)


check_pre_norm_block = build_exercise(
    notebook="09_transformer_block",
    solution=pre_norm_block,
    hint=N_("""
        two residual steps: first `x + block.attn(block.norm1(x), causal=True)`, then add
        `block.ffn(block.norm2(...))` of that new x. The norm goes on the sub-layer's input
        only, never on the residual path; forgetting `causal=True` lets every token see the
        future.
    """),
    success=N_("""
        That is `Block.forward` with norm_placement='pre' (it also applies dropout, a no-op
        in eval mode).
    """),
    reference=_block_reference,
    make_inputs=_block_inputs,
    slips={
        N_(
            "post-norm written for pre-norm (the norm after the residual add, not on the sub-layer's input)"
        ): _post_norm_block,
    },
)


@checker(
    hint=N_("""
        without warm-up, the first Adam steps are full-size while the post-norm stack's
        gradients are still badly scaled across depth. What happens if those first steps are
        tiny?
    """)
)
def check_post_norm_warmup(answer: object, hint: bool = False) -> Feedback:
    """09_transformer_block, predict before you run: with a 50-step warm-up, does the 12-block post-norm
    stack learn the copy task ("trains") or stay at the uniform guess ("stalls")?

    The cell after the question measures it and asserts the outcome this checker expects."""
    return check_choice(
        answer,
        ("trains", "stalls"),
        [
            Option(
                lambda word: word == "trains",
                True,
                _(
                    "it trains: with the learning rate ramped up over 50 steps the post-norm stack learns the task. "
                    "The 2017 paper trained its post-norm model with a warm-up; pre-norm is more forgiving without one."
                ),
            ),
            Option(
                lambda word: word == "stalls",
                False,
                _(
                    "the next cell shows that it trains: small first steps keep the post-norm stack out of the state "
                    "it falls into at the full learning rate."
                ),
            ),
        ],
        not_text=_('answer with the text "trains" or "stalls", got {answer!r}.').format(
            answer=answer
        ),
        unknown=_('answer with the text "trains" or "stalls", got {answer!r}.').format(
            answer=answer
        ),
        not_answered=_('replace the `...` with "trains" or "stalls" and run the cell again.'),
    )
