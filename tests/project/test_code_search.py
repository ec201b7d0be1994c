"""Project.code_search and find_related: chunks kept fresh, vectors cached by text hash, embedded in the background."""

import pytest

from codelex import ConfigError, EmbedderError, Project
from codelex.dense import StaticModelEmbedder

pytest.importorskip("model2vec")
pytest.importorskip("tree_sitter_python")

def _open(root):
    p = Project(root, use_git=False)
    p.open()
    p.prepare_code_search()
    return p


def test_the_first_corpus_is_built_in_the_background(project_root):
    p = Project(project_root, use_git=False)
    p.open()
    p.wait_structure()
    first = p.code_search("password", embedder=False)
    if not first.available:
        assert "being prepared" in first.hint
    p.prepare_code_search()
    r = p.code_search("password", embedder=False)
    assert r.available and r.hits[0].path == "auth.py"
    p.close()


def test_vectors_are_cached_across_opens_edits_and_models(project_root, make_static_model, counting_embedder):
    e = counting_embedder(StaticModelEmbedder(make_static_model()))
    p = _open(project_root)
    r = p.code_search("register routes", embedder=e, wait=True)
    assert r.mode == "hybrid" and r.embedded == r.chunks and r.hits[0].path == "web/router.py"
    # The embedder sees every chunk once, and each hybrid query's text once.
    assert e.texts == r.chunks + 1
    first = e.texts
    p.code_search("password check", embedder=e, wait=True)
    assert e.texts == first + 1  # the query only
    p.close()
    p = _open(project_root)  # from disk: embeddings/ beside the index
    assert p.code_search("parse", embedder=e, wait=True).mode == "hybrid"
    assert e.texts == first + 2
    (project_root / "conf.py").write_text("def parse(file):\n    return read(file).strip()\n")
    p.on_edit("conf.py")
    r = p.code_search("parse", embedder=e, wait=True)
    assert e.texts == first + 4  # the changed chunk and the query
    assert any(h.path == "conf.py" and "strip" in h.excerpt for h in r.hits)
    other = counting_embedder(StaticModelEmbedder(make_static_model(seed=1)))
    assert other.name != e.name
    p.code_search("parse", embedder=other, wait=True)
    assert other.texts == r.chunks + 1  # another model never reuses these vectors
    p.close()


def test_answers_lexically_until_embedded(project_root, make_static_model, counting_embedder):
    e = counting_embedder(StaticModelEmbedder(make_static_model()))
    p = _open(project_root)
    r = p.code_search("password", embedder=e)  # does not wait: embedding starts in the background
    assert r.available and r.hits[0].path == "auth.py"
    if r.mode == "lexical":
        assert "embedding" in r.hint and r.embedded < r.chunks
    assert p.wait_embeddings(30)
    r = p.code_search("password", embedder=e)
    assert r.mode == "hybrid" and p.embedding_status()["embedded"] == r.chunks
    p.close()


def test_filters_stop_words_and_related(project_root, make_static_model):
    e = StaticModelEmbedder(make_static_model())
    p = _open(project_root)
    assert p.code_search("the and", embedder=e, wait=True).hits == []
    only = p.code_search("register routes", embedder=e, wait=True, paths=["auth.py", "conf.py"])
    assert {h.path for h in only.hits} <= {"auth.py", "conf.py"}
    rel = p.find_related("web/router.py", 2, embedder=e)
    assert rel.available and all(not (h.path == "web/router.py" and h.start_line <= 2 <= h.end_line)
                                 for h in rel.hits)
    with pytest.raises(ValueError, match="no chunk"):
        p.find_related("web/router.py", 999, embedder=e)
    with pytest.raises(TypeError):
        p.code_search("x", limit=True)
    p.close()


