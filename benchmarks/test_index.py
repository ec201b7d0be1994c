"""Index build and query latency on the stdlib corpus (pytest-benchmark).

``python benchmarks/compare.py index`` prints the same figures as ratios
against bm25s, tantivy and rank_bm25 measured in one run.
"""

import pytest

import codelex
from queries import query_list


@pytest.fixture(scope="module")
def stdlib_index(stdlib_docs):
    return codelex.WordIndex.build(stdlib_docs, max_bytes=None)


def test_build(benchmark, stdlib_docs):
    index = benchmark.pedantic(codelex.WordIndex.build, args=(stdlib_docs,), kwargs={"max_bytes": None}, rounds=3,
                                iterations=1)
    benchmark.extra_info.update(index.stats())


@pytest.mark.parametrize("kind", ["plain", "filtered"])
def test_query(benchmark, stdlib_index, stdlib_docs, kind):
    queries = [q for q in query_list(stdlib_docs) if (":" in q) == (kind == "filtered")]

    def run():
        for q in queries:
            stdlib_index.search(q, limit=10)

    benchmark(run)
    benchmark.extra_info["queries"] = len(queries)
    benchmark.extra_info["us_per_query"] = benchmark.stats.stats.median / len(queries) * 1e6
