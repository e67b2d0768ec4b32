"""Load Hugging Face GPT-2 and LLaMA checkpoints into the course's own :class:`~.model.GPT`
(13_modern_blocks): the real models are the course's classes with a bigger config.

A checkpoint folder holds ``config.json`` and one or more ``*.safetensors`` files. The loader
maps the config to a :class:`~.model.GPTConfig`, renames the tensors, and undoes two layout
differences:

* GPT-2 stores its linear layers as ``Conv1D`` ((in, out), the transpose of ``nn.Linear``) and
  packs Q, K and V into one ``c_attn`` matrix;
* HF LLaMA's RoPE rotates the two *halves* of each head (x_i with x_{i+D/2}); the course rotates
  interleaved pairs (x_2i, x_2i+1). Permuting the rows of ``q_proj`` and ``k_proj`` inside each
  head turns one into the other (the dot products q·k do not change under a shared permutation).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from . import _checks as check
from .i18n import _
from .model import GPT, GPTConfig

__all__ = ["download_checkpoint", "gpt_config_from_hf", "halves_to_pairs", "load_pretrained"]

_GPT2_ACTIVATIONS = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
}


def _read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not path.is_file():
        raise ValueError(
            _(
                "checkpoint folder {folder!r} has no config.json; pass a Hugging Face model folder"
            ).format(folder=str(folder))
        )
    return json.loads(path.read_text(encoding="utf-8"))


def _rope_base(hf: dict) -> float:
    # transformers ≥ 5 writes rope_parameters = {"rope_theta", "rope_type"}; older versions
    # write rope_theta and rope_scaling at the top level.
    params = hf.get("rope_parameters") or {}
    scaling = hf.get("rope_scaling") or params
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type != "default":
        raise ValueError(
            _(
                "rope scaling {rope_type!r} (e.g. LLaMA-3.1's 'llama3') is not supported: the "
                "course's RoPE uses one base for every frequency; use a checkpoint without "
                "rope_scaling"
            ).format(rope_type=rope_type)
        )
    return float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))


def _gpt2_fields(hf: dict) -> dict:
    activation = hf.get("activation_function", "gelu_new")
    if activation not in _GPT2_ACTIVATIONS:
        raise ValueError(
            _("GPT-2 activation_function {activation!r} is not one of {activations}").format(
                activation=activation, activations=sorted(_GPT2_ACTIVATIONS)
            )
        )
    return dict(
        vocab_size=hf["vocab_size"],
        context_length=hf.get("n_positions", 1024),
        d_model=hf["n_embd"],
        n_heads=hf["n_head"],
        n_layers=hf["n_layer"],
        positional="learned",
        norm="layernorm",
        feedforward=_GPT2_ACTIVATIONS[activation],
        d_ff=hf.get("n_inner") or 4 * hf["n_embd"],
        tie_weights=bool(hf.get("tie_word_embeddings", True)),
        bias=True,
        norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),
    )


def _llama_fields(hf: dict) -> dict:
    d_model, n_heads = hf["hidden_size"], hf["num_attention_heads"]
    if hf.get("head_dim", d_model // n_heads) != d_model // n_heads:
        raise ValueError(
            _("head_dim {head_dim} ≠ hidden_size // num_attention_heads: not expressible").format(
                head_dim=hf["head_dim"]
            )
        )
    attention_bias = bool(hf.get("attention_bias", False))
    if attention_bias != bool(hf.get("mlp_bias", False)):
        raise ValueError(
            _("attention_bias and mlp_bias differ; GPTConfig has one bias switch for both")
        )
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(
            _("LLaMA hidden_act {hidden_act!r} is not supported (only 'silu' = SwiGLU)").format(
                hidden_act=hf["hidden_act"]
            )
        )
    return dict(
        vocab_size=hf["vocab_size"],
        context_length=hf.get("max_position_embeddings", 2048),
        d_model=d_model,
        n_heads=n_heads,
        n_layers=hf["num_hidden_layers"],
        positional="rope",
        norm="rmsnorm",
        feedforward="swiglu",
        d_ff=hf["intermediate_size"],
        n_kv_heads=hf.get("num_key_value_heads") or n_heads,
        tie_weights=bool(hf.get("tie_word_embeddings", False)),
        bias=attention_bias,
        norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
        rope_base=_rope_base(hf),
    )


def gpt_config_from_hf(hf: dict, context_length: int | None = None) -> GPTConfig:
    """The :class:`~.model.GPTConfig` of a Hugging Face ``config.json`` (as a dict) for a GPT-2
    (``model_type`` "gpt2") or LLaMA ("llama") model (13_modern_blocks). Dropout is 0 (inference).

    ``context_length`` caps the model's window (GPT-2: ``n_positions``; LLaMA:
    ``max_position_embeddings``); GPT-2's position table is cropped to it.
    """
    if not isinstance(hf, dict):
        raise TypeError(
            _("hf must be the dict read from config.json, got {kind}").format(
                kind=type(hf).__name__
            )
        )
    families = {"gpt2": _gpt2_fields, "llama": _llama_fields}
    model_type = hf.get("model_type")
    check.choice("model_type", model_type, families)
    config = families[model_type](hf)
    window = config["context_length"]
    if context_length is not None:
        check.integer("context_length", context_length, 1, window)
        config["context_length"] = context_length
    # Their embeddings are plain lookups: no √d_model factor (GPTConfig.embedding_scale).
    return GPTConfig(dropout=0.0, embedding_scale="none", **config)


def _read_tensors(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file  # imported here: only the loader needs it

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ValueError(
            _(
                "checkpoint folder {folder!r} has no *.safetensors file (.bin checkpoints are not "
                "read: they are pickles; re-save with save_pretrained(safe_serialization=True))"
            ).format(folder=str(folder))
        )
    tensors: dict[str, torch.Tensor] = {}
    for path in files:  # a sharded checkpoint spreads its tensors over several files
        tensors.update(load_file(str(path)))
    return tensors


def _strip(tensors: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in tensors.items()}


def _gpt2_state(t: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    t = _strip(t, "transformer.")
    C, T = config.d_model, config.context_length
    state = {
        "token_embedding.weight": t["wte.weight"],
        "position_embedding.weight": t["wpe.weight"][:T],  # (n_positions, C) -> (T, C)
        "final_norm.weight": t["ln_f.weight"],
        "final_norm.bias": t["ln_f.bias"],
        "lm_head.weight": t.get("lm_head.weight", t["wte.weight"]),
    }
    for i in range(config.n_layers):
        h, b = f"h.{i}.", f"blocks.{i}."
        # Conv1D keeps (in, out); nn.Linear keeps (out, in).
        # (C, 3C) -> (3C, C) -> 3 × (C, C)
        q, k, v = t[h + "attn.c_attn.weight"].t().split(C, dim=0)
        qb, kb, vb = t[h + "attn.c_attn.bias"].split(C)  # (3C,) -> 3 × (C,)
        state |= {
            b + "norm1.weight": t[h + "ln_1.weight"],
            b + "norm1.bias": t[h + "ln_1.bias"],
            b + "attn.q_proj.weight": q,
            b + "attn.q_proj.bias": qb,
            b + "attn.k_proj.weight": k,
            b + "attn.k_proj.bias": kb,
            b + "attn.v_proj.weight": v,
            b + "attn.v_proj.bias": vb,
            b + "attn.out_proj.weight": t[h + "attn.c_proj.weight"].t(),  # (C, C)
            b + "attn.out_proj.bias": t[h + "attn.c_proj.bias"],
            b + "norm2.weight": t[h + "ln_2.weight"],
            b + "norm2.bias": t[h + "ln_2.bias"],
            b + "ffn.up.weight": t[h + "mlp.c_fc.weight"].t(),  # (C, d_ff) -> (d_ff, C)
            b + "ffn.up.bias": t[h + "mlp.c_fc.bias"],
            b + "ffn.down.weight": t[h + "mlp.c_proj.weight"].t(),  # (d_ff, C) -> (C, d_ff)
            b + "ffn.down.bias": t[h + "mlp.c_proj.bias"],
        }
    return state


def halves_to_pairs(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Reorder the output rows of a query/key projection from HF's RoPE layout to the course's
    (13_modern_blocks): within each head of size D, row ``i`` and row ``i + D/2`` (HF rotates the
    two halves together) become rows ``2i`` and ``2i + 1`` (the course rotates adjacent pairs).

    ``weight`` is [n_heads · D, ...] (a weight [H·D, C] or a bias [H·D]); same shape back.
    """
    D = weight.shape[0] // n_heads
    half = torch.arange(D // 2)  # (D/2,)
    order = torch.stack((half, half + D // 2), dim=1).flatten()  # (D,) 0, D/2, 1, D/2+1, …
    heads = weight.unflatten(0, (n_heads, D))  # (H·D, ...) -> (H, D, ...)
    return heads[:, order].flatten(0, 1)  # (H, D, ...) -> (H·D, ...)


def _llama_state(t: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    t = _strip(t, "model.")
    kv_heads = config.n_kv_heads or config.n_heads
    state = {
        "token_embedding.weight": t["embed_tokens.weight"],
        "final_norm.weight": t["norm.weight"],
        "lm_head.weight": t.get("lm_head.weight", t["embed_tokens.weight"]),
    }
    for i in range(config.n_layers):
        h, b = f"layers.{i}.", f"blocks.{i}."
        state |= {
            b + "norm1.weight": t[h + "input_layernorm.weight"],
            b + "norm2.weight": t[h + "post_attention_layernorm.weight"],
            b + "ffn.gate.weight": t[h + "mlp.gate_proj.weight"],
            b + "ffn.up.weight": t[h + "mlp.up_proj.weight"],
            b + "ffn.down.weight": t[h + "mlp.down_proj.weight"],
        }
        for ours, theirs, heads in (
            ("q", "q", config.n_heads),
            ("k", "k", kv_heads),
            ("v", "v", None),
            ("out", "o", None),
        ):
            for kind in ("weight", "bias") if config.bias else ("weight",):
                tensor = t[f"{h}self_attn.{theirs}_proj.{kind}"]
                # Only the rotated projections (Q and K) need RoPE's pairing changed.
                state[f"{b}attn.{ours}_proj.{kind}"] = (
                    tensor if heads is None else halves_to_pairs(tensor, heads)
                )
        if config.bias:
            for name in ("gate", "up", "down"):
                state[f"{b}ffn.{name}.bias"] = t[f"{h}mlp.{name}_proj.bias"]
    return state


def load_pretrained(
    folder: str | Path, context_length: int | None = None, dtype: torch.dtype = torch.float32
) -> GPT:
    """Build the course's :class:`~.model.GPT` from a Hugging Face GPT-2 or LLaMA checkpoint
    folder (``config.json`` + ``*.safetensors``), introduced in 13_modern_blocks.

    Returns the model in eval mode, its weights in ``dtype``. Its logits equal the
    ``transformers`` model's (tests/test_pretrained.py checks both families to 1e-5).
    ``context_length`` caps the window (see :func:`gpt_config_from_hf`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(
            _("folder must be a checkpoint directory, got {folder!r} (not a directory)").format(
                folder=str(folder)
            )
        )
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            _("dtype must be a floating-point torch.dtype, got {dtype!r}").format(dtype=dtype)
        )
    hf = _read_config(folder)
    config = gpt_config_from_hf(hf, context_length)
    tensors = _read_tensors(folder)
    build = _gpt2_state if hf["model_type"] == "gpt2" else _llama_state
    try:
        state = build(tensors, config)
    except KeyError as missing:
        raise ValueError(
            _(
                "checkpoint in {folder!r} lacks tensor {missing}; is it a {model_type} model?"
            ).format(folder=str(folder), missing=missing, model_type=hf["model_type"])
        ) from None
    model = GPT(config)
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=True)
    return model.to(dtype).eval()


def download_checkpoint(repo_id: str, root: str | Path = "data") -> Path:
    """Download a Hugging Face model's ``config.json`` and safetensors once into
    ``root/<repo_id>`` with a progress bar (13_modern_blocks; needs the network, e.g. Colab),
    and return the folder for :func:`load_pretrained`. A second call reuses the files.

    Example: ``load_pretrained(download_checkpoint("openai-community/gpt2"))``.
    """
    if not isinstance(repo_id, str) or repo_id.count("/") != 1:
        raise ValueError(
            _(
                "repo_id must look like 'owner/name' (e.g. 'openai-community/gpt2'), got "
                "{repo_id!r}"
            ).format(repo_id=repo_id)
        )
    from huggingface_hub import snapshot_download  # comes with `datasets`; only needed here

    target = Path(root) / repo_id
    snapshot_download(
        repo_id,
        local_dir=target,
        allow_patterns=["config.json", "*.safetensors", "*.safetensors.index.json"],
    )
    return target
