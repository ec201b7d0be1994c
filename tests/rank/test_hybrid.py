"""Chunks as documents, the fusion, and the hybrid searcher."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex.dense import FunctionEmbedder, StaticModelEmbedder, VectorCache, checked_vectors, embed_checked
from codelex.errors import EmbedderError
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, ChunkRow, HybridSearcher, chunk_rows, embedding_text
from codelex.rank.fusion import FUSIONS, Fusion, fuse, query_shape
from codelex.defaults import VECTOR_PRIOR_EXPONENT
from codelex.rank.pipeline import analyze_query, path_factor


def _corpus(rows):
    return ChunkCorpus.from_rows(rows)


def test_a_chunk_whose_symbol_names_the_query_outranks_a_mention():
    rows = [ChunkRow("src/app.py", 1, 3, "def setup():\n    register_handler(x)\n    return register_handler", None),
            ChunkRow("src/app.py", 4, 6, "def register_handler(h):\n    HANDLERS.append(h)", "register_handler"),
            ChunkRow("src/other.py", 1, 2, "x = register_handler\ny = register_handler", None)]
    lex = ChunkLexicalIndex(_corpus(rows))
    ranked, _ = lex.ranking("register_handler", 10)
    assert ranked[0] == 1
    # The path is a field too: a chunk of a file named after the query outranks a mention elsewhere.
    rows2 = [ChunkRow("lib/misc.py", 1, 2, "call(parser)\nparser.run()", None),
             ChunkRow("lib/parser.py", 1, 2, "call(parser)\nparser.run()", None)]
    assert ChunkLexicalIndex(_corpus(rows2)).ranking("parser", 10)[0][0] == 1


def test_chunk_index_per_file_replacement_equals_a_rebuild():
    a = [ChunkRow("a.py", 1, 1, "alpha beta", "alpha"), ChunkRow("a.py", 2, 2, "gamma", None)]
    b = [ChunkRow("b.py", 1, 1, "beta beta", None)]
    lex = ChunkLexicalIndex(_corpus(a + b))
    a2 = [ChunkRow("a.py", 1, 1, "delta", None)]
    lex.replace_file("a.py", a2)
    corpus = _corpus(a2 + b)
    lex.corpus = corpus
    fresh = ChunkLexicalIndex(corpus)
    for q in ("beta", "delta", "alpha", "gamma"):
        assert lex.ranking(q, 10) == fresh.ranking(q, 10)


def test_a_searcher_ranks_its_own_corpus_while_upkeep_moves_the_shared_index_on():
    """Found by the concurrency soak: a searcher read the shared index's newer corpus (IndexError, or rows
    of another snapshot)."""
    a = [ChunkRow("a.py", 1, 1, "alpha beta", "alpha")]
    b = [ChunkRow("b.py", 1, 1, "beta", None)]
    old = _corpus(a + b)
    lex = ChunkLexicalIndex(old)
    vectors = np.eye(2, 4, dtype=np.float32)
    searcher = HybridSearcher(old, lex, vectors, np.ones(2, dtype=bool), lambda text: np.eye(1, 4, dtype=np.float32)[0])
    grown = [ChunkRow("a.py", i, i, "beta gamma", None) for i in range(1, 6)]
    lex.replace_file("a.py", grown)  # what per-edit upkeep does while the searcher is in use
    lex.corpus = _corpus(grown + b)
    result = searcher.search("beta gamma")
    assert result.mode == "hybrid"
    assert {(h.path, h.start_line) for h in result.hits} <= {("a.py", 1), ("b.py", 1)}


def test_chunk_rows_partition_and_line_windows():
    text = "\n".join(f"x{i} = {i}" for i in range(200))
    rows = chunk_rows("m.txt", text)
    assert rows[0].start_line == 1 and rows[-1].end_line == 200
    assert all(r.end_line + 1 == s.start_line for r, s in zip(rows, rows[1:]))
    assert "\n".join(r.text for r in rows) == text


def test_query_shape():
    assert [query_shape(q) for q in ("getUserById", "Foo::bar", "snake_case", "JoinSet", "a.b")] == ["symbol"] * 5
    assert [query_shape(q) for q in ("how are routes registered", "timeout", "parse config")] == ["prose"] * 3


def test_fuse_top_n_and_full():
    vector = np.array([2, 0, 1, 3])
    lexical = [0, 3]
    f = Fusion("t", {"prose": (0.5, 0.5)}, 60, 2)
    # top 2 of each: vector 2, 0; lexical 0, 3. Row 0: 0.5/61 + 0.5/60 wins; then 2 (0.5/60) before 3 (0.5/61).
    assert fuse(vector, lexical, 4, f, 0.5, 0.5).tolist() == [0, 2, 3]
    full = FUSIONS["original"]
    order = fuse(vector, lexical, 4, full, 0.7, 0.3)
    # unmatched rows 1 and 2 follow the matched in row order: lexical ranks 0:0, 3:1, 1:2, 2:3.
    vr = {2: 0, 0: 1, 1: 2, 3: 3}
    lr = {0: 0, 3: 1, 1: 2, 2: 3}
    expect = sorted(range(4), key=lambda r: (-(0.7 / (60 + vr[r]) + 0.3 / (60 + lr[r])), r))
    assert order.tolist() == expect


def test_checked_vectors_refuse_bad_output():
    good = checked_vectors([[3.0, 4.0]], 1, 2, "m")
    assert np.allclose(good, [[0.6, 0.8]]) and good.dtype == np.float32
    with pytest.raises(EmbedderError, match="shape"):
        checked_vectors([[1.0, 2.0, 3.0]], 1, 2, "m")
    with pytest.raises(EmbedderError, match="NaN"):
        checked_vectors([[np.nan, 1.0]], 1, 2, "m")
    with pytest.raises(EmbedderError, match="zero vector"):
        checked_vectors([[0.0, 0.0]], 1, 2, "m")
    with pytest.raises(EmbedderError, match="not a float array"):
        checked_vectors([["a", "b"]], 1, 2, "m")
    with pytest.raises(TypeError):
        FunctionEmbedder(lambda t: t, name="", dimensions=2)
    with pytest.raises(EmbedderError, match="no model2vec model"):
        StaticModelEmbedder("/nonexistent/model")


def _searcher(rows, embedder, complete=True):
    corpus = _corpus(rows)
    cache = VectorCache(embedder)
    texts = [embedding_text(r) for r in corpus.rows]
    if complete:
        cache.embed_missing(corpus.keys, texts)
    else:
        cache.embed_missing(corpus.keys[:1], texts[:1])
    vectors, present = cache.matrix(corpus.keys)
    return HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, present,
                          lambda q: embed_checked(embedder, [q])[0])


ROWS = [ChunkRow("web/router.py", 1, 2, "def add(self, path, handler):\n    self.table[path] = handler", "Router.add"),
        ChunkRow("auth.py", 1, 2, "def check(user, password):\n    return user.password == password", "check"),
        ChunkRow("conf.py", 1, 2, "def parse(file):\n    return read(file)", "parse")]


def test_hybrid_finds_behaviour_without_the_words(make_static_model):
    e = StaticModelEmbedder(make_static_model())
    s = _searcher(ROWS, e)
    # "register routes": no chunk says register or routes, but the vectors are close to "route" ... "path".
    r = s.search("register routes")
    assert r.mode == "hybrid" and r.hits and r.hits[0].path == "web/router.py"
    assert r.hits[0].vector_rank == 1 and r.hits[0].lexical_rank is None
    assert s.search("the and for").hits == []  # stop words only: nothing
    alt = s.search("register", alternatives=["handler path"])
    assert alt.hits[0].path == "web/router.py"
    rel = s.related(0, limit=5)
    assert all(row != 0 for row, _ in rel) and len(rel) == 2


def test_incomplete_vectors_answer_lexically(make_static_model):
    e = StaticModelEmbedder(make_static_model())
    s = _searcher(ROWS, e, complete=False)
    r = s.search("password")
    assert r.mode == "lexical" and r.embedded == 1 and r.chunks == 3
    assert [h.path for h in r.hits] == ["auth.py"] and r.hits[0].vector_rank is None


def test_dimension_mismatch_is_an_error(make_static_model):
    e = StaticModelEmbedder(make_static_model())
    s = _searcher(ROWS, e)
    with pytest.raises(ValueError, match="dimensions"):
        s.vector_order(np.ones(3))


def test_query_class_reads_the_lexical_evidence():
    from codelex.rank import query_class

    rows = [ChunkRow("varint.go", 1, 3, "func ReadVarint(r io.Reader) (int64, error) {\n\treturn 0, nil\n}", None),
            ChunkRow("doc.go", 1, 1, "// reading varints from a stream", None)]
    corpus = _corpus(rows)
    lex = ChunkLexicalIndex(corpus)
    ranked, _ = lex.ranking("read varint", 10)
    assert query_class("read varint", ranked, corpus) == "defined"  # ReadVarint holds both words
    assert query_class("read stream", lex.ranking("read stream", 10)[0], corpus) == "prose"
    assert query_class("ReadVarint", [], corpus) == "symbol"


def test_a_capped_corpus_ranks_by_vector_among_the_rows_it_embedded(make_static_model):
    """Issue 29: on a huge tree only the first chunks by priority are embedded; the rest never will be, so the
    answer is hybrid over the embedded rows (not lexical forever), and a row without a vector is never ranked
    by vector nor has neighbours."""
    e = StaticModelEmbedder(make_static_model())
    corpus = _corpus(ROWS)
    cache = VectorCache(e)
    texts = [embedding_text(r) for r in corpus.rows]
    cache.embed_missing(corpus.keys, texts, priority=np.array([0, 1, 0]), limit=2)  # router.py and conf.py
    vectors, present = cache.matrix(corpus.keys)
    assert present.tolist() == [True, False, True]
    s = HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, present, lambda q: embed_checked(e, [q])[0],
                       partial=True)
    r = s.search("register routes")
    assert r.mode == "hybrid" and r.embedded == 2 and r.chunks == 3 and r.hits[0].path == "web/router.py"
    rows, _ = s.vector_ranking(embed_checked(e, ["password check"])[0])
    assert 1 not in rows.tolist()
    r = s.search("password")  # the lexical half still finds the row without a vector
    found = {h.path: h for h in r.hits}
    assert "auth.py" in found and found["auth.py"].vector_rank is None and found["auth.py"].lexical_rank == 1
    assert s.related(1) == [] and all(row != 1 for row, _ in s.related(0))
    plain = HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, present, lambda q: embed_checked(e, [q])[0])
    assert plain.search("register routes").mode == "lexical"  # without partial: waiting for the rest


FIXTURE = [
    ChunkRow("web/router.py", 1, 3, "class Router:\n    def add(self, path, handler):\n        self.table[path] = handler",
             "Router.add"),
    ChunkRow("web/router.py", 4, 5, "    def dispatch(self, path):\n        return self.table[path]()", "Router.dispatch"),
    ChunkRow("auth.py", 1, 2, "def check(user, password):\n    return user.password == password", "check"),
    ChunkRow("conf.py", 1, 2, "def parse(file):\n    return read(file)", "parse"),
    ChunkRow("io.py", 1, 2, "def write(file, data):\n    file.write(data)", "write"),
    ChunkRow("users.py", 1, 2, "class User:\n    password = None", "User"),
]
# (query, the file that answers it): some only the vectors find (no shared word), some only the words do.
FIXTURE_QUESTIONS = [("register routes", "web/router.py"), ("how is a handler added for a route", "web/router.py"),
                     ("return data", "io.py"), ("user password", "auth.py"), ("check user", "auth.py"),
                     ("config", "conf.py"), ("Router.add", "web/router.py"), ("User", "users.py")]


def test_adaptive_fusion_is_never_below_the_better_half_on_a_fixture(make_static_model):
    """Issue 29: on questions where only one half finds the answer, the adaptive fusion ranks at least as well as
    the better half, and strictly better than each half alone (each misses some)."""
    from codelex.rank.fusion import QueryRankings, fused_order

    e = StaticModelEmbedder(make_static_model())
    s = _searcher(FIXTURE, e)
    corpus = s.corpus

    def reciprocal_rank(rows, answer):
        files = list(dict.fromkeys(corpus.rows[int(r)].path for r in rows))
        return 1.0 / (files.index(answer) + 1) if answer in files else 0.0

    scores = {"lexical": 0.0, "vector": 0.0, "adaptive": 0.0, "original": 0.0}
    for question, answer in FIXTURE_QUESTIONS:
        lex_rows, lex_scores = s.lexical.pipeline_ranking(analyze_query(question), 50, corpus)
        vec_rows, sims = s.vector_ranking(embed_checked(e, [question])[0], 100)
        rankings = QueryRankings.of(question, corpus, vec_rows, sims, lex_rows, lex_scores)
        scores["lexical"] += reciprocal_rank(lex_rows, answer)
        scores["vector"] += reciprocal_rank(vec_rows, answer)
        fused = fused_order(rankings, FUSIONS["adaptive"], len(corpus), lambda r: corpus.rows[r].path)
        scores["adaptive"] += reciprocal_rank(fused, answer)
        via_search = [h.path for h in s.search(question, fusion="adaptive", per_file=1).hits]
        assert via_search == list(dict.fromkeys(corpus.rows[int(r)].path for r in fused))[:len(via_search)]
    assert scores["lexical"] < len(FIXTURE_QUESTIONS) and scores["vector"] < len(FIXTURE_QUESTIONS)
    assert scores["adaptive"] >= max(scores["lexical"], scores["vector"])
    assert scores["adaptive"] > min(scores["lexical"], scores["vector"])


def test_the_adaptive_weights_read_the_evidence():
    from codelex.rank.fusion import Adaptation, QueryRankings

    def rankings(cls="prose", names=False, agreement=5, best=0.6, sharpness=0.5):
        return QueryRankings("q", np.arange(3), np.zeros(3), [0, 1, 2], cls, names, agreement, best, sharpness)

    a = Adaptation()
    base = a.weights(rankings(), (0.7, 0.3))[0]
    assert a.weights(rankings(sharpness=0.9), (0.7, 0.3))[0] < base  # a sharp lexical ranking: lean lexical
    assert a.weights(rankings(names=True), (0.7, 0.3))[0] < base  # identifiers named: lean lexical
    assert a.weights(rankings(best=0.8), (0.7, 0.3))[0] > base  # a close vector match: lean vector
    assert a.weights(rankings(agreement=0), (0.7, 0.3))[0] > base  # the halves disagree: lean vector
    assert a.weights(rankings(cls="symbol"), (0.1, 0.9)) == (0.1, 0.9)  # identifiers keep their class's weights
    for r in (rankings(sharpness=1.0, names=True, best=-1.0), rankings(sharpness=0.0, best=2.0, agreement=0)):
        wv, wl = a.weights(r, (0.7, 0.3))
        assert 0.05 <= wv <= 0.95 and abs(wv + wl - 1) < 1e-12  # neither half is ever ignored


def test_related_lexically_shares_the_telling_identifiers(make_static_model):
    """Issue 29: until the vectors are there, related chunks are those sharing the chunk's identifiers."""
    from codelex.rank.hybrid import related_query

    assert related_query("def add(self, path, handler):\n    self.table[path] = handler", "Router.add") \
        .split()[:3] == ["add", "handler", "path"]
    assert "self" not in related_query("self.x = self.y") and related_query("a = b") == ""
    s = _searcher(FIXTURE, StaticModelEmbedder(make_static_model()), complete=False)
    found = s.related_lexical(0, limit=5)  # Router.add: its dispatch shares path and table
    assert found and found[0][0] == 1 and all(row != 0 for row, _ in found)


