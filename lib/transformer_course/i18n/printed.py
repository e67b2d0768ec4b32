"""What the notebooks' code cells print, in the learner's language (introduced in 00_setup).

A notebook prints a result with a label: ``say("loss {loss:.2f}", loss=0.5)`` prints
``loss 0.50`` in the English notebook and ``损失 0.50`` in the Chinese one, from the same code
cell (the Chinese notebooks run the English code; only the set-up call's language differs).
``label("reads")`` returns a word for a table header instead of printing it.

Every message is declared once, below, with ``N_()``, so ``tools/i18n.py lib-update`` puts it in
the library catalog; ``say`` and ``label`` (one lookup with ``viz.label``, ``i18n.declared``)
refuse a message that is not declared, so a label
added to a notebook cannot skip the catalog. The message is a ``str.format`` template with named
fields: the numbers and token strings are formatted the same way in both languages.
"""

from __future__ import annotations

from . import N_, declare, declared

__all__ = ["MESSAGES", "label", "say"]

#: Every label a notebook prints through :func:`say` or :func:`label`, by notebook.
MESSAGES = declare(
    {
        # 00_setup
        N_("SHA-256 matches the course's: {matches}"),
        N_("bytes on disk: {n:,}"),
        N_("characters: {n:,}"),
        N_("device result equals the CPU result ✓"),
        N_("first in"),
        N_("note"),
        N_("vocabulary size: {n:,}"),
        N_("{n} exercises saved in {path}; read back unchanged: {unchanged}"),
        N_("{n} terms"),
        # 01_tokenization
        N_("'end ' -> {end_ids}   'a  b' -> {ab_ids} (two spaces)"),
        N_("'tidy' after the merge: {once}   with step 2 repeated: {twice}"),
        N_("220 in the book: {n} times, followed by a digit {digits} times"),
        N_("BPE's first merge:     {pair} (adjacent 7 times)"),
        N_("BPE's pair {pair} scores only {score:.3f}"),
        N_("Chinese"),
        N_("Chinese (the visual explainer)"),
        N_("English"),
        N_("English (translation)"),
        N_("Huffman's first merge: {pair} (counts {a} and {b})"),
        N_("UTF-8 bytes"),
        N_(
            "WordPiece's first merge: {pair} score {score:.3f} (together {together}×; {left!r} occurs {n_left}×, {right!r} {n_right}×)"
        ),
        N_("allowed as special: {ids}"),
        N_("alone"),
        N_("as plain text:      {ids}"),
        N_("bytes"),
        N_("characters"),
        N_("characters in {window:,} tokens"),
        N_("characters per token"),
        N_("cl100k_base vocabulary"),
        N_("count"),
        N_("decoded back: {text!r}"),
        N_("decoded one token at a time: {n} of {total} tokens come out as U+FFFD"),
        N_("distinct token ids"),
        N_("emoji"),
        N_("encode(text) refuses it by default: ValueError"),
        N_("examples: {words}"),
        N_("extra 220s in the seed's list: {n}"),
        N_("first 12 merges: {symbols}"),
        N_("first merge: {pair} with {count} occurrences"),
        N_("held-out words: {n:,}, never seen in the first 90 %: {unseen:,} ({share:.1%})"),
        N_("ids: {ids}"),
        N_("its characters all known: {known}"),
        N_("largest id"),
        N_("largest id decodes to"),
        N_(
            "learned {learned:,} = 1 + {letters} + {merges:,}; used {used:,}; never in the final segmentation: {unused}, e.g. {examples}"
        ),
        N_("library merges == by-hand merges ✓  first merge: {pair} {count}"),
        N_("merges until every word is one symbol: {n}"),
        N_("new symbol"),
        N_("our BPE on the Chinese sample: {tokens}"),
        N_("pair"),
        N_("part of a character"),
        N_("real ids decode to:   {text!r}"),
        N_("scheme"),
        N_("seed's ids decode to: {text!r}"),
        N_("sequence length (tokens)"),
        N_("special ids: {tokens} -> {ids}"),
        N_("step"),
        N_("streamed:              {text}"),
        N_("subwords: cl100k_base"),
        N_("subwords: our BPE, 1,000 merges"),
        N_("text"),
        N_("tokens"),
        N_("tokens 44-52 alone:    {pieces}"),
        N_("tokens 44-52 streamed: {pieces} ('' = bytes held back)"),
        N_("tokens for this sentence's meaning"),
        N_("tokens per 1,000 characters"),
        N_("tokens per character"),
        N_("trained BPE"),
        N_("unfriendly anywhere in the book: {known}"),
        N_("unfriendly in the word vocabulary: {known}"),
        N_("value"),
        N_("vocabulary size"),
        N_("vocabulary size: {n}"),
        N_("vocabulary: 1 (</w>) + {letters} letters + {merges} merges = {symbols} symbols"),
        N_("vocabulary: {vocabulary}"),
        N_("word ids: {ids}  (0 = <UNK>)"),
        N_("words"),
        N_("{n:,} token ids, the same as cl100k.encode(text) ✓"),
        N_("{n} of {total} tokens are not valid UTF-8 on their own"),
        # 01b_byte_level_bpe
        N_("Chinese (course prose)"),
        N_("English (the book)"),
        N_("a merge rewrites at most {most:,} of the {distinct:,} distinct pre-tokens"),
        N_("book: {n:,} ids, identical to tiktoken ✓; Chinese: identical ✓"),
        N_(
            "cl100k_base: {zh:.2f} tokens per Chinese-text character, {en:.2f} per English character ({han:,} Han characters)"
        ),
        N_("incremental: 768 merges within 10 CPU-seconds ✓"),
        N_("merges"),
        N_("merges: {merges} -> {pieces}"),
        N_("ours"),
        N_("ours {n:,}"),
        N_("same 768 merges as the naive trainer ✓"),
        N_("the bytes join back to: {text}"),
        N_("{chars:,} characters, {pretokens:,} pre-tokens, {distinct:,} distinct"),
        N_("{lines:,} lines streamed -> the same {ids:,} ids ✓"),
        N_("{n:,} merges recovered"),
        N_("{name:>8}: {seconds:.2f} CPU-seconds for the book"),
        N_("{text!r}: {chars} characters -> {n} bytes {ids}"),
        # 02_embeddings
        N_("Adam's first step on gR vs (step on g)R: largest difference {adam_gap:.2f}"),
        N_("IndexError: a table of {max_id:,} rows has no row {max_id:,}"),
        N_("LayerNorm(xR) vs LayerNorm(x)R: largest difference {gap:.2f}"),
        N_("correct table reads it: {table}"),
        N_("course_batch == get_batch ✓   y is x shifted by one ✓"),
        N_("float32 size: {megabytes:.1f} MB"),
        N_("found in the book at token offset {offsets}"),
        N_("is the table weight-decayed? {decayed}   is the output layer the table? {tied}"),
        N_("largest id {max_id:,} -> rows needed {vocab_size:,}"),
        N_("lookup:         {lookup_copies:,} numbers copied"),
        N_("mean change of an embedding entry: {change:.3f}; change of the queries: 0 (asserted)"),
        N_("off-diagonal 1s (repeated tokens such as ' to', ',' and ' sales'): {n}"),
        N_("one block: {block_parameters:,} parameters; the table is worth {blocks:.0f} blocks"),
        N_(
            "one-hot matmul: {matmul_macs:,} multiply-adds, and a {one_hot:,}-number one-hot tensor"
        ),
        N_("one-hot: {one_hot}  ones per vector: {ones}"),
        N_("parameters: {vocab_size:,} × {d_model} = {parameters:,}"),
        N_("ratio: {ratio:,}× (= V)"),
        N_("rows the book ever reads: {used:,} ({share:.1%})"),
        N_("table: {table}"),
        N_("unread rows with a non-zero gradient: {share:.1%}"),
        N_("window 1: e_s · e_t is 1 for equal ids and 0 otherwise ✓"),
        # 02b_word2vec
        N_("CBOW loss by hand equals the library's ✓"),
        N_("centred"),
        N_("centred, top 2 components removed"),
        N_("correlation of vector length with log(count): {r:+.2f}"),
        N_("cos(price, budget) = {cos} ✓ equals F.cosine_similarity"),
        N_("cosine similarity of the one-hot vectors:"),
        N_("group: share of its words whose nearest word is in it"),
        N_("in 64-D (cosine)"),
        N_("kept (count >= 5): {n:,} words, covering {share:.1%} of the text"),
        N_(
            "least-squares x: W^T x reproduces v (residual below 1e-10: {small}), but x['price'] = {x:.3f} (one-hot: 1), {n} entries above 0.001"
        ),
        N_("mean loss per epoch: {losses}"),
        N_("nearest to 'customer', {name}: {words}"),
        N_("nearest to 'customer': {words}"),
        N_("nearest-row search recovers every word: {ok}"),
        N_("negative-sampling loss: {loss} — the library's Word2Vec agrees ✓"),
        N_("on the 2-D map"),
        N_("one-hot @ W equals the row lookup W[id] ✓"),
        N_("table {shape}, rank {rank}"),
        N_(
            "token table: {rows:,} rows cover all {distinct:,} distinct ids ({n:,} tokens) of the corpus"
        ),
        N_("word"),
        N_(
            "word2vec: {n:,} distinct words ({uncovered:,} occurrences) have no vector, e.g. {examples}"
        ),
        N_("words in the corpus: {n:,}   distinct: {distinct:,}"),
        N_("{n} pairs; those with centre 'loves': {words}"),
        N_("{n} words; the 2-D map keeps {share:.0%} of their variance ✓ PCA matches eigh"),
        # 03_positional_encoding
        N_(
            "1. unique: the two closest of 1,024 rows are {distances:.3f} apart (row length {value:.3f})"
        ),
        N_("2. near is close: PE_pos · PE_(pos+k) for k = 1, 2, 4, 8, 32: {values}"),
        N_(
            "3. learnable pattern: M_5 maps all 1,019 rows to the row 5 later, largest error {shifted_far:.1e}"
        ),
        N_("PE[pos + 5] == M_5 · PE[pos] for every pos ✓   M_5 is a rotation ✓"),
        N_("PE_pos · PE_(pos+k) == Σ cos(ω_i k) for all 16 × 16 pairs ✓, symmetric in ±k ✓"),
        N_("a W_Q reading the input: {value:,} weights (added) vs {value2:,} (concatenated)"),
        N_("added: {inputs}   concatenated: {concatenated}"),
        N_(
            "after random W_Q, W_K: score(5 → 8) = {projected:.3f}, score(8 → 5) = {projected2:.3f}"
        ),
        N_("attention(shuffled tokens) == shuffled attention(tokens) ✓  — order is invisible"),
        N_("by hand == positional.sinusoidal_encoding ✓  shape: {table}"),
        N_(
            "causal attention, no positional encoding: largest difference after shuffling {causal_gap:.3f}"
        ),
        N_("each pair's wave is {ratios:.4f}× longer than the previous one (10000^(2/64))"),
        N_("every row has the same length √(d_model/2) = {value:.4f}: {norms:.4f} … {norms2:.4f}"),
        N_("first 32 columns: {first_half:.1%} of the variation, last 32: {first_half2:.1%}"),
        N_("full dot product, pos = 0..12: {values}"),
        N_(
            "pairs that complete a whole cycle inside a {context_length}-token window: i = {inside}"
        ),
        N_("permutation: {perm}"),
        N_(
            "position {pos:>4}: index code {pos:>4} = {ratio:7.1f}× the embeddings' mean |entry| ({embedding_size:.2f}); sinusoidal mean |entry| {sinusoidal_size:.2f}"
        ),
        N_("sine terms only, pos = 0..12: {values}"),
        N_("with positions, largest difference after shuffling: {gap:.3f} (no longer 0)"),
        N_("{kind:>10}: positional parameters = {n:,}"),
        N_("{seed_values} entries equal to the seed's to 6 decimals ✓"),
        # 04_qkv
        N_("Q Kᵀ (B, H, T, T), right:  {shape}"),
        N_("Q, K (B, H, T, D):         {shape}"),
        N_("Qᵀ K (B, H, D, D), a slip: {shape}"),
        N_("4 per-head projections, stacked: {shape} == split of the one big projection ✓"),
        N_("MultiHeadAttention.k_proj + split_heads == our K heads ✓"),
        N_("context vector z_3: {shape}   equal to x_3 itself: {equal}"),
        N_(
            "embedding_scale = {scale:<12}  token vectors RMS {token_rms:.3f}, positions RMS {position_rms:.3f} ({ratio:.0f}×)"
        ),
        N_("first query of window 0, first 6 numbers: {numbers}"),
        N_("head 2 == columns 32..47 ✓   by hand == attention.split_heads ✓"),
        N_("largest possible entropy over 4 keys: ln 4 = {ln4:.3f}"),
        N_("previous-token head: {previous_head}, first-token head: {first_head}"),
        N_("row 3 of weights @ x == mean of x_0 … x_3 ✓"),
        N_("row entropy (nats)"),
        N_("scores x_3 · x_j: {scores}"),
        N_("scores {row} -> weights {weights}  entropy {entropy:.3f}"),
        N_("weight on first token"),
        N_("weight on previous token"),
        N_("weights:          {weights}"),
        N_("window 0: {tokens}"),
        N_("x: {shape}  heads: {heads}  head size D: {D}"),
        N_(
            "{n_heads} head(s): {parameters:,} parameters, test accuracy {accuracy:.1%}, batch loss first below 0.1 at step {step}"
        ),
        # 05_scale
        N_("E[x²] = {moment:.3f}   predicted Var(q_i) ≈ E[x²]/3 = {predicted:.3f}"),
        N_("W_Q of one head: {shape} = (d_k, d_model), not (d_model, d_k)"),
        N_("a square root of the first scores: {roots}"),
        N_("after the division by √{D}: predicted {predicted:.3f}   measured {measured:.3f}"),
        N_("mean entropy"),
        N_("mean max weight"),
        N_("mean row entropy: unscaled {unscaled}  scaled {scaled}"),
        N_(
            "mean weight a position gives itself: {itself:.3f}   given to all the others: {others:.3f}"
        ),
        N_("measured Var(q_i) = {var_q:.3f}   Var(k_i) = {var_k:.3f}"),
        N_(
            "parameters of the value map: {shapes}   V of window 0 vs window 1: largest difference {difference:.2f}"
        ),
        N_(
            "predicted Var(q·k) ≈ d_k·Var(q_i)·Var(k_i) = {predicted:.2f}   measured over all windows and heads {measured:.2f}"
        ),
        N_("score variance"),
        N_("score variance, head 0 window 0: unscaled {unscaled}  scaled {scaled}"),
        N_("scores range: {low:.2f} … {high:.2f}   negative: {negative:.0%}"),
        N_(
            "softmax(QᵀK/√d_k)Vᵀ with tokens as columns == softmax(QKᵀ/√d_k)V with tokens as rows ✓"
        ),
        N_("uniform entropy"),
        N_("weights range: {low:.4f} … {high:.4f}   rows sum to 1: {sums_to_one}"),
        # 06_mask
        N_("3 causal layers:       {report}"),
        N_("GPT:             {report}"),
        N_("LLaMA-style GPT: {report}"),
        N_("adding the boolean mask instead: the largest weight on a future key is {weight:.4f}"),
        N_("additive mask == nn.Transformer.generate_square_subsequent_mask(T): {same}"),
        N_("allowed pairs: {allowed} of {total}"),
        N_("attention layer:       {report}"),
        N_("causal mask"),
        N_(
            "given our mask as is: query 0 puts {weight:.4f} of its weight on the future keys 1–{last}"
        ),
        N_(
            "library weights == by hand ✓   library output == F.scaled_dot_product_attention(is_causal=True) ✓"
        ),
        N_("middle layer unmasked: {ok} ({n} leaking (output, input) pairs)"),
        N_("nn.MultiheadAttention given ~mask: weight on future keys {weight}"),
        N_("no mask"),
        N_(
            "padded queries {first}–{last}: in every head their weight on the real keys 0–{real} sums to 1 ✓"
        ),
        N_("padding mask: {pad}  combined: {both}"),
        N_("row 0 of head 0: {row}"),
        N_("scores + additive mask == masked_fill (bit for bit): {same}"),
        N_("their outputs are not zero: largest |value| {largest}"),
        N_("upper triangle all zero: {zero}"),
        N_("weight on padded keys of window 1: {weight}"),
        N_("window 1 with padding == window 1 cut to its 10 real tokens ✓"),
        N_("{name:12s}: output of position 3 moved by {moved:.4f} when token {last} changed"),
        # 07_softmax
        N_("attention.softmax: {weights}"),
        N_("entropy"),
        N_("exp(100) in float32: {value}"),
        N_("log of softmax:    {values}"),
        N_("log-sum-exp form == torch.log_softmax ✓"),
        N_("log-sum-exp form:  {values}"),
        N_("max weight"),
        N_("naive softmax:       {naive}"),
        N_("row 3 of head 0: {scores}"),
        N_(
            "rows sum to 1 ✓   masked weights exactly 0 ✓   == torch.softmax ✓   == attention.softmax ✓"
        ),
        N_("stable softmax:      {stable}"),
        N_("torch.softmax:     {weights}"),
        N_("uniform entropy log {T} = {value}"),
        # 08_v_attention
        N_("by hand == attention.MultiHeadAttention ✓   == F.scaled_dot_product_attention ✓"),
        N_("by hand == attention.merge_heads ✓   head 1 == columns 16..31 ✓"),
        N_("by hand == nn.MultiheadAttention ✓"),
        N_("concat: {concat}  out: {out}"),
        N_("distance to the previous row, t = 1…{last}: {values}"),
        N_("every coordinate of every output lies between the visible values' min and max ✓"),
        N_("o_3 == Σ_j w_3j v_j ✓  (only j ≤ 3 contribute: {weights} )"),
        N_("per-head outputs: {heads}"),
        N_("position 0: output == its own value vector ✓"),
        N_(
            "scores from {low:.2f} to {high:.2f} (not in [0, 1], see 05); weights from {w_low:.1f} to {w_high:.1f}, each row summing to 1"
        ),
        N_("tokens as columns, Vᵀ Wᵀ == (W V)ᵀ ✓"),
        N_("weight on itself, per head:       {values}"),
        N_("weight on the {n} others, per head: {values}"),
        N_("weights: {weights}  V: {v}"),
        # 09_transformer_block
        N_("BatchNorm buffers: {values}"),
        N_("BatchNorm: same token, different batch → max change {change}"),
        N_("BatchNorm: same token, train vs eval → max change {change}"),
        N_("LayerNorm buffers: {values}"),
        N_("LayerNorm: same token, alone vs in the batch, train vs eval → identical ✓"),
        N_("after block {i}: {shape}, residual stream std {std:.2f}"),
        N_("by hand == FeedForward ✓   token by token == all at once ✓"),
        N_("by hand == nn.LayerNorm == norm.LayerNorm ✓"),
        N_("hidden: {hidden}  output: {ffn_by_hand}"),
        N_(
            "input: token part RMS {token_part:.3f}, positional table RMS {positions:.3f}, their sum std {h:.2f}"
        ),
        N_("inputs: {x}  attention output: {attended}"),
        N_("logits: {logits}  block by block == GPT.forward ✓"),
        N_("nn.Dropout: survivors × 1/(1-p) ✓   eval mode is the identity ✓"),
        N_("parameters: {n}"),
        N_("post-norm"),
        N_("post-norm, 50-step warm-up"),
        N_("pre-norm"),
        N_("pre-norm block: {pre_block}  post-norm block: {post_block} ✓"),
        N_("share %"),
        N_("share of hidden units that ReLU set to 0: {share}"),
        N_("share zeroed: {share}   kept entries scaled by {scale}"),
        N_("with residual:    layer 1 {first:.1e}   layer 16 {last:.1e}"),
        N_("without residual: layer 1 {first:.1e}   layer 16 {last:.1e}"),
        N_("{name}: mean loss of the last 20 steps {losses:.2f}"),
        N_("{placement}: mean loss of the last 20 steps {losses:.2f}  (ln 32 = {value:.2f})"),
        # 10_logits_and_loss
        N_(
            "0.02 · √64 = {value:.2f}: each logit sums 64 terms h_i·w_i, and Σ h_i² = 64 after the LayerNorm"
        ),
        N_("attention"),
        N_("by hand == GPT.forward ✓"),
        N_("continuation: {text!r}"),
        N_("feed-forward"),
        N_("id of 'Clar': {id}   times it is a target in the book: {count}"),
        N_(
            "logit std σ {std:.2f};  logit of the token just read: mean {own:.2f};  all logits: mean {mean:.2f}"
        ),
        N_("logits = h Eᵀ ✓   untrained loss with tying {loss:.2f} (ln V = {ln_V:.2f})"),
        N_("logits: mean {mean}  std {std}"),
        N_("loss {loss:.2f}   ln V = ln {V:,} = {ln_V:.2f}"),
        N_("model's guess"),
        N_("norms"),
        N_("output layer"),
        N_("output layer std 0.02: loss {loss:.2f}    std 1: loss {loud_loss:.1f}"),
        N_("output layer {name}: {verdict}"),
        N_("p × V"),
        N_("p(true next)"),
        N_("perplexity e^loss ≈ {perplexity:,.0f}  (a uniform guess over V tokens: {V:,})"),
        N_("position embedding"),
        N_(
            "position {t} of window 0 reads {token!r}; its target is the next token {target!r} (id {target_id})"
        ),
        N_("positions whose top guess is the token just read: {count} of {total}"),
        N_("prompt:       {text!r}"),
        N_("reads"),
        N_("right guesses in the batch: {right} of {total}"),
        N_("saved: {saving:,} parameters ({percent:.1f} %)"),
        N_("the stem ' implement' would be id {stem_id}: another of the {V:,} classes"),
        N_("tied"),
        N_("token embedding"),
        N_("token ids:    {ids}"),
        N_("total"),
        N_("true next"),
        N_("untied"),
        N_("untrained loss with 3,771 tokens: {loss:.2f}   ln 3,771 = {ln_V:.2f}"),
        N_("untrained model: {loss} against a vocabulary of {V:,}"),
        N_(
            "{name}: rows of the embedding table with a gradient {rows:>7,} of {V:,};   gradient norm on the row of 'Clar' {norm:.1e}"
        ),
        N_(
            "embedding_scale={scale!r:>15}: token vectors RMS {token_rms:.3f}, "
            "positions RMS {position_rms:.3f}, ratio {ratio:.1f}"
        ),
        # 11_training
        N_("\n{label:>6}  step {step:>3}  train {loss}  repetition {repetition:.0%}"),
        N_("  after {step:>4} steps: validation {loss}"),
        N_("  {token!r:>12}  cl100k id {original:>6}  ->  compact id {compact:>4}"),
        N_("*The finished curve is drawn below, with the numbers.*"),
        N_("20 × 4 estimates: from {low:.2f} to {high:.2f}, standard deviation {spread:.2f}"),
        N_("40 steps by hand == train(): losses {first:.3f} → {last:.3f} ✓"),
        N_("compact"),
        N_(
            "embedding_scale={scale!r:>15}: token vector {token:.2f}, position row {position:.2f} (ratio {ratio:.1f}); two tokens at one position after the first LayerNorm: cosine {alike:.3f}"
        ),
        N_("estimated run time: {estimate}"),
        N_("full"),
        N_("full vocabulary: {full:,} rows   compact vocabulary: {compact:,} rows"),
        N_(
            "gradient length before clipping: {low:.2f} to {high:.2f}; clipped at {clipped} of 40 steps"
        ),
        N_("interrupted: {interrupted}, steps done: {steps}, checkpoint at step {saved}"),
        N_("model: {config}"),
        N_("one step by hand == train_step: loss {loss:.3f}, all {n} weight tensors equal ✓"),
        N_("prompt: {text!r}"),
        N_(
            "recipe {scale!r}: {steps} steps of {batch} sequences × {T} tokens, peak lr {lr}, warm-up {warmup}, weight decay {decay}, clip {clip}"
        ),
        N_("resumed run: {steps} steps, validation losses {losses}"),
        N_(
            "seed's recipe, recorded reference (5,000 steps × 4 sequences, full vocabulary): {loss:.2f}"
        ),
        N_(
            "step 0: {first:.2e}   end of warm-up (step {step}): {peak:.2e}   last step: {last:.2e}"
        ),
        N_("steps: {steps}   tokens seen: {tokens:,} ({passes:.1f} passes over the training text)"),
        N_("the compact model has {ratio:.1f}× fewer parameters"),
        N_(
            "this notebook, measured above ({steps} steps × {batch} sequences, compact vocabulary): {loss:.2f}"
        ),
        N_("tokens seen: seed {seed:,}, here {here:,}"),
        N_("tokens: {n:,}  (train {train:,}, validation {val:,})"),
        N_("training split, dropout off: {train:.2f}   validation: {val:.2f}   gap {gap:.2f}"),
        N_("validation loss on the targets seen in training: {loss:.2f}"),
        N_(
            "validation targets never seen in training: {share:.1%}, loss {loss:.1f} each (ln V = {ln_V:.2f}), {part:.2f} of the mean"
        ),
        N_("validation tokens whose id never occurs in the training text: {share:.1%}"),
        N_("weight decay {decay}: {n} tensors, {numbers:,} numbers, shapes like {shapes}"),
        N_("weights identical to the uninterrupted run: {same}"),
        N_("whole split: {loss:.2f}"),
        N_("word frequencies only (add-{k:g} smoothing): validation loss {loss:.2f}"),
        N_(
            "{name:>8} vocabulary: {n:>10,} parameters ({table:,} in the shared embedding / output table)"
        ),
        N_(
            "{windows} windows × {T} tokens; untrained validation loss {loss:.2f}, ln V = {ln_V:.2f}"
        ),
        # 12_generation
        N_("   continues: {text!r}"),
        N_("12 cached steps == one causal pass over 12 tokens ✓   cache now holds keys {shape}"),
        N_("<|endoftext|> among the model's token ids: {found}"),
        N_("K/V computations for {steps} steps: {without} without a cache, {steps} with one"),
        N_("K/V heads"),
        N_("KiB per token"),
        N_("MiB without GQA"),
        N_("MiB, full window"),
        N_("at position 511 a step without the cache takes more than twice as long as with it ✓"),
        N_("beam"),
        N_("beams kept at every step: {kept}"),
        N_("by hand == beam_search ✓   beam width 1 == greedy ✓"),
        N_("by hand == generate(temperature=0) ✓"),
        N_("cached logits == one pass ✓   layer 0 caches keys {shape} = (B, K/V heads, tokens, D)"),
        N_("continuation"),
        N_("empty prompt: {message}"),
        N_("ends with"),
        N_("first token"),
        N_("generate and beam_search: same tokens with and without the cache ✓"),
        N_("generated {n} new tokens with a {T}-token window ✓"),
        N_("head"),
        N_("head size"),
        N_("itself"),
        N_("layer"),
        N_("layers"),
        N_("log p"),
        N_("long prompt:  {message}"),
        N_("loss in one pass {loss:.3f} == mean over 16 prefixes ✓"),
        N_("maps: {shape}  rows sum to 1: {ok}"),
        N_("ms per token: {times}"),
        N_("per token"),
        N_("query heads"),
        N_("strategy"),
        N_("temperature 0 == top-k 1 == tiny top-p == greedy ✓"),
        N_("temperature ✓  top-k ✓  top-p ✓   (top-p {p} keeps {n} tokens here)"),
        N_("this notebook's model"),
        N_("token before"),
        N_("total log p"),
        N_("trained"),
        N_("training loss: first 50 steps {first:.2f} → last 50 steps {last:.2f}"),
        N_(
            "two texts of {a} and {b} tokens, different except their last 16: identical next-token logits ✓"
        ),
        N_("unknown text: {message} …"),
        N_("untrained"),
        N_("validation loss (whole split): {loss:.2f}   (uniform guess: ln 3771 = {ln_V:.2f})"),
        N_("vocabulary: {V:,} tokens   parameters: {n:,}"),
        N_("window"),
        N_("{name:<9} loss {loss:.2f}  perplexity {perplexity:7,.0f}  → {text!r}"),
        # 13_modern_blocks
        N_("+ GQA, no biases = LLaMA-style"),
        N_("+ RMSNorm"),
        N_("+ RoPE"),
        N_("+ SwiGLU"),
        N_(
            "GPT-2 token embeddings, training loss {loss:.2f} vs word-frequency entropy {entropy:.2f}"
        ),
        N_("RoPE, D = 16, rad per position:  {values}"),
        N_("SwiGLU by hand == feedforward.SwiGLU ✓"),
        N_("attention QKᵀ and weights·V (bmm)"),
        N_("block-diagonal rotation by hand == positional.apply_rope ✓"),
        N_("classic"),
        N_("classic → LLaMA-style: {gain:.2f} nats, of which the RoPE switch: {rope:.2f}"),
        N_("classic, GPT-2 token embeddings"),
        N_("classic, learned positions"),
        N_("classic, no positions"),
        N_(
            "entropy of the training text's word frequencies (the loss of a model that ignores context): {entropy:.2f}"
        ),
        N_("input layer: GPT-2 token embeddings {gpt2:.2f} → scaled (× √d_model) {scaled:.2f}"),
        N_("library RMSNorm == nn.RMSNorm == by hand; on mean-0 vectors RMSNorm == LayerNorm ✓"),
        N_("m − n = {offset:>2}: score {score} at all {n} (m, n) pairs"),
        N_(
            "n_kv_heads={n_kv}: library == repeated K/V heads ✓   K/V projection weights: {n:,} (full MHA: {full:,})"
        ),
        N_("norms unchanged, and q·k depends only on m − n ✓"),
        N_("output RMS per token: {rms}"),
        N_("pair i:                          {values}"),
        N_("parameters"),
        N_("projections (addmm)"),
        N_("query-projection weights"),
        N_("seed 0"),
        N_("seed 1"),
        N_("table, d_model = 64:             {values}"),
        N_("train loss, last 20 steps"),
        N_("trainable position parameters: {counts}"),
        N_(
            "transformers is not installed here: pip install transformers, then run this cell again"
        ),
        N_("validation loss"),
        N_("validation perplexity"),
        N_(
            "{name:>32} at initialisation: token vectors RMS {token:.3f}, sinusoidal table RMS {table:.3f}"
        ),
        N_("{name}: course GPT == transformers' {model} (every logit within 1e-5) ✓"),
        N_("θ(p, i) for p = 0..5 (rows), pairs i = 0..3 (columns):\n {angles}"),
        N_("variants"),
        # 14_encoder_decoder
        N_("GPT (decoder-only)"),
        N_("after 150 steps — greedy exact match {greedy:.2f}, beam (4) {beam:.2f}"),
        N_("answers that stop too early among those: greedy {greedy}, beam {beam}"),
        N_("attention masks"),
        N_("beam (4)"),
        N_("beam log-prob"),
        N_(
            "by hand == library MultiHeadAttention(context=...) == F.scaled_dot_product_attention ✓   + A == masked_fill ✓"
        ),
        N_("chance: {chance:.2f}   greedy exact match: {accuracy:.2f}"),
        N_("cross (decoder queries × source keys):\n {mask}"),
        N_("decoder (causal):\n {mask}"),
        N_("decoder logits at position 0 moved by: {moved}"),
        N_("encoder (bidirectional):\n {mask}"),
        N_("encoder output at position 0 moved by: {moved}"),
        N_("family"),
        N_("first 100 held-out strings — greedy: {greedy:.2f}, beam (width 4): {beam:.2f}"),
        N_("greedy"),
        N_("greedy exact match on {n} held-out strings: {accuracy:.2f}"),
        N_("head {h}"),
        N_("layer {layer}"),
        N_("library cross-attention == nn.MultiheadAttention(Y, M, M) ✓"),
        N_("loss: first step {first:.3f} (ln 13 = {ln_V:.3f}) → last 50 steps {last:.2f}"),
        N_("mean over heads"),
        N_("memory shape (B, S, C): {shape} — one vector per source token"),
        N_("model"),
        N_(
            "post-norm block == LN(x + attn), LN(· + FFN); each output token has mean 0, variance 1 ✓"
        ),
        N_("pre-training objective"),
        N_("right answer"),
        N_("shapes of every attention weight and bias in the encoder-decoder: {shapes}"),
        N_("source"),
        N_(
            "the two differ on {n} of {total} strings; right among those: greedy {greedy}, beam {beam}"
        ),
        N_(
            "untrained: logit std σ = {sigma:.2f}   ln 13 + σ²/2 = {expected:.3f}   loss {loss:.3f}"
        ),
        N_("weights on the padded source slots of example 1: {weight}"),
        N_("weights: {weights}  output: {output}"),
        N_("year"),
        N_("{name}: {n} cross-attention modules"),
        # 15_flash_attention
        N_("CUDA SDPA"),
        N_("No CUDA GPU here: the comparison with CUDA SDPA is skipped."),
        N_("PyTorch SDPA"),
        N_("S: {T} × {T} × 4 bytes = {scores:.0f} MiB per head;  Q, K, V, O: {rest:.0f} MiB"),
        N_("T = 4096: tiled keeps {tiled} MiB (≤ 5 ✓), naive keeps {ratio}× more (≥ 40 ✓)"),
        N_("T = {T}: peak RSS grows by {naive} MiB for naive, {tiled} MiB for tiled"),
        N_("peak RSS needs Linux's /proc: skipped on this system"),
        N_("block at {start}: m = {m:.4f}, rescale = {rescale:.4f}, l = {l:.4f}"),
        N_("causal"),
        N_("computed {computed} of {total} tiles; {masked} of them cross the diagonal"),
        N_("lse error"),
        N_("naive (05–08)"),
        N_("naive / tiled"),
        N_("online softmax == torch.softmax for blocks 1, 7, 64, 100 ✓   plain exp(x): {plain}"),
        N_("out error"),
        N_("same loss, same tokens ✓"),
        N_("tensor: {tensor:.0f} MiB   tracemalloc's peak: {peak:.1f} MiB"),
        N_("tiled (ours)"),
        N_("tiled bf16"),
        N_("tiles"),
        N_("{kernel}: loss {loss:.4f}, generated {tokens}"),
        N_("{name} error {error} ✓"),
        N_("{name}: within 3e-2 of float32 ✓"),
        # 16_induction_heads (the notebook's own)
        N_("induction score"),
        N_("repeat loss"),
        N_("induction score {ind:.2f}   previous-token score {prev:.2f}"),
        N_("filler ({n} tokens): {ids}"),
        N_("first copy ({n} tokens): {ids}"),
        N_("repeat: {ids}"),
        N_("induction ≥ 0.5 first at step {step}"),
        N_("step 2000: induction {ind:.2f}, repeat loss {rep:.2f}, first-copy loss {first:.2f}"),
        N_("1 layer, step 2000: repeat loss {rep:.2f}, best induction score {ind:.2f}"),
        N_("repeat loss increase"),
        N_("induction after"),
        N_("attention at offset 1"),
        N_(
            "no-filler probe: repeat loss {a:.2f}   filler probe: repeat loss {b:.2f} (ln 64 = {lnV:.2f})"
        ),
        N_("previous-token score"),
        N_("first-copy loss {first:.2f}   repeat loss {rep:.2f}"),
        N_("phase change at step"),
        N_("first-copy loss"),
        N_("seed"),
        N_("equal weights on the past: previous-token score {prev:.2f}, induction score {ind:.2f}"),
    }
)


#: ``label("reads")``: a declared message in the learner's language, fields filled (not printed).
label = declared


def say(message: str, /, *, end: str = "\n", **values: object) -> None:
    """Print ``message`` (declared in :data:`MESSAGES`) in the learner's language."""
    print(label(message, **values), end=end)
