"""The library contract: every name API.md lists imports from where API.md says, with its signature.

API.md lives beside the repository, not in it, so this test holds its own copy of API.md's
table: each row is the module, and the call exactly as API.md writes it (without the return
annotation). The call is parsed as a Python ``def`` so the table reads like API.md and cannot
drift into a second notation. A signature satisfies the contract when its parameters start with
API.md's, in order, of the same kind and with equal defaults (a default where API.md gives
none is allowed); parameters after them are allowed when a caller who follows API.md never has
to pass them (they have defaults, or are ``*args``/``**kwargs``).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect

import pytest
from torch import nn

# (module, API.md's call). A dotted name is a method: "GPT.forward(...)" is GPT's forward.
CONTRACT = [
    ("transformer_course.data", "load_text(path=None)"),
    ("transformer_course.data", "train_val_split(ids, train_fraction=0.9)"),
    ("transformer_course.data", "get_batch(ids, batch_size, context_length, generator=None)"),
    ("transformer_course.tokenizer", 'get_encoding(name="cl100k_base")'),
    ("transformer_course.tokenizer", "train_bpe(text, num_merges)"),
    ("transformer_course.tokenizer", "BPE.tokenize(text)"),
    ("transformer_course.positional", "sinusoidal_encoding(context_length, d_model, base=10000.0)"),
    ("transformer_course.positional", "apply_rope(x, positions=None, base=10000.0)"),
    ("transformer_course.attention", "causal_mask(T, device=None)"),
    ("transformer_course.attention", "scaled_dot_product_attention(q, k, v, mask=None, scale=None)"),
    (
        "transformer_course.attention",
        "MultiHeadAttention(d_model, n_heads, n_kv_heads=None, dropout=0.0, bias=True)",
    ),
    (
        "transformer_course.attention",
        "MultiHeadAttention.forward(x, context=None, mask=None, causal=False, return_weights=False)",
    ),
    ("transformer_course.norm", "LayerNorm(d, eps=1e-5)"),
    ("transformer_course.norm", "RMSNorm(d, eps=1e-6)"),
    ("transformer_course.feedforward", 'FeedForward(d_model, d_ff=None, activation="relu", dropout=0.0)'),
    ("transformer_course.feedforward", "SwiGLU(d_model, d_ff)"),
    (
        "transformer_course.model",
        "GPTConfig(vocab_size, context_length=16, d_model=64, n_heads=4, n_layers=8, dropout=0.1)",
    ),
    ("transformer_course.model", "GPT(config)"),
    ("transformer_course.model", "GPT.forward(idx, targets=None)"),
    (
        "transformer_course.generate",
        "generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None)",
    ),
    ("transformer_course.generate", "beam_search(model, idx, max_new_tokens, beam_width=4)"),
    ("transformer_course.train", "make_optimizer(model, lr=1e-3)"),
    ("transformer_course.train", "train(model, train_ids, val_ids, config)"),
    ("transformer_course.train", "save_checkpoint(path, model, optimizer=None, **meta)"),
    ("transformer_course.train", "load_checkpoint(path, model=None)"),
]  # fmt: skip

# API.md: "plus switches for the modern variants (positional encoding, norm, feed-forward,
# n_kv_heads)" -- fields whose defaults API.md leaves free.
GPT_CONFIG_SWITCHES = ["positional", "norm", "feedforward", "n_kv_heads"]

# API.md's attributes, checked on an instance: (module, class, constructor arguments,
# attribute -> type).
ATTRIBUTES = [
    ("transformer_course.attention", "MultiHeadAttention", (8, 2),
     {"q_proj": nn.Linear, "k_proj": nn.Linear, "v_proj": nn.Linear, "out_proj": nn.Linear}),
    ("transformer_course.norm", "LayerNorm", (8,), {"weight": nn.Parameter, "bias": nn.Parameter}),
    ("transformer_course.norm", "RMSNorm", (8,), {"weight": nn.Parameter}),
]  # fmt: skip

_NO_DEFAULT = inspect.Parameter.empty


def _parse(call: str) -> tuple[str, list[tuple[str, inspect._ParameterKind, object]]]:
    """API.md's ``name(a, b=1, **meta)`` as the dotted name and (name, kind, default) triples."""
    name, _, arguments = call.partition("(")
    args = ast.parse(f"def f({arguments}: pass").body[0].args
    plain = args.posonlyargs + args.args
    defaults = [_NO_DEFAULT] * (len(plain) - len(args.defaults))
    defaults += [ast.literal_eval(d) for d in args.defaults]
    parameters = [
        (a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, d)
        for a, d in zip(plain, defaults, strict=True)
    ]
    if args.vararg:
        parameters.append((args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, _NO_DEFAULT))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        default = _NO_DEFAULT if d is None else ast.literal_eval(d)
        parameters.append((a.arg, inspect.Parameter.KEYWORD_ONLY, default))
    if args.kwarg:
        parameters.append((args.kwarg.arg, inspect.Parameter.VAR_KEYWORD, _NO_DEFAULT))
    return name, parameters


