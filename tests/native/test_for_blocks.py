"""The packed document ids of a saved index (frame-of-reference blocks) against the pure-Python oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex._native import lexical as native
from codelex._reference import for_blocks as ref

# Values as postings hold them: ascending runs (one per term) of any length, cut anywhere by the blocks.
_runs = st.lists(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=300).map(sorted), min_size=0,
                 max_size=6)
_small_runs = st.lists(st.lists(st.integers(0, 70_000), min_size=1, max_size=400).map(lambda v: sorted(set(v))),
                       min_size=0, max_size=6)


def _flatten(runs):
    values, bounds, at = [], [], 0
    for run in runs:
        values += run
        bounds.append((at, at + len(run)))
        at += len(run)
    return values, bounds


@settings(max_examples=200, deadline=None)
@given(st.one_of(_runs, _small_runs), st.data())
def test_packed_documents_match_the_reference(runs, data):
    values, bounds = _flatten(runs)
    packed = native.pack_doc_blocks(np.array(values, dtype=np.uint32))
    bits, mins, widths, offs = ref.pack(values)
    assert packed[0].tobytes() == bits  # byte for byte: the format is the oracle's
    assert packed[1].tolist() == mins and packed[2].tolist() == widths and packed[3].tolist() == offs
    n = len(values)
    positions = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=40)) if n else []
    ranges = []
    for begin, end in bounds:
        lo = data.draw(st.integers(begin, end))
        targets = data.draw(st.lists(st.one_of(st.sampled_from(values[begin:end] or [0]), st.integers(0, 2**32 - 1)),
                                     max_size=8))
        ranges += [(lo, end, d) for d in targets]
    at, every, found = native.read_doc_blocks(packed, n, positions, ranges)
    assert at == [values[p] for p in positions]
    assert every == values
    assert found == [ref.lower_bound(values, b, e, d) for b, e, d in ranges]
    assert [ref.get((bits, mins, widths, offs), p) for p in positions] == at


@pytest.mark.parametrize("lie", ["width", "offset", "padding"])
def test_forged_block_metadata_is_refused(lie):
    values = np.arange(0, 3000, 7, dtype=np.uint32)
    bits, mins, widths, offs = (a.copy() for a in native.pack_doc_blocks(values))
    if lie == "width":
        widths[1] = 33
    elif lie == "offset":
        offs[-1] += 1
    else:
        bits = bits[:-1]
    with pytest.raises(ValueError):
        native.read_doc_blocks((bits, mins, widths, offs), len(values), [0], [])
