"""transformer_course — the library behind the interactive Transformer course.

Each module holds one concept of the course and names the notebook that introduces it; a
concept that needs several files is a package (``data``, ``train``, ``checkpoint``, ``viz``,
``diagrams``, ``cli``, ``widgets``, ``exercises``) whose ``__init__`` is its face. The map, its
layers and the reading order for "the GPT in one sitting" (positional → attention → norm →
feedforward → model) are in ``lib/README.md``, one folder up. Nothing runs on import: import
the module you need, e.g. ``from transformer_course import data``.
"""

__version__ = "0.1.0"

#: Where the course lives; the Colab badges and the Colab install are built from it.
REPOSITORY = "https://github.com/transformer-course/transformer-course"
