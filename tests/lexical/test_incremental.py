"""Per-edit maintenance: updates and removals equal a fresh build, under any history."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import codelex
from codelex import WordIndex, _reference

WORDS = [
    "alpha", "beta", "gamma", "parseConfig", "parse_config", "HTTPServer", "getUserByID", "user", "config",
    "café", "naïveBayes", "Ωmega", "load", "save", "index", "the", "42", "x", "delta_v2", "SegmentView",
    "def", "class", "(", "):", "MAX_SIZE =",
]
PATHS = [
    "src/app.py", "src/util.py", "src/http/server.py", "lib/config.js", "docs/readme.md", "tests/test_app.py",
    "vendor/dep.go", "main.rs", "src/Ωmega.py", "notes.txt",
]
QUERIES = [
    "parse config", "user", "alpha beta gamma", "http server", "café naïve", "getUserByID", "index save load",
    "lang:python user", "file:src config", "-file:test parse", "ext:md alpha", "segment view delta",
]

line_st = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
content_st = st.lists(line_st, max_size=10).map("\n".join)
definitions_st = st.none() | st.lists(st.tuples(st.sampled_from(WORDS), st.integers(1, 12)), max_size=3)


def fresh(docs: dict[str, str | bytes], max_bytes: int | None, definitions: dict | None = None) -> WordIndex:
    definitions = definitions or {}
    return WordIndex.build([(p, c, -1, definitions.get(p)) for p, c in docs.items()], max_bytes=max_bytes)


LOGICAL_STATS = ("files", "tokens", "postings", "term_doc_pairs", "total_tokens")


def assert_same(idx: WordIndex, docs: dict[str, str | bytes], max_bytes: int | None,
                definitions: dict | None = None) -> None:
    """idx answers exactly like a fresh build and like the references over docs, in both rankings."""
    definitions = definitions or {}
    kept = {p: c for p, c in docs.items() if max_bytes is None or len(c.encode() if isinstance(c, str) else c) <= max_bytes}
    ref_build = fresh(kept, max_bytes, definitions)
    assert sorted(idx.files) == sorted(ref_build.files) == sorted(kept)
    assert len(idx) == len(kept)
    got_stats, want_stats = idx.stats(), ref_build.stats()
    assert {k: got_stats[k] for k in LOGICAL_STATS} == {k: want_stats[k] for k in LOGICAL_STATS}
    for path in kept:
        assert path in idx
        assert idx.document_length(path) == ref_build.document_length(path)
    ref = _reference.ReferenceIndex(kept.items())
    for q in QUERIES:
        for ranking in codelex.RANKINGS:
            got = idx.search(q, limit=50, ranking=ranking)
            assert got == ref_build.search(q, limit=50, ranking=ranking), (q, ranking)  # identical, bit for bit
    field_ref = _reference.ReferenceFieldIndex((p, c, definitions.get(p)) for p, c in kept.items())
    for q in ("parse config", "user", "alpha beta gamma", "getUserByID", "src http"):
        got = idx.search(q, limit=50, demote_test_vendor=False, demote_docs=False, ranking="classic")
        want = ref.search(q, limit=50)
        assert [(h.file, h.hits, h.start_line) for h in got] == [(p, hits, line) for p, _, hits, line in want]
        for h, (_, score, _, _) in zip(got, want):
            assert math.isclose(h.score, score, rel_tol=1e-9)
        got = idx.search(q, limit=50, demote_test_vendor=False, demote_docs=False, ranking="code")
        want = field_ref.search(q, limit=50)
        assert [(h.file, h.hits, h.start_line, h.fields) for h in got] == [w[:1] + w[2:] for w in want], q
        for h, w in zip(got, want):
            assert math.isclose(h.score, w[1], rel_tol=1e-9)


class IndexMachine(RuleBasedStateMachine):
    """Random builds, updates, removals, merges and save/load round trips."""

    def __init__(self) -> None:
        super().__init__()
        self.docs: dict[str, str | bytes] = {}
        self.definitions: dict[str, list[tuple[str, int]]] = {}
        self.max_bytes = 120
        self.idx = WordIndex(max_bytes=self.max_bytes)

    @initialize(seed=st.dictionaries(st.sampled_from(PATHS), content_st, max_size=6),
                merge_min=st.sampled_from([0, 40, 1 << 16]), ratio=st.sampled_from([None, 0.1, 0.5]))
    def build(self, seed, merge_min, ratio):
        self.docs = {p: c for p, c in seed.items() if len(c.encode()) <= self.max_bytes}
        self.idx = WordIndex.build(seed.items(), max_bytes=self.max_bytes)
        self.idx.merge_min_postings = merge_min
        self.idx.merge_ratio = ratio

    @rule(path=st.sampled_from(PATHS), content=content_st, as_bytes=st.booleans(), definitions=definitions_st)
    def update(self, path, content, as_bytes, definitions):
        data = content.encode() if as_bytes else content
        indexed = self.idx.update(path, data, definitions=definitions)
        assert indexed == (len(content.encode()) <= self.max_bytes)
        self.definitions.pop(path, None)
        if indexed:
            self.docs[path] = data
            if definitions is not None:
                self.definitions[path] = definitions
        else:
            self.docs.pop(path, None)

    @rule(path=st.sampled_from(PATHS))
    def remove(self, path):
        present = path in self.docs
        assert self.idx.remove(path) is present
        self.docs.pop(path, None)
        self.definitions.pop(path, None)

    @rule()
    def merge(self):
        self.idx.merge()
        assert self.idx.stats()["pending_postings"] == 0

    @rule(mmap=st.booleans())
    def save_and_load(self, mmap):
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            self.idx.save(d)
            loaded = WordIndex.load(d, mmap=mmap)
        loaded.merge_min_postings = self.idx.merge_min_postings
        loaded.merge_ratio = self.idx.merge_ratio
        self.idx = loaded

    @invariant()
    def equals_fresh_build(self):
        assert_same(self.idx, self.docs, self.max_bytes, self.definitions)


IndexMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestIndexMachine = IndexMachine.TestCase


def test_original_equivalence_scenario():
    """The original's property: 8 seed documents, 25 random edits, 5 queries (limit 50)."""
    import random

    rng = random.Random(42)
    vocab = [f"w{i}" for i in range(20)]

    def text():
        return "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 5)))

    docs = {f"f{i}.ts": text() for i in range(8)}
    idx = WordIndex.build(docs.items())
    for _ in range(25):
        op = rng.random()
        path = f"f{rng.randint(0, 11)}.ts"
        if op < 0.5:
            docs[path] = text()
            idx.update(path, docs[path])
        elif op < 0.75:
            assert idx.remove(path) == (docs.pop(path, None) is not None)
        else:
            docs[path] = text()
            idx.update(path, docs[path])
    idx.update("f0.ts", "")  # shrink to empty
    docs["f0.ts"] = ""
    idx.update("f0.ts", "w1 w2\nw3")  # grow from empty
    docs["f0.ts"] = "w1 w2\nw3"
    for q in ["w1", "w2 w3", "w4 w5 w6", "w0", "w19 w7"]:
        assert idx.search(q, limit=50) == fresh(docs, None).search(q, limit=50)


