"""Near-copies: files of a project that are (almost) the same text, so that one answer does not list them all.

A vendored or generated duplicate, a documentation snippet in five variants
(``docs_src/tutorial001.py``, ``tutorial001_an.py``, ``tutorial001_py310.py``),
a file copied into a second package: each says what the others say.  Two
files are near-copies when they have the same extension, token counts within
:data:`~codelex.defaults.COPY_LENGTH_RATIO` of each other (read from the
index: most pairs stop here) and sets of distinct lines (blank lines and
indentation left out) whose Jaccard similarity is at least
:data:`~codelex.defaults.COPY_SIMILARITY`.  Lines are hashed as a file is
read (once per content: the signature is kept by path, ``mtime_ns`` and size).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from codelex.defaults import COPY_LENGTH_RATIO, COPY_SIMILARITY
from codelex.languages import extname

__all__ = ["NearCopies", "line_signature", "similarity"]

#: Signatures and pair decisions kept across queries (the oldest go first past it).
_KEPT = 8192


def line_signature(content: bytes) -> np.ndarray:
    """The sorted distinct xxh3-64 hashes of a text's non-blank lines, stripped of surrounding blanks (8 bytes
    a distinct line: a cache of many large files stays small)."""
    import xxhash

    hashes = {xxhash.xxh3_64_intdigest(line) for line in (raw.strip() for raw in content.splitlines()) if line}
    return np.fromiter(sorted(hashes), dtype=np.uint64, count=len(hashes))


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity of two line signatures (0 when both are empty)."""
    if not a.size and not b.size:
        return 0.0
    shared = int(np.intersect1d(a, b, assume_unique=True).size)
    return shared / (a.size + b.size - shared)


class NearCopies:
    """Which files of one index are near-copies of each other (see the module docstring).

    Parameters
    ----------
    info : callable
        ``info(path) -> (tokens, mtime_ns, size)`` of an indexed file (None when it is not indexed): the
        index's record of it.
    read : callable
        ``read(path) -> bytes | None``: the file's content (None when it cannot be read).
    signatures : dict, optional
        Where line signatures (by ``(path, mtime_ns, size)``) and the decisions on pairs are kept: one dict
        shared by the queries of a project, so a file is read for this once per content.
    """

    def __init__(self, info: Callable[[str], tuple[int, int, int] | None],
                 read: Callable[[str], bytes | None], signatures: dict | None = None) -> None:
        self._info = info
        self.read = read
        # (path, mtime_ns, size) -> line signature, and (the two files' such keys) -> whether they are copies
        self._signatures: dict[tuple, object] = {} if signatures is None else signatures
        self._infos: dict[str, tuple[int, int, int] | None] = {}
        self._here: dict[tuple, object] = {}  # (what this query alone may keep)

    def info(self, path: str) -> tuple[int, int, int] | None:
        """``(tokens, mtime_ns, size)`` of an indexed file (asked of the index once per path)."""
        found = self._infos.get(path, self)
        if found is self:
            found = self._infos[path] = self._info(path)
        return found

    def same(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are near-copies."""
        if a == b or extname(a).lower() != extname(b).lower():
            return False
        ia, ib = self.info(a), self.info(b)
        if ia is None or ib is None:
            return False
        short, long_ = sorted((ia[0], ib[0]))
        if long_ == 0 or short < COPY_LENGTH_RATIO * long_:
            return False
        pair = (a, ia[1], ia[2], b, ib[1], ib[2]) if a < b else (b, ib[1], ib[2], a, ia[1], ia[2])
        kept = self._signatures if ia[1] >= 0 and ib[1] >= 0 else self._here
        found = kept.get(pair)
        if found is None:
            sa, sb = self._signature(a, ia), self._signature(b, ib)
            found = sa is not None and sb is not None \
                and min(sa.size, sb.size) >= COPY_SIMILARITY * max(sa.size, sb.size) \
                and similarity(sa, sb) >= COPY_SIMILARITY
            _keep(kept, pair, found)
        return found

    def _signature(self, path: str, info: tuple[int, int, int]) -> np.ndarray | None:
        key = (path, info[1], info[2])
        # (content an editor handed in has no mtime: its lines, read from disk, count for this query only)
        kept = self._signatures if info[1] >= 0 else self._here
        found = kept.get(key, self)
        if found is self:
            content = self.read(path)
            found = None if content is None else line_signature(content)
            _keep(kept, key, found)
        return found


def _keep(cache: dict, key, value) -> None:
    """``cache[key] = value``, the oldest entries dropped past :data:`_KEPT` (safe against another thread doing
    the same: a search in the server's other connection)."""
    while len(cache) >= _KEPT:
        try:
            cache.pop(next(iter(cache)), None)
        except (StopIteration, RuntimeError):
            if not cache:
                break
    cache[key] = value
