"""The tiny GPT: shapes, initial loss, learning, causality, switches and clear errors."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

from transformer_course import _checks
from transformer_course.attention import MultiHeadAttention
from transformer_course.feedforward import FeedForward, SwiGLU
from transformer_course.model import GPT, Block, GPTConfig, parameter_counts
from transformer_course.norm import LayerNorm, RMSNorm
from transformer_course.positional import apply_rope


def test_defaults_are_the_seeds_hyperparameters():
    config = GPTConfig(vocab_size=100_070)
    assert (
        config.context_length,
        config.d_model,
        config.n_heads,
        config.n_layers,
        config.dropout,
    ) == (16, 64, 4, 8, 0.1)
    assert config.hidden_size == 256 and config.head_size == 16


def test_forward_shapes(tiny_gpt):
    model = tiny_gpt()
    idx = torch.randint(0, 50, (3, 8))  # (B, T)
    logits, loss = model(idx)
    assert logits.shape == (3, 8, 50) and loss is None
    logits, loss = model(idx[:, :5], idx[:, 1:6])  # shorter than the context is fine
    assert logits.shape == (3, 5, 50) and loss.shape == ()


@pytest.mark.parametrize("vocab_size", [100, 100_070])
def test_initial_loss_is_ln_vocab(vocab_size):
    # GPT-2's init; the default scaled embedding starts at ln V + σ²/2 (test_embedding_scale.py).
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=vocab_size, embedding_scale="none")).eval()
    idx = torch.randint(0, vocab_size, (4, 16))
    targets = torch.randint(0, vocab_size, (4, 16))
    _, loss = model(idx, targets)
    assert abs(loss.item() - math.log(vocab_size)) < 0.1


def test_loss_is_mean_cross_entropy(tiny_gpt):
    model = tiny_gpt().eval()
    idx, targets = torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8))
    logits, loss = model(idx, targets)
    log_probs = logits.log_softmax(-1)  # (B, T, V)
    by_hand = -log_probs.gather(-1, targets[..., None]).mean()  # −log p(next token), averaged
    torch.testing.assert_close(loss, by_hand)


def test_overfits_one_batch(tiny_gpt):
    model = tiny_gpt(n_layers=2, d_model=32)
    idx = torch.randint(0, 50, (2, 8))
    targets = torch.randint(0, 50, (2, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(300):
        _, loss = model(idx, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.05


@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rope", "none"])
def test_causal(tiny_gpt, positional):
    """Changing token t changes no prediction before t."""
    model = tiny_gpt(positional=positional).eval()
    idx = torch.randint(0, 50, (1, 8))
    changed = idx.clone()
    changed[0, 5] = (changed[0, 5] + 1) % 50
    before, _ = model(idx)
    after, _ = model(changed)
    torch.testing.assert_close(before[:, :5], after[:, :5])
    assert not torch.allclose(before[:, 5:], after[:, 5:])


def test_positions_matter(tiny_gpt):
    """Without positions attention is order-blind; with them the last prediction depends on order."""
    model = tiny_gpt().eval()
    idx = torch.tensor([[1, 2, 3, 4]])
    swapped = torch.tensor([[2, 1, 3, 4]])
    assert not torch.allclose(model(idx)[0][:, -1], model(swapped)[0][:, -1])


SWITCHES = {
    "positional": ["sinusoidal", "learned", "rope"],
    "norm": ["layernorm", "rmsnorm"],
    "feedforward": ["relu", "gelu", "silu", "swiglu"],
    "norm_placement": ["pre", "post"],
    "n_kv_heads": [None, 2, 1],
    "tie_weights": [True, False],
    "bias": [True, False],
}


def _pairs(row: tuple) -> set[tuple]:
    """The (switch, value, switch, value) pairs one row of switch values exercises."""
    return {(i, row[i], j, row[j]) for i, j in itertools.combinations(range(len(row)), 2)}


def all_pairs(values: list[list]) -> list[tuple]:
    """Rows that together hold every pair of values of every two switches (greedy all-pairs).

    Bugs between switches are almost always between two of them (a norm with a placement, a
    feed-forward with bias), so covering every pair finds them at a fraction of the full
    product's cost. Greedy: from the full product, take the row that covers the most pairs not
    yet covered (the first such row on ties, so the table is deterministic), until none is left.
    """
    product = list(itertools.product(*values))
    uncovered = set().union(*(_pairs(row) for row in product))
    rows = []
    while uncovered:
        best = max(product, key=lambda row: len(_pairs(row) & uncovered))
        rows.append(best)
        uncovered -= _pairs(best)
    return rows


COMBINATIONS = all_pairs(list(SWITCHES.values()))


def test_switch_table_covers_every_pair():
    """Every value of every switch meets every value of every other switch in some row."""
    values = list(SWITCHES.values())
    every_pair = {
        (i, a, j, b)
        for i, j in itertools.combinations(range(len(values)), 2)
        for a in values[i]
        for b in values[j]
    }
    covered = set().union(*(_pairs(row) for row in COMBINATIONS))
    assert covered == every_pair
    assert len(COMBINATIONS) < math.prod(map(len, values))  # pairwise, not the full product


@pytest.mark.parametrize("values", COMBINATIONS, ids=lambda v: "-".join(map(str, v)))
def test_every_pair_of_switches_runs(tiny_gpt, values):
    config = tiny_gpt.config(
        **dict(zip(SWITCHES, values)), n_layers=1, context_length=4, vocab_size=20
    )
    torch.manual_seed(0)
    model = GPT(config)
    idx = torch.randint(0, 20, (2, 4))
    logits, loss = model(idx, idx)
    assert logits.shape == (2, 4, 20) and torch.isfinite(loss)
    loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert sum(parameter_counts(model).values()) == model.num_parameters()


def test_switches_change_the_modules(tiny_gpt):
    from transformer_course.feedforward import SwiGLU
    from transformer_course.norm import RMSNorm

    model = tiny_gpt(positional="rope", norm="rmsnorm", feedforward="swiglu", n_kv_heads=1)
    block = model.blocks[0]
    assert isinstance(block.norm1, RMSNorm) and isinstance(block.ffn, SwiGLU)
    assert block.attn.rope and block.attn.n_kv_heads == 1
    assert block.attn.k_proj.out_features == 4  # one K head of size 16 // 4
    assert not hasattr(model, "position_embedding") and "positional_table" not in dict(
        model.named_buffers()
    )
    assert block.ffn.gate.out_features == math.ceil(8 * 16 / 3)
    assert isinstance(tiny_gpt(norm_placement="post").final_norm, nn.Identity)


def test_no_positions_only_the_causal_mask_tells_order(tiny_gpt):
    """positional="none" adds nothing to the embeddings. One layer then cannot tell a swap of two
    earlier tokens at the last position (it attends to the same set of keys); from the second
    layer on it can, because the causal mask made the first layer's outputs order-dependent."""
    torch.manual_seed(0)
    idx, swapped = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[2, 1, 3, 4]])
    one_layer = tiny_gpt(positional="none", n_layers=1).eval()
    torch.testing.assert_close(one_layer.embed(idx), one_layer.token_embedding(idx) * 4)  # × √16
    torch.testing.assert_close(one_layer(idx)[0][:, -1], one_layer(swapped)[0][:, -1])
    two_layers = tiny_gpt(positional="none", n_layers=2).eval()
    assert not torch.allclose(two_layers(idx)[0][:, -1], two_layers(swapped)[0][:, -1])


