"""A federation answers exactly as one index over the union of its shards' files.

Random corpora (identifiers, prose words with stem variants, paths under
src/lib/tests/docs/vendor so priors and filters matter, definitions) are
split at random into shards; the union index holds every file under its own
path (paths are distinct across shards), and its hits, qualified by the
shard that holds the file, must equal the federation's: files, scores bit
for bit, hits, lines and fields, for both rankings, with filters, after
edits mirrored on both sides and after a save and load of the shards.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codelex
from codelex import Federation, QueryError, WordIndex
from codelex.federation import (
    GlobalQueryStats,
    ShardQueryStats,
    merge_hits,
    merge_query_stats,
    qualify,
    split_qualified,
    split_shard_filters,
)

WORDS = ["parse", "parsed", "parsing", "parser", "route", "routes", "routing", "config", "user", "users", "login",
         "token", "server", "session", "cache", "the", "of", "value", "load", "loading", "loader"]
IDENTS = ["parse_config", "HTTPServer", "userSession", "load_cache", "route_table", "TokenParser", "getUser"]
DIRS = ["", "src", "src/util", "lib", "tests", "docs", "vendor/x", "src/parser", "routes"]
NAMES = ["main", "parse", "config", "user_session", "routes", "cache", "loader", "README", "test_parse", "server"]
EXTS = [".py", ".go", ".md", ".js", ".txt", ".json"]
SHARD_NAMES = ["alpha", "b-2", "c_3", "delta"]

word = st.sampled_from(WORDS + IDENTS)


@st.composite
def line(draw):
    if draw(st.integers(0, 4)) == 0:
        return f"def {draw(st.sampled_from(IDENTS + WORDS))}():"
    return " ".join(draw(st.lists(word, min_size=0, max_size=6)))


content = st.lists(line(), min_size=0, max_size=6).map("\n".join)


@st.composite
def corpus(draw):
    """``(shards, files)``: files ``(shard index, path, content)`` with distinct paths."""
    n_shards = draw(st.integers(1, 4))
    paths = draw(st.lists(
        st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES), st.sampled_from(EXTS)).map(
            lambda t: (t[0] + "/" if t[0] else "") + t[1] + t[2]),
        min_size=1, max_size=14, unique=True))
    files = [(draw(st.integers(0, n_shards - 1)), p, draw(content)) for p in paths]
    return n_shards, files


@st.composite
def query(draw):
    text = " ".join(draw(st.lists(st.sampled_from(WORDS + IDENTS + ["parse config", "how routes load"]),
                                  min_size=1, max_size=3)))
    filters = draw(st.lists(st.sampled_from(["lang:python", "file:src", "-file:test", "ext:md", "lang:go",
                                             "-file:vendor", "file:parse"]), max_size=2))
    return " ".join(filters + [text])


def _build(n_shards, files, prune):
    owner = {}
    shard_docs = [[] for _ in range(n_shards)]
    for s, path, text in files:
        shard_docs[s].append((path, text))
        owner[path] = SHARD_NAMES[s]
    shards = [WordIndex.build(docs) for docs in shard_docs]
    union = WordIndex.build([d for docs in shard_docs for d in docs])  # shard order
    for ix in shards + [union]:
        if prune:  # the pruned paths (MaxScore, windows) on small lists too
            ix.prune_min_postings = 0
    return shards, union, owner


def _expected(union, owner, q, **kw):
    return [h._replace(file=qualify(owner[h.file], h.file)) for h in union.search(q, **kw)]


def _check(fed, union, owner, queries, limit, ranking, centrality=None):
    for q in queries:
        kw = {"limit": limit, "ranking": ranking}
        fed_kw = dict(kw)
        if centrality:
            kw["centrality"] = centrality
            fed_kw["centrality"] = {qualify(owner[p], p): c for p, c in centrality.items()}
        got = fed.search(q, **fed_kw)
        want = _expected(union, owner, q, **kw)
        assert got == want, (q, ranking, limit)
        assert [h.score for h in got] == [h.score for h in want]  # (== on floats: bit for bit, no tolerance)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus(), st.lists(query(), min_size=1, max_size=4), st.integers(1, 12), st.sampled_from(["code", "classic"]),
       st.booleans(), st.booleans())
def test_federation_equals_the_union_index(data, queries, limit, ranking, prune, with_centrality):
    n_shards, files = data
    shards, union, owner = _build(n_shards, files, prune)
    fed = Federation({SHARD_NAMES[i]: ix for i, ix in enumerate(shards)})
    centrality = {p: (i % 3) + 1 for i, (_, p, _) in enumerate(files) if i % 2} if with_centrality else None
    _check(fed, union, owner, queries, limit, ranking, centrality)


edit = st.tuples(st.sampled_from(["update", "add", "remove"]), st.integers(0, 99), content,
                 st.sampled_from(DIRS), st.sampled_from(NAMES))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus(), st.lists(edit, min_size=1, max_size=8), st.lists(query(), min_size=1, max_size=3),
       st.integers(1, 12), st.sampled_from(["code", "classic"]), st.booleans())
def test_federation_after_edits(data, edits, queries, limit, ranking, prune):
    n_shards, files = data
    shards, union, owner = _build(n_shards, files, prune)
    fed = Federation({SHARD_NAMES[i]: ix for i, ix in enumerate(shards)})
    for kind, pick, text, d, name in edits:
        live = sorted(owner)
        if kind == "add" or not live:
            path = (d + "/" if d else "") + name + "_new.py"
            s = pick % n_shards
            if path in owner and owner[path] != SHARD_NAMES[s]:
                continue  # one shard per path
        else:
            path = live[pick % len(live)]
            s = SHARD_NAMES.index(owner[path])
        if kind == "remove" and path in owner:
            assert shards[s].remove(path) and union.remove(path)
            del owner[path]
        else:
            shards[s].update(path, text)
            union.update(path, text)
            owner[path] = SHARD_NAMES[s]
    _check(fed, union, owner, queries, limit, ranking)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus(), st.lists(query(), min_size=1, max_size=3), st.integers(1, 12), st.sampled_from(["code", "classic"]))
def test_federation_of_saved_shards(tmp_path_factory, data, queries, limit, ranking):
    n_shards, files = data
    shards, union, owner = _build(n_shards, files, False)
    root = tmp_path_factory.mktemp("shards")
    for i, ix in enumerate(shards):
        ix.save(root / SHARD_NAMES[i])
    fed = Federation({SHARD_NAMES[i]: root / SHARD_NAMES[i] for i in range(n_shards)})
    _check(fed, union, owner, queries, limit, ranking)


def _pair():
    a = WordIndex.build([("src/parse.py", "def parse_config(): parse the config"), ("docs/a.md", "parsing config")])
    b = WordIndex.build([("src/parse.py", "def parse_config(): parse config again"), ("lib/x.go", "config")])
    return a, b


def test_repo_filters_select_shards():
    a, b = _pair()
    fed = Federation({"a": a, "b": b})
    everything = fed.search("parse config", limit=50)
    assert {split_qualified(h.file)[0] for h in everything} == {"a", "b"}
    only_b = fed.search("repo:b parse config", limit=50)
    assert only_b == [h for h in everything if h.file.startswith("b:")]
    assert fed.search("-repo:b parse config", limit=50) == [h for h in everything if h.file.startswith("a:")]
    assert fed.search("repo:a repo:b parse config", limit=50) == everything
    assert fed.search("repo:a -repo:a parse config") == []
    # Statistics stay global: a selected shard scores as in the unfiltered answer.
    assert fed.search("REPO:b parse config", limit=50) == only_b


def test_same_path_in_two_shards_ties_by_shard_order():
    a = WordIndex.build([("x.py", "token")])
    b = WordIndex.build([("x.py", "token")])
    assert [h.file for h in Federation({"b": b, "a": a}).search("token")] == ["b:x.py", "a:x.py"]
    assert [h.file for h in Federation([("a", a), ("b", b)]).search("token")] == ["a:x.py", "b:x.py"]


def test_errors_are_named():
    a, b = _pair()
    with pytest.raises(ValueError, match="at least one shard"):
        Federation({})
    with pytest.raises(ValueError, match="given twice"):
        Federation([("a", a), ("a", b)])
    for bad in ["", "a:b", "a b"]:
        with pytest.raises(ValueError, match="invalid shard name"):
            Federation({bad: a})
    with pytest.raises(TypeError):
        Federation({1: a})
    with pytest.raises(TypeError):
        Federation({"a": object()})
    fed = Federation({"a": a, "b": b})
    with pytest.raises(QueryError, match="Unknown repo"):
        fed.search("repo:zzz parse")
    with pytest.raises(QueryError, match="Unknown lang"):
        fed.search("lang:nope parse")
    with pytest.raises(ValueError, match="at least one shard"):
        merge_query_stats([])
    with pytest.raises(codelex.IndexFormatError):
        Federation({"a": "/nonexistent/index/dir"})


def test_stats_are_plain_and_checked():
    a, b = _pair()
    stats = [ix.query_stats("parse config parsing") for ix in (a, b)]
    assert all(isinstance(s, ShardQueryStats) for s in stats)
    merged = merge_query_stats(pickle.loads(pickle.dumps(stats)))
    assert isinstance(merged, GlobalQueryStats) and merged.shards == 2
    assert merged.docs == 4 and merged.dfs["config"][0] == 4
    assert merged == GlobalQueryStats.from_dict(merged.to_dict())
    assert merge_query_stats([merge_query_stats(stats[:1]), stats[1]]) == merged  # merges nest
    # Phase 2 refuses statistics of another query, ranking or parameters.
    with pytest.raises(ValueError, match="tokens"):
        a.search("other words", global_stats=merged)
    with pytest.raises(ValueError, match="ranking"):
        a.search("parse config parsing", ranking="classic", global_stats=merged)
    b.k1 = 1.5
    with pytest.raises(ValueError, match="disagree"):
        merge_query_stats([a.query_stats("parse"), b.query_stats("parse")])
    with pytest.raises(TypeError):
        a.search("parse", global_stats=a.query_stats("parse"))


def test_global_stats_of_one_shard_change_nothing():
    a, _ = _pair()
    for ranking in ("code", "classic"):
        for q in ("parse config", "parsing config", "config"):
            g = merge_query_stats([a.query_stats(q, ranking=ranking)])
            assert a.search(q, ranking=ranking, global_stats=g) == a.search(q, ranking=ranking)


def test_alternating_local_and_global_queries_keep_their_own_norms():
    # A shard's scorer caches per-document norms: a global-stats query must not reuse local ones, nor back.
    a, b = _pair()
    a.prune_min_postings = 0
    fed = Federation({"a": a, "b": b})
    local = a.search("parse config", limit=5)
    fed_hits = fed.search("parse config", limit=5)
    for _ in range(3):
        assert a.search("parse config", limit=5) == local
        assert fed.search("parse config", limit=5) == fed_hits
    assert [h.score for h in local] != [h.score for h in fed_hits if h.file.startswith("a:")]


def test_merge_hits_and_shard_filters():
    h = codelex.Hit
    answers = [("a", [h("z.py", 2.0, 1, 1), h("b.py", 1.0, 1, 1)]), ("b", [h("a.py", 2.0, 1, 1)])]
    assert [x.file for x in merge_hits(answers, 2)] == ["b:a.py", "a:z.py"]
    assert merge_hits(answers, 0) == []
    assert split_shard_filters("repo:a x  -file:y", ["a", "b"]) == ("x -file:y", ("a",))
    assert split_shard_filters("x", ["a", "b"]) == ("x", ("a", "b"))
    assert split_qualified("a:src/x:y.py") == ("a", "src/x:y.py")


def test_project_shards(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "auth.py").write_text("def login_user(): pass\n")
    other = WordIndex.build([("user.py", "class User: login")])
    with codelex.Project(root, build_structure=False) as project:
        with pytest.raises(codelex.ShardUnavailableError, match="no index yet"):
            Federation({"p": project, "o": other}).search("login")
        project.open(wait=True)
        fed = Federation({"p": project, "o": other})
        assert [hit.file for hit in fed.search("login user")] == ["p:auth.py", "o:user.py"]


def test_a_variant_only_another_shard_holds_sets_the_idf():
    # The code ranking's idf of a prose token is its group's largest df, variants included: a variant
    # absent from this shard's vocabulary but common in another's still counts (the union's vocabulary).
    a_docs = [("a/p.py", "parse config")]
    b_docs = [(f"b/{i}.py", "parsed config value") for i in range(6)]
    a, b = WordIndex.build(a_docs), WordIndex.build(b_docs)
    union = WordIndex.build(a_docs + b_docs)
    assert "parsed" not in a.query_stats("how parse config").variants["parse"]
    got = Federation({"a": a, "b": b}).search("how parse config", limit=3)
    want = union.search("how parse config", limit=3)
    assert [(h.file.split(":", 1)[1], h.score) for h in got] == [(h.file, h.score) for h in want]


def test_a_variant_in_another_field_of_a_shard_without_it_in_the_body_counts():
    # Found by the property test: `parse` is a body word of shard b only, but a file name of shard a;
    # the union index looks the variant up in every field, so shard a's name df counts too.
    s0 = [("main.py", ""), ("parse.py", "")]
    s1 = [("parse.go", "def parse_config():")]
    a, b, union = WordIndex.build(s0), WordIndex.build(s1), WordIndex.build(s0 + s1)
    fed = Federation({"a": a, "b": b})
    assert fed.query_stats("parsed parsed").dfs["parse"] == union.query_stats("parsed parsed").dfs["parse"]
    got = fed.search("parsed parsed")
    assert [(h.file.split(":", 1)[1], h.score) for h in got] == [(h.file, h.score) for h in union.search("parsed parsed")]
