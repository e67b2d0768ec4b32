"""Tests of the encoder-decoder (14_encoder_decoder): shapes, masks, cross-attention against
PyTorch's reference, bad inputs, decoding, and a seeded training run that learns reversal."""

from __future__ import annotations

import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from transformer_course.encoder_decoder import (
    DecoderBlock,
    EncoderBlock,
    EncoderDecoder,
    EncoderDecoderConfig,
)
from transformer_course.exercises import encoder_decoder as ex
from transformer_course.seq2seq_tasks import (
    BOS,
    EOS,
    PAD,
    VOCAB_SIZE,
    ReversalTask,
    decode_tokens,
    encode_digits,
    exact_match,
    token_names,
    train_seq2seq,
)


def small_model(seed: int = 0, **overrides) -> EncoderDecoder:
    torch.manual_seed(seed)
    config = EncoderDecoderConfig(
        vocab_size=VOCAB_SIZE, d_model=32, n_heads=4, max_len=12, **overrides
    )
    return EncoderDecoder(config).eval()


def test_task_round_trip_and_shift():
    task = ReversalTask(3, 6)
    batch = task.batch(["123", "904512"])
    assert (
        batch.src.shape == (2, 6) and batch.tgt_in.shape == (2, 7) and batch.tgt_out.shape == (2, 7)
    )
    assert batch.sources == ["123", "904512"] and batch.answers == ["321", "215409"]
    assert batch.tgt_in[0].tolist() == [BOS, *encode_digits("321"), PAD, PAD, PAD]
    assert batch.tgt_out[0].tolist() == [*encode_digits("321"), EOS, PAD, PAD, PAD]
    # tgt_out is tgt_in shifted left by one wherever tgt_in holds a real token
    real = batch.tgt_in != PAD
    assert torch.equal(batch.tgt_out[:, :-1][real[:, 1:]], batch.tgt_in[:, 1:][real[:, 1:]])
    assert token_names([BOS, 3, EOS, PAD]) == ["<bos>", "0", "<eos>", "<pad>"]
    assert decode_tokens([BOS, 4, 5, EOS, 6]) == "12"


def test_task_is_seeded_and_respects_lengths_and_exclusion():
    task = ReversalTask(2, 5)
    a = task.sample(50, torch.Generator().manual_seed(3))
    b = task.sample(50, torch.Generator().manual_seed(3))
    assert a == b and all(2 <= len(s) <= 5 for s in a)
    held = set(a)
    fresh = task.random_batch(200, torch.Generator().manual_seed(4), exclude=held)
    assert not held & set(fresh.sources)


@pytest.mark.parametrize(
    "kwargs",
    [{"min_len": 0, "max_len": 3}, {"min_len": 5, "max_len": 3}],
)
def test_task_rejects_bad_lengths(kwargs):
    with pytest.raises(ValueError, match="min_len"):
        ReversalTask(**kwargs)


def test_task_rejects_bad_strings():
    with pytest.raises(ValueError, match="digits"):
        encode_digits("12a")
    with pytest.raises(ValueError, match="digits"):
        ReversalTask(3, 4).batch(["12"])


def test_shapes_and_loss():
    model = small_model()
    task = ReversalTask(3, 6)
    batch = task.batch(["123", "45678", "000111"])
    logits, loss = model(batch.src, batch.tgt_in, batch.tgt_out)
    assert logits.shape == (3, 7, VOCAB_SIZE)
    # an untrained model guesses: the loss is near ln(V)
    assert abs(loss.item() - torch.log(torch.tensor(float(VOCAB_SIZE))).item()) < 1.0
    memory = model.encode(batch.src)
    assert memory.shape == (3, 6, 32)
    maps = model.cross_attention(batch.src, batch.tgt_in)
    assert maps.shape == (2, 3, 4, 7, 6)
    torch.testing.assert_close(maps.sum(-1), torch.ones(2, 3, 4, 7))
    # padded source positions get no cross-attention at all
    assert torch.all(maps[:, 0, :, :, 3:] == 0)