def _resolve(module_name: str, dotted: str):
    """The object API.md names: imported from its module, then attributes for a method."""
    head, *rest = dotted.split(".")
    module = importlib.import_module(module_name)
    obj = getattr(module, head)  # AttributeError here: the name is gone from its module
    for attribute in rest:
        obj = getattr(obj, attribute)
    return obj


def _signature(obj) -> list[inspect.Parameter]:
    parameters = list(inspect.signature(obj).parameters.values())
    if inspect.isfunction(obj) and parameters and parameters[0].name == "self":
        parameters = parameters[1:]  # a method looked up on its class
    return parameters


@pytest.mark.parametrize(
    ("module", "call"), CONTRACT, ids=[c.partition("(")[0] for _, c in CONTRACT]
)
def test_name_imports_with_api_md_signature(module, call):
    name, expected = _parse(call)
    actual = _signature(_resolve(module, name))
    # A **kwargs may stand anywhere after the named parameters: compare it apart.
    wants_kwargs = expected and expected[-1][1] is inspect.Parameter.VAR_KEYWORD
    if wants_kwargs:
        expected = expected[:-1]
        assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in actual), (
            f"{module}.{name} lost its **kwargs"
        )
    # Where API.md gives no default the library may add one: every call API.md allows still works.
    got = [
        (p.name, p.kind, _NO_DEFAULT if want is _NO_DEFAULT else p.default)
        for p, (_, _, want) in zip(actual, expected, strict=False)
    ]
    assert got == expected, f"{module}.{name}{inspect.signature(_resolve(module, name))}"
    for extra in actual[len(expected) :]:
        optional = extra.default is not _NO_DEFAULT or extra.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        )
        assert optional, f"{module}.{name}: extra parameter {extra.name!r} has no default"


def test_gpt_config_is_a_dataclass_with_api_md_fields():
    from transformer_course.model import GPTConfig

    assert dataclasses.is_dataclass(GPTConfig)
    fields = dataclasses.fields(GPTConfig)
    _, expected = _parse(next(call for _, call in CONTRACT if call.startswith("GPTConfig(")))
    got = [(f.name, f.default) for f in fields[: len(expected)]]
    want = [(n, dataclasses.MISSING if d is _NO_DEFAULT else d) for n, _, d in expected]
    assert got == want
    names = {f.name for f in fields}
    missing = [s for s in GPT_CONFIG_SWITCHES if s not in names]
    assert not missing, f"GPTConfig lost the switches {missing}"


@pytest.mark.parametrize(
    ("module", "name", "arguments", "attributes"), ATTRIBUTES, ids=[a[1] for a in ATTRIBUTES]
)
def test_instance_has_api_md_attributes(module, name, arguments, attributes):
    instance = _resolve(module, name)(*arguments)
    for attribute, kind in attributes.items():
        assert isinstance(getattr(instance, attribute, None), kind), f"{name}.{attribute}"


def test_bpe_has_merges_and_tokenize():
    from transformer_course.tokenizer import BPE, train_bpe

    bpe = train_bpe("low lower lowest", 3)
    assert isinstance(bpe, BPE)
    assert isinstance(bpe.merges, list) and all(
        isinstance(p, tuple) and len(p) == 2 for p in bpe.merges
    )
    tokens = bpe.tokenize("lowest")
    assert isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)
