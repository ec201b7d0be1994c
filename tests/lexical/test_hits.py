"""Result rows: the public Hit is Python's (the binding fills it), the field vocabulary has one source, and the
code ranking's parameters reach the native scorer as codelex.defaults states them."""

from __future__ import annotations

import copy
import pickle

import pytest

import codelex
from codelex import WordIndex
from codelex._native import lexical as native
from codelex._reference.bm25f import FIELDS, FieldParams
from codelex.defaults import BM25_K1, DEF_BOOST, FIELD_B, FIELD_WEIGHTS, NAME_BOOST
from codelex.lexical.hits import Hit


@pytest.fixture(scope="module")
def index():
    return WordIndex.build([("src/auth/login_form.py", "def authenticate_user(name): ...\n"),
                            ("src/db.py", "def load_user(user_id): ...\n")])


def test_hit_is_the_python_type_for_both_rankings(index):
    for ranking in ("code", "classic"):
        hits = index.search("authenticate user", ranking=ranking)
        assert hits and all(type(h) is Hit for h in hits)
        assert codelex.Hit is Hit
    code, classic = index.search("authenticate user")[0], index.search("authenticate user", ranking="classic")[0]
    assert classic.fields == ("body",) and "fields" not in classic.to_dict()
    assert set(code.fields) <= set(native.FIELD_NAMES) and code.to_dict()["fields"] == list(code.fields)


def test_hit_keeps_its_constructor_and_wire_shape():
    hit = Hit("a.py", 2, 3, 7)
    assert (hit.file, hit.score, hit.hits, hit.start_line, hit.end_line, hit.symbol, hit.fields) == \
        ("a.py", 2.0, 3, 7, 7, None, ("body",))
    assert type(hit.score) is float
    named = hit.with_symbol("Outer.method", 12)
    assert named.to_dict() == {"file": "a.py", "score": 2.0, "hits": 3, "startLine": 7, "endLine": 12,
                               "symbol": "Outer.method"}
    assert repr(named) == "Hit(file='a.py', score=2, hits=3, start_line=7, end_line=12, symbol='Outer.method')"
    assert Hit("a.py", 1.0, 1, 1, fields=None).fields == ("body",)
    assert pickle.loads(pickle.dumps(named)) == named and copy.deepcopy(named) == named
    assert hash(named) == hash(Hit("a.py", 2.0, 3, 7, 12, "Outer.method"))
    for bad in [lambda: Hit(None, 1.0, 1, 1), lambda: Hit("a", "1", 1, 1), lambda: Hit("a", 1.0, 1.5, 1),
                lambda: Hit("a", 1.0, 1, 1, symbol=3), lambda: Hit("a", 1.0, 1, 1, fields=["body"])]:
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(AttributeError):
        hit.file = "b.py"  # immutable


def test_binding_rows_are_plain_tuples_unless_told(index):
    live, view = index._live, index._view
    paths = view.table.paths.as_list()
    rows = live.search_hits(["user"], 5, paths, view.generation, 1.2, 0.75)
    assert rows and all(type(r) is tuple and len(r) == 7 for r in rows)
    # Without a table the hits are named from the index's own record of each slot's path: the same rows.
    assert live.search_hits(["user"], 5, None, view.generation, 1.2, 0.75) == rows
    assert live.search_hits(["user"], 5, None, view.generation + 1, 1.2, 0.75) is None  # another layout
    assert [Hit(*r) for r in rows] == live.search_hits(["user"], 5, paths, view.generation, 1.2, 0.75, row_type=Hit)

    class Wide(tuple):  # a subclass with storage of its own cannot be filled natively
        pass

    for bad in (list, Wide, "tuple"):
        with pytest.raises(TypeError):
            live.search_hits(["user"], 5, paths, view.generation, 1.2, 0.75, row_type=bad)


def test_field_vocabulary_has_one_source(index):
    # The binding exports the native tokenizer's prefix bytes; the terms the tokenizer wrote carry them.
    assert native.FIELD_NAMES == FIELDS == ("body", "dir", "name", "defs")
    assert native.FIELD_PREFIXES[0] == "" and len(set(native.FIELD_PREFIXES)) == 4
    vocab = index._vocab
    for field, token in (("dir", "auth"), ("name", "login"), ("defs", "authenticate")):
        prefix = native.FIELD_PREFIXES[native.FIELD_NAMES.index(field)]
        assert vocab.find(prefix + token) >= 0, (field, token)
        assert all(vocab.find(p + token) < 0 for p in native.FIELD_PREFIXES[1:] if p != prefix)
    assert vocab.find("\x04auth") < 0
    # Each field answers through its own prefix: a query matching only the file name names that field.
    assert index.search("form")[0].fields == ("name",)


def test_native_field_parameters_are_the_defaults(index):
    # Python always passes every parameter (the native FieldParams defaults are never used), read back here.
    assert index._ranking.native_params() == {"weights": FIELD_WEIGHTS, "bs": FIELD_B, "def_boost": DEF_BOOST,
                                              "name_boost": NAME_BOOST}
    assert index.k1 == BM25_K1 and index.field_weights == FIELD_WEIGHTS and index.field_b == FIELD_B
    reference = FieldParams()
    assert (reference.weights, reference.b) == (FIELD_WEIGHTS, FIELD_B)
    # A ranking made without its parameters is refused, never scored with the native defaults.
    blank = native.FieldRanking.__new__(native.FieldRanking)
    view = index._view
    with pytest.raises(ValueError, match="not initialized"):
        index._live.search_fields(["user"], 5, None, view.generation, blank, 1)