def test_learned_positions_are_parameters(tiny_gpt):
    model = tiny_gpt(positional="learned")
    assert model.position_embedding.weight.shape == (8, 16)
    assert parameter_counts(model)["position embedding"] == 8 * 16


def test_sinusoidal_table_is_a_non_persistent_buffer(tiny_gpt):
    from transformer_course.positional import sinusoidal_encoding

    model = tiny_gpt()
    torch.testing.assert_close(model.positional_table, sinusoidal_encoding(8, 16))
    assert "positional_table" not in model.state_dict()
    assert all(name != "positional_table" for name, _ in model.named_parameters())


def test_weight_tying_shares_the_tensor_and_saves_parameters(tiny_gpt):
    tied, untied = tiny_gpt(tie_weights=True), tiny_gpt(tie_weights=False)
    assert tied.lm_head.weight is tied.token_embedding.weight
    assert untied.lm_head.weight is not untied.token_embedding.weight
    assert untied.num_parameters() - tied.num_parameters() == 50 * 16
    assert parameter_counts(tied)["output layer"] == 0
    assert parameter_counts(untied)["output layer"] == 50 * 16
    # One tensor: a gradient step on the output layer moves the embedding too.
    idx = torch.randint(0, 50, (2, 8))
    _, loss = tied(idx, idx)
    loss.backward()
    before = tied.token_embedding.weight.detach().clone()
    torch.optim.SGD(tied.lm_head.parameters(), lr=1.0).step()
    assert not torch.equal(before, tied.token_embedding.weight)


