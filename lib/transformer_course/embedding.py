"""Token embeddings (introduced in 02_embeddings).

The shared starting state of notebooks 02–10 (``course_batch``, ``CourseBatch``) and the corpus's
token ids (``corpus_token_ids``) live in :mod:`transformer_course.data`; the names stay
importable from here, where the notebooks first met them.
"""

from __future__ import annotations

from .data import CourseBatch, corpus_token_ids, course_batch

__all__ = ["CourseBatch", "corpus_token_ids", "course_batch"]
