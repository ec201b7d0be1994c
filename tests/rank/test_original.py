"""The original's ranking functions (rank.js): hand-computed cases, and property tests against the literal port."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex._reference import rank_js
from codelex.hybrid import (
    ChunkMatrix,
    ChunkRow,
    excerpt_of,
    fit_budget,
    fuse_rankings,
    lexical_scores,
    query_terms,
    pick_from,
    rank_order,
    select_from,
    split_identifier,
)
from codelex.rank.original import js_round4


def test_split_identifier():
    assert split_identifier("getUserById") == ["get", "User", "By", "Id"]
    assert split_identifier("HTTPServer") == ["HTTP", "Server"]
    assert split_identifier("parse_config2File") == ["parse", "config2", "File"]
    assert split_identifier("__") == []


def test_query_terms_keep_raw_and_parts_longest_first():
    assert query_terms("getUserById") == ["getuserbyid", "user", "get", "by", "id"]
    assert query_terms("how does the Router add a route") == ["router", "route", "add"]
    assert query_terms("a x") == []


def _matrix(texts, vectors=None, symbols=None, paths=None):
    rows = [ChunkRow(paths[i] if paths else f"f{i}.py", 1, t.count("\n") + 1, t, symbols[i] if symbols else None)
            for i, t in enumerate(texts)]
    vectors = np.eye(len(texts), 4, dtype=np.float32) if vectors is None else np.asarray(vectors, np.float32)
    return ChunkMatrix(rows, vectors)


def _js(matrix):
    rows = []
    for r in matrix.rows:
        d = {"path": r.path, "startLine": r.start_line, "endLine": r.end_line, "text": r.text}
        if r.symbol is not None:
            d["symbol"] = r.symbol
        rows.append(d)
    return {"rows": rows, "vectors": [float(x) for x in matrix.vectors.reshape(-1)], "dimensions": matrix.dimensions}


def test_lexical_scores_by_hand():
    m = _matrix(["route route", "nothing here", "a route"], symbols=["route", None, None])
    lexical, matched = lexical_scores(m, ["route"])
    idf = math.log(1 + 3 / (1 + 2))
    # Row 0: haystack "f0.py route route route" holds it 3 times, and its header (the symbol) too: x3.
    assert lexical[0] == pytest.approx(idf * (1 + math.log(3)) * 3)
    assert lexical[1] == 0 and matched.tolist() == [1, 0, 1]
    assert lexical[2] == pytest.approx(idf)


def test_rank_order_weights_and_ties():
    # Two rows, vectors tie-free; row 1 wins on vectors, row 0 on words.
    m = _matrix(["parse config", "other"], vectors=[[0.1, 0.9], [0.9, 0.1]])
    r = rank_order(m, [1.0, 0.0], "parse")
    # row 0: 0.7/(60+1) + 0.3/(60+0); row 1: 0.7/60 + 0.3/61: row 1 first.
    assert r.order.tolist() == [1, 0]
    r2 = rank_order(m, [1.0, 0.0], "parse", vector_weight=0.3, lexical_weight=0.7)
    assert r2.order.tolist() == [0, 1]
    assert r.vector_best == pytest.approx(0.9, abs=1e-4) and r.lexical_best > 0
    # Every score equal: ties by index.
    same = _matrix(["x", "x", "x"], vectors=[[1, 0]] * 3)
    assert rank_order(same, [1.0, 0.0], "zz").order.tolist() == [0, 1, 2]
    empty = ChunkMatrix([], np.zeros((0, 3)))
    assert rank_order(empty, [1, 0, 0], "q").order.tolist() == []


def test_fuse_rankings_by_hand():
    assert fuse_rankings([]) == [] and fuse_rankings([[], []]) == []
    assert fuse_rankings([[3, 1, 2]]) == [3, 1, 2]  # a single ranking as is
    assert fuse_rankings([[3, 1], [], [1, 3]]) == [1, 3]  # tie (1/60 + 1/61 each): smaller index first
    assert fuse_rankings([[5], [7, 5]]) == [5, 7]
    # A row missing from one ranking is not penalised: it just lacks that term.
    assert fuse_rankings([[1, 2], [2]]) == [2, 1]


def test_excerpt_and_select_budget_per_file_and_at_least_one():
    assert excerpt_of("a\nb\nc", 2) == ("a\nb", True)
    assert excerpt_of("a\nb", 2) == ("a\nb", False)
    long = "\n".join(f"line {i}" for i in range(100))
    m = _matrix([long, long, "short", long], paths=["a.py", "a.py", "a.py", "b.py"])
    sim = np.array([0.5, 0.4, 0.3, 0.2])
    picked = select_from([0, 1, 2, 3], m, sim, total_lines=150)
    # 80 lines for the first, the remaining 70 for the second of a.py, a.py's third is over the per-file cap,
    # and the budget is spent before b.py.
    assert [(p.row, len(p.excerpt.split("\n")), p.truncated) for p in picked] == [(0, 80, True), (1, 70, True)]
    one = select_from([3, 0], m, sim, total_lines=0)
    assert [(p.row, len(p.excerpt.split("\n"))) for p in one] == [(3, 1)]  # at least one, however small
    assert [p.row for p in select_from([9, -1, 2], m, sim)] == [2]  # indices outside the rows are skipped
    assert len(select_from([0, 3, 2], m, sim, limit=2)) == 2
    assert picked[0].to_dict()["similarity"] == 0.5
    # The same, in two steps that say what the budget cut: b.py's chunk was left out; a larger budget cuts nothing.
    whole = pick_from([0, 1, 2, 3], m, sim)
    assert [(p.row, len(p.excerpt.split("\n"))) for p in whole] == [(0, 80), (1, 80), (3, 80)]
    kept, omitted = fit_budget(whole, 150)
    assert kept == picked and omitted == 1
    assert fit_budget(whole, 240) == (whole, 0)
    assert fit_budget(whole, 239)[0][2].truncated and fit_budget(whole, 239)[1] == 0


def test_js_rounding():
    assert js_round4(0.03125) == 0.0313  # a binary half: away from zero, as toFixed
    assert js_round4(-0.03125) == -0.0313
    assert js_round4(0.12344999) == 0.1234
    assert js_round4(1.00005) == 1.0001 or js_round4(1.00005) == 1.0  # whatever the exact binary value says
    assert js_round4(1.00005) == rank_js.to_fixed4(1.00005)


_words = st.sampled_from(["get", "User", "byId", "parse", "config", "route", "the", "x", "getUserById",
                          "parse_config", "a\nb", "route()", " "])
_text = st.lists(_words, max_size=8).map(" ".join)


@settings(max_examples=120, deadline=None)
@given(texts=st.lists(_text, min_size=0, max_size=12), query=_text, data=st.data(),
       weights=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_rank_order_equals_the_literal_port(texts, query, data, weights):
    d = 3
    n = len(texts)
    vectors = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.5, -0.25, 1.0, 0.3]), min_size=d,
                                                   max_size=d), min_size=n, max_size=n)), dtype=np.float32)
    vectors = vectors.reshape(n, d)
    q = data.draw(st.lists(st.sampled_from([0.0, 1.0, 0.5, -0.7]), min_size=d, max_size=d))
    symbols = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(["getUserById", "Router.route"])),
                                 min_size=n, max_size=n))
    m = _matrix(texts, vectors, symbols, [f"f{i % 3}.py" for i in range(n)])
    ours = rank_order(m, q, query, vector_weight=weights[0], lexical_weight=weights[1])
    ref = rank_js.rank_order(_js(m), q, query, weights[0], weights[1])
    assert ours.order.tolist() == ref["order"]
    assert ours.similarity.tolist() == ref["similarity"]
    assert (ours.vector_best, ours.lexical_best) == (ref["vectorBest"], ref["lexicalBest"])
    assert query_terms(query) == rank_js.query_terms(query)
    lim = data.draw(st.integers(1, 6))
    per = data.draw(st.integers(1, 3))
    ex = data.draw(st.integers(1, 5))
    total = data.draw(st.integers(-2, 12))
    order = data.draw(st.lists(st.integers(-1, n + 1), max_size=n + 3))
    got = [s.to_dict() for s in select_from(order, m, ours.similarity, limit=lim, per_file=per, excerpt_lines=ex,
                                            total_lines=total)]
    assert got == rank_js.select_from(order, _js(m), ref["similarity"], lim, per, ex, total)
    # The budget applied after the pick is the seed's selection, and says how many results it left out.
    picked = pick_from(order, m, ours.similarity, limit=lim, per_file=per, excerpt_lines=ex)
    kept, omitted = fit_budget(picked, total)
    assert [s.to_dict() for s in kept] == got and omitted == len(picked) - len(got) >= 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 8), max_size=8), max_size=5))
def test_fuse_rankings_equals_the_literal_port(rankings):
    assert fuse_rankings(rankings) == rank_js.fuse_rankings(rankings)
