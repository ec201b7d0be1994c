"""The structure store's on-disk format (version 2): ``structure.clx`` beside the word index.

Columnar arrays, three tables:

- files: ``path`` (blob + offsets), ``hash`` (xxh3-64 of the content the
  structure was read from), ``mtime_ns``, ``size``, ``status`` and
  ``grammar`` (small codes), ``lines``, and ``def_ptr``/``chunk_ptr``
  (each file's rows of the two tables below, n + 1 offsets);
- definitions: ``name`` and ``qualified`` (blobs + offsets; a qualified
  name is stored only where it is not the parent's plus the name), ``kind``,
  ``start``, ``end``, ``outer``, ``sig_line``, ``doc_start``, ``doc_end``
  and ``parent`` (an index within the file, -1 for none);
- chunks: ``chunk_start``, ``chunk_end``, ``chunk_def`` (within the file).

The structure stage crosses this module only as a :class:`StructureSnapshot`.

Only a file this user wrote is read (its header's MAC: :mod:`codelex.persist.trust`):
a committed or copied ``structure.clx`` would otherwise name the definitions
its author chose, checksums and all.  Version 2: the MAC.

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

from codelex.defaults import STRUCTURE_FILE
from codelex.errors import IndexFormatError
from codelex.persist.container import is_dir, read_container, write_container

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "StructureSnapshot", "load_structure", "save_structure"]

FORMAT = "codelex-structure"
#: 3: a definition split over several chunks begins a chunk of its own (structures saved by an older chunker
#: are refused and analyzed again).
FORMAT_VERSION = 3

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


#: The longest ``covers`` digest a header may hold (anything else reads as none).
_MAX_COVERS = 64


@dataclass
class StructureSnapshot:
    """The columns of :data:`SCHEMA`, as numpy arrays (``arrays``), plus the container they view (if loaded).

    ``covers``: the digest of the walk the store was last complete for (see the module's docstring), or None.
    """

    arrays: dict[str, np.ndarray]
    container: object = None
    covers: str | None = None

    @property
    def n_files(self) -> int:
        return int(self.arrays["hash"].shape[0])

    def validate(self) -> None:
        """Check that the tables are consistent (lengths, offsets, ranges); :class:`IndexFormatError` if not."""
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
        for blob, off, count in (("path_blob", "path_off", n), ("name_blob", "name_off", n_defs),
                                 ("qual_blob", "qual_off", n_defs)):
            o = a[off]
            if o.shape[0] != count + 1 or o[0] != 0 or o[-1] != a[blob].shape[0] \
                    or np.any(np.diff(o.astype(np.int64)) < 0):
                raise IndexFormatError(f"corrupt structure: offsets {off!r} do not describe {blob!r}")
        if n_chunks and (np.any(a["chunk_start"] < 1) or np.any(a["chunk_end"] < a["chunk_start"])):
            raise IndexFormatError("corrupt structure: a chunk has no lines")
        if n_defs and (np.any(a["start"] < 1) or np.any(a["end"] < a["start"])):
            raise IndexFormatError("corrupt structure: a definition has no lines")


def save_structure(snapshot: StructureSnapshot, directory: str | os.PathLike[str]) -> Path:
    """Write ``snapshot`` atomically to ``directory/structure.clx``; returns the file written."""
    meta: dict = {"format": FORMAT}
    if snapshot.covers is not None:
        meta["covers"] = snapshot.covers
    return write_container(Path(directory), STRUCTURE_FILE, snapshot.arrays, SCHEMA, meta, FORMAT_VERSION)


def load_structure(directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True) -> StructureSnapshot:
    """Read and check ``directory/structure.clx``.

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
    container = read_container(file, SCHEMA, FORMAT, FORMAT_VERSION, mmap=mmap, verify=verify)
    covers = container.header.get("covers")
    if not isinstance(covers, str) or not 0 < len(covers) <= _MAX_COVERS:
        covers = None
    snapshot = StructureSnapshot(dict(container.arrays), container, covers)
    snapshot.validate()
    return snapshot
