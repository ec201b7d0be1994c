"""Where a cluster's shards live: an fsspec URL (a local directory, NFS, ``s3://`` through s3fs).

Layout under the store's URL::

    manifest.json                       what a server loads: every unit's record, one generation
    units/<name>.json                   a unit's last record, written after its shard
    shards/<name>-<hash>/index.clx      a unit's index, one directory per content hash (never rewritten)

A shard is written before the record that names it, and the manifest after
the records, so a reader that follows the manifest never meets a torn or
missing shard: on a local or NFS directory each file goes to a temporary name
and is renamed (codelex's own atomic save: fsync, rename, directory fsync,
owner-only modes); on an object store a put is whole, and the manifest, a
small object written last, is what makes a version visible.

Everything read back from a store is untrusted input (another machine, or
anyone who can write there, wrote it): records are size-capped and checked
field by field, a shard's location is derived from its unit's name and hash
(never taken from the record), and a shard file is loaded with
:meth:`codelex.WordIndex.load`'s full validation of a file this user's key
did not sign.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from codelex.defaults import INDEX_FILE
from codelex.errors import IndexFormatError

__all__ = ["MANIFEST", "STORE_FORMAT", "STORE_VERSION", "ShardStore", "UnitRecord", "check_unit_name"]

STORE_FORMAT = "codelex-cluster"
STORE_VERSION = 1
MANIFEST = "manifest.json"
#: A record or manifest larger than this is refused (a manifest holds ~300 bytes per unit).
MAX_RECORD_BYTES = 1 << 20
MAX_MANIFEST_BYTES = 256 << 20
#: fsspec protocols whose files only the writing process sees: refused as a cluster's store.
PROCESS_LOCAL_PROTOCOLS = ("memory",)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_HASH = re.compile(r"[0-9a-f]{32,64}")


def check_unit_name(name: str) -> str:
    """``name`` when it can name a unit (letters, digits, ``.``, ``_``, ``-``; not starting with a dot),
    else ValueError: it becomes a file name in the store and the qualifier of the unit's paths."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"not a unit name (letters, digits, '.', '_' and '-', up to 128): {name!r}")
    return name


@dataclass(frozen=True)
class UnitRecord:
    """What the store knows of one unit's last successful build.

    Attributes
    ----------
    name : str
        The unit's name (the qualifier of its paths).
    source : str
        Where it was built from (a path or a git URL on shared storage).
    content_hash : str
        Hash of the unit's admitted files (paths and contents) and of everything that shapes its index
        (settings, index format, path rules): equal hashes mean an equal shard.
    stat_digest : str
        Hash of the walk's ``(path, size, mtime_ns)``: equal digests spare reading the files.
    files : int
        Files indexed.
    shard_bytes : int
        Size of the shard file.
    shard_digest : str
        blake2b of the shard file, checked when a server fetches a copy.
    built_at : float
        When it was built (seconds since the epoch).
    seconds : float
        How long its build took.
    """

    name: str
    source: str
    content_hash: str
    stat_digest: str
    files: int
    shard_bytes: int
    shard_digest: str
    built_at: float
    seconds: float

    @property
    def shard(self) -> str:
        """The shard's directory relative to the store: derived, never read from the store."""
        return f"shards/{self.name}-{self.content_hash[:32]}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> UnitRecord:
        """A record from untrusted JSON (IndexFormatError when any field is not what it must be)."""
        if not isinstance(data, dict):
            raise IndexFormatError("corrupt cluster record: not an object")
        try:
            record = cls(**{k: data[k] for k in cls.__dataclass_fields__})
        except KeyError as exc:
            raise IndexFormatError(f"corrupt cluster record: no {exc.args[0]!r}") from None
        ok = (isinstance(record.name, str) and _NAME.fullmatch(record.name)
              and isinstance(record.source, str) and len(record.source) < 4096
              and all(isinstance(h, str) and _HASH.fullmatch(h)
                      for h in (record.content_hash, record.stat_digest, record.shard_digest))
              and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                      for n in (record.files, record.shard_bytes))
              and all(isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0
                      for t in (record.built_at, record.seconds)))
        if not ok:
            raise IndexFormatError(f"corrupt cluster record: {str(data)[:120]!r}")
        return record