_PATHS = ["src/core.py", "src/util.py", "tests/test_core.py", "examples/demo.py", "docs/guide.md", "src/compat/old.py"]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 600), st.integers(1, 80), st.integers(0, 2**32 - 1), st.booleans(), st.integers(0, 3))
def test_the_prior_weighted_vector_ranking_is_the_brute_force_one(n, depth, seed, filtered, levels):
    """However deep it has to read the exact top-k (many demoted rows at the top make it read deeper), the
    vector half a fusion reads is every allowed row by similarity x its file's weight (negative similarities
    as they are), ties by row, cut at ``depth``."""
    rng = np.random.default_rng(seed)
    paths = np.sort(rng.choice(_PATHS, size=n, p=[0.1, 0.1, 0.5, 0.1, 0.1, 0.1]))  # (a corpus is in file order)
    rows = [ChunkRow(str(path), i + 1, i + 1, f"x{i} = {i}", None) for i, path in enumerate(paths)]
    corpus = _corpus(rows)
    # (few distinct values, ``levels`` of them, make ties; demoted rows lean towards the query)
    vectors = rng.integers(-levels, levels + 1, size=(n, 4)).astype(np.float32)
    vectors[paths == "tests/test_core.py", 0] += 3
    vectors[~vectors.any(axis=1)] = 1.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    mask = rng.random(n) < 0.7 if filtered else None
    searcher = HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, np.ones(n, dtype=bool))
    got_rows, got_weighted, got_sims = searcher.prior_vector_ranking(q, depth, mask)
    every, sims = searcher.vector_ranking(q)  # exact, every row
    weights = searcher.prior_weights()
    expected = {p: min(path_factor(corpus.units, p), 1.0) ** VECTOR_PRIOR_EXPONENT for p in _PATHS}
    assert weights.tolist() == pytest.approx([expected[str(p)] for p in paths])
    weighted = np.where(sims > 0, sims * weights[every], sims)
    keep = np.ones(every.size, dtype=bool) if mask is None else mask[every]
    order = np.lexsort((every[keep], -weighted[keep]))[:depth]
    assert got_rows.tolist() == every[keep][order].tolist()
    np.testing.assert_allclose(got_weighted, weighted[keep][order], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_sims, sims[keep][order], rtol=1e-12, atol=1e-12)


