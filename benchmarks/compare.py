"""Print benchmark tables as ratios measured in one run.

Usage::

    python benchmarks/compare.py tokenizer   # native vs reference tokenizer MB/s
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import stdlib_corpus  # noqa: E402


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), sorted(times)[len(times) // 2]


def tokenizer_table(repeat: int = 5, reference_stride: int = 10) -> str:
    import codelex
    from codelex import _reference

    docs = stdlib_corpus()
    total = sum(len(d) for _, d in docs)

    def native():
        vocab = codelex.Vocabulary()
        for _, data in docs:
            codelex.tokenize_document(data, vocab)

    subset = docs[::reference_stride]
    sub_total = sum(len(d) for _, d in subset)

    def reference():
        for _, data in subset:
            _reference.tokenize_document(data)

    nbest, nmed = _best(native, repeat)
    rbest, _ = _best(reference, 1)
    native_mbs = total / 1e6 / nmed
    ref_mbs = sub_total / 1e6 / rbest
    rows = [
        "| tokenizer (stdlib corpus) | MB | seconds (median) | MB/s | ratio |",
        "|---|--:|--:|--:|--:|",
        f"| codelex native (tokenize + intern) | {total / 1e6:.1f} | {nmed:.3f} | {native_mbs:.1f} | 1.0 |",
        f"| pure-Python reference (every {reference_stride}th file) | {sub_total / 1e6:.1f} | {rbest:.3f} | "
        f"{ref_mbs:.2f} | {native_mbs / ref_mbs:.0f}x slower |",
    ]
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", choices=["tokenizer"])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.table == "tokenizer":
        print(tokenizer_table(args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
