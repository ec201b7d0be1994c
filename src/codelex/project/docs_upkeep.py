"""A root's documentation sections as a stage of their own: a job reads them, the edits keep them.

:class:`DocsUpkeep` holds one root's :class:`~codelex.docs.DocsIndex`.  Its
first reading walks the root through the root's documentation admission
(:attr:`codelex.project.state.RootOptions.documentation`: the project's
ignore and include patterns, size cap and ``use_git``; documentation's file
names in place of the code kinds) as a background job; the watcher's
batches, the same the word index, the structure and the import graph take,
mark files changed, and the next read applies them, parsing those files
alone.  A project that is not watched checks its docs against the disk when
they were last checked longer than :data:`~codelex.defaults.DOCS_TTL_S`
ago.  Each index published is a generation (:attr:`DocsUpkeep.version`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from codelex.defaults import DOCS_TTL_S
from codelex.languages import is_documentation
from codelex.project.jobs import Job

__all__ = ["DocsUpkeep"]


def _key(options) -> tuple:
    """What the documentation read depends on (other settings: read again from the walk)."""
    return options.ignore, options.include, options.max_bytes, options.use_git, options.index_dir


class DocsUpkeep:
    """One root's documentation sections, their job and the edits not applied yet (see the module docstring).

    Parameters
    ----------
    root : Path
    options : callable
        ``options()``: the root's :class:`~codelex.project.state.RootOptions` in force.
    directory : callable
        ``directory()``: where the docs store is kept (the index directory).
    """

    def __init__(self, root: Path, options: Callable[[], object], directory: Callable[[], Path]) -> None:
        self.root = root
        self.options = options
        self.directory = directory
        self.lock = threading.RLock()
        self.job = Job(f"reading the documentation of {root}", lock=self.lock)
        self.index = None  # the DocsIndex published last
        self.key: tuple | None = None  # the settings it was read under
        self.changed: set[str] = set()  # files edited since (applied at the next read)
        self.checked = 0.0  # when it was last brought in line with the disk (monotonic)
        self.version = 0  # how many indexes were published: the docs' generation

    def on_edit(self, rel: str) -> None:
        """Note that ``rel`` changed (or appeared, or went): the next read parses it again, or drops it.  Only
        a documentation file's name is kept (a code file's edit is none of this stage's)."""
        if not is_documentation(rel):
            return
        with self.lock:
            self.changed.add(rel)

    def on_gone_dir(self, directory: str) -> None:
        """Note that ``directory`` went: its documents are dropped at the next read."""
        prefix = directory + "/"
        with self.lock:
            if self.index is not None:
                self.changed.update(p for p in self.index.paths if p.startswith(prefix))

    def current(self, *, watched: bool, timeout: float | None):
        """The documentation as it is now: every edit so far applied (a watched root), or checked against the
        disk past the TTL (an unwatched one); the first reading started as the job and waited for at most
        ``timeout`` s.

        Raises
        ------
        TimeoutError
            When the first reading has not finished within ``timeout``.
        OSError
            When it failed (the next call tries again).
        """
        options = self.options()
        key = _key(options)
        with self.lock:
            if self.index is not None and self.key == key:
                return self._brought_up(options, watched)
            if self.job.state != self.job.busy:
                self.job.start(self._read, options, key, name="codelex-docs")
        job = self.job
        if not job.wait_until(lambda: (self.key == key and self.index is not None) or job.state != job.busy,
                              timeout):
            raise TimeoutError(f"the documentation of {self.root} is still being read")
        with self.lock:
            if self.index is None or self.key != key:
                raise OSError(f"reading the documentation of {self.root} failed: "
                              f"{self.job.error or self.job.reason or 'it was superseded'}")
            return self._brought_up(options, watched)

    def _brought_up(self, options, watched: bool):
        """(Under the lock.)  The index with the edits applied, or checked against the disk past the TTL."""
        if self.changed:
            changed, self.changed = self.changed, set()
            updated = self.index.updated(options.documentation, changed)
            if updated is not self.index:
                self.index, self.version = updated, self.version + 1
        elif not watched and time.monotonic() - self.checked >= DOCS_TTL_S:
            from codelex.docs import DocsIndex

            walked = DocsIndex.for_project(self.root, index_dir=self.directory(), previous=self.index,
                                           admission=options.documentation, use_git=options.use_git)
            self.checked = time.monotonic()
            if walked is not self.index:
                self.index, self.version = walked, self.version + 1
        return self.index

    def _read(self, generation: int, options, key: tuple) -> None:
        """The job's run: walk and read the documentation (the docs store spares unchanged files), publish it."""
        from codelex.docs import DocsIndex

        index = DocsIndex.for_project(self.root, index_dir=self.directory(), admission=options.documentation,
                                      use_git=options.use_git)
        with self.lock:
            self.job.check(generation)
            self.index, self.key, self.checked = index, key, time.monotonic()
            self.version += 1
            self.job.finish(generation, "ready")

    def status(self) -> dict:
        """``state`` (the job's), and the documents and sections held when read."""
        with self.lock:
            out = dict(self.job.status(), version=self.version)
            if self.index is not None:
                out.update(files=self.index.files, sections=len(self.index))
            return out

    def close(self) -> None:
        self.job.close()
