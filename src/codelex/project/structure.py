"""A project's structure store kept fresh: built in the background after the word index, per edit on demand.

The structure of every indexed file (definitions and chunks, see
:mod:`codelex.structure`) is kept in ``<index dir>/structure.clx``, keyed by
content hash.  After each build or refresh of the word index, files whose
size or mtime changed are analyzed again on worker processes, in the
background: a query never waits for it.  An edit marks its file stale; the
file is analyzed again in the background shortly after, or at once when its
structure is asked for (an outline, a symbol, a search hit's enclosing
definition), so answers never use a structure older than the file.

A refresh that brings the store fully in line with a walk records that
walk's digest in the store (:func:`walk_digest`, saved with it); an open
whose walk has the same digest has nothing to analyze, and starts no
analysis at all (a one-shot command then neither loads the store twice nor
waits for a thread at exit).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import numpy as np
import xxhash

from codelex.defaults import STRUCTURE_FILE
from codelex.errors import IndexFormatError
from codelex.ingest import Document, SourceFile
from codelex.persist.layout import probe_index
from codelex.project.jobs import DebouncedSaver, Job
from codelex.structure import FileStructure, analyze
from codelex.structure.pool import analyze_files, content_hash
from codelex.structure.store import FileRecord, StructureIndex

__all__ = ["STALE_DRAIN_S", "StructureUpkeep", "walk_digest"]

log = logging.getLogger("codelex")

#: Edited files are analyzed again this long after the last edit (a burst of edits is analyzed once).
STALE_DRAIN_S = 0.2
#: The defined names of this many file contents are kept across searches (the oldest go first).
NAMES_KEPT = 1 << 16


def _evict(cache: dict, limit: int) -> None:
    """Drop the oldest entries of ``cache`` until one more fits under ``limit`` (safe against another thread
    doing the same: a search in the server's other connection)."""
    while len(cache) >= limit:
        try:
            cache.pop(next(iter(cache)), None)
        except (StopIteration, RuntimeError):  # (emptied, or changed under the iteration: try again or stop)
            if not cache:
                return


def walk_digest(files: Sequence[SourceFile]) -> str:
    """A digest of a walk's files (paths, sizes and mtimes, in the walk's order): equal digests, equal walks."""
    paths = [f.path for f in files]
    h = xxhash.xxh3_128()
    h.update(len(paths).to_bytes(8, "little"))
    h.update("\0".join(paths).encode("utf-8", "surrogatepass"))
    h.update(np.fromiter((f.size for f in files), dtype=np.int64, count=len(paths)).tobytes())
    h.update(np.fromiter((f.mtime_ns for f in files), dtype=np.int64, count=len(paths)).tobytes())
    return "w1:" + h.hexdigest()


class StructureUpkeep:
    """One root's structure store and the work that keeps it fresh (thread-safe)."""

    def __init__(self, root, source, save_dir_fn) -> None:
        self.root = root
        #: The root's admission now (``source()``): every file this stage reads, it reads through it.
        self.source = source
        self.save_dir_fn = save_dir_fn  # where to save (the root's writable index directory)
        self.debounce_ms: float | None = None
        # The background analysis: its state word is the store's status (idle | building | ready | failed).
        self.build = Job(f"building the structure of {root}", lock=threading.RLock())
        self.lock = self.build.lock
        self.done = self.build.done
        self.index: StructureIndex | None = None
        self.stats: dict[str, int] = {}
        self.save_error: str | None = None  # why the last save of the store failed (None: it did not)
        self.stale: dict[str, Document | bytes | str | None] = {}  # path -> new content (None: read it from disk)
        self.drain_timer: threading.Timer | None = None
        self.saver = DebouncedSaver(save_dir_fn)  # the store's debounced save after edits
        self.drops_saved = 0  # the store's corruption drops a save was scheduled for
        self.names_kept: dict[tuple, frozenset | None] = {}  # (path, mtime_ns, size) -> defined names
        self.begun = 0  # the last run begun (a run superseded by a newer one records no walk digest)
        # Edits that arrive while a build runs: analyzed again after it, so the build's read of the disk
        # never wins over a newer edit.
        self.edited_during_build: dict[str, Document | bytes | str | None] = {}

    @property
    def status(self) -> str:
        return self.build.state

    @property
    def max_bytes(self) -> int | None:
        """The size cap of the root's admission now (what the worker processes read files with)."""
        return self.source().max_bytes

    @property
    def reason(self) -> str | None:
        return self.build.reason

    @property
    def closed(self) -> bool:
        return self.build.closed

    # --- loading and building ----------------------------------------------------

    def load(self, directory) -> StructureIndex:
        """The store in memory, else the one saved in ``directory``, else an empty one."""
        with self.lock:
            if self.index is not None:
                return self.index
        index = None
        if directory is not None and probe_index(directory, STRUCTURE_FILE)[0] is not None:
            from codelex.persist.structure import load_structure

            try:
                # (lazily: a query that names a few hits checks those files' rows, not the whole store)
                index = StructureIndex(load_structure(directory, lazy=True))
            except (IndexFormatError, OSError) as exc:
                log.warning("codelex: the saved structure in %s is unusable (%s); rebuilding it", directory, exc)
        with self.lock:
            if self.index is None:
                self.index = index if index is not None else StructureIndex()  # (not `or`: len() reads it all)
            return self.index

    def refresh(self, files: list[SourceFile], directory, *, wait: bool = False) -> None:
        """Bring the store in line with ``files`` (the walk's), in the background unless ``wait``.

        When the store is already complete for this very walk (its recorded
        :func:`walk_digest`), nothing is analyzed and no thread starts: the
        store is ready at once.
        """
        with self.lock:
            if self.closed:
                return
        started = time.perf_counter()
        digest = walk_digest(files)
        if self._covered(digest, directory, started):
            return
        with self.lock:
            if self.closed:
                return
            job = self.begun = self.build.begin()
        if wait:
            self.build.run(job, self._refresh, files, directory, digest)
        else:
            self.build.spawn(job, self._refresh, files, directory, digest, name="codelex-structure")

    def _covered(self, digest: str, directory, started: float) -> bool:
        """Mark the store ready when it is complete for the walk of ``digest`` and no analysis runs; True if so."""
        with self.lock:
            if self.status == "building" or self.stale:
                return False
        index = self.load(directory)
        with self.lock:
            if self.closed or self.status == "building" or self.stale or index.covers != digest:
                return False
            job = self.begun = self.build.begin()
            self.stats = dict(analyzed=0, removed=0, unchanged=0, seconds=round(time.perf_counter() - started, 3))
            self.build.finish(job, "ready")
            return True

    def _refresh(self, job: int, files: list[SourceFile], directory, digest: str | None = None) -> None:
        """The analysis job's run (a failure is reported through the status by the job)."""
        started = time.perf_counter()
        index = self.load(directory)
        current = {f.path: f for f in files}
        removed = index.retain(set(current))
        todo = []
        for f in files:
            info = index.file_info(f.path)
            if info is None or info[1] != f.mtime_ns or info[2] != f.size:
                todo.append((f.path, info[0] if info is not None else None))
        result = analyze_files(self.root, todo, max_bytes=self.max_bytes,
                               should_continue=lambda: self.build.current(job))
        # Work done is kept even when the build was cut short (a closed project, a one-shot
        # command): the next refresh goes on from there.
        index.apply(result.batches, result.unchanged)
        for path in result.skipped:  # binary, vanished...: not in the word index either
            index.remove(path)
        # Complete for this walk: every file to do was analyzed (also when the run was stopped after that, as a
        # one-shot command's exit stops it: the next open of the unchanged tree then has nothing to do), no newer
        # run began, no edit arrived meanwhile, and no read failed for a passing reason (to be read again).
        accounted = sum(b.n_files for b in result.batches) + len(result.unchanged) + len(result.skipped)
        with self.lock:
            if digest is not None and accounted == len(todo) and self.begun == job and not self.stale \
                    and not self.edited_during_build and "unreadable" not in result.skipped.values():
                index.set_covers(digest)
        if index.changes:
            self._save(self.save_dir_fn())
        if not self.build.current(job):
            return
        with self.lock:
            self.stats = dict(result.statuses, analyzed=len(todo), removed=removed,
                              unchanged=len(result.unchanged), seconds=round(time.perf_counter() - started, 3))
            requeue = bool(self.edited_during_build)
            self.stale.update(self.edited_during_build)
            self.edited_during_build.clear()
            self.build.finish(job, "ready")
        if requeue:
            self._start_drain()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no structure build runs; True when none does (any more)."""
        return self.build.wait(timeout)

    def _save(self, directory) -> None:
        """Save the store to ``directory``; a failure is logged and kept in :attr:`save_error` (``codelex index``
        reports it as a failure), cleared by the next save that works."""
        index = self.index
        if index is None or directory is None:
            return
        try:
            index.save(directory)
        except OSError as exc:
            # (info, as the word index's: the failure is reported where it matters, by save_error)
            log.info("codelex: could not save the structure of %s: %s", self.root, exc)
            with self.lock:
                self.save_error = f"could not save the structure in {directory}: {exc.strerror or exc}"
            return
        with self.lock:
            self.save_error = None

    # --- edits -------------------------------------------------------------------

    def mark_stale(self, path: str, content: Document | bytes | str | None, debounce_ms: float | None = None) -> None:
        """Note an edit of ``path``: its structure is analyzed again soon, or at once when asked for.

        ``content`` is what the edit indexed: the file as read (a :class:`~codelex.ingest.Document`: analyzed
        from those bytes, with their mtime and size), content given (no mtime known), or None (read then).
        """
        with self.lock:
            if self.closed:
                return
            self.stale[path] = content
            self.debounce_ms = debounce_ms
            if self.status == "building":
                self.edited_during_build[path] = content
        self._start_drain()

    def _start_drain(self) -> None:
        with self.lock:
            if self.closed:
                return
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            self.drain_timer = threading.Timer(STALE_DRAIN_S, self._drain)
            self.drain_timer.daemon = True
            self.drain_timer.start()

    def _drain(self) -> None:
        with self.lock:
            paths = list(self.stale)
        changed = False
        for path in paths:
            changed |= self._analyze_stale(path)
        if changed:
            self._schedule_save()

    def _analyze_stale(self, path: str) -> bool:
        with self.lock:
            if path not in self.stale:
                return False
            content = self.stale[path]
        index = self.index if self.index is not None else StructureIndex()
        if content is None:
            doc = self.source().read(path)
            if not isinstance(doc, Document):
                index.remove(path)
                self._forget(path, content)
                return True
            data, mtime, size = doc.content, doc.mtime_ns, doc.size
        elif isinstance(content, Document):  # read once by the edit, for every stage
            data, mtime, size = content.content, content.mtime_ns, content.size
        else:
            data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
            mtime, size = -1, len(data)  # as the word index records it: the next refresh reads the file
        index.put(FileRecord(analyze(path, data), content_hash(data), mtime, size))
        with self.lock:
            if self.index is None:
                self.index = index
        self._forget(path, content)
        return True

    def _forget(self, path: str, content) -> None:
        with self.lock:
            if self.stale.get(path, object()) is content:
                del self.stale[path]

    def remove(self, path: str) -> None:
        with self.lock:
            self.stale.pop(path, None)
            if self.index is not None:
                self.index.remove(path)

    def _schedule_save(self) -> None:
        with self.lock:
            if self.closed or self.index is None:
                return
            index = self.index
        self.saver.schedule(index, self.debounce_ms)

    # --- reads -------------------------------------------------------------------

    def names_source(self, directory, index):
        """``names_of(path)``: what a file of the word index ``index`` defines (a frozenset of names; None for a
        file that cannot be read), always for the content the index holds: the store's record when it was read
        from that content (same ``mtime_ns`` and size), else the file analyzed now (an edit not analyzed yet, a
        file the background analysis has not reached), so that an answer never depends on how far that
        analysis got."""
        self.load(directory)
        kept = self.names_kept  # (across queries: a content read at a known mtime has one set of names)
        here: dict[tuple, frozenset | None] = {}

        def names_of(path: str):
            try:
                info = index.file_info(path)
            except KeyError:
                return None
            key = (path, info.mtime_ns, info.size)
            cache = kept if info.mtime_ns >= 0 else here  # (content an editor handed in: this query only)
            found = cache.get(key, cache)
            if found is cache:
                found, read_as_indexed = self._current(
                    path, info.mtime_ns, info.size, lambda store: store.names(path),
                    lambda structure: frozenset(d.name for d in structure.definitions))
                if read_as_indexed:  # (the disk moved past the index: that reading is not kept for this key)
                    _evict(cache, NAMES_KEPT)
                    cache[key] = found
            return found

        return names_of

    def enclosing(self, path: str, line: int, mtime_ns: int, size: int) -> tuple[str | None, int] | None:
        """``(qualified name, end line)`` of the innermost definition holding ``line`` of ``path`` as read from
        the content of ``mtime_ns`` and ``size`` (name None outside every definition), as :meth:`names_of`
        reads it; None when the file cannot be read."""
        def from_structure(structure: FileStructure):
            found = structure.enclosing(line)
            return (None, 0) if found is None else (found.qualified_name, found.end_line)

        def from_store(store: StructureIndex):
            found = store.enclosing(path, line)
            return None if found is None else (found[0], found[1], found[2:])

        return self._current(path, mtime_ns, size, from_store, from_structure)[0]

    def _current(self, path: str, mtime_ns: int, size: int, from_store, from_structure) -> tuple[object, bool]:
        """``(what, read as indexed)``: what ``from_store(store)`` reads of ``path`` (``(mtime_ns, size, what)``)
        when the store's record was read from the content of ``mtime_ns`` and ``size``, else ``from_structure``
        of the file analyzed now (an edit not analyzed yet, a file the background analysis has not reached;
        None: unreadable), and whether that was the content of ``mtime_ns`` and ``size`` indeed."""
        if path in self.stale:
            self._analyze_stale(path)
        store = self.index
        found = None
        if store is not None:
            try:
                found = from_store(store)
            except (KeyError, ValueError, IndexFormatError):
                found = None
            self._after_read(store)
        if found is not None and ((found[0], found[1]) == (mtime_ns, size)
                                  or (mtime_ns < 0 and path not in self.stale)):
            # (mtime -1: content an editor handed in, analyzed from those bytes by the edit's drain)
            return found[2], True
        analyzed = self._analyze_now(path, store)
        if analyzed is None:
            return None, False
        structure, read = analyzed
        return from_structure(structure), (read.mtime_ns, read.size) == (mtime_ns, size)

    def structure(self, path: str, *, parse: bool = True) -> FileStructure | None:
        """The current structure of ``path``.

        A file edited since its last analysis is analyzed now; with
        ``parse`` (default) so is a file the store does not hold yet (the
        background build has not reached it).  None for a file that cannot
        be read, or (``parse=False``) is not known yet.
        """
        if path in self.stale:
            self._analyze_stale(path)
        index = self.index
        record = index.record(path) if index is not None else None
        if index is not None:
            self._after_read(index)
        if record is not None:
            return record.structure
        analyzed = self._analyze_now(path, index) if parse else None
        return None if analyzed is None else analyzed[0]

    def _analyze_now(self, path: str, store: StructureIndex | None) -> tuple[FileStructure, Document] | None:
        """``path`` read from disk and analyzed in this thread, its record put in ``store``: ``(structure, the
        document read)``, None when it cannot be read."""
        doc = self.source().read(path)
        if not isinstance(doc, Document):
            return None
        structure = analyze(path, doc.content)
        if store is not None:
            store.put(FileRecord(structure, content_hash(doc.content), doc.mtime_ns, doc.size))
        return structure, doc

    def _after_read(self, index: StructureIndex) -> None:
        """A read found the saved store corrupt (and dropped it): save the store, so that the file on disk, which
        claims to be complete, is not believed again (the next open then analyzes every file)."""
        with self.lock:
            seen = self.drops_saved
            self.drops_saved = index.dropped
        if index.dropped != seen:
            self._schedule_save()

    def close(self) -> None:
        self.build.stop()  # nothing new starts; the analysis under way stops at its next batch
        with self.lock:
            timer = self.drain_timer
        if timer is not None:
            timer.cancel()
        self.build.close()  # waited for within a bound
        self.saver.close()

    def stop(self) -> None:
        """Stop the background analysis at its next batch (at interpreter exit); nothing new starts."""
        self.build.stop()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the analysis thread for at most ``timeout`` s; True when it no longer runs."""
        return self.build.join(timeout)
