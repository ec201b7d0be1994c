"""The structure of every file of a project, keyed by path and content hash, kept compact.

Structures live in columnar arrays (:class:`~codelex.persist.structure.StructureSnapshot`):
a base (as loaded or built) plus an overlay of files changed since, which a
:meth:`StructureIndex.compact` folds in.  A file is decoded into
:class:`~codelex.structure.model.FileStructure` objects only when asked for
(a small cache keeps the recent ones), so a large tree costs arrays, not
millions of Python objects.  A store loaded lazily (see
:func:`codelex.persist.structure.load_structure`) finds a file by binary
search and checks only the rows it reads, so a query that names a few hits
reads a few files of it; anything that needs the whole store checks it all
first, and a store found corrupt is dropped (its files are then unknown, and
analyzed again).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from codelex.errors import IndexFormatError
from codelex.persist.structure import SCHEMA, StructureSnapshot
from codelex.structure.languages import GRAMMARS, spec_for
from codelex.structure.model import DEFINITION_KINDS, STATUSES, Chunk, Definition, FileStructure

__all__ = ["FileRecord", "StructureIndex", "decode", "encode"]

_NO_GRAMMAR = 255
_GRAMMAR_ID = {g: i for i, g in enumerate(GRAMMARS)}
_KIND_ID = {k: i for i, k in enumerate(DEFINITION_KINDS)}
_STATUS_ID = {s: i for i, s in enumerate(STATUSES)}
_CACHE_FILES = 512

log = logging.getLogger("codelex")


@dataclass(frozen=True)
class FileRecord:
    """A file's structure with what it was read from: content hash, ``mtime_ns`` and size."""

    structure: FileStructure
    hash: int
    mtime_ns: int
    size: int


def _pack_strings(strings: list[str], offset_dtype=np.uint64) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.uint64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)), out=offsets[1:])
    if offset_dtype is not np.uint64:
        if int(offsets[-1]) > np.iinfo(offset_dtype).max:
            raise OverflowError("structure store strings exceed 4 GiB")
        offsets = offsets.astype(offset_dtype)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def _separator(grammar: str | None) -> str:
    return spec_for(grammar).separator if grammar else "."


def _derived(names: list[str], parents: list[int], quals: list[str], i: int, sep: str) -> str:
    return names[i] if parents[i] < 0 else f"{quals[parents[i]]}{sep}{names[i]}"


def encode(records: Iterable[FileRecord]) -> StructureSnapshot:
    """Columnar arrays of ``records`` (in order)."""
    records = list(records)
    paths, hashes, mtimes, sizes, statuses, grammars, lines = [], [], [], [], [], [], []
    def_ptr, chunk_ptr = [0], [0]
    names, quals = [], []
    kind, start, end, outer, sig_line, doc_start, doc_end, parent = [], [], [], [], [], [], [], []
    c_start, c_end, c_def = [], [], []
    for r in records:
        s = r.structure
        paths.append(s.path)
        hashes.append(r.hash & 0xFFFFFFFFFFFFFFFF)
        mtimes.append(r.mtime_ns)
        sizes.append(r.size)
        statuses.append(_STATUS_ID[s.status])
        grammars.append(_GRAMMAR_ID.get(s.language, _NO_GRAMMAR) if s.language else _NO_GRAMMAR)
        lines.append(s.lines)
        sep = _separator(s.language)
        defs = s.definitions
        for i, d in enumerate(defs):
            names.append(d.name)
            # Most qualified names follow from the parent's: stored only where they do not.
            derived = d.name if d.parent < 0 or d.parent >= i else f"{defs[d.parent].qualified_name}{sep}{d.name}"
            quals.append("" if d.qualified_name == derived else d.qualified_name)
            kind.append(_KIND_ID[d.kind])
            start.append(d.start_line)
            end.append(d.end_line)
            outer.append(d.outer_start_line)
            sig_line.append(d.signature_line)
            doc_start.append(d.doc_start_line)
            doc_end.append(d.doc_end_line)
            parent.append(d.parent)
        for c in s.chunks:
            c_start.append(c.start_line)
            c_end.append(c.end_line)
            c_def.append(c.definition)
        def_ptr.append(len(kind))
        chunk_ptr.append(len(c_start))
    a: dict[str, np.ndarray] = {}
    a["path_blob"], a["path_off"] = _pack_strings(paths)
    a["name_blob"], a["name_off"] = _pack_strings(names, np.uint32)
    a["qual_blob"], a["qual_off"] = _pack_strings(quals, np.uint32)
    columns = {"hash": hashes, "mtime_ns": mtimes, "size": sizes, "status": statuses, "grammar": grammars,
               "lines": lines, "def_ptr": def_ptr, "chunk_ptr": chunk_ptr, "kind": kind, "start": start, "end": end,
               "outer": outer, "sig_line": sig_line, "doc_start": doc_start, "doc_end": doc_end, "parent": parent,
               "chunk_start": c_start, "chunk_end": c_end, "chunk_def": c_def}
    for name, values in columns.items():
        a[name] = np.asarray(values, dtype=np.dtype(SCHEMA[name]).newbyteorder("="))
    return StructureSnapshot(a)


