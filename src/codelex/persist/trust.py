"""Whose file is this? A per-user secret key, and the MAC that tells this user's index files from anyone else's.

Every file codelex writes into an index directory (the containers and the
docs cache) carries an HMAC-SHA256, under this key, of its header; the
header holds the digest of every array (and of the word index's chunk
digests), so the MAC vouches for the whole file as far as those digests do.
A file whose MAC does not verify was not written by this user's codelex:
committed to a repository (a clone makes it the user's own file), copied
from another machine or account, or written before the key existed.  Such
a file is never trusted: the caches are rebuilt, the word index is rebuilt
by a project and validated in full by :meth:`codelex.WordIndex.load`.

The key is 32 random bytes in the per-user cache directory (next to
``projects/``; :func:`key_file`), created once (a complete temporary file
linked into place, so no reader ever sees part of it) owner-only, and read
once per process.  When it cannot be created or read (an unwritable home,
a key file that is a link, someone else's or open to others), nothing is
trusted: every index is rebuilt or validated, never believed.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import logging
import os
import stat
import threading
from pathlib import Path

from codelex.persist.layout import make_private_dir, user_cache_dir

__all__ = ["KEY_BYTES", "MAC_HEX", "key_file", "key_problem", "mac", "mac_matches", "user_key"]

log = logging.getLogger("codelex")

KEY_BYTES = 32
#: Hex digits of a MAC (HMAC-SHA256).
MAC_HEX = 64
_KEY_NAME = "key"

_lock = threading.Lock()
_loaded = False
_key: bytes | None = None
_problem: str | None = None
_path: Path | None = None


def key_file() -> Path:
    """Where this process's key lives: ``key`` in the per-user cache directory (the parent of ``projects/``);
    once read, the file it was read from (whatever the environment says since)."""
    return _path if _path is not None else user_cache_dir().parent / _KEY_NAME


def user_key() -> bytes | None:
    """This user's key (created on first use), or None when there is none to be had (:func:`key_problem` says why)."""
    global _loaded, _key, _problem, _path
    if _loaded:
        return _key
    with _lock:
        if not _loaded:
            try:
                _path = key_file()
                _key, _problem = _load_or_create(_path), None
            except Exception as exc:  # (platformdirs, the file system: whatever fails, nothing is trusted)
                _key, _problem = None, f"{type(exc).__name__}: {exc}"
                log.warning("codelex: no user key (%s): no saved index is trusted, every one is rebuilt", _problem)
            _loaded = True
    return _key


def key_problem() -> str | None:
    """Why :func:`user_key` is None (None when there is a key, or none was looked for yet)."""
    return _problem


def mac(message: bytes) -> str | None:
    """The HMAC-SHA256 of ``message`` under this user's key, as hex; None without a key."""
    key = user_key()
    return None if key is None else hmac.new(key, message, hashlib.sha256).hexdigest()


def mac_matches(message: bytes, mac_hex: bytes | str) -> bool:
    """Whether ``mac_hex`` is this user's MAC of ``message`` (False without a key; constant time)."""
    expected = mac(message)
    if expected is None:
        return False
    if isinstance(mac_hex, str):
        try:
            mac_hex = mac_hex.encode("ascii")
        except UnicodeEncodeError:
            return False
    return hmac.compare_digest(expected.encode("ascii"), mac_hex)


def _reset() -> None:
    """Forget the key read (tests: the next use reads :func:`key_file` again)."""
    global _loaded, _key, _problem, _path
    with _lock:
        _loaded, _key, _problem, _path = False, None, None, None


# --- the key file -------------------------------------------------------------------


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _load_or_create(path: Path) -> bytes:
    make_private_dir(path.parent)  # 0700, ours: refused when it is a link, another's or open to others
    for _ in range(3):
        try:
            return _read_key(path)
        except FileNotFoundError:
            _create_key(path)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PermissionError(errno.EPERM, "the key is not a regular file", str(path))
        if hasattr(os, "geteuid"):
            if st.st_uid != os.geteuid():
                raise PermissionError(errno.EPERM, f"the key is owned by another user (uid {st.st_uid})", str(path))
            if st.st_mode & 0o077:
                raise PermissionError(errno.EPERM, "the key is open to other users (remove it: a new one is made)",
                                      str(path))
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise ValueError(f"{path}: the key is {len(data)} bytes, not {KEY_BYTES} (remove it: a new one is made)")
    return data


def _create_key(path: Path) -> None:
    """Put a new key at ``path`` unless one is there: whole (linked into place) or not at all."""
    import secrets  # (with tempfile, loaded only to make a key: every later process only reads it)
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".key.", dir=path.parent)  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails when another process made one first: theirs stands
        except FileExistsError:
            return
        except OSError:  # no hard links here: an exclusive create (a reader may then see it half written once)
            _create_key_exclusive(path)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _create_key_exclusive(path: Path) -> None:
    import secrets

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0), 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(KEY_BYTES))
        f.flush()
        os.fsync(f.fileno())