def file_digest(path: str | os.PathLike[str]) -> str:
    """blake2b (128 bits) of a local file's bytes."""
    with open(path, "rb") as f:
        return _digest(f.fileno())


def _digest(fd: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


def check_pinned(fd: int, record: UnitRecord, where: str) -> None:
    """IndexFormatError unless the file behind ``fd`` has ``record``'s size and content digest."""
    size = os.fstat(fd).st_size
    if size == record.shard_bytes and _digest(fd) == record.shard_digest:
        return
    raise IndexFormatError(f"{where}/{record.shard}: does not match its record's digest "
                           f"({size:,} bytes, the record says {record.shard_bytes:,})")


class ShardStore:
    """A store of shards at an fsspec URL (see the module's documentation for the layout).

    Parameters
    ----------
    url : str
        A local directory, ``file://``, NFS mount, ``s3://bucket/prefix`` (with s3fs installed) or any
        fsspec URL; storage options come from fsspec's configuration and the environment.
    """

    def __init__(self, url: str) -> None:
        try:
            from fsspec.core import url_to_fs
        except ImportError as exc:  # pragma: no cover - the ray extra brings it
            raise ImportError(f"a shard store needs fsspec: pip install 'codelex[ray]' ({exc})") from None
        url = str(url)
        if "://" not in url and not url.startswith("file:"):
            # (a relative directory names a place by this process's working directory: workers and actors
            # have another, so every URL that leaves this process is absolute)
            url = os.path.abspath(url)
        self.url = url
        self.fs, self.path = url_to_fs(self.url)
        self.path = self.path.rstrip("/") or "/"
        protocol = self.fs.protocol
        self.protocols = tuple(protocol) if isinstance(protocol, (tuple, list)) else (protocol,)
        self.local = "file" in self.protocols

    def require_shared(self) -> None:
        """ClusterError unless other processes can read this store (a cluster's workers and actors are other
        processes: a ``memory://`` store lives and dies in the one that wrote it)."""
        if any(p in PROCESS_LOCAL_PROTOCOLS for p in self.protocols):
            from codelex.errors import ClusterError

            raise ClusterError(f"store {self.url!r} lives in one process's memory, which the cluster's workers "
                               "and actors cannot read: use a directory on shared storage or an object store")

    def __repr__(self) -> str:
        return f"<ShardStore {self.url}>"

    def _at(self, rel: str) -> str:
        return f"{self.path}/{rel}"

    def local_path(self, rel: str) -> Path | None:
        """The local file system path of ``rel`` in a local (or NFS-mounted) store, else None."""
        return Path(self._at(rel)) if self.local else None

    # --- writing ------------------------------------------------------------------------------------

    def _put_bytes(self, rel: str, data: bytes) -> None:
        """Write ``data`` to ``rel`` whole: atomically renamed locally, one put on an object store."""
        if self.local:
            from codelex.persist.container import atomic_file

            target = Path(self._at(rel))
            with atomic_file(target.parent, target.name) as f:
                f.write(data)
            return
        tmp = self._at(f"{rel}.{uuid.uuid4().hex}.tmp")
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, self._at(rel))

    def put_shard(self, record: UnitRecord, index) -> UnitRecord:
        """Save ``index`` as ``record``'s shard (atomically), then return the record with the shard's size and digest.

        The unit's record is not written: call :meth:`put_record` once the shard is in place.
        """
        from dataclasses import replace

        if self.local:  # codelex's own atomic save, owner-only, straight into the store
            directory = Path(self._at(record.shard))
            index.save(directory)
            file = directory / INDEX_FILE
            return replace(record, shard_bytes=file.stat().st_size, shard_digest=file_digest(file))
        scratch = tempfile.mkdtemp(prefix="codelex-shard-")  # (mkdtemp: 0700)
        try:
            index.save(scratch)
            file = Path(scratch) / INDEX_FILE
            done = replace(record, shard_bytes=file.stat().st_size, shard_digest=file_digest(file))
            tmp = self._at(f"{record.shard}/{INDEX_FILE}.{uuid.uuid4().hex}.tmp")
            self.fs.put_file(str(file), tmp)
            self.fs.mv(tmp, self._at(f"{record.shard}/{INDEX_FILE}"))
            return done
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def put_record(self, record: UnitRecord) -> None:
        """Write a unit's record (after its shard)."""
        self._put_bytes(f"units/{record.name}.json", json.dumps(record.to_dict(), sort_keys=True).encode())

    def put_manifest(self, records: dict[str, UnitRecord]) -> int:
        """Write the manifest naming ``records`` (the version servers load); returns its generation."""
        try:
            generation = self.manifest_generation() + 1
        except IndexFormatError:
            generation = 1
        body = {"format": STORE_FORMAT, "version": STORE_VERSION, "generation": generation,
                "written_at": time.time(), "units": {n: r.to_dict() for n, r in sorted(records.items())}}
        self._put_bytes(MANIFEST, json.dumps(body, sort_keys=True).encode())
        return generation

    # --- reading ------------------------------------------------------------------------------------

    def _get_json(self, rel: str, cap: int) -> object | None:
        """The JSON at ``rel`` (None when absent); IndexFormatError when too large or not JSON."""
        where = self._at(rel)
        try:
            if self.local:
                from codelex.persist.container import open_regular

                f = open_regular(Path(where))  # never through a link, never blocking on a FIFO
            else:
                f = self.fs.open(where, "rb")
        except FileNotFoundError:
            return None
        with f:
            data = f.read(cap + 1)
        if len(data) > cap:
            raise IndexFormatError(f"{where}: larger than {cap:,} bytes")
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise IndexFormatError(f"{where}: not JSON") from None

    def record(self, name: str) -> UnitRecord | None:
        """A unit's last record, or None (none, or one that does not read back: the unit is rebuilt)."""
        try:
            data = self._get_json(f"units/{check_unit_name(name)}.json", MAX_RECORD_BYTES)
            record = UnitRecord.from_dict(data) if data is not None else None
        except (IndexFormatError, OSError):
            return None
        return record if record is not None and record.name == name else None

    def _manifest(self) -> dict:
        data = self._get_json(MANIFEST, MAX_MANIFEST_BYTES)
        if data is None:
            raise IndexFormatError(f"{self.url}: no {MANIFEST} (run `codelex cluster index` first)")
        if not isinstance(data, dict) or data.get("format") != STORE_FORMAT:
            raise IndexFormatError(f"{self.url}/{MANIFEST}: not a codelex cluster manifest")
        if data.get("version") != STORE_VERSION:
            raise IndexFormatError(f"{self.url}/{MANIFEST}: version {data.get('version')!r}, "
                                   f"this codelex reads {STORE_VERSION}")
        if not isinstance(data.get("units"), dict) or not isinstance(data.get("generation"), int):
            raise IndexFormatError(f"{self.url}/{MANIFEST}: corrupt")
        return data

    def manifest_generation(self) -> int:
        """The manifest's generation (0 when there is none)."""
        try:
            return int(self._manifest()["generation"])
        except IndexFormatError:
            if not self.exists(MANIFEST):
                return 0
            raise

    def manifest(self) -> dict[str, UnitRecord]:
        """The units the manifest names, by name (IndexFormatError when there is none or it is malformed)."""
        return self.manifest_version()[1]

    def manifest_version(self) -> tuple[int, dict[str, UnitRecord]]:
        """The manifest's generation and units, from one read of it (IndexFormatError as :meth:`manifest`)."""
        data = self._manifest()
        return int(data["generation"]), self._records(data)

    def _records(self, manifest: dict) -> dict[str, UnitRecord]:
        out = {}
        for name, data in manifest["units"].items():
            record = UnitRecord.from_dict(data)
            if record.name != name:
                raise IndexFormatError(f"{self.url}/{MANIFEST}: unit {name!r} holds {record.name!r}")
            out[name] = record
        return out

    def exists(self, rel: str) -> bool:
        return bool(self.fs.exists(self._at(rel)))

    def has_shard(self, record: UnitRecord) -> bool:
        """Whether ``record``'s shard file is in the store (with the size the record says)."""
        try:
            return int(self.fs.size(self._at(f"{record.shard}/{INDEX_FILE}"))) == record.shard_bytes
        except (OSError, ValueError, TypeError):
            return False

    def open_shard(self, record: UnitRecord, cache_dir: str | os.PathLike[str] | None = None):
        """The unit's index, memory-mapped (:meth:`open_shard_file`'s index)."""
        index, _path, pinned = self.open_shard_file(record, cache_dir)
        pinned.close()
        return index

    def open_shard_file(self, record: UnitRecord, cache_dir: str | os.PathLike[str] | None = None):
        """The unit's index, memory-mapped, the local file it maps and that file, open:
        ``(WordIndex, Path, file)`` (the caller closes ``file``; it names the bytes mapped even after the path
        is replaced or deleted, so that they can be checked again later).

        A shard in a local store that this user owns is mapped in place; any other (an object store, a
        file another user wrote on NFS) is first copied into ``cache_dir`` (a private directory: the
        per-user cache by default).  Either way the file is checked against the record's size and
        content digest before it is mapped, and a file this user's key did not sign is validated in full
        before it answers.

        Raises
        ------
        codelex.IndexFormatError
            When the shard is missing, does not match its record, or is not an intact index.
        """
        from codelex.persist.container import UntrustedIndexError

        rel = f"{record.shard}/{INDEX_FILE}"
        if self.local:
            try:
                return self._open_pinned(Path(self._at(rel)), record)
            except UntrustedIndexError:
                pass  # another user's file (shared NFS): copied into a private cache below
        copy = self.fetch(record, cache_dir)
        try:
            return self._open_pinned(copy, record)
        except IndexFormatError:  # a private copy a disk corrupted after its fetch: fetched anew
            copy.unlink(missing_ok=True)
            return self._open_pinned(self.fetch(record, cache_dir), record)

    def _open_pinned(self, path: Path, record: UnitRecord):
        from codelex.lexical import WordIndex
        from codelex.persist.container import open_regular

        try:
            pinned = open_regular(path)  # (no link followed, no FIFO waited on, this user's regular file)
        except FileNotFoundError:
            raise IndexFormatError(f"{self.url}/{record.shard}: missing") from None
        try:
            check_pinned(pinned.fileno(), record, self.url)
            index = WordIndex.load(path, trusted_only=False)
            if os.stat(path).st_ino != os.fstat(pinned.fileno()).st_ino:  # (replaced between check and map)
                raise IndexFormatError(f"{self.url}/{record.shard}: replaced while it loaded")
            return index, path, pinned
        except BaseException:
            pinned.close()
            raise

    def fetch(self, record: UnitRecord, cache_dir: str | os.PathLike[str] | None = None) -> Path:
        """A private local copy of ``record``'s shard file, checked against its digest; returns its path."""
        from codelex.persist.layout import make_private_dir, user_cache_dir

        base = Path(cache_dir) if cache_dir is not None else user_cache_dir() / "cluster"
        directory = base / f"{record.name}-{record.shard_digest}"
        file = directory / INDEX_FILE
        if file.is_file():
            return file  # (a private copy, checked against the digest again where it is opened)
        make_private_dir(directory)
        tmp = directory / f".{INDEX_FILE}.{uuid.uuid4().hex}.tmp"
        try:
            self.fs.get_file(self._at(f"{record.shard}/{INDEX_FILE}"), str(tmp))
            os.chmod(tmp, 0o600)
            if tmp.stat().st_size != record.shard_bytes or file_digest(tmp) != record.shard_digest:
                raise IndexFormatError(f"{self.url}/{record.shard}: does not match its record's digest")
            os.replace(tmp, file)
        except FileNotFoundError:
            raise IndexFormatError(f"{self.url}/{record.shard}: missing") from None
        finally:
            tmp.unlink(missing_ok=True)
        return file