def test_state_dict_round_trip_keeps_tying(tiny_gpt):
    a = tiny_gpt()
    b = tiny_gpt(seed=1)
    b.load_state_dict(a.state_dict())
    assert b.lm_head.weight is b.token_embedding.weight
    idx = torch.randint(0, 50, (2, 8))
    torch.testing.assert_close(a.eval()(idx)[0], b.eval()(idx)[0])


def test_dropout_only_in_training_and_seeded(tiny_gpt):
    model = tiny_gpt(dropout=0.5)
    idx = torch.randint(0, 50, (2, 8))
    model.eval()
    torch.testing.assert_close(model(idx)[0], model(idx)[0])
    model.train()
    assert not torch.equal(model(idx)[0], model(idx)[0])
    torch.manual_seed(3)
    first = model(idx)[0]
    torch.manual_seed(3)
    torch.testing.assert_close(model(idx)[0], first)


def test_same_seed_same_model(tiny_gpt):
    a = tiny_gpt(seed=7)
    b = tiny_gpt(seed=7)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_attention_maps(tiny_gpt, placement):
    model = tiny_gpt(n_layers=3, dropout=0.2, norm_placement=placement)
    model.train()
    idx = torch.randint(0, 50, (2, 6))
    maps = model.attention_maps(idx)  # (L, B, H, T, T)
    assert maps.shape == (3, 2, 4, 6, 6)
    assert model.training, "attention_maps restores the model's mode"
    torch.testing.assert_close(maps.sum(-1), torch.ones(3, 2, 4, 6))
    assert (maps.triu(diagonal=1) == 0).all(), "no weight on future tokens"
    # The path that keeps the weights computes the same output as the fused one.
    model.eval()
    with torch.no_grad():
        fused, _ = model._blocks_forward(idx, return_attention=False)
        by_hand, _ = model._blocks_forward(idx, return_attention=True)
    torch.testing.assert_close(fused, by_hand, rtol=1e-4, atol=1e-5)


def test_block_keeps_the_shape(tiny_gpt):
    block = Block(tiny_gpt.config())
    x = torch.randn(2, 8, 16)  # (B, T, C)
    assert block(x).shape == x.shape
    out, weights = block(x, return_attention=True)
    assert out.shape == x.shape and weights.shape == (2, 4, 8, 8)


def test_parameter_counts_of_the_course_model():
    model = GPT(GPTConfig(vocab_size=100_070))
    counts = parameter_counts(model)
    assert counts["token embedding"] == 100_070 * 64
    assert counts["attention"] == 8 * 4 * (64 * 64 + 64)
    assert counts["feed-forward"] == 8 * (64 * 256 + 256 + 256 * 64 + 64)
    assert counts["norms"] == (8 * 2 + 1) * 2 * 64
    assert sum(counts.values()) == model.num_parameters()


@pytest.mark.parametrize(
    "overrides, error, match",
    [
        (dict(n_heads=5), ValueError, r"n_heads \(5\) must divide d_model \(16\)"),
        (dict(d_model=12, n_heads=4, positional="rope"), ValueError, "even head size"),
        (dict(d_model=15, n_heads=5), ValueError, "sinusoidal table needs an even d_model"),
        (dict(n_kv_heads=3), ValueError, r"n_kv_heads \(3\) must divide n_heads \(4\)"),
        (dict(n_kv_heads=8), ValueError, "n_kv_heads"),
        (dict(positional="alibi"), ValueError, "positional must be one of"),
        (dict(norm="batchnorm"), ValueError, "norm must be one of"),
        (dict(feedforward="tanh"), ValueError, "feedforward must be one of"),
        (dict(norm_placement="middle"), ValueError, "norm_placement must be one of"),
        (dict(dropout=1.0), ValueError, "dropout must be a probability"),
        (dict(dropout=-0.1), ValueError, "dropout must be a probability"),
        (dict(vocab_size=1), ValueError, "vocab_size must be at least 2"),
        (dict(context_length=0), ValueError, "context_length must be at least 1"),
        (dict(d_model=16.0), TypeError, "d_model must be an int"),
        (dict(d_ff=0), ValueError, "d_ff must be at least 1"),
        (dict(tie_weights="yes"), TypeError, "tie_weights must be True or False"),
    ],
)
def test_bad_config_raises_clearly(tiny_gpt, overrides, error, match):
    with pytest.raises(error, match=match):
        tiny_gpt.config(**overrides)


