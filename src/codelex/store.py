"""Persistence: the on-disk index format, atomic saves and debounced saving.

Format (version 1)
------------------
An index is a directory holding one file, ``index.clx``::

    0   magic  b"CODELEX\\0"
    8   u32    format version (little-endian)
    12  u32    header length H
    16  u64    xxh3-64 of the header bytes
    24  header (H bytes of UTF-8 JSON), then zero padding
    ..  arrays, each starting at a multiple of 64, zero padding between

The JSON header lists every array (name, dtype, shape, offset, byte length,
xxh3-64) plus the Unicode version of the tokenizer tables and a fingerprint
of the path rules.  Arrays are plain little-endian numpy data: the CSR
posting segment, the forward index, the term dictionary, and the file table
(paths, ``mtime_ns``, sizes, prior flags, language ids).  Loading maps the
file and wraps the arrays without parsing them; the checks that follow are
linear scans (checksums, then the structural validation that native code
relies on), never a rebuild.

Crash safety: a save writes a temporary file in the same directory, fsyncs
it, renames it over ``index.clx`` and fsyncs the directory, all under an
advisory lock (``index.lock``) so that two processes never interleave.  A
crash at any point leaves the old or the new index, and the next save
removes the temporary file of a crashed writer.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import mmap as _mmap
import os
import stat
import struct
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import xxhash
from filelock import FileLock

from codelex._native import _core
from codelex.errors import IndexFormatError
from codelex.index import _KIND_IDS, _NO_KIND, WordIndex, _DocTable, _View
from codelex.priors import DOC_FILE_RE, TEST_VENDOR_RE
from codelex.tokenize import Vocabulary

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FORMAT_VERSION", "INDEX_FILE", "PersistScheduler", "load_index", "read_header", "save_index"]

log = logging.getLogger("codelex")

FORMAT_VERSION = 1
INDEX_FILE = "index.clx"
LOCK_FILE = "index.lock"
_MAGIC = b"CODELEX\x00"
_PREFIX = struct.Struct("<8sIIQ")
_ALIGN = 64
_MAX_HEADER = 1 << 28  # a sanity bound: metadata (e.g. files skipped for their content) can be large

# name -> dtype; the order is the order in the file.  Small counts (document
# frequencies, term frequencies, term lengths) are stored as one byte each,
# 255 meaning "see the overflow pairs" (<name>_big_pos, <name>_big_val).
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
_PACKED = ("df", "post_tf", "term_len")
_SMALL_MAX = 255


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


def _rules_fingerprint() -> str:
    """Changes whenever the stored prior flags or language ids would."""
    text = "\n".join([TEST_VENDOR_RE.pattern, DOC_FILE_RE.pattern, *sorted(_KIND_IDS)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _align(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _index_file(path: str | os.PathLike[str]) -> Path:
    """The index directory's file, or path itself when it names anything but a directory."""
    p = Path(path)
    return p / INDEX_FILE if _is_dir(p) else p


def _is_dir(p: Path) -> bool:
    """Like ``Path.is_dir``, but False (not an exception) for an unreadable path."""
    try:
        return stat.S_ISDIR(os.stat(p).st_mode)
    except OSError:
        return False