def test_update_touches_only_its_own_postings():
    """An update leaves unrelated documents' postings where they are (no rewrite)."""
    docs = [(f"m{i}.py", f"def handler_{i}(): return shared_name\n") for i in range(200)]
    idx = WordIndex.build(docs)
    idx.merge_ratio = None
    idx.update("m7.py", "def renamed(): pass\n")
    stats = idx.stats()
    assert 0 < stats["pending_postings"] < 20  # the edited file's old and new postings only
    assert [h.file for h in idx.search("renamed")] == ["m7.py"]
    assert "m7.py" not in [h.file for h in idx.search("handler 7", limit=200) if h.hits > 1]


def test_file_info_and_max_bytes():
    idx = WordIndex.build([("a.py", "alpha", 123), ("b.py", b"beta")], max_bytes=11)
    assert idx.file_info("a.py") == codelex.FileInfo(123, 5, 1)
    assert idx.file_info("b.py").mtime_ns == -1
    idx.update("a.py", "alpha alpha", mtime_ns=7)
    assert idx.file_info("a.py") == codelex.FileInfo(7, 11, 2)
    assert idx.update("a.py", "x" * 12) is False  # over the cap: removed, not truncated
    assert "a.py" not in idx and idx.search("alpha") == []
    assert idx.update("c.py", "y" * 12) is False and "c.py" not in idx
    assert idx.update("d.py", "é" * 6) is False  # the cap counts UTF-8 bytes, not characters
    with pytest.raises(KeyError):
        idx.file_info("a.py")
    assert WordIndex.build([("big.py", "z" * 11)], max_bytes=10).files == []