def test_bad_inputs_raise_clearly(tiny_gpt):
    model = tiny_gpt()
    with pytest.raises(ValueError, match="T=9 tokens but the model's context_length is 8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ids in \[0, 50\] but vocab_size is 50"):
        model(torch.tensor([[0, 50]]))
    with pytest.raises(ValueError, match=r"in \[-1, 3\]"):
        model(torch.tensor([[-1, 3]]))
    with pytest.raises(TypeError, match="integer token ids"):
        model(torch.zeros(1, 4))
    with pytest.raises(TypeError, match="torch.Tensor"):
        model([[1, 2, 3]])
    with pytest.raises(ValueError, match=r"shape \[B, T\]"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="T ≥ 1"):
        model(torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(ValueError, match="targets must have the same shape as idx"):
        model(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="config must be a GPTConfig"):
        GPT({"vocab_size": 50})


def test_the_config_checks_once_and_the_layers_it_builds_do_not_check_again(monkeypatch):
    """GPTConfig validates every rule; the blocks, norms and feed-forward networks a GPT builds
    from it make no argument check of their own, and skip the input checks of a direct call."""
    calls = []

    def counting(check):
        def counted(*args, **kwargs):
            calls.append(args[0])  # the argument's name
            return check(*args, **kwargs)

        return counted

    for name in ("integer", "number", "probability", "boolean", "choice", "divides"):
        monkeypatch.setattr(_checks, name, counting(getattr(_checks, name)))
    config = GPTConfig(vocab_size=50, positional="rope", norm="rmsnorm", feedforward="swiglu")
    assert {"vocab_size", "n_heads", "n_kv_heads", "dropout", "rope_base"} <= set(calls)
    calls.clear()
    model = GPT(config)
    assert calls == []
    layers = [m for m in model.modules() if hasattr(m, "check_inputs")]
    assert len(layers) == 3 * config.n_layers + 1 and not any(m.check_inputs for m in layers)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: MultiHeadAttention(12, 5), ValueError, r"n_heads \(5\) must divide d_model"),
        (lambda: MultiHeadAttention(8, 4, n_kv_heads=3), ValueError, "n_kv_heads"),
        (lambda: MultiHeadAttention(8, 2, dropout=1.0), ValueError, "dropout"),
        (lambda: FeedForward(8, activation="tanh"), ValueError, "activation must be one of"),
        (lambda: FeedForward(8, d_ff=0), ValueError, "d_ff must be at least 1"),
        (lambda: SwiGLU(8, None), TypeError, "d_ff must be an int"),
        (lambda: LayerNorm(8, eps=0.0), ValueError, "eps must be a positive"),
        (lambda: RMSNorm(8.0), TypeError, "d must be an int"),
    ],
)
def test_a_layer_built_by_hand_still_checks_its_arguments(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_the_rope_rule_has_one_wording_everywhere():
    """RoPE needs an even head size: the config, the attention layer and apply_rope say it alike."""
    messages = []
    for build in (
        lambda: GPTConfig(vocab_size=50, d_model=12, n_heads=4, positional="rope"),
        lambda: MultiHeadAttention(12, 4, rope=True),
        lambda: apply_rope(torch.zeros(2, 4, 3)),
    ):
        with pytest.raises(ValueError) as caught:
            build()
        messages.append(str(caught.value))
    assert len(set(messages)) == 1, messages
    assert "RoPE needs an even head size D = d_model // n_heads" in messages[0]
    assert messages[0].endswith("got D=3")


def test_int32_ids_are_accepted(tiny_gpt):
    model = tiny_gpt().eval()
    idx = torch.randint(0, 50, (2, 8))
    torch.testing.assert_close(model(idx.int())[0], model(idx)[0])