def _open_regular(file: Path):
    """Open ``file`` for reading, refusing anything but a regular file before a read can block.

    ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for
    a writer; the file type is then checked on the open descriptor.
    """
    fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(file))
        if not stat.S_ISREG(mode):
            raise IndexFormatError(f"{file}: not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# --- save ----------------------------------------------------------------------


def save_index(index: WordIndex, path: str | os.PathLike[str]) -> Path:
    """Write ``index`` atomically into the directory ``path``; returns the file written.

    Pending updates are merged first (under the index's writer lock); the
    arrays are then copied out, so updates may go on while the file is
    written.

    Raises
    ------
    OSError
        When the directory cannot be created or written.
    """
    directory = Path(path)
    if directory.name == INDEX_FILE and not _is_dir(directory):
        directory = directory.parent
    directory.mkdir(parents=True, exist_ok=True)
    with index._write_lock:
        index.merge()
        arrays, mtime_ns, size = index._live.export()
        view = index._view
        vocab_blob, vocab_offsets = index._vocab.to_arrays()
        paths = view.table.paths[: view.n]
        flags = view.table.flags(view.n).copy()
        kind = view.table.kind(view.n).copy()
        max_bytes = index.max_bytes
        metadata = dict(index.metadata)
    path_blob, path_offsets = _core.encode_paths(paths)
    term_ptr = arrays.pop("term_ptr")
    df = np.diff(term_ptr)
    if df.shape[0] < len(vocab_offsets) - 1:  # terms interned by a failed update have no postings
        df = np.concatenate([df, np.zeros(len(vocab_offsets) - 1 - df.shape[0], dtype=df.dtype)])
    packed = {"df": df, "post_tf": arrays.pop("post_tf"), "term_len": np.diff(vocab_offsets)}
    for name, values in packed.items():
        arrays[name], arrays[name + "_big_pos"], arrays[name + "_big_val"] = _pack(values)
    arrays.update(
        term_blob=vocab_blob,
        path_blob=np.frombuffer(path_blob, dtype=np.uint8),
        path_offsets=path_offsets,
        mtime_ns=mtime_ns,
        size=size,
        prior_flags=flags,
        kind_id=kind,
    )
    meta = {
        "format": "codelex-index",
        "version": FORMAT_VERSION,
        "unicode_version": _core.UNICODE_VERSION,
        "rules": _rules_fingerprint(),
        "max_bytes": max_bytes,
        "files": len(paths),
        "terms": len(vocab_offsets) - 1,
        "created_unix": time.time(),
        "metadata": metadata,
    }
    target = directory / INDEX_FILE
    with FileLock(str(directory / LOCK_FILE)):
        _remove_stale_temporaries(directory)
        tmp = directory / f".{INDEX_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as f:
                _write(f, arrays, meta)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                tmp.unlink()
            except OSError:
                pass
            raise
        _fsync_directory(directory)
    return target


def _write(f, arrays: dict[str, np.ndarray], meta: dict) -> None:
    entries = []
    offset = 0  # relative to the data start, fixed below
    for name, dtype in _ARRAYS.items():
        arr = np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype))
        arrays[name] = arr
        entries.append({"name": name, "dtype": dtype, "shape": [int(arr.shape[0])], "offset": offset,
                        "nbytes": int(arr.nbytes), "xxh3": xxhash.xxh3_64_hexdigest(arr)})
        offset = _align(offset + arr.nbytes)
    # The header's own length fixes where the data starts; offsets are written
    # as absolute positions, so settle the length first (the digits can only grow).
    data_start = 0
    for _ in range(4):
        header = dict(meta, arrays=[dict(e, offset=e["offset"] + data_start) for e in entries])
        last = header["arrays"][-1]
        header["file_size"] = last["offset"] + last["nbytes"]
        blob = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
        new_start = _align(_PREFIX.size + len(blob))
        if new_start == data_start:
            break
        data_start = new_start
    else:  # pragma: no cover - the loop converges in two rounds
        raise RuntimeError("header layout did not converge")
    f.write(_PREFIX.pack(_MAGIC, FORMAT_VERSION, len(blob), xxhash.xxh3_64_intdigest(blob)))
    f.write(blob)
    pos = _PREFIX.size + len(blob)
    for entry in header["arrays"]:
        f.write(b"\x00" * (entry["offset"] - pos))
        f.write(memoryview(arrays[entry["name"]]).cast("B"))
        pos = entry["offset"] + entry["nbytes"]


def _remove_stale_temporaries(directory: Path) -> None:
    """Delete temporary files of writers that died (we hold the lock, so no one is writing)."""
    for p in directory.glob(f".{INDEX_FILE}.*.tmp"):
        try:
            p.unlink()
        except OSError:
            pass


def _fsync_directory(directory: Path) -> None:
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot fsync a directory; the rename still stands
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EACCES):
            raise
    finally:
        os.close(fd)


# --- load ----------------------------------------------------------------------


