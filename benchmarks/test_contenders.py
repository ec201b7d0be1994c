"""Every installed contender on the stdlib corpus, side by side (pytest-benchmark).

``python benchmarks/compare.py suite --corpus stdlib`` measures the same in
fresh processes (with RSS, load and update figures) and prints ratios.
"""

from __future__ import annotations

import pytest

from contenders import all_contenders
from corpus import materialize
from suite import query_set

CONTENDERS = [c for c in all_contenders("stdlib") if c.installed() and not c.name.startswith("rg")]


@pytest.fixture(scope="module")
def corpus():
    root, paths = materialize("stdlib")
    return root, paths, query_set(root, paths)


@pytest.mark.parametrize("contender", CONTENDERS, ids=lambda c: c.name)
def test_build(benchmark, contender, corpus, tmp_path):
    root, paths, _ = corpus
    benchmark.pedantic(contender.build, args=(root, paths, tmp_path / "work"), rounds=2, iterations=1)


@pytest.mark.parametrize("contender", CONTENDERS, ids=lambda c: c.name)
def test_query(benchmark, contender, corpus, tmp_path):
    root, paths, queries = corpus
    contender.build(root, paths, tmp_path / "work")
    plain = queries["natural"] + queries["identifier"] + queries["pair"]

    def run():
        for q in plain:
            contender.search(q)

    benchmark(run)
    benchmark.extra_info["us_per_query"] = benchmark.stats.stats.median / len(plain) * 1e6
