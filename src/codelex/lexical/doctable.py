"""The per-slot document table: paths and the attributes filters and priors need.

Append-only between merges: a slot keeps its path (removal leaves a hole),
so anything computed over a prefix of the slots (masks, multipliers) stays
valid and is only extended; a merge builds a new, compacted table.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from codelex.errors import IndexFormatError
from codelex.kinds import KINDS, extname, kind_of
from codelex.lexical.priors import DOC_FILE_RE, TEST_VENDOR_RE, prior_flags

#: Language ids as stored per slot: the kinds in sorted order, then "none".
KIND_IDS = {kind: i for i, kind in enumerate(sorted(KINDS))}
NO_KIND = len(KIND_IDS)
#: Cached masks per table, least recently used evicted first.
MAX_CACHED_MASKS = 256


def kind_id(path: str) -> int:
    """The stored language id of ``path``."""
    return KIND_IDS.get(kind_of(path) or "", NO_KIND)


def rules_fingerprint() -> str:
    """Changes whenever the stored prior flags or language ids would (saved with an index)."""
    text = "\n".join([TEST_VENDOR_RE.pattern, DOC_FILE_RE.pattern, *sorted(KIND_IDS)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class PathTable:
    """The slots' paths: a saved table's decoded on demand (one by one, or all at the first slice), new ones appended.

    A loaded index thus opens without decoding its file table; a search
    decodes only the paths of its hits, and an edit none (new paths are
    appended after the saved ones, still undecoded).
    """

    __slots__ = ("_blob", "_offsets", "_list", "_lock", "_decoded", "_tail")

    def __init__(self, paths: list[str] | None = None, blob: np.ndarray | None = None,
                 offsets: np.ndarray | None = None) -> None:
        self._blob = blob
        self._offsets = offsets
        self._list = paths if blob is None else None
        if self._list is None and (offsets is None or blob is None):
            self._list = []
        self._lock = threading.Lock()
        self._decoded: dict[int, str] = {}  # slot -> path, for the saved table's paths decoded one by one
        self._tail: list[str] = []  # paths appended while the saved ones are undecoded

    def __len__(self) -> int:
        lst = self._list
        if lst is not None:
            return len(lst)
        offsets = self._offsets
        return len(self.as_list()) if offsets is None else len(offsets) - 1 + len(self._tail)

    def __getitem__(self, i):
        lst = self._list
        if lst is not None:
            return lst[i]
        if isinstance(i, slice):
            return self.as_list()[i]
        offsets, blob, tail = self._offsets, self._blob, self._tail
        if offsets is None:  # materialized meanwhile
            return self.as_list()[i]
        n = len(offsets) - 1
        j = i + n + len(tail) if i < 0 else i
        if n <= j < n + len(tail):
            return tail[j - n]
        if not 0 <= j < n:
            raise IndexError("slot out of range")
        path = self._decoded.get(j)
        if path is not None:
            return path
        a, b = int(offsets[j]), int(offsets[j + 1])
        try:
            path = blob[a:b].tobytes().decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise IndexFormatError("corrupt index: a path is not valid UTF-8") from None
        self._decoded[j] = path
        return path

    def __iter__(self):
        return iter(self.as_list())

    def as_list(self) -> list[str]:
        """Every path, decoded once."""
        lst = self._list
        if lst is None:
            with self._lock:
                if self._list is None:
                    from codelex.persist.lexical import decode_paths

                    self._list = decode_paths(self._blob, self._offsets) + self._tail
                    self._blob = self._offsets = None
                    self._decoded = {}
                lst = self._list
        return lst

    def append(self, path: str) -> None:
        with self._lock:  # (not while as_list() decodes: it takes the tail)
            if self._list is None:
                self._tail.append(path)
                return
        self._list.append(path)


class DocTable:
    """Per-slot attributes of the documents (see the module docstring)."""

    __slots__ = ("paths", "_slot_of", "_flags", "_kind", "_ext", "masks", "priors")

    def __init__(self, paths: list[str] | PathTable, flags: np.ndarray | None = None,
                 kind: np.ndarray | None = None) -> None:
        self.paths = paths if isinstance(paths, PathTable) else PathTable(paths)
        self._slot_of: dict[str, int] | None = None
        paths = self.paths
        n = len(paths)
        cap = max(16, n + n // 8)
        self._flags = np.zeros(cap, dtype=np.uint8)
        self._kind = np.zeros(cap, dtype=np.int16)
        self._flags[:n] = flags if flags is not None else [prior_flags(p) for p in paths]
        self._kind[:n] = kind if kind is not None else [kind_id(p) for p in paths]
        self._ext: list[str] | None = None
        self.masks: OrderedDict = OrderedDict()
        self.priors: dict = {}

    @property
    def slot_of(self) -> dict[str, int]:
        """Path -> slot, built on first use."""
        table = self._slot_of
        if table is None:
            table = {p: i for i, p in enumerate(self.paths.as_list())}
            self._slot_of = table
        return table

    def append(self, path: str) -> None:
        n = len(self.paths)
        if n == len(self._flags):
            self._flags = np.concatenate([self._flags, np.zeros(n, dtype=np.uint8)])
            self._kind = np.concatenate([self._kind, np.zeros(n, dtype=np.int16)])
        self._flags[n] = prior_flags(path)
        self._kind[n] = kind_id(path)
        if self._ext is not None:
            self._ext.append(extname(path).lower())
        self.paths.append(path)
        if self._slot_of is not None:  # (else built when first needed, with this path)
            self._slot_of[path] = n

    def compacted(self, old_slots: np.ndarray) -> DocTable:
        """The table after a merge kept ``old_slots`` (in new slot order)."""
        keep = old_slots.astype(np.intp)
        paths = self.paths.as_list()
        table = DocTable([paths[i] for i in keep], self._flags[keep], self._kind[keep])
        n = len(keep)
        try:
            cached = list(self.masks.items())
        except RuntimeError:  # resized by a concurrent search: start the new table cold
            cached = []
        for key, mask in cached:
            if len(mask) >= (int(keep[-1]) + 1 if n else 0):
                table.masks[key] = mask[keep]
        return table

    def flags(self, n: int) -> np.ndarray:
        return self._flags[:n]

    def kind(self, n: int) -> np.ndarray:
        return self._kind[:n]

    def ext(self, n: int) -> list[str]:
        ext = self._ext
        if ext is None or len(ext) < n:
            ext = [extname(p).lower() for p in self.paths[:n]]
            self._ext = ext
        return ext

    def mask(self, key, n: int, compute) -> np.ndarray:
        """``compute(start, n)`` over slots, cached by ``key`` and extended on growth."""
        mask = self.masks.get(key)
        if mask is not None and len(mask) >= n:
            try:
                self.masks.move_to_end(key)
            except KeyError:  # evicted by a concurrent search; the mask is still valid
                pass
            return mask[:n]
        start = 0 if mask is None else len(mask)
        tail = compute(start, n)
        mask = tail if mask is None else np.concatenate([mask, tail])
        self.masks[key] = mask
        while len(self.masks) > MAX_CACHED_MASKS:
            try:
                self.masks.popitem(last=False)
            except KeyError:  # emptied by a concurrent search
                break
        return mask


__all__ = ["KIND_IDS", "NO_KIND", "DocTable", "PathTable", "kind_id", "rules_fingerprint"]
