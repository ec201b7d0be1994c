"""The word index's on-disk format (version 2), over the container of :mod:`codelex.persist.container`.

An index directory holds one file, ``index.clx`` (:data:`codelex.defaults.INDEX_FILE`).
Its arrays are the CSR posting segment, the term dictionary and the file
table (paths, ``mtime_ns``, sizes, prior flags, language ids); its header
adds the Unicode version of the tokenizer tables, a fingerprint of the path
rules (so that stale prior flags are recomputed, never trusted), the size
cap and free-form metadata.

To stay small, counts that are nearly always small (document frequencies,
term frequencies, term lengths) are stored as one byte each, 255 meaning
"see the overflow pairs" (``<name>_big_pos``, ``<name>_big_val``); the line
offsets and the forward index are left out and derived on load (or on the
first edit).

The word index crosses this module only as a :class:`LexicalSnapshot` (its
export/restore seam): this module never sees a :class:`codelex.WordIndex`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codelex._native import UNICODE_VERSION
from codelex.defaults import INDEX_FILE
from codelex.errors import IndexFormatError
from codelex.persist.container import (
    Container,
    is_dir,
    read_container,
    read_container_header,
    write_container,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LexicalSnapshot",
    "index_file",
    "load_lexical",
    "read_lexical_header",
    "save_lexical",
]

FORMAT = "codelex-index"
#: Version 2 added the extra fields' lengths (dir, name, defs) and their terms; a version-1 index is rebuilt.
FORMAT_VERSION = 2

# name -> dtype, in file order.
_ARRAYS: dict[str, str] = {
    "df": "|u1",
    "df_big_pos": "<u8",
    "df_big_val": "<u8",
    "post_doc": "<u4",
    "post_tf": "|u1",
    "post_tf_big_pos": "<u8",
    "post_tf_big_val": "<u8",
    "line_data": "|u1",
    "doc_len": "<u4",
    "field_len": "|u1",
    "field_len_big_pos": "<u8",
    "field_len_big_val": "<u8",
    "term_len": "|u1",
    "term_len_big_pos": "<u8",
    "term_len_big_val": "<u8",
    "term_blob": "|u1",
    "path_blob": "|u1",
    "path_offsets": "<u8",
    "mtime_ns": "<i8",
    "size": "<u8",
    "prior_flags": "|u1",
    "kind_id": "<i2",
}
_PACKED = ("df", "post_tf", "term_len", "field_len")
_SMALL_MAX = 255


@dataclass
class LexicalSnapshot:
    """A merged word index as plain arrays: what is saved and what a load gives back.

    ``term_ptr`` (int64, terms + 1), ``post_doc``, ``post_tf`` and
    ``doc_len`` (uint32), ``line_data`` (uint8) form the posting segment,
    ``field_len`` (uint32, three per document: dir, name, defs) the extra
    fields' lengths;
    ``vocab_blob``/``vocab_offsets`` the term dictionary; ``paths``,
    ``path_blob``/``path_offsets``, ``mtime_ns``, ``size``, ``prior_flags``
    and ``kind_id`` the file table.  ``rules`` fingerprints the path rules
    that produced ``prior_flags`` and ``kind_id``.
    """

    term_ptr: np.ndarray
    post_doc: np.ndarray
    post_tf: np.ndarray
    line_data: np.ndarray
    doc_len: np.ndarray
    field_len: np.ndarray
    vocab_blob: np.ndarray
    vocab_offsets: np.ndarray
    paths: list[str]
    path_blob: np.ndarray
    path_offsets: np.ndarray
    mtime_ns: np.ndarray
    size: np.ndarray
    prior_flags: np.ndarray
    kind_id: np.ndarray
    rules: str
    max_bytes: int | None
    metadata: dict = field(default_factory=dict)
    saved_at: float | None = None
    container: Container | None = None  # set by a load: owns the mapped arrays

    def release_pages(self) -> None:
        """After the arrays are installed: drop the pages the load's checks touched."""
        if self.container is not None:
            self.container.release_pages()


