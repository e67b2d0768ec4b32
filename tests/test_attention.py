"""transformer_course.attention equals PyTorch's own attention, on random shapes.

The functional form is compared with ``F.scaled_dot_product_attention``, the module with
``nn.MultiheadAttention`` (weights copied over), grouped-query attention with K/V heads
repeated by hand, and the module's fused path with its by-hand path.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course import attention
from transformer_course.attention import MultiHeadAttention

TOL = {"atol": 1e-5, "rtol": 1e-5}


def _random_mask(shape, p_keep: float, generator: torch.Generator) -> torch.Tensor:
    return torch.rand(shape, generator=generator) < p_keep


# ---------------------------------------------------------------- causal / padding masks


@pytest.mark.parametrize("T", [1, 2, 5, 16])
def test_causal_mask_is_the_lower_triangle(T):
    mask = attention.causal_mask(T)
    assert mask.dtype == torch.bool and mask.shape == (T, T)
    for i in range(T):
        for j in range(T):
            assert bool(mask[i, j]) == (j <= i)


def test_causal_mask_matches_pytorch_is_causal():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 7, 8, generator=g) for _ in range(3))
    ours, _ = attention.scaled_dot_product_attention(q, k, v, mask=attention.causal_mask(7))
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), **TOL)


@pytest.mark.parametrize("bad", [0, -3])
def test_causal_mask_rejects_non_positive_sizes(bad):
    with pytest.raises(ValueError, match="T"):
        attention.causal_mask(bad)
    with pytest.raises(TypeError, match="T"):
        attention.causal_mask(2.0)


def test_causal_mask_after_cached_tokens_is_the_last_rows_of_the_full_mask():
    full = attention.causal_mask(7)  # (7, 7)
    torch.testing.assert_close(attention.causal_mask(3, S=7, offset=4), full[4:])  # (3, 7)
    torch.testing.assert_close(attention.causal_mask(3, offset=4), full[4:])  # S = T + offset
    assert attention.causal_mask(2, "cpu").shape == (2, 2)  # API.md: causal_mask(T, device=None)
    with pytest.raises(ValueError, match="offset"):
        attention.causal_mask(3, offset=-1)


def test_the_causal_mask_is_built_only_when_it_is_used(monkeypatch):
    built = []
    real = attention.causal_mask
    monkeypatch.setattr(attention, "causal_mask", lambda *a, **k: built.append(a) or real(*a, **k))
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)  # (B, T, C)
    fused = mha(x, causal=True)  # the fused kernel's is_causal: no mask tensor
    assert built == []
    by_hand, _ = mha(x, causal=True, return_weights=True)  # by hand: the learner's mask of 06
    assert len(built) == 1
    torch.testing.assert_close(fused, by_hand, **TOL)


def test_padding_mask_broadcasts_over_heads_and_queries():
    valid = torch.tensor([[True, True, False], [True, False, False]])
    mask = attention.padding_mask(valid)
    assert mask.shape == (2, 1, 1, 3)
    full = mask.expand(2, 4, 5, 3)
    assert torch.equal(full[1, 3, 4], valid[1])
    with pytest.raises(ValueError, match="valid"):
        attention.padding_mask(valid.float())


# ---------------------------------------------------------------- heads


def test_split_heads_gives_each_head_its_own_columns_and_merge_undoes_it():
    x = torch.arange(2 * 3 * 12, dtype=torch.float32).view(2, 3, 12)
    heads = attention.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 3)
    for h in range(4):
        torch.testing.assert_close(heads[:, h], x[..., 3 * h : 3 * h + 3])
    torch.testing.assert_close(attention.merge_heads(heads), x)
    with pytest.raises(ValueError, match="divisible by n_heads"):
        attention.split_heads(x, 5)


# ---------------------------------------------------------------- softmax


def test_softmax_equals_torch_and_survives_large_scores():
    g = torch.Generator().manual_seed(2)
    scores = torch.randn(3, 4, 9, generator=g) * 10
    torch.testing.assert_close(attention.softmax(scores), torch.softmax(scores, dim=-1))
    big = torch.tensor([1000.0, 999.0, 0.0])
    naive = big.exp() / big.exp().sum()
    assert torch.isnan(naive).any(), (
        "the textbook formula overflows here (the reason for the stable form)"
    )
    torch.testing.assert_close(attention.softmax(big), torch.softmax(big, dim=-1))
    torch.testing.assert_close(attention.softmax(scores, dim=0), torch.softmax(scores, dim=0))


def test_softmax_of_minus_infinity_is_exactly_zero_and_a_fully_masked_row_is_zero():
    inf = float("-inf")
    scores = torch.tensor([[0.5, inf, 1.0], [inf, inf, inf]], requires_grad=True)
    weights = attention.softmax(scores)
    assert weights[0, 1].item() == 0.0
    assert torch.equal(weights[1], torch.zeros(3))
    assert math.isclose(weights[0].sum().item(), 1.0, rel_tol=1e-6)
    (weights * torch.arange(3.0)).sum().backward()
    assert torch.isfinite(scores.grad).all(), "no NaN gradient through a fully masked row"


# ---------------------------------------------------------------- functional attention vs PyTorch


@settings(max_examples=60, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    tq=st.integers(1, 9),
    tk=st.integers(1, 9),
    d=st.integers(1, 16),
    dv=st.integers(1, 16),
    use_mask=st.booleans(),
    p_keep=st.floats(0.0, 1.0),
    scale=st.one_of(st.none(), st.floats(0.01, 3.0)),
    seed=st.integers(0, 2**16),
)
def test_functional_attention_equals_pytorch(lead, tq, tk, d, dv, use_mask, p_keep, scale, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, tq, d, generator=g)
    k = torch.randn(*lead, tk, d, generator=g)
    v = torch.randn(*lead, tk, dv, generator=g)
    mask = _random_mask((*lead, tq, tk), p_keep, g) if use_mask else None
    out, weights = attention.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    assert out.shape == (*lead, tq, dv) and weights.shape == (*lead, tq, tk)
    torch.testing.assert_close(out, expected, **TOL)
    sums = weights.sum(-1)
    if mask is None:
        torch.testing.assert_close(sums, torch.ones_like(sums))
    else:
        assert torch.all(weights[~mask] == 0), "masked positions get exactly 0"
        has_key = mask.any(-1)
        torch.testing.assert_close(sums[has_key], torch.ones_like(sums[has_key]))
        assert torch.all(weights[~has_key] == 0) and torch.all(out[~has_key] == 0)
        assert not torch.isnan(out).any()


def test_mask_broadcasts_from_t_by_t_to_every_batch_and_head():
    g = torch.Generator().manual_seed(3)
    q, k, v = (
        torch.randn(2, 4, 5, 8, generator=g),
        torch.randn(2, 4, 6, 8, generator=g),
        torch.randn(2, 4, 6, 3, generator=g),
    )
    mask = _random_mask((5, 6), 0.7, g)
    out, weights = attention.scaled_dot_product_attention(q, k, v, mask=mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **TOL)
    assert torch.all(weights[..., ~mask] == 0)


def test_default_scale_is_one_over_sqrt_d():
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 4, 64, generator=g) for _ in range(3))
    _, default = attention.scaled_dot_product_attention(q, k, v)
    _, explicit = attention.scaled_dot_product_attention(q, k, v, scale=1 / 8)
    _, unscaled = attention.scaled_dot_product_attention(q, k, v, scale=1.0)
    torch.testing.assert_close(default, explicit)
    assert not torch.allclose(default, unscaled)
    torch.testing.assert_close(attention.attention_weights(q, k), default)


def test_functional_gradients_equal_pytorch():
    g = torch.Generator().manual_seed(5)
    tensors = [torch.randn(2, 3, 6, 8, generator=g, requires_grad=True) for _ in range(3)]
    copies = [t.detach().clone().requires_grad_() for t in tensors]
    mask = attention.causal_mask(6)
    out, _ = attention.scaled_dot_product_attention(*tensors, mask=mask)
    ref = F.scaled_dot_product_attention(*copies, attn_mask=mask)
    upstream = torch.randn(out.shape, generator=g)
    (out * upstream).sum().backward()
    (ref * upstream).sum().backward()
    for ours, theirs in zip(tensors, copies):
        torch.testing.assert_close(ours.grad, theirs.grad, **TOL)


@pytest.mark.parametrize(
    ("shapes", "match"),
    [
        (((2, 5, 8), (2, 5, 7), (2, 5, 8)), "same last dimension"),
        (((2, 5, 8), (2, 6, 8), (2, 5, 8)), "same number of keys"),
        (((2, 5, 8), (3, 5, 8), (3, 5, 8)), "do not broadcast"),
        (((8,), (5, 8), (5, 8)), "at least 2 dimensions"),
    ],
)
def test_functional_rejects_mismatched_shapes(shapes, match):
    q, k, v = (torch.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=match):
        attention.scaled_dot_product_attention(q, k, v)


def test_functional_rejects_bad_masks_and_scales():
    q = k = v = torch.zeros(2, 5, 8)
    with pytest.raises(ValueError, match="dtype torch.bool"):
        attention.scaled_dot_product_attention(q, k, v, mask=torch.zeros(5, 5))
    with pytest.raises(ValueError, match="dtype torch.bool"):
        attention.scaled_dot_product_attention(q, k, v, mask=torch.ones(5, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="does not broadcast"):
        attention.scaled_dot_product_attention(q, k, v, mask=torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="does not broadcast"):
        attention.scaled_dot_product_attention(
            q, k, v, mask=torch.ones(3, 2, 5, 5, dtype=torch.bool)
        )
    with pytest.raises(ValueError, match="bool torch.Tensor"):
        attention.scaled_dot_product_attention(q, k, v, mask=[[True] * 5] * 5)
    with pytest.raises(ValueError, match="scale"):
        attention.scaled_dot_product_attention(q, k, v, scale=0.0)
    with pytest.raises(TypeError, match="q"):
        attention.scaled_dot_product_attention(q.long(), k, v)


# ---------------------------------------------------------------- the module vs nn.MultiheadAttention


def _reference_from(module: MultiHeadAttention, bias: bool) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(module.d_model, module.n_heads, bias=bias, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([module.q_proj.weight, module.k_proj.weight, module.v_proj.weight])
        )
        ref.out_proj.weight.copy_(module.out_proj.weight)
        if bias:
            ref.in_proj_bias.copy_(
                torch.cat([module.q_proj.bias, module.k_proj.bias, module.v_proj.bias])
            )
            ref.out_proj.bias.copy_(module.out_proj.bias)
    return ref.eval()


@settings(max_examples=25, deadline=None)
@given(
    n_heads=st.sampled_from([1, 2, 4]),
    head_dim=st.integers(1, 8),
    batch=st.integers(1, 3),
    T=st.integers(1, 8),
    S=st.integers(1, 8),
    cross=st.booleans(),
    causal=st.booleans(),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_module_equals_nn_multihead_attention(
    n_heads, head_dim, batch, T, S, cross, causal, bias, seed
):
    torch.manual_seed(seed)
    d_model = n_heads * head_dim
    module = MultiHeadAttention(d_model, n_heads, bias=bias).eval()
    ref = _reference_from(module, bias)
    x = torch.randn(batch, T, d_model)
    context = torch.randn(batch, S, d_model) if cross else None
    source = context if cross else x
    mask = attention.causal_mask(T) if causal and not cross else None
    # nn.MultiheadAttention's boolean mask means the opposite: True = may NOT attend.
    expected, expected_weights = ref(
        x,
        source,
        source,
        attn_mask=None if mask is None else ~mask,
        need_weights=True,
        average_attn_weights=False,
    )
    with torch.no_grad():
        fused = module(x, context=context, causal=causal and not cross)
        by_hand, weights = module(
            x, context=context, causal=causal and not cross, return_weights=True
        )
    torch.testing.assert_close(fused, expected, **TOL)
    torch.testing.assert_close(by_hand, expected, **TOL)
    torch.testing.assert_close(weights, expected_weights, **TOL)
    assert weights.shape == (batch, n_heads, T, source.shape[1])


def test_module_with_explicit_mask_equals_nn_multihead_attention():
    torch.manual_seed(6)
    module = MultiHeadAttention(32, 4).eval()
    ref = _reference_from(module, bias=True)
    x, context = torch.randn(3, 5, 32), torch.randn(3, 7, 32)
    mask = torch.rand(5, 7) < 0.6
    mask[:, 0] = True  # nn.MultiheadAttention returns NaN for a query with no key at all
    expected, _ = ref(x, context, context, attn_mask=~mask)
    with torch.no_grad():
        torch.testing.assert_close(module(x, context=context, mask=mask), expected, **TOL)


# ---------------------------------------------------------------- fused path vs by-hand path


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("kind", ["none", "causal", "mask", "mask+causal", "cross", "padding"])
def test_fused_and_by_hand_paths_agree_with_gradients(n_kv_heads, kind):
    torch.manual_seed(7)
    module = MultiHeadAttention(32, 4, n_kv_heads=n_kv_heads)
    x = torch.randn(2, 6, 32)
    context = torch.randn(2, 9, 32) if kind == "cross" else None
    mask = None
    if kind in ("mask", "mask+causal"):
        mask = torch.rand(2, 4, 6, 6) < 0.6
        mask[0, 0, 3] = False  # one query that sees nothing: output 0, never NaN
    if kind == "padding":
        mask = attention.padding_mask(torch.tensor([[True] * 6, [True] * 4 + [False] * 2]))
    causal = kind in ("causal", "mask+causal")

    fused = module(x, context=context, mask=mask, causal=causal)
    fused_grads = torch.autograd.grad(fused.square().sum(), list(module.parameters()))
    by_hand, weights = module(x, context=context, mask=mask, causal=causal, return_weights=True)
    hand_grads = torch.autograd.grad(by_hand.square().sum(), list(module.parameters()))
    assert not torch.isnan(fused).any()
    torch.testing.assert_close(fused, by_hand, **TOL)
    for a, b in zip(fused_grads, hand_grads):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    if causal:
        assert torch.all(weights.triu(diagonal=1) == 0), "the future gets exactly 0 weight"


# ---------------------------------------------------------------- grouped-query / multi-query attention


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), [(4, 2), (4, 1), (6, 3), (8, 2), (4, 4)])
def test_gqa_equals_repeating_kv_heads_by_hand(n_heads, n_kv_heads):
    torch.manual_seed(8)
    head_dim, B, T = 4, 2, 5
    d_model = n_heads * head_dim
    module = MultiHeadAttention(d_model, n_heads, n_kv_heads=n_kv_heads).eval()
    assert module.k_proj.out_features == n_kv_heads * head_dim
    x = torch.randn(B, T, d_model)
    q = module.q_proj(x).view(B, T, n_heads, head_dim)
    k = module.k_proj(x).view(B, T, n_kv_heads, head_dim)
    v = module.v_proj(x).view(B, T, n_kv_heads, head_dim)
    group = n_heads // n_kv_heads
    heads = []
    for h in range(n_heads):
        g = h // group  # consecutive query heads share one K/V head
        scores = q[:, :, h] @ k[:, :, g].transpose(1, 2) / math.sqrt(head_dim)
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        heads.append(torch.softmax(scores, dim=-1) @ v[:, :, g])
    expected = module.out_proj(torch.cat(heads, dim=-1))
    with torch.no_grad():
        torch.testing.assert_close(module(x, causal=True), expected, **TOL)
        torch.testing.assert_close(module(x, causal=True, return_weights=True)[0], expected, **TOL)


def test_mqa_heads_share_keys_so_differ_only_through_queries():
    torch.manual_seed(9)
    module = MultiHeadAttention(16, 4, n_kv_heads=1).eval()
    with torch.no_grad():
        module.q_proj.weight.copy_(
            module.q_proj.weight[:4].repeat(4, 1)
        )  # every head asks the same
        module.q_proj.bias.copy_(module.q_proj.bias[:4].repeat(4))
        _, weights = module(torch.randn(1, 5, 16), return_weights=True)
    for h in range(1, 4):
        torch.testing.assert_close(weights[:, h], weights[:, 0])


# ---------------------------------------------------------------- dropout, rope, errors


def test_dropout_acts_in_training_only():
    torch.manual_seed(10)
    module = MultiHeadAttention(16, 2, dropout=0.5)
    x = torch.randn(2, 6, 16)
    module.eval()
    with torch.no_grad():
        a, b = module(x), module(x)
        _, weights = module(x, return_weights=True)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 6))
    module.train()
    with torch.no_grad():
        c, d = module(x), module(x)
        e, weights = module(x, return_weights=True)
    assert not torch.allclose(c, a) and not torch.allclose(c, d) and not torch.allclose(e, a)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 6))  # returned before dropout


def test_rope_rotates_queries_and_keys_after_the_head_split():
    positional = pytest.importorskip("transformer_course.positional")
    if not hasattr(positional, "apply_rope"):
        pytest.skip("positional.apply_rope is not there yet")
    torch.manual_seed(11)
    module = MultiHeadAttention(32, 4, n_kv_heads=2, rope=True, rope_base=500.0).eval()
    x = torch.randn(2, 7, 32)
    B, T = 2, 7
    q = positional.apply_rope(module.q_proj(x).view(B, T, 4, 8).transpose(1, 2), base=500.0)
    k = positional.apply_rope(module.k_proj(x).view(B, T, 2, 8).transpose(1, 2), base=500.0)
    v = module.v_proj(x).view(B, T, 2, 8).transpose(1, 2)
    k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    expected = module.out_proj(heads.transpose(1, 2).reshape(B, T, 32))
    with torch.no_grad():
        torch.testing.assert_close(module(x, causal=True), expected, **TOL)
        torch.testing.assert_close(module(x, causal=True, return_weights=True)[0], expected, **TOL)
        plain = MultiHeadAttention(32, 4, n_kv_heads=2).eval()
        plain.load_state_dict(module.state_dict())
        assert not torch.allclose(plain(x, causal=True), expected)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 64, "n_heads": 5}, r"n_heads \(5\) must divide d_model \(64\)"),
        (
            {"d_model": 64, "n_heads": 4, "n_kv_heads": 3},
            r"n_kv_heads \(3\) must divide n_heads \(4\)",
        ),
        ({"d_model": 64, "n_heads": 4, "n_kv_heads": 8}, "n_kv_heads"),
        ({"d_model": 0, "n_heads": 1}, "d_model"),
        ({"d_model": 64, "n_heads": 4, "dropout": 1.0}, "dropout"),
        ({"d_model": 12, "n_heads": 4, "rope": True}, "even head size"),
    ],
)
def test_module_rejects_bad_configuration(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention(**kwargs)


def test_module_rejects_bad_inputs_and_masks():
    module = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    with pytest.raises(ValueError, match=r"x must have shape \[B, T, 16\]"):
        module(torch.randn(2, 5, 12))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        module(torch.randn(5, 16))
    with pytest.raises(ValueError, match="context must have shape"):
        module(x, context=torch.randn(3, 4, 16))
    with pytest.raises(ValueError, match="context must have shape"):
        module(x, context=torch.randn(2, 4, 8))
    with pytest.raises(ValueError, match="dtype torch.bool"):
        module(x, mask=torch.ones(5, 5))
    with pytest.raises(ValueError, match="does not broadcast"):
        module(x, mask=torch.ones(5, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="does not broadcast"):
        module(x, mask=torch.ones(2, 5, 5, 5, dtype=torch.bool))  # 5 is not the number of heads
    with pytest.raises(ValueError, match="causal=True needs"):
        module(x, context=torch.randn(2, 4, 16), causal=True)