def load_index(cls: type[WordIndex], path: str | os.PathLike[str], *, mmap: bool = True,
               verify: bool = True) -> WordIndex:
    """Load an index written by :func:`save_index` (see :meth:`WordIndex.load`)."""
    file = _index_file(path)
    try:
        with _open_regular(file) as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(_PREFIX.size)
            header, header_end = _read_header(prefix, f, size)
            if mmap and size > 0:
                buf = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
            else:
                f.seek(0)
                buf = f.read()
            if len(buf) != size:
                raise IndexFormatError(f"{file}: the file changed while it was read")
            # Checksums of a mapped file are computed from read() calls, not
            # through the mapping, so that verifying does not make the whole
            # index resident in this process.
            arrays = _read_arrays(header, buf, header_end, size, verify,
                                  f.fileno() if isinstance(buf, _mmap.mmap) else None)
    except (FileNotFoundError, NotADirectoryError):
        if _is_dir(Path(path)):
            raise IndexFormatError(f"{path}: not a codelex index (no {INDEX_FILE})") from None
        raise IndexFormatError(f"{path}: no such index") from None
    except IsADirectoryError:
        raise IndexFormatError(f"{file}: is a directory, not an index file") from None
    index = _assemble(cls, header, arrays, file)
    if isinstance(buf, _mmap.mmap) and hasattr(_mmap, "MADV_DONTNEED"):
        # The checks above touched every page of the postings and lines; let
        # queries fault back in (from the page cache) only what they read.
        try:
            buf.madvise(_mmap.MADV_DONTNEED)
        except (OSError, ValueError):
            pass
    return index


def _file_digest(fd: int, offset: int, nbytes: int) -> str:
    hasher = xxhash.xxh3_64()
    chunk = 4 << 20
    end = offset + nbytes
    while offset < end:
        data = os.pread(fd, min(chunk, end - offset), offset)
        if not data:
            break
        hasher.update(data)
        offset += len(data)
    return hasher.hexdigest()


def read_header(path: str | os.PathLike[str]) -> dict:
    """The verified JSON header of a saved index, without loading its arrays.

    Raises
    ------
    codelex.IndexFormatError
        As :func:`load_index` does for the prefix and header.
    """
    file = _index_file(path)
    try:
        with _open_regular(file) as f:
            size = os.fstat(f.fileno()).st_size
            header, _ = _read_header(f.read(_PREFIX.size), f, size)
    except (FileNotFoundError, NotADirectoryError):
        raise IndexFormatError(f"{path}: no such index") from None
    except IsADirectoryError:
        raise IndexFormatError(f"{file}: is a directory, not an index file") from None
    return header


