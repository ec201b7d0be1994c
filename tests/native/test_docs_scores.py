"""The native docs scorer (csrc/score/docs_sections) against its pure-Python oracle, codelex.docs.scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex._native import text as native
from codelex.docs.scoring import (
    ALL_TERMS, MAX_COUNTED_OCCURRENCES, MIN_PHRASE, PHRASE_IN_HEADING, PHRASE_IN_TEXT, TERM_IN_HEADING,
    TERM_OCCURRENCE, score_lowered,
)

RULES = (PHRASE_IN_HEADING, PHRASE_IN_TEXT, TERM_IN_HEADING, TERM_OCCURRENCE, MAX_COUNTED_OCCURRENCES, ALL_TERMS)
_pieces = st.sampled_from(["a", "aa", "ab", "b", "é", "ß", "日本", "x.y", " ", "\n", "aaa", "ǆ"])
_strings = st.lists(_pieces, max_size=12).map("".join)
_words = st.lists(st.sampled_from(["a", "aa", "ab", "é", "日本", "x.y", "aaa", "b"]), min_size=1, max_size=4,
                  unique=True)


def _blob(values):
    encoded = [v.encode() for v in values]
    off = np.zeros(len(encoded) + 1, dtype=np.uint64)
    np.cumsum([len(e) for e in encoded], out=off[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), off


@settings(max_examples=300, deadline=None)
@given(sections=st.lists(st.tuples(_strings, _strings), min_size=1, max_size=8), words=_words, phrase=_strings,
       data=st.data())
def test_native_scores_equal_the_oracle_on_str(sections, words, phrase, data):
    headings, heading_off = _blob([h for h, _ in sections])
    texts, text_off = _blob([t for _, t in sections])
    candidates = data.draw(st.lists(st.integers(0, len(sections) - 1), max_size=10))
    passed = phrase.encode() if len(phrase) >= MIN_PHRASE else b""
    got = native.docs_section_scores(headings, heading_off, texts, text_off, np.asarray(candidates, np.uint32),
                                     [w.encode() for w in words], passed, RULES)
    want = [score_lowered(sections[i][0], sections[i][1], phrase, words) for i in candidates]
    assert got.tolist() == want
    # a may_hold that is exact (False only where a word is absent) changes nothing
    may_hold = np.array([[w in sections[i][0] or w in sections[i][1] for w in words] for i in candidates],
                        dtype=bool).reshape(len(candidates), len(words))
    again = native.docs_section_scores(headings, heading_off, texts, text_off, np.asarray(candidates, np.uint32),
                                       [w.encode() for w in words], passed, RULES, may_hold)
    assert again.tolist() == want


@given(text=_strings, word=st.sampled_from(["a", "aa", "日本", "ab"]), cap=st.integers(0, 7))
def test_count_occurrences_is_the_capped_non_overlapping_count(text, word, cap):
    assert native.count_occurrences(text.encode(), word.encode(), cap) == min(text.count(word), cap)


def test_bad_arguments_are_refused_before_memory_is_read():
    headings, heading_off = _blob(["a", "b"])
    texts, text_off = _blob(["x", "y"])
    for candidates in ([2], [7]):
        with pytest.raises(ValueError, match="outside"):
            native.docs_section_scores(headings, heading_off, texts, text_off, np.asarray(candidates, np.uint32),
                                       [b"a"], b"", RULES)
    with pytest.raises(ValueError, match="outside"):  # offsets past the blob
        native.docs_section_scores(headings, np.array([0, 1, 99], np.uint64), texts, text_off,
                                   np.asarray([1], np.uint32), [b"a"], b"", RULES)
    with pytest.raises(ValueError, match="empty"):
        native.docs_section_scores(headings, heading_off, texts, text_off, np.asarray([0], np.uint32), [b""], b"",
                                   RULES)
    with pytest.raises(ValueError, match="same sections"):
        native.docs_section_scores(headings, heading_off, texts, text_off[:2], np.asarray([0], np.uint32), [b"a"],
                                   b"", RULES)
    with pytest.raises(ValueError, match="may_hold"):
        native.docs_section_scores(headings, heading_off, texts, text_off, np.asarray([0], np.uint32), [b"a"], b"",
                                   RULES, np.ones((2, 1), bool))
