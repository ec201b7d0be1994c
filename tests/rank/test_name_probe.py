"""The name-cover stage finds the names that hold a query's probe by searching a file's joined names: the same
names as testing each one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codelex.rank import pipeline

NAME = st.text(alphabet="abcXYZ_Éé9\n", min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(names=st.frozensets(NAME, max_size=30), probe=st.text(alphabet="abcxyz_é9", min_size=1, max_size=4))
def test_names_holding_the_probe_are_those_a_name_by_name_test_finds(names, probe):
    expected = {name for name in names if probe in name.lower() or not name.isascii()}
    got = pipeline._names_holding(pipeline._lowered_names(names), probe)
    assert sorted(got) == sorted(expected)
