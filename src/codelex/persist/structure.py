"""The structure store's on-disk format (version 5): ``structure.clx`` beside the word index.

Columnar arrays, three tables:

- files: ``path`` (blob + offsets), ``hash`` (xxh3-64 of the content the
  structure was read from), ``mtime_ns``, ``size``, ``status`` and
  ``grammar`` (small codes), ``lines``, and ``def_ptr``/``chunk_ptr``
  (each file's rows of the two tables below, n + 1 offsets);
- definitions: ``name`` and ``qualified`` (blobs + offsets; a qualified
  name is stored only where it is not the parent's plus the name), ``kind``,
  ``start``, ``end``, ``outer``, ``sig_line``, ``doc_start``, ``doc_end``
  and ``parent`` (an index within the file, -1 for none);
- chunks: ``chunk_start``, ``chunk_end``, ``chunk_def`` (within the file);
- for reads that need a few files: ``path_order`` (the files' rows in
  path order, UTF-8 bytewise: a path is found by binary search, no path
  decoded but the ones compared) and ``digest_<array>`` for each array of
  the two large tables (xxh3-64 of each :data:`CHUNK_BYTES` of it).

``load_structure(..., lazy=True)`` checks the files table whole (it is
small) and each large array's chunks only as a file's rows are first read
(:meth:`StructureSnapshot.check_row`; the chunk digests are themselves
covered by the header's, which the MAC covers), so opening a large tree's
store costs the files table, not the store; :meth:`StructureSnapshot.complete`
checks the rest before anything reads the whole store.

The structure stage crosses this module only as a :class:`StructureSnapshot`.

Only a file this user wrote is read (its header's MAC: :mod:`codelex.persist.trust`):
a committed or copied ``structure.clx`` would otherwise name the definitions
its author chose, checksums and all.  Version 2: the MAC.  Version 4: the
path order and the chunk digests (older files are refused and analyzed again).  Version 5:
the same layout, filled by an extraction that reads more (issue 33's outline gaps: exported JS/TS
bindings, Go ``var``s and grouped members' own spans, C structs after macro lines, chunk labels); a
store of 4 would keep its files' older outlines until they changed, so it is refused and rebuilt.

The header may carry ``covers``: the digest of the walk (paths, sizes,
mtimes) the store was last brought fully in line with, so that an open whose
walk has the same digest knows that nothing is left to analyze without
comparing a file (:attr:`StructureSnapshot.covers`; absent: not known).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from codelex.defaults import STRUCTURE_FILE
from codelex.errors import IndexFormatError
from codelex.persist.container import is_dir, read_container, write_container

__all__ = ["CHUNK_BYTES", "FORMAT", "FORMAT_VERSION", "SCHEMA", "StructureSnapshot", "load_structure",
           "save_structure"]

FORMAT = "codelex-structure"
#: 3: a definition split over several chunks begins a chunk of its own (structures saved by an older chunker
#: are refused and analyzed again).  4: ``path_order`` and the large arrays' chunk digests.  5: issue 33's
#: outline fixes (definitions and chunk labels an older extraction did not give).
FORMAT_VERSION = 5
#: The large arrays' digests cover this many bytes each.
CHUNK_BYTES = 1 << 16

SCHEMA: dict[str, str] = {
    "path_blob": "|u1", "path_off": "<u8", "hash": "<u8", "mtime_ns": "<i8", "size": "<u8", "status": "|u1",
    "grammar": "|u1", "lines": "<u4", "def_ptr": "<u8", "chunk_ptr": "<u8",
    "name_blob": "|u1", "name_off": "<u4", "qual_blob": "|u1", "qual_off": "<u4",
    "kind": "|u1", "start": "<u4", "end": "<u4", "outer": "<u4", "sig_line": "<u4", "doc_start": "<u4",
    "doc_end": "<u4", "parent": "<i4",
    "chunk_start": "<u4", "chunk_end": "<u4", "chunk_def": "<i4",
}
_FILE_COLUMNS = ("hash", "mtime_ns", "size", "status", "grammar", "lines")
_DEF_COLUMNS = ("kind", "start", "end", "outer", "sig_line", "doc_start", "doc_end", "parent")
_CHUNK_COLUMNS = ("chunk_start", "chunk_end", "chunk_def")
#: The arrays of the two large tables: checked chunk by chunk as files are read (a lazy load).
_CHUNKED = ("name_blob", "name_off", "qual_blob", "qual_off", *_DEF_COLUMNS, *_CHUNK_COLUMNS)
#: What the file holds: the columns, the path order and the chunk digests.
_FILE_SCHEMA: dict[str, str] = {**SCHEMA, "path_order": "<u4", **{f"digest_{c}": "<u8" for c in _CHUNKED}}


class _ChunkChecks:
    """The chunk digests of a lazily loaded store's large arrays, checked the first time a read touches a chunk."""

    def __init__(self, container) -> None:
        self.container = container
        entries = {e["name"]: e for e in container.header["arrays"]}
        self.spans: dict[str, tuple[int, int, int]] = {}
        self.digests: dict[str, np.ndarray] = {}
        self.seen: dict[str, np.ndarray] = {}
        for name in _CHUNKED:
            e = entries[name]
            digests = container.arrays[f"digest_{name}"]
            if digests.shape[0] != -(-e["nbytes"] // CHUNK_BYTES):
                raise IndexFormatError(f"corrupt structure: the chunk digests of {name!r} do not cover it")
            self.spans[name] = (e["offset"], e["nbytes"], np.dtype(SCHEMA[name]).itemsize)
            self.digests[name] = digests
            self.seen[name] = np.zeros(digests.shape[0], dtype=bool)

    def check(self, name: str, lo: int, hi: int) -> None:
        """Verify the chunks holding elements ``lo:hi`` of array ``name`` (:class:`IndexFormatError` if one differs)."""
        if hi <= lo:
            return
        offset, nbytes, itemsize = self.spans[name]
        seen, digests = self.seen[name], self.digests[name]
        view = memoryview(self.container.buffer)
        try:
            for c in range(lo * itemsize // CHUNK_BYTES, (hi * itemsize - 1) // CHUNK_BYTES + 1):
                if seen[c]:
                    continue
                start = offset + c * CHUNK_BYTES
                if xxhash.xxh3_64_intdigest(view[start:min(offset + nbytes, start + CHUNK_BYTES)]) != int(digests[c]):
                    raise IndexFormatError(f"corrupt structure: checksum mismatch in array {name!r}")
                seen[c] = True
        finally:
            view.release()


def _path_order(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The files' rows in path order (UTF-8 bytewise, which is code point order)."""
    raw = arrays["path_blob"].tobytes()
    b = arrays["path_off"].tolist()
    keys = [raw[b[i]:b[i + 1]] for i in range(len(b) - 1)]
    if len(keys) >= 1 << 32:
        raise OverflowError("a structure store holds at most 2**32 - 1 files")
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.uint32)


def _chunk_digests(arr: np.ndarray, dtype: str) -> np.ndarray:
    data = np.ascontiguousarray(arr, dtype=np.dtype(dtype)).view(np.uint8)
    return np.array([xxhash.xxh3_64_intdigest(data[i:i + CHUNK_BYTES]) for i in range(0, data.shape[0], CHUNK_BYTES)],
                    dtype=np.uint64)


#: The longest ``covers`` digest a header may hold (anything else reads as none).
_MAX_COVERS = 64


@dataclass
class StructureSnapshot:
    """The columns of :data:`SCHEMA`, as numpy arrays (``arrays``), plus the container they view (if loaded).

    ``covers``: the digest of the walk the store was last complete for (see the module's docstring), or None.
    ``order``: the files' rows in path order (loaded stores; :meth:`find`).  ``checks``: while not None, the
    large arrays are verified as files are read (:meth:`check_row`), until :meth:`complete`.
    """

    arrays: dict[str, np.ndarray]
    container: object = None
    covers: str | None = None
    order: np.ndarray | None = None
    checks: _ChunkChecks | None = None

    @property
    def n_files(self) -> int:
        return int(self.arrays["hash"].shape[0])

    def find(self, path: str) -> int | None:
        """The row of ``path`` by binary search in :attr:`order` (None when absent, or without an order)."""
        order = self.order
        if order is None:
            return None
        key = path.encode("utf-8", "surrogatepass")
        blob, off = self.arrays["path_blob"], self.arrays["path_off"]
        lo, hi = 0, int(order.shape[0])
        while lo < hi:
            mid = (lo + hi) // 2
            row = int(order[mid])
            if blob[int(off[row]):int(off[row + 1])].tobytes() < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < order.shape[0]:
            row = int(order[lo])
            if blob[int(off[row]):int(off[row + 1])].tobytes() == key:
                return row
        return None

    def check_row(self, row: int) -> None:
        """Before file ``row`` is read from a lazily loaded store: verify and check its rows of the large tables.

        Raises
        ------
        codelex.IndexFormatError
            When a chunk they lie in differs from what was saved, or they are inconsistent.
        """
        checks = self.checks
        if checks is None:
            return
        a = self.arrays
        d0, d1 = int(a["def_ptr"][row]), int(a["def_ptr"][row + 1])
        c0, c1 = int(a["chunk_ptr"][row]), int(a["chunk_ptr"][row + 1])
        for name in _DEF_COLUMNS:
            checks.check(name, d0, d1)
        for name in _CHUNK_COLUMNS:
            checks.check(name, c0, c1)
        for blob, off in (("name_blob", "name_off"), ("qual_blob", "qual_off")):
            checks.check(off, d0, d1 + 1)
            o = a[off][d0:d1 + 1].astype(np.int64)
            if np.any(np.diff(o) < 0) or int(o[-1]) > a[blob].shape[0]:
                raise IndexFormatError(f"corrupt structure: offsets {off!r} do not describe {blob!r}")
            checks.check(blob, int(o[0]), int(o[-1]))
        if d1 > d0 and (np.any(a["start"][d0:d1] < 1) or np.any(a["end"][d0:d1] < a["start"][d0:d1])):
            raise IndexFormatError("corrupt structure: a definition has no lines")
        if c1 > c0 and (np.any(a["chunk_start"][c0:c1] < 1) or np.any(a["chunk_end"][c0:c1] < a["chunk_start"][c0:c1])):
            raise IndexFormatError("corrupt structure: a chunk has no lines")

    def complete(self) -> None:
        """Verify and check everything a lazy load left to :meth:`check_row` (before a read of the whole store).

        Raises
        ------
        codelex.IndexFormatError
            When anything differs from what was saved, or is inconsistent.
        """
        if self.checks is None:
            return
        self.container.verify_all()
        self.checks = None
        self.validate()

    def validate(self) -> None:
        """Check that the tables are consistent (lengths, offsets, ranges); :class:`IndexFormatError` if not."""
        self._validate_files()
        a = self.arrays
        n_defs = a["kind"].shape[0]
        n_chunks = a["chunk_start"].shape[0]
        for blob, off in (("name_blob", "name_off"), ("qual_blob", "qual_off")):
            if np.any(np.diff(a[off].astype(np.int64)) < 0):
                raise IndexFormatError(f"corrupt structure: offsets {off!r} do not describe {blob!r}")
        if n_chunks and (np.any(a["chunk_start"] < 1) or np.any(a["chunk_end"] < a["chunk_start"])):
            raise IndexFormatError("corrupt structure: a chunk has no lines")
        if n_defs and (np.any(a["start"] < 1) or np.any(a["end"] < a["start"])):
            raise IndexFormatError("corrupt structure: a definition has no lines")

    def _validate_files(self) -> None:
        """The checks that read the files table and only the ends of the large arrays."""
        a = self.arrays
        n = a["hash"].shape[0]
        for name in _FILE_COLUMNS:
            if a[name].shape[0] != n:
                raise IndexFormatError(f"corrupt structure: column {name!r} disagrees in length")
        n_defs = a["kind"].shape[0]
        n_chunks = a["chunk_start"].shape[0]
        for name in _DEF_COLUMNS:
            if a[name].shape[0] != n_defs:
                raise IndexFormatError(f"corrupt structure: column {name!r} disagrees in length")
        for name in _CHUNK_COLUMNS:
            if a[name].shape[0] != n_chunks:
                raise IndexFormatError(f"corrupt structure: column {name!r} disagrees in length")
        for ptr, total in (("def_ptr", n_defs), ("chunk_ptr", n_chunks)):
            p = a[ptr]
            if p.shape[0] != n + 1 or (n + 1 and (p[0] != 0 or p[-1] != total)) or np.any(np.diff(p.astype(np.int64)) < 0):
                raise IndexFormatError(f"corrupt structure: offsets {ptr!r} do not describe the table")
        checks = self.checks
        for blob, off, count in (("path_blob", "path_off", n), ("name_blob", "name_off", n_defs),
                                 ("qual_blob", "qual_off", n_defs)):
            o = a[off]
            if checks is not None and off != "path_off":  # (only its two ends are read here)
                checks.check(off, 0, 1)
                checks.check(off, count, count + 1)
            if o.shape[0] != count + 1 or o[0] != 0 or o[-1] != a[blob].shape[0]:
                raise IndexFormatError(f"corrupt structure: offsets {off!r} do not describe {blob!r}")
        if np.any(np.diff(a["path_off"].astype(np.int64)) < 0):
            raise IndexFormatError("corrupt structure: offsets 'path_off' do not describe 'path_blob'")
        order = self.order
        if order is not None and (order.shape[0] != n
                                  or not np.array_equal(np.bincount(order, minlength=n), np.ones(n, dtype=np.int64))):
            raise IndexFormatError("corrupt structure: the path order is not one of the files")


def save_structure(snapshot: StructureSnapshot, directory: str | os.PathLike[str]) -> Path:
    """Write ``snapshot`` atomically to ``directory/structure.clx``; returns the file written."""
    meta: dict = {"format": FORMAT}
    if snapshot.covers is not None:
        meta["covers"] = snapshot.covers
    arrays = {name: snapshot.arrays[name] for name in SCHEMA}
    arrays["path_order"] = _path_order(arrays)
    for name in _CHUNKED:
        arrays[f"digest_{name}"] = _chunk_digests(arrays[name], SCHEMA[name])
    return write_container(Path(directory), STRUCTURE_FILE, arrays, _FILE_SCHEMA, meta, FORMAT_VERSION)


def load_structure(directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True,
                   lazy: bool = False) -> StructureSnapshot:
    """Read and check ``directory/structure.clx``.

    With ``lazy`` (and ``verify``), only the files table is verified and
    checked now; the large tables are, chunk by chunk, as files are read
    (:meth:`StructureSnapshot.check_row`), or whole by :meth:`StructureSnapshot.complete`.

    Raises
    ------
    codelex.IndexFormatError
        For anything that is not an intact structure store of this version
        (:class:`~codelex.persist.container.UntrustedIndexError` for one this user did not write).
    FileNotFoundError
        When there is none.
    """
    p = Path(directory)
    file = p / STRUCTURE_FILE if is_dir(p) else p
    lazy = lazy and verify
    container = read_container(file, _FILE_SCHEMA, FORMAT, FORMAT_VERSION, mmap=mmap, verify=verify,
                               lazy=frozenset(_CHUNKED) if lazy else frozenset())
    covers = container.header.get("covers")
    if not isinstance(covers, str) or not 0 < len(covers) <= _MAX_COVERS:
        covers = None
    arrays = container.arrays
    snapshot = StructureSnapshot({name: arrays[name] for name in SCHEMA}, container, covers, arrays["path_order"],
                                 _ChunkChecks(container) if lazy else None)
    if lazy:
        snapshot._validate_files()
    else:
        snapshot.validate()
    return snapshot
