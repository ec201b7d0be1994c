"""The code ranking (BM25F over body, dir, name and defs): native == reference, ranking cases, bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codelex
from codelex import WordIndex, _reference
from codelex._reference import ReferenceFieldIndex, filters_predicate, prior_multiplier
from codelex.text import scan_definitions

WORDS = ["alpha", "beta", "gammaDelta", "get_user", "HTTPServer", "id", "x", "user", "parse", "route", "routes",
         "routing", "naïve", "Σίσυφος", "def", "class", "func", "fn", "(", ")", ":", "{", "=", "MAX_SIZE", "."]
PATHS = ["src/a.py", "src/user/get_user.py", "alpha/beta.ts", "tests/test_alpha.py", "docs/user.md",
         "lib/HTTPServer.go", "pkg/routes.rs", "vendor/parse.js", "route.py", "src/deep/naïve.py"]
QUERY_WORDS = ["alpha", "beta", "gamma", "delta", "get_user", "user", "http", "server", "id", "parse", "route",
               "routes", "naïve", "max", "size", "missing", "src", "lib", "getUser"]

line_st = st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join)
content_st = st.lists(line_st, max_size=7).map("\n".join)
name_st = st.sampled_from(["alpha", "getUser", "HTTPServer", "parse_route", "MAX_SIZE", "naïveBayes", "x"])
defs_st = st.none() | st.lists(st.tuples(name_st, st.integers(1, 8)), max_size=4)
corpus_st = st.lists(st.tuples(st.sampled_from(PATHS), content_st, defs_st), max_size=8).map(
    lambda docs: [(p, c, -1, d) for p, (c, d) in {p: (c, d) for p, c, d in docs}.items()])
query_st = st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=4).map(" ".join)


def reference_of(corpus) -> ReferenceFieldIndex:
    return ReferenceFieldIndex((p, c, d) for p, c, _, d in corpus)


def assert_same(native, reference):
    assert [h.file for h in native] == [r[0] for r in reference]
    for h, (path, score, hits, line, fields) in zip(native, reference):
        assert math.isclose(h.score, score, rel_tol=1e-9), (h, score)
        assert (h.hits, h.start_line, h.fields) == (hits, line, fields), (h, path)


@settings(max_examples=300, deadline=None)
@given(corpus_st, query_st, st.integers(1, 12), st.booleans(), st.booleans())
def test_code_ranking_matches_reference(corpus, query, limit, demote_tv, demote_docs):
    native = WordIndex.build(corpus)
    got = native.search(query, limit=limit, demote_test_vendor=demote_tv, demote_docs=demote_docs, ranking="code")

    def mult(path):
        return prior_multiplier(path, demote_test_vendor=demote_tv, demote_docs=demote_docs)

    assert_same(got, reference_of(corpus).search(query, limit=limit, multiplier=mult))


@settings(max_examples=150, deadline=None)
@given(corpus_st, query_st, st.sampled_from(["lang:python", "file:src/", "-file:test", "ext:ts", "lang:go lang:rust"]),
       st.dictionaries(st.sampled_from(PATHS), st.integers(0, 50), max_size=4))
def test_filtered_code_ranking_matches_reference(corpus, query, filters, centrality):
    native = WordIndex.build(corpus)
    got = native.search(f"{filters} {query}", limit=50, centrality=centrality)
    pred = filters_predicate(codelex.parse_query(filters).filters)
    want = reference_of(corpus).search(query, limit=50, allowed=pred,
                                       multiplier=lambda p: prior_multiplier(p, centrality=centrality))
    assert_same(got, want)


PARAMS_ST = st.builds(
    _reference.FieldParams,
    k1=st.sampled_from([0.5, 1.2, 2.0]),
    weights=st.tuples(*[st.sampled_from([0.0, 0.3, 1.0, 2.5])] * 4),
    b=st.tuples(*[st.sampled_from([0.0, 0.5, 0.75, 1.0])] * 4),
    def_boost=st.sampled_from([1.0, 2.5]),
    name_boost=st.sampled_from([1.0, 1.15]),
)


def _set_params(index: WordIndex, p) -> None:
    index.k1, index.field_weights, index.field_b = p.k1, p.weights, p.b
    index.def_boost, index.name_boost = p.def_boost, p.name_boost


@settings(max_examples=200, deadline=None)
@given(corpus_st, query_st, PARAMS_ST)
def test_any_field_parameters_match_reference(corpus, query, params):
    native = WordIndex.build(corpus)
    _set_params(native, params)
    got = native.search(query, limit=50, demote_test_vendor=False, demote_docs=False)
    assert_same(got, reference_of(corpus).search(query, params, limit=50))


@settings(max_examples=150, deadline=None)
@given(corpus_st, query_st, st.sampled_from([0.0, 0.3, 1.0]))
def test_stem_variants_match_reference(corpus, query, weight):
    native = WordIndex.build(corpus)
    native.stem_weight = weight
    ref = reference_of(corpus)
    got = native.search(query, limit=50, demote_test_vendor=False, demote_docs=False)
    want = ref.search(query, _reference.FieldParams(stem_weight=weight), limit=50)
    assert_same(got, want)
    if weight and codelex.lexical.stems.is_prose(query):
        live = set(ref.words())
        for t in dict.fromkeys(_reference.tokenize_line(query)):
            native_variants = [u for u, _, is_token in native.field_terms([t]) if not is_token and u in live]
            assert native_variants == ref.stem_variants(query).get(t, [])


def test_word_forms_meet_in_prose_only():
    idx = WordIndex.build([("a.py", "def register_route(path):\n    pass\n"), ("b.py", "x = 1\n")])
    hits = idx.search("routes registered")
    assert [h.file for h in hits] == ["a.py"] and hits[0].start_line == 1
    assert idx.search("routes_registered") == [] and idx.search("routes") == []  # identifiers, single words
    idx.stem_weight = 0
    assert idx.search("routes registered") == []
    assert codelex.lexical.stems.is_prose("how are routes registered")
    assert not codelex.lexical.stems.is_prose("parseConfig loader") and not codelex.lexical.stems.is_prose("x86 bug")


# --- the definition scanner ----------------------------------------------------

SCAN_WORDS = ["def", "class", "fn", "func", "function", "const", "let", "var", "type", "struct", "export", "public",
              "static", "async", "pub", "int", "void", "if", "return", "new", "#define", "MAX_SIZE", "foo", "Bar",
              "a.b", "x::y", "getUser", "_private", "$el", "(", ")", "{", "}", ":", "->", "=>", "=", ";", ",", "<T>",
              "*", "&", "[]", "throws", "const", "where", "@", "naïve", " ", "\t", "(x)", "()"]
scan_line_st = st.lists(st.sampled_from(SCAN_WORDS), max_size=9).map(lambda ws: "".join(
    w if w in "(){}:;,*&" else f" {w}" for w in ws).lstrip(" ") if ws and ws[0] != " " else " ".join(ws))
scan_doc_st = st.lists(scan_line_st, max_size=8).map("\n".join)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["a.py", "b.go", "c.ts", "d.rs", "e.c"]), scan_doc_st)
def test_native_scanner_matches_reference(path, text):
    assert scan_definitions(path, text) == _reference.scan_definitions(path, text)
    assert scan_definitions(path, text.encode()) == _reference.scan_definitions(path, text)


SCANNER_CASES = [
    ("a.py", "class Router:\n    async def add_route(self, path):\n        pass\n", [("Router", 1), ("add_route", 2)]),
    ("a.py", "MAX_RETRIES = 3\nlimit: int = 4\nif ready(x):\n", [("MAX_RETRIES", 1)]),
    ("b.go", "package web\n\nfunc (r *Router) Handle(p string) {\n}\n\ntype (\n\tRoute struct{}\n\tpath string\n)\n"
             "const Limit = 3\n", [("Handle", 3), ("Route", 7), ("path", 8), ("Limit", 10)]),
    ("c.ts", "export const loadUser = async (id) => {\n};\nexport default function render() {}\n"
             "let x = compute(3);\n", [("loadUser", 1), ("render", 3)]),
    ("d.rs", "pub(crate) fn parse_header(buf: &[u8]) -> Result<Header> {\n}\nimpl Parser for X {\n",
     [("parse_header", 1)]),
    ("d.rs", "pub(crate)fn tight(buf: &[u8]) {\n}\n", [("tight", 1)]),  # (no blank needed after the ')')
    ("e.c", "#define BUFFER_SIZE 64\nstatic int read_block(struct dev *d,\n\t\t      int n)\n{\n  return helper(d, n);\n}\n",
     [("BUFFER_SIZE", 1), ("read_block", 2)]),
    ("f.java", "public static <T> List<T> sortAll(List<T> xs) throws IOException {\n  if (x) { go(); }\n",
     [("sortAll", 1)]),
    ("g.ex", "defmodule Shop.Cart do\n  def add_item(cart, item) do\n", [("Cart", 1), ("add_item", 2)]),
]


@pytest.mark.parametrize("path, text, expected", SCANNER_CASES)
def test_scanner_cases(path, text, expected):
    got = scan_definitions(path, text)
    assert got == _reference.scan_definitions(path, text)
    assert [d for d in got if d in expected] == expected


def test_scanner_bad_input():
    with pytest.raises(TypeError):
        scan_definitions(b"a.py", "def f(): pass")
    with pytest.raises(TypeError):
        scan_definitions("a.py", 3)
    assert scan_definitions("a.py", "") == []
    assert scan_definitions("a.py", "def " + "x" * 3000 + "(): pass") == []  # minified-length lines are passed over


# --- ranking cases -------------------------------------------------------------


def test_definition_outranks_ten_callers():
    definer = ("src/auth/tokens.py", "import hmac\n\n\ndef validate_token(token, key):\n"
               "    return hmac.compare_digest(sign(token, key), token.signature)\n")
    callers = [(f"src/views/view{i}.py", "from auth.tokens import validate_token\n\n"
                f"def handle{i}(request):\n    validate_token(request.token, KEY)\n    if validate_token(request.t2, K):\n"
                "        return validate_token(request.t3, K)\n") for i in range(10)]
    idx = WordIndex.build([definer, *callers])
    assert idx.search("validate token")[0].file == "src/auth/tokens.py"
    assert idx.search("validate_token")[0].file == "src/auth/tokens.py"
    # The classic ranking, which sees only the body, puts a caller first: the case is a real one.
    assert idx.search("validate token", ranking="classic")[0].file != "src/auth/tokens.py"
    top = idx.search("validate token", limit=1)[0]
    assert "defs" in top.fields and top.start_line == 4  # the best line is the definition's


def test_file_named_after_the_query_outranks_a_mention():
    named = ("src/http/router.py", "class Table:\n    entries = {}\n\n    def add(self, pattern, handler):\n"
             "        self.entries[pattern] = handler\n")
    mentions = [(f"src/app{i}.py", f"from http import router as table\n\nAPP{i} = table.Table()\nAPP{i}.add('/', index)\n")
                for i in range(5)]
    idx = WordIndex.build([*mentions, named])
    hits = idx.search("router")
    assert hits[0].file == "src/http/router.py" and hits[0].fields == ("name",)
    assert [h.file for h in idx.search("router", ranking="classic")] == [p for p, _ in mentions]


def test_best_line_prefers_the_definition_line():
    text = "# parse_config is called at start-up\n\n\n\ndef parse_config(path):\n    return {}\n"
    idx = WordIndex.build([("cfg.py", text), ("other.py", "x = 1\n")])
    assert idx.search("parse config")[0].start_line == 5
    assert idx.search("parse config", ranking="classic")[0].start_line == 1


def test_classic_is_the_original_formula():
    corpus = [("src/a.py", "def alpha():\n    beta()\n"), ("src/alpha.py", "alpha alpha\nbeta"), ("docs/x.md", "alpha")]
    idx = WordIndex.build(corpus)
    ref = _reference.ReferenceIndex(corpus)
    got = idx.search("alpha beta", ranking="classic")
    want = ref.search("alpha beta", multiplier=prior_multiplier)
    assert [(h.file, h.hits, h.start_line) for h in got] == [(p, n, ln) for p, _, n, ln in want]
    assert all(math.isclose(h.score, s, rel_tol=1e-9) for h, (_, s, _, _) in zip(got, want))
    assert all(h.fields == ("body",) for h in got)


def test_hits_report_their_fields():
    idx = WordIndex.build([("lib/parser/tokens.py", "def scan_tokens(text):\n    return text.split()\n"),
                           ("notes.txt", "some tokens here")])
    by_file = {h.file: h for h in idx.search("tokens")}
    assert by_file["lib/parser/tokens.py"].fields == ("body", "name", "defs")
    assert by_file["notes.txt"].fields == ("body",)
    assert idx.search("parser")[0].fields == ("dir",)
    assert by_file["lib/parser/tokens.py"].to_dict()["fields"] == ["body", "name", "defs"]
    assert "fields" not in by_file["notes.txt"].to_dict()


def test_path_only_match_has_a_line():
    idx = WordIndex.build([("pkg/scheduler/queue.go", "package queue\n\nvar x = 1\n")])
    hit = idx.search("scheduler")[0]
    assert hit.fields == ("dir",) and hit.hits == 0 and hit.start_line == 1


def test_explicit_definitions_replace_the_scanner():
    idx = WordIndex.build([("a.py", "def alpha():\n    pass\n\nbeta = 1\n", -1, [("beta", 4)])])
    hit = idx.search("beta")[0]
    assert hit.fields == ("body", "defs") and hit.start_line == 4
    assert idx.search("alpha")[0].fields == ("body",)  # the scanner's alpha is not used
    idx.update("a.py", "def alpha():\n    pass\n")
    assert idx.search("alpha")[0].fields == ("body", "defs")  # no definitions given: the scanner's again
    idx.update("a.py", "anything", definitions=[("Gamma", 1)])
    assert idx.search("gamma")[0].fields == ("defs",)


def test_definitions_bad_input():
    idx = WordIndex.build([])
    for bad in ("alpha", [("alpha",)], [["alpha", 1]], [(3, 1)], [("a", "1")], [("a", 1.0)], 5):
        with pytest.raises(TypeError):
            idx.update("a.py", "x", definitions=bad)
    for bad in ([("a", 0)], [("a", -3)], [("a", 2**32)]):
        with pytest.raises(ValueError):
            idx.update("a.py", "x", definitions=bad)
    with pytest.raises(TypeError):
        WordIndex.build([("a.py", "x", -1, "alpha")])
    assert "a.py" not in idx  # nothing half-applied


def test_unknown_ranking_is_refused():
    idx = WordIndex.build([("a.py", "alpha")])
    with pytest.raises(ValueError, match="ranking"):
        idx.search("alpha", ranking="fancy")


def test_updates_keep_field_statistics_exact():
    idx = WordIndex.build([("src/a.py", "def alpha(): pass"), ("src/b.py", "alpha()")])
    idx.merge_ratio = None
    idx.update("src/c/alpha.py", "def beta(): pass\n")
    idx.remove("src/a.py")
    idx.update("src/b.py", "class Alpha: pass")
    fresh = WordIndex.build([("src/b.py", "class Alpha: pass"), ("src/c/alpha.py", "def beta(): pass\n")])
    for q in ("alpha", "beta", "src alpha", "c"):
        assert idx.search(q) == fresh.search(q), q
    idx.merge()
    for q in ("alpha", "beta", "src alpha", "c"):
        assert idx.search(q) == fresh.search(q), q


def test_field_parameters_are_checked_when_set():
    idx = WordIndex.build([("a.py", "def alpha(): pass")])
    before = idx.search("alpha")
    for name, bad in [("field_weights", (1, 2, 3)), ("field_weights", (1, -1, 1, 1)), ("field_b", (0.5, 0.5, 0.5, 2)),
                      ("field_weights", (1, float("nan"), 1, 1)), ("def_boost", 0), ("name_boost", float("inf")),
                      ("k1", -1), ("stem_weight", -0.5), ("stem_weight", float("inf"))]:
        with pytest.raises(ValueError):
            setattr(idx, name, bad)
    with pytest.raises(TypeError):
        idx.field_weights = 3
    with pytest.raises(TypeError):
        idx.stem_weight = "0.3"
    assert idx.search("alpha") == before  # refused settings leave the ranking as it was
    idx.field_weights = [1, 0, 0, 0]
    assert idx.field_weights == (1.0, 0.0, 0.0, 0.0) and idx.search("alpha")[0].score != before[0].score