def test_the_vector_half_demotes_the_files_the_lexical_ranking_demotes():
    """A test file that reads like the code it tests is the vector half's nearest chunk; weighted by the
    path priors the lexical ranking uses, the source file comes first, and the weights are those priors."""
    rows = [ChunkRow("src/parse.py", 1, 2, "def parse(text): ...", "parse"),
            ChunkRow("tests/test_parse.py", 1, 2, "def test_parse(): parse('x')", "test_parse")]
    corpus = _corpus(rows)
    vectors = np.array([[0.8, 0.6], [1.0, 0.0]], dtype=np.float32)
    searcher = HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, np.ones(2, dtype=bool),
                              lambda text: np.array([1.0, 0.0], dtype=np.float32))
    raw, _ = searcher.vector_ranking(np.array([1.0, 0.0], dtype=np.float32))
    assert raw.tolist() == [1, 0]
    rows_, weighted, sims = searcher.prior_vector_ranking(np.array([1.0, 0.0], dtype=np.float32), 2)
    assert rows_.tolist() == [0, 1]
    from codelex.defaults import PIPELINE_TEST_FILE, VECTOR_PRIOR_EXPONENT

    assert searcher.prior_weights().tolist() == pytest.approx([1.0, PIPELINE_TEST_FILE ** VECTOR_PRIOR_EXPONENT])
    assert sims.tolist() == pytest.approx([0.8, 1.0])
    # ...and an answer's similarity is still the raw cosine.
    result = searcher.search("parse text", fusion="adaptive")
    assert {h.path: h.similarity for h in result.hits}["tests/test_parse.py"] == pytest.approx(1.0)


