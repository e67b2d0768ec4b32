"""Tests of 15_flash_attention: the online softmax, the tiled forward and backward against
PyTorch, causal tile skipping, the saved-tensor meter and its memory gate, the GPT switch, bf16,
the step-by-step widget logic, and the exercises' checkers (solutions pass, stubs are "not
answered", the four named wrong versions fail on 40 seeds each)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_course.attention import MultiHeadAttention, flash, use_flash_attention
from transformer_course.exercises import flash_attention as ex
from transformer_course.exercises.solutions import flash_attention as sol


def _scores(q, k, causal):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, S)
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), -math.inf)
    return s


@pytest.mark.parametrize("block", [1, 7, 64, 100])
def test_online_softmax_matches_torch_even_where_exp_overflows(block):
    torch.manual_seed(block)
    x = torch.randn(4, 100) * 3  # (4, 100)
    x[0] *= 100
    x[1] += 1e4
    torch.testing.assert_close(
        flash.online_softmax(x, block), torch.softmax(x, -1), atol=1e-6, rtol=0
    )


def test_merge_is_commutative_and_associative():
    torch.manual_seed(0)
    parts = [torch.randn(3, n) * 40 for n in (5, 2, 9)]
    stats = [flash._block_stats(p) for p in parts]
    whole = flash._block_stats(torch.cat(parts, -1))
    for a, b, c in [(0, 1, 2), (2, 0, 1), (1, 2, 0)]:
        merged = flash.merge_softmax_stats(flash.merge_softmax_stats(stats[a], stats[b]), stats[c])
        torch.testing.assert_close(merged, whole)
    empty = (torch.full((3,), -math.inf), torch.zeros(3))  # nothing seen yet
    torch.testing.assert_close(flash.merge_softmax_stats(empty, stats[0]), stats[0])


def test_online_softmax_steps_track_m_l_and_rescale():
    row = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0])
    steps = flash.online_softmax_steps(row, 2)
    assert [s.start for s in steps] == [0, 2, 4]
    assert [s.m for s in steps] == [3.0, 5.0, 5.0]
    assert steps[0].rescale == 0.0 and math.isclose(steps[1].rescale, math.exp(3 - 5))
    assert math.isclose(steps[-1].l, float(torch.exp(row.double() - 5).sum()), rel_tol=1e-12)
    with pytest.raises(ValueError, match="1-D"):
        flash.online_softmax_steps(torch.zeros(2, 2), 2)


@pytest.mark.parametrize("blocks", [(16, 16), (32, 64), (100, 37), (256, 256), (7, 13)])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_forward_matches_sdpa_and_logsumexp(blocks, causal):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 3, 150, 16) for _ in range(3))
    out, lse = flash.flash_forward(q, k, v, causal, *blocks)
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v, is_causal=causal), atol=1e-5, rtol=0
    )
    torch.testing.assert_close(lse, torch.logsumexp(_scores(q, k, causal), -1), atol=1e-5, rtol=0)


def test_flash_forward_errors_are_clear():
    q = torch.zeros(1, 4, 8)
    with pytest.raises(ValueError, match="causal=True needs"):
        flash.flash_forward(q, torch.zeros(1, 5, 8), torch.zeros(1, 5, 8), True)
    with pytest.raises(ValueError, match="block_q"):
        flash.flash_forward(q, q, q, False, 0, 4)


def test_causal_pass_skips_the_future_tiles():
    grid = flash.tile_grid(1024, 64, 64)
    assert int((grid > 0).sum()) == 136 and int((grid == 1).sum()) == 16
    tiles, _result, _inputs = ex._count_tiles(flash.flash_forward)
    assert tiles == 136
    tiles, _result, _inputs = ex._count_tiles(
        lambda q, k, v, c, bq, bk: flash.flash_forward(q, k, v, False, bq, bk)
    )
    assert tiles == 256


@pytest.mark.parametrize("causal", [False, True])
def test_backward_by_recomputation_matches_autograd(causal):
    torch.manual_seed(2)
    leaves = [torch.randn(1, 2, 90, 16, requires_grad=True) for _ in range(3)]
    ours = flash.flash_attention(*leaves, causal, 32, 37)
    grad = torch.randn_like(ours)
    mine = torch.autograd.grad(ours, leaves, grad)
    theirs = torch.autograd.grad(
        F.scaled_dot_product_attention(*leaves, is_causal=causal), leaves, grad
    )
    for a, b in zip(mine, theirs):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def test_memory_gate_at_4096():
    q, k, v = (torch.randn(1, 1, 4096, 64, requires_grad=True) for _ in range(3))
    with flash.SavedTensorMeter() as tiled:
        flash.flash_attention(q, k, v, False, 256, 256)
    with flash.SavedTensorMeter() as naive:
        flash.naive_attention(q, k, v)
    assert tiled.mib <= 5 and naive.mib / tiled.mib >= 40, (naive.mib, tiled.mib)
    assert sorted(tiled.shapes) == sorted([(1, 1, 4096, 64)] * 4 + [(1, 1, 4096)])


def test_meter_counts_a_storage_once():
    x = torch.randn(100, requires_grad=True)
    with flash.SavedTensorMeter() as meter:
        y = x.exp()
        (y * y).sum()
    assert meter.bytes == 100 * 4 and len(meter.shapes) == 3  # y, saved by exp and twice by *


def test_bf16_with_fp32_statistics_is_close_to_fp32():
    torch.manual_seed(3)
    q, k, v = (torch.randn(1, 2, 128, 32) for _ in range(3))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out, _lse = flash.flash_forward(*(t.bfloat16() for t in (q, k, v)), True, 32, 32)
    assert out.dtype == torch.bfloat16
    assert (out.float() - ref).abs().max() < 3e-2


def test_gpt_switch_keeps_loss_and_tokens():
    from transformer_course.generate import generate
    from transformer_course.model import GPT, GPTConfig

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=50, context_length=32, n_layers=2, n_heads=4, d_model=32)
    model = GPT(config).eval()
    ids = torch.randint(0, 50, (2, 32))
    with torch.no_grad():
        _logits, before = model(ids, ids)
        tokens = generate(model, ids[:1, :4], 8, temperature=0, use_cache=False)
    assert use_flash_attention(model) == 2
    assert all(m.flash for m in model.modules() if isinstance(m, MultiHeadAttention))
    with torch.no_grad():
        _logits, after = model(ids, ids)
        flash_tokens = generate(model, ids[:1, :4], 8, temperature=0, use_cache=False)
    torch.testing.assert_close(after, before, atol=1e-5, rtol=0)
    assert torch.equal(flash_tokens, tokens)
    model.train()  # gradients flow through the tiled kernel too
    _logits, loss = model(ids, ids)
    loss.backward()
    use_flash_attention(model, False)
    assert not any(m.flash for m in model.modules() if isinstance(m, MultiHeadAttention))


CHECKS = [ex.check_online_softmax, ex.check_merge_softmax_stats, ex.check_flash_forward]


@pytest.mark.parametrize(
    "check", CHECKS + [ex.check_causal_tile_skipping, ex.check_flash_attention_function]
)
def test_solution_passes_and_stub_is_not_answered(check):
    solution = check.exercise.solution if hasattr(check, "exercise") else check.solution
    assert check(solution).correct
    assert not check(...).answered


def test_a_stub_class_is_not_answered():
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal): ...

        @staticmethod
        def backward(ctx, grad_out): ...

    feedback = ex.check_flash_attention_function(Stub, seed=0)
    assert not feedback.answered and not feedback.correct


def _full_grid_forward(q, k, v, causal, block_q, block_k):
    return ex._tiled_with(q, k, v, causal, block_q, block_k, skip_future=False)  # masks only


class SavesP(torch.autograd.Function):
    """Right gradients, but the context keeps the T × T weights."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        p = torch.softmax(_scores(q, k, causal), -1)  # (B, H, T, T)
        ctx.save_for_backward(q, k, v, p)
        return p @ v

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, p = ctx.saved_tensors
        dv = p.transpose(-2, -1) @ grad_out
        ds = p * (grad_out @ v.transpose(-2, -1) - (grad_out * (p @ v)).sum(-1, keepdim=True))
        scale = 1 / math.sqrt(q.shape[-1])
        return ds @ k * scale, ds.transpose(-2, -1) @ q * scale, dv, None