def test_bad_input():
    idx = WordIndex.build([("a.py", "alpha")])
    assert idx.remove("nope.py") is False
    assert idx.remove("a.py") is True
    assert idx.remove("a.py") is False
    with pytest.raises(TypeError):
        idx.update("a.py", 42)
    with pytest.raises(TypeError):
        idx.update("a.py", ["alpha"])
    with pytest.raises(TypeError):
        idx.update(b"a.py", "alpha")
    with pytest.raises(ValueError):
        idx.update("a\x00.py", "alpha")
    with pytest.raises(ValueError):
        idx.remove("a\x00.py")
    with pytest.raises(TypeError):
        idx.update("a.py", "alpha", mtime_ns=1.5)
    with pytest.raises(TypeError):
        idx.remove(None)
    with pytest.raises(TypeError):
        WordIndex(max_bytes="big")
    with pytest.raises(ValueError):
        WordIndex(max_bytes=-1)
    assert len(idx) == 0


def test_removed_path_comes_back_in_place():
    idx = WordIndex.build([("a.py", "alpha"), ("b.py", "beta"), ("c.py", "gamma")])
    idx.merge_ratio = None
    idx.remove("b.py")
    assert idx.files == ["a.py", "c.py"]
    idx.update("b.py", "beta again")
    assert idx.files == ["a.py", "b.py", "c.py"]
    idx.merge()
    assert idx.files == ["a.py", "b.py", "c.py"]
    assert idx.search("beta")[0].file == "b.py"


def test_filters_follow_new_files():
    idx = WordIndex.build([("src/a.py", "parse config"), ("lib/b.js", "parse config")])
    assert [h.file for h in idx.search("file:src parse")] == ["src/a.py"]
    idx.update("src/c.py", "parse config again")
    idx.update("lib/d.go", "parse")
    assert sorted(h.file for h in idx.search("file:src parse")) == ["src/a.py", "src/c.py"]
    assert [h.file for h in idx.search("lang:go parse")] == ["lib/d.go"]
    assert sorted(h.file for h in idx.search("parse", paths=["lib/**"])) == ["lib/b.js", "lib/d.go"]
    idx.merge()
    assert sorted(h.file for h in idx.search("file:src parse")) == ["src/a.py", "src/c.py"]
    assert idx.search("parse", centrality={"lib/d.go": 50})[0].file == "lib/d.go"


def test_searches_never_see_a_half_applied_update():
    """Readers racing a writer only ever see one of the states the writer passes through."""
    base = {f"src/m{i}.py": f"def handler_{i}(request):\n    return parse_config(request)\n" for i in range(60)}
    versions = ["parse config once\n", "config config parse\nparse\n", "", "unrelated words only\n"]
    # The writer cycles: update x.py through the versions, add y.py, remove y.py, merge.
    states = []
    docs = dict(base)
    for v in versions:
        docs["x.py"] = v
        states.append(dict(docs))
    docs["y.py"] = "parse config parse_config"
    states.append(dict(docs))
    del docs["y.py"]
    states.append(dict(docs))
    queries = ["parse config", "lang:python config", "file:m1 parse", "handler request"]
    expected = {q: [fresh(s, None).search(q) for s in states] for q in queries}

    idx = WordIndex.build(states[-1].items())
    idx.merge_min_postings = 0
    idx.merge_ratio = 0.05  # merge often, to race swaps too
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader():
        try:
            while not stop.is_set():
                for q in queries:
                    got = idx.search(q)
                    if got not in expected[q]:
                        raise AssertionError(f"{q!r}: a result that matches no state: {got[:3]}")
        except BaseException as exc:  # reported below
            errors.append(exc)
            stop.set()

    def writer():
        try:
            for _ in range(400):
                for v in versions:
                    idx.update("x.py", v)
                idx.update("y.py", "parse config parse_config")
                idx.remove("y.py")
                if stop.is_set():
                    return
        except BaseException as exc:
            errors.append(exc)
        finally:
            stop.set()

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
