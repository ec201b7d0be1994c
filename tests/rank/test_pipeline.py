"""The ranking pipeline: each stage on a tiny fixture, with the stage and without it (issue 28)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex import Project, WordIndex
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, chunk_rows, search_files
from codelex.rank.pipeline import STAGES, FileFacts, Units, analyze_query, rank_units, stages_off

pytest.importorskip("tree_sitter")


def corpus_of(files: dict[str, str]):
    from codelex.structure import analyze

    rows = []
    for path, text in files.items():
        rows.extend(chunk_rows(path, text, analyze(path, text.encode())))
    corpus = ChunkCorpus.from_rows(rows)
    return corpus, ChunkLexicalIndex(corpus)


def chunk_order(files: dict[str, str], query: str, **kw) -> list[tuple[str, str | None]]:
    corpus, lexical = corpus_of(files)
    rows, _ = lexical.pipeline_ranking(analyze_query(query), 50, corpus, **kw)
    return [(corpus.rows[r].path, corpus.rows[r].symbol) for r in rows]


def file_order(files: dict[str, str], query: str, **kw) -> list[str]:
    out = []
    for path, _ in chunk_order(files, query, **kw):
        if path not in out:
            out.append(path)
    return out


# --- the query -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query, kind, names", [
    ("getUserById", "symbol", ("getUserById",)),
    ("Foo::bar", "symbol", ("bar", "Foo::bar")),
    ("JoinSet", "symbol", ("JoinSet",)),
    ("snake_case_name", "symbol", ("snake_case_name",)),
    ("session", "prose", ()),
    ("how does StrSplit differ from str_join", "prose", ("StrSplit", "str_join")),
    ("absl::string_view for non-owning strings", "prose", ("string_view",)),
])
def test_queries_are_classified_and_their_identifiers_found(query, kind, names):
    analysis = analyze_query(query)
    assert analysis.kind == kind and analysis.names == names


def test_question_words_are_not_asked_of_the_index_but_identifiers_keep_every_word():
    assert analyze_query("how are request bodies validated").lexical == "request bodies validated"
    assert analyze_query("the_how_are").lexical == "the_how_are"  # one identifier: every word stays
    with stages_off("prose_words"):
        assert analyze_query("how are request bodies validated").lexical == "how are request bodies validated"


def test_a_question_word_matches_nothing():
    files = {"sse.py": "def stream():\n    # how long to wait between events\n    return wait_for_event()\n",
             "validation.py": "def validate_request_body(body):\n    return check_schema(body)\n"}
    assert file_order(files, "how are request bodies validated")[0] == "validation.py"
    assert "sse.py" not in file_order(files, "how are request bodies validated")
    with stages_off("prose_words"):
        assert "sse.py" in file_order(files, "how are request bodies validated")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000))
def test_any_query_is_analyzed_quickly(text):
    started = time.perf_counter()
    analyze_query(text)
    analyze_query(text * 40)  # a long query never takes time quadratic in its length
    assert time.perf_counter() - started < 2.0


# --- the stages --------------------------------------------------------------------------------------------


def test_a_definition_beats_ten_callers():
    files = {f"callers/use_{i}.py": f"from core import compute_total\n\ndef caller_{i}(x):\n"
                                    f"    return compute_total(x) + compute_total(x + {i})\n" for i in range(10)}
    files["core/totals.py"] = "def compute_total(values):\n    return sum(values)\n"
    assert file_order(files, "compute_total")[0] == "core/totals.py"
    with stages_off("definitions"):
        assert file_order(files, "compute_total")[0] != "core/totals.py"


def top(units: Units, query: str, candidates, **kw) -> str:
    """The path of the unit the pipeline ranks first."""
    return units.paths[rank_units(analyze_query(query), units, candidates, **kw)[0][0]]


def test_a_class_own_chunk_beats_its_methods_for_the_class_name():
    # The index ranks a method that mentions the class often above the class's own (short) chunk.
    units = Units(["routing.py", "routing.py", "tests/test_routing.py"],
                  [{"include_router"}, {"APIRouter"}, {"test_router"}], chunks=True)
    candidates = [(0, 9.0), (2, 8.0), (1, 3.0)]
    ranked = rank_units(analyze_query("APIRouter"), units, candidates)
    assert ranked[0][0] == 1
    with stages_off("definitions"):
        assert rank_units(analyze_query("APIRouter"), units, candidates)[0][0] == 0


def test_a_name_made_of_the_query_words_ranks_its_definition():
    units = Units(["notes.go", "wire.go"], [{"Notes"}, {"ReadVarint"}], chunks=False)
    candidates = [(0, 5.0), (1, 4.0)]
    assert top(units, "read varint", candidates) == "wire.go"
    with stages_off("name_cover"):
        assert top(units, "read varint", candidates) == "notes.go"


def test_query_words_in_a_file_name_count():
    units = Units(["Table.kt", "ColumnType.kt", "ToStringBuilder.java"], [set(), set(), set()], chunks=False)
    candidates = [(0, 5.0), (1, 4.0), (2, 4.0)]
    assert top(units, "column type mapping", candidates) == "ColumnType.kt"
    assert top(units, "toString builder for objects", candidates) == "ToStringBuilder.java"  # adjacent words
    with stages_off("path_words"):
        assert top(units, "column type mapping", candidates) == "Table.kt"


def test_a_file_with_several_matching_chunks_rises():
    paths = ["single.py", "retry.py", "retry.py", "retry.py", "retry.py"]
    units = Units(paths, [set()] * 5, chunks=True)
    candidates = [(0, 5.0), (1, 4.8), (2, 4.7), (3, 4.6), (4, 4.5)]
    assert top(units, "exponential backoff", candidates) == "retry.py"
    with stages_off("coherence"):
        assert top(units, "exponential backoff", candidates) == "single.py"


def test_a_copy_under_a_subdirectory_loses_to_the_original():
    units = Units(["pkg/v1/fields.py", "pkg/fields.py"], [set(), set()], chunks=False)
    candidates = [(0, 5.0), (1, 4.9)]
    assert top(units, "model fields", candidates) == "pkg/fields.py"
    with stages_off("shadowing"):
        assert top(units, "model fields", candidates) == "pkg/v1/fields.py"
    assert top(units, "model fields", candidates, path_priors=False) == "pkg/v1/fields.py"  # --no-priors


def test_a_test_file_loses_to_its_subject():
    files = {"tests/test_parser.py": "def test_parse_header():\n    assert parse_header(b'x') == parse_header(b'x')\n"
                                     "    assert parse_header(b'y')\n",
             "parser.py": "def parse_header(data):\n    return data.split(b':')\n"}
    assert file_order(files, "parse header")[0] == "parser.py"
    units = Units(["tests/test_parser.py", "parser.py", "parser_test.go", "parser.go"], [set()] * 4, chunks=False)
    candidates = [(0, 5.0), (1, 4.0), (2, 5.0), (3, 4.0)]
    assert {units.paths[u] for u, _ in rank_units(analyze_query("parse header"), units, candidates)[:2]} \
        == {"parser.go", "parser.py"}
    with stages_off("path_kinds"):
        assert top(units, "parse header", candidates) in ("tests/test_parser.py", "parser_test.go")


def test_a_second_chunk_of_a_chosen_file_gives_way_to_another_file():
    a = "".join(f"def cache_entry_{i}(key):\n    return cache_lookup(key, {i})\n\n\n" + "# pad\n" * 60
                for i in range(3))
    files = {"a.py": a, "b.py": "def cache_user(key):\n    return cache_store(key)\n"}
    corpus, lexical = corpus_of(files)
    rows, _ = lexical.pipeline_ranking(analyze_query("cache"), 50, corpus)
    first_three = [corpus.rows[r].path for r in rows[:3]]
    assert "b.py" in first_three[:2]
    with stages_off("saturation"):
        rows, _ = lexical.pipeline_ranking(analyze_query("cache"), 50, corpus)
        assert [corpus.rows[r].path for r in rows[:2]] == ["a.py", "a.py"]


def test_a_much_imported_file_gains():
    units = Units(["lib/core.py", "lib/leaf.py"], [frozenset(), frozenset()], chunks=False)
    q = analyze_query("connection pool")
    candidates = [(1, 1.0), (0, 0.99)]
    assert rank_units(q, units, candidates)[0][0] == 1
    assert rank_units(q, units, candidates, facts=FileFacts(importers={"lib/core.py": 40}))[0][0] == 0
    with stages_off("centrality"):
        assert rank_units(q, units, candidates, facts=FileFacts(importers={"lib/core.py": 40}))[0][0] == 1


def test_ties_stay_ties():
    units = Units(["a.py", "b.py"], [frozenset(), frozenset()], chunks=False)
    ranked = rank_units(analyze_query("parse config"), units, [(0, 2.0), (1, 2.0)])
    assert ranked[0][1] == ranked[1][1]


def test_stages_can_only_be_switched_off_by_name():
    with pytest.raises(ValueError, match="unknown stage"):
        with stages_off("nope"):
            pass
    assert set(STAGES) >= {"definitions", "saturation"}


# --- through the project --------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/session.py").write_text("class UserSession:\n    def refresh(self):\n        return token()\n")
    (root / "src/session.ts").write_text("export class UserSession {\n  refresh() { return token() }\n}\n")
    (root / "tests").mkdir()
    (root / "tests/test_session.py").write_text("def test_refresh():\n    UserSession().refresh()\n")
    return root


def test_chunks_keep_every_filter_files_have(repo):
    with Project(repo) as project:
        project.open()
        project.wait_structure(60)
        for query, expect in [("lang:py UserSession", {"src/session.py", "tests/test_session.py"}),
                              ("ext:ts UserSession", {"src/session.ts"}),
                              ("-file:test UserSession", {"src/session.py", "src/session.ts"})]:
            code = project.code_search(query, embedder=False, limit=10, per_file=5, wait=True)
            assert {h.path for h in code.hits} == expect, query
            assert {h.file for h in project.search(query).results} == expect, query
        code = project.code_search("UserSession", embedder=False, lang="ts", wait=True)
        assert {h.path for h in code.hits} == {"src/session.ts"}


def test_search_ranks_the_same_before_and_after_the_structure_is_built(repo):
    # Names are read for the content the index holds (a file analyzed on the spot until the store has it): the
    # answer does not depend on how far the background analysis got.
    with Project(repo, build_structure=False) as project:
        project.open()
    with Project(repo) as project:
        project.open(wait=False)
        project.wait(60)
        early = [(h.file, h.score) for h in project.search("UserSession refresh").results]
        project.wait_structure(60)
        later = [(h.file, h.score) for h in project.search("UserSession refresh").results]
    assert early == later and later[-1][0] == "tests/test_session.py"


def test_the_classic_ranking_is_the_original_formula(repo):
    with Project(repo) as project:
        project.open()
        hits = project.search("user session refresh", ranking="classic").results
        raw = project.index.search("user session refresh", ranking="classic")
        assert [(h.file, h.score, h.start_line) for h in hits] == [(h.file, h.score, h.start_line) for h in raw]


def test_search_files_without_chunks_equals_a_fresh_index():
    docs = [("a/parse.py", "def parse_config(text):\n    return text\n"), ("a/use.py", "parse_config(open(x))\n")]
    index = WordIndex.build(docs)
    hits = search_files(index, "parse config")
    assert [h.file for h in hits] == ["a/parse.py", "a/use.py"] and hits[0].start_line == 1




# --- whole checkouts (issue 39) --------------------------------------------------------------------------


def test_prose_auxiliary_code_and_translations_rank_below_the_code():
    from codelex.locales import Translations

    paths = ["docs/ja/guide/cache.md", "docs/en/guide/cache.md", "examples/cache_demo.py",
             "benchmarks/bench_cache.py", "src/cache.py", "README.rst"]
    units = Units(paths, [set()] * len(paths), chunks=False)
    candidates = [(i, 10.0 - i * 0.01) for i in range(len(paths))]  # the code last, by a hair
    pages = [f"docs/{lang}/guide/{page}.md" for lang in ("en", "ja") for page in ("intro", "setup")]
    facts = FileFacts(translated=Translations(paths + pages))
    q = analyze_query("how is the cache invalidated")
    order = [units.paths[u] for u, _ in rank_units(q, units, candidates, facts=facts)]
    assert order[0] == "src/cache.py"
    assert order.index("docs/en/guide/cache.md") < order.index("docs/ja/guide/cache.md")  # main language first
    for stage, moved in (("prose_files", "docs/en/guide/cache.md"), ("auxiliary", "examples/cache_demo.py")):
        with stages_off(stage):
            again = [units.paths[u] for u, _ in rank_units(q, units, candidates, facts=facts)]
        assert again.index(moved) < order.index(moved), stage
    with stages_off("translations"):
        again = [units.paths[u] for u, _ in rank_units(q, units, candidates, facts=facts)]
    assert again.index("docs/ja/guide/cache.md") < again.index("docs/en/guide/cache.md")
    # Filtered to the documents (lang:md, a docs path), their order among themselves is the index's.
    docs = Units(paths[:2], [set()] * 2, chunks=False)
    assert [docs.paths[u] for u, _ in rank_units(q, docs, candidates[:2])] == paths[:2]


def test_translations_are_prose_in_a_language_layout_only():
    from codelex.locales import Translations

    t = Translations(["docs/en/a.md", "docs/de/a.md", "docs/fr/a.rst", "src/ts/x.ts", "src/ml/y.py", "README.md",
                      "site/index.md", "site/index.de.md"])
    assert t.main == "en" and t.others == {"docs/de/a.md", "docs/fr/a.rst", "site/index.de.md"}
    assert not t("src/ts/x.ts") and not t("README.md")
    # Two READMEs in code directories named like languages are no translated documentation.
    code = Translations(["src/ts/README.md", "src/ml/README.md", "src/ts/x.ts", "README.md"])
    assert not code("src/ts/README.md") and not code("src/ml/README.md")


def test_a_near_copy_of_a_better_ranked_file_gives_way():
    from codelex.rank.copies import NearCopies, line_signature, similarity

    body = "".join(f"def handler_{i}(request):\n    return respond(request, {i})\n\n" for i in range(30))
    texts = {"docs_src/tutorial001.py": body, "docs_src/tutorial001_an.py": body.replace("request", "req", 2),
             "app/handlers.py": body.replace("respond", "answer"), "app/other.py": "x = 1\n" * 60}
    assert similarity(line_signature(texts["docs_src/tutorial001.py"].encode()),
                      line_signature(texts["docs_src/tutorial001_an.py"].encode())) > 0.9
    copies = NearCopies(lambda p: (len(texts[p].split()), 1, len(texts[p])), lambda p: texts[p].encode())
    assert copies.same("docs_src/tutorial001.py", "docs_src/tutorial001_an.py")
    assert not copies.same("docs_src/tutorial001.py", "app/handlers.py")  # half its lines differ
    assert not copies.same("docs_src/tutorial001.py", "app/other.py")
    paths = ["docs_src/tutorial001.py", "docs_src/tutorial001_an.py", "app/other.py"]
    units = Units(paths, [set()] * 3, chunks=False)
    candidates = [(0, 3.0), (1, 2.99), (2, 2.0)]
    q = analyze_query("handler request")
    facts = FileFacts(copies=copies)
    with stages_off("auxiliary"):
        order = [units.paths[u] for u, _ in rank_units(q, units, candidates, facts=facts)]
        assert order == ["docs_src/tutorial001.py", "app/other.py", "docs_src/tutorial001_an.py"]
        with stages_off("near_copies"):
            assert [units.paths[u] for u, _ in rank_units(q, units, candidates, facts=facts)] == paths


def test_a_file_that_defines_a_name_the_question_names_joins_the_candidates():
    docs = [("lib/functor.scala", "trait Functor[F[_]] {\n  def map[A, B](fa: F[A])(f: A => B): F[B]\n}\n")]
    docs += [(f"lib/use_{i}.scala", "// a Functor type class defines mapping over a context: Functor map\n" * 5)
             for i in range(60)]
    index = WordIndex.build(docs)
    names = {p: frozenset({"Functor", "map"} if p == "lib/functor.scala" else set()) for p, _ in docs}
    query = "how the Functor type class defines mapping over a context"
    assert "lib/functor.scala" in [h.file for h in search_files(index, query, names_of=names.get)][:3]
    with stages_off("definers"):
        assert "lib/functor.scala" not in [h.file for h in search_files(index, query, names_of=names.get)][:3]