def _read_header(prefix: bytes, f, size: int) -> tuple[dict, int]:
    """Check the prefix and header; returns the header and the offset where it ends."""
    if len(prefix) < _PREFIX.size:
        raise IndexFormatError(f"truncated index: {size} bytes")
    magic, version, header_len, digest = _PREFIX.unpack(prefix)
    if magic != _MAGIC:
        raise IndexFormatError("not a codelex index (bad magic)")
    if version != FORMAT_VERSION:
        raise IndexFormatError(f"unsupported index format version {version} (this codelex reads {FORMAT_VERSION})")
    if header_len > _MAX_HEADER or _PREFIX.size + header_len > size:
        raise IndexFormatError("truncated index: header extends past the end of the file")
    blob = f.read(header_len)
    if len(blob) != header_len or xxhash.xxh3_64_intdigest(blob) != digest:
        raise IndexFormatError("corrupt index: header checksum mismatch")
    try:
        header = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFormatError(f"corrupt index: header is not JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    if not isinstance(header, dict) or header.get("format") != "codelex-index" or header.get("version") != version:
        raise IndexFormatError("corrupt index: header does not describe a codelex index")
    if header.get("unicode_version") != _core.UNICODE_VERSION:
        raise IndexFormatError(
            f"index was built with Unicode {header.get('unicode_version')} tables; this interpreter has "
            f"{_core.UNICODE_VERSION}: rebuild it"
        )
    if header.get("file_size") != size:
        what = "truncated" if isinstance(header.get("file_size"), int) and header["file_size"] > size else "corrupt"
        raise IndexFormatError(f"{what} index: {size} bytes on disk, header says {header.get('file_size')}")
    return header, _PREFIX.size + header_len


def _read_arrays(header: dict, buf, header_end: int, size: int, verify: bool,
                 fd: int | None = None) -> dict[str, np.ndarray]:
    data_start = _align(header_end)
    entries = header.get("arrays")
    if not isinstance(entries, list):
        raise IndexFormatError("corrupt index: header has no array table")
    by_name = {}
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise IndexFormatError("corrupt index: malformed array entry")
        by_name[e["name"]] = e
    missing = [n for n in _ARRAYS if n not in by_name]
    if missing:
        raise IndexFormatError(f"corrupt index: missing array {missing[0]!r}")
    arrays = {}
    spans = []
    for name, dtype in _ARRAYS.items():
        e = by_name[name]
        if e.get("dtype") != dtype:
            raise IndexFormatError(f"corrupt index: array {name!r} has dtype {e.get('dtype')!r}, expected {dtype!r}")
        shape, offset, nbytes = e.get("shape"), e.get("offset"), e.get("nbytes")
        if (not isinstance(shape, list) or len(shape) != 1 or not all(isinstance(x, int) for x in (*shape, offset, nbytes))
                or isinstance(nbytes, bool)):
            raise IndexFormatError(f"corrupt index: array {name!r} has a malformed shape or offset")
        itemsize = np.dtype(dtype).itemsize
        count = shape[0]
        if count < 0 or nbytes != count * itemsize:
            raise IndexFormatError(f"corrupt index: array {name!r} has shape {shape} but {nbytes} bytes")
        if offset < data_start or offset % _ALIGN or offset + nbytes > size:
            raise IndexFormatError(f"corrupt index: array {name!r} lies outside the data area")
        arr = np.frombuffer(buf, dtype=np.dtype(dtype), count=count, offset=offset)
        digest = None
        if verify:
            digest = _file_digest(fd, offset, nbytes) if fd is not None and hasattr(os, "pread") \
                else xxhash.xxh3_64_hexdigest(arr)
        if verify and digest != e.get("xxh3"):
            raise IndexFormatError(f"corrupt index: checksum mismatch in array {name!r}")
        if arr.dtype.byteorder not in "=|" and arr.dtype.newbyteorder("=") != arr.dtype:
            arr = arr.astype(arr.dtype.newbyteorder("="))  # big-endian host: one conversion
        arrays[name] = arr
        spans.append((offset, offset + nbytes))
    spans.sort()
    pos = data_start
    for start, end in spans:
        if start < pos:
            raise IndexFormatError("corrupt index: arrays overlap")
        pos = end
    if verify:  # padding carries no data but must not hide corruption either
        view = memoryview(buf)
        gaps = [(header_end, data_start)]
        pos = data_start
        for start, end in spans:
            gaps.append((pos, start))
            pos = end
        for a, b in gaps:
            if b > a and any(view[a:b]):
                raise IndexFormatError("corrupt index: non-zero padding between arrays")
    return arrays


def _cumulative(counts: np.ndarray, dtype) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, dtype=dtype)
    np.cumsum(counts, out=out[1:])
    return out


