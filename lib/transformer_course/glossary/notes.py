"""The glossary's notes, declared for the library catalog (00_setup).

``GLOSSARY.md`` is the one source of the terms; its fourth column, the note, is English prose, so
each note is declared here with ``N_()`` for ``tools/i18n.py lib-update`` to put in the catalog, and
:func:`transformer_course.glossary.glossary_table` shows it in the learner's language.
``tests/test_glossary_notes.py`` checks that this set and the notes of GLOSSARY.md are the same.
"""

from __future__ import annotations

from ..i18n import N_

__all__ = ["NOTES"]

#: Every note of GLOSSARY.md's table, in the order of the table.
NOTES = frozenset(
    {
        N_("installing the packages, loading the corpus and the tokenizer"),
        N_("as JupyterLab's Chinese interface and d2l-zh write it; never 单元"),
        N_("the `check_*` function an exercise calls; never 检查程序"),
        N_("what `hint=True` prints (💡); a prompt is 提示词"),
        N_("the sales textbook the course trains on"),
        N_("written (B, T, C) in the course"),
        N_("the @ operator"),
        N_("CPU, CUDA GPU or Apple MPS"),
        N_("every random draw of the course is seeded"),
        N_("ipywidgets sliders and text boxes"),
        N_("d2l; the decoder walk-through writes 令牌"),
        N_("d2l; also 分词; the decoder walk-through writes 令牌化"),
        N_("e.g. tiktoken's cl100k_base"),
        N_("the set of token ids a model knows"),
        N_("V: 100,070 rows (full) or 3,771 (compact)"),
        N_("OOV: a word the vocabulary does not hold"),
        N_("BPE"),
        N_("one BPE step joins the most frequent pair"),
        N_("BPE over the 256 UTF-8 byte values, so no text is unknown"),
        N_("the regular expression that cuts text into pre-tokens before BPE"),
        N_("a piece the pre-tokenizer cuts; merges never cross it"),
        N_("a token's id in tiktoken's ranks: lower ranks merge first"),
        N_("also lookup table 查找表; V × C"),
        N_("d2l: 小批量 (minibatch); B = 4"),
        N_("T = 16 tokens per window"),
        N_("C = d_model = 64"),
        N_("predicts the next token from the ones before"),
        N_("the targets are the inputs shifted by one"),
        N_("d2l"),
        N_("CBOW"),
        N_("sinusoidal 正弦 table, 16 × 64"),
        N_("(B, T, C) + (T, C) adds the table to every window"),
        N_("Q"),
        N_("K"),
        N_("V (the matrix, not the vocabulary size)"),
        N_("a learned linear map such as W_Q"),
        N_("nn.Linear"),
        N_("H = 4 heads of D = 16"),
        N_("D = d_k = C / H = 16"),
        N_("in nats; a uniform row over n keys has ln n"),
        N_("dividing the scores by √d_k"),
        N_("QKᵀ before softmax"),
        N_("softmax of large scores is almost one-hot"),
        N_("−∞ above the diagonal"),
        N_("hides padding tokens (notebook 14)"),
        N_("or simply softmax; never 归一化 (the seeds' word for LayerNorm)"),
        N_("divides the scores or logits before softmax"),
        N_("softmax of the scores; each row sums to 1"),
        N_("the (T, T) weights of one head drawn as a heatmap"),
        N_("weights @ V"),
        N_("the heads side by side again"),
        N_("W_O"),
        N_("the decoder walk-through: Transformer Block"),
        N_("d2l; the seeds write 层归一化 or 归一化"),
        N_("d2l; the seeds' 归一化 stays only inside their quotations"),
        N_("d2l: 基于位置的前馈网络 (position-wise)"),
        N_("ReLU, GELU, SiLU"),
        N_("max(0, x)"),
        N_("d2l; often just dropout"),
        N_("norm before each sub-layer (GPT-2, the course)"),
        N_("norm after the residual add (the 2017 paper)"),
        N_("the decoder walk-through"),
        N_("the linear map to the vocabulary"),
        N_("the scores before softmax; usually just logits"),
        N_("the output layer reuses the embedding table"),
        N_("e to the cross-entropy"),
        N_("AdamW"),
        N_("the text generation continues; never 提示 (a hint)"),
        N_("one token at a time, fed back in"),
        N_("d2l; training on the true previous tokens; never 教师强制"),
        N_("nucleus sampling"),
        N_("the LLaMA-style parts"),
        N_("RoPE; the decoder walk-through"),
        N_("root-mean-square normalization; the seeds write 均方根归一化"),
        N_("GLU; SwiGLU uses SiLU as the gate"),
        N_("x · sigmoid(x), also called swish"),
        N_("GQA"),
        N_("MQA"),
        N_("queries from the decoder, keys and values from the encoder"),
        N_("which source token each output token attends to"),
        N_("seq2seq"),
        N_("FlashAttention's way: Q, K and V read in tiles, the T × T matrix never formed"),
        N_("cutting Q, K and V into tiles of block_q or block_k rows"),
        N_("a softmax read block by block: running maximum m, running sum ℓ, rescale e^(m − m′)"),
        N_(
            "log Σ e^(s); m + log ℓ, one per query, the only statistic FlashAttention saves; usually just logsumexp"
        ),
        N_("the backward pass rebuilds P = e^(S − L) tile by tile instead of storing it"),
        N_(
            "a head that attends to the token after the current token's previous occurrence and copies it: A B … A → B"
        ),
        N_("a head that attends from each token to the one just before it"),
        N_(
            "predicting better from what the context itself shows; here: loss on the repeat minus loss on the first copy"
        ),
        N_("an abrupt drop of the loss during training, when a circuit forms"),
        N_(
            "zeroing one part of a trained model (here one head's output) and measuring what changes"
        ),
    }
)
