"""transformer_course — the library behind the interactive Transformer course.

Every module is small and named after one concept of the course (data,
tokenizer, embedding, positional, attention, norm, feedforward, model, train,
generate, viz, widgets, device). Nothing runs on import: import the module you
need, e.g. ``from transformer_course import data``.
"""

__version__ = "0.1.0"

#: Where the course lives; the Colab badges and the Colab install are built from it.
REPOSITORY = "https://github.com/transformer-course/transformer-course"