def _strings(blob: np.ndarray, off: np.ndarray, lo: int, hi: int) -> list[str]:
    if hi <= lo:
        return []
    base = int(off[lo])
    raw = blob[base:int(off[hi])].tobytes()
    bounds = (off[lo:hi + 1] - base).tolist()
    return [raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogatepass") for i in range(hi - lo)]


def decode(snapshot: StructureSnapshot, row: int) -> FileRecord:
    """File ``row`` of a snapshot as objects (:class:`codelex.IndexFormatError` when a lazily loaded one's rows
    do not check out)."""
    snapshot.check_row(row)
    a = snapshot.arrays
    path = _strings(a["path_blob"], a["path_off"], row, row + 1)[0]
    d0, d1 = int(a["def_ptr"][row]), int(a["def_ptr"][row + 1])
    c0, c1 = int(a["chunk_ptr"][row]), int(a["chunk_ptr"][row + 1])
    names = _strings(a["name_blob"], a["name_off"], d0, d1)
    quals = _strings(a["qual_blob"], a["qual_off"], d0, d1)
    cols = [a[c][d0:d1].tolist() for c in ("kind", "start", "end", "outer", "sig_line", "doc_start", "doc_end",
                                              "parent")]
    n_defs = d1 - d0
    grammar = int(a["grammar"][row])
    language = GRAMMARS[grammar] if grammar < len(GRAMMARS) else None
    sep = _separator(language)
    parents = [p if -1 <= p < i else -1 for i, p in enumerate(cols[7])]  # a parent precedes its children
    for i in range(n_defs):
        if not quals[i]:
            quals[i] = names[i] if parents[i] < 0 else f"{quals[parents[i]]}{sep}{names[i]}"
    defs = tuple(
        Definition(names[i], quals[i], DEFINITION_KINDS[cols[0][i]] if cols[0][i] < len(DEFINITION_KINDS) else "function",
                   cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i], cols[6][i], parents[i])
        for i in range(n_defs)
    )
    chunks = tuple(Chunk(s, e, d if -1 <= d < n_defs else -1) for s, e, d in
                   zip(a["chunk_start"][c0:c1].tolist(), a["chunk_end"][c0:c1].tolist(), a["chunk_def"][c0:c1].tolist()))
    status = int(a["status"][row])
    structure = FileStructure(path, language,
                              STATUSES[status] if status < len(STATUSES) else "parse-failed",
                              int(a["lines"][row]), defs, chunks)
    return FileRecord(structure, int(a["hash"][row]), int(a["mtime_ns"][row]), int(a["size"][row]))


