"""Word index: golden scores, filters, priors, bad input, native == reference."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codelex
from codelex import QueryError, WordIndex, _reference
from codelex._native import lexical as native_lexical
from codelex._reference import filters_predicate, prior_multiplier
from codelex.query import paths_predicate

FIXTURE_A = [
    ("src/auth/login.ts", "export function authenticateUser(credentials) {\n  return verifyPassword(credentials);\n}"),
    ("src/user/profile.ts", "export function loadUserProfile(userId) {\n  return db.users.find(userId);\n}"),
    ("src/util/format.ts", "export function formatDate(date) {\n  return date.toISO();\n}"),
]


@pytest.fixture(scope="module")
def index_a():
    return WordIndex.build(FIXTURE_A)


def scores(hits):
    return [(h.file, round(h.score, 6), h.hits, h.start_line) for h in hits]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("authenticate user", [("src/auth/login.ts", 1.56093, 2, 1), ("src/user/profile.ts", 0.58912, 2, 1)]),
        ("authenticateUser", [("src/auth/login.ts", 2.61619, 3, 1), ("src/user/profile.ts", 0.58912, 2, 1)]),
        ("profile", [("src/user/profile.ts", 0.859573, 1, 1)]),
        ("user", [("src/user/profile.ts", 0.58912, 2, 1), ("src/auth/login.ts", 0.50567, 1, 1)]),
        ("kubernetes helm chart", []),
    ],
)
def test_golden_fixture_a(index_a, query, expected):
    got = index_a.search(query, ranking="classic")
    assert [(f, hits, line) for f, _, hits, line in scores(got)] == [(f, h, ln) for f, _, h, ln in expected]
    for hit, (_, score, _, _) in zip(got, expected):
        assert hit.score == pytest.approx(score, abs=1e-5)
        assert hit.end_line == hit.start_line


def test_fixture_a_statistics(index_a):
    assert [index_a.document_length(p) for p, _ in FIXTURE_A] == [8, 13, 8]
    stats = index_a.stats()
    assert stats["files"] == 3 and stats["total_tokens"] == 29
    assert stats["index_bytes"] > 0
    assert len(index_a) == 3 and index_a.files == [p for p, _ in FIXTURE_A]


def test_hit_shape(index_a):
    hit = index_a.search("authenticate user", limit=1, ranking="classic")[0]
    assert hit.to_dict() == {"file": "src/auth/login.ts", "score": hit.score, "hits": 2, "startLine": 1, "endLine": 1}
    assert "login.ts" in repr(hit)
    assert hit == codelex.Hit(hit.file, hit.score, hit.hits, hit.start_line)


def test_golden_priors():
    idx = WordIndex.build([
        ("src/widget.ts", "function renderWidget() {}"),
        ("tests/widget.test.ts", "function renderWidget() {}"),
        ("vendor/widget.ts", "function renderWidget() {}"),
        ("docs/widget.md", "renderWidget renders the widget"),
    ])
    got = {h.file: h.score for h in idx.search("render widget", ranking="classic")}
    assert got["src/widget.ts"] == pytest.approx(0.2238, abs=1e-5)
    assert got["docs/widget.md"] == pytest.approx(0.089644, abs=1e-5)
    assert got["tests/widget.test.ts"] == pytest.approx(0.06714, abs=1e-5)
    assert got["vendor/widget.ts"] == pytest.approx(0.06714, abs=1e-5)
    assert [h.file for h in idx.search("render widget")][0] == "src/widget.ts"
    # Without priors every file scores on BM25 alone.
    plain = idx.search("render widget", demote_test_vendor=False, demote_docs=False, ranking="classic")
    assert {h.file: h.score for h in plain}["tests/widget.test.ts"] == pytest.approx(0.2238, abs=1e-5)


def test_priors_use_relative_paths_only():
    # A project living under build/ or tests/ is not demoted as a whole.
    assert prior_multiplier("src/a.py") == 1.0
    assert prior_multiplier("dist/a.js") == 0.3
    assert prior_multiplier("a.spec.ts") == 0.3
    assert prior_multiplier("docs/x.md") == 0.5
    assert prior_multiplier("tests/x.json") == pytest.approx(0.15)


def test_golden_centrality():
    idx = WordIndex.build([("src/a.ts", "function sharedHelper() {}"), ("src/b.ts", "function sharedHelper() {}")])
    hits = idx.search("shared helper", ranking="classic")
    assert [h.file for h in hits] == ["src/a.ts", "src/b.ts"]
    assert hits[0].score == hits[1].score == pytest.approx(0.364643, abs=1e-5)
    boosted = idx.search("shared helper", centrality={"src/b.ts": 25}, ranking="classic")
    assert boosted[0].file == "src/b.ts"
    assert boosted[0].score == pytest.approx(0.661654, abs=1e-5)


def test_centrality_from_reverse_deps():
    deps = {"a.ts": ["x", "y", "z"], "b.ts": [], "c.ts": ["q"]}
    assert codelex.centrality_from_reverse_deps(deps) == {"a.ts": 3, "c.ts": 1}
    assert codelex.centrality_from_reverse_deps(None) == {}
    assert codelex.centrality_from_reverse_deps(deps, normalize=str.upper) == {"A.TS": 3, "C.TS": 1}


# --- query language ----------------------------------------------------------


@pytest.mark.parametrize("query", ["lang:jsts rank", "file:clients/ rank", "ext:ts rank", "-file:test rank"])
def test_single_filters(query):
    parsed = codelex.parse_query(query)
    assert parsed.terms == "rank" and len(parsed.filters) == 1


def test_filters_in_order():
    parsed = codelex.parse_query("lang:ts file:clients/ -file:test rank")
    assert [(f.key, f.value, f.negated) for f in parsed.filters] == [
        ("lang", "ts", False), ("file", "clients/", False), ("file", "test", True)]
    assert parsed.terms == "rank"


@pytest.mark.parametrize(
    "query", ["std::vector rank", "error:foo", "http://example.com", "TODO:fixme", "C:\\Users\\foo", "type:foo rank",
              "-rank other", "lang: rank"])
def test_colon_terms_pass_through(query):
    parsed = codelex.parse_query(query)
    assert parsed.filters == ()
    assert parsed.terms == query


def test_plain_text_has_no_filters():
    assert codelex.parse_query("  parse   config ").filters == ()
    assert codelex.parse_query("  parse   config ").terms == "parse config"


def test_a_bad_path_glob_is_a_query_error(index_a):
    for bad in ("path:[z-a] user", "-path:[z-a]", "path:" + "x" * 5000 + " user"):
        with pytest.raises(QueryError, match="bad glob"):
            index_a.search(bad)


def test_unknown_lang_raises_only_when_applied(index_a):
    parsed = codelex.parse_query("lang:notalang user")
    assert parsed.filters[0].value == "notalang"
    with pytest.raises(QueryError) as err:
        index_a.search("lang:klingon user")
    msg = str(err.value)
    assert 'Unknown lang: "klingon"' in msg
    assert ", ".join(sorted(codelex.KINDS)) in msg
    assert isinstance(err.value, ValueError)
    with pytest.raises(QueryError):
        index_a.search("user", lang="klingon")
    with pytest.raises(QueryError):
        index_a.search("lang:klingon")  # filter-only, still validated


def test_every_kind_is_accepted(index_a):
    for kind in codelex.KINDS:
        index_a.search(f"lang:{kind} user")
        index_a.search("user", lang=kind.upper())
    assert codelex.CODE_KINDS.isdisjoint(codelex.NON_CODE_KINDS)
    assert codelex.CODE_KINDS | codelex.NON_CODE_KINDS == set(codelex.KINDS)


def test_filter_predicates():
    def ok(q, path):
        return filters_predicate(codelex.parse_query(q).filters)(path)

    assert ok("lang:python x", "scripts/tool.py") and not ok("lang:python x", "src/tool.ts")
    assert ok("ext:.ts x", "src/tool.ts") and ok("ext:ts x", "src/tool.ts") and not ok("ext:ts x", "src/tool.tsx")
    assert ok("file:clients/ x", "clients/word-index.ts") and not ok("file:clients/ x", "tools/symbol-search.ts")
    assert ok("file:clients\\ x", "clients/word-index.ts")
    assert not ok("file:CLIENTS/ x", "clients/word-index.ts")  # case-sensitive on POSIX
    assert ok("lang:python lang:go x", "a.go") and ok("lang:python lang:go x", "a.py")
    assert not ok("lang:python file:src/ x", "lib/a.py")
    assert not ok("lang:python -file:test x", "test/a.py")
    assert ok("lang:docker x", "deploy/Dockerfile") and ok("lang:cmake x", "CMakeLists.txt")
    # path: a glob over the whole path, or a directory and all under it: where -file:test (a substring)
    # would hide pytest's own sources (src/_pytest/), -path:testing leaves out its tests only.
    assert not ok("-file:test x", "src/_pytest/main.py") and ok("-path:testing x", "src/_pytest/main.py")
    assert not ok("-path:testing x", "testing/test_main.py") and ok("-path:testing x", "testing.py")
    assert ok("path:src/**/*.py x", "src/a/b.py") and not ok("path:src/**/*.py x", "lib/src/b.py")
    assert ok("path:**/tests/** x", "a/tests/b.py") and ok("path:{src,lib}/*.ts x", "lib/a.ts")


INLINE = FIXTURE_A + [
    ("scripts/authenticate.py", "def authenticate(user):\n    return user"),
    ("src/auth/login.test.ts", "test('user profile', () => loadUserProfile())"),
]


@pytest.fixture(scope="module")
def index_inline():
    return WordIndex.build(INLINE)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("lang:python user", {"scripts/authenticate.py"}),
        ("file:auth/ user", {"src/auth/login.ts", "src/auth/login.test.ts"}),
        ("file:auth/ -file:test user", {"src/auth/login.ts"}),
        ("-file:test profile", {"src/user/profile.ts"}),
        ("lang:jsts file:src/ -file:test user", {"src/auth/login.ts", "src/user/profile.ts"}),
        ("lang:go user", set()),
        ("ext:py user", {"scripts/authenticate.py"}),
        ("lang:python lang:jsts -file:test -file:profile user", {"scripts/authenticate.py", "src/auth/login.ts"}),
        ("lang:python", set()),
    ],
)
def test_inline_filters(index_inline, query, expected):
    assert {h.file for h in index_inline.search(query)} == expected


def test_filtered_scores_equal_unfiltered(index_inline):
    full = {h.file: h for h in index_inline.search("user profile")}
    for query in ["file:src/ user profile", "-file:test user profile", "lang:jsts user profile"]:
        for hit in index_inline.search(query):
            assert hit.score == full[hit.file].score
            assert hit.hits == full[hit.file].hits


def test_structured_parameters(index_inline):
    assert {h.file for h in index_inline.search("user", paths=["src"])} == {
        "src/auth/login.ts", "src/user/profile.ts", "src/auth/login.test.ts"}
    assert {h.file for h in index_inline.search("user", paths=["src/**/*.ts", " "], lang="JSTS")} == {
        "src/auth/login.ts", "src/user/profile.ts", "src/auth/login.test.ts"}
    assert {h.file for h in index_inline.search("user", paths="scripts/")} == {"scripts/authenticate.py"}
    assert {h.file for h in index_inline.search("user", lang="python")} == {"scripts/authenticate.py"}
    assert {h.file for h in index_inline.search("user", paths=["src/{auth,util}"])} == {
        "src/auth/login.ts", "src/auth/login.test.ts"}
    assert index_inline.search("user", paths=[""]) == index_inline.search("user")


def test_paths_predicate_globs():
    pred = paths_predicate(["**/*.py"])
    assert pred("a.py") and pred("x/y/a.py") and not pred("a.pyc")
    assert paths_predicate(["src/*.ts"])("src/a.ts") and not paths_predicate(["src/*.ts"])("src/x/a.ts")
    assert paths_predicate(["src/.hidden"])("src/.hidden/a.ts")
    assert paths_predicate([]) is None and paths_predicate(None) is None


# --- bad input ---------------------------------------------------------------


def test_bad_input(index_a):
    assert index_a.search("") == []
    assert index_a.search("the and for const") == []
    assert index_a.search("user", limit=0) == []
    assert index_a.search("user", limit=-3) == []
    assert len(index_a.search("user", limit=1)) == 1
    with pytest.raises(TypeError):
        index_a.search(None)
    with pytest.raises(TypeError):
        index_a.search(b"user")
    with pytest.raises(TypeError):
        index_a.search("user", limit="3")
    with pytest.raises(TypeError):
        WordIndex.build([("a.py", 3)])
    with pytest.raises(TypeError):
        WordIndex.build([(3, "x")])
    with pytest.raises(ValueError):
        WordIndex.build([("a\x00.py", "x")])
    with pytest.raises(TypeError):
        WordIndex.build(["just-a-string"])


def test_long_query_is_handled(index_a):
    query = " ".join(f"word{i}" for i in range(10_000)) + " authenticate"
    hits = index_a.search(query)
    assert hits[0].file == "src/auth/login.ts"


def test_empty_index():
    idx = WordIndex.build([])
    assert len(idx) == 0 and idx.search("anything") == [] and idx.stats()["files"] == 0


def test_best_line_is_the_most_informative():
    text = "user = 1\nother = 2\nauthenticate(user)\nuser2 = user\n"
    idx = WordIndex.build([("a.py", text), ("b.py", "user only")])
    hit = idx.search("authenticate user")[0]
    assert hit.file == "a.py" and hit.start_line == 3


def test_repeated_path_keeps_last_content():
    idx = WordIndex.build([("a.py", "alpha"), ("a.py", "beta")])
    assert len(idx) == 1 and idx.search("alpha") == [] and idx.search("beta")[0].file == "a.py"


# --- native == reference -----------------------------------------------------

WORDS = ["alpha", "beta", "gammaDelta", "get_user", "HTTPServer", "id", "x", "if", "naïve", "Σίσυφος", "user"]
PATHS = ["src/a.py", "src/b.ts", "tests/test_a.py", "docs/readme.md", "vendor/lib.js", "lib/c.go", "pkg/d.rs",
         "z.json", "src/deep/e.py"]

line_st = st.lists(st.sampled_from(WORDS + [" ", "(", "=", "."]), max_size=8).map(" ".join)
doc_st = st.lists(line_st, max_size=6).map(lambda lines: "\n".join(lines))
corpus_st = st.lists(st.tuples(st.sampled_from(PATHS), doc_st), max_size=9).map(lambda d: list(dict(d).items()))
query_st = st.lists(st.sampled_from(WORDS + ["missing"]), min_size=1, max_size=4).map(" ".join)


def assert_same(native, reference):
    assert [h.file for h in native] == [r[0] for r in reference]
    for h, (path, score, hits, line) in zip(native, reference):
        assert math.isclose(h.score, score, rel_tol=1e-9), (h, score)
        assert (h.hits, h.start_line) == (hits, line)


@settings(max_examples=300, deadline=None)
@given(corpus_st, query_st, st.integers(min_value=1, max_value=12), st.booleans(), st.booleans(), st.booleans())
def test_search_matches_reference(corpus, query, limit, demote_tv, demote_docs, walk_lines):
    native = WordIndex.build(corpus)
    if walk_lines:  # a large base's path: lines found from their checkpoints, no per-posting offsets
        native._live.set_line_starts_max(-1)
    ref = _reference.ReferenceIndex(corpus)
    got = native.search(query, limit=limit, demote_test_vendor=demote_tv, demote_docs=demote_docs, ranking="classic")

    def mult(path):
        return prior_multiplier(path, demote_test_vendor=demote_tv, demote_docs=demote_docs)

    assert_same(got, ref.search(query, limit=limit, multiplier=mult))


@settings(max_examples=200, deadline=None)
@given(corpus_st, query_st, st.sampled_from(["lang:python", "file:src/", "-file:test", "ext:ts", "lang:go lang:rust",
                                             "lang:python -file:deep", "file:src/ file:lib/", "-path:src",
                                             "path:**/*.py", "path:{src,lib}/* lang:python", "-path:src/**/deep*"]),
       st.dictionaries(st.sampled_from(PATHS), st.integers(0, 50), max_size=4))
def test_filtered_search_matches_reference(corpus, query, filters, centrality):
    native = WordIndex.build(corpus)
    ref = _reference.ReferenceIndex(corpus)
    got = native.search(f"{filters} {query}", limit=50, centrality=centrality, ranking="classic")
    pred = filters_predicate(codelex.parse_query(filters).filters)
    expected = ref.search(query, limit=50, allowed=pred,
                          multiplier=lambda p: prior_multiplier(p, centrality=centrality))
    assert_same(got, expected)


@settings(max_examples=100, deadline=None)
@given(corpus_st)
def test_statistics_match_reference(corpus):
    native = WordIndex.build(corpus)
    ref = _reference.ReferenceIndex(corpus)
    stats = native.stats()
    assert stats["files"] == len(ref.doc_len)
    assert stats["tokens"] == len(ref.postings)
    assert stats["postings"] == sum(len(lines) for files in ref.postings.values() for lines in files.values())
    assert stats["total_tokens"] == ref.total_tokens
    for path, _ in corpus:
        assert native.document_length(path) == ref.doc_len[path]


def _exported(docs):
    idx = WordIndex.build(docs)
    arrays, _, _, mtime, size = idx._live.export()
    blob, offsets = native_lexical.encode_paths(idx.files)
    return idx, arrays, np.frombuffer(blob, dtype=np.uint8), offsets, mtime, size


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda a: a.__setitem__("post_doc", np.full_like(a["post_doc"], 7)),
        lambda a: a.__setitem__("post_tf", a["post_tf"].astype(np.int64)),
        lambda a: a.__setitem__("post_tf", np.zeros_like(a["post_tf"])),
        lambda a: a.__setitem__("post_doc", a["post_doc"][::-1].copy()),
        lambda a: a.__setitem__("line_data", a["line_data"][:-1].copy()),
        lambda a: a.__setitem__("line_data", np.append(a["line_data"], np.uint8(1))),
        lambda a: a.__setitem__("line_data", np.full_like(a["line_data"], 0xFF)),
        lambda a: a.__setitem__("term_ptr_rel", a["term_ptr_rel"][::-1].copy()),
        lambda a: a.__setitem__("term_ptr_base", a["term_ptr_base"] + np.uint64(1)),
        lambda a: a.__setitem__("term_ptr_base", np.append(a["term_ptr_base"], np.uint64(0))),
        lambda a: a.__setitem__("term_ptr_rel", a["term_ptr_rel"].astype(np.uint64)),
        lambda a: a.__setitem__("doc_len", a["doc_len"][:1].copy()),
        lambda a: a.__setitem__("post_tf", np.full_like(a["post_tf"], 255)),  # escapes without overflow pairs
        lambda a: a.__setitem__("line_ckpt_rel", a["line_ckpt_rel"] + np.uint32(1)),
        lambda a: a.__setitem__("line_ckpt_rel", a["line_ckpt_rel"][:-1].copy()),
        lambda a: a.__setitem__("line_ckpt_base", a["line_ckpt_base"] + np.uint64(1)),
        lambda a: (a.__setitem__("tf_big_pos", np.array([0], dtype=np.uint64)),
                   a.__setitem__("tf_big_val", np.array([300], dtype=np.uint32))),
        # frame-of-reference blocks' metadata
        lambda a: a.__setitem__("term_ptr_rel_width", np.full_like(a["term_ptr_rel_width"], 40)),
        lambda a: a.__setitem__("post_doc_min", a["post_doc_min"] + np.uint32(1000)),
        lambda a: a.__setitem__("line_ckpt_rel_off", a["line_ckpt_rel_off"] + np.uint32(1)),
        lambda a: a.__setitem__("post_doc_width", a["post_doc_width"][:0].copy()),
        lambda a: a.__setitem__("term_ptr_rel", a["term_ptr_rel"][:-1].copy()),
    ],
)
def test_native_install_rejects_inconsistent_arrays(corrupt):
    idx, arrays, blob, offsets, mtime, size = _exported([("a.py", "alpha beta\nbeta"), ("b.py", "beta gamma")])
    live = native_lexical.LiveIndex(idx._vocab)
    n_terms = len(idx._vocab)
    live.install(dict(arrays), blob, offsets, mtime, size, None, n_terms)  # the intact arrays install
    bad = dict(arrays)
    corrupt(bad)
    with pytest.raises(ValueError):
        live.install(bad, blob, offsets, mtime, size, None, n_terms)
    assert live.n_live == 2  # a failed install changes nothing
    with pytest.raises(ValueError):  # the term count is the dictionary's: never guessed
        live.install(dict(arrays), blob, offsets, mtime, size)


def test_concurrent_searches_agree():
    import threading

    docs = [(f"src/m{i}.py", f"def handler_{i}(request):\n    return parse_config(request, {i})\n") for i in range(300)]
    idx = WordIndex.build(docs)
    queries = ["parse config", "file:m1 handler", "-file:m2 request", "lang:python handler request"] + [
        f"file:m{i} parse" for i in range(300)]
    expected = {q: idx.search(q) for q in queries}
    errors = []

    def worker():
        try:
            for _ in range(3):
                for q in queries:
                    assert idx.search(q) == expected[q]
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_readme_example_is_true():
    import doctest
    import pathlib

    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    if not readme.exists():  # e.g. tests run from an installed wheel
        pytest.skip("README.md not available")
    text = readme.read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    examples = [b for b in blocks if ">>>" in b]
    assert len(examples) >= 2
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(examples):
        runner.run(parser.get_doctest(block, {}, f"README[{i}]", str(readme), 0))
    assert runner.failures == 0


def test_query_touching_every_document():
    """Every document holds every query term (the scorer's touched list is then full)."""
    docs = [(f"f{i:02}.py", "alpha beta\nalpha") for i in range(50)]
    idx = WordIndex.build(docs)
    hits = idx.search("alpha beta", limit=100)
    assert [h.file for h in hits] == [p for p, _ in docs]  # equal scores: path order
    assert len({h.score for h in hits}) == 1 and all(h.hits == 3 and h.start_line == 1 for h in hits)
    assert [h.file for h in idx.search("alpha beta", limit=3)] == ["f00.py", "f01.py", "f02.py"]


def _reloaded(idx: WordIndex) -> WordIndex:
    """``idx`` saved and loaded again (the loaded one owns its mapping: the directory can go)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        idx.save(d)
        return WordIndex.load(d)


# Word forms too ("parse", "parsed", "parsing", "parser"): prose queries then carry stem groups.
_prune_words = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta", "common", "common2", "rare",
                                "def beta(", "class Alpha:", "parse", "parsed", "parsing", "parser"])


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.lists(st.lists(_prune_words, max_size=5).map(" ".join), max_size=6).map("\n".join),
                  min_size=1, max_size=40),
    edits=st.lists(st.tuples(st.integers(0, 39), st.lists(_prune_words, max_size=6).map(" ".join)), max_size=6),
    removals=st.lists(st.integers(0, 39), max_size=4),
    query=st.lists(_prune_words, min_size=2, max_size=5).map(" ".join),
    limit=st.integers(1, 12),
    filtered=st.booleans(),
    central=st.booleans(),
    ranking=st.sampled_from(codelex.RANKINGS),
    saved=st.booleans(),
)
def test_pruned_search_equals_exhaustive(docs, edits, removals, query, limit, filtered, central, ranking, saved):
    """MaxScore pruning returns exactly what scoring every posting returns (files, scores, hits, lines, fields),
    over a base built here (plain document ids) or saved and loaded (packed in blocks)."""
    common = "common common2\n"
    # Paths and definitions that hold query words too: the code ranking's fields and boosts take part.
    names = ["alpha", "beta_gamma", "common", "f", "rare_delta"]
    idx = WordIndex.build([(f"{'tests/' if i % 5 == 0 else 'src/'}{'zeta/' if i % 3 == 0 else ''}"
                            f"{names[i % 5]}{i:02}.py", common + d, -1,
                            [("eps_common", 1)] if i % 4 == 0 else None) for i, d in enumerate(docs)])
    if saved:
        idx = _reloaded(idx)
    idx.merge_ratio = None
    files = idx.files
    for i, text in edits:  # a delta segment and dead base documents
        idx.update(files[i % len(files)], text)
    for i in removals:
        idx.remove(files[i % len(files)])
    q = ("-file:tests " if filtered else "") + query
    centrality = {f: i for i, f in enumerate(files) if i % 3 == 0} if central else None
    idx.prune_min_postings = 0  # prune however short the lists
    pruned = idx.search(q, limit=limit, centrality=centrality, ranking=ranking)
    idx.exhaustive = True
    exhaustive = idx.search(q, limit=limit, centrality=centrality, ranking=ranking)
    assert pruned == exhaustive
    assert [h.fields for h in pruned] == [h.fields for h in exhaustive]


_WINDOW_WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "common", "common2", "rare", "parse", "parsed",
                 "parsing", "parser", "def beta(", "class Alpha:"]


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_docs=st.integers(1, 700),
    query=st.lists(st.sampled_from(_WINDOW_WORDS[:13]), min_size=1, max_size=4).map(" ".join),
    limit=st.integers(1, 12),
    filtered=st.booleans(),
    central=st.booleans(),
    edits=st.integers(0, 8),
    saved=st.booleans(),
)
def test_window_pruning_equals_exhaustive(seed, n_docs, query, limit, filtered, central, edits, saved):
    """Block-max over document windows (single terms, rare terms, masks) returns exactly what scoring every
    posting returns, over many windows of skewed term frequencies, with a delta and dead base documents."""
    import random

    rng = random.Random(seed)
    weights = [rng.random() ** 3 for _ in _WINDOW_WORDS]

    def text():
        return "\n".join(" ".join(rng.choices(_WINDOW_WORDS, weights, k=rng.randint(0, 6)))
                         for _ in range(rng.randint(1, 8)))

    names = ["alpha", "beta_gamma", "common", "f", "rare_delta", "parser"]
    idx = WordIndex.build([(f"{'tests/' if i % 7 == 0 else 'src/'}{names[i % 6]}{i:03}.py", text(), -1,
                            [("eps_common", 1)] if i % 4 == 0 else None) for i in range(n_docs)])
    if saved:  # the loaded base reads its documents from frame-of-reference blocks
        idx = _reloaded(idx)
    idx.merge_ratio = None
    files = idx.files
    for _ in range(edits):
        idx.update(files[rng.randrange(len(files))], text())
    if edits % 3 == 1:
        idx.remove(files[rng.randrange(len(files))])
    q = ("-file:tests " if filtered else "") + query
    centrality = {f: i % 5 for i, f in enumerate(files) if i % 3 == 0} if central else None
    idx.prune_min_postings = 0
    for ranking in codelex.RANKINGS:
        idx.exhaustive = False
        pruned = idx.search(q, limit=limit, centrality=centrality, ranking=ranking)
        idx.exhaustive = True
        exhaustive = idx.search(q, limit=limit, centrality=centrality, ranking=ranking)
        assert pruned == exhaustive
        assert [h.fields for h in pruned] == [h.fields for h in exhaustive]


def test_limits_clamp_and_bools_are_rejected(index_a):
    """Regression (issue 12): a limit of 2**63 or more raised OverflowError from the binding."""
    everything = index_a.search("user", limit=1000)
    for huge in (2**31, 2**63, 2**64, 10**30):
        assert index_a.search("user", limit=huge) == everything
    assert index_a.search("user", limit=-(2**70)) == []
    for bad in (True, False, 2.0, "3"):
        with pytest.raises(TypeError):
            index_a.search("user", limit=bad)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.text(alphabet="abc xyz_\nQ", max_size=40), max_size=25),
    batch_docs=st.integers(1, 6),
    batch_bytes=st.integers(1, 200),
    workers=st.integers(1, 4),
)
def test_any_batching_gives_the_single_batch_index(docs, batch_docs, batch_bytes, workers):
    import codelex.lexical.index as index_module

    items = [(f"f{i % 17}.py", text) for i, text in enumerate(docs)]  # repeats included
    single = WordIndex.build(items, workers=1)
    original = index_module.build_into
    index_module.build_into = lambda live, it, w: original(live, it, w, batch_bytes=batch_bytes,
                                                           batch_docs=batch_docs)
    try:
        batched = WordIndex.build(items, workers=workers)
    finally:
        index_module.build_into = original
    assert batched.files == single.files and batched.stats() == single.stats()
    for q in ("abc", "xyz q", "abc_xyz", "q"):
        assert batched.search(q, limit=50) == single.search(q, limit=50)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line_counts=st.lists(st.integers(min_value=250, max_value=700), min_size=1, max_size=4),
       workers=st.integers(1, 3))
def test_large_tfs_match_reference_through_batches_and_saves(tmp_path_factory, line_counts, workers):
    """Terms on hundreds of lines (tfs past one byte) keep exact tfs and lines through parallel batches,
    the join, a save and a load."""
    docs = [(f"src/f{i}.py", "\n".join(f"alpha beta{j % 7} gamma" for j in range(n)) + f"\nomega{i}\n")
            for i, n in enumerate(line_counts)]
    docs.append(("src/small.py", "alpha\nbeta1\n"))
    from codelex.lexical import build as bulk

    defaults = dict(bulk.build_into.__kwdefaults__)
    bulk.build_into.__kwdefaults__["batch_docs"] = 1  # one batch per document: the join sees every escape
    try:
        native = WordIndex.build(docs, workers=workers)
    finally:
        bulk.build_into.__kwdefaults__.update(defaults)
    ref = _reference.ReferenceIndex(docs)
    for query in ("alpha", "beta3 gamma", "omega0 alpha"):
        assert_same(native.search(query, limit=10, ranking="classic"), ref.search(query, limit=10))
    d = tmp_path_factory.mktemp("idx")
    native.save(d)
    loaded = WordIndex.load(d)
    loaded._live.set_line_starts_max(-1)  # through the checkpoints too
    for query in ("alpha", "beta3 gamma"):
        assert_same(loaded.search(query, limit=10, ranking="classic"), ref.search(query, limit=10))


@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.text(alphabet="abc xyzé_\nQ9", max_size=40), min_size=1, max_size=20),
       workers=st.integers(1, 4))
def test_a_fresh_build_numbers_its_terms_in_byte_order(docs, workers):
    """The workers' vocabularies are merged in byte order (shared terms once), so that a save renumbers nothing."""
    from codelex.lexical import build as bulk

    items = [(f"f{i}.py", text) for i, text in enumerate(docs)]
    defaults = dict(bulk.build_into.__kwdefaults__)
    bulk.build_into.__kwdefaults__["batch_docs"] = 1
    try:
        batched = WordIndex.build(items, workers=workers)
    finally:
        bulk.build_into.__kwdefaults__.update(defaults)
    keys = [t.encode("utf-8", "surrogatepass") for t in batched._vocab.terms()]
    assert keys == sorted(set(keys))
    assert batched._vocab.sorted_order().tolist() == list(range(len(keys)))
    single = WordIndex.build(items, workers=1)
    assert sorted(single._vocab.terms()) == sorted(batched._vocab.terms())
    for q in ("abc", "xyz q", "abc_xyz", "q", "é9"):
        assert batched.search(q, limit=50) == single.search(q, limit=50)
