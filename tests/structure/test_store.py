"""The structure store: columnar round trips, overlays and compaction, persistence; the worker pool."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex import IndexFormatError
from codelex.persist.structure import load_structure, save_structure
from codelex.structure import analyze
from codelex.structure.model import Chunk, Definition, FileStructure
from codelex.structure.pool import FAULT_ENV, analyze_files, content_hash
from codelex.structure.store import FileRecord, StructureIndex, decode, encode

FIXTURES = Path(__file__).parent / "fixtures"

_names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@st.composite
def records(draw, path=None):
    n_lines = draw(st.integers(1, 400))
    defs = []
    for i in range(draw(st.integers(0, 6))):
        start = draw(st.integers(1, n_lines))
        end = draw(st.integers(start, n_lines))
        defs.append(Definition(draw(_names), draw(_names), draw(st.sampled_from(["function", "class", "method"])),
                               start, end, draw(st.integers(1, start)), draw(st.integers(start, end)), 0, 0,
                               draw(st.integers(-1, i - 1))))
    cuts = sorted(set(draw(st.lists(st.integers(1, n_lines - 1), max_size=5)))) if n_lines > 1 else []
    bounds = [0, *cuts, n_lines]
    chunks = tuple(Chunk(bounds[k] + 1, bounds[k + 1], draw(st.integers(-1, len(defs) - 1)))
                   for k in range(len(bounds) - 1))
    structure = FileStructure(path or draw(_names), draw(st.sampled_from([None, "python", "go"])),
                              draw(st.sampled_from(["parsed", "no-grammar", "timeout"])), n_lines, tuple(defs), chunks)
    return FileRecord(structure, draw(st.integers(0, 2**64 - 1)), draw(st.integers(-(2**63), 2**63 - 1)),
                      draw(st.integers(0, 2**40)))


@settings(max_examples=60, deadline=None)
@given(st.lists(records(), max_size=6, unique_by=lambda r: r.structure.path))
def test_encode_decode_round_trip(recs):
    snapshot = encode(recs)
    snapshot.validate()
    assert [decode(snapshot, i) for i in range(len(recs))] == recs


@settings(max_examples=40, deadline=None)
@given(base=st.lists(records(), max_size=6, unique_by=lambda r: r.structure.path),
       ops=st.lists(st.tuples(st.sampled_from(["put", "remove", "compact"]), st.integers(0, 8), records()),
                    max_size=12))
def test_overlay_and_compaction_equal_a_fresh_encoding(base, ops):
    index = StructureIndex(encode(base))
    model = {r.structure.path: r for r in base}
    for op, k, rec in ops:
        path = f"p{k}"
        if op == "put":
            r = FileRecord(FileStructure(path, *list(rec.structure.__dict__.values())[1:]), rec.hash, rec.mtime_ns,
                           rec.size)
            index.put(r)
            model[path] = r
        elif op == "remove":
            assert index.remove(path) == (path in model)
            model.pop(path, None)
        else:
            index.compact()
        assert {p: index.record(p) for p in model} == model
        assert set(index.paths()) == set(model)
    snapshot = index.snapshot()
    assert {decode(snapshot, i).structure.path: decode(snapshot, i) for i in range(snapshot.n_files)} == model


def test_apply_folds_in_batches_and_unchanged_files():
    a, b, c = (FileRecord(analyze(f"{n}.py", f"def {n}(): pass\n".encode()), i, i, i) for i, n in enumerate("abc"))
    index = StructureIndex(encode([a, b]))
    b2 = FileRecord(analyze("b.py", b"def b2(): pass\n"), 9, 9, 9)
    index.apply([encode([b2, c])], {"a.py": (0, 100, 200)})
    assert index.record("b.py") == b2 and index.record("c.py") == c
    assert index.file_info("a.py") == (0, 100, 200) and index.get("a.py") == a.structure


def test_persistence_round_trip_and_corruption(tmp_path):
    recs = [FileRecord(analyze(p.name, p.read_bytes()), content_hash(p.read_bytes()), 1, p.stat().st_size)
            for p in sorted(FIXTURES.iterdir())]
    save_structure(encode(recs), tmp_path)
    loaded = load_structure(tmp_path)
    assert [decode(loaded, i) for i in range(loaded.n_files)] == recs
    data = bytearray((tmp_path / "structure.clx").read_bytes())
    for pos in range(0, len(data), max(1, len(data) // 300)):
        bad = bytearray(data)
        bad[pos] ^= 0x5A
        (tmp_path / "structure.clx").write_bytes(bad)
        with pytest.raises(IndexFormatError):
            load_structure(tmp_path)
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        (tmp_path / "structure.clx").write_bytes(data[:cut])
        with pytest.raises(IndexFormatError):
            load_structure(tmp_path)


def test_consistent_looking_but_wrong_tables_are_rejected():
    recs = [FileRecord(analyze("a.py", b"def f():\n    pass\n"), 1, 1, 1)]
    snapshot = encode(recs)
    snapshot.arrays["def_ptr"] = np.array([0, 5], dtype=np.uint64)
    with pytest.raises(IndexFormatError):
        snapshot.validate()
    snapshot = encode(recs)
    snapshot.arrays["chunk_end"] = np.array([0], dtype=np.uint32)
    with pytest.raises(IndexFormatError):
        snapshot.validate()


def _tree(tmp_path: Path, n: int = 30) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    for i in range(n):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    def m(self):\n        return {i}\n")
    (root / "bin.py").write_bytes(b"\x00\x01binary")
    return root


def test_workers_give_the_same_as_inline(tmp_path):
    root = _tree(tmp_path)
    files = [(p.name, None) for p in sorted(root.iterdir())]
    inline = analyze_files(root, files, inline=True)
    pooled = analyze_files(root, files, inline=False, workers=2)
    def rows(result):
        return sorted((decode(s, i) for s in result.batches for i in range(s.n_files)), key=lambda r: r.structure.path)
    assert rows(inline) == rows(pooled) and len(rows(inline)) == 30
    assert inline.skipped == pooled.skipped == {"bin.py": "binary"}
    again = analyze_files(root, [(r.structure.path, r.hash) for r in rows(inline)], inline=False, workers=2)
    assert len(again.unchanged) == 30 and not again.batches  # same content hash: not parsed again


@pytest.mark.parametrize("fault", ["crash", "hang"])
def test_a_worker_that_crashes_or_hangs_is_replaced(tmp_path, monkeypatch, fault):
    import codelex.structure.pool as pool

    root = _tree(tmp_path)
    monkeypatch.setenv(FAULT_ENV, f"{fault}:m7.py")
    monkeypatch.setattr(pool, "WORKER_SLACK_S", 2.0)
    monkeypatch.setattr(pool, "BATCH_FILES", 4)
    files = [(p.name, None) for p in sorted(root.iterdir())]
    result = analyze_files(root, files, inline=False, workers=2, budget_s=0.5)
    rows = {decode(s, i).structure.path: decode(s, i) for s in result.batches for i in range(s.n_files)}
    assert len(rows) == 30  # every file, the faulty one included
    assert rows["m7.py"].structure.status == "parse-failed" and rows["m7.py"].structure.chunks
    assert rows["m8.py"].structure.status == "parsed"


def _many_records(n: int = 300) -> list[FileRecord]:
    """Enough files that the large arrays span several digest chunks; paths in no particular order, non-ASCII too."""
    out = []
    for i in range(n):
        path = f"{'zyx'[i % 3]}/m\u00f6d_{(i * 7919) % n}/f{i}.py"
        body = "".join(f"class K{i}_{j}:\n    def method_{j}_{'x' * 40}(self):\n        return {j}\n\n"
                       for j in range(30))
        out.append(FileRecord(analyze(path, body.encode()), i, i, len(body)))
    return out


def test_a_lazy_load_answers_as_an_eager_one_and_finds_files_by_binary_search(tmp_path):
    recs = _many_records()
    save_structure(encode(recs), tmp_path)
    eager, lazy = load_structure(tmp_path), load_structure(tmp_path, lazy=True)
    assert eager.checks is None and lazy.checks is not None
    names = np.frombuffer(lazy.arrays["name_blob"], dtype=np.uint8).nbytes
    assert names > 4 * (1 << 16)  # (several chunks)
    for i, rec in enumerate(recs):
        row = lazy.find(rec.structure.path)
        assert row is not None and decode(lazy, row) == rec == decode(eager, row)
    assert lazy.find("absent.py") is None and lazy.find("") is None and lazy.find("zyx") is None
    store = StructureIndex(load_structure(tmp_path, lazy=True))
    assert store.record(recs[5].structure.path) == recs[5]
    assert store._row_of is None  # a lookup decodes no path but those compared
    assert sorted(store.paths()) == sorted(r.structure.path for r in recs)  # the whole store: checked first
    assert store._base.checks is None


def test_a_lazy_load_checks_only_the_files_it_reads(tmp_path):
    recs = _many_records()
    save_structure(encode(recs), tmp_path)
    store = StructureIndex(load_structure(tmp_path, lazy=True))
    assert store.get(recs[0].structure.path) == recs[0].structure
    seen = store._base.checks.seen
    assert 0 < int(seen["name_blob"].sum()) < len(seen["name_blob"])


def test_corruption_of_a_large_array_is_found_when_its_file_is_read(tmp_path):
    recs = _many_records()
    save_structure(encode(recs), tmp_path)
    file = tmp_path / "structure.clx"
    data = bytearray(file.read_bytes())
    snapshot = load_structure(tmp_path)
    entry = next(e for e in snapshot.container.header["arrays"] if e["name"] == "name_blob")
    last = recs[-1].structure.path
    row = snapshot.find(last)
    lo = int(snapshot.arrays["name_off"][int(snapshot.arrays["def_ptr"][row])])
    data[entry["offset"] + lo] ^= 0x20  # one name of the last file, as a bit flip would
    file.write_bytes(bytes(data))
    with pytest.raises(IndexFormatError):
        load_structure(tmp_path)  # an eager load checks everything
    lazy = load_structure(tmp_path, lazy=True)  # a lazy one, only what it reads...
    assert decode(lazy, lazy.find(recs[0].structure.path)) == recs[0]
    with pytest.raises(IndexFormatError):
        decode(lazy, lazy.find(last))  # ...but always before it is used
    store = StructureIndex(load_structure(tmp_path, lazy=True))
    version = store.version
    assert store.record(last) is None  # the store is dropped: its files are unknown, analyzed again
    assert store.version > version and store.changes and store.covers is None
    assert store.record(recs[0].structure.path) is None and list(store.paths()) == []
    store = StructureIndex(load_structure(tmp_path, lazy=True))
    assert list(store.paths()) == []  # a whole read checks everything first


def test_an_older_store_is_refused(tmp_path):
    from codelex.persist.container import write_container
    from codelex.persist.structure import FORMAT, FORMAT_VERSION, SCHEMA

    # 4 is refused too: its outlines came from the extraction before issue 33's fixes.
    for version in (3, FORMAT_VERSION - 1):
        write_container(tmp_path, "structure.clx", encode(_many_records(3)).arrays, SCHEMA, {"format": FORMAT},
                        version)
        with pytest.raises(IndexFormatError, match="version"):
            load_structure(tmp_path, lazy=True)


def test_names_and_the_enclosing_definition_read_from_the_columns_are_the_decoded_structures():
    """StructureIndex.names and .enclosing (a search's reads: one file's names or one definition, not the file's
    every object) answer as the decoded FileStructure does, saved and loaded lazily or not."""
    import tempfile

    from codelex.persist.structure import load_structure
    from codelex.structure import analyze
    from codelex.structure.store import FileRecord, StructureIndex

    files = {
        "geo.py": b"class Shape:\n    def area(self):\n        return 0\n\n    class Inner:\n        def f(self):\n"
                  b"            pass\n\n\ndef top():\n    return Shape()\n",
        "lib.rs": b"struct P;\nimpl P {\n    fn new() -> Self { P }\n    fn get(&self) -> u8 { 1 }\n}\nfn main() {}\n",
        "x.txt": b"no definitions here\n",
    }
    records = [FileRecord(analyze(p, c), hash(c), 7, len(c)) for p, c in files.items()]
    with tempfile.TemporaryDirectory() as d:
        StructureIndex(encode(records)).save(d)
        for store in (StructureIndex(encode(records)), StructureIndex(load_structure(d, lazy=True))):
            for rec in records:
                s = rec.structure
                assert store.names(s.path) == (7, rec.size, frozenset(x.name for x in s.definitions))
                for line in range(0, s.lines + 2):
                    want = s.enclosing(line)
                    assert store.enclosing(s.path, line) == (7, rec.size, want.qualified_name if want else None,
                                                             want.end_line if want else 0), (s.path, line)
            assert store.names("nope.py") is None and store.enclosing("nope.py", 1) is None
