"""The KV cache: cached decoding gives the tokens and logits of uncached decoding, for every
positional scheme, GQA/MQA, beam search, past the context window and in the encoder-decoder."""

from __future__ import annotations

import pytest
import torch

from transformer_course.attention import MultiHeadAttention
from transformer_course.encoder_decoder import EncoderDecoder, EncoderDecoderConfig
from transformer_course.generate import _NextLogits, beam_search, generate
from transformer_course.kv_cache import KVCache, cache_bytes, new_cache
from transformer_course.model import GPT

CONFIGS = {
    "sinusoidal": dict(),
    "learned": dict(positional="learned"),
    "llama": dict(
        positional="rope", norm="rmsnorm", feedforward="swiglu", n_kv_heads=2, bias=False
    ),
    "mqa-post-norm": dict(positional="rope", n_kv_heads=1, norm_placement="post"),
}


def model_for(tiny_gpt, name: str, seed: int = 0, context_length: int = 12) -> GPT:
    # dropout must be off while decoding: generate switches to eval mode
    model = tiny_gpt(
        seed, vocab_size=40, context_length=context_length, d_model=32, dropout=0.1, **CONFIGS[name]
    )
    with torch.no_grad():  # larger weights than the init's 0.02, so positions and heads matter
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    return model


@pytest.mark.parametrize("name", CONFIGS)
def test_token_by_token_with_cache_equals_one_full_pass(tiny_gpt, name):
    model = model_for(tiny_gpt, name).eval()
    idx = torch.randint(0, 40, (3, 12), generator=torch.Generator().manual_seed(1))  # (B, T)
    with torch.no_grad():
        full, _ = model(idx)  # (B, T, V)
        cache = model.new_cache()
        pieces = [model(idx[:, :5], cache=cache, start_pos=0)[0]]  # a 5-token prompt at once
        for t in range(5, 12):
            pieces.append(model(idx[:, t : t + 1], cache=cache, start_pos=t)[0])  # (B, 1, V)
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=0)
    assert all(layer.length == 12 for layer in cache)


@pytest.mark.parametrize("name", CONFIGS)
def test_gqa_cache_holds_only_the_kv_heads(tiny_gpt, name):
    model = model_for(tiny_gpt, name).eval()
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.zeros(2, 7, dtype=torch.long), cache=cache)
    kv_heads = model.config.n_kv_heads or model.config.n_heads
    assert cache[0].keys.shape == (2, kv_heads, 7, model.config.head_size)
    assert cache[0].nbytes == cache_bytes(1, kv_heads, model.config.head_size, 7, 4) * 2


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("prompt_length", [3, 12])  # 12 = the window is already full
def test_step_logits_agree_within_and_past_the_context_window(tiny_gpt, name, prompt_length):
    model = model_for(tiny_gpt, name).eval()
    idx = torch.randint(0, 40, (2, 20), generator=torch.Generator().manual_seed(2))  # (B, 20)
    cached, plain = _NextLogits(model, use_cache=True), _NextLogits(model, use_cache=False)
    with torch.no_grad():
        for t in range(prompt_length, 21):  # past 12 tokens the cache is dropped, honestly
            torch.testing.assert_close(cached(idx[:, :t]), plain(idx[:, :t]), atol=1e-5, rtol=0)
            if t <= 12:
                assert cached.cache is not None and cached.cache[0].length == t
    assert cached.cache is None  # fell back to recomputing the cropped window


