"""The word index's on-disk format (version 8), over the container of :mod:`codelex.persist.container`.

An index directory holds one file, ``index.clx`` (:data:`codelex.defaults.INDEX_FILE`).
Its arrays are the posting segment (term offsets, documents in frame-of-reference blocks, one-byte tfs
with overflow pairs, line checkpoints, line data, lengths), the sorted term
dictionary (in byte order, front-coded in blocks of 16 terms with one offset
per block: a load searches it in place; a head every 64 terms and a blocked
Bloom filter over the terms speed lookups up; the header's ``terms`` says
how many it holds) and the file table (paths, ``mtime_ns``, sizes, prior
flags, language ids).  Offset arrays (term offsets, line checkpoints, term
block offsets) are packed: a 64-bit base every 64 entries and remainders
(``*_base``, small, and ``*_rel``: 32-bit for the term blocks, frame-of-reference
blocks of 128 for the others).  The header adds the Unicode version of the tokenizer tables,
a fingerprint of the path rules (so that stale prior flags are recomputed,
never trusted), the size cap and free-form metadata.

Opening maps the file and builds nothing.  The large arrays
(:data:`LAZY_ARRAYS`) are not hashed at open: each carries native digests of
its 64 KiB chunks (``<name>_digests``, themselves checked at open with the
small arrays), and the native core verifies a chunk the first time a reader
touches it, so a flipped byte is caught before it can change a result or
steer a read (a verified chunk holds what a save wrote, and saves write
validated structures only).  That holds for a file this user wrote only:
the digests are unkeyed, and anyone who can write a file can make them
match.  So lazy checking is for *trusted* files (the header's MAC is this
user's: :mod:`codelex.persist.container`); a file this user did not write
(committed to a repository, copied, forged) is refused, or, when the
caller allows it, loaded without digests, which makes the structure be
validated in full when it is installed, as ``verify=False`` does for any
file.  :func:`verify_lexical` (``codelex index --verify``) checks
everything now, and reports an untrusted file.

The word index crosses this module only as a :class:`LexicalSnapshot` (its
export/restore seam): this module never sees a :class:`codelex.WordIndex`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codelex._native import CHECK_CHUNK as CHUNK
from codelex._native import UNICODE_VERSION, chunk_digests
from codelex._native.lexical import LINE_CHECKPOINT
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
    "LAZY_ARRAYS",
    "LexicalSnapshot",
    "index_file",
    "load_lexical",
    "read_lexical_header",
    "save_lexical",
    "verify_lexical",
]

FORMAT = "codelex-index"
#: Version 3: the sorted term dictionary searched in place, one-byte tfs, line
#: checkpoints and lazily verified chunks; version 4: offset arrays packed (a
#: 64-bit base per 64 entries, 32-bit remainders) and a term filter; version 5:
#: the header carries this user's MAC (see :mod:`codelex.persist.trust`);
#: version 7 (issue 31; on the Linux tree the file went from 453 to about 310 MiB): the term dictionary
#: front-coded in blocks of 16 terms (``term_blocks``, ``term_block_offsets_*``, the header's ``terms``;
#: 128 -> 47 MiB) and the postings' documents in frame-of-reference blocks of 128 (``post_doc`` and its
#: ``post_doc_min``/``_width``/``_off``; 106 -> 44 MiB); version 8: the posting offsets' and line checkpoints'
#: remainders in such blocks too (``term_ptr_rel``, ``line_ckpt_rel`` and their three; 28.8 -> 8.7 MiB).
#: version 9 (issue 42): a posting's line deltas as varints of 4-bit units, the line checkpoints as nibble
#: positions (``line_data`` on the Linux tree 155 -> 121 MiB; ``csrc/lexical/line_lists.hpp``).
#: Older indexes are refused at the prefix (their version) and rebuilt.
FORMAT_VERSION = 9

#: The arrays verified chunk by chunk as they are read (snapshot name -> file name).
#: Frame-of-reference blocks: each one's bits and its blocks' minimum, width and start.
_BLOCKED = ("term_ptr_rel", "post_doc", "line_ckpt_rel")
LAZY_ARRAYS = {**{name + suffix: name + suffix for name in _BLOCKED for suffix in ("", "_min", "_width", "_off")},
               "post_tf": "post_tf", "line_data": "line_data", "vocab_blocks": "term_blocks",
               "vocab_block_rel": "term_block_offsets_rel", "term_filter": "term_filter"}
#: The bases of the packed offset arrays (small: checked when the file is opened).
_BASE_ARRAYS = {"term_ptr_base": "term_ptr_base", "line_ckpt_base": "line_ckpt_base",
                "vocab_block_base": "term_block_offsets_base"}

# name -> dtype, in file order.
_ARRAYS: dict[str, str] = {
    "term_ptr_base": "<u8",
    "term_ptr_rel": "|u1",
    "term_ptr_rel_min": "<u4",
    "term_ptr_rel_width": "|u1",
    "term_ptr_rel_off": "<u4",
    "post_doc": "|u1",
    "post_doc_min": "<u4",
    "post_doc_width": "|u1",
    "post_doc_off": "<u4",
    "post_tf": "|u1",
    "tf_big_pos": "<u8",
    "tf_big_val": "<u4",
    "line_ckpt_base": "<u8",
    "line_ckpt_rel": "|u1",
    "line_ckpt_rel_min": "<u4",
    "line_ckpt_rel_width": "|u1",
    "line_ckpt_rel_off": "<u4",
    "line_data": "|u1",
    "doc_len": "<u4",
    "field_len": "|u1",
    "field_len_big_pos": "<u8",
    "field_len_big_val": "<u8",
    "term_blocks": "|u1",
    "term_block_offsets_base": "<u8",
    "term_block_offsets_rel": "<u4",
    "term_heads": "<u8",
    "term_filter": "<u8",
    "path_blob": "|u1",
    "path_offsets": "<u8",
    "mtime_ns": "<i8",
    "size": "<u8",
    "prior_flags": "|u1",
    "kind_id": "<i2",
}
for _name in LAZY_ARRAYS.values():
    _ARRAYS[_name + "_digests"] = "<u8"
_SMALL_MAX = 255


@dataclass
class LexicalSnapshot:
    """A merged word index as plain arrays: what is saved and what a load gives back.

    The offset arrays are packed (:func:`codelex._native.text.pack_offsets`:
    a uint64 ``*_base`` per 64 entries and uint32 remainders, which
    ``term_ptr_rel`` and ``line_ckpt_rel`` hold in frame-of-reference blocks
    with their ``_min``/``_width``/``_off``, as ``post_doc`` its documents).
    ``term_ptr_*`` (terms + 1 posting offsets), the postings' documents
    in frame-of-reference blocks of 128 (``post_doc``: the packed bits,
    uint8; ``post_doc_min``, ``post_doc_width`` and ``post_doc_off``: each
    block's minimum, bit width and start in 16-byte units),
    ``post_tf`` (uint8, 255 = see ``tf_big_pos``/``tf_big_val``),
    ``line_ckpt_*`` (line checkpoints), ``line_data`` (uint8) and
    ``doc_len`` (uint32) form the posting segment, ``field_len`` (uint32,
    three per document: dir, name, defs) the extra fields' lengths;
    ``vocab_blocks``/``vocab_block_*`` the term dictionary, sorted and
    front-coded (:func:`codelex._native.text.front_code`; ``vocab_terms``
    terms), and ``term_heads`` and ``term_filter`` its lookup heads and Bloom
    filter (:func:`codelex._native.text.term_heads`); ``path_blob``/``path_offsets``, ``mtime_ns``,
    ``size``, ``prior_flags`` and ``kind_id`` the file table.  ``rules``
    fingerprints the path rules that produced ``prior_flags`` and
    ``kind_id``.  ``digests`` (a load's) holds the chunk digests of the
    :data:`LAZY_ARRAYS`; without them (a snapshot made in this process, a
    load with ``verify=False``, or of a file this user did not write) the
    structure is validated in full when the snapshot is installed.
    ``trusted`` (a load's) says whether the file's MAC was this user's:
    only then are there digests.
    """

    term_ptr_base: np.ndarray
    term_ptr_rel: np.ndarray
    term_ptr_rel_min: np.ndarray
    term_ptr_rel_width: np.ndarray
    term_ptr_rel_off: np.ndarray
    post_doc: np.ndarray
    post_doc_min: np.ndarray
    post_doc_width: np.ndarray
    post_doc_off: np.ndarray
    post_tf: np.ndarray
    tf_big_pos: np.ndarray
    tf_big_val: np.ndarray
    line_ckpt_base: np.ndarray
    line_ckpt_rel: np.ndarray
    line_ckpt_rel_min: np.ndarray
    line_ckpt_rel_width: np.ndarray
    line_ckpt_rel_off: np.ndarray
    line_data: np.ndarray
    doc_len: np.ndarray
    field_len: np.ndarray
    vocab_blocks: np.ndarray
    vocab_block_base: np.ndarray
    vocab_block_rel: np.ndarray
    vocab_terms: int
    term_heads: np.ndarray
    term_filter: np.ndarray
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
    digests: dict | None = None
    container: Container | None = None  # set by a load: owns the mapped arrays
    trusted: bool = True  # False for a load of a file this user did not write

    @property
    def n_docs(self) -> int:
        return int(self.doc_len.shape[0])

    def release_pages(self) -> None:
        """After the arrays are installed: drop the pages the load's checks touched."""
        if self.container is not None:
            self.container.release_pages()


def decode_paths(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    """The paths stored as ``blob[offsets[i]:offsets[i + 1]]`` (UTF-8, surrogates passed)."""
    raw = blob.tobytes()
    bounds = offsets.tolist()
    n = len(bounds) - 1
    try:
        if raw.isascii():
            text = raw.decode("ascii")
            return [text[bounds[i]:bounds[i + 1]] for i in range(n)]
        return [raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogatepass") for i in range(n)]
    except UnicodeDecodeError:
        raise IndexFormatError("corrupt index: a path is not valid UTF-8") from None


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
    arrays: dict[str, np.ndarray] = {
        "tf_big_pos": snapshot.tf_big_pos,
        "tf_big_val": snapshot.tf_big_val,
        "term_heads": snapshot.term_heads,
        "doc_len": snapshot.doc_len,
        "path_blob": snapshot.path_blob,
        "path_offsets": snapshot.path_offsets,
        "mtime_ns": snapshot.mtime_ns,
        "size": snapshot.size,
        "prior_flags": snapshot.prior_flags,
        "kind_id": snapshot.kind_id,
    }
    for attr, name in _BASE_ARRAYS.items():
        arrays[name] = getattr(snapshot, attr)
    for attr, name in LAZY_ARRAYS.items():
        arr = np.ascontiguousarray(getattr(snapshot, attr), dtype=np.dtype(_ARRAYS[name]).newbyteorder("="))
        arrays[name] = arr
        arrays[name + "_digests"] = chunk_digests(arr)
    arrays["field_len"], arrays["field_len_big_pos"], arrays["field_len_big_val"] = _pack(snapshot.field_len)
    meta = {
        "format": FORMAT,
        "unicode_version": UNICODE_VERSION,
        "rules": snapshot.rules,
        "max_bytes": snapshot.max_bytes,
        "files": snapshot.n_docs,
        "line_checkpoint": LINE_CHECKPOINT,
        "terms": int(snapshot.vocab_terms),
        "created_unix": time.time(),
        "metadata": snapshot.metadata,
    }
    return write_container(directory, INDEX_FILE, arrays, _ARRAYS, meta, FORMAT_VERSION)


# --- load ---------------------------------------------------------------------------


def _check_header(header: dict) -> None:
    # (Values from the file reach a message as repr only: messages are printed and logged.)
    _check_unicode(header)
    if header.get("line_checkpoint") != LINE_CHECKPOINT:
        raise IndexFormatError(f"index has line checkpoints every {header.get('line_checkpoint')!r} postings; "
                               f"this codelex reads every {LINE_CHECKPOINT}: rebuild it")


def _check_unicode(header: dict) -> None:
    if header.get("unicode_version") != UNICODE_VERSION:
        raise IndexFormatError(
            f"index was built with Unicode {header.get('unicode_version')!r} tables; this interpreter has "
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
    """The verified JSON header of a saved index this user wrote, without loading its arrays.

    Raises
    ------
    codelex.IndexFormatError
        As :func:`load_lexical` does for the prefix and header
        (:class:`~codelex.persist.container.UntrustedIndexError` for a file
        this user did not write).
    """
    return _opened(path, lambda f: read_container_header(f, FORMAT, FORMAT_VERSION, _check_header))


def load_lexical(path: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True,
                 allow_untrusted: bool = False) -> LexicalSnapshot:
    """Open a saved index: a snapshot ready to be installed, with nothing decoded or scanned.

    With ``verify`` the small arrays' checksums are checked now and the large
    ones' chunk by chunk as they are read; without, no checksum is checked and
    the structure is validated in full when the snapshot is installed.

    A file this user did not write (its header's MAC is not this user's) is
    refused, unless ``allow_untrusted``: its snapshot (``trusted`` False)
    then carries no digests, whatever ``verify`` says, so that the whole
    structure is validated when it is installed (its digests prove nothing:
    whoever wrote the file computed them).

    Raises
    ------
    codelex.IndexFormatError
        With a one-line reason, for anything that is not an intact index of
        this format version (:class:`~codelex.persist.container.UntrustedIndexError`
        for a file this user did not write, unless ``allow_untrusted``).
    """
    c = _opened(path, lambda f: read_container(f, _ARRAYS, FORMAT, FORMAT_VERSION, mmap=mmap, verify=verify,
                                               checks=_check_header, lazy=frozenset(LAZY_ARRAYS.values()),
                                               allow_untrusted=allow_untrusted))
    # Checksums vouch for what a save wrote only in a file this user wrote: any other is validated in full.
    lazy = verify and c.trusted
    header, arrays = c.header, c.arrays
    field_len = _unpack("field_len", arrays["field_len"], arrays["field_len_big_pos"], arrays["field_len_big_val"],
                        np.uint32)
    n = arrays["doc_len"].shape[0]
    if field_len.shape[0] != 3 * n:
        raise IndexFormatError("corrupt index: field lengths and documents disagree in length")
    offsets = arrays["path_offsets"]
    blob = arrays["path_blob"]
    if offsets.shape[0] != n + 1 or offsets[0] != 0 or offsets[-1] != blob.shape[0] \
            or (not lazy and np.any(np.diff(offsets.astype(np.int64)) < 0)):
        raise IndexFormatError("corrupt index: path offsets do not describe the path data")
    if not lazy:
        paths = decode_paths(blob, offsets)
        if len(set(paths)) != n:
            raise IndexFormatError("corrupt index: a path occurs twice")
    max_bytes = header.get("max_bytes")
    if max_bytes is not None and (not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0):
        raise IndexFormatError("corrupt index: max_bytes is not a size")
    if arrays["prior_flags"].shape[0] != n or arrays["kind_id"].shape[0] != n:
        raise IndexFormatError("corrupt index: file table and documents disagree in length")
    n_terms = header.get("terms")
    if not isinstance(n_terms, int) or isinstance(n_terms, bool) or n_terms < 0:
        raise IndexFormatError("corrupt index: the number of terms is not a count")
    digests = None
    if lazy:
        digests = {}
        for attr, name in LAZY_ARRAYS.items():
            d = arrays[name + "_digests"]
            if d.shape[0] != -(-arrays[name].nbytes // CHUNK):
                raise IndexFormatError(f"corrupt index: the digests of {name!r} do not cover it")
            digests[attr] = d
    metadata = header.get("metadata", {})
    created = header.get("created_unix")
    rules = header.get("rules")
    return LexicalSnapshot(
        **{attr: arrays[name] for attr, name in _BASE_ARRAYS.items()},
        **{attr: arrays[name] for attr, name in LAZY_ARRAYS.items()},
        tf_big_pos=arrays["tf_big_pos"], tf_big_val=arrays["tf_big_val"],
        doc_len=arrays["doc_len"], field_len=field_len, vocab_terms=n_terms, term_heads=arrays["term_heads"],
        path_blob=blob, path_offsets=offsets,
        mtime_ns=arrays["mtime_ns"], size=arrays["size"], prior_flags=arrays["prior_flags"],
        kind_id=arrays["kind_id"], rules=rules if isinstance(rules, str) else "", max_bytes=max_bytes,
        metadata=dict(metadata) if isinstance(metadata, dict) else {},
        saved_at=created if isinstance(created, (int, float)) and not isinstance(created, bool) else None,
        digests=digests, container=c, trusted=c.trusted,
    )


def verify_lexical(path: str | os.PathLike[str]) -> dict:
    """Check a saved index completely now: this user's MAC, every array's checksum, the padding and the
    chunk digests.

    Returns ``{"file", "bytes", "arrays"}``.

    Raises
    ------
    codelex.IndexFormatError
        For the first mismatch (:class:`~codelex.persist.container.UntrustedIndexError`
        for a file this user did not write: its checksums would match whatever it holds).
    """
    snap = load_lexical(path, verify=True)
    c = snap.container
    c.verify_all()
    for attr, name in LAZY_ARRAYS.items():
        if not np.array_equal(chunk_digests(getattr(snap, attr)), snap.digests[attr]):
            raise IndexFormatError(f"corrupt index: chunk digests of {name!r} do not match its data")
    c.release_pages()
    return {"file": str(c.file), "bytes": len(c.buffer), "arrays": len(c.header.get("arrays", []))}


def saved_files(directory: Path) -> list[Path]:
    """The saved files of an index directory to verify: the word index first, then every other ``.clx``
    (empty when no word index is saved there)."""
    main = Path(directory) / INDEX_FILE
    if not main.is_file():
        return []
    return [main] + sorted(p for p in Path(directory).rglob("*.clx") if p != main)


def verify_saved_file(directory: Path, file: Path) -> None:
    """Verify every checksum of one of :func:`saved_files`, now, and that this user wrote it.

    Raises
    ------
    codelex.IndexFormatError
        When it fails a check.
    """
    from codelex.persist.container import verify_container_file

    if Path(file) == Path(directory) / INDEX_FILE:
        verify_lexical(directory)
    else:
        verify_container_file(file)
