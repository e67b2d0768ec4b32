"""Byte-level BPE training on the course's book: the naive trainer against the incremental one
(01b_byte_level_bpe).

    .venv/bin/python benchmarks/bench_bpe.py            # 1,024 tokens (768 merges); + 4,096 incremental
    .venv/bin/python benchmarks/bench_bpe.py --quick    # 512 tokens only

A benchmark, not a test: nothing here fails. Both trainers learn the same merges from the same
pre-token counts (checked here too); the naive one recounts every pair before each merge, the
incremental one recounts only the pre-tokens a merge changes. Times are CPU-seconds
(``time.process_time``) in one process, one after the other; the ratio naive / incremental is
printed. The 4,096-token vocabulary is timed for the incremental trainer only (the naive one
would take minutes). Last, encoding the whole book: the course's ``Tokenizer`` rebuilt from
cl100k_base's ranks against tiktoken.
"""

from __future__ import annotations

import argparse
import time

from transformer_course import data, tokenizer
from transformer_course.tokenizer import byte_level as bpe


def cpu_seconds(function, *args):
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="512 tokens only")
    args = parser.parse_args()
    book = data.load_text()
    counts, seconds = cpu_seconds(bpe.pretoken_counts, book)
    print(f"book: {len(book):,} characters, {len(counts):,} distinct pre-tokens ({seconds:.2f} s)")
    for vocab_size in [512] if args.quick else [512, 1024]:
        n_merges = vocab_size - 256
        naive, naive_s = cpu_seconds(bpe.train_naive, counts, n_merges)
        fast, fast_s = cpu_seconds(bpe.train_incremental, counts, n_merges)
        assert naive == fast, "the trainers disagree"
        print(
            f"vocabulary {vocab_size:>5,}: naive {naive_s:6.2f} s   incremental {fast_s:5.2f} s"
            f"   ratio {naive_s / fast_s:5.1f}x   same merges: yes"
        )
    if not args.quick:
        _merges, seconds = cpu_seconds(bpe.train_incremental, counts, 4096 - 256)
        print(f"vocabulary 4,096: incremental {seconds:.2f} s")
    ours, seconds = cpu_seconds(bpe.cl100k_base)
    print(f"cl100k_base rebuilt from its ranks: {len(ours.merges):,} merges in {seconds:.2f} s")
    encoding = tokenizer.get_encoding("cl100k_base")
    ours_ids, ours_s = cpu_seconds(ours.encode, book)
    tik_ids, tik_s = cpu_seconds(encoding.encode, book)
    print(
        f"encode the book: ours {ours_s:.2f} s (first call, empty cache)   tiktoken {tik_s:.3f} s"
        f"   ratio {ours_s / tik_s:.1f}x   identical ids: {ours_ids == tik_ids}"
    )


if __name__ == "__main__":
    main()
