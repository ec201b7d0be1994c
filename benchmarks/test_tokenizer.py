"""Tokenizer throughput on the stdlib corpus: native bulk path vs the reference.

Run: ``pytest benchmarks/test_tokenizer.py --benchmark-only``.  MB/s is in
``extra_info``; ``compare.py tokenizer`` prints the ratio table.
"""

import pytest

import codelex
from codelex import _reference


def _native_build(docs):
    vocab = codelex.Vocabulary()
    for _, data in docs:
        codelex.tokenize_document(data, vocab)
    return vocab


def test_tokenize_native(benchmark, stdlib_docs):
    total = sum(len(d) for _, d in stdlib_docs)
    vocab = benchmark.pedantic(_native_build, args=(stdlib_docs,), rounds=5, iterations=1)
    benchmark.extra_info["MB"] = total / 1e6
    benchmark.extra_info["MB/s"] = total / 1e6 / benchmark.stats.stats.median
    benchmark.extra_info["terms"] = len(vocab)


@pytest.mark.slow
def test_tokenize_reference(benchmark, stdlib_docs):
    subset = stdlib_docs[::20]  # the reference runs at a few MB/s
    total = sum(len(d) for _, d in subset)

    def run():
        for _, data in subset:
            _reference.tokenize_document(data)

    benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["MB"] = total / 1e6
    benchmark.extra_info["MB/s"] = total / 1e6 / benchmark.stats.stats.median
