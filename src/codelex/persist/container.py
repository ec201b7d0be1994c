"""The container format: named little-endian arrays behind a checksummed JSON header.

Layout of a container file::

    0   magic  b"CODELEX\\0"
    8   u32    format version (little-endian)
    12  u32    header length H
    16  u64    xxh3-64 of the header bytes
    24  header (H bytes of UTF-8 JSON), then zero padding
    ..  arrays, each starting at a multiple of 64, zero padding between

The JSON header names the container's kind (``format``) and version, and
lists every array (name, dtype, shape, offset, byte length, xxh3-64), plus
whatever metadata the writer adds.  Reading maps the file and wraps the
arrays without parsing them; verifying is a linear scan per array.  A reader
may name arrays it verifies lazily itself (``lazy``: the word index's large
arrays carry native per-chunk digests, checked as chunks are first read);
their xxh3 is then checked only by :meth:`Container.verify_all`.

Whose file: the header starts with ``{"mac":"<64 hex digits>",``, this
user's HMAC-SHA256 (:mod:`codelex.persist.trust`) of the rest of the header
(the JSON without that member) and the format version.  The digests are
unkeyed, so anyone who can write a file can make them match; the MAC cannot
be made without the key.  A file whose MAC does not verify (committed to a
repository, copied, forged) is *untrusted*: refused
(:class:`UntrustedIndexError`) unless the reader asks for it
(``allow_untrusted``) and then checks every structure it reads itself.  The
HMAC covers the header only (a load stays a few milliseconds however large
the arrays): the arrays are vouched for by the digests the header holds.

Files inside an index directory are opened without following a symbolic
link, refused unless regular and (POSIX) owned by this user; the lock file
is replaced when it is not a regular file of ours.

Crash safety: :func:`write_container` writes a temporary file in the same
directory, fsyncs it, renames it over the target and fsyncs the directory,
all under an advisory lock so that two processes never interleave.  A crash
at any point leaves the old or the new file, and the next write removes the
temporary files of crashed writers.

This module knows nothing of what the arrays mean (see
:mod:`codelex.persist.lexical` for the word index's).
"""

from __future__ import annotations

import contextlib
import errno
import json
import mmap as _mmap
import os
import stat
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from codelex.defaults import LOCK_FILE, LOCK_TIMEOUT_S
from codelex.errors import IndexFormatError
from codelex.persist.atomic import replaced
from codelex.persist.layout import make_private_dir
from codelex.persist.trust import MAC_HEX, key_problem, mac, mac_matches

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: filelock's msvcrt lock
    fcntl = None

__all__ = [
    "ALIGN",
    "atomic_file",
    "Container",
    "decode_items",
    "directory_lock",
    "encode_header",
    "encode_items",
    "header_trusted",
    "is_dir",
    "open_regular",
    "read_container",
    "read_container_header",
    "UntrustedIndexError",
    "verify_container_file",
    "write_container",
]


class UntrustedIndexError(IndexFormatError):
    """A file in an index directory that this user's codelex did not write (or cannot tell it did):
    no valid MAC under this user's key, a symbolic link, another user's file.  Never trusted."""

MAGIC = b"CODELEX\x00"
_PREFIX = struct.Struct("<8sIIQ")
ALIGN = 64
_MAX_HEADER = 1 << 28  # a sanity bound: metadata (e.g. files skipped for their content) can be large


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def is_dir(p: Path) -> bool:
    """Like ``Path.is_dir``, but False (not an exception) for a path that cannot be examined."""
    try:
        return stat.S_ISDIR(os.stat(p).st_mode)
    except OSError:
        return False


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_POSIX_OWNERS = hasattr(os, "geteuid")


