"""Decoding: greedy, sampling knobs, beam search, log-probabilities and clear errors."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course.generate import (
    beam_search,
    beam_search_loop,
    continuation_log_probs,
    decode_loop,
    filter_logits,
    generate,
    next_token_probs,
)


class BigramTable(nn.Module):
    """A stand-in language model whose next-token log-probabilities depend only on the last token."""

    def __init__(self, table: torch.Tensor, context_length: int = 4) -> None:
        super().__init__()
        self.log_table = nn.Parameter(table.log(), requires_grad=False)  # (V, V)
        self.config = SimpleNamespace(context_length=context_length, vocab_size=table.shape[0])

    def forward(self, idx, targets=None):
        return self.log_table[idx], None  # (B, T) -> (B, T, V)


def trap() -> BigramTable:
    """Greedy takes 0 -> 1 (p 0.6) and then faces a near-flat 0.34; 0 -> 2 (p 0.4) -> 0 (p 0.9) is better."""
    table = torch.tensor(
        [
            [0.0001, 0.5999, 0.4],
            [0.34, 0.33, 0.33],
            [0.9, 0.05, 0.05],
        ]
    )
    return BigramTable(table / table.sum(-1, keepdim=True))


PROMPT = torch.tensor([3, 14, 15, 9, 2])


def greedy(model, prompt=PROMPT, n=10):
    return generate(model, prompt, n, temperature=0)


def test_greedy_is_argmax_step_by_step(tiny_gpt):
    model = tiny_gpt().eval()
    out = greedy(model)
    for t in range(len(PROMPT), len(out)):
        context = out[max(0, t - 8) : t][None]  # the last context_length tokens
        assert out[t] == model(context)[0][0, -1].argmax()


@pytest.mark.parametrize(
    "knobs",
    [
        dict(temperature=0),
        dict(top_k=1),
        dict(top_p=1e-6),
        dict(top_k=1, temperature=5.0),
        dict(temperature=1e-4),
    ],
    ids=["temperature0", "top_k1", "tiny_top_p", "top_k1_hot", "tiny_temperature"],
)
def test_degenerate_sampling_equals_greedy(tiny_gpt, knobs):
    model = tiny_gpt()
    out = generate(model, PROMPT, 12, generator=torch.Generator().manual_seed(1), **knobs)
    torch.testing.assert_close(out, greedy(model, n=12))


def test_beam_width_one_equals_greedy(tiny_gpt):
    model = tiny_gpt()
    torch.testing.assert_close(beam_search(model, PROMPT, 12, beam_width=1), greedy(model, n=12))
    assert torch.equal(beam_search(trap(), [0], 2, beam_width=1), greedy(trap(), [0], 2))


def test_beam_search_beats_greedy_on_a_trap():
    model = trap()
    greedy_path = greedy(model, torch.tensor([0]), 2)
    beam_path = beam_search(model, torch.tensor([0]), 2, beam_width=2)
    assert greedy_path.tolist() == [0, 1, 0]
    assert beam_path.tolist() == [0, 2, 0]
    greedy_score = continuation_log_probs(model, [0], greedy_path[1:]).sum()
    beam_score = continuation_log_probs(model, [0], beam_path[1:]).sum()
    assert beam_score > greedy_score
    torch.testing.assert_close(beam_score, torch.tensor(math.log(0.4 * 0.9)))


def test_beam_search_finds_the_best_of_all_short_paths(tiny_gpt):
    """With a beam as wide as the vocabulary, two steps are searched exhaustively."""
    model = tiny_gpt(vocab_size=12)
    prompt = torch.tensor([1, 2])
    best = beam_search(model, prompt, 2, beam_width=12)
    pairs = torch.cartesian_prod(torch.arange(12), torch.arange(12))  # (144, 2)
    scores = continuation_log_probs(model, prompt.expand(144, 2), pairs).sum(-1)  # (144,)
    assert best[2:].tolist() == pairs[scores.argmax()].tolist()


def test_beam_score_never_below_greedy(tiny_gpt):
    for seed in range(3):
        model = tiny_gpt(seed)
        g = greedy(model, n=6)
        b = beam_search(model, PROMPT, 6, beam_width=4)
        assert (
            continuation_log_probs(model, PROMPT, b[5:]).sum()
            >= continuation_log_probs(model, PROMPT, g[5:]).sum() - 1e-5
        )


class TableSteps:
    """A step function for the shared loops: log-probabilities of the next token from a table
    indexed by the last token; remembers every reorder so the test can check the bookkeeping."""

    def __init__(self, table: torch.Tensor) -> None:
        self.log_table = table.log()  # (V, V)
        self.reorders: list[list[int]] = []

    def __call__(self, idx: torch.Tensor) -> torch.Tensor:
        return self.log_table[idx[:, -1]]  # (K, V)

    def reorder(self, index: torch.Tensor) -> None:
        self.reorders.append(index.tolist())


EOS_TABLE = torch.tensor(  # tokens 0 (start), 1, 2, 3 = eos; rows sum to 1
    [
        [0.0, 0.5, 0.2, 0.3],  # from the start: 1 is likeliest, eos (0.3) next
        [0.0, 0.4, 0.35, 0.25],  # after 1: never sure
        [0.0, 0.0, 0.05, 0.95],
        [1.0, 0.0, 0.0, 0.0],
    ]
)


def test_a_finished_beam_keeps_its_score_and_wins():
    """0 -> eos (0.3) beats every live path after two steps: 0.5·0.4 = 0.2, 0.2·0.95 = 0.19."""
    best, score = beam_search_loop(
        TableSteps(EOS_TABLE), torch.tensor([0]), 4, 3, eos_id=3, pad_id=0
    )
    assert best.tolist()[:2] == [0, 3] and set(best.tolist()[2:]) <= {0}, "padded after eos"
    torch.testing.assert_close(score, torch.tensor(math.log(0.3)))


def test_beam_search_loop_reorders_only_live_beams_and_stops_when_all_finished():
    steps = TableSteps(EOS_TABLE)
    best, score = beam_search_loop(
        steps, torch.tensor([2]), 10, 2, eos_id=3, pad_id=0, score_dtype=torch.float64
    )
    # Step 1 keeps 2 -> eos (0.95) and 2 -> 2 (0.05): only the second is live, child of live row 0.
    # Step 2 keeps the finished one and 2 -> 2 -> eos (0.0475): all finished, the search stops.
    assert steps.reorders == [[0], []]
    assert best.tolist() == [2, 3, 0] and score.dtype == torch.float64
    torch.testing.assert_close(score, torch.tensor(math.log(0.95), dtype=torch.float64))
    without_eos = TableSteps(EOS_TABLE)
    beam_search_loop(without_eos, torch.tensor([0]), 3, 2)
    assert [len(r) for r in without_eos.reorders] == [2, 2, 2], "no eos: every beam stays live"


def test_decode_loop_pads_finished_rows_and_stops():
    out = decode_loop(
        TableSteps(EOS_TABLE),
        torch.tensor([[0], [2]]),
        6,
        lambda logits: logits.argmax(-1, keepdim=True),
        eos_id=3,
    )
    # Row 0: 0 -> 1 -> 1 -> … never ends; row 1: 2 -> eos, then padding. Six steps: row 0 lives on.
    assert out.tolist() == [[0, 1, 1, 1, 1, 1, 1], [2, 3, 0, 0, 0, 0, 0]]
    ended = decode_loop(
        TableSteps(EOS_TABLE),
        torch.tensor([[2]]),
        6,
        lambda z: z.argmax(-1, keepdim=True),
        eos_id=3,
    )
    assert ended.tolist() == [[2, 3]], "every row finished: the loop stops early"


def test_golden_token_ids(tiny_gpt):
    """Fixed outputs of a seeded model: a change here means decoding (or the model) changed."""
    model = tiny_gpt(seed=0)
    assert greedy(model, n=8)[5:].tolist() == GOLDEN_GREEDY
    sampled = generate(
        model, PROMPT, 8, temperature=1.0, generator=torch.Generator().manual_seed(0)
    )
    assert sampled[5:].tolist() == GOLDEN_SAMPLED
    top = generate(
        model,
        PROMPT,
        8,
        temperature=0.8,
        top_k=5,
        top_p=0.9,
        generator=torch.Generator().manual_seed(0),
    )
    assert top[5:].tolist() == GOLDEN_TOP
    assert beam_search(model, PROMPT, 8, beam_width=3)[5:].tolist() == GOLDEN_BEAM


# Recorded with torch 2.13 on CPU (one thread) from tiny_gpt(seed=0), embedding_scale
# "sqrt_d_model": untrained, the tied output layer favours the input token, so greedy repeats
# the prompt's last token (2).
GOLDEN_GREEDY = [2, 2, 2, 2, 2, 2, 2, 2]
GOLDEN_SAMPLED = [41, 8, 22, 0, 20, 1, 8, 26]
GOLDEN_TOP = [2, 11, 29, 29, 11, 11, 29, 26]
GOLDEN_BEAM = [2, 26, 26, 26, 26, 26, 26, 26]


def test_same_generator_same_tokens_and_mode_restored(tiny_gpt):
    model = tiny_gpt(dropout=0.1).train()  # dropout on: generate must switch it off
    a = generate(model, PROMPT, 10, generator=torch.Generator().manual_seed(5))
    b = generate(model, PROMPT, 10, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b) and model.training


def test_batch_and_shapes(tiny_gpt):
    model = tiny_gpt()
    batch = torch.stack([PROMPT, PROMPT.flip(0)])  # (2, 5)
    out = generate(model, batch, 4, temperature=0)
    assert out.shape == (2, 9) and torch.equal(out[0], greedy(model, n=4))
    assert beam_search(model, batch, 3, beam_width=2).shape == (2, 8)
    assert generate(model, PROMPT, 0).tolist() == PROMPT.tolist()
    assert generate(model, [3, 4], 2, temperature=0).shape == (4,)


def test_long_prompts_are_cropped_to_the_context(tiny_gpt):
    model = tiny_gpt()
    long = torch.arange(20) % 50  # longer than context_length = 8
    out = greedy(model, long, 3)
    assert out[:20].tolist() == long.tolist() and out.shape == (23,)
    torch.testing.assert_close(out[20:], greedy(model, long[-8:], 3)[8:])


def test_continuation_log_probs_match_the_model(tiny_gpt):
    model = tiny_gpt().eval()
    prompt, cont = PROMPT, torch.tensor([7, 8, 9])
    lp = continuation_log_probs(model, prompt, cont)
    full = torch.cat([prompt, cont])
    for i, token in enumerate(cont):
        logits = model(full[None, : len(prompt) + i])[0][0, -1]
        torch.testing.assert_close(lp[i], logits.log_softmax(-1)[token])
    # Beyond the context the scores use the cropped context, like generate.
    long = torch.arange(10)
    lp_long = continuation_log_probs(model, long, cont)
    torch.testing.assert_close(lp_long[0], model(long[None, -8:])[0][0, -1].log_softmax(-1)[7])
    assert continuation_log_probs(model, prompt, []).shape == (0,)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 1000),
    top_k=st.one_of(st.none(), st.integers(1, 30)),
    top_p=st.one_of(st.none(), st.floats(0.01, 1.0)),
    temperature=st.floats(0.1, 3.0),
)
def test_filtered_distribution_properties(seed, top_k, top_p, temperature):
    logits = torch.randn(2, 30, generator=torch.Generator().manual_seed(seed))  # (B, V)
    probs = next_token_probs(logits, temperature, top_k, top_p)
    torch.testing.assert_close(probs.sum(-1), torch.ones(2))
    kept = probs > 0
    assert kept.gather(-1, logits.argmax(-1, keepdim=True)).all(), "the top token is always kept"
    if top_k is not None:
        assert (kept.sum(-1) <= top_k).all()
    if top_p is not None:
        base = torch.softmax(filter_logits(logits, temperature, top_k), -1)
        mass = (base * kept).sum(-1)
        assert (mass >= top_p - 1e-5).all() or (kept == (base > 0)).all()
        # Minimal: dropping the least probable kept token falls below top_p.
        smallest = torch.where(kept, base, torch.ones_like(base)).min(-1).values
        assert (mass - smallest < top_p + 1e-6).all()


def test_nucleus_by_hand():
    logits = torch.tensor([0.5, 0.3, 0.15, 0.05]).log()
    assert (next_token_probs(logits, top_p=0.7) > 0).tolist() == [True, True, False, False]
    assert (next_token_probs(logits, top_p=0.5) > 0).tolist() == [True, False, False, False]
    assert (next_token_probs(logits, top_p=0.81) > 0).tolist() == [True, True, True, False]
    assert (next_token_probs(logits, top_k=3) > 0).tolist() == [True, True, True, False]


def test_temperature_sharpens_and_flattens():
    logits = torch.tensor([2.0, 1.0, 0.0])
    cold, warm = next_token_probs(logits, 0.5), next_token_probs(logits, 2.0)
    plain = next_token_probs(logits, 1.0)
    assert cold[0] > plain[0] > warm[0]
    torch.testing.assert_close(plain, torch.softmax(logits, -1))


def test_sampling_frequencies_follow_the_distribution():
    model = trap()
    prompt = torch.zeros(4000, 1, dtype=torch.long)
    out = generate(model, prompt, 1, generator=torch.Generator().manual_seed(0))
    share = (out[:, 1] == 1).float().mean().item()
    assert abs(share - 0.6) < 0.03


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(temperature=-1.0), ValueError, "temperature must be a finite number ≥ 0"),
        (dict(temperature=float("nan")), ValueError, "temperature"),
        (dict(temperature="hot"), TypeError, "temperature must be a number"),
        (dict(top_k=0), ValueError, "top_k must be at least 1"),
        (dict(top_k=2.5), TypeError, "top_k must be an int"),
        (dict(top_p=0.0), ValueError, r"top_p must be a finite number in \(0, 1\]"),
        (dict(top_p=1.5), ValueError, r"top_p must be a finite number in \(0, 1\]"),
        (dict(max_new_tokens=-1), ValueError, "max_new_tokens must be at least 0"),
    ],
)
def test_bad_knobs_raise_clearly(tiny_gpt, kwargs, error, match):
    model = tiny_gpt()
    kwargs.setdefault("max_new_tokens", 3)
    with pytest.raises(error, match=match):
        generate(model, PROMPT, **kwargs)


def test_bad_prompts_raise_clearly(tiny_gpt):
    model = tiny_gpt()
    with pytest.raises(ValueError, match="empty prompt"):
        generate(model, torch.tensor([], dtype=torch.long), 3)
    with pytest.raises(ValueError, match="empty prompt"):
        beam_search(model, [], 3)
    with pytest.raises(TypeError, match="integer token ids"):
        generate(model, torch.tensor([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match=r"shape \[T\] or \[B, T\]"):
        generate(model, torch.zeros(1, 2, 3, dtype=torch.long), 3)
    with pytest.raises(ValueError, match="vocab_size is 50"):
        generate(model, torch.tensor([1, 99]), 3)
    with pytest.raises(ValueError, match="beam_width must be at least 1"):
        beam_search(model, PROMPT, 3, beam_width=0)
    with pytest.raises(ValueError, match="greedy"):
        filter_logits(torch.zeros(3), temperature=0)


def test_generation_exercises():
    from transformer_course.exercises.generation import (
        check_beam_candidates,
        check_most_probable_strategy,
        check_sequence_log_prob,
        check_temperature_probability,
        check_top_p_count,
    )

    assert check_top_p_count(2) and not check_top_p_count(3)
    assert "`cumsum <= p`" in check_top_p_count(1).message  # drops the token that crosses p
    assert "cumsum" not in check_top_p_count(3).message
    assert not check_top_p_count(...).answered
    assert check_temperature_probability(torch.softmax(torch.tensor([4.0, 2.0, 0.0]), 0)[0])
    assert not check_temperature_probability(
        torch.softmax(torch.tensor([2.0, 1.0, 0.0]), 0)[0].item()
    )
    assert check_sequence_log_prob(math.log(0.01)) and not check_sequence_log_prob(0.01)
    assert check_beam_candidates(4 * 3771) and not check_beam_candidates(4)
    assert check_most_probable_strategy("beam search") and not check_most_probable_strategy(
        "greedy"
    )
    assert not check_most_probable_strategy(4).correct


def test_top_p_and_sampling_checkers_catch_their_slips_on_every_seed():
    """Written here independently of the declared slips: `cumsum <= p` in top-p, and top-k
    probabilities that are not renormalised. The sampling checker alternates huge and moderate
    logits, so a missing renormalisation cannot hide behind a peaked distribution."""
    from transformer_course.exercises.generation import check_sampling_probs, check_top_p_filter

    def cumsum_at_most_p(logits, top_p):
        probs, order = logits.softmax(-1).sort(-1, descending=True)
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(
            -1, order, probs.cumsum(-1) <= top_p
        )
        return logits.masked_fill(~keep, float("-inf"))

    def not_renormalised(logits, temperature, top_k):
        probs = (logits / temperature).softmax(-1)
        kth = probs.topk(min(top_k, probs.shape[-1]), -1).values[..., -1:]
        return torch.where(probs >= kth, probs, 0.0)

    for seed in range(0, 40, 4):
        top_p = check_top_p_filter(cumsum_at_most_p, seed=seed)
        assert not top_p.correct and "`cumsum <= p`" in top_p.message, (seed, top_p)
        sampling = check_sampling_probs(not_renormalised, seed=seed)
        assert not sampling.correct and "not renormalised" in sampling.message, (seed, sampling)
