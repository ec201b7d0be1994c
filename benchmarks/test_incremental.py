"""Per-edit updates, merges and persistence on the stdlib corpus (pytest-benchmark).

``python benchmarks/compare.py incremental`` prints the same figures as one
table, with ratios against the original implementation.
"""

import itertools
import random

import pytest

import codelex
from compare import small_edit


@pytest.fixture
def live_index(stdlib_docs):
    index = codelex.WordIndex.build(stdlib_docs, max_bytes=None)
    index.merge_ratio = None  # measure updates alone; merges are measured below
    return index


def test_update(benchmark, live_index, stdlib_docs):
    rng = random.Random(0)
    edits = itertools.cycle(
        [(path, small_edit(data, i)) for i, (path, data) in enumerate(rng.sample(stdlib_docs, 100))]
    )

    def update():
        path, data = next(edits)
        live_index.update(path, data)

    benchmark.pedantic(update, rounds=300, iterations=1, warmup_rounds=10)


def test_merge_500_file_delta(benchmark, live_index, stdlib_docs):
    rng = random.Random(1)
    sample = rng.sample(stdlib_docs, 500)

    def setup():
        for i, (path, data) in enumerate(sample):
            live_index.update(path, small_edit(data, i))

    benchmark.pedantic(live_index.merge, setup=setup, rounds=3, iterations=1)


def test_save(benchmark, live_index, tmp_path):
    benchmark.pedantic(live_index.save, args=(tmp_path,), rounds=5, iterations=1)
    benchmark.extra_info["bytes"] = (tmp_path / "index.clx").stat().st_size


@pytest.mark.parametrize("verify", [True, False])
def test_load_mmap(benchmark, live_index, tmp_path, verify):
    live_index.save(tmp_path)
    benchmark.pedantic(codelex.WordIndex.load, args=(tmp_path,), kwargs={"verify": verify}, rounds=10,
                       iterations=1)
