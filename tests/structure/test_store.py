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
