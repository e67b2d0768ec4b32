"""The embedding-scale candidates of 11_training, each trained with 11's exact recipe.

    .venv/bin/python benchmarks/embedding_scale.py                 # every row (~30 s each on one core)
    .venv/bin/python benchmarks/embedding_scale.py none sqrt_d_model

Recipe: ``train.PRESETS["cpu-demo"]`` (700 steps of 32 × 16 tokens, AdamW, warm-up + cosine),
``train.model_preset("cpu-demo")`` (8 blocks, d_model 64, the seed's sinusoidal table), compact
vocabulary, seed 0, one thread. Run it under the notebooks' pins (``tools/nbtool.py`` sets them:
``machine.reproducible_cpu_environment``) to get the numbers 11 quotes. Per row: the token vectors'
RMS at init (after the factor) against the position table's, the step-0 training loss against
ln V, and the whole-split validation loss after 700 steps.

Rows (factor on the token vectors, initial std of the table):
- ``none``: GPT-2's plain lookup, std 0.02 (``embedding_scale="none"``);
- ``sqrt_d_model``: × √d_model, std 1/√(2·d_model) (the default);
- ``sqrt_std_0.02``: × √d_model, std 0.02 (the 2017 paper's factor on GPT-2's init);
- ``tensor2tensor``: × √d_model, std d_model^−½ (token RMS 1);
- ``lift_to_table``: × 1/(0.02·√2) ≈ 35.4, std 0.02 (token RMS 1/√2, output layer still at 0.02);
- ``learned``: learned positions (``positional="learned"``), GPT-2's lookup (11's run before the fix).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import torch

from transformer_course import data, embedding
from transformer_course.model import GPT
from transformer_course.train import PRESETS, evaluate, model_preset, train
from transformer_course.vocabulary import CompactVocabulary

#: name: (GPTConfig overrides, factor on the token vectors, the table's initial std) for the rows
#: the config cannot express; None = the config's own.
ROWS = {
    "none": ({"embedding_scale": "none"}, None, None),
    "sqrt_d_model": ({}, None, None),
    "sqrt_std_0.02": ({"embedding_scale": "none"}, 8.0, 0.02),
    "tensor2tensor": ({"embedding_scale": "none"}, 8.0, 64**-0.5),
    "lift_to_table": ({"embedding_scale": "none"}, 1 / (0.02 * math.sqrt(2)), 0.02),
    "learned": ({"positional": "learned", "embedding_scale": "none"}, None, None),
}


def build(overrides: dict, factor: float | None, std: float | None, vocab_size: int) -> GPT:
    model = GPT(model_preset("cpu-demo", vocab_size, **overrides))
    if factor is None:
        return model
    with torch.no_grad():  # the same draws as GPT's own init, rescaled to `std`
        model.token_embedding.weight.mul_(std / 0.02)

    def scaled_embed(idx: torch.Tensor, start_pos: int = 0) -> torch.Tensor:
        """GPT.embed with another factor on the token vectors (sinusoidal table)."""
        T = idx.shape[1]
        x = model.token_embedding(idx) * factor  # (B, T, C)
        return model.dropout(x + model.positional_table[start_pos : start_pos + T])  # (B, T, C)

    model.embed = scaled_embed  # type: ignore[method-assign]
    return model


def main(names: list[str]) -> None:
    torch.set_num_threads(1)
    ids = embedding.corpus_token_ids()
    vocab = CompactVocabulary.from_ids(ids)
    train_ids, val_ids = data.train_val_split(vocab.encode(ids))
    recipe = replace(PRESETS["cpu-demo"], progress=False, device="cpu")
    print(f"ln V = ln {vocab.size:,} = {math.log(vocab.size):.2f}")
    for name in names or list(ROWS):
        overrides, factor, std = ROWS[name]
        torch.manual_seed(0)
        model = build(overrides, factor, std, vocab.size)
        tokens = model.token_embedding.weight.detach() * (
            factor or model.config.embedding_multiplier
        )
        positions = (
            model.positional_table
            if model.config.positional == "sinusoidal"
            else model.position_embedding.weight.detach()
        )  # (T, C)
        at_init = (  # measured before training moves the (learned) tables
            f"token RMS {tokens.pow(2).mean().sqrt():.3f}, "
            f"position RMS {positions.pow(2).mean().sqrt():.3f}"
        )
        history = train(model, train_ids, val_ids, recipe)
        print(
            f"{name:>14}: {at_init}; step-0 loss {history.train_loss[0]:.2f}; "
            f"validation {evaluate(model, val_ids, recipe.context_length):.2f}",
            flush=True,
        )


if __name__ == "__main__":
    unknown = [name for name in sys.argv[1:] if name not in ROWS]
    if unknown:
        raise SystemExit(f"unknown rows {unknown}; choose from {list(ROWS)}")
    main(sys.argv[1:])