def test_embedder_choice_and_config(project_root, make_static_model, monkeypatch):
    p = _open(project_root)
    with pytest.raises(EmbedderError, match="no model2vec model"):
        p.code_search("parse", embedder="model2vec:/nonexistent")
    lexical = p.code_search("parse", embedder=False)
    assert lexical.mode == "lexical" and lexical.hits[0].path == "conf.py"
    make_static_model().save_pretrained(str(project_root / "models" / "tiny"))
    # A model folder is the user's choice ($CODELEX_EMBEDDER, --embedder, embedder=), never the repository's.
    (project_root / "pyproject.toml").write_text('[tool.codelex]\nembedder = "model2vec:models/tiny"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: embedder: .* is a model path.*--embedder"):
        p.code_search("parse")
    (project_root / "pyproject.toml").write_text('[tool.codelex]\nembedder = "minilm"\nfusion = "shape"\n')
    monkeypatch.setenv("CODELEX_EMBEDDER", f"model2vec:{project_root / 'models' / 'tiny'}")
    r = p.code_search("register routes", wait=True)
    assert r.mode == "hybrid" and r.hits[0].path == "web/router.py"
    (project_root / "pyproject.toml").write_text('[tool.codelex\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        p.code_search("parse")
    (project_root / "pyproject.toml").write_text('[tool.codelex]\nembedder = 3\n')
    with pytest.raises(ConfigError, match="embedder must be the name of an installed model"):
        p.code_search("parse")
    p.close()


def test_a_budget_that_cuts_results_says_so(tmp_path):
    root = tmp_path / "long"
    root.mkdir()
    for i in range(5):
        body = "".join(f"    total = total + alpha_{i} * {j}\n" for j in range(60))
        (root / f"m{i}.py").write_text(f"def alpha_function_{i}(alpha_{i}):\n    total = 0\n{body}    return total\n")
    p = _open(root)
    try:
        whole = p.code_search("alpha function", embedder=False, limit=10, per_file=1, total_lines=10_000, wait=True)
        assert len(whole.hits) == 5 and whole.omitted == 0 and whole.line_budget == 10_000
        assert whole.to_dict()["omitted"] == 0
        cut = p.code_search("alpha function", embedder=False, limit=10, per_file=1, total_lines=100, wait=True)
        # The same hits, in the same order, until the 100 lines are spent: two whole chunks (46 lines each),
        # the third head-truncated to the 8 left; the other two are left out, and the answer says so.
        assert [h.path for h in cut.hits] == [h.path for h in whole.hits][:3]
        assert [len(h.excerpt.split("\n")) for h in whole.hits][:2] == [46, 46]
        assert [len(h.excerpt.split("\n")) for h in cut.hits] == [46, 46, 8]
        assert [h.truncated for h in cut.hits] == [False, False, True] and cut.cut_excerpts == 1
        assert cut.omitted == 2 and cut.line_budget == 100
        assert cut.to_dict()["omitted"] == 2 and cut.to_dict()["lineBudget"] == 100
        # The seed's fusion answers exactly as before, and also says what the budget cut.
        original = p.code_search("alpha function", embedder=False, limit=10, per_file=1, total_lines=100,
                                 fusion="original", wait=True)
        assert original.omitted == 2 and len(original.hits) == 3
        # find_related has no shared budget.
        assert p.find_related("m0.py", 1, embedder=False).line_budget is None
    finally:
        p.close()


@pytest.fixture
def counted_loads(monkeypatch):
    """Counts the models loaded through ``codelex.project.code``'s loader (checks stay as they are)."""
    import codelex.project.code as code_module

    loads = []
    real = code_module.embedder_loader

    def loader(spec):
        load = real(spec)

        def counted():
            loads.append(spec)
            return load()

        return counted

    monkeypatch.setattr(code_module, "embedder_loader", loader)
    return loads


def test_a_one_shot_caller_never_loads_a_model_it_does_not_need(project_root, tmp_path, make_static_model,
                                                                 counted_loads):
    model = tmp_path / "tiny"
    make_static_model().save_pretrained(str(model))
    spec = f"model2vec:{model}"
    p = _open(project_root)
    try:
        r = p.code_search("password", embedder=spec, background=False)
        assert counted_loads == [] and r.mode == "lexical" and r.embedded == 0 and r.chunks > 0
        assert r.hint == f"vectors: 0 of {r.chunks:,} chunks embedded; lexical answer"
        assert p.embedding_status()["running"] is False  # nothing started either
        r = p.code_search("password", embedder=spec, wait=True)
        assert r.mode == "hybrid" and counted_loads == [spec]
    finally:
        p.close()
    # Another process (a fresh state): every chunk has a vector, so the model is needed for the query.
    p = _open(project_root)
    try:
        r = p.code_search("password", embedder=spec, background=False)
        assert r.mode == "hybrid" and len(counted_loads) == 2
    finally:
        p.close()
    (project_root / "conf.py").write_text("def parse(file):\n    return read(file).strip()\n")
    p = _open(project_root)
    try:  # one chunk changed: counted from what was saved, without loading the model
        r = p.code_search("password", embedder=spec, background=False)
        assert len(counted_loads) == 2 and r.mode == "lexical" and r.embedded == r.chunks - 1
        assert r.hint == f"vectors: {r.chunks - 1:,} of {r.chunks:,} chunks embedded; lexical answer"
        related = p.find_related("auth.py", 1, embedder=spec, background=False)
        # Related by shared identifiers meanwhile, said so, and still nothing loaded.
        assert related.available and related.mode == "lexical" and len(counted_loads) == 2
        assert "related by shared identifiers" in related.hint
        # A bad spec is still an error at once, before anything loads.
        with pytest.raises(EmbedderError):
            p.code_search("password", embedder="model2vec:/nonexistent", background=False)
    finally:
        p.close()


def test_a_long_running_caller_answers_at_once_while_the_model_loads(project_root, monkeypatch):
    """What the server and MCP do: never block on a model load; the answer says how much is embedded."""
    import threading

    import numpy as np

    import codelex.project.code as code_module
    from codelex.dense import FunctionEmbedder

    release = threading.Event()

    def embed(texts):
        return np.array([[1.0 + len(t) % 7, 1.0, (len(t) % 3) - 1.0] for t in texts])

    def loader(spec):
        def slow():
            release.wait(30)  # a model that takes its time to load
            return FunctionEmbedder(embed, name="slow", dimensions=3)
        return slow

    monkeypatch.setattr(code_module, "embedder_loader", loader)
    p = _open(project_root)
    try:
        import time

        started = time.monotonic()
        r = p.code_search("password", embedder="minilm")
        assert time.monotonic() - started < 5 and r.mode == "lexical" and r.hits
        assert r.hint.startswith("loading the embedding model in the background; vectors: 0 of ")
        release.set()
        deadline = time.monotonic() + 30
        while p.code_search("password", embedder="minilm").mode != "hybrid":
            assert time.monotonic() < deadline, "the background embedding never completed"
            time.sleep(0.05)
    finally:
        release.set()
        p.close()


def test_embed_limit_embeds_source_first_and_ranks_by_vector_among_them(project_root, make_static_model,
                                                                        counting_embedder):
    """Issue 29: a huge tree is embedded up to ``embed_limit`` chunks, source files before tests and documents;
    past it the answer is hybrid over the embedded chunks and says how much they cover."""
    (project_root / "tests").mkdir()
    (project_root / "tests" / "test_router.py").write_text("def test_add(route, path, handler):\n    route.add(path, handler)\n")
    (project_root / "README.md").write_text("# Routes\n\nregister a route handler for a path\n")
    (project_root / ".codelex.toml").write_text("embed_limit = 3  # (words the tiny model knows: config file)\n")
    e = counting_embedder(StaticModelEmbedder(make_static_model()))
    p = _open(project_root)
    r = p.code_search("register routes", embedder=e, wait=True)
    assert r.mode == "hybrid" and r.embedded == 3 and r.chunks > 3 and e.texts == 3 + 1  # (and the query)
    assert "embed_limit 3" in r.hint and "source files first" in r.hint
    # Only source chunks got vectors: the test and the README rank by their words alone.
    assert all(h.vector_rank is None for h in r.hits if h.path in ("tests/test_router.py", "README.md"))
    assert p.code_search("register routes", embedder=e, wait=True).embedded == 3 and e.texts == 4 + 1  # no chunk
    (project_root / ".codelex.toml").write_text("embed_limit = 100  # config file\n")
    r = p.code_search("register routes", embedder=e, wait=True)
    assert r.embedded == r.chunks and r.hint is None
    (project_root / ".codelex.toml").write_text("embed_limit = -1\n")
    with pytest.raises(ConfigError, match="embed_limit must be an integer >= 0"):
        p.code_search("parse")
    p.close()


def test_embedding_priority_source_then_tests_then_documents_shallow_first():
    from codelex.project.code import embedding_priority

    paths = ["kernel/sched/core.c", "drivers/net/ethernet/intel/e1000/e1000_main.c", "README.md",
             "tests/test_core.py", "kernel/fork.c", "Documentation/index.rst.md"]
    ranked = sorted(paths, key=lambda p: (embedding_priority(p), paths.index(p)))
    assert ranked == ["kernel/fork.c", "kernel/sched/core.c", "drivers/net/ethernet/intel/e1000/e1000_main.c",
                      "tests/test_core.py", "README.md", "Documentation/index.rst.md"]


def test_embed_limit_zero_says_the_cap_not_a_background_run(project_root, make_static_model):
    """Review finding: with embed_limit = 0 the answer said 'embedding in the background: 0 of 3 chunks' though
    nothing would ever be embedded."""
    (project_root / ".codelex.toml").write_text("embed_limit = 0  # config file\n")
    p = _open(project_root)
    try:
        r = p.code_search("register routes", embedder=StaticModelEmbedder(make_static_model()), wait=True)
        assert r.mode == "lexical" and r.embedded == 0
        assert "embed_limit 0" in r.hint and "background" not in r.hint
    finally:
        p.close()


def test_a_provisional_hybrid_answer_embeds_the_lexical_contention_on_demand(project_root, make_static_model):
    """Issue 44: while the background pass has not embedded every chunk, a long-running caller's answer is
    hybrid over the chunks that have a vector, the lexical ranking's best embedded on demand (and kept), and
    says it is provisional; once every chunk has a vector the answer is final."""
    import threading

    from codelex.defaults import ON_DEMAND_EMBED

    release = threading.Event()

    class Gated:
        """Counts texts; the background pass (its own thread) waits for ``release``."""

        def __init__(self, inner):
            self.inner, self.name, self.dimensions, self.texts = inner, inner.name, inner.dimensions, 0

        def embed(self, texts):
            if threading.current_thread().name.startswith("codelex-embed"):
                assert release.wait(60)
            else:
                self.texts += len(texts)
            return self.inner.embed(texts)

    e = Gated(StaticModelEmbedder(make_static_model()))
    p = _open(project_root)
    try:
        r = p.code_search("password check", embedder=e)
        assert r.mode == "provisional" and r.hint.startswith("provisional hybrid answer")
        assert 0 < r.embedded < r.chunks and r.embedded <= ON_DEMAND_EMBED
        assert r.hits[0].path == "auth.py" and r.hits[0].vector_rank is not None
        again = p.code_search("password check", embedder=e)  # the same state: the same answer, no chunk again
        assert [h.to_dict() for h in again.hits] == [h.to_dict() for h in r.hits]
        assert again.generation == r.generation and e.texts == r.embedded + 2  # (the chunks, and the query twice)
        release.set()
        assert p.wait_embeddings(30)
        final = p.code_search("password check", embedder=e)
        assert final.mode == "hybrid" and final.embedded == final.chunks and final.generation != r.generation
    finally:
        release.set()
        p.close()
