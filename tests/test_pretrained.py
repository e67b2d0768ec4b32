"""The course's GPT *is* GPT-2 and LLaMA: checkpoints saved by `transformers` (random weights,
small configs, offline) load into model.GPT and give the same logits to 1e-5."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from transformer_course.feedforward import FeedForward
from transformer_course.generate import generate
from transformer_course.model import GPT, GPTConfig
from transformer_course.pretrained import gpt_config_from_hf, halves_to_pairs, load_pretrained

transformers = pytest.importorskip("transformers")
pytest.importorskip("safetensors")

VOCAB, SEED = 97, 0
# Weights 10× GPT-2's std 0.02, so that the activations are large enough for a wrong GELU
# (exact instead of tanh: 1e-3 here, 9e-6 at std 0.02) or a wrong RoPE base to show.
INIT = 0.2


def _ids(T: int = 12, B: int = 2) -> torch.Tensor:
    return torch.randint(0, VOCAB, (B, T), generator=torch.Generator().manual_seed(1))


def _save(model, tmp_path):
    model.eval().save_pretrained(tmp_path, safe_serialization=True)
    return tmp_path


#: The small random-weight reference of each family: its config class, model class and sizes.
FAMILIES = {
    "gpt2": (
        transformers.GPT2Config,
        transformers.GPT2LMHeadModel,
        dict(n_positions=32, n_embd=64, n_layer=2, n_head=4),
    ),
    "llama": (
        transformers.LlamaConfig,
        transformers.LlamaForCausalLM,
        dict(
            hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=32, rope_theta=500000.0, rms_norm_eps=1e-5,
        ),
    ),
}  # fmt: skip


def _reference(tmp_path, family: str, tie: bool):
    config_class, model_class, sizes = FAMILIES[family]
    torch.manual_seed(SEED)
    config = config_class(
        vocab_size=VOCAB, tie_word_embeddings=tie, initializer_range=INIT, **sizes
    )
    model = model_class(config)
    if family == "gpt2" and not tie:  # an untied head must really be a different tensor
        torch.nn.init.normal_(model.lm_head.weight, std=INIT)
    return model, _save(model, tmp_path)


def _gpt2(tmp_path, tie: bool):
    return _reference(tmp_path, "gpt2", tie)


def _llama(tmp_path, tie: bool):
    return _reference(tmp_path, "llama", tie)


def _compare(reference, folder) -> float:
    ours = load_pretrained(folder)
    ids = _ids()
    with torch.no_grad():
        expected = reference.eval()(ids).logits  # (B, T, V)
        got, _ = ours(ids)  # (B, T, V)
    assert got.shape == expected.shape
    diff = (got - expected).abs().max().item()
    assert diff < 1e-5, diff
    return diff


@pytest.mark.parametrize("tie", [True, False])
def test_gpt2_logits_match_transformers(tmp_path, tie):
    _compare(*_gpt2(tmp_path, tie))
    model = load_pretrained(tmp_path)
    assert model.config.feedforward == "gelu_tanh" and model.config.tie_weights is tie
    assert (model.lm_head.weight is model.token_embedding.weight) is tie


@pytest.mark.parametrize("tie", [True, False])
def test_llama_logits_match_transformers(tmp_path, tie):
    reference, folder = _llama(tmp_path, tie)
    _compare(reference, folder)
    config = load_pretrained(folder).config
    assert (config.rope_base, config.norm_eps, config.n_kv_heads) == (500000.0, 1e-5, 2)


def test_llama_without_the_rope_permutation_differs(tmp_path, monkeypatch):
    """The q/k row permutation is what makes the logits match (the test can fail)."""
    reference, folder = _llama(tmp_path, False)
    import transformer_course.pretrained as pretrained

    monkeypatch.setattr(pretrained, "halves_to_pairs", lambda weight, n_heads: weight)
    with pytest.raises(AssertionError):
        _compare(reference, folder)


@pytest.mark.parametrize(
    ("family", "change"), [("gpt2", {"feedforward": "gelu"}), ("llama", {"rope_base": 10000.0})]
)
def test_without_the_new_config_fields_the_logits_differ(tmp_path, monkeypatch, family, change):
    """Exact GELU for GPT-2, or LLaMA-2's RoPE base for a 500,000-base model, breaks the match."""
    import dataclasses

    import transformer_course.pretrained as pretrained

    reference, folder = (_llama if family == "llama" else _gpt2)(tmp_path, family == "gpt2")
    original = pretrained.gpt_config_from_hf
    monkeypatch.setattr(
        pretrained,
        "gpt_config_from_hf",
        lambda hf, context_length=None: dataclasses.replace(original(hf, context_length), **change),
    )
    with pytest.raises(AssertionError):
        _compare(reference, folder)


