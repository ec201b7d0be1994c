"""The state shared by every handle on one root: its index, status, running build and saver.

Projects of the same root and arguments share one :class:`RootState`, so one
build runs per root however many handles exist; the registry holds the
states weakly, so a root nobody holds is forgotten.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codelex.ingest.admission import Admission
from codelex.lexical import WordIndex
from codelex.defaults import STRUCTURE_FILE
from codelex.persist.layout import index_locations, probe_index, writable_dir
from codelex.project.docs_upkeep import DocsUpkeep
from codelex.project.results import RefreshReport
from codelex.project.code import CodeUpkeep
from codelex.project.graph_upkeep import GraphUpkeep
from codelex.project.jobs import Cancelled, DebouncedSaver, Job
from codelex.project.structure import StructureUpkeep

__all__ = ["Cancelled", "RootOptions", "RootState", "state_for"]

log = logging.getLogger("codelex")


@dataclass(frozen=True)
class RootOptions:
    """What a root's index is built with (saved with it: other options mean a rebuild)."""

    root: Path
    index_dir: Path | None
    max_files: int | None
    max_bytes: int | None
    use_git: bool | None
    ignore: tuple[str, ...]
    include: tuple[str, ...] = ()
    kinds: tuple[str, ...] | None = None  # KINDS keys to index; None: every kind

    @functools.cached_property
    def admission(self) -> Admission:
        """Which files of the root are indexed: the one :class:`codelex.ingest.Admission` the walk, per-edit
        upkeep and the watcher all ask (new options, a new one)."""
        return Admission.of_options(self)

    @functools.cached_property
    def documentation(self) -> Admission:
        """Which files docs search reads: the admission's documentation (:meth:`Admission.documentation`)."""
        return self.admission.documentation()


class RootState:
    """Mutable per-root state; every field is read and written under :attr:`lock`."""

    def __init__(self, options: RootOptions) -> None:
        self.options = options
        self.root = options.root
        self.lock = threading.RLock()
        # One edit at a time, from its read to its last stage: two edits of one file interleaved could leave the
        # structure and the graph with the older bytes while the word index has the newer (review finding).
        self.edit_lock = threading.RLock()
        # The index build: its state word is the root's status (idle | building | ready | refused | failed |
        # closed), published with the index under the same lock.
        self.build = Job(f"building the index of {self.root}", lock=self.lock)
        self.done = self.build.done
        # The word index published last and its publication number in this process (see :attr:`index`).
        self._published: tuple[WordIndex | None, int] = (None, 0)
        self.generated_at: float | None = None
        self.truncated = False
        self.report: RefreshReport | None = None
        self.pending_edits: list[tuple[str, object]] = []
        self.saver = DebouncedSaver(self.writable_dir)  # the index's debounced save after edits
        self.saved_dir: Path | None = None
        # Tells this process's saves from another's (see Project.reload_if_changed).
        self.writer = f"{os.getpid()}:{id(self):x}"
        self.disk_signature: tuple | None = None
        # Candidate index locations that could not be examined, with the reason (shown by status).
        self.unreadable_dirs: dict[str, str] = {}
        self.watcher = None  # a ProjectWatcher once a watched handle opened the root
        self.imports = GraphUpkeep(self.root, self.lock)  # the import graph (codelex.graph) and its job
        self.watch_failure: str | None = None  # why the watcher could not start
        # (signature of the configuration files, effective settings) that ``options`` were derived from: the
        # project compares the signature on each request and re-derives the options when it moved.
        self.config: tuple[tuple, dict] | None = None
        # Both read every file through the admission of the options in force (followed as they change).
        self.structure = StructureUpkeep(self.root, self.admission, self.writable_dir)
        self.code = CodeUpkeep(self.root, self.admission, self.writable_dir)
        self.docs = DocsUpkeep(self.root, lambda: self.options, self.writable_dir)  # the documentation's sections

    def admission(self):
        """The admission of the options in force: what every stage reads a file through."""
        return self.options.admission

    @property
    def index(self) -> WordIndex | None:
        """The word index published last (None while there is none)."""
        return self._published[0]

    @index.setter
    def index(self, value: WordIndex | None) -> None:
        # Each index published is a new generation: its number goes with it, read together (one tuple).
        held, number = self._published
        self._published = (value, number + 1 if value is not None and value is not held else number)

    def published(self) -> tuple[WordIndex | None, int]:
        """``(index, number)``: the index published last and how many indexes this process published up to it."""
        return self._published

    def candidate_dirs(self) -> list[Path]:
        """The usable index directories, best first; the refused ones are noted for ``status``."""
        dirs, refused = index_locations(self.root, self.options.index_dir)
        for directory, why in refused.items():
            if self.unreadable_dirs.get(directory) != why:
                log.info("codelex: not using %s as an index directory: %s", directory, why)
                self.unreadable_dirs[directory] = why
        return dirs

    def preferred_dir(self) -> Path | None:
        """Where the index is, else the best usable location for it; None when no location is usable."""
        if self.saved_dir is not None:
            return self.saved_dir
        dirs = self.candidate_dirs()
        return dirs[0] if dirs else None

    def structure_dir(self) -> Path | None:
        """Where the structure store is: the index's directory, else the first candidate holding an index or
        a store (None: neither is saved anywhere yet)."""
        if self.saved_dir is not None:
            return self.saved_dir
        for directory in self.candidate_dirs():
            if probe_index(directory)[0] is not None or probe_index(directory, STRUCTURE_FILE)[0] is not None:
                return directory
        return None

    def writable_dir(self) -> Path:
        """Where to save: where the last save went, else the first writable candidate."""
        return self.saved_dir or writable_dir(self.root, self.options.index_dir)

    @property
    def status(self) -> str:
        """The build job's state word: ``idle``, ``building``, ``ready``, ``refused``, ``failed`` or ``closed``."""
        return self.build.state

    @status.setter
    def status(self, value: str) -> None:
        self.build.state = value

    @property
    def reason(self) -> str | None:
        """Why the root is ``refused`` or ``failed``."""
        return self.build.reason

    @reason.setter
    def reason(self, value: str | None) -> None:
        self.build.reason = value

    def check_job(self, job: int) -> None:
        """Raise :class:`Cancelled` when ``job`` is no longer the current build."""
        if not self.build.current(job) or self.status == "closed":
            raise Cancelled


_states: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_states_lock = threading.Lock()


def state_for(options: RootOptions, factory: Callable[[], RootState] | None = None, key=None) -> RootState:
    """The live state of ``options``' root (a new one when none is open, or it was closed).

    States are shared by ``key`` (default: the options themselves); a
    project passes what it was asked for, since the options it derives
    from the configuration files change with them.
    """
    key = options if key is None else key
    with _states_lock:
        state = _states.get(key)
        if state is None or state.status == "closed":
            state = factory() if factory is not None else RootState(options)
            _states[key] = state
        return state