def test_encoder_is_bidirectional_and_decoder_is_causal():
    model = small_model()
    src = torch.tensor([[3, 4, 5, 6, 7]])
    changed = src.clone()
    changed[0, -1] = 12
    # the encoder: changing the LAST source token changes the FIRST position's output
    assert not torch.allclose(model.encode(src)[0, 0], model.encode(changed)[0, 0])
    # the decoder: changing a later decoder input leaves earlier logits untouched
    tgt = torch.tensor([[BOS, 7, 6, 5]])
    later = tgt.clone()
    later[0, -1] = 3
    memory = model.encode(src)
    torch.testing.assert_close(
        model.decode(tgt, memory, src)[:, :3], model.decode(later, memory, src)[:, :3]
    )


def test_source_padding_does_not_change_the_answer():
    model = small_model()
    short = torch.tensor([[3, 4, 5]])
    padded = torch.tensor([[3, 4, 5, PAD, PAD]])
    tgt = torch.tensor([[BOS, 5, 4]])
    a, _ = model(short, tgt)
    b, _ = model(padded, tgt)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_cross_attention_matches_torch_multihead_attention():
    torch.manual_seed(1)
    block = DecoderBlock(32, 4).eval()
    mine = block.cross_attn
    ref = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    with torch.no_grad():  # PyTorch stacks the three input projections in one matrix
        for part in ("weight", "bias"):
            stacked = [getattr(proj, part) for proj in (mine.q_proj, mine.k_proj, mine.v_proj)]
            getattr(ref, f"in_proj_{part}").copy_(torch.cat(stacked))
            getattr(ref.out_proj, part).copy_(getattr(mine.out_proj, part))
    y = torch.randn(2, 5, 32)
    memory = torch.randn(2, 7, 32)
    valid = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])
    out, weights = mine(y, context=memory, mask=valid[:, None, None, :], return_weights=True)
    expected, expected_w = ref(
        y, memory, memory, key_padding_mask=~valid, average_attn_weights=False
    )
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(weights, expected_w, rtol=1e-5, atol=1e-5)


def test_blocks_are_post_norm():
    torch.manual_seed(0)
    enc = EncoderBlock(16, 2).eval()
    x = torch.randn(2, 4, 16) * 5 + 3
    out = enc(x)
    # post-norm: the block's output IS a LayerNorm output (mean 0, std 1 with the initial gain)
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 4), atol=1e-5, rtol=0)
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(2, 4), atol=1e-3, rtol=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 30, "n_heads": 4}, "n_heads"),
        ({"d_model": 33, "n_heads": 3}, "even"),
        ({"dropout": 1.0}, "dropout"),
        ({"pad_id": 1}, "different"),
        ({"eos_id": 99}, "eos_id"),
    ],
)
def test_config_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        EncoderDecoderConfig(vocab_size=VOCAB_SIZE, **kwargs)