class SavesMAndL(sol.FlashAttention):
    @staticmethod
    def forward(ctx, q, k, v, causal):
        out = sol.FlashAttention.forward(ctx, q, k, v, causal)
        ctx.m, ctx.l = out.new_zeros(out.shape[:-1]), out.new_zeros(out.shape[:-1])
        return out


@pytest.mark.parametrize("seed", range(40))
def test_wrong_versions_fail_on_every_seed(seed):
    forward_slips = [ex._per_tile_softmax, ex._no_rescale, ex._skip_diagonal]
    for wrong in forward_slips:
        assert not ex.check_flash_forward(wrong, seed=seed).correct
    assert not ex.check_online_softmax(ex._softmax_per_block, seed=seed).correct
    assert not ex.check_online_softmax(ex._sum_without_rescale, seed=seed).correct
    assert not ex.check_merge_softmax_stats(ex._add_sums, seed=seed).correct
    assert not ex.check_merge_softmax_stats(ex._keep_second_max, seed=seed).correct
    assert not ex.check_flash_attention_function(SavesP, seed=seed).correct


def test_saving_p_or_two_statistics_is_named():
    feedback = ex.check_flash_attention_function(SavesP, seed=0)
    assert "T × T" in feedback.message
    feedback = ex.check_flash_attention_function(SavesMAndL, seed=0)
    assert "per-query" in feedback.message


def test_a_full_grid_is_caught_by_the_tile_check():
    feedback = ex.check_causal_tile_skipping(_full_grid_forward)
    assert not feedback.correct and "256" in feedback.message


def test_widget_view_and_tile_picture():
    import matplotlib.pyplot as plt

    from transformer_course.diagrams.flash_tiles import flash_tile_grid
    from transformer_course.widgets.flash_steps import online_softmax_view

    row = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0])
    fig = online_softmax_view(row, 2, 2)
    assert "m = 5.000" in fig.axes[0].get_title() and "0.1353" in fig.axes[0].get_title()
    plt.close(fig)
    assert isinstance(online_softmax_view(row, 2, 4), str)
    assert isinstance(online_softmax_view(row, 0, 1), str)
    fig = flash_tile_grid()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "10 of 16" in " ".join(texts) and texts.count("skipped") == 6
    plt.close(fig)
