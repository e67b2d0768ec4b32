"""GPTConfig.embedding_scale (11_training): the √d_model factor on the token vectors, its
initialisation, and the legacy value that older checkpoints and pretrained models keep."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_from_checkpoint,
    read_checkpoint,
    save_checkpoint,
)
from transformer_course.diagnostics import check_initial_loss
from transformer_course.model import GPT, GPTConfig
from transformer_course.positional import sinusoidal_encoding


def tiny(**overrides) -> GPTConfig:
    settings = dict(vocab_size=50, context_length=8, d_model=16, n_heads=4, n_layers=2, dropout=0.0)
    settings.update(overrides)
    return GPTConfig(**settings)


def test_the_default_is_the_scaled_embedding_and_the_choice_is_checked():
    assert GPTConfig(vocab_size=10).embedding_scale == "sqrt_d_model"
    with pytest.raises(ValueError, match="embedding_scale must be one of 'sqrt_d_model', 'none'"):
        GPTConfig(vocab_size=10, embedding_scale="sqrt")


@pytest.mark.parametrize("scale, factor", [("sqrt_d_model", 4.0), ("none", 1.0)])
def test_embed_multiplies_the_token_vectors_by_the_square_root_of_d_model(scale, factor):
    torch.manual_seed(0)
    model = GPT(tiny(embedding_scale=scale)).eval()
    idx = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])  # (B, T) = (2, 5)
    table = model.token_embedding.weight.detach()  # (V, C) = (50, 16)
    by_hand = table[idx] * factor + sinusoidal_encoding(8, 16)[:5]  # (2, 5, 16) √16 = 4
    torch.testing.assert_close(model.embed(idx), by_hand)
    assert model.config.embedding_multiplier == factor


def test_tokens_and_sinusoidal_positions_start_at_comparable_size():
    """At the course's sizes (d_model 64) the unscaled GPT-2 init puts the table 36× above the
    tokens; the scaled one puts both at RMS 1/√2."""
    torch.manual_seed(0)
    rms = {}
    for scale in ("sqrt_d_model", "none"):
        model = GPT(GPTConfig(vocab_size=3771, n_layers=1, embedding_scale=scale))
        tokens = model.token_embedding.weight.detach() * model.config.embedding_multiplier  # (V, C)
        rms[scale] = tokens.pow(2).mean().sqrt().item()
        table_rms = model.positional_table.pow(2).mean().sqrt().item()  # (T, C) -> ()
    assert table_rms == pytest.approx(1 / math.sqrt(2), rel=1e-6)
    assert rms["sqrt_d_model"] == pytest.approx(table_rms, rel=0.02)
    assert table_rms / rms["none"] == pytest.approx(0.7071 / 0.02, rel=0.02)  # ≈ 35


def test_both_choices_draw_the_same_random_numbers():
    """Only the token table's std differs, so comparing the two compares the scale alone."""
    weights = {}
    for scale in ("sqrt_d_model", "none"):
        torch.manual_seed(0)
        weights[scale] = GPT(tiny(embedding_scale=scale)).state_dict()
    ratio = (1 / math.sqrt(2 * 16)) / 0.02
    for name, value in weights["none"].items():
        if name in ("token_embedding.weight", "lm_head.weight"):  # tied: one table
            torch.testing.assert_close(weights["sqrt_d_model"][name], value * ratio)
        else:
            assert torch.equal(weights["sqrt_d_model"][name], value), name


def test_the_tied_output_layer_starts_at_ln_v_plus_half_sigma_squared():
    """The tied output layer reuses the table at std 1/√(2C): logits of std ≈ 1/√2 after the final
    LayerNorm, so the untrained loss is ln V + σ²/2 ≈ ln V + 0.25, inside the step-0 check."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=3771, n_layers=2, dropout=0.0))
    idx = torch.randint(0, 3771, (32, 16))  # (B, T)
    logits, loss = model(idx[:, :-1], idx[:, 1:])  # (B, T - 1, V), ()
    check = check_initial_loss(loss, 3771, logits=logits)
    assert check.ok
    assert check.logit_std == pytest.approx(1 / math.sqrt(2), rel=0.15)
    assert loss.item() == pytest.approx(check.predicted, abs=0.1)


def _legacy_checkpoint(tmp_path, config: GPTConfig):
    """A checkpoint as saved before embedding_scale existed: its config lacks the key."""
    torch.manual_seed(0)
    model = GPT(config).eval()
    path = tmp_path / "old.pt"
    save_checkpoint(path, model)
    checkpoint = read_checkpoint(path)
    del checkpoint["model_config"]["embedding_scale"]
    torch.save(checkpoint, path)
    return model, path


def test_a_checkpoint_saved_before_the_field_existed_keeps_the_old_behaviour(tmp_path):
    old, path = _legacy_checkpoint(tmp_path, tiny(embedding_scale="none"))
    idx = torch.randint(0, 50, (2, 8))  # (B, T)
    rebuilt, _ = model_from_checkpoint(path)
    assert rebuilt.config.embedding_scale == "none"
    torch.testing.assert_close(rebuilt(idx)[0], old(idx)[0])
    load_checkpoint(path, GPT(tiny(embedding_scale="none")))  # the old model's config: accepted
    with pytest.raises(
        CheckpointError, match="embedding_scale: checkpoint 'none', model 'sqrt_d_model'"
    ):
        load_checkpoint(path, GPT(tiny()))  # today's default would read the weights wrongly


def test_pretrained_configs_keep_the_plain_lookup():
    from transformer_course.pretrained import gpt_config_from_hf

    gpt2 = {
        "model_type": "gpt2",
        "vocab_size": 64,
        "n_positions": 32,
        "n_embd": 16,
        "n_head": 2,
        "n_layer": 1,
        "activation_function": "gelu_new",
    }
    llama = {
        "model_type": "llama",
        "vocab_size": 64,
        "max_position_embeddings": 32,
        "hidden_size": 16,
        "num_attention_heads": 2,
        "num_hidden_layers": 1,
        "intermediate_size": 32,
    }
    assert gpt_config_from_hf(gpt2).embedding_scale == "none"
    assert gpt_config_from_hf(llama).embedding_scale == "none"
