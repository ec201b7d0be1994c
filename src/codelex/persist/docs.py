"""The docs store's on-disk format (version 1): ``docs.clx`` beside the word index.

A container (:mod:`codelex.persist.container`) of columnar arrays; strings are
UTF-8 blobs with ``n + 1`` offsets:

- files: ``path``, ``title``, ``mtime_ns``, ``size``, ``sec_ptr`` (each file's
  sections, ``n + 1`` offsets into the sections table);
- sections: ``heading``, ``anchor``, ``labels`` (``\\n``-joined), ``start``,
  ``end``, ``text`` (as written), ``low_heading`` and ``low_text`` (lowercased,
  what scoring reads);
- runs: ``run`` (every run of word characters and dots of the lowercased
  headings and texts, sorted, each followed by ``\\n``), ``post_ptr`` and
  ``post`` (the sections holding each run, ascending).

Only a file this user wrote is read (the header's MAC, :mod:`codelex.persist.trust`): a committed or
copied ``docs.clx`` would otherwise put its author's sections into answers.  Every array is checked
against its digest as it loads, and every offset table is checked to describe its blob, so a damaged
file is no store (the docs are parsed again), never a wrong answer or a crash.  The docs stage crosses
this module only as a :class:`DocsTables`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codelex.defaults import DOCS_STORE_FILE
from codelex.errors import IndexFormatError
from codelex.persist.container import read_container, write_container

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "DocsTables", "load_docs", "save_docs"]

FORMAT = "codelex-docs"
FORMAT_VERSION = 1

#: (blob, offsets) pairs, in file order.
_STRINGS = ("path", "title", "heading", "anchor", "labels", "text", "low_heading", "low_text", "run")
SCHEMA: dict[str, str] = {
    **{f"{name}_{part}": dtype for name in _STRINGS for part, dtype in (("blob", "|u1"), ("off", "<u8"))},
    "mtime_ns": "<i8", "size": "<u8", "sec_ptr": "<u8", "start": "<u4", "end": "<u4",
    "post_ptr": "<u8", "post": "<u4",
}


@dataclass
class DocsTables:
    """The docs store's arrays (see the module docstring), whichever way they were made.

    ``strings[name]`` is ``(blob, offsets)``: a uint8 array and its ``n + 1`` uint64 offsets.
    """

    strings: dict[str, tuple[np.ndarray, np.ndarray]]
    mtime_ns: np.ndarray
    size: np.ndarray
    sec_ptr: np.ndarray
    start: np.ndarray
    end: np.ndarray
    post_ptr: np.ndarray
    post: np.ndarray
    buffer: object = None  # the mapping the arrays view (kept alive with them)

    @property
    def files(self) -> int:
        return len(self.mtime_ns)

    @property
    def sections(self) -> int:
        return len(self.start)

    @property
    def runs(self) -> int:
        return len(self.post_ptr) - 1


def _check_offsets(name: str, blob: np.ndarray, off: np.ndarray, count: int) -> None:
    if len(off) != count + 1 or int(off[0]) != 0 or int(off[-1]) != len(blob) or \
            (len(off) > 1 and bool(np.any(off[1:] < off[:-1]))):
        raise IndexFormatError(f"corrupt docs store: {name} offsets do not describe their data")


def _validate(t: DocsTables) -> None:
    """Every relation the readers rely on, so that no read goes out of bounds or answers nonsense."""
    files, sections = t.files, t.sections
    if len(t.size) != files or len(t.sec_ptr) != files + 1 or len(t.end) != sections:
        raise IndexFormatError("corrupt docs store: table lengths disagree")
    if int(t.sec_ptr[0]) != 0 or int(t.sec_ptr[-1]) != sections or bool(np.any(t.sec_ptr[1:] < t.sec_ptr[:-1])):
        raise IndexFormatError("corrupt docs store: files do not cover the sections")
    for name in ("path", "title"):
        _check_offsets(name, *t.strings[name], files)
    for name in ("heading", "anchor", "labels", "text", "low_heading", "low_text"):
        _check_offsets(name, *t.strings[name], sections)
    runs = len(t.post_ptr) - 1
    if runs < 0:
        raise IndexFormatError("corrupt docs store: no run table")
    _check_offsets("run", *t.strings["run"], runs)
    if int(t.post_ptr[0]) != 0 or int(t.post_ptr[-1]) != len(t.post) or \
            bool(np.any(t.post_ptr[1:] < t.post_ptr[:-1])):
        raise IndexFormatError("corrupt docs store: run postings do not describe their data")
    if len(t.post) and int(t.post.max()) >= sections:
        raise IndexFormatError("corrupt docs store: a run names a section that does not exist")
    if bool(np.any(t.end < t.start)):
        raise IndexFormatError("corrupt docs store: a section ends before it starts")
    run_blob = t.strings["run"][0]
    if runs and (int(run_blob[-1]) != 0x0A or int(np.count_nonzero(run_blob == 0x0A)) != runs):
        raise IndexFormatError("corrupt docs store: runs are not newline-terminated")


def save_docs(directory: Path, tables: DocsTables) -> Path:
    """Write ``tables`` as ``directory/docs.clx`` atomically (owner-only, this user's MAC in the header)."""
    arrays: dict[str, np.ndarray] = {}
    for name in _STRINGS:
        arrays[f"{name}_blob"], arrays[f"{name}_off"] = tables.strings[name]
    for name in ("mtime_ns", "size", "sec_ptr", "start", "end", "post_ptr", "post"):
        arrays[name] = getattr(tables, name)
    meta = {"format": FORMAT, "files": tables.files, "sections": tables.sections, "runs": tables.runs}
    return write_container(directory, DOCS_STORE_FILE, arrays, SCHEMA, meta, FORMAT_VERSION)


def load_docs(directory: Path) -> DocsTables | None:
    """The store in ``directory`` when it is this user's, intact and of this version; None otherwise
    (absent, foreign, damaged, older: the docs are then parsed again and the store rewritten)."""
    try:
        c = read_container(directory / DOCS_STORE_FILE, SCHEMA, FORMAT, FORMAT_VERSION, mmap=True, verify=True)
        a = c.arrays
        if set(a) != set(SCHEMA):
            return None
        tables = DocsTables({name: (a[f"{name}_blob"], a[f"{name}_off"]) for name in _STRINGS},
                            a["mtime_ns"], a["size"], a["sec_ptr"], a["start"], a["end"], a["post_ptr"], a["post"],
                            c.buffer)
        _validate(tables)
    except (OSError, IndexFormatError, ValueError, MemoryError):
        return None
    return tables
