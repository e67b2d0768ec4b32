"""The reliability review's remaining probes outside the checkpoint and CLI code (cases 5.24,
5.25, 5.39, 7.16, 7.34, 7.42 and 7.51-7.52 of reviews/reliability.md): each ends in a result or
in one clear message, never in an error from deep inside PyTorch."""

from __future__ import annotations

import pytest
import torch

from transformer_course import positional
from transformer_course.generate import generate, next_token_probs
from transformer_course.model import GPT, GPTConfig
from transformer_course.widgets import generation as gen
from transformer_course.widgets import positional as pw
from transformer_course.widgets.softmax_knobs import softmax_with_temperature


def _tiny_gpt() -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=100, context_length=8, d_model=16, n_heads=2, n_layers=1))


def test_a_vanishing_temperature_samples_the_most_probable_token():  # 5.24, 7.51
    model = _tiny_gpt()
    prompt = torch.tensor([1, 2, 3])
    greedy = generate(model, prompt, 5, temperature=0)
    tiny = generate(model, prompt, 5, temperature=1e-45, generator=torch.Generator().manual_seed(0))
    assert torch.equal(tiny, greedy)
    probs = next_token_probs(torch.tensor([[1.0, 3.0, 2.0]]), temperature=1e-45)
    assert torch.equal(probs, torch.tensor([[0.0, 1.0, 0.0]]))


def test_nan_weights_are_named_not_a_multinomial_error():  # 5.25
    model = _tiny_gpt()
    with torch.no_grad():
        model.lm_head.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="logits are NaN.*earlier checkpoint"):
        generate(model, torch.tensor([1, 2]), 3, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("base", [float("nan"), float("inf"), 1.0, 0.0])
def test_sinusoidal_base_must_be_finite_and_above_one(base):  # 5.39
    with pytest.raises(ValueError, match="base must be a finite number greater than 1"):
        positional.sinusoidal_encoding(4, 8, base=base)


def test_positional_view_refuses_a_fractional_dimension():  # 7.16
    message = pw.positional_view(16, 64, 1e4, 1.5)
    assert isinstance(message, str) and "whole number" in message


def test_softmax_with_a_vanishing_temperature_stays_finite():  # 7.34
    weights = softmax_with_temperature(torch.tensor([0.5, 2.0, 1.9, float("-inf")]), 1e-45)
    assert torch.equal(weights, torch.tensor([0.0, 1.0, 0.0, 0.0]))


def test_continue_text_reads_special_tokens_as_text_and_refuses_a_fractional_seed():  # 7.42, 7.52
    from transformer_course.tokenizer import get_encoding

    encoding = get_encoding("cl100k_base")
    encode, decode_token = gen.make_codec(encoding)
    model = GPT(
        GPTConfig(vocab_size=encoding.n_vocab, context_length=8, d_model=16, n_heads=2, n_layers=1)
    )
    result = gen.continue_text(
        model, "The <|endoftext|> customer", encode, decode_token, max_new_tokens=2
    )
    assert not result.error and len(result.new_ids) == 2
    result = gen.continue_text(
        model, "The customer", encode, decode_token, method="sample", seed=1.5
    )
    assert "seed must be a whole number" in result.error
