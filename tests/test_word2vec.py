"""word2vec (02b_word2vec): pairs, windows, subsampling, the loss and training, against
references written independently of the library (plain loops and the formulas)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course import word2vec as w2v
from transformer_course.exercises import word2vec as ex


def test_words_lowercases_and_keeps_inner_apostrophes():
    assert w2v.words("The customer's PRICE, 42 times!") == ["the", "customer's", "price", "times"]
    with pytest.raises(TypeError, match="text"):
        w2v.words(None)  # type: ignore[arg-type]


def test_vocabulary_orders_by_count_and_drops_rare_words():
    tokens = ["b", "a", "a", "c", "c", "c", "d"]
    vocab = w2v.build_vocabulary(tokens, min_count=2)
    assert vocab.words == ["c", "a"]
    assert vocab.counts.tolist() == [3, 2]
    assert vocab.encode(tokens).tolist() == [1, 1, 0, 0, 0]
    assert "b" not in vocab
    with pytest.raises(KeyError, match="min_count"):
        vocab.id("b")
    with pytest.raises(ValueError, match="min_count"):
        w2v.build_vocabulary(tokens, min_count=0)
    with pytest.raises(ValueError, match="min_count"):
        w2v.build_vocabulary(tokens, min_count=10)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=30), st.integers(1, 6))
def test_skipgram_pairs_equal_a_plain_double_loop(ids, window):
    centres, contexts = w2v.skipgram_pairs(torch.tensor(ids), window)
    got = sorted(zip(centres.tolist(), contexts.tolist()))
    expected = sorted(
        (ids[i], ids[j])
        for i in range(len(ids))
        for j in range(len(ids))
        if 0 < abs(i - j) <= window
    )
    assert got == expected


def test_shrunk_windows_pair_only_within_the_drawn_reach():
    ids = torch.arange(200)  # every id is its own position, so offsets are visible
    centres, contexts = w2v.skipgram_pairs(ids, 4, generator=torch.Generator().manual_seed(0))
    offsets = (contexts - centres).abs()
    assert offsets.min() >= 1 and offsets.max() <= 4
    # Close neighbours are paired more often than far ones.
    counts = torch.bincount(offsets, minlength=5)[1:]
    assert torch.all(counts[:-1] > counts[1:])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=2, max_size=25), st.integers(1, 4))
def test_cbow_windows_hold_exactly_the_neighbours(ids, window):
    contexts, mask, centres = w2v.cbow_windows(torch.tensor(ids), window)
    assert contexts.shape == mask.shape == (len(ids), 2 * window)
    for row, i in enumerate(range(len(ids))):
        expected = sorted(ids[j] for j in range(len(ids)) if 0 < abs(i - j) <= window)
        assert sorted(contexts[row][mask[row]].tolist()) == expected
        assert centres[row] == ids[i]


def test_keep_probabilities_follow_the_word2vec_formula():
    counts = torch.tensor([5000, 500, 5, 1])
    keep = w2v.keep_probabilities(counts, threshold=1e-3)
    total = counts.sum().item()
    for c, k in zip(counts.tolist(), keep.tolist()):
        f = c / total
        assert k == pytest.approx(min(1.0, (math.sqrt(f / 1e-3) + 1) * 1e-3 / f), rel=1e-6)
    assert keep[-1] == 1.0 and keep[0] < keep[1]
    with pytest.raises(ValueError, match="threshold"):
        w2v.keep_probabilities(counts, threshold=0)


def test_subsample_drops_frequent_words_more_often():
    ids = torch.tensor([0] * 5000 + [1] * 5000)
    kept = w2v.subsample(ids, torch.tensor([0.1, 0.9]), torch.Generator().manual_seed(0))
    share = torch.bincount(kept, minlength=2) / 5000
    assert share[0] == pytest.approx(0.1, abs=0.02) and share[1] == pytest.approx(0.9, abs=0.02)


def test_noise_distribution_is_counts_to_the_three_quarters():
    counts = torch.tensor([16, 1, 81])
    noise = w2v.noise_distribution(counts)
    expected = torch.tensor([8.0, 1.0, 27.0]) / 36.0
    torch.testing.assert_close(noise, expected)


def _by_hand_loss(h, u_pos, u_neg):
    sig = lambda z: 1 / (1 + torch.exp(-z))  # noqa: E731 - the formula as written
    pos = torch.log(sig((u_pos * h).sum(-1)))
    neg = torch.log(sig(-torch.einsum("bkd,bd->bk", u_neg, h))).sum(-1)
    return -(pos + neg).mean()


@pytest.mark.parametrize("mode", w2v.MODES)
def test_loss_equals_the_negative_sampling_formula(mode):
    gen = torch.Generator().manual_seed(1)
    model = w2v.Word2Vec(20, 6, mode=mode, generator=gen)
    with torch.no_grad():
        model.out_embed.weight.normal_(generator=gen)
    targets = torch.tensor([3, 7, 11])
    negatives = torch.randint(20, (3, 4), generator=gen)
    emb_in, emb_out = model.in_embed.weight, model.out_embed.weight
    if mode == "skipgram":
        inputs, mask = torch.tensor([1, 2, 19]), None
        h = emb_in[inputs]
    else:
        inputs = torch.randint(20, (3, 4), generator=gen)
        mask = torch.tensor([[1, 1, 1, 1], [0, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.bool)
        h = torch.stack([emb_in[inputs[b][mask[b]]].mean(0) for b in range(3)])
    expected = _by_hand_loss(h, emb_out[targets], emb_out[negatives])
    torch.testing.assert_close(model(inputs, targets, negatives, mask), expected)


def test_cbow_without_mask_and_bad_arguments_are_rejected():
    model = w2v.Word2Vec(5, 3, mode="cbow")
    with pytest.raises(ValueError, match="mask"):
        model(
            torch.zeros(1, 2, dtype=torch.long),
            torch.zeros(1, dtype=torch.long),
            torch.zeros(1, 1, dtype=torch.long),
        )
    with pytest.raises(ValueError, match="mode"):
        w2v.Word2Vec(5, 3, mode="glove")
    with pytest.raises(ValueError, match="dim"):
        w2v.Word2Vec(5, 0)
    with pytest.raises(ValueError, match="window"):
        w2v.skipgram_pairs(torch.arange(5), 0)
    with pytest.raises(ValueError, match="epochs"):
        w2v.Word2VecConfig(epochs=0)


def _two_topic_corpus(seed: int = 0, sentences: int = 600) -> list[str]:
    """Words of topic A only meet words of topic A, and likewise for B."""
    gen = torch.Generator().manual_seed(seed)
    topics = [["apple", "pear", "plum", "fig"], ["car", "bus", "train", "tram"]]
    out: list[str] = []
    for _ in range(sentences):
        topic = topics[int(torch.randint(2, (1,), generator=gen))]
        out += [topic[int(i)] for i in torch.randint(4, (6,), generator=gen)]
        out.append("stop")
    return out


@pytest.mark.parametrize("mode", w2v.MODES)
def test_training_separates_topics_deterministically_and_restores_threads(mode):
    tokens = _two_topic_corpus()
    config = w2v.Word2VecConfig(
        mode=mode, dim=16, window=2, epochs=4, batch_size=128, subsample=None, lr=0.02
    )
    threads = torch.get_num_threads()
    result = w2v.train_word2vec(tokens, config)
    assert torch.get_num_threads() == threads
    assert result.losses[-1] < result.losses[0]
    neighbours = [w for w, _ in w2v.nearest(result.vectors, result.vocab, "apple", k=3)]
    assert set(neighbours) == {"pear", "plum", "fig"}
    again = w2v.train_word2vec(tokens, config)
    assert torch.equal(result.vectors, again.vectors)


def test_nearest_matches_cosine_similarity_and_excludes_the_word():
    vocab = w2v.build_vocabulary(list("abcde"), min_count=1)
    vectors = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    got = w2v.nearest(vectors, vocab, "a", k=4)
    sims = F.cosine_similarity(vectors[0][None], vectors, dim=-1)
    expected = sorted(((vocab.words[i], float(sims[i])) for i in range(1, 5)), key=lambda p: -p[1])
    assert [w for w, _ in got] == [w for w, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-6)
    torch.testing.assert_close(w2v.cosine_matrix(vectors)[0], sims)
    with pytest.raises(ValueError, match="k must"):
        w2v.nearest(vectors, vocab, "a", k=5)


def test_pca_2d_matches_the_covariance_eigenvectors():
    X = torch.randn(30, 6, generator=torch.Generator().manual_seed(0)) * torch.tensor(
        [5.0, 3.0, 1, 1, 1, 1]
    )
    coords = w2v.pca_2d(X)
    centred = (X - X.mean(0)).double()
    _, vecs = torch.linalg.eigh(centred.T @ centred)
    torch.testing.assert_close(
        coords.abs(), (centred @ vecs[:, [-1, -2]]).abs().float(), atol=1e-4, rtol=1e-4
    )
    assert coords[:, 0].var() >= coords[:, 1].var()
    # The sign is fixed: the largest coordinate of each axis is positive.
    assert torch.all(coords.gather(0, coords.abs().argmax(0, keepdim=True)) > 0)
    with pytest.raises(ValueError, match="vectors"):
        w2v.pca_2d(torch.randn(1, 3))


def test_exercise_checks():
    vocab = w2v.build_vocabulary(list("abc"), min_count=1)
    vectors = torch.tensor([[1.0, 0.0], [0.9, 0.1], [-1.0, 0.0]])
    assert ex.check_nearest("b", vectors, vocab, "a").correct
    assert not ex.check_nearest("a", vectors, vocab, "a").correct
    assert not ex.check_nearest("c", vectors, vocab, "a").correct
    assert not ex.check_nearest(..., vectors, vocab, "a").answered
    assert ex.check_nearest(..., vectors, vocab, "a", hint=True).is_hint


def test_build_exercises_catch_the_usual_slips():
    """The build checkers of 02b: pairs in any order pass; a window one short, or
    log(sigmoid(x)) where the scores are large, do not."""

    def pairs_in_another_order(ids, window):
        centres, contexts = w2v.skipgram_pairs(ids, window)
        order = torch.randperm(centres.numel(), generator=torch.Generator().manual_seed(0))
        return centres[order].tolist(), contexts[order].tolist()  # lists are fine too

    assert ex.check_skipgram_pairs(pairs_in_another_order, seed=0)

    def one_short(ids, window):
        return (
            w2v.skipgram_pairs(ids, max(window - 1, 1))
            if window > 1
            else w2v.skipgram_pairs(ids[:0], 1)
        )

    short = ex.check_skipgram_pairs(one_short, seed=0)
    assert not short and "shape" in short.message

    def naive(v_c, u_o, u_k):
        positive = (u_o * v_c).sum(-1)
        negative = (u_k * v_c[:, None]).sum(-1)
        return -(
            torch.log(torch.sigmoid(positive)) + torch.log(torch.sigmoid(-negative)).sum(-1)
        ).mean()

    verdicts = [ex.check_negative_sampling_loss(naive, seed=seed) for seed in range(6)]
    assert any(not v and "inf" in v.message for v in verdicts), verdicts
    assert ex.check_negative_sampling_loss(
        lambda v_c, u_o, u_k: (
            -(
                F.logsigmoid((u_o * v_c).sum(-1))
                + F.logsigmoid(-(u_k * v_c[:, None]).sum(-1)).sum(-1)
            ).mean()
        ),
        seed=0,
    )