def _assemble(cls: type[WordIndex], header: dict, arrays: dict[str, np.ndarray], file: Path) -> WordIndex:
    df, post_tf, term_len = (
        _unpack(name, arrays[name], arrays[name + "_big_pos"], arrays[name + "_big_val"], np.uint32)
        for name in _PACKED
    )
    if int(term_len.sum(dtype=np.uint64)) != arrays["term_blob"].shape[0]:
        raise IndexFormatError("corrupt index: term lengths do not add up to the term data")
    try:
        vocab = Vocabulary.from_arrays(arrays["term_blob"], _cumulative(term_len, np.uint64))
    except ValueError as exc:
        raise IndexFormatError(f"corrupt index: term dictionary: {exc}") from None
    if df.shape[0] != len(vocab):
        raise IndexFormatError("corrupt index: document frequencies and terms disagree in number")
    n = arrays["doc_len"].shape[0]
    offsets = arrays["path_offsets"]
    blob = arrays["path_blob"]
    if offsets.shape[0] != n + 1 or offsets[0] != 0 or offsets[-1] != blob.shape[0] or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise IndexFormatError("corrupt index: path offsets do not describe the path data")
    raw = blob.tobytes()
    try:
        if raw.isascii():
            text = raw.decode("ascii")
            bounds = offsets.tolist()
            paths = [text[bounds[i]:bounds[i + 1]] for i in range(n)]
        else:
            bounds = offsets.tolist()
            paths = [raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogatepass") for i in range(n)]
    except UnicodeDecodeError:
        raise IndexFormatError("corrupt index: a path is not valid UTF-8") from None
    if len(set(paths)) != n:
        raise IndexFormatError("corrupt index: a path occurs twice")
    max_bytes = header.get("max_bytes")
    if max_bytes is not None and (not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0):
        raise IndexFormatError("corrupt index: max_bytes is not a size")
    flags = arrays["prior_flags"]
    kind = arrays["kind_id"]
    if flags.shape[0] != n or kind.shape[0] != n:
        raise IndexFormatError("corrupt index: file table and documents disagree in length")
    if header.get("rules") == _rules_fingerprint() and (n == 0 or (kind.min() >= 0 and kind.max() <= _NO_KIND)):
        table = _DocTable(paths, flags, kind)
    else:  # path rules changed since the save: derive the attributes again
        table = _DocTable(paths)

    index = cls(max_bytes=max_bytes)
    index._vocab = vocab
    index._live = _core.LiveIndex(vocab)
    try:
        index._live.install(
            {"term_ptr": _cumulative(df, np.int64), "post_doc": arrays["post_doc"], "post_tf": post_tf,
             "line_data": arrays["line_data"], "doc_len": arrays["doc_len"]},
            blob, offsets, arrays["mtime_ns"], arrays["size"],
        )
    except ValueError as exc:
        raise IndexFormatError(f"corrupt index: {exc}") from None
    index._view = _View(table, n, index._live.generation)
    metadata = header.get("metadata", {})
    index.metadata = dict(metadata) if isinstance(metadata, dict) else {}
    created = header.get("created_unix")
    index.metadata["saved_at"] = created if isinstance(created, (int, float)) else None
    return index


# --- debounced saving ------------------------------------------------------------

_DEFAULT_DEBOUNCE_MS = 1500


def _debounce_from_env() -> float:
    raw = os.environ.get("CODELEX_PERSIST_DEBOUNCE_MS")
    if raw is None or raw.strip() == "":
        return _DEFAULT_DEBOUNCE_MS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"CODELEX_PERSIST_DEBOUNCE_MS must be a number of milliseconds >= 0, not {raw!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"CODELEX_PERSIST_DEBOUNCE_MS must be a number of milliseconds >= 0, not {raw!r}")
    return value


class _SaveState:
    """What the scheduler, its thread and its finalizer share (never the scheduler itself,
    so that an abandoned scheduler can be collected, flushing on the way out)."""

    __slots__ = ("index", "path", "cond", "save_lock", "deadline", "closed")

    def __init__(self, index: WordIndex, path: Path) -> None:
        self.index = index
        self.path = path
        self.cond = threading.Condition()
        self.save_lock = threading.Lock()
        self.deadline: float | None = None
        self.closed = False

    def flush(self) -> bool:
        with self.save_lock:
            with self.cond:
                if self.deadline is None:
                    return False
                self.deadline = None
            try:
                save_index(self.index, self.path)
            except BaseException:
                with self.cond:  # still pending: a later flush retries
                    if self.deadline is None:
                        self.deadline = time.monotonic()
                raise
            return True

    def stop(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def _final_flush(state: _SaveState) -> None:
    """Runs when a scheduler is collected or at interpreter exit (weakref.finalize)."""
    state.stop()
    try:
        state.flush()
    except Exception as exc:  # reported, never raised from a finalizer
        print(f"codelex: saving the index to {state.path} failed: {exc}", file=sys.stderr)


def _worker(ref: weakref.ref, state: _SaveState) -> None:
    while True:
        with state.cond:
            while not state.closed and (state.deadline is None or state.deadline > time.monotonic()):
                state.cond.wait(None if state.deadline is None else state.deadline - time.monotonic())
            if state.closed:
                return
        scheduler = ref()
        if scheduler is None:
            return
        try:
            if state.flush():
                scheduler.saves += 1
                scheduler.last_error = None
        except Exception as exc:  # a background save must not kill the thread
            scheduler.last_error = exc
            log.warning("codelex: saving the index to %s failed: %s", state.path, exc)
            if scheduler.on_error is not None:
                scheduler.on_error(exc)
            with state.cond:  # retry after another quiet window, not in a tight loop
                state.deadline = time.monotonic() + max(scheduler.debounce_ms / 1000.0, 0.05)
        del scheduler


class PersistScheduler:
    """Coalesce bursts of updates into one save after a quiet window.

    Call :meth:`schedule` after each update; the index is saved once no
    call has come for ``debounce_ms``.  :meth:`flush` saves at once if a
    save is pending.  A pending save is also written when the scheduler is
    closed, garbage-collected, or at interpreter exit.

    Parameters
    ----------
    index : WordIndex
    path : str or path-like
        The index directory (see :meth:`WordIndex.save`).
    debounce_ms : float, optional
        Quiet window; default ``$CODELEX_PERSIST_DEBOUNCE_MS`` or 1500.
        0 saves immediately, in the calling thread.
    on_error : callable, optional
        Called with the exception when a background save fails (the
        exception is also kept in :attr:`last_error` and logged); the save
        stays pending and is retried after another quiet window.

    Examples
    --------
    >>> import tempfile
    >>> index = WordIndex.build([("a.py", "def alpha(): ...")])
    >>> with tempfile.TemporaryDirectory() as d, PersistScheduler(index, d, debounce_ms=50) as saver:
    ...     _ = index.update("b.py", "def beta(): ...")
    ...     saver.schedule()
    ...     saver.flush()
    ...     sorted(WordIndex.load(d).files)
    True
    ['a.py', 'b.py']
    """

    def __init__(self, index: WordIndex, path: str | os.PathLike[str], *, debounce_ms: float | None = None,
                 on_error: Callable[[BaseException], object] | None = None) -> None:
        if not isinstance(index, WordIndex):
            raise TypeError(f"index must be a WordIndex, not {type(index).__name__}")
        if debounce_ms is None:
            debounce_ms = _debounce_from_env()
        if isinstance(debounce_ms, bool) or not isinstance(debounce_ms, (int, float)) or not 0 <= debounce_ms < float("inf"):
            raise ValueError(f"debounce_ms must be a number >= 0, not {debounce_ms!r}")
        self.index = index
        self.path = Path(path)
        self.debounce_ms = float(debounce_ms)
        self.on_error = on_error
        self.last_error: BaseException | None = None
        self.saves = 0
        self._state = _SaveState(index, self.path)
        self._thread: threading.Thread | None = None
        self._finalizer = weakref.finalize(self, _final_flush, self._state)

    @property
    def pending(self) -> bool:
        """Whether a save is scheduled and not yet written."""
        return self._state.deadline is not None

    def schedule(self) -> None:
        """Note that the index changed; save after the quiet window."""
        state = self._state
        if state.closed:
            raise RuntimeError("the scheduler is closed")
        with state.cond:
            state.deadline = time.monotonic() + self.debounce_ms / 1000.0
            if self.debounce_ms > 0:
                if self._thread is None:
                    self._thread = threading.Thread(target=_worker, args=(weakref.ref(self), state),
                                                    name="codelex-persist", daemon=True)
                    self._thread.start()
                state.cond.notify_all()
        if self.debounce_ms == 0:
            self.flush()

    def flush(self) -> bool:
        """Save now if a save is pending; returns whether one was written.

        Raises whatever the save raises (``OSError``...); the save then stays pending.
        """
        written = self._state.flush()
        if written:
            self.saves += 1
            self.last_error = None
        return written

    def cancel(self) -> None:
        """Drop a pending save."""
        with self._state.cond:
            self._state.deadline = None

    def close(self) -> None:
        """Flush a pending save and stop the background thread."""
        try:
            if not self._state.closed:
                self.flush()
        finally:
            self._state.stop()
            self._finalizer.detach()
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                thread.join()

    def __enter__(self) -> PersistScheduler:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