def index_file(path: str | os.PathLike[str]) -> Path:
    """The index directory's file, or ``path`` itself when it names anything but a directory."""
    p = Path(path)
    return p / INDEX_FILE if is_dir(p) else p


def _pack(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split counts into one byte each plus (position, value) pairs for the large ones."""
    big = np.flatnonzero(values >= _SMALL_MAX).astype(np.uint64)
    small = np.minimum(values, _SMALL_MAX).astype(np.uint8)
    return small, big, values[big.astype(np.intp)].astype(np.uint64)


def _unpack(name: str, small: np.ndarray, pos: np.ndarray, val: np.ndarray, dtype) -> np.ndarray:
    if pos.shape != val.shape:
        raise IndexFormatError(f"corrupt index: overflow arrays of {name!r} disagree in length")
    out = small.astype(dtype)
    if pos.size:
        if int(pos.max()) >= small.shape[0] or np.any(np.diff(pos.astype(np.int64)) <= 0):
            raise IndexFormatError(f"corrupt index: overflow positions of {name!r} are out of range or unordered")
        if int(val.min()) < _SMALL_MAX or int(val.max()) > np.iinfo(dtype).max:
            raise IndexFormatError(f"corrupt index: overflow values of {name!r} are out of range")
        out[pos.astype(np.intp)] = val
    if int(np.count_nonzero(small == _SMALL_MAX)) != pos.size or (pos.size and np.any(small[pos.astype(np.intp)] != _SMALL_MAX)):
        raise IndexFormatError(f"corrupt index: overflow entries of {name!r} do not match their markers")
    return out


def _cumulative(counts: np.ndarray, dtype) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, dtype=dtype)
    np.cumsum(counts, out=out[1:])
    return out


# --- save ---------------------------------------------------------------------------


def save_lexical(snapshot: LexicalSnapshot, path: str | os.PathLike[str]) -> Path:
    """Write ``snapshot`` atomically into the index directory ``path``; returns the file written.

    Raises
    ------
    OSError
        When the directory cannot be created or written.
    """
    directory = Path(path)
    if directory.name == INDEX_FILE and not is_dir(directory):
        directory = directory.parent
    n_terms = len(snapshot.vocab_offsets) - 1
    df = np.diff(snapshot.term_ptr)
    if df.shape[0] < n_terms:  # terms interned by a failed update have no postings
        df = np.concatenate([df, np.zeros(n_terms - df.shape[0], dtype=df.dtype)])
    arrays: dict[str, np.ndarray] = {
        "post_doc": snapshot.post_doc,
        "line_data": snapshot.line_data,
        "doc_len": snapshot.doc_len,
        "term_blob": snapshot.vocab_blob,
        "path_blob": snapshot.path_blob,
        "path_offsets": snapshot.path_offsets,
        "mtime_ns": snapshot.mtime_ns,
        "size": snapshot.size,
        "prior_flags": snapshot.prior_flags,
        "kind_id": snapshot.kind_id,
    }
    packed = {"df": df, "post_tf": snapshot.post_tf, "term_len": np.diff(snapshot.vocab_offsets),
              "field_len": snapshot.field_len}
    for name, values in packed.items():
        arrays[name], arrays[name + "_big_pos"], arrays[name + "_big_val"] = _pack(values)
    meta = {
        "format": FORMAT,
        "unicode_version": UNICODE_VERSION,
        "rules": snapshot.rules,
        "max_bytes": snapshot.max_bytes,
        "files": len(snapshot.paths),
        "terms": n_terms,
        "created_unix": time.time(),
        "metadata": snapshot.metadata,
    }
    return write_container(directory, INDEX_FILE, arrays, _ARRAYS, meta, FORMAT_VERSION)


# --- load ---------------------------------------------------------------------------


def _check_unicode(header: dict) -> None:
    if header.get("unicode_version") != UNICODE_VERSION:
        raise IndexFormatError(
            f"index was built with Unicode {header.get('unicode_version')} tables; this interpreter has "
            f"{UNICODE_VERSION}: rebuild it"
        )


def _opened(path: str | os.PathLike[str], read):
    """Run ``read(file)``, turning a missing or misplaced file into :class:`IndexFormatError`."""
    file = index_file(path)
    try:
        return read(file)
    except (FileNotFoundError, NotADirectoryError):
        if is_dir(Path(path)):
            raise IndexFormatError(f"{path}: not a codelex index (no {INDEX_FILE})") from None
        raise IndexFormatError(f"{path}: no such index") from None
    except IsADirectoryError:
        raise IndexFormatError(f"{file}: is a directory, not an index file") from None


def read_lexical_header(path: str | os.PathLike[str]) -> dict:
    """The verified JSON header of a saved index, without loading its arrays.

    Raises
    ------
    codelex.IndexFormatError
        As :func:`load_lexical` does for the prefix and header.
    """
    return _opened(path, lambda f: read_container_header(f, FORMAT, FORMAT_VERSION, _check_unicode))


def load_lexical(path: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True) -> LexicalSnapshot:
    """Read and check a saved index: a snapshot ready to be installed.

    Raises
    ------
    codelex.IndexFormatError
        With a one-line reason, for anything that is not an intact index of
        this format version (the native structural checks run when the
        snapshot is installed).
    """
    c = _opened(path, lambda f: read_container(f, _ARRAYS, FORMAT, FORMAT_VERSION, mmap=mmap, verify=verify,
                                               checks=_check_unicode))
    header, arrays = c.header, c.arrays
    df, post_tf, term_len, field_len = (
        _unpack(name, arrays[name], arrays[name + "_big_pos"], arrays[name + "_big_val"], np.uint32)
        for name in _PACKED
    )
    if int(term_len.sum(dtype=np.uint64)) != arrays["term_blob"].shape[0]:
        raise IndexFormatError("corrupt index: term lengths do not add up to the term data")
    if df.shape[0] != term_len.shape[0]:
        raise IndexFormatError("corrupt index: document frequencies and terms disagree in number")
    n = arrays["doc_len"].shape[0]
    if field_len.shape[0] != 3 * n:
        raise IndexFormatError("corrupt index: field lengths and documents disagree in length")
    offsets = arrays["path_offsets"]
    blob = arrays["path_blob"]
    if offsets.shape[0] != n + 1 or offsets[0] != 0 or offsets[-1] != blob.shape[0] \
            or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise IndexFormatError("corrupt index: path offsets do not describe the path data")
    raw = blob.tobytes()
    bounds = offsets.tolist()
    try:
        if raw.isascii():
            text = raw.decode("ascii")
            paths = [text[bounds[i]:bounds[i + 1]] for i in range(n)]
        else:
            paths = [raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogatepass") for i in range(n)]
    except UnicodeDecodeError:
        raise IndexFormatError("corrupt index: a path is not valid UTF-8") from None
    if len(set(paths)) != n:
        raise IndexFormatError("corrupt index: a path occurs twice")
    max_bytes = header.get("max_bytes")
    if max_bytes is not None and (not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0):
        raise IndexFormatError("corrupt index: max_bytes is not a size")
    if arrays["prior_flags"].shape[0] != n or arrays["kind_id"].shape[0] != n:
        raise IndexFormatError("corrupt index: file table and documents disagree in length")
    metadata = header.get("metadata", {})
    created = header.get("created_unix")
    rules = header.get("rules")
    return LexicalSnapshot(
        term_ptr=_cumulative(df, np.int64), post_doc=arrays["post_doc"], post_tf=post_tf,
        line_data=arrays["line_data"], doc_len=arrays["doc_len"], field_len=field_len, vocab_blob=arrays["term_blob"],
        vocab_offsets=_cumulative(term_len, np.uint64), paths=paths, path_blob=blob, path_offsets=offsets,
        mtime_ns=arrays["mtime_ns"], size=arrays["size"], prior_flags=arrays["prior_flags"],
        kind_id=arrays["kind_id"], rules=rules if isinstance(rules, str) else "", max_bytes=max_bytes,
        metadata=dict(metadata) if isinstance(metadata, dict) else {},
        saved_at=created if isinstance(created, (int, float)) and not isinstance(created, bool) else None,
        container=c,
    )
