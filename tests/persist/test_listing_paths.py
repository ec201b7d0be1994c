"""The listing cache's paths are checked in one pass (``safefs.check_relatives``) exactly as one by one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex.errors import UnsafePathError
from codelex.safefs import check_relative, check_relatives

_parts = st.sampled_from(["", ".", "..", "...", ".a", "a.", "a..b", "src", "\u00e9", "x y", "/", "\x00", "\\", ":"])
_paths = st.lists(_parts, min_size=1, max_size=5).map("".join) | st.text(max_size=8)


def _one_by_one(rels):
    for rel in rels:
        try:
            check_relative(rel)
        except UnsafePathError as exc:
            return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(_paths, max_size=6))
def test_one_pass_agrees_with_one_by_one(rels):
    expected = _one_by_one(rels)
    if expected is None:
        check_relatives(rels)
    else:
        with pytest.raises(UnsafePathError) as err:
            check_relatives(rels)
        assert str(err.value) == expected  # the same path named, the same way


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "a//b", "a/", "./a", "a/./b", "../a", "a/..", "a/../b",
                                 "a\x00b", "\x00", "a/.", "."])
def test_every_unclean_path_is_refused_wherever_it_stands(bad):
    for rels in ([bad], ["ok.py", bad], [bad, "ok.py"], ["a/b.py", bad, "c/d.py"]):
        with pytest.raises(UnsafePathError):
            check_relatives(rels)


def test_clean_paths_pass_and_a_non_str_is_a_type_error():
    check_relatives(["a.py", ".hidden/x", "a/...", "a/..b/c", "b./c.", "\u00e9/\udcff"])
    check_relatives([])
    with pytest.raises(TypeError):
        check_relatives(["a", b"b"])


def test_the_listing_cache_reads_back_non_ascii_paths(tmp_path):
    from codelex.ingest import ListingRecord
    from codelex.persist.listing import load_listing, save_listing

    for candidates in (["a.py", "b/c.py"], ["a.py", "d\u00e9j\u00e0/vu.py", "x\udcff.py"]):
        record = ListingRecord("k", [("", 1), ("b", 2)], [("", 3, 4)], candidates, {"ignored": 1}, {})
        save_listing(record, tmp_path)
        back = load_listing(tmp_path)
        assert back is not None and back.candidates == candidates and back.dirs == record.dirs