@pytest.mark.parametrize("name", CONFIGS)
def test_generate_greedy_sampled_and_beam_same_tokens_with_and_without_cache(tiny_gpt, name):
    model = model_for(tiny_gpt, name)
    prompt = torch.randint(0, 40, (2, 4), generator=torch.Generator().manual_seed(3))  # (B, 4)
    greedy = generate(model, prompt, 16, temperature=0)  # runs past the 12-token window
    torch.testing.assert_close(greedy, generate(model, prompt, 16, temperature=0, use_cache=False))
    for knobs in (dict(), dict(top_k=5, temperature=0.8), dict(top_p=0.9)):
        sampled = generate(model, prompt, 16, generator=torch.Generator().manual_seed(4), **knobs)
        uncached = generate(
            model, prompt, 16, generator=torch.Generator().manual_seed(4), use_cache=False, **knobs
        )
        torch.testing.assert_close(sampled, uncached)
    beams = beam_search(model, prompt, 10, beam_width=3)
    torch.testing.assert_close(beams, beam_search(model, prompt, 10, beam_width=3, use_cache=False))
    assert model.training  # the mode is restored


def test_cache_is_really_used_one_token_per_step(tiny_gpt):
    model = model_for(tiny_gpt, "llama").eval()
    seen = []
    model.blocks[0].attn.k_proj.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[1]))
    generate(model, [1, 2, 3], 5, temperature=0)
    assert seen == [3, 1, 1, 1, 1]  # the prompt once, then only the new token
    seen.clear()
    generate(model, [1, 2, 3], 5, temperature=0, use_cache=False)
    assert seen == [3, 4, 5, 6, 7]


def test_models_without_a_cache_still_generate(tiny_gpt):
    class NoCache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model_for(tiny_gpt, "sinusoidal")
            self.config = self.inner.config

        def forward(self, idx):
            return self.inner(idx)

    model = NoCache()
    out = generate(model, [1, 2], 4, temperature=0)
    torch.testing.assert_close(out, generate(model.inner, [1, 2], 4, temperature=0))


def test_cache_misuse_has_clear_errors(tiny_gpt):
    model = model_for(tiny_gpt, "sinusoidal").eval()
    cache = model.new_cache()
    with pytest.raises(ValueError, match="start_pos"):
        model(torch.zeros(1, 2, dtype=torch.long), cache=cache, start_pos=3)
    with pytest.raises(ValueError, match="start_pos > 0"):
        model(torch.zeros(1, 2, dtype=torch.long), start_pos=2)
    with pytest.raises(TypeError, match="new_cache"):
        model(torch.zeros(1, 2, dtype=torch.long), cache=[KVCache()])
    model(torch.zeros(1, 10, dtype=torch.long), cache=cache, start_pos=0)
    with pytest.raises(ValueError, match="context_length"):
        model(torch.zeros(1, 3, dtype=torch.long), cache=cache, start_pos=10)
    with pytest.raises(TypeError, match="use_cache"):
        generate(model, [1], 2, use_cache="yes")
    with pytest.raises(ValueError, match="start a new cache"):  # the cache holds batch 1
        cache[0].append(torch.zeros(2, 4, 1, 8), torch.zeros(2, 4, 1, 8))
    with pytest.raises(ValueError, match="same shape|both have shape"):
        KVCache().append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="n_layers"):
        new_cache(-1)


def test_cache_bytes_formula():
    # LLaMA-2-7B: 32 layers, 32 K/V heads of 128, 4,096 tokens, float16 = 2 GiB.
    assert cache_bytes(32, 32, 128, 4096, 2) == 2 * 1024**3
    assert cache_bytes(32, 8, 128, 4096, 2) == 512 * 1024**2  # LLaMA-3-8B's GQA: 4× less


def test_attention_cache_rope_positions_are_absolute():
    torch.manual_seed(0)
    attn = MultiHeadAttention(16, 4, n_kv_heads=2, rope=True).eval()
    x = torch.randn(2, 6, 16)  # (B, T, C)
    full = attn(x, causal=True)  # (B, T, C)
    cache = KVCache()
    steps = [attn(x[:, :2], causal=True, cache=cache)]
    steps += [attn(x[:, t : t + 1], causal=True, cache=cache) for t in range(2, 6)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-6, rtol=0)


def small_seq2seq(seed: int = 0) -> EncoderDecoder:
    torch.manual_seed(seed)
    model = EncoderDecoder(EncoderDecoderConfig(vocab_size=20, max_len=10, n_heads=4))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    return model.eval()