def test_the_vector_half_reads_deeper_when_demoted_rows_crowd_its_top_and_follows_the_stage_switches():
    """600 rows, the test files' leaning to the query: the first top-k read cannot certify the top 20, so it
    reads deeper, and the answer is still the brute-force one; switching the path stages off (an ablation)
    switches the weighting off too, and back on after, whatever was asked first."""
    from codelex.rank.pipeline import stages_off

    rng = np.random.default_rng(1)
    n = 600
    paths = np.sort(rng.choice(_PATHS, size=n, p=[0.1, 0.1, 0.5, 0.1, 0.1, 0.1]))
    corpus = _corpus([ChunkRow(str(p), i + 1, i + 1, f"x{i}", None) for i, p in enumerate(paths)])
    vectors = rng.integers(-2, 3, size=(n, 4)).astype(np.float32)
    vectors[paths == "tests/test_core.py", 0] += 3
    vectors[~vectors.any(axis=1)] = 1.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    searcher = HybridSearcher(corpus, ChunkLexicalIndex(corpus), vectors, np.ones(n, dtype=bool))
    q = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    reads = []
    plain = searcher.vector_ranking

    def counted(query_vector, depth=None, allowed=None):
        reads.append(depth)
        return plain(query_vector, depth, allowed)

    searcher.vector_ranking = counted
    with stages_off("path_kinds", "auxiliary", "prose_files"):
        unweighted, _, _ = searcher.prior_vector_ranking(q, 20)
        assert searcher.prior_weights().tolist() == [1.0] * n
    assert unweighted.tolist() == plain(q, 20)[0].tolist()
    reads.clear()
    rows, _, _ = searcher.prior_vector_ranking(q, 20)
    assert len(reads) > 1, reads  # (read deeper)
    every, sims = plain(q)
    weighted = np.where(sims > 0, sims * searcher.prior_weights()[every], sims)
    assert rows.tolist() == every[np.lexsort((every, -weighted))][:20].tolist()
    assert rows.tolist() != unweighted.tolist()