def test_bad_inputs_have_clear_errors():
    model = small_model()
    with pytest.raises(TypeError, match="src must hold integer token ids"):
        model.encode(torch.tensor([[3.0, 4.0]]))
    with pytest.raises(ValueError, match="but vocab_size is 13"):
        model.encode(torch.tensor([[3, 99]]))
    with pytest.raises(ValueError, match="max_len"):
        model.encode(torch.full((1, 13), 3))
    with pytest.raises(ValueError, match="targets"):
        model(torch.tensor([[3, 4]]), torch.tensor([[BOS, 4]]), torch.tensor([[4]]))
    with pytest.raises(ValueError, match="beam_width"):
        model.beam_decode(torch.tensor([[3, 4]]), beam_width=0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.greedy_decode(torch.tensor([[3, 4]]), max_new_tokens=50)
    with pytest.raises(TypeError, match="config"):
        EncoderDecoder({"vocab_size": 13})


def test_beam_width_one_is_greedy_and_beam_scores_are_at_least_greedy():
    model = small_model(seed=2)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 9, PAD]])
    greedy = model.greedy_decode(src, max_new_tokens=5)
    beam1, _ = model.beam_decode(src, beam_width=1, max_new_tokens=5)
    assert torch.equal(greedy[:, : beam1.shape[1]], beam1)

    def total_log_prob(tokens: torch.Tensor, row: int) -> float:
        seq = tokens[row].tolist()
        seq = torch.tensor(seq[: seq.index(EOS) + 1] if EOS in seq else seq)
        assert PAD not in seq.tolist() and BOS not in seq[1:].tolist()
        logits, _ = model(src[row : row + 1], seq[None, :-1])
        logits[..., [PAD, BOS]] = float("-inf")  # the decoders never emit <pad> or <bos>
        return F.log_softmax(logits[0], -1).gather(-1, seq[1:, None]).sum().item()

    beam4, scores = model.beam_decode(src, beam_width=4, max_new_tokens=5)
    for row in range(2):
        assert scores[row].item() == pytest.approx(total_log_prob(beam4, row), abs=1e-4)
        # among finished sequences beam search keeps the best it saw; greedy's is one candidate
        if EOS in greedy[row].tolist():
            assert scores[row].item() >= total_log_prob(greedy, row) - 1e-4


def test_seeded_training_learns_reversal_quickly():
    torch.set_num_threads(1)
    task = ReversalTask(2, 4)
    held = task.sample(200, torch.Generator().manual_seed(99))
    model = small_model(seed=0)
    # CPU time of this process: a shared, busy machine stretches wall time, not the work done.
    start = time.process_time()
    losses = train_seq2seq(
        model, task, steps=400, batch_size=32, lr=5e-3, exclude=set(held), log_every=0
    )
    elapsed = time.process_time() - start
    assert losses[-1] < losses[0] / 4
    accuracy = exact_match(model, task.batch(held))
    assert accuracy >= 0.95, accuracy
    assert elapsed < 30


def test_exercise_checks():
    assert not ex.check_cross_attention_shape(...).answered
    assert ex.check_cross_attention_shape((2, 4, 9, 8))
    assert not ex.check_cross_attention_shape((2, 4, 8, 9))
    assert ex.check_reversal_alignment(5)
    assert not ex.check_reversal_alignment(0)
    assert ex.check_first_loss("above") and ex.check_first_loss(" Above ")
    assert not ex.check_first_loss("below") and not ex.check_first_loss("equal")
    assert not ex.check_first_loss(2.7).correct

    def mask_swapped(src, T, pad_id):  # keys and queries swapped
        return (src != pad_id)[:, None, :, None].expand(-1, 1, -1, T)

    def unmasked(y, memory, valid, attn):  # forgets the padding
        from transformer_course.exercises.solutions.encoder_decoder import cross_attention

        return cross_attention(y, memory, torch.ones_like(valid), attn)

    assert not ex.check_cross_attention_mask(mask_swapped, seed=1)
    assert not ex.check_cross_attention(unmasked, seed=0)
    assert "padding not masked" in ex.check_cross_attention(unmasked, seed=0).message

    def no_out_proj(y, memory, valid, attn):  # the heads merged, W_O forgotten
        from transformer_course.exercises.solutions.encoder_decoder import cross_attention

        identity = type(attn.out_proj)(attn.out_proj.in_features, attn.out_proj.out_features)
        with torch.no_grad():
            identity.weight.copy_(torch.eye(identity.in_features))
            identity.bias.zero_()
        attn.out_proj, keep = identity, attn.out_proj
        try:
            return cross_attention(y, memory, valid, attn)
        finally:
            attn.out_proj = keep

    assert "missing W_O" in ex.check_cross_attention(no_out_proj, seed=0).message
    inverted = ex.check_cross_attention_mask(
        lambda src, T, pad_id: (src == pad_id)[:, None, None, :].expand(-1, 1, T, -1), seed=0
    )
    assert "inverted" in inverted.message
