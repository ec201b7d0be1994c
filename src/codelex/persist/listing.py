"""The listing cache's on-disk format: what the last walk of a root saw (``listing.clx``).

A :class:`codelex.ingest.ListingRecord` as a container (see
:mod:`codelex.persist.container`): the candidate paths and the scanned
directories as UTF-8 blobs with offsets, their mtimes, the ``.gitignore``
signatures, and the counts in the header.  It is a cache: anything that does
not read back intact, or that this user did not write (no valid MAC: see
:mod:`codelex.persist.trust`), is reported as None and the tree is walked
again.  Version 2: the MAC.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from codelex.errors import IndexFormatError
from codelex.ingest import ListingRecord
from codelex.persist.container import decode_items, encode_items, read_container, write_container
from codelex.safefs import check_relatives

__all__ = ["LISTING_FILE", "load_listing", "save_listing"]

LISTING_FILE = "listing.clx"
FORMAT = "codelex-listing"
FORMAT_VERSION = 2
_ARRAYS = {
    "cand_blob": "|u1", "cand_off": "<u8",
    "dir_blob": "|u1", "dir_off": "<u8", "dir_mtime": "<i8",
    "ign_dir": "<u8", "ign_mtime": "<i8", "ign_size": "<i8",
}


def _encode(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    return encode_items([s.encode("utf-8", "surrogateescape") for s in strings])


def _decode(blob: np.ndarray, off: np.ndarray) -> list[str]:
    raw = blob.tobytes()
    if raw.isascii():  # (the usual case: one decode, byte offsets are character offsets)
        b = _offsets(off, len(raw))
        text = raw.decode("ascii")
        return [text[b[i]:b[i + 1]] for i in range(len(b) - 1)]
    return [r.decode("utf-8", "surrogateescape") for r in decode_items(blob, off, "listing")]


def _offsets(off: np.ndarray, size: int) -> list[int]:
    """The offsets as a list, when they describe ``size`` bytes (else :class:`IndexFormatError`)."""
    if off.shape[0] < 1 or int(off[0]) != 0 or int(off[-1]) != size or np.any(off[1:] < off[:-1]):
        raise IndexFormatError("corrupt listing: offsets do not describe the data")
    return off.tolist()


def save_listing(record: ListingRecord, directory: str | os.PathLike[str]) -> None:
    """Write ``record`` atomically into ``directory`` (an index directory).

    Raises
    ------
    OSError
        When it cannot be written.
    """
    dir_index = {rel: i for i, (rel, _) in enumerate(record.dirs)}
    cand_blob, cand_off = _encode(record.candidates)
    dir_blob, dir_off = _encode([rel for rel, _ in record.dirs])
    arrays = {
        "cand_blob": cand_blob, "cand_off": cand_off, "dir_blob": dir_blob, "dir_off": dir_off,
        "dir_mtime": np.array([m for _, m in record.dirs], dtype=np.int64),
        "ign_dir": np.array([dir_index[rel] for rel, _, _ in record.gitignores], dtype=np.uint64),
        "ign_mtime": np.array([m for _, m, _ in record.gitignores], dtype=np.int64),
        "ign_size": np.array([s for _, _, s in record.gitignores], dtype=np.int64),
    }
    meta = {"format": FORMAT, "key": record.key, "skipped": record.skipped, "pruned_dirs": record.pruned_dirs}
    write_container(Path(directory), LISTING_FILE, arrays, _ARRAYS, meta, FORMAT_VERSION)


def load_listing(directory: str | os.PathLike[str]) -> ListingRecord | None:
    """The record saved in ``directory``, or None when there is none or it does not read back intact."""
    file = Path(directory) / LISTING_FILE
    try:
        c = read_container(file, _ARRAYS, FORMAT, FORMAT_VERSION, mmap=False)
        a = c.arrays
        dirs = _decode(a["dir_blob"], a["dir_off"])
        mtimes = a["dir_mtime"].tolist()
        ign = a["ign_dir"].tolist()
        if len(mtimes) != len(dirs) or any(i >= len(dirs) for i in ign) \
                or not (len(ign) == a["ign_mtime"].shape[0] == a["ign_size"].shape[0]):
            return None
        skipped, pruned = c.header.get("skipped"), c.header.get("pruned_dirs")
        key = c.header.get("key")
        if not isinstance(key, str) or not isinstance(skipped, dict) or not isinstance(pruned, dict):
            return None
        candidates = _decode(a["cand_blob"], a["cand_off"])
        # Every path is untrusted input (another user may have written this file): one that leaves the
        # root or is not a clean relative path makes the whole record a forgery, and the tree is walked.
        check_relatives(candidates)
        check_relatives([rel for rel in dirs if rel])
        return ListingRecord(
            key=key, dirs=list(zip(dirs, mtimes)),
            gitignores=[(dirs[i], m, s) for i, m, s in zip(ign, a["ign_mtime"].tolist(), a["ign_size"].tolist())],
            candidates=candidates,
            skipped={str(k): int(v) for k, v in skipped.items()}, pruned_dirs={str(k): int(v) for k, v in pruned.items()},
        )
    except (OSError, IndexFormatError, ValueError, TypeError):
        return None
