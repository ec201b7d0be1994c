"""The word index: documents in, ranked files out, kept fresh edit by edit.

Storage is the native live index (``csrc/live_index.hpp``): an immutable CSR
base segment of numpy-compatible arrays, a small mutable delta segment for
edited documents and a per-slot document table.  Python holds what filters
and priors need per slot (paths, prior flags, language ids) and turns filters
into per-slot masks that the native scoring loop (``csrc/bm25.cpp``) consumes.

Concurrency model
-----------------
Writers (:meth:`WordIndex.update`, :meth:`~WordIndex.remove`,
:meth:`~WordIndex.merge`, :meth:`~WordIndex.save`) are serialized by one lock.
Searches take no Python lock: the native index applies each update under a
short exclusive section and searches read under a shared one, so a search
sees an update entirely or not at all.  A search names the slot layout
(generation) that its masks describe; when a writer has just added a slot
or merged, the search waits for the writer to publish the new layout and
runs again.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from codelex._native import _core
from codelex.kinds import KINDS, extname, kind_of
from codelex.priors import (
    DOC_FACTOR,
    FLAG_DOC,
    FLAG_TEST_VENDOR,
    TEST_VENDOR_FACTOR,
    centrality_factor,
    prior_flags,
)
from codelex.query import Filter, check_limit, parse_query, paths_predicate, resolve_kind, validate_filters
from codelex.tokenize import Vocabulary

Hit = _core.Hit

#: Documents larger than this many UTF-8 bytes are not indexed (the original's cap).
DEFAULT_MAX_BYTES = 512 * 1024

_KIND_IDS = {kind: i for i, kind in enumerate(sorted(KINDS))}
_NO_KIND = len(_KIND_IDS)
_WINDOWS = os.name == "nt"


def check_search_args(query: object, limit: object = 20, paths=None, lang: object = None):
    """Validate the arguments of a search: ``(parsed query, limit, lang kind or None, paths predicate or None)``.

    The limit comes back clamped (see :func:`codelex.query.check_limit`).

    Raises the errors :meth:`WordIndex.search` documents (``TypeError``,
    ``codelex.QueryError``) whether or not an index exists yet.
    """
    parsed = parse_query(query)
    limit = check_limit(limit)
    validate_filters(parsed.filters)
    lang_kind = None
    if lang is not None:
        if not isinstance(lang, str):
            raise TypeError(f"lang must be str, not {type(lang).__name__}")
        lang_kind = resolve_kind(lang, inline=False)
    return parsed, limit, lang_kind, paths_predicate(paths)


def _check_path(path: object) -> str:
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    return path.replace("\\", "/") if _WINDOWS else path


def _check_content(content: object) -> str | bytes:
    if not isinstance(content, (str, bytes)):
        raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
    return content


def _check_mtime(mtime_ns: object) -> int:
    if isinstance(mtime_ns, bool) or not isinstance(mtime_ns, int):
        raise TypeError(f"mtime_ns must be int, not {type(mtime_ns).__name__}")
    if not -(2**63) <= mtime_ns < 2**63:
        raise ValueError("mtime_ns does not fit in 64 bits")
    return mtime_ns


def _check_max_bytes(max_bytes: object) -> int | None:
    if max_bytes is None:
        return None
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError(f"max_bytes must be int or None, not {type(max_bytes).__name__}")
    if max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    return max_bytes


class FileInfo(NamedTuple):
    """What the index recorded about a file when it indexed it."""

    mtime_ns: int
    """Modification time in ns as given to the index (−1 when unknown, e.g. a per-edit update)."""
    size: int
    """Size of the indexed content in UTF-8 bytes."""
    tokens: int
    """Token occurrences (the BM25 document length)."""


class _DocTable:
    """Per-slot attributes of the documents.

    Append-only between merges: a slot keeps its path (removal leaves a hole),
    so anything computed over a prefix of the slots stays valid and is only
    extended.  A merge builds a new table.
    """

    __slots__ = ("paths", "slot_of", "_flags", "_kind", "_ext", "masks", "priors")

    def __init__(self, paths: list[str], flags: np.ndarray | None = None, kind: np.ndarray | None = None) -> None:
        self.paths = paths
        self.slot_of = {p: i for i, p in enumerate(paths)}
        n = len(paths)
        cap = max(16, n + n // 8)
        self._flags = np.zeros(cap, dtype=np.uint8)
        self._kind = np.zeros(cap, dtype=np.int16)
        self._flags[:n] = flags if flags is not None else [prior_flags(p) for p in paths]
        self._kind[:n] = kind if kind is not None else [_kind_id(p) for p in paths]
        self._ext: list[str] | None = None
        self.masks: OrderedDict = OrderedDict()
        self.priors: dict = {}

    def append(self, path: str) -> None:
        n = len(self.paths)
        if n == len(self._flags):
            self._flags = np.concatenate([self._flags, np.zeros(n, dtype=np.uint8)])
            self._kind = np.concatenate([self._kind, np.zeros(n, dtype=np.int16)])
        self._flags[n] = prior_flags(path)
        self._kind[n] = _kind_id(path)
        if self._ext is not None:
            self._ext.append(extname(path).lower())
        self.paths.append(path)
        self.slot_of[path] = n

    def compacted(self, old_slots: np.ndarray) -> _DocTable:
        """The table after a merge kept ``old_slots`` (in new slot order)."""
        keep = old_slots.astype(np.intp)
        paths = self.paths
        table = _DocTable([paths[i] for i in keep], self._flags[keep], self._kind[keep])
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
        while len(self.masks) > 256:
            try:
                self.masks.popitem(last=False)
            except KeyError:  # emptied by a concurrent search
                break
        return mask


def _kind_id(path: str) -> int:
    return _KIND_IDS.get(kind_of(path) or "", _NO_KIND)


class _View(NamedTuple):
    """A consistent snapshot of the slot layout: table, slot count, native generation."""

    table: _DocTable
    n: int
    generation: int


class WordIndex:
    """Identifier-aware BM25 index over a set of files, updatable per edit.

    Build one with :meth:`WordIndex.build` (or start empty and
    :meth:`update`), query it with :meth:`search`, keep it fresh with
    :meth:`update` and :meth:`remove`, persist it with :meth:`save` and
    :meth:`load`.  Any sequence of updates and removals gives exactly the
    results of a fresh build over the final documents.

    Parameters
    ----------
    max_bytes : int or None, default 512 KiB
        Documents larger than this (in UTF-8 bytes) are not indexed: an
        update with larger content removes the document.  ``None``: no cap.

    Attributes
    ----------
    merge_ratio : float or None
        Merge the delta into a new base once the postings it holds or
        obsoletes exceed this fraction of the live postings (and
        :attr:`merge_min_postings`).  ``None`` merges only when a hard limit
        requires it or on :meth:`merge`.
    merge_min_postings : int
        Floor of the merge threshold, so small indexes do not merge on
        every edit.

    Examples
    --------
    >>> index = WordIndex.build([("src/auth.py", "def authenticate_user(name): ...")])
    >>> [hit.file for hit in index.search("authenticate user")]
    ['src/auth.py']
    >>> index.update("src/session.py", "class UserSession: ...")
    True
    >>> [hit.file for hit in index.search("user session")]
    ['src/session.py', 'src/auth.py']
    """

    K1 = 1.2
    B = 0.75

    def __init__(self, *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = _check_max_bytes(max_bytes)
        self.merge_ratio: float | None = 0.25
        self.merge_min_postings = 1 << 16
        self._exhaustive = False  # tests: score every posting instead of pruning
        self._prune_min_postings = 16384  # tests: 0 prunes every multi-term query
        self._vocab = Vocabulary()
        self._live = _core.LiveIndex(self._vocab)
        self._write_lock = threading.RLock()
        self._view = _View(_DocTable([]), 0, self._live.generation)
        #: Free-form JSON-compatible data saved with the index (see :meth:`save`).
        self.metadata: dict = {}

    # --- construction ---------------------------------------------------------

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, str | bytes] | tuple[str, str | bytes, int]],
        *,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        workers: int | None = None,
    ) -> WordIndex:
        """Build an index from ``(path, content)`` or ``(path, content, mtime_ns)`` items.

        Parameters
        ----------
        docs : iterable of tuples
            Paths are stored as given (``/``-separated, project-relative when
            they come from a project); a repeated path keeps its first
            position and its last content.  Bytes are decoded as UTF-8,
            ill-formed sequences acting as separators.  Contents are
            tokenized as they arrive and not kept, so a generator streams.  ``mtime_ns`` (default −1, unknown) is recorded for
            staleness checks (see :meth:`file_info`).
        max_bytes : int or None, default 512 KiB
            Larger documents are left out.
        workers : int, optional
            Threads tokenizing in parallel (default: the number of CPUs, at
            most 8).  Documents are cut into chunks of about 8 MB; each
            chunk's segment is built on a worker and the chunks are then
            concatenated, so the result does not depend on ``workers``.

        Returns
        -------
        WordIndex

        Raises
        ------
        TypeError
            If an item is not such a tuple, a path is not a str, a content is
            neither str nor bytes, or an mtime is not an int.
        ValueError
            If a path contains a NUL character.
        """
        self = cls(max_bytes=max_bytes)
        cap = self.max_bytes
        seen: set[str] = set()
        later: list[tuple[str, str | bytes, int]] = []  # repeated paths: applied as updates

        def first_occurrences():
            for item in docs:
                if not isinstance(item, tuple) or len(item) not in (2, 3):
                    raise TypeError("docs must be (path, content) or (path, content, mtime_ns) tuples")
                path = _check_path(item[0])
                content = _check_content(item[1])
                mtime = _check_mtime(item[2]) if len(item) == 3 else -1
                if path in seen:
                    later.append((path, content, mtime))
                    continue
                if cap is not None and _core.utf8_length(content) > cap:
                    later.append((path, content, mtime))  # removes an earlier occurrence, if any
                    continue
                seen.add(path)
                yield path, content, mtime

        paths = self._build_chunks(first_occurrences(), workers)
        self._view = _View(_DocTable(paths), len(paths), self._live.generation)
        if later:
            merge_ratio, self.merge_ratio = self.merge_ratio, None
            for path, content, mtime in later:
                self.update(path, content, mtime_ns=mtime)
            self.merge_ratio = merge_ratio
            self.merge()
        return self

    _CHUNK_BYTES = 8 << 20
    _CHUNK_DOCS = 4096

    def _build_chunks(self, items, workers: int | None) -> list[str]:
        """Tokenize ``(path, content, mtime)`` items on worker threads, chunk by chunk."""
        if workers is None:
            workers = min(8, os.cpu_count() or 1)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int, not {workers!r}")
        import collections
        import queue
        from concurrent.futures import ThreadPoolExecutor

        builders: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(workers):
            builders.put(_core.ChunkBuilder())

        def run(contents: list) -> object:
            builder = builders.get()
            try:
                return builder.build(contents)
            finally:
                builders.put(builder)

        paths: list[str] = []
        mtimes: list[int] = []
        chunks: list = []
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codelex-build") as pool:
            running: collections.deque = collections.deque()
            batch: list = []
            batch_bytes = 0
            try:
                for path, content, mtime in items:
                    paths.append(path)
                    mtimes.append(mtime)
                    batch.append(content)
                    batch_bytes += len(content)
                    if batch_bytes >= self._CHUNK_BYTES or len(batch) >= self._CHUNK_DOCS:
                        running.append(pool.submit(run, batch))
                        batch, batch_bytes = [], 0
                        while len(running) > workers:  # bound the contents held in memory
                            chunks.append(running.popleft().result())
                if batch or not running:
                    running.append(pool.submit(run, batch))
                while running:
                    chunks.append(running.popleft().result())
            finally:
                for fut in running:
                    fut.cancel()
        self._live.install_chunks(chunks, paths, mtimes)
        return paths

    # --- incremental maintenance ----------------------------------------------

    def update(self, path: str, content: str | bytes, *, mtime_ns: int = -1) -> bool:
        """Replace (or add) the document at ``path``.

        Costs O(the document's own postings): the old postings are found
        through the forward index and retired, the new ones appended to the
        delta segment.  A merge may follow (see :attr:`merge_ratio`).

        Parameters
        ----------
        path : str
        content : str or bytes
        mtime_ns : int, default -1
            Modification time to record; −1 means unknown (a per-edit update
            of content that may not be on disk yet).

        Returns
        -------
        bool
            True when indexed; False when the content exceeds
            :attr:`max_bytes`, in which case the document is removed.

        Raises
        ------
        TypeError
            If ``path`` is not a str, ``content`` is neither str nor bytes,
            or ``mtime_ns`` is not an int.
        ValueError
            If ``path`` contains a NUL character.
        """
        path = _check_path(path)
        content = _check_content(content)
        mtime_ns = _check_mtime(mtime_ns)
        size = _core.utf8_length(content)
        with self._write_lock:
            view = self._view
            slot = view.table.slot_of.get(path)
            if self.max_bytes is not None and size > self.max_bytes:
                if slot is not None:
                    self._live.remove(slot)
                    self._maybe_merge()
                return False
            if slot is None:
                slot = self._live.add_slot(path, mtime_ns, size)
                view.table.append(path)
                self._view = _View(view.table, slot + 1, self._live.generation)
            self._live.put(slot, content, mtime_ns)
            self._maybe_merge()
        return True

    def remove(self, path: str) -> bool:
        """Remove the document at ``path``; False when it is not indexed.

        Raises
        ------
        TypeError
            If ``path`` is not a str.
        ValueError
            If ``path`` contains a NUL character.
        """
        path = _check_path(path)
        with self._write_lock:
            slot = self._view.table.slot_of.get(path)
            if slot is None or not self._live.remove(slot):
                return False
            self._maybe_merge()
        return True

    def merge(self) -> bool:
        """Fold pending updates and removals into a new compact base segment.

        Searches go on while the new segment is built and pause only for the
        swap.  Returns False when there was nothing to merge.
        """
        with self._write_lock:
            live = self._live
            if live.merge_state()[1]:
                return False
            old_slots = live.merge()
            self._view = _View(self._view.table.compacted(old_slots), len(old_slots), live.generation)
        return True

    def _maybe_merge(self) -> None:
        ratio = -1.0 if self.merge_ratio is None else float(self.merge_ratio)
        if self._live.needs_merge(ratio, int(self.merge_min_postings)):
            self.merge()

    # --- persistence ----------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index atomically to the directory ``path`` (created if needed).

        Merges pending changes first; :attr:`metadata` (JSON-compatible) is
        saved with it.  See :mod:`codelex.store` for the format.
        """
        from codelex.store import save_index

        save_index(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, mmap: bool = True, verify: bool = True) -> WordIndex:
        """Load an index written by :meth:`save`.

        Parameters
        ----------
        path : str or path-like
            The index directory (or its ``index.clx`` file).
        mmap : bool, default True
            Map the arrays instead of reading them; a cold start then costs
            the checks below, not a parse of the index.
        verify : bool, default True
            Check the checksum of every array (xxh3; a flipped byte anywhere
            is detected).  The structural checks always run.

        Raises
        ------
        codelex.IndexFormatError
            With a one-line reason, for anything that is not an intact index
            of this format version.
        """
        from codelex.store import load_index

        return load_index(cls, path, mmap=mmap, verify=verify)

    # --- introspection --------------------------------------------------------

    def __len__(self) -> int:
        return int(self._live.n_live)

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        slot = self._view.table.slot_of.get(path)
        return slot is not None and self._live.alive(slot)

    def __repr__(self) -> str:
        return f"<WordIndex files={len(self)}>"

    @property
    def files(self) -> list[str]:
        """Indexed paths, in document order (indexing order; a re-added path keeps its place)."""
        view = self._view
        paths = view.table.paths
        return [paths[s] for s in self._live.live_slots().tolist() if s < view.n]

    def file_info(self, path: str) -> FileInfo:
        """What was recorded when ``path`` was indexed (``KeyError`` when absent)."""
        slot = self._view.table.slot_of.get(path) if isinstance(path, str) else None
        if slot is None or not self._live.alive(slot):
            raise KeyError(path)
        mtime, size = self._live.file_info(slot)
        return FileInfo(int(mtime), int(size), int(self._live.doc_len(slot)))

    def document_length(self, path: str) -> int:
        """Token occurrences of an indexed file (``KeyError`` when absent)."""
        return self.file_info(path).tokens

    def stats(self) -> dict[str, int]:
        """Sizes of the index.

        Returns
        -------
        dict
            ``files``; ``tokens`` (distinct tokens with postings);
            ``postings`` (one per token, file and line, as the original
            counts them); ``term_doc_pairs`` (one per token and file);
            ``total_tokens`` (token occurrences, repeats counted);
            ``pending_postings`` (delta postings and removed ones awaiting a
            merge); ``index_bytes`` (posting arrays, delta and document
            table); ``vocabulary_bytes`` (the term dictionary).  The first
            five equal those of a fresh build over the same documents; the
            byte counts depend on history (the dictionary keeps the terms of
            removed documents until a rebuild).
        """
        c = self._live.counts()
        return {
            "files": c["live_docs"],
            "tokens": c["terms"],
            "postings": c["line_postings"],
            "term_doc_pairs": c["pairs"],
            "total_tokens": c["total_tokens"],
            "pending_postings": int(self._live.merge_state()[0]),
            "index_bytes": c["base_bytes"] + c["delta_bytes"] + c["table_bytes"],
            "vocabulary_bytes": int(self._vocab.memory_bytes()),
        }

    # --- search ---------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        paths: Sequence[str] | str | None = None,
        lang: str | None = None,
        centrality: Mapping[str, int] | None = None,
        demote_test_vendor: bool = True,
        demote_docs: bool = True,
    ) -> list[Hit]:
        """Rank files for a query.

        Parameters
        ----------
        query : str
            Free text plus inline filters (``lang:``, ``file:``, ``ext:``,
            negated with ``-``); see :func:`codelex.parse_query`.
        limit : int, default 20
            Maximum number of hits; ``<= 0`` gives none.
        paths : sequence of str, optional
            Globs over the stored paths; a bare directory scopes its subtree.
        lang : str, optional
            A kind of :data:`codelex.KINDS` (case-insensitive).
        centrality : mapping of str to int, optional
            Importing-file counts per path; boosts by ``1 + ln(1 + c) / 4``.
        demote_test_vendor, demote_docs : bool, default True
            Apply the ×0.3 test/vendor and ×0.5 doc/data priors.

        Returns
        -------
        list of Hit
            Best first; ties broken by path.

        Raises
        ------
        TypeError
            If ``query`` is not a str.
        codelex.QueryError
            For an unknown ``lang:`` in the query or ``lang`` parameter.
        """
        parsed, limit, lang_kind, predicate = check_search_args(query, limit, paths, lang)
        if limit <= 0 or not parsed.tokens:
            return []
        tokens = list(parsed.tokens)
        hits = self._search_view(self._view, parsed.filters, paths, predicate, lang_kind, tokens, limit,
                                 centrality, demote_test_vendor, demote_docs)
        if hits is None:
            # A writer changed the slot layout under us: wait until it has
            # published the new one, then search again, still holding the lock.
            with self._write_lock:
                hits = self._search_view(self._view, parsed.filters, paths, predicate, lang_kind, tokens, limit,
                                         centrality, demote_test_vendor, demote_docs)
        return hits

    def _search_view(self, view: _View, filters, paths, predicate, lang_kind, tokens, limit, centrality,
                     demote_test_vendor, demote_docs) -> list[Hit] | None:
        mask = self._mask(view, filters, paths, predicate, lang_kind)
        if mask is not None and not mask.any():
            return []
        mult, mult_max = self._multiplier(view, demote_test_vendor, demote_docs, centrality)
        return self._live.search_hits(tokens, limit, view.table.paths, view.generation, mask, mult, mult_max,
                                      self._exhaustive, self._prune_min_postings)

    # --- filters and priors ---------------------------------------------------

    def _filter_mask(self, view: _View, flt: Filter) -> np.ndarray:
        """Slots matching the un-negated condition of one filter (cached)."""
        table = view.table
        if flt.key == "lang":
            kind_id = _KIND_IDS[resolve_kind(flt.value)]
            return table.mask(("lang", kind_id), view.n, lambda a, b: table.kind(b)[a:b] == kind_id)
        if flt.key == "ext":
            want = "." + flt.value.lstrip(".").lower()
            return table.mask(
                ("ext", want),
                view.n,
                lambda a, b: np.fromiter((e == want for e in table.ext(b)[a:b]), dtype=bool, count=b - a),
            )
        needle = flt.value.replace("\\", "/")
        if _WINDOWS:
            needle = needle.lower()

            def compute(a: int, b: int) -> np.ndarray:
                return np.fromiter((needle in p.lower() for p in table.paths[a:b]), dtype=bool, count=b - a)
        else:

            def compute(a: int, b: int) -> np.ndarray:
                return np.fromiter((needle in p for p in table.paths[a:b]), dtype=bool, count=b - a)

        return table.mask(("file", needle), view.n, compute)

    def _mask(self, view: _View, filters: Sequence[Filter], paths, predicate, lang_kind) -> np.ndarray | None:
        if not filters and lang_kind is None and predicate is None:
            return None
        n = view.n
        mask = np.ones(n, dtype=bool)
        groups: dict[str, np.ndarray] = {}
        for flt in filters:
            m = self._filter_mask(view, flt)
            if flt.negated:
                mask &= ~m
            else:
                groups[flt.key] = groups[flt.key] | m if flt.key in groups else m.copy()
        for m in groups.values():
            mask &= m
        if lang_kind is not None:
            mask &= view.table.kind(n) == _KIND_IDS[lang_kind]
        if predicate is not None:
            key = ("paths", tuple(paths) if not isinstance(paths, str) else (paths,))
            table = view.table
            mask &= table.mask(
                key, n, lambda a, b: np.fromiter((predicate(p) for p in table.paths[a:b]), dtype=bool, count=b - a)
            )
        return mask.view(np.uint8)

    def _multiplier(self, view: _View, demote_test_vendor: bool, demote_docs: bool,
                    centrality) -> tuple[np.ndarray | None, float]:
        """Per-slot priors and an upper bound of them (priors never exceed 1; centrality boosts do)."""
        table = view.table
        n = view.n
        key = (bool(demote_test_vendor), bool(demote_docs))
        base = table.priors.get(key)
        if base is None or len(base) < n:
            flags = table.flags(n)
            base = np.ones(n, dtype=np.float64)
            if demote_test_vendor:
                base[(flags & FLAG_TEST_VENDOR) != 0] *= TEST_VENDOR_FACTOR
            if demote_docs:
                base[(flags & FLAG_DOC) != 0] *= DOC_FACTOR
            table.priors[key] = base
        elif len(base) > n:
            base = base[:n]
        if centrality:
            mult = base.copy()
            slot_of = table.slot_of
            top = 1.0
            for path, count in centrality.items():
                slot = slot_of.get(path)
                if slot is not None and slot < n:
                    factor = centrality_factor(int(count or 0))
                    mult[slot] *= factor
                    top = max(top, factor)
            return mult, top
        if not demote_test_vendor and not demote_docs:
            return None, 1.0
        return base, 1.0


__all__ = ["DEFAULT_MAX_BYTES", "FileInfo", "Hit", "WordIndex"]