def open_regular(file: Path):
    """Open a file of an index directory for reading: never through a symbolic link, a regular file of this
    user's only, and refused before a read can block.

    ``O_NOFOLLOW`` refuses a link in the last component (a link committed
    as ``.codelex/index.clx`` would otherwise map any file the user can
    read); ``O_NONBLOCK`` makes opening a FIFO return at once instead of
    waiting for a writer; type and owner are then checked on the open
    descriptor.

    Raises
    ------
    codelex.IndexFormatError
        When ``file`` is not a regular file; :class:`UntrustedIndexError` when it is a symbolic link or
        another user's.
    OSError
        When it cannot be opened (``FileNotFoundError``, ``IsADirectoryError``...).
    """
    try:
        fd = os.open(file, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(file):
            raise UntrustedIndexError(f"{file}: a symbolic link (not followed)") from None
        raise
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(file))
        if not stat.S_ISREG(mode):
            raise IndexFormatError(f"{file}: not a regular file")
        if _POSIX_OWNERS and st.st_uid != os.geteuid():
            raise UntrustedIndexError(f"{file}: owned by another user (uid {st.st_uid})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# --- write ------------------------------------------------------------------------


def write_container(directory: Path, name: str, arrays: dict[str, np.ndarray], schema: dict[str, str],
                    meta: dict, version: int) -> Path:
    """Write ``arrays`` (in ``schema`` order, each cast to its dtype) and ``meta`` atomically.

    Parameters
    ----------
    directory : Path
        Created if needed.
    name : str
        The file name inside ``directory``.
    arrays : dict of str to numpy.ndarray
        One 1-d array per ``schema`` entry.
    schema : dict of str to str
        Array name -> numpy dtype string (``"<u4"``, ``"|u1"``...), in file order.
    meta : dict
        JSON-compatible header fields; must include ``format``.
    version : int
        The container's format version (in the prefix and the header).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OSError
        When the directory cannot be created or written.
    """
    with atomic_file(directory, name) as f:
        _write(f, arrays, schema, dict(meta, version=version), version)
    return directory / name


@contextlib.contextmanager
def atomic_file(directory: Path, name: str):
    """A binary file to write ``directory/name`` through: it replaces the old one only once complete.

    Under the directory's lock, stale temporaries of dead writers are removed; the content goes to a
    temporary in the same directory, is fsynced, renamed over the target and the directory fsynced, so
    a crash at any point leaves the old file or the new one.  On an error the temporary is removed.

    Raises
    ------
    OSError
        When the directory cannot be created or written.
    """
    make_private_dir(directory)
    # Bounded: a writer that hangs holding the lock makes this save fail (a TimeoutError, an OSError).
    with directory_lock(directory):
        _remove_stale_temporaries(directory, name)  # (replaced's temporaries: .{name}.{pid}.{thread}.tmp)
        with replaced(directory / name) as f:
            yield f


# --- the directory's lock ------------------------------------------------------------


@contextlib.contextmanager
def directory_lock(directory: Path, timeout: float = LOCK_TIMEOUT_S):
    """Hold ``directory``'s advisory lock (``index.lock``), waiting at most ``timeout`` seconds.

    The directory is this user's (0700: :func:`make_private_dir`), but what
    it held when it came with a clone is the repository author's: a lock
    file that is a symbolic link, or not a regular file of this user's, is
    removed and made again, never opened through (filelock up to 3.20.0
    truncated a link's target).  On POSIX the lock is ``flock`` on a
    descriptor opened ``O_NOFOLLOW`` and never truncated, and it counts only
    while the descriptor's file is still the one at the path (a writer that
    replaced a bad lock file under another's feet makes the other start
    over); elsewhere filelock's.

    Raises
    ------
    TimeoutError
        When another writer holds the lock for ``timeout`` seconds (an OSError).
    OSError
        When the lock file cannot be made.
    """
    path = directory / LOCK_FILE
    if fcntl is None:  # pragma: no cover - Windows
        from filelock import FileLock

        _replace_unsafe_lock(path)
        with FileLock(str(path), timeout=timeout, mode=0o600):
            yield
        return
    deadline = time.monotonic() + timeout
    while True:
        fd = _open_lock_file(path)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(errno.ETIMEDOUT, f"the index directory stayed locked for {timeout:g} s",
                                           str(path)) from None
                    time.sleep(0.05)
            held = os.fstat(fd)
            try:
                current = os.lstat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(fd)
            raise
        if current is not None and (current.st_ino, current.st_dev) == (held.st_ino, held.st_dev):
            break
        os.close(fd)  # the file we locked was replaced meanwhile: lock the one there now
    try:
        yield
    finally:
        os.close(fd)  # (releases the flock)


def _replace_unsafe_lock(path: Path) -> bool:
    """Remove ``path`` unless it is absent or a regular file of this user's; True when something was removed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISREG(st.st_mode) and (not _POSIX_OWNERS or st.st_uid == os.geteuid()):
        return False
    try:
        if stat.S_ISDIR(st.st_mode):
            import shutil  # (a rare repair: not loaded by every reader)

            shutil.rmtree(path)  # (never follows a link inside)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    return True


def _open_lock_file(path: Path) -> int:
    for _ in range(16):
        _replace_unsafe_lock(path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO, errno.EEXIST):
                continue  # replaced by something else since the check: remove it again
            raise
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and (not _POSIX_OWNERS or st.st_uid == os.geteuid()):
            return fd
        os.close(fd)
    raise PermissionError(errno.EPERM, "the lock file keeps being replaced by something else", str(path))


# --- header ---------------------------------------------------------------------------

_MAC_OPEN = b'{"mac":"'
_MAC_END = len(_MAC_OPEN) + MAC_HEX
_MAC_CLOSE = b'",'


def _mac_message(version: int, body: bytes) -> bytes:
    return b"codelex container\x00" + struct.pack("<I", version) + body


def encode_header(header: dict, version: int) -> bytes:
    """A header's bytes as written: sorted JSON led by this user's MAC of the rest (zeros without a key).

    Any ``mac`` member of ``header`` is replaced.
    """
    body = json.dumps({k: v for k, v in header.items() if k != "mac"}, separators=(",", ":"), sort_keys=True).encode()
    if len(body) < 3:
        raise ValueError("a header needs at least one member")
    tag = mac(_mac_message(version, body)) or "0" * MAC_HEX
    return _MAC_OPEN + tag.encode("ascii") + _MAC_CLOSE + body[1:]


def header_trusted(blob: bytes, version: int) -> bool:
    """Whether a header's leading MAC is this user's for the rest of it (False without a key)."""
    if len(blob) < _MAC_END + len(_MAC_CLOSE) + 2 or not blob.startswith(_MAC_OPEN) \
            or blob[_MAC_END:_MAC_END + len(_MAC_CLOSE)] != _MAC_CLOSE:
        return False
    body = b"{" + blob[_MAC_END + len(_MAC_CLOSE):]
    return mac_matches(_mac_message(version, body), blob[len(_MAC_OPEN):_MAC_END])


def _untrusted_reason(kind: str | None) -> str:
    problem = key_problem()
    what = f"{kind} file" if kind else "file"
    if problem is not None:
        return f"untrusted {what}: there is no user key to check it against ({problem}); rebuild it"
    return (f"untrusted {what}: not signed with this user's key (written by someone else: committed, copied "
            "or forged); rebuild it")


#: Arrays are written in pieces of this size.  Why: the page cache keeps a write's pages in folios as large as
#: the write (ext4 on Linux 6.16 and later), and a read fault through a mapping maps the whole folio, so an index
#: written in one call made a process that reads a few postings resident in megabytes of it; in pieces, a fault
#: maps what the kernel's fault-around maps anyway (64 KiB). On the Linux tree this took a serving process's RSS
#: after 138 queries from 344 to 231 MiB.
_WRITE_PIECE = 1 << 16


def _write(f, arrays: dict[str, np.ndarray], schema: dict[str, str], meta: dict, version: int) -> None:
    entries = []
    casted = {}
    offset = 0  # relative to the data start, fixed below
    for name, dtype in schema.items():
        arr = np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype))
        casted[name] = arr
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
        blob = encode_header(header, version)
        new_start = _align(_PREFIX.size + len(blob))
        if new_start == data_start:
            break
        data_start = new_start
    else:  # pragma: no cover - the loop converges in two rounds
        raise RuntimeError("header layout did not converge")
    f.write(_PREFIX.pack(MAGIC, version, len(blob), xxhash.xxh3_64_intdigest(blob)))
    f.write(blob)
    pos = _PREFIX.size + len(blob)
    for entry in header["arrays"]:
        f.write(b"\x00" * (entry["offset"] - pos))
        data = memoryview(casted[entry["name"]]).cast("B")
        for start in range(0, len(data), _WRITE_PIECE):
            f.write(data[start:start + _WRITE_PIECE])
        pos = entry["offset"] + entry["nbytes"]


def _remove_stale_temporaries(directory: Path, name: str) -> None:
    """Delete temporary files of writers that died (we hold the lock, so no one is writing)."""
    for p in directory.glob(f".{name}.*.tmp"):
        try:
            p.unlink()
        except OSError:
            pass


# --- read -------------------------------------------------------------------------


@dataclass
class Container:
    """A container read from disk: its verified header and its arrays (views of ``buffer``)."""

    file: Path
    header: dict
    arrays: dict[str, np.ndarray]
    buffer: object  # the mmap (or bytes) the arrays view; keep it alive with them
    trusted: bool = False  # its header's MAC is this user's (see the module docstring)

    def verify_all(self) -> None:
        """Check every array's xxh3 and the padding, the lazily checked arrays included.

        Raises
        ------
        codelex.IndexFormatError
            For the first array (or gap) that does not match.
        """
        fd = None
        try:
            try:
                fd = os.open(self.file, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
                if os.fstat(fd).st_size != len(self.buffer):
                    raise IndexFormatError(f"{self.file}: the file changed since it was opened")
            except OSError:
                fd = None  # check through the mapping instead
            _read_arrays(self.header, {}, self.buffer, _header_end(self.header, self.buffer), len(self.buffer),
                         True, fd, verify_every=True)
        finally:
            if fd is not None:
                os.close(fd)
        self.release_pages()

    def release_pages(self) -> None:
        """Let the pages the checks touched go (a mapped file faults back only what is read)."""
        buf = self.buffer
        if isinstance(buf, _mmap.mmap) and hasattr(_mmap, "MADV_DONTNEED"):
            try:
                buf.madvise(_mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass


def verify_container_file(file: Path) -> dict:
    """Check a container of any kind completely: this user's MAC, header, every array's checksum, the padding.

    Returns its header.

    Raises
    ------
    codelex.IndexFormatError
        For the first mismatch (:class:`UntrustedIndexError` for a file this user did not write).
    OSError
        When the file cannot be opened.
    """
    with open_regular(file) as f:
        size = os.fstat(f.fileno()).st_size
        header, _, _ = _read_header(f.read(_PREFIX.size), f, size, None, None, None, False)
    c = read_container(file, {}, header["format"], header["version"], mmap=True, verify=True)
    c.verify_all()
    return c.header


def read_container_header(file: Path, kind: str, version: int, checks=None, *,
                          allow_untrusted: bool = False) -> dict:
    """The verified JSON header of a container file, without reading its arrays.

    Raises
    ------
    codelex.IndexFormatError
        As :func:`read_container` does for the prefix and header.
    OSError
        When the file cannot be opened.
    """
    with open_regular(file) as f:
        size = os.fstat(f.fileno()).st_size
        header, _, _ = _read_header(f.read(_PREFIX.size), f, size, kind, version, checks, allow_untrusted)
    return header


def read_container(file: Path, schema: dict[str, str], kind: str, version: int, *, mmap: bool = True,
                   verify: bool = True, checks=None, lazy: frozenset[str] = frozenset(),
                   allow_untrusted: bool = False) -> Container:
    """Read and check a container written by :func:`write_container`.

    Parameters
    ----------
    schema : dict of str to str
        The arrays expected (name -> dtype); any other array is ignored.
    kind, version : str, int
        The ``format`` and version the header must declare.
    mmap : bool, default True
        Map the file instead of reading it.
    verify : bool, default True
        Check every array's checksum and that the padding is zero.
    checks : callable, optional
        ``checks(header)`` raises :class:`codelex.IndexFormatError` for a
        header the caller cannot use (e.g. foreign Unicode tables).
    lazy : frozenset of str
        Arrays whose checksum is not checked here (the caller verifies them
        as they are used; :meth:`Container.verify_all` checks everything).
    allow_untrusted : bool, default False
        Return a file this user did not write (``trusted`` False) instead of
        refusing it: the caller then validates every structure it reads, its
        checksums proving nothing (whoever wrote the file computed them).

    Raises
    ------
    codelex.IndexFormatError
        With a one-line reason, for anything that is not an intact container
        of this kind and version; :class:`UntrustedIndexError` for one this
        user did not write (unless ``allow_untrusted``).
    OSError
        When the file cannot be opened (``FileNotFoundError``...).
    """
    with open_regular(file) as f:
        size = os.fstat(f.fileno()).st_size
        prefix = f.read(_PREFIX.size)
        header, header_end, trusted = _read_header(prefix, f, size, kind, version, checks, allow_untrusted)
        if mmap and size > 0:
            buf = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
        else:
            f.seek(0)
            buf = f.read()
        if len(buf) != size:
            raise IndexFormatError(f"{file}: the file changed while it was read")
        # The arrays checked whole here are hashed through the mapping (the
        # load reads them anyway); the lazily checked ones are not touched, and
        # Container.verify_all hashes everything from read() calls, so that
        # verifying does not make the whole file resident in this process.
        arrays = _read_arrays(header, schema, buf, header_end, size, verify,
                              f.fileno() if isinstance(buf, _mmap.mmap) else None, lazy=lazy)
    if isinstance(buf, _mmap.mmap) and verify and trusted:  # (an untrusted file is scanned whole: read-ahead helps)
        _advise_random(buf, header, lazy)
    return Container(file, header, arrays, buf, trusted)


def _advise_random(buf: _mmap.mmap, header: dict, lazy: frozenset[str]) -> None:
    """Tell the kernel that the lazily read arrays are read a few pages at a time (no read-ahead).

    From a cold page cache, a fault then reads the pages a query touches, not the window around them
    (Lucene reads its postings and terms the same way).
    """
    advice = getattr(_mmap, "MADV_RANDOM", None)
    if advice is None:
        return
    page = _mmap.PAGESIZE
    for entry in header["arrays"]:
        if entry["name"] not in lazy or entry["nbytes"] < page:
            continue
        start = entry["offset"] - entry["offset"] % page
        try:
            buf.madvise(advice, start, entry["offset"] + entry["nbytes"] - start)
        except (OSError, ValueError):
            return  # advice only


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


def _read_header(prefix: bytes, f, size: int, kind: str | None, expected_version: int | None, checks,
                 allow_untrusted: bool) -> tuple[dict, int, bool]:
    """Check the prefix and header; returns the header, the offset where it ends and whether it is trusted.

    ``kind`` and ``expected_version`` None: whatever the header declares.
    Values read from the file reach messages as ``repr`` only (escaped: they
    are printed and logged).
    """
    if len(prefix) < _PREFIX.size:
        raise IndexFormatError(f"truncated index: {size} bytes")
    magic, version, header_len, digest = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise IndexFormatError("not a codelex index (bad magic)")
    if expected_version is not None and version != expected_version:
        raise IndexFormatError(
            f"unsupported index format version {version} (this codelex reads {expected_version})")
    if header_len > _MAX_HEADER or _PREFIX.size + header_len > size:
        raise IndexFormatError("truncated index: header extends past the end of the file")
    blob = f.read(header_len)
    if len(blob) != header_len or xxhash.xxh3_64_intdigest(blob) != digest:
        raise IndexFormatError("corrupt index: header checksum mismatch")
    trusted = header_trusted(blob, version)
    if not trusted and not allow_untrusted:  # (refused before its JSON is even parsed)
        raise UntrustedIndexError(_untrusted_reason(kind))
    try:
        header = json.loads(blob)
    except (ValueError, RecursionError) as exc:  # (JSONDecodeError and UnicodeDecodeError are ValueErrors)
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise IndexFormatError(f"corrupt index: header is not JSON ({why})") from None
    if not isinstance(header, dict) or not isinstance(header.get("format"), str) \
            or (kind is not None and header["format"] != kind) or header.get("version") != version:
        raise IndexFormatError(f"corrupt index: header does not describe a codelex index ({kind or 'any kind'})")
    if checks is not None:
        checks(header)
    if header.get("file_size") != size:
        what = "truncated" if isinstance(header.get("file_size"), int) and header["file_size"] > size else "corrupt"
        raise IndexFormatError(f"{what} index: {size} bytes on disk, header says {header.get('file_size')!r}")
    return header, _PREFIX.size + header_len, trusted


def _header_end(header: dict, buf) -> int:
    return _PREFIX.size + _PREFIX.unpack(bytes(buf[:_PREFIX.size]))[2]


def _read_arrays(header: dict, schema: dict[str, str], buf, header_end: int, size: int, verify: bool,
                 fd: int | None = None, lazy: frozenset[str] = frozenset(),
                 verify_every: bool = False) -> dict[str, np.ndarray]:
    data_start = _align(header_end)
    entries = header.get("arrays")
    if not isinstance(entries, list):
        raise IndexFormatError("corrupt index: header has no array table")
    by_name = {}
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise IndexFormatError("corrupt index: malformed array entry")
        by_name[e["name"]] = e
    missing = [n for n in schema if n not in by_name]
    if missing:
        raise IndexFormatError(f"corrupt index: missing array {missing[0]!r}")
    arrays = {}
    spans = []
    for e in entries:
        shape, offset, nbytes = e.get("shape"), e.get("offset"), e.get("nbytes")
        if (not isinstance(shape, list) or len(shape) != 1 or not all(isinstance(x, int) for x in (*shape, offset, nbytes))
                or isinstance(nbytes, bool)):
            raise IndexFormatError(f"corrupt index: array {e['name']!r} has a malformed shape or offset")
        if offset < data_start or offset % ALIGN or nbytes < 0 or offset + nbytes > size:
            raise IndexFormatError(f"corrupt index: array {e['name']!r} lies outside the data area")
        spans.append((offset, offset + nbytes))
    if verify_every:
        for e in entries:
            digest = _file_digest(fd, e["offset"], e["nbytes"]) if fd is not None and hasattr(os, "pread") \
                else xxhash.xxh3_64_hexdigest(memoryview(buf)[e["offset"]:e["offset"] + e["nbytes"]])
            if digest != e.get("xxh3"):
                raise IndexFormatError(f"corrupt index: checksum mismatch in array {e['name']!r}")
    for name, dtype in schema.items():
        e = by_name[name]
        if e.get("dtype") != dtype:
            raise IndexFormatError(f"corrupt index: array {name!r} has dtype {e.get('dtype')!r}, expected {dtype!r}")
        offset, nbytes, count = e["offset"], e["nbytes"], e["shape"][0]
        itemsize = np.dtype(dtype).itemsize
        if count < 0 or nbytes != count * itemsize:
            raise IndexFormatError(f"corrupt index: array {name!r} has shape {e['shape']} but {nbytes} bytes")
        arr = np.frombuffer(buf, dtype=np.dtype(dtype), count=count, offset=offset)
        if verify and not verify_every and name not in lazy:
            # Through the mapping: an array checked whole at a load is read by the load anyway, and a read()
            # would copy it first (Linux: 11-12 -> 9-10 ms for a first load). verify_every reads with read(),
            # not to make the lazily checked arrays resident.
            digest = xxhash.xxh3_64_hexdigest(arr)
            if digest != e.get("xxh3"):
                raise IndexFormatError(f"corrupt index: checksum mismatch in array {name!r}")
        if arr.dtype.byteorder not in "=|" and arr.dtype.newbyteorder("=") != arr.dtype:
            arr = arr.astype(arr.dtype.newbyteorder("="))  # big-endian host: one conversion
        arrays[name] = arr
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


def encode_items(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Variable-length byte strings as a container stores them: one uint8 blob and uint64 offsets (n + 1)."""
    off = np.zeros(len(items) + 1, dtype=np.uint64)
    np.cumsum([len(r) for r in items], out=off[1:])
    return np.frombuffer(b"".join(items), dtype=np.uint8), off


def decode_items(blob: np.ndarray, off: np.ndarray, what: str) -> list[bytes]:
    """The byte strings of :func:`encode_items`' arrays.

    Raises
    ------
    codelex.IndexFormatError
        When the offsets do not describe the blob (``what`` names the file kind).
    """
    raw = blob.tobytes()
    b = off.tolist()
    if len(b) < 1 or b[0] != 0 or b[-1] != len(raw) or any(b[i] > b[i + 1] for i in range(len(b) - 1)):
        raise IndexFormatError(f"corrupt {what}: offsets do not describe the data")
    return [raw[b[i]:b[i + 1]] for i in range(len(b) - 1)]
