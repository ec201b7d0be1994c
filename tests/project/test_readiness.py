"""Readiness is asked of the jobs, never found out by running a query (issue 30): preparing the chunks,
finding related chunks and answering without an index run no search to learn what is ready."""

from __future__ import annotations

import pytest

from codelex import Project
from codelex.dense import StaticModelEmbedder

pytest.importorskip("model2vec")
pytest.importorskip("tree_sitter_python")


@pytest.fixture
def root(project_root):
    return project_root


@pytest.fixture
def no_queries(monkeypatch):
    """Fails any ranking of chunks or files made while it is in force."""
    from codelex.lexical import WordIndex
    from codelex.rank import HybridSearcher

    def refuse(*args, **kwargs):
        raise AssertionError("a query was run to find out what is ready")

    def forbid(*, chunk_index: bool = True):
        """``chunk_index``: also any search of a word index (find_related's lexical answer searches the chunk
        index: that is its answer, not a probe)."""
        monkeypatch.setattr(HybridSearcher, "search", refuse)
        monkeypatch.setattr(Project, "search", refuse)
        monkeypatch.setattr(Project, "code_search", refuse)
        if chunk_index:
            monkeypatch.setattr(WordIndex, "search", refuse)

    return forbid


@pytest.mark.timeout(120)
def test_prepare_code_search_runs_no_query(root, no_queries, project_files):
    with Project(root, use_git=False) as p:
        no_queries()
        p.prepare_code_search()
        code = p.service.chunks
        assert code.corpus is not None and {r.path for r in code.corpus.rows} == set(project_files)


@pytest.mark.timeout(120)
def test_find_related_asks_the_jobs_not_a_code_search(root, no_queries, make_static_model):
    e = StaticModelEmbedder(make_static_model())
    with Project(root, use_git=False) as p:
        p.open()
        p.prepare_code_search()
        no_queries(chunk_index=False)
        lexical = p.find_related("web/router.py", 2, embedder=e, background=False)
        assert lexical.mode == "lexical" and "related by shared identifiers" in lexical.hint
        p.wait_embeddings(60)
        p.find_related("web/router.py", 2, embedder=e, wait=True)  # embeds every chunk, in this thread
        hybrid = p.find_related("web/router.py", 2, embedder=e)
        assert hybrid.mode == "hybrid" and hybrid.embedded == hybrid.chunks
        assert all(h.path != "web/router.py" or h.start_line != 2 for h in hybrid.hits)


@pytest.mark.timeout(120)
def test_code_search_without_an_index_starts_a_build_without_a_file_search(root, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("code_search ran a file search to find out whether an index is there")

    monkeypatch.setattr(Project, "search", refuse)
    with Project(root, use_git=False) as p:
        r = p.code_search("password", embedder=False)
        assert r.available or (r.mode == "unavailable" and "being built" in r.hint)
        assert p.wait(60) and p.index is not None  # the build it started
