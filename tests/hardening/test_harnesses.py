"""Short runs of the hardening harnesses (``hardening/``): the full runs and their figures are in
HARDENING.md; these keep every harness working and every kept fuzz input passing."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

HARDENING = Path(__file__).resolve().parents[2] / "hardening"
sys.path.insert(0, str(HARDENING))

import targets  # noqa: E402


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_fuzz_target_on_its_kept_corpus_and_random_inputs(name):
    fn, expected = targets.TARGETS[name], targets.EXPECTED[name]
    inputs = [p.read_bytes() for p in sorted((HARDENING / "corpus" / name).glob("*"))] if \
        (HARDENING / "corpus" / name).is_dir() else []
    rng = random.Random(name)
    inputs += [bytes(rng.randrange(256) for _ in range(rng.randrange(120))) for _ in range(60)]
    inputs += [b"", b"\x00", b"\xff" * 64, "getUserByID café Ωmega".encode()]
    for data in inputs:
        try:
            fn(data)
        except expected:
            pass


def test_crash_consistency_trials():
    import crash

    for kind in crash.KINDS:
        result = crash.run_kind(kind, trials=3)
        assert result["bad"] == 0, result


def test_corruption_of_every_member_is_detected():
    import corrupt

    rows = corrupt.run_loaders(seed=1, limit=150)
    assert {r["member"] for r in rows} == {"index.clx", "structure.clx", "structure.clx (lazy)", "embeddings",
                                           "listing.clx", "graph.clx", "graph.clx (prior)", "graph-counts.clx",
                                           "docs.clx", "docs.clx (store)"}
    for r in rows:
        assert r["wrong"] == 0 and r["crashed"] == 0, r
    for r in corrupt.run_project(2, seed=1):
        assert r["different"] == 0 and r["errors"] == 0, r


def test_soak_reads_are_consistent():
    import soak

    result = soak.soak_index(3.0, readers=2)
    assert result["errors"] == 0 and result["inconsistent_reads"] == 0 and result["fresh_mismatches"] == 0, result
    assert result["reads"] > 0 and result["versions"] > 0


@pytest.mark.parametrize("case", ["symlink-loops", "invalid-utf8-names", "long-path", "minified-512k-line"])
def test_hostile_tree(case, tmp_path):
    import hostile

    result = hostile.run_case(case, tmp_path)
    assert result["ok"], result
