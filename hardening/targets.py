"""Fuzz targets: every native entry point and every parser of outside input, one function each.

Each target takes arbitrary bytes and returns normally, or raises one of the
errors its API documents for bad input (:data:`EXPECTED`); anything else is a
bug.  Several are differential: the native tokenizer against the pure-Python
reference, an index after a sequence of updates against a fresh build, a
flipped index file against the answers of the intact one.  The same
functions run under atheris (``hardening/fuzz.py``), in the ordinary test
suite on the kept corpus (``tests/hardening``) and under the sanitizers.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import codelex

try:
    from codelex import _reference
except ImportError:  # the wheel leaves the oracles out: take them from the source tree beside this one
    codelex.__path__.append(str(Path(__file__).resolve().parents[1] / "src" / "codelex"))
    from codelex import _reference
from codelex.errors import ConfigError, IndexFormatError, QueryError

__all__ = ["EXPECTED", "TARGETS"]

#: What bad input may raise, per target (a named, documented error); anything else fails the run.
EXPECTED: dict[str, tuple[type[BaseException], ...]] = {}

_SCRATCH = Path(tempfile.mkdtemp(prefix="codelex-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))

WORDS = ["parse", "config", "getUserByID", "http_server", "Ωmega", "café", "x", "load", "save", "index",
         "def", "class", "func", "fn", "import", "::", "{", "}", "(", ")", "\t", "#", "//", "\x00", "\ufeff"]
PATHS = ["src/app.py", "lib/b.ts", "main.go", "src/lib.rs", "A.java", "inc/x.h", "docs/r.md", "tests/test_a.py",
         "vendor/v.js", "Ωmega.py"]


def _texts(data: bytes) -> tuple[str, str]:
    """Two decodings of the same bytes: lone surrogates kept, and replaced."""
    return data.decode("utf-8", "surrogateescape"), data.decode("utf-8", "replace")


class _Reader:
    """Structured choices out of a byte string (what atheris' FuzzedDataProvider does, portably)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            return 0
        self.at += 1
        return self.data[self.at - 1]

    def blob(self, cap: int) -> bytes:
        n = min(self.byte() % (cap + 1), len(self.data) - self.at)
        self.at += n
        return self.data[self.at - n:self.at]

    def text(self, cap: int) -> str:
        """Words of the vocabulary and raw bytes mixed: inputs the tokenizer and the scorer both care about."""
        out = []
        for _ in range(self.byte() % (cap + 1)):
            b = self.byte()
            out.append(WORDS[b % len(WORDS)] if b < 200 else self.blob(8).decode("utf-8", "surrogateescape"))
            out.append("\n" if self.byte() % 4 == 0 else " ")
        return "".join(out)

    @property
    def done(self) -> bool:
        return self.at >= len(self.data)


def _target(name: str, *expected: type[BaseException]):
    def register(fn):
        EXPECTED[name] = expected
        TARGETS[name] = fn
        return fn

    return register


TARGETS: dict = {}


# --- text ------------------------------------------------------------------------------


@_target("tokenize")
def tokenize(data: bytes) -> None:
    """The native tokenizer on arbitrary bytes and strings, against the pure-Python reference."""
    from codelex import text

    for value in (data, *_texts(data)):
        got = text.tokenize_line(value)
        assert got == _reference.tokenize_line(value), value
        assert text.split_identifier(value) == _reference.split_identifier(value), value
        text.utf8_length(value)
    vocab = codelex.Vocabulary()
    ids, lines = codelex.tokenize_document(data, vocab)
    assert len(ids) == len(lines)
    if len(ids):
        assert int(ids.max()) < len(vocab)
    for path in PATHS[:6]:
        codelex.scan_definitions(path, data)
        assert codelex.scan_definitions(path, _texts(data)[0]) == _reference.scan_definitions(path, _texts(data)[0])


@_target("documents")
def documents(data: bytes) -> None:
    """Bulk tokenization: an index built from several documents cut out of the input."""
    r = _Reader(data)
    docs = {}
    while not r.done and len(docs) < 8:
        path = PATHS[r.byte() % len(PATHS)]
        docs[path] = r.blob(200) if r.byte() % 2 else r.text(30)
    index = codelex.WordIndex.build(list(docs.items()), max_bytes=None, workers=2)
    assert sorted(index.files) == sorted(docs)
    for q in ("parse config", "getUserByID", "café", "x"):
        assert len(index.search(q, limit=5)) <= 5


@functools.lru_cache(maxsize=1)
def _query_index() -> codelex.WordIndex:
    docs = [(p, f"def parse_config(): pass\n{i} getUserByID load save index café\n" * (i + 1))
            for i, p in enumerate(PATHS)]
    return codelex.WordIndex.build(docs)


@_target("query", QueryError, TypeError, ValueError)
def query(data: bytes) -> None:
    """Query parsing and search with arbitrary inline filters and options."""
    index = _query_index()
    r = _Reader(data)
    text = data.decode("utf-8", "surrogateescape")
    if r.byte() % 3 == 0:  # lean towards filter syntax
        ops = ["lang:", "file:", "-file:", "ext:", "path:", "-lang:", '"', "*", "**", "{", "[", "\\", "~"]
        text = " ".join(ops[b % len(ops)] + WORDS[b % len(WORDS)] for b in data[:12])
    codelex.parse_query(text)
    limit = r.byte() % 12
    hits = index.search(text, limit=limit, ranking=codelex.RANKINGS[r.byte() % len(codelex.RANKINGS)])
    assert len(hits) <= limit
    for h in hits:
        assert h.file in index and h.score >= 0



# --- persistence -----------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _valid_index() -> tuple[bytes, dict]:
    """A small saved index's bytes and its answers (what a damaged copy must match or refuse)."""
    docs = [(p, f"def parse_config(): pass\n{i} getUserByID load café\n" + "save index\n" * i)
            for i, p in enumerate(PATHS)]
    index = codelex.WordIndex.build(docs)
    directory = _SCRATCH / "valid"
    index.save(directory)
    answers = {q: index.search(q, limit=20) for q in _ANSWER_QUERIES}
    return (directory / "index.clx").read_bytes(), answers


_ANSWER_QUERIES = ("parse config", "getUserByID", "café save", "index", "lang:python load", "file:src x")


def _load_and_use(raw: bytes, want: dict | None) -> None:
    directory = _SCRATCH / "load"
    directory.mkdir(exist_ok=True)
    (directory / "index.clx").write_bytes(raw)
    for verify in (True, False):
        try:
            index = codelex.WordIndex.load(directory, verify=verify)
            answers = {q: index.search(q, limit=20) for q in _ANSWER_QUERIES}
            index.update("new.py", "parse config")
            index.remove(PATHS[0])
            index.merge()
            if verify:
                index.verify()
        except IndexFormatError:
            continue
        if verify and want is not None:
            # Checksummed: a damaged file that still loads and verifies must answer as the intact one.
            assert answers == want, "a damaged index answered differently"


@_target("load_bytes", IndexFormatError)
def load_bytes(data: bytes) -> None:
    """Index load from arbitrary bytes (a valid header grafted on half the time)."""
    raw, _ = _valid_index()
    if data[:1] and data[0] % 2:
        data = raw[: data[0] * 8] + data[1:]
    _load_and_use(data, None)


@_target("load_mutated", IndexFormatError)
def load_mutated(data: bytes) -> None:
    """A valid index with bytes flipped, overwritten, cut or duplicated at fuzzer-chosen offsets."""
    raw, want = _valid_index()
    buf = bytearray(raw)
    r = _Reader(data)
    for _ in range(1 + r.byte() % 4):
        at = (r.byte() << 16 | r.byte() << 8 | r.byte()) % max(1, len(buf))
        how = r.byte() % 4
        if how == 0:
            buf[at] ^= 1 << (r.byte() % 8)
        elif how == 1:
            buf[at:at + 8] = r.blob(8).ljust(8, b"\0")
        elif how == 2:
            del buf[at:]
        else:
            buf[at:at] = buf[at:at + r.byte() % 64]
        if not buf:
            break
    _load_and_use(bytes(buf), want)


@_target("updates")
def updates(data: bytes) -> None:
    """update / remove / merge / save+load sequences, then exactly a fresh build's answers."""
    r = _Reader(data)
    docs: dict[str, str | bytes] = {p: r.text(6) for p in PATHS[:4]}
    index = codelex.WordIndex.build(list(docs.items()))
    index.merge_min_postings, index.merge_ratio = 1, 0.01
    while not r.done:
        op, path = r.byte() % 6, PATHS[r.byte() % len(PATHS)]
        if op <= 1:
            docs[path] = r.text(8) if op == 0 else r.blob(60)
            index.update(path, docs[path])
        elif op == 2:
            assert index.remove(path) == (docs.pop(path, None) is not None)
        elif op == 3:
            index.merge()
        elif op == 4:
            directory = _SCRATCH / "updates"
            index.save(directory)
            index = codelex.WordIndex.load(directory)
            index.merge_min_postings, index.merge_ratio = 1, 0.01
        else:
            index.search(r.text(3) or "x", limit=5)
    fresh = codelex.WordIndex.build(list(docs.items()))
    assert sorted(index.files) == sorted(fresh.files)
    for q in ("parse config", "getUserByID", "café", "x load", "lang:python index"):
        for ranking in codelex.RANKINGS:
            assert index.search(q, limit=20, ranking=ranking) == fresh.search(q, limit=20, ranking=ranking), q


# --- structure, docs, configuration, imports -------------------------------------------

_STRUCTURE_PATHS = ["a.py", "a.ts", "a.tsx", "a.js", "a.go", "a.rs", "A.java", "a.c", "a.cpp", "a.h", "a.cs", "a.rb",
                    "a.php", "a.kt", "a.scala", "a.swift", "a.lua", "a.sh"]


@_target("structure")
def structure(data: bytes) -> None:
    """The structure stage (tree-sitter parse, definitions, chunks) on arbitrary source text per language."""
    from codelex.structure.extract import analyze, structure_available

    if structure_available() is not None:
        return
    path = _STRUCTURE_PATHS[data[0] % len(_STRUCTURE_PATHS)] if data else "a.py"
    content = data[1:]
    result = analyze(path, content)
    if result.chunks:  # a file's chunks partition it
        assert result.chunks[0].start_line == 1 and result.chunks[-1].end_line == result.lines, (path, result)
        for a, b in zip(result.chunks, result.chunks[1:]):
            assert a.start_line <= a.end_line and b.start_line == a.end_line + 1, (path, a, b)
    for d in result.definitions:
        assert 1 <= d.start_line <= d.end_line <= max(1, result.lines), (path, d)
        assert -1 <= d.parent < len(result.definitions), (path, d)


@_target("docs")
def docs(data: bytes) -> None:
    """The docs section parser (Markdown, reStructuredText) and section scoring."""
    from codelex.docs.scoring import search
    from codelex.docs.sections import sections_from_file

    text = _texts(data)[0]
    for path in ("README.md", "guide.rst", "notes.txt"):
        sections = sections_from_file(path, text)
        for s in sections:
            assert s.start_line >= 1
        search(sections, text[:40] or "x", limit=5)


@_target("config", ConfigError)
def config(data: bytes) -> None:
    """The configuration reader on arbitrary TOML files (pyproject, .codelex.toml) and .codelexignore."""
    from codelex.project.config import load_config

    root = _SCRATCH / "config"
    root.mkdir(exist_ok=True)
    for name in ("pyproject.toml", ".codelex.toml", ".codelexignore"):
        (root / name).unlink(missing_ok=True)
    r = _Reader(data)
    which = ("pyproject.toml", ".codelex.toml", ".codelexignore")[r.byte() % 3]
    body = data[r.at:]
    if which == "pyproject.toml" and r.byte() % 2:
        body = b"[tool.codelex]\n" + body
    (root / which).write_bytes(body)
    load_config(root)


@_target("imports")
def imports(data: bytes) -> None:
    """The import graph's scanners and resolver on arbitrary text per language."""
    from codelex.graph import extract_imports, from_mapping

    text = _texts(data)[0]
    files = {}
    for path in ("a.py", "pkg/__init__.py", "a.ts", "index.js", "a.go", "src/lib.rs", "A.java", "a.kt", "a.c",
                 "include/a.h", "go.mod", "Cargo.toml", "tsconfig.json", "package.json"):
        extract_imports(path, text)
        files[path] = text
    graph = from_mapping(files)
    graph.stats()
    graph.prior_counts()


# --- the remaining native entry points --------------------------------------------------


@_target("vectors", ValueError)
def vectors(data: bytes) -> None:
    """The exact native top-k and scores over arbitrary float32 matrices, against the reference."""
    import numpy as np

    from codelex._native.dense import VectorIndex
    from codelex._reference import vectors as ref

    r = _Reader(data)
    n, d = 1 + r.byte() % 40, 1 + r.byte() % 12
    raw = r.blob(255) * 8
    values = np.frombuffer(raw[: (len(raw) // 4) * 4] or b"\0\0\0\0", dtype=np.float32)
    cells = np.resize(values, n * d).astype(np.float32)
    if r.byte() % 2:  # tame magnitudes half the time (raw bit patterns are mostly huge or tiny)
        cells = np.clip(np.nan_to_num(cells, nan=0.5, posinf=3.0, neginf=-3.0), -1e6, 1e6).astype(np.float32)
    matrix = cells.reshape(n, d)
    index = VectorIndex(matrix)  # ValueError for NaN or infinity
    q = np.resize(matrix[r.byte() % n][::-1] + np.float32(0.25), d).astype(np.float32)
    if not np.isfinite(q).all():
        return
    want = ref.exact_scores(matrix, q)
    if not np.isfinite(want).all():  # overflow to infinity in double: not a comparable score
        return
    assert np.array_equal(index.scores(q), want)
    k = r.byte() % (n + 3)
    allowed = np.array([(b >> 1) % 3 != 0 for b in np.resize(np.frombuffer(data or b"\1", dtype=np.uint8), n)])
    for mask in (None, allowed):
        got_rows, got_scores = index.top_k(q, k, mask, threads=1 + r.byte() % 3)
        want_rows, want_scores = ref.top_k(matrix, q, k, mask)
        assert np.array_equal(got_rows, want_rows) and np.array_equal(got_scores, want_scores)


@_target("arrays", ValueError, TypeError, IndexFormatError)
def arrays(data: bytes) -> None:
    """Packed offsets, term heads and filters, and vocabularies rebuilt from arbitrary arrays."""
    import numpy as np

    from codelex._native import text as core

    r = _Reader(data)
    steps = np.frombuffer(r.blob(200), dtype=np.uint8).astype(np.uint64)
    if r.byte() % 4 == 0:
        steps = steps * np.uint64(1 << 26)  # offsets past 32 bits: the bases must carry them
    offsets = np.concatenate([[0], np.cumsum(steps, dtype=np.uint64)]).astype(np.uint64)
    base, rel = core.pack_offsets(offsets)
    assert np.array_equal(core.unpack_offsets(base, rel), offsets)
    if len(offsets) > 2 and r.byte() % 2:  # not monotonic: refused
        bad = offsets.copy()
        bad[1], bad[2] = bad[2] + np.uint64(1), bad[1]
        try:
            core.pack_offsets(bad)
        except ValueError:
            pass
    words = sorted({w.encode("utf-8", "surrogateescape") for w in _texts(r.blob(120))[0].split()} | {b"a", b"zz"})
    blob = np.frombuffer(b"".join(words), dtype=np.uint8)
    term_off = np.cumsum([0] + [len(w) for w in words], dtype=np.uint64)
    core.term_heads(blob, term_off)
    filt = core.term_filter(blob, term_off)
    b, rl = core.pack_offsets(term_off)
    vocab = core.Vocabulary.from_sorted(blob, b, rl, filter=filt)
    for w in words:
        assert vocab.find(w) >= 0, w
    # arbitrary arrays where a vocabulary expects sorted terms: refused, or a working vocabulary
    junk = np.frombuffer(r.blob(120) or b"x", dtype=np.uint8)
    cuts = np.sort(np.frombuffer(r.blob(16) or b"\0", dtype=np.uint8).astype(np.uint64))
    n_junk = r.byte() % 40
    junk_blocks = np.sort(np.frombuffer(r.blob(4) or b"\0", dtype=np.uint8).astype(np.uint64))
    junk_blocks = np.resize(junk_blocks, -(-n_junk // core.TERM_BLOCK) + 1)
    junk_blocks[-1] = len(junk)
    for fn in (lambda: core.Vocabulary.from_arrays(junk, cuts),
               lambda: core.Vocabulary.from_sorted(junk, *core.pack_offsets(cuts)),
               # arbitrary bytes as front-coded blocks: refused when validated in full ...
               lambda: core.Vocabulary.from_front_coded(junk, *core.pack_offsets(np.sort(junk_blocks)), n_junk)):
        try:
            v = fn()
        except (ValueError, TypeError, IndexFormatError):
            continue
        for i in range(min(len(v), 8)):
            v.find(v.term(i))
    # ... and read lazily (digests that match them): every read answers or raises "corrupt index", in bounds
    base_j, rel_j = core.pack_offsets(np.sort(junk_blocks))
    try:
        v = core.Vocabulary.from_front_coded(junk, base_j, rel_j, n_junk, core.chunk_digests(junk),
                                             core.chunk_digests(rel_j))
    except ValueError:
        return
    try:
        v.find(b"a")
        v.base_words("", 1, 24)
        v.to_arrays(v.sorted_order())
    except RuntimeError as exc:
        if not str(exc).startswith("corrupt index:"):
            raise


@_target("stat_paths", ValueError, TypeError, RuntimeError)
def stat_paths(data: bytes) -> None:
    """The native batch lstat on arbitrary root-relative paths, against os.lstat."""
    import stat as st

    from codelex._native import ingest

    root = _SCRATCH / "stat"
    if not root.exists():
        (root / "d").mkdir(parents=True)
        (root / "f.py").write_text("x = 1\n")
        (root / "d" / "g.py").write_text("y\n")
        os.symlink("f.py", root / "link")
    text = _texts(data)[0]
    paths = [p for p in text.split("|")][:16] + ["f.py", "d", "link", "missing", "d/g.py"]
    mtime, size, kind = ingest.stat_paths(str(root), paths, 1 + len(data) % 3)
    for p, m, s, k in zip(paths, mtime.tolist(), size.tolist(), kind.tolist()):
        try:
            info = os.lstat(str(root) + "/" + p)  # the native join: root, "/", the path as given
        except (OSError, ValueError):
            assert k in (ingest.MISSING, ingest.ERROR), (p, k)
            continue
        want = ingest.SYMLINK if st.S_ISLNK(info.st_mode) else ingest.DIRECTORY if st.S_ISDIR(info.st_mode) \
            else ingest.FILE if st.S_ISREG(info.st_mode) else ingest.OTHER
        assert k == want, (p, k, want)
        if k == ingest.FILE:
            assert (m, s) == (info.st_mtime_ns, info.st_size), p