def test_encoder_decoder_cached_decoding_matches():
    model = small_seq2seq()
    src = torch.randint(3, 20, (4, 7), generator=torch.Generator().manual_seed(5))  # (B, S)
    src[0, 5:] = 0  # padding in one row
    memory = model.encode(src)  # (B, S, C)
    tgt = torch.randint(3, 20, (4, 9), generator=torch.Generator().manual_seed(6))  # (B, T)
    with torch.no_grad():
        full = model.decode(tgt, memory, src)  # (B, T, V)
        cache = model.new_cache()
        pieces = [model.decode(tgt[:, :1], memory, src, cache=cache, start_pos=0)]
        for t in range(1, 9):
            pieces.append(model.decode(tgt[:, t : t + 1], memory, src, cache=cache, start_pos=t))
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=0)
    torch.testing.assert_close(model.greedy_decode(src), model.greedy_decode(src, use_cache=False))
    tokens, scores = model.beam_decode(src, beam_width=3)
    plain_tokens, plain_scores = model.beam_decode(src, beam_width=3, use_cache=False)
    torch.testing.assert_close(tokens, plain_tokens)
    torch.testing.assert_close(scores, plain_scores, atol=1e-5, rtol=0)


def test_encoder_decoder_caches_only_the_self_attention():
    model = small_seq2seq()
    src = torch.randint(3, 20, (2, 6), generator=torch.Generator().manual_seed(7))  # (B, S)
    calls = []
    model.decoder[0].cross_attn.k_proj.register_forward_hook(lambda m, i, o: calls.append(1))
    out = model.greedy_decode(src, max_new_tokens=6)  # (B, 1 + n)
    assert len(calls) == out.shape[1] - 1  # the memory's keys are recomputed at every step
    cache = model.new_cache()
    assert len(cache) == len(model.decoder) and all(isinstance(c, KVCache) for c in cache)
    attn = model.decoder[0].cross_attn
    with pytest.raises(ValueError, match="self-attention only"):
        attn(torch.zeros(1, 2, 64), context=torch.zeros(1, 3, 64), cache=KVCache())


def test_crop_and_decode_step_times(tiny_gpt):
    from transformer_course.kv_cache import decode_step_times

    model = model_for(tiny_gpt, "llama", context_length=32)
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.zeros(1, 6, dtype=torch.long), cache=cache)
    cache[0].crop(4)
    assert cache[0].length == 4 and cache[0].values.shape[2] == 4
    with pytest.raises(ValueError, match="length"):
        cache[0].crop(5)
    times = decode_step_times(model, [0, 8, 31], repeats=2)
    assert set(times) == {"cached", "uncached"} and all(len(v) == 3 for v in times.values())
    assert all(t > 0 for v in times.values() for t in v) and model.training
    with pytest.raises(ValueError, match="positions"):
        decode_step_times(model, [32])
    with pytest.raises(TypeError, match="new_cache"):
        decode_step_times(torch.nn.Linear(2, 2), [1])


def test_encoder_decoder_cache_misuse_has_clear_errors():
    model = small_seq2seq()
    src = torch.randint(3, 20, (1, 5), generator=torch.Generator().manual_seed(8))  # (1, S)
    memory = model.encode(src)  # (1, S, C)
    tgt = torch.tensor([[1, 5]])  # (1, 2)
    with pytest.raises(ValueError, match="start_pos"):
        model.decode(tgt, memory, src, cache=model.new_cache(), start_pos=1)
    with pytest.raises(ValueError, match="start_pos > 0"):
        model.decode(tgt, memory, src, start_pos=1)
    cache = model.new_cache()
    model.decode(torch.ones(1, 9, dtype=torch.long), memory, src, cache=cache)
    with pytest.raises(ValueError, match="max_len"):
        model.decode(tgt, memory, src, cache=cache, start_pos=9)