def _rows(snapshot: StructureSnapshot, keep: np.ndarray) -> StructureSnapshot:
    """The snapshot restricted to the files ``keep`` (bool per file), vectorized."""
    a = snapshot.arrays
    rows = np.flatnonzero(keep)
    out: dict[str, np.ndarray] = {}
    for col in ("hash", "mtime_ns", "size", "status", "grammar", "lines"):
        out[col] = a[col][rows]

    def ranges(ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = ptr[rows].astype(np.int64), ptr[rows + 1].astype(np.int64)
        counts = hi - lo
        new_ptr = np.zeros(len(rows) + 1, dtype=np.uint64)
        np.cumsum(counts, out=new_ptr[1:])
        idx = np.repeat(lo - new_ptr[:-1].astype(np.int64), counts) + np.arange(int(counts.sum()), dtype=np.int64)
        return new_ptr, idx

    out["def_ptr"], def_idx = ranges(a["def_ptr"])
    out["chunk_ptr"], chunk_idx = ranges(a["chunk_ptr"])
    for col in ("kind", "start", "end", "outer", "sig_line", "doc_start", "doc_end", "parent"):
        out[col] = a[col][def_idx]
    for col in ("chunk_start", "chunk_end", "chunk_def"):
        out[col] = a[col][chunk_idx]

    def strings(blob: str, off: str, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        o = a[off].astype(np.int64)
        lo, hi = o[idx], o[idx + 1]
        counts = hi - lo
        new_off = np.zeros(len(idx) + 1, dtype=np.uint64)
        np.cumsum(counts, out=new_off[1:])
        byte_idx = np.repeat(lo - new_off[:-1].astype(np.int64), counts) + np.arange(int(counts.sum()), dtype=np.int64)
        return a[blob][byte_idx], new_off

    out["path_blob"], out["path_off"] = strings("path_blob", "path_off", rows)
    out["name_blob"], out["name_off"] = strings("name_blob", "name_off", def_idx)
    out["qual_blob"], out["qual_off"] = strings("qual_blob", "qual_off", def_idx)
    out["name_off"], out["qual_off"] = out["name_off"].astype(np.uint32), out["qual_off"].astype(np.uint32)
    return StructureSnapshot(out)


def concat(snapshots: list[StructureSnapshot]) -> StructureSnapshot:
    """One snapshot of the files of ``snapshots``, in order."""
    snapshots = [s for s in snapshots if s.n_files] or snapshots[:1]
    if not snapshots:
        return encode([])
    if len(snapshots) == 1:
        return snapshots[0]
    out: dict[str, np.ndarray] = {}
    for col in SCHEMA:
        parts = [s.arrays[col] for s in snapshots]
        if col in ("def_ptr", "chunk_ptr", "path_off", "name_off", "qual_off"):
            shifted, base = [], 0
            for i, p in enumerate(parts):
                p = p.astype(np.uint64)
                shifted.append((p if i == 0 else p[1:]) + np.uint64(base))
                base += int(p[-1])
            out[col] = np.concatenate(shifted).astype(np.dtype(SCHEMA[col]).newbyteorder("="))
        else:
            out[col] = np.concatenate(parts)
    return StructureSnapshot(out)


def _enclosing_in(a: dict, row: int, d0: int, d1: int, line: int) -> tuple[str | None, int]:
    """``(qualified name, end line)`` of the innermost of file ``row``'s definitions (``d0:d1`` of the columns
    ``a``) whose span holds ``line``, as :meth:`FileStructure.enclosing` (a later one of equal start wins);
    ``(None, 0)`` outside every definition.  Only that definition's chain of names is decoded."""
    holds = np.flatnonzero((a["outer"][d0:d1] <= line) & (a["end"][d0:d1] >= line))
    if not holds.size:
        return None, 0
    starts = a["start"][d0:d1][holds]
    best = int(holds[np.flatnonzero(starts == starts.max())[-1]])
    parents = a["parent"]
    grammar = int(a["grammar"][row])
    sep = _separator(GRAMMARS[grammar] if grammar < len(GRAMMARS) else None)
    chain, i = [], best
    qual = _string_at(a["qual_blob"], a["qual_off"], d0 + i)
    while not qual and len(chain) <= d1 - d0:  # (a qualified name is stored where not derived)
        chain.append(_string_at(a["name_blob"], a["name_off"], d0 + i))
        parent = int(parents[d0 + i])
        i = parent if -1 <= parent < i else -1  # (a parent precedes its children)
        if i < 0:
            break
        qual = _string_at(a["qual_blob"], a["qual_off"], d0 + i)
    return sep.join(([qual] if i >= 0 else []) + chain[::-1]), int(a["end"][d0 + best])


def _string_at(blob: np.ndarray, off: np.ndarray, k: int) -> str:
    """String ``k`` of a string column (one decoded, not the file's every one)."""
    return blob[int(off[k]):int(off[k + 1])].tobytes().decode("utf-8", "surrogatepass")


class StructureIndex:
    """Per-file structures: a columnar base plus the files changed since (thread-safe).

    Parameters
    ----------
    snapshot : StructureSnapshot, optional
        The base (for example as loaded from disk).
    """

    def __init__(self, snapshot: StructureSnapshot | None = None) -> None:
        self._lock = threading.RLock()
        self._base = snapshot if snapshot is not None else encode([])
        # path -> row of the base; None until something needs it (a base with a path order is searched instead)
        self._row_of: dict[str, int] | None = None
        self._overlay: dict[str, FileRecord | None] = {}  # None: removed
        self._cache: OrderedDict[str, FileRecord] = OrderedDict()
        self.changes = 0  # edits since the last compact (a save is due when non-zero)
        self.version = 0  # every edit ever: what a reader built from this store can compare
        # The digest of the walk this store was last complete for (any edit forgets it): see :attr:`covers`.
        self._covers = snapshot.covers if snapshot is not None else None
        self.dropped = 0  # bases dropped for corruption (their owner saves the store, so disk forgets them too)

    @staticmethod
    def _rows_of(snapshot: StructureSnapshot) -> dict[str, int]:
        a = snapshot.arrays
        paths = _strings(a["path_blob"], a["path_off"], 0, snapshot.n_files)
        return {p: i for i, p in enumerate(paths)}

    def _full(self) -> dict[str, int]:
        """Before a read or change of the whole base: every row checked, and the path -> row map (under the lock)."""
        try:
            self._base.complete()
        except IndexFormatError as exc:
            self._drop(exc)
        if self._row_of is None:
            self._row_of = self._rows_of(self._base)
        return self._row_of

    def _find(self, path: str) -> int | None:
        """The base's row of ``path`` (under the lock)."""
        if self._row_of is None:
            if self._base.order is not None:
                return self._base.find(path)
            self._full()
        return self._row_of.get(path)

    def _drop(self, exc: Exception) -> None:
        """The base failed its checks: forget it (its files are unknown from now on, and analyzed again)."""
        log.warning("codelex: the saved structure is corrupt (%s); its files will be analyzed again", exc)
        self._base = encode([])
        self._row_of = {}
        self._cache.clear()
        self._covers = None
        self.changes += 1
        self.version += 1
        self.dropped += 1

    # --- reads ---------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            return sum(1 for _ in self.paths())

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.record(path) is not None

    def paths(self) -> Iterator[str]:
        """Every path with a structure, base order first, then files added since."""
        with self._lock:
            overlay = dict(self._overlay)
            row_of = self._full()
            rows = list(row_of)
        for p in rows:
            if p not in overlay or overlay[p] is not None:
                yield p
        for p, r in overlay.items():
            if r is not None and p not in row_of:
                yield p

    def record(self, path: str) -> FileRecord | None:
        """The file's structure and what it was read from; None when unknown."""
        with self._lock:
            if path in self._overlay:
                return self._overlay[path]
            cached = self._cache.get(path)
            if cached is not None:
                self._cache.move_to_end(path)
                return cached
            row = self._find(path)
            if row is None:
                return None
            try:
                rec = decode(self._base, row)
            except IndexFormatError as exc:
                self._drop(exc)
                return None
            self._cache[path] = rec
            while len(self._cache) > _CACHE_FILES:
                self._cache.popitem(last=False)
            return rec

    def file_info(self, path: str) -> tuple[int, int, int] | None:
        """``(content hash, mtime_ns, size)`` of what the file's structure was read from, without decoding it."""
        with self._lock:
            if path in self._overlay:
                r = self._overlay[path]
                return None if r is None else (r.hash, r.mtime_ns, r.size)
            row = self._find(path)
            if row is None:
                return None
            a = self._base.arrays
            return int(a["hash"][row]), int(a["mtime_ns"][row]), int(a["size"][row])

    def names(self, path: str) -> tuple[int, int, frozenset[str]] | None:
        """``(mtime_ns, size, the names the file defines)`` of what its structure was read from, decoding the
        names only (a file of hundreds of definitions is not turned into objects); None when unknown."""
        def from_columns(a, row: int, d0: int, d1: int) -> frozenset[str]:
            return frozenset(_strings(a["name_blob"], a["name_off"], d0, d1))

        return self._read_file(path, lambda s: frozenset(d.name for d in s.definitions), from_columns)

    def enclosing(self, path: str, line: int) -> tuple[int, int, str | None, int] | None:
        """``(mtime_ns, size, qualified name, end line)`` of the innermost definition whose span holds ``line``
        (as :meth:`FileStructure.enclosing`; name None and end 0 outside every definition), read from the
        columns of that file alone; None when the file is unknown."""
        def from_structure(structure: FileStructure) -> tuple[str | None, int]:
            found = structure.enclosing(line)
            return (None, 0) if found is None else (found.qualified_name, found.end_line)

        found = self._read_file(path, from_structure, lambda a, row, d0, d1: _enclosing_in(a, row, d0, d1, line))
        return None if found is None else (found[0], found[1], *found[2])

    def _read_file(self, path: str, from_structure, from_columns) -> tuple | None:
        """``(mtime_ns, size, what)``: ``from_structure`` of a file changed since the base (or decoded already),
        else ``from_columns(arrays, row, first definition, end)`` of its base rows, checked first; None when
        unknown (or its rows fail their checks: the base is dropped)."""
        with self._lock:
            if path in self._overlay or path in self._cache:
                rec = self.record(path)
                return None if rec is None else (rec.mtime_ns, rec.size, from_structure(rec.structure))
            row = self._find(path)
            if row is None:
                return None
            base = self._base
            try:
                base.check_row(row)
            except IndexFormatError as exc:
                self._drop(exc)
                return None
            a = base.arrays
            d0, d1 = int(a["def_ptr"][row]), int(a["def_ptr"][row + 1])
            return int(a["mtime_ns"][row]), int(a["size"][row]), from_columns(a, row, d0, d1)

    def get(self, path: str) -> FileStructure | None:
        rec = self.record(path)
        return rec.structure if rec is not None else None

    @property
    def covers(self) -> str | None:
        """The digest of the walk whose every file this store holds as listed (None: not known).

        Set by :meth:`set_covers` once a refresh brought the store fully in line
        with a walk (saved with the store); every later change forgets it.
        """
        with self._lock:
            return self._covers

    def set_covers(self, digest: str | None) -> None:
        """Record that the store is complete for the walk of ``digest`` (a save is then due when it changed)."""
        with self._lock:
            if digest != self._covers:
                self._covers = digest
                self.changes += 1

    # --- writes --------------------------------------------------------------------

    def put(self, record: FileRecord) -> None:
        with self._lock:
            self._overlay[record.structure.path] = record
            self._cache.pop(record.structure.path, None)
            self.changes += 1
            self.version += 1
            self._covers = None

    def remove(self, path: str) -> bool:
        with self._lock:
            known = self.record(path) is not None
            if known:
                self._overlay[path] = None
                self._cache.pop(path, None)
                self.changes += 1
                self.version += 1
                self._covers = None
            return known

    def retain(self, paths: set[str]) -> int:
        """Remove every file not in ``paths``; returns how many were removed."""
        gone = [p for p in self.paths() if p not in paths]
        for p in gone:
            self.remove(p)
        return len(gone)

    def apply(self, batches: list[StructureSnapshot], unchanged: dict[str, tuple[int, int, int]]) -> None:
        """Fold in newly analyzed files (``batches``) and files found unchanged by hash.

        ``unchanged`` maps a path to ``(hash, mtime_ns, size)``: its structure
        stays, and what it was read from is brought up to date, so the next
        refresh does not hash it again.
        """
        with self._lock:
            self.compact()
            row_of = self._full()
            fresh = concat(batches) if batches else encode([])
            fresh_rows = self._rows_of(fresh)
            keep = np.ones(self._base.n_files, dtype=bool)
            for p in fresh_rows:
                row = row_of.get(p)
                if row is not None:
                    keep[row] = False
            base = concat([self._base if keep.all() else _rows(self._base, keep), fresh])
            row_of = self._rows_of(base)
            if unchanged:
                mtime = base.arrays["mtime_ns"].copy()
                size = base.arrays["size"].copy()
                for p, (_, m, n) in unchanged.items():
                    row = row_of.get(p)
                    if row is not None:
                        mtime[row], size[row] = m, n
                base.arrays["mtime_ns"], base.arrays["size"] = mtime, size
            self._base, self._row_of = base, row_of
            self._cache.clear()
            if fresh.n_files or unchanged:
                self.changes += 1
                self.version += 1
                self._covers = None

    def compact(self) -> StructureSnapshot:
        """Fold the overlay into a new base; returns it (what a save writes)."""
        with self._lock:
            row_of = self._full()
            keep = np.ones(self._base.n_files, dtype=bool)
            for p in self._overlay:
                row = row_of.get(p)
                if row is not None:
                    keep[row] = False
            if not self._overlay:
                return self._base
            parts = [_rows(self._base, keep) if not keep.all() else self._base]
            added = [r for r in self._overlay.values() if r is not None]
            if added:
                parts.append(encode(added))
            base = concat(parts)
            self._base = base
            self._row_of = self._rows_of(base)
            self._overlay.clear()
            self._cache.clear()
            return base

    def snapshot(self) -> StructureSnapshot:
        """Everything, as one columnar snapshot (what a save writes); resets :attr:`changes`."""
        with self._lock:
            base = self.compact()
            self.changes = 0
            return base if base.covers == self._covers else dataclasses.replace(base, covers=self._covers)

    def save(self, directory) -> None:
        """Write the store atomically to ``directory/structure.clx``."""
        from codelex.persist.structure import save_structure

        save_structure(self.snapshot(), directory)
