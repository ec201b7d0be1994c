"""A posting's lines are nibble varints (csrc/lexical/line_lists.hpp): far-apart lines, odd nibble
positions at every join, the checkpoint walk, per-edit documents and merges all give the reference's
best lines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelex import WordIndex, _reference

from .test_index import assert_same

# Gaps around each unit boundary (a delta of 8 takes two units, 64 three, 512 four...).
GAPS = st.one_of(st.integers(0, 40), st.sampled_from([7, 8, 63, 64, 511, 512, 4095, 4096, 32767, 32768]),
                 st.integers(0, 70_000))
LINE = st.sampled_from(["alpha", "beta", "gamma beta", "delta alpha", "beta beta", "omega"])
DOC = st.lists(st.tuples(GAPS, LINE), min_size=1, max_size=10)
QUERIES = ("alpha", "beta", "gamma beta", "alpha delta", "omega beta", "missing")


def _text(doc: list[tuple[int, str]]) -> str:
    return "".join("\n" * gap + words + "\n" for gap, words in doc)


def _check(index: WordIndex, corpus: list[tuple[str, str]]) -> None:
    ref = _reference.ReferenceIndex(corpus)
    for query in QUERIES:
        assert_same(index.search(query, limit=20, ranking="classic"), ref.search(query, limit=20))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=st.lists(DOC, min_size=1, max_size=5), workers=st.integers(1, 2), edited=DOC,
       which=st.integers(0, 4))
def test_far_apart_lines_match_the_reference_through_joins_saves_walks_edits_and_merges(
        tmp_path_factory, docs, workers, edited, which):
    corpus = [(f"src/f{i}.py", _text(d)) for i, d in enumerate(docs)]
    from codelex.lexical import build as bulk

    defaults = dict(bulk.build_into.__kwdefaults__)
    bulk.build_into.__kwdefaults__["batch_docs"] = 1  # a batch per document: every join may start mid-byte
    try:
        index = WordIndex.build(corpus, workers=workers)
    finally:
        bulk.build_into.__kwdefaults__.update(defaults)
    _check(index, corpus)
    d = tmp_path_factory.mktemp("idx")
    index.save(d)  # a sorted save renumbers the terms: every run is copied again
    loaded = WordIndex.load(d)
    loaded._live.set_line_starts_max(-1)  # lines found from their checkpoints, skipping 16 units a word
    _check(loaded, corpus)
    path = corpus[which % len(corpus)][0]
    loaded.update(path, _text(edited))  # a per-edit document: its lines in the delta
    corpus = [(p, _text(edited) if p == path else t) for p, t in corpus]
    _check(loaded, corpus)
    assert loaded.merge()  # base and delta runs joined at any nibble position
    _check(loaded, corpus)


def test_a_line_past_two_million_takes_eight_units_and_reads_back():
    far = 2_100_000  # past 2**21: the delta needs eight units
    corpus = [("src/far.py", "\n" * far + "needle here\n" + "needle again\n"), ("src/near.py", "needle\n")]
    index = WordIndex.build(corpus, max_bytes=None)
    hits = {h.file: h.start_line for h in index.search("needle here", limit=5, ranking="classic")}
    assert hits["src/far.py"] == far + 1
    assert hits["src/near.py"] == 1


@pytest.mark.parametrize(("flip", "reason"), [("truncate", "do not end at the line data size"),
                                              ("padding", "padding is not 0"),
                                              ("continuation", "malformed or truncated posting lines")])
def test_malformed_nibble_streams_are_refused_without_digests(tmp_path, flip, reason):
    """A file without this user's digests is validated in full: a stream cut short, a non-zero padding
    nibble or units that never end are named, never read past."""
    import numpy as np

    from codelex import IndexFormatError
    from codelex.persist.lexical import load_lexical

    corpus = [("src/a.py", "alpha\n\n\nbeta alpha\n"), ("src/b.py", "alpha beta\n" * 3)]  # an odd stream
    WordIndex.build(corpus).save(tmp_path)
    snap = load_lexical(tmp_path, mmap=False, verify=False)
    data = np.array(snap.line_data, copy=True)
    if flip == "truncate":
        data = data[:-1]
    elif flip == "padding":
        data[-1] |= 0xF0
    else:
        data[:-1] = 0x88  # every unit continues (the padding left 0)
    snap.line_data = data
    snap.digests = None
    snap.trusted = False
    with pytest.raises(IndexFormatError, match=reason):
        WordIndex.from_snapshot(snap)


def test_a_last_checkpoint_at_the_top_of_the_range_is_refused_not_read(tmp_path):
    """(2**64 - 1 + 1) / 2 wraps to 0: the size check must not, or an empty stream's odd 'padding' is read
    at 2**63."""
    import numpy as np

    from codelex import IndexFormatError
    from codelex.persist.lexical import load_lexical

    WordIndex.build([]).save(tmp_path)
    snap = load_lexical(tmp_path, mmap=False, verify=False)
    assert len(snap.line_data) == 0
    snap.line_ckpt_base = np.array([2**64 - 1], dtype=np.uint64)
    snap.digests = None
    snap.trusted = False
    with pytest.raises(IndexFormatError, match="line"):
        WordIndex.from_snapshot(snap)