def test_halves_to_pairs_order():
    rows = torch.arange(8.0)  # 2 heads of D = 4
    assert halves_to_pairs(rows, 2).tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


def test_loaded_llama_generates_the_same_with_and_without_cache(tmp_path):
    _, folder = _llama(tmp_path, False)
    model = load_pretrained(folder)
    prompt = _ids(T=4, B=1)
    plain = generate(model, prompt, max_new_tokens=20, temperature=0.0, use_cache=False)
    cached = generate(model, prompt, max_new_tokens=20, temperature=0.0, use_cache=True)
    assert torch.equal(plain, cached)
    assert plain.shape == (1, 24)


def test_gelu_tanh_equals_pytorch():
    torch.manual_seed(0)
    ffn = FeedForward(8, 16, activation="gelu_tanh")
    x = torch.randn(3, 8)
    expected = ffn.down(F.gelu(ffn.up(x), approximate="tanh"))
    torch.testing.assert_close(ffn(x), expected, rtol=0, atol=0)
    assert not torch.allclose(ffn(x), ffn.down(F.gelu(ffn.up(x))), rtol=0, atol=1e-7)


def test_norm_eps_and_rope_base_reach_every_layer():
    config = GPTConfig(
        vocab_size=10, n_layers=2, positional="rope", norm="rmsnorm", norm_eps=1e-5, rope_base=5e5
    )
    model = GPT(config)
    norms = [m for b in model.blocks for m in (b.norm1, b.norm2)] + [model.final_norm]
    assert all(n.eps == 1e-5 for n in norms)
    assert all(b.attn.rope_base == 5e5 for b in model.blocks)
    default = GPT(GPTConfig(vocab_size=10, n_layers=1, norm="rmsnorm"))
    assert default.final_norm.eps == 1e-6 and default.blocks[0].attn.rope_base == 10000.0


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("norm_eps", 0.0, ValueError),
        ("norm_eps", "1e-5", TypeError),
        ("rope_base", 1.0, ValueError),
        ("rope_base", True, TypeError),
        ("feedforward", "gelu_exact", ValueError),
    ],
)
def test_new_fields_are_validated(field, value, error):
    with pytest.raises(error, match=field):
        GPTConfig(vocab_size=10, **{field: value})


def test_unsupported_configs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="model_type"):
        gpt_config_from_hf({"model_type": "bert"})
    with pytest.raises(ValueError, match="rope scaling"):
        gpt_config_from_hf(
            {
                "model_type": "llama",
                "vocab_size": 10,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "num_hidden_layers": 1,
                "intermediate_size": 16,
                "rope_scaling": {"rope_type": "llama3"},
            }
        )
    with pytest.raises(ValueError, match="config.json"):
        load_pretrained(tmp_path)


def test_a_checkpoint_saved_before_the_new_fields_still_loads(tmp_path):
    """Checkpoints written before norm_eps and rope_base existed lack those keys."""
    from transformer_course.checkpoint import load_checkpoint, read_checkpoint, save_checkpoint

    model = GPT(GPTConfig(vocab_size=10, n_layers=1))
    path = tmp_path / "old.pt"
    save_checkpoint(path, model)
    checkpoint = read_checkpoint(path)
    for name in ("norm_eps", "rope_base"):
        del checkpoint["model_config"][name]
    torch.save(checkpoint, path)
    load_checkpoint(path, GPT(GPTConfig(vocab_size=10, n_layers=1)))
