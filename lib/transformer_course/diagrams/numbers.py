"""The numbers every diagram writes on its arrows, and the course's notebooks by name.

Introduced in 00_setup (the course map): :data:`COURSE` holds the sizes of the course's model
(the shapes the notebooks print), :data:`ATTENTION_EXAMPLE` those of 04–08's windows of 12
tokens, :data:`NOTEBOOKS` the short name of each notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..i18n import NC_


@dataclass(frozen=True)
class CourseNumbers:
    """The sizes every diagram writes on its arrows (the course's model, notebooks 02–12)."""

    B: int = 4
    T: int = 16
    C: int = 64
    H: int = 4
    D: int = 16
    d_ff: int = 256
    n_layers: int = 8
    V_compact: int = 3_771
    V_full: int = 100_070

    def shape(self, *dims: object) -> str:
        """``shape('B', 'T', 'C')`` -> ``'(4, 16, 64)'``; ints and other strings pass through."""
        return (
            "("
            + ", ".join(
                f"{getattr(self, d):,}" if isinstance(d, str) and hasattr(self, d) else str(d)
                for d in dims
            )
            + ")"
        )


COURSE = CourseNumbers()

#: The running example of the attention notebooks 04–08: the course batch cut to windows of
#: T = 12 tokens (``embedding.course_batch(seed=0).crop(12)``), so that T differs from the head
#: size D = 16 and every shape they print and draw tells a (T, T) matrix from a (T, D) one.
ATTENTION_EXAMPLE = CourseNumbers(T=12)

#: Every notebook and its short name, in course order (the roadmap's banner uses them; their
#: Chinese names, the titles of notebooks/zh/, are in the catalog: ``roadmap.notebook_title``).
NOTEBOOKS: dict[str, str] = {
    "00": NC_("notebook title", "Setup"),
    "01": NC_("notebook title", "Tokenization"),
    "01b": NC_("notebook title", "Byte-level BPE"),
    "02": NC_("notebook title", "Embeddings"),
    "02b": NC_("notebook title", "word2vec"),
    "03": NC_("notebook title", "Positional encoding"),
    "04": NC_("notebook title", "Queries, keys and values"),
    "05": NC_("notebook title", "Scaled scores"),
    "06": NC_("notebook title", "The causal mask"),
    "07": NC_("notebook title", "Softmax"),
    "08": NC_("notebook title", "Weighted sum of V, output projection"),
    "09": NC_("notebook title", "The Transformer block"),
    "10": NC_("notebook title", "Logits and loss"),
    "11": NC_("notebook title", "Training"),
    "12": NC_("notebook title", "Generation"),
    "13": NC_("notebook title", "Modern blocks"),
    "14": NC_("notebook title", "Encoder-decoder"),
    "15": NC_("notebook title", "FlashAttention"),
    "16": NC_("notebook title", "Induction heads"),
}
