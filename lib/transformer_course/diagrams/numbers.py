"""The numbers every diagram writes on its arrows, and the course's notebooks by name.

Introduced in 00_setup (the course map): :data:`COURSE` holds the sizes of the course's model
(the shapes the notebooks print), :data:`NOTEBOOKS` the short name of each notebook.
"""

from __future__ import annotations

from dataclasses import dataclass


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

#: Every notebook and its short name, in course order (the roadmap's banner uses them).
NOTEBOOKS: dict[str, str] = {
    "00": "Setup",
    "01": "Tokenization",
    "02": "Embeddings",
    "02b": "word2vec",
    "03": "Positional encoding",
    "04": "Queries, keys and values",
    "05": "Scaled scores",
    "06": "The causal mask",
    "07": "Softmax",
    "08": "Weighted sum of V, output projection",
    "09": "The Transformer block",
    "10": "Logits and loss",
    "11": "Training",
    "12": "Generation",
    "13": "Modern blocks",
    "14": "Encoder-decoder",
}
