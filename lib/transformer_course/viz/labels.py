"""The words the notebooks' pictures draw, in the learner's language (introduced in 01_tokenization).

A notebook cell that draws a figure names its title, axis labels and legend entries with
``viz.label``: ``ax.set_xlabel(viz.label("validation loss"))`` writes "validation loss" on the
English picture and "验证损失" on the Chinese one, from the same code cell (the Chinese notebooks
run the English code; only the set-up call's language differs). The key is the English text itself,
a ``str.format`` template whose named fields are filled the same way in both languages:
``viz.label("head {h}: the first digit", h=3)``.

Every label is declared once, below, with ``N_()``, so ``tools/i18n.py lib-update`` puts it in the
library catalog; ``label`` (one function with ``printed.label``, over one registry,
``i18n.DECLARED``) refuses a text that is not declared, so a label added to a notebook
cannot skip the catalog. Code identifiers, numbers and token strings are not labels: they stay as
they are and need no entry.
"""

from __future__ import annotations

from ..i18n import N_, declare, declared

__all__ = ["PLOT_LABELS", "label"]

#: Every title, axis label and legend entry a notebook cell draws, by the notebook that first uses it.
PLOT_LABELS = declare(
    {
        # 01_tokenization
        N_("symbol (in order of first appearance)"),
        N_("initial symbol counts (seed sentence)"),
        N_("count"),
        N_("tokens in the seed sentence"),
        N_("number of merges"),
        N_("tokens"),
        N_("BPE merges shorten the sequence"),
        N_("vocabulary size (distinct tokens used)"),
        N_("sequence length (tokens)"),
        N_("vocabulary size vs tokens needed for the whole book"),
        N_("token (cl100k_base piece, with its leading space)"),
        N_("most frequent tokens"),
        # 02_embeddings
        N_("dimension"),
        N_("token (window 0)"),
        N_("embeddings of window 0: one row per token"),
        N_("the table W (10 × 6)"),
        N_("W[[3, 7, 3, 1]] (4 × 6)"),
        # 02b_word2vec
        N_("skip-gram"),
        N_("CBOW"),
        N_("epoch"),
        N_("negative-sampling loss"),
        N_("Training loss (lower is better; the two losses are not on the same task)"),
        N_("principal component {n} ({share:.0%} of the variance)"),
        N_("skip-gram vectors of the sales textbook, projected on 2 principal components"),
        # 03_positional_encoding
        N_("position"),
        N_("sinusoidal positional encoding, 16 × 64"),
        N_("wavelength λ_i"),
        N_("pair index i"),
        N_("positions"),
        N_("wavelength per column pair (log scale)"),
        N_("context length {context_length}"),
        N_("dim {d} (λ = {wavelength:.1f})"),
        N_("one column = one wave of fixed length"),
        N_(
            "PE · PEᵀ: constant along every diagonal\n(colours span {low:.1f} … {high:.1f}, not 0 … 32)"
        ),
        N_("offset k"),
        N_("dot product"),
        N_("similarity of two positions against their offset (d_model = 64)"),
        N_("top-left corner of M_5: 2 × 2 rotation blocks"),
        N_("digit / pair (fast → slow)"),
        N_("binary digits of pos"),
        N_("sine columns of PE"),
        N_("token embeddings (window 0)"),
        N_("positional encoding"),
        N_("input = sum"),
        # 04_qkv
        N_("the same {T} tokens, three projections"),
        N_("column (0..63)"),
        N_("token"),
        N_("Q (window 0)"),
        N_("K (window 0)"),
        N_("V (window 0)"),
        N_("key (digit)"),
        N_("query (digit)"),
        N_("two heads of the trained model (rows sum to 1)"),
        N_("head {previous_head}: the previous digit"),
        N_("head {first_head}: the first digit"),
        # 05_scale
        N_("QKᵀ, window 0, head 0 (unscaled)"),
        N_("key"),
        N_("query"),
        N_("measured Var(q·k)"),
        N_("d_k (theory)"),
        N_("measured Var(q·k/√d_k)"),
        N_("variance"),
        N_("the spread of the scores grows like d_k"),
        N_("q·k (unscaled)"),
        N_("score"),
        N_("d_k = 256: scores before and after scaling"),
        N_("mean gradient norm"),
        N_("gradient through softmax"),
        # 06_mask
        N_("scores QKᵀ/√d_k, head 0"),
        N_("after the causal mask"),
        N_("attention weights, head 0, masked"),
        N_("window 1: causal & padding"),
        N_("True: may attend"),
        N_("False: hidden"),
        # 07_softmax
        N_("masked scores, head 0"),
        N_("softmax weights, head 0"),
        # 08_v_attention
        N_("[{T}, {C}] in, [{T}, {C}] out"),
        N_("feature"),
        N_("input x (window 0)"),
        N_("concatenated heads"),
        N_("after W_O"),
        N_("window 0, causal, scaled"),
        N_("window 1 · head 2"),
        N_("window 1 · head 2, no mask, no scale"),
        # 09_transformer_block
        N_("without residual"),
        N_("with residual"),
        N_("layer (1 = nearest the input)"),
        N_("gradient reaching each of 16 stacked feed-forward layers"),
        N_("mean before"),
        N_("std before"),
        N_("mean after"),
        N_("std after"),
        N_("position t in window 0"),
        N_("each token's 64 numbers, before and after LayerNorm"),
        N_("value after ReLU"),
        N_("hidden unit (256)"),
        N_("position t"),
        N_("window 0: the 256 hidden units after ReLU (black = 0)"),
        N_("window 0: entries dropped with p = {p}"),
        N_("dropped (0)"),
        N_("kept (× 1/0.9)"),
        N_("step"),
        N_("training loss"),
        N_("12 stacked blocks, copy-the-previous-token task"),
        N_("parameters (millions, linear axis)"),
        N_("GPT at the blog code's size, untied output layer"),
        # 10_logits_and_loss
        N_("position 15 of window 0"),
        N_("p × V for each of the 100,070 tokens (1 = the uniform guess 1/V)"),
        N_("the untrained model's next-token distribution"),
        N_("uniform: p × V = 1"),
        N_("−log p(true next), window 0"),
        N_("loss (nats; the axis is zoomed in)"),
        N_("cross-entropy at every position, untrained model"),
        N_("logit standard deviation σ"),
        N_("untrained loss − ln V (nats)"),
        N_("ln V + σ²/2: the untrained loss against the spread of the logits"),
        N_("σ²/2"),
        N_("output layer drawn at other scales (measured)"),
        N_("untied, V = {V:,}"),
        N_("tied, V = {V:,}"),
        # 11_training
        N_("train (mean of {window} steps, dropout on)"),
        N_("validation (whole split, dropout off)"),
        N_("cross-entropy loss"),
        N_("loss (nats)"),
        N_("full vocabulary"),
        N_("compact vocabulary"),
        N_("parameters of the GPT"),
        N_("parameters"),
        N_("total gradient norm"),
        N_("gradient length before clipping"),
        N_("clip at 1: longer gradients are scaled down to 1"),
        N_("course: warm-up + cosine"),
        N_("seed: constant"),
        N_("learning rate per step"),
        N_("learning rate"),
        N_("validation loss"),
        N_("number of draws"),
        N_("seed's 20 × 4 estimate (30 draws)"),
        N_("whole validation split"),
        # 12_generation
        N_("rank of the token"),
        N_("probability (log scale)"),
        N_("the 30 most probable next tokens at three temperatures"),
        N_("token whose keys and values are needed"),
        N_("generation step"),
        N_("computed at this step"),
        N_("read from the cache"),
        N_("not needed yet"),
        N_("position of the new token"),
        N_("milliseconds per token"),
        N_("time per generated token (one thread)"),
        N_("layer {layer} · head {head}"),
        N_("no cache: recompute every K, V"),
        N_("KV cache: one new K, V per step"),
        N_("no cache"),
        N_("KV cache"),
        N_("probability"),
        N_("top-p = {p_top}: keep tokens until the running total reaches p"),
        N_("running total"),
        # 13_modern_blocks
        N_("activations"),
        N_("word frequencies only ({unigram:.2f})"),
        N_("same steps, same batches"),
        N_("training loss (10-step mean)"),
        N_("pair 0 of D = 8: θ = p rad"),
        N_("pair 1 of D = 8: θ = p · 0.1 rad"),
        N_("classic"),
        N_("classic, GPT-2 token embeddings"),
        N_("+ RoPE"),
        N_("+ GQA, no biases = LLaMA-style"),
        N_("classic, no positions"),
        # 14_encoder_decoder
        N_("False: masked (padding or future)"),
        N_("reversing digit strings"),
        N_("cross-entropy (log scale)"),
        N_("source digit"),
        N_("decoder input"),
        N_("decoder layer {i} (mean over heads)"),
        N_("layer {last}, head {h}"),
        N_("encoder-only: bidirectional"),
        N_("source key j"),
        N_("source query i"),
        N_("decoder-only: causal"),
        N_("key j"),
        N_("query i"),
        N_("encoder-decoder: cross-attention"),
        N_("decoder query i"),
        # 15_flash_attention
        N_("naive (05–08)"),
        N_("tiled (ours)"),
        N_("PyTorch SDPA"),
        N_("MiB saved for backward"),
        N_("Memory kept for the backward pass, one head, d = 64"),
        # 16_induction_heads (plot_toy_run; the notebook's own labels follow)
        N_("repeat loss"),
        N_("training step"),
        N_("repeat loss (nats)"),
        N_("induction score"),
        N_("phase change (step {step})"),
        N_("filler"),
        N_("first copy"),
        N_("repeat"),
        # 16_induction_heads (the notebook's own)
        N_("layer 1, probe row 0 (filler {f}, period {p})"),
    }
)


#: ``viz.label("validation loss")``: the same lookup as ``printed.label``, one registry for both lists.
label = declared
