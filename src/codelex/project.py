"""Project lifecycle: open a repository, keep its index fresh and on disk, never block a query.

A :class:`Project` owns one root directory.  Opening it loads the index saved
under the index directory, stats the current files and refreshes only what
changed (or rebuilds when too much did, or when the saved index is
unreadable), then saves.  Opening in the background returns at once; until
an index is available, :meth:`Project.search` answers ``available=False``
with the reason instead of waiting.  Projects of the same root and options
share one state, so one build runs per root however many handles exist.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codelex.errors import IndexFormatError
from codelex.index import Hit, WordIndex, check_search_args
from codelex.render import format_age  # noqa: F401  (re-exported for older imports)
from codelex.walk import (
    DEFAULT_MAX_BYTES,
    Document,
    WalkResult,
    content_skip_reason,
    list_files,
    path_skip_reason,
    read_file,
    read_files,
)

__all__ = ["Coverage", "Project", "RefreshReport", "SearchResult", "refusal_reason"]

log = logging.getLogger("codelex")

INDEX_DIR_NAME = ".codelex"
#: Refresh incrementally unless more than this share of the file set was added or removed...
FILE_SET_CHURN = 0.3
#: ...or at least STALE_MIN_FILES files changed and they are more than this share of the files.
STALE_CHURN = 0.3
STALE_MIN_FILES = 32

HINTS = {
    "building": "The codelex index for this project is being built in the background; retry the query shortly.",
    "refused": "codelex refused to index this directory for safety: {reason}. Open a project directory instead.",
    "last-build-failed": "The last codelex index build failed: {reason}. A retry is now running in the background.",
}

ProgressCallback = Callable[[int, int, int], object]


@dataclass(frozen=True)
class Coverage:
    """How much of the project the index covers."""

    files: int
    truncated: bool


@dataclass(frozen=True)
class SearchResult:
    """The answer of :meth:`Project.search`.

    Attributes
    ----------
    available : bool
        False while no index exists yet (or the root was refused); the query
        then returns at once with ``unavailable_reason`` (``building``,
        ``refused`` or ``last-build-failed``) and a ``hint``.
    results : list of Hit
    coverage : Coverage
    generated_at : float or None
        Unix time at which the index was last built or refreshed.
    """

    available: bool
    query: str
    results: list[Hit]
    coverage: Coverage
    generated_at: float | None = None
    unavailable_reason: str | None = None
    hint: str | None = None

    def to_dict(self) -> dict:
        """The original's wire shape (camelCase keys; optional keys only when set)."""
        out: dict = {
            "available": self.available,
            "query": self.query,
            "results": [h.to_dict() for h in self.results],
            "coverage": {"files": self.coverage.files, "truncated": self.coverage.truncated},
        }
        if self.generated_at is not None:
            out["snapshotGeneratedAt"] = self.generated_at
        if self.unavailable_reason is not None:
            out["unavailableReason"] = self.unavailable_reason
        if self.hint is not None:
            out["hint"] = self.hint
        return out


@dataclass
class RefreshReport:
    """What an open, refresh or rebuild did.

    ``mode`` is ``incremental`` or ``full``; ``reason`` says why a full build
    ran (``no-index``, ``unreadable-index: ...``, ``file-set-churn``,
    ``stale-document-churn``, ``options-changed`` or ``requested``).
    """

    mode: str
    reason: str | None = None
    files: int = 0
    refreshed: int = 0
    added: int = 0
    dropped: int = 0
    reused: int = 0
    skipped: Counter = field(default_factory=Counter)
    pruned_dirs: Counter = field(default_factory=Counter)
    truncated: bool = False
    seconds: float = 0.0
    saved: bool = False


class _Cancelled(Exception):
    pass


# --- where the index lives --------------------------------------------------------


def _slug(root: Path) -> str:
    text = re.sub(r"[^A-Za-z0-9-]", "", str(root).replace("\\", "/").replace("/", "-")).strip("-")[:80]
    return f"{text or 'root'}-{hashlib.sha256(os.fsencode(str(root))).hexdigest()[:12]}"


def _user_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("codelex", appauthor=False)) / "projects"


def _prepare_local_dir(directory: Path) -> bool:
    """Create ``<root>/.codelex`` with a ``.gitignore`` of ``*``; False when not writable."""
    try:
        directory.mkdir(exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by codelex: the index is a cache.\n*\n", encoding="utf-8")
        probe = directory / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


#: Reasons found on reading that stay true until the file changes: such files
#: are remembered (path, mtime, size) so that an open does not re-read them.
CONTENT_SKIPS = frozenset({"binary", "generated", "too-large", "not-a-file"})


def _content_skipped(index: WordIndex) -> dict[str, list]:
    skipped = index.metadata.get("content_skipped")
    return skipped if isinstance(skipped, dict) else {}


def _diff(index: WordIndex, current: dict) -> tuple[list[str], list[str], list[str]]:
    """``(added, removed, stale)`` paths between an index and the files on disk now.

    A file is stale when its size or ``mtime_ns`` differs from what the index
    recorded (per-edit updates record −1, so they count as stale).  A file
    left out for its content last time, and unchanged since, is neither.
    """
    old = index.files
    old_set = set(old)
    known_skips = _content_skipped(index)

    def unchanged_skip(path: str) -> bool:
        entry = known_skips.get(path)
        f = current[path]
        return isinstance(entry, list) and len(entry) >= 2 and entry[0] == f.mtime_ns and entry[1] == f.size

    added = [p for p in current if p not in old_set and not unchanged_skip(p)]
    removed = [p for p in old if p not in current]
    stale = []
    for path, f in current.items():
        if path in old_set:
            info = index.file_info(path)
            if info.mtime_ns != f.mtime_ns or info.size != f.size:
                stale.append(path)
    return added, removed, stale


def best_line_text(root: str | os.PathLike[str], hit: Hit, max_chars: int = 200) -> str:
    """The text of a hit's best line, stripped and cut to ``max_chars`` ("" when unreadable)."""
    try:
        with open(os.path.join(root, hit.file), "rb") as f:
            for number, line in enumerate(f, 1):
                if number == hit.start_line:
                    return line.decode("utf-8", "replace").strip()[:max_chars]
    except OSError:
        pass
    return ""


def _probe_index(directory: Path) -> tuple[os.stat_result | None, str | None]:
    """``(stat of the index file, None)``, ``(None, None)`` when absent, ``(None, why)`` when unreadable.

    A candidate location that cannot be examined (an unreadable shared cache,
    say) is skipped, never fatal.
    """
    try:
        st = os.stat(directory / "index.clx")
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, exc.strerror or type(exc).__name__
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    return st, None


def _signature(directory: Path) -> tuple | None:
    try:
        st = os.stat(directory / "index.clx")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def refusal_reason(root: Path) -> str | None:
    """Why codelex refuses to index ``root`` (a resolved path), or None.

    Roots at or above the home directory are refused: indexing them would
    read a user's whole account.
    """
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):
        return None
    if root == home or root in home.parents:
        return f"root at/above home directory ({root})"
    return None


# --- shared per-root state ---------------------------------------------------------


class _RootState:
    def __init__(self, root: Path, index_dir: Path | None, max_files: int | None, max_bytes: int | None,
                 use_git: bool | None, ignore: tuple[str, ...]) -> None:
        self.root = root
        self.ignore = ignore
        self.explicit_dir = index_dir
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.use_git = use_git
        self.lock = threading.RLock()
        self.done = threading.Condition(self.lock)
        self.index: WordIndex | None = None
        self.status = "idle"  # idle | building | ready | refused | failed | closed
        self.reason: str | None = None
        self.generated_at: float | None = None
        self.truncated = False
        self.report: RefreshReport | None = None
        self.job = 0
        self.thread: threading.Thread | None = None
        self.pending_edits: list[tuple[str, object]] = []
        self.saver = None
        self.saved_dir: Path | None = None
        # Tells this process's saves from another's (see Project.reload_if_changed).
        self.writer = f"{os.getpid()}:{id(self):x}"
        self.disk_signature: tuple | None = None
        # Candidate index locations that could not be examined, with the reason (shown by status).
        self.unreadable_dirs: dict[str, str] = {}

    # The index directory: explicit > $CODELEX_INDEX_DIR/<slug> > <root>/.codelex > user cache/<slug>.
    def candidate_dirs(self) -> list[Path]:
        if self.explicit_dir is not None:
            return [self.explicit_dir]
        env = os.environ.get("CODELEX_INDEX_DIR")
        if env:
            return [Path(env) / _slug(self.root)]
        return [self.root / INDEX_DIR_NAME, _user_cache_dir() / _slug(self.root)]

    def writable_dir(self) -> Path:
        dirs = self.candidate_dirs()
        if self.explicit_dir is None and not os.environ.get("CODELEX_INDEX_DIR"):
            if _prepare_local_dir(dirs[0]):
                return dirs[0]
            return dirs[1]
        return dirs[0]


_states: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_states_lock = threading.Lock()


def _state_for(key: tuple, factory: Callable[[], _RootState]) -> _RootState:
    with _states_lock:
        state = _states.get(key)
        if state is None or state.status == "closed":
            state = factory()
            _states[key] = state
        return state


# --- the project ---------------------------------------------------------------------


class Project:
    """A repository whose index is kept on disk and fresh.

    Parameters
    ----------
    root : str or path-like
        The directory to index.
    index_dir : str or path-like, optional
        Where the index lives.  Default: ``$CODELEX_INDEX_DIR/<slug>`` when
        that variable is set, else ``<root>/.codelex`` (created with a
        ``.gitignore`` of ``*``), else a per-user cache directory when the
        root is not writable.
    max_files : int, optional
        Cap on indexed files (code files are kept first); no cap by default.
    max_bytes : int or None, default 512 KiB
        Larger files are skipped, never read.
    progress : callable, optional
        ``progress(files_done, files_total, bytes_read)`` during builds.
    debounce_ms : float, optional
        Quiet window of the saves after :meth:`on_edit` (see
        :class:`codelex.PersistScheduler`).
    use_git : bool or None
        See :func:`codelex.walk.list_files`.
    ignore : sequence of str
        Extra gitignore-style patterns (relative to the root), on top of the
        repository's own ignore files.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "auth.py").write_text("def authenticate_user(name): ...")
    >>> with Project(root) as project:
    ...     project.open().status
    ...     [hit.file for hit in project.search("authenticate").results]
    'ready'
    ['auth.py']
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        max_files: int | None = None,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        progress: ProgressCallback | None = None,
        debounce_ms: float | None = None,
        use_git: bool | None = None,
        ignore: Sequence[str] = (),
    ) -> None:
        if max_files is not None and (isinstance(max_files, bool) or not isinstance(max_files, int) or max_files < 0):
            raise ValueError(f"max_files must be a non-negative int or None, not {max_files!r}")
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0):
            raise ValueError(f"max_bytes must be a non-negative int or None, not {max_bytes!r}")
        resolved = Path(root).expanduser().resolve()
        if not resolved.is_dir():
            raise NotADirectoryError(f"not a directory: {root}")
        self.root = resolved
        explicit = Path(index_dir).expanduser().resolve() if index_dir is not None else None
        patterns = (ignore,) if isinstance(ignore, str) else tuple(ignore)
        if any(not isinstance(p, str) for p in patterns):
            raise TypeError("ignore patterns must be str")
        key = (resolved, explicit, max_files, max_bytes, use_git, patterns)
        self._state = _state_for(key, lambda: _RootState(resolved, explicit, max_files, max_bytes, use_git, patterns))
        self.progress = progress
        self.debounce_ms = debounce_ms

    # --- status -------------------------------------------------------------------

    @property
    def status(self) -> str:
        """``idle``, ``building``, ``ready``, ``refused``, ``failed`` or ``closed``.

        ``building`` with an index available means a refresh is running while
        the previous index answers queries.
        """
        return self._state.status

    @property
    def status_reason(self) -> str | None:
        """Why the project is ``refused`` or ``failed`` (None otherwise)."""
        return self._state.reason

    @property
    def index(self) -> WordIndex | None:
        """The current index (None until one is available)."""
        return self._state.index

    @property
    def last_report(self) -> RefreshReport | None:
        return self._state.report

    @property
    def coverage(self) -> Coverage:
        state = self._state
        return Coverage(len(state.index) if state.index is not None else 0, state.truncated)

    @property
    def index_dir(self) -> Path:
        """Where the index is (or will be) saved."""
        state = self._state
        return state.saved_dir or state.candidate_dirs()[0]

    # --- opening ------------------------------------------------------------------

    def open(self, wait: bool = True) -> Project:
        """Load, refresh and save the index; in the background when ``wait`` is False.

        With ``wait=True`` this returns once the index is ready (or the build
        was refused or failed: see :attr:`status`).  With ``wait=False`` a
        saved index is loaded at once (memory-mapped) and answers queries
        while it is refreshed in the background; without one, the build runs
        in the background.  A build already running for this root is joined,
        not repeated.
        """
        if not wait:
            self._adopt_saved()
        self._start(full=False, wait=wait, reason=None)
        return self

    def _adopt_saved(self) -> None:
        """Publish the saved index, if any, before its refresh starts."""
        state = self._state
        if state.index is not None or state.status != "idle" or refusal_reason(state.root) is not None:
            return
        index, _ = self._load_saved()
        if index is None:
            return
        with state.lock:
            if state.index is None and state.status == "idle":
                state.index = index
                state.truncated = bool(index.metadata.get("truncated"))
                state.generated_at = index.metadata.get("generated_at")

    def rebuild(self, wait: bool = True) -> Project:
        """Build from scratch, superseding any running build."""
        self._start(full=True, wait=wait, reason="requested", supersede=True)
        return self

    def refresh(self) -> RefreshReport | None:
        """Bring the index in line with the files on disk now (synchronously)."""
        self._start(full=False, wait=True, reason=None, supersede=True)
        return self._state.report

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build; True when none is running (any more)."""
        state = self._state
        deadline = None if timeout is None else time.monotonic() + timeout
        with state.done:
            while state.status == "building":
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                state.done.wait(remaining)
        return True

    def _start(self, *, full: bool, wait: bool, reason: str | None, supersede: bool = False) -> None:
        state = self._state
        with state.lock:
            if state.status == "closed":
                raise RuntimeError("the project is closed")
            refused = refusal_reason(state.root)
            if refused is not None:
                state.status, state.reason = "refused", refused
                state.done.notify_all()
                return
            running = state.status == "building"
            if running and not supersede:
                thread = state.thread
            else:
                state.job += 1
                job = state.job
                state.status, state.reason = "building", None
                if wait:
                    thread = None
                else:
                    thread = threading.Thread(target=self._run, args=(job, full, reason), daemon=True,
                                              name=f"codelex-build-{state.root.name}")
                    state.thread = thread
                    thread.start()
        if wait:
            if running and not supersede:
                self.wait()
            elif thread is None:
                self._run(job, full, reason)

    def _run(self, job: int, full: bool, reason: str | None) -> None:
        state = self._state
        started = time.perf_counter()
        try:
            report = self._build(job, full, reason)
        except _Cancelled:
            return
        except Exception as exc:  # reported through status; never raised into a query
            log.warning("codelex: building the index of %s failed: %s", state.root, exc, exc_info=True)
            with state.lock:
                if state.job == job:
                    state.status, state.reason = "failed", f"{type(exc).__name__}: {exc}"
                    state.done.notify_all()
            return
        report.seconds = time.perf_counter() - started
        with state.lock:
            if state.job == job:
                state.report = report

    def _check(self, job: int) -> None:
        state = self._state
        if state.job != job or state.status == "closed":
            raise _Cancelled

    def _build(self, job: int, full: bool, reason: str | None) -> RefreshReport:
        state = self._state
        index: WordIndex | None = None
        if not full:
            index, reason = self._load_saved()
        self._check(job)
        walk = list_files(state.root, max_bytes=state.max_bytes, max_files=state.max_files, use_git=state.use_git,
                          ignore=state.ignore)
        self._check(job)
        report = None
        skips_before = dict(_content_skipped(index)) if index is not None else None
        if index is not None:
            report, churn = self._refresh(job, index, walk)
            if report is None:
                index, reason = None, churn
        if index is None:
            index, report = self._full_build(job, walk, reason or "no-index")
        self._check(job)
        changed = report.mode == "full" or report.refreshed or report.added or report.dropped \
            or index.metadata.get("truncated") != walk.truncated or _content_skipped(index) != skips_before
        index.metadata.update(root=str(state.root), truncated=walk.truncated, generated_at=time.time(),
                              max_files=state.max_files, max_bytes=state.max_bytes, ignore=list(state.ignore),
                              writer=state.writer)
        self._publish(job, index, walk, report)
        if changed:
            report.saved = self._save(index)
        return report

    def _load_saved(self) -> tuple[WordIndex | None, str | None]:
        state = self._state
        current = state.index
        if current is not None:  # warm: refresh the index in memory rather than the file
            return current, None
        for directory in state.candidate_dirs():
            found, why = _probe_index(directory)
            if why is not None:
                if str(directory) not in state.unreadable_dirs:
                    log.warning("codelex: skipping the index location %s: %s", directory, why)
                state.unreadable_dirs[str(directory)] = why
            if found is None:
                continue
            try:
                index = WordIndex.load(directory)
            except IndexFormatError as exc:
                log.warning("codelex: the saved index in %s is unusable (%s); rebuilding", directory, exc)
                return None, f"unreadable-index: {exc}"
            except OSError as exc:
                log.warning("codelex: cannot read the saved index in %s (%s); rebuilding", directory, exc)
                return None, f"unreadable-index: {exc}"
            meta = index.metadata
            if meta.get("max_files") != state.max_files or meta.get("max_bytes") != state.max_bytes \
                    or meta.get("ignore", []) != list(state.ignore):
                return None, "options-changed"
            state.saved_dir = directory
            state.disk_signature = _signature(directory)
            return index, None
        return None, None

    def _refresh(self, job: int, index: WordIndex, walk: WalkResult) -> tuple[RefreshReport | None, str | None]:
        """Apply what changed on disk to ``index``; ``(None, reason)`` when a full build is due.

        The churn rules are the original's; its token-cost model is not used,
        because here an update costs O(the file's own postings), not a pass
        over shared posting lists.
        """
        state = self._state
        new = {f.path: f for f in walk.files}
        added, removed, stale = _diff(index, new)
        if (len(added) + len(removed)) / max(len(index), len(new), 1) > FILE_SET_CHURN:
            return None, "file-set-churn"
        if len(stale) >= STALE_MIN_FILES and len(stale) / max(len(new), 1) > STALE_CHURN:
            return None, "stale-document-churn"
        # The working copy is private until published; a published index is
        # updated in place (searches see each file's update atomically).
        report = RefreshReport(mode="incremental", files=len(new), truncated=walk.truncated,
                               pruned_dirs=Counter(walk.pruned_dirs))
        report.skipped.update(walk.skipped)
        for path in removed:
            index.remove(path)
            report.dropped += 1
        to_read = [new[p] for p in sorted(stale + added)]
        stale_set = set(stale)
        read_skipped: Counter = Counter()
        read_ok = set()
        content_skips: dict[str, str] = {}
        for doc in read_files(state.root, to_read, max_bytes=state.max_bytes, skipped=read_skipped,
                              progress=self.progress, should_continue=lambda: state.job == job,
                              on_skip=content_skips.__setitem__):
            index.update(doc.path, doc.content, mtime_ns=doc.mtime_ns)
            read_ok.add(doc.path)
            if doc.path in stale_set:
                report.refreshed += 1
            else:
                report.added += 1
        self._check(job)
        for f in to_read:
            if f.path in read_ok:
                continue
            # Left out on reading: gone, binary, generated or grown past the cap.
            # Only a transient read failure keeps the old content.
            outcome = read_file(str(state.root), f.path, state.max_bytes)
            if isinstance(outcome, Document):  # raced back into existence
                index.update(outcome.path, outcome.content, mtime_ns=outcome.mtime_ns)
            elif outcome != "unreadable" and index.remove(f.path):
                report.dropped += 1
        report.skipped.update(read_skipped)
        report.reused = len(new) - report.refreshed - report.added - sum(read_skipped.values())
        # Remember what was left out for its content; forget files gone or indexed now.
        known = {p: e for p, e in _content_skipped(index).items() if p in new and p not in read_ok}
        for p, r in content_skips.items():
            if r in CONTENT_SKIPS:
                known[p] = [new[p].mtime_ns, new[p].size, r]
            else:
                known.pop(p, None)
        index.metadata["content_skipped"] = known  # saved with the index when it changed
        return report, None

    def _full_build(self, job: int, walk: WalkResult, reason: str) -> tuple[WordIndex, RefreshReport]:
        state = self._state
        skipped: Counter = Counter(walk.skipped)
        content_skips: dict[str, str] = {}
        docs = read_files(state.root, walk.files, max_bytes=state.max_bytes, skipped=skipped,
                          progress=self.progress, should_continue=lambda: state.job == job,
                          on_skip=content_skips.__setitem__)
        index = WordIndex.build(((d.path, d.content, d.mtime_ns) for d in docs), max_bytes=state.max_bytes)
        self._check(job)  # a superseded build stopped reading early: never publish it
        listed = {f.path: f for f in walk.files}
        index.metadata["content_skipped"] = {
            p: [listed[p].mtime_ns, listed[p].size, r] for p, r in content_skips.items() if r in CONTENT_SKIPS
        }
        report = RefreshReport(mode="full", reason=reason, files=len(index), added=len(index), skipped=skipped,
                               pruned_dirs=Counter(walk.pruned_dirs), truncated=walk.truncated)
        return index, report

    def _publish(self, job: int, index: WordIndex, walk: WalkResult, report: RefreshReport) -> None:
        state = self._state
        with state.lock:
            self._check(job)
            edits, state.pending_edits = state.pending_edits, []
            for rel, content in edits:  # edits that arrived during the build are newer
                self._apply_edit(index, rel, content)
            state.index = index
            state.truncated = walk.truncated
            state.generated_at = index.metadata.get("generated_at")
            state.status, state.reason = "ready", None
            state.done.notify_all()

    def _save(self, index: WordIndex) -> bool:
        state = self._state
        try:
            directory = state.writable_dir()
            index.metadata["writer"] = state.writer
            index.save(directory)
            state.saved_dir = directory
            state.disk_signature = _signature(directory)
            return True
        except OSError as exc:
            log.warning("codelex: could not save the index of %s: %s", state.root, exc)
            return False

    # --- freshness -----------------------------------------------------------------

    def check(self) -> dict:
        """Compare the index with the files on disk, changing nothing.

        Returns
        -------
        dict
            ``indexed`` (files in the index; None without one), ``stale``,
            ``added`` and ``removed`` (file counts an open would refresh),
            ``index_dir``, ``generated_at``, ``index_bytes`` (on disk).
        """
        state = self._state
        index = state.index
        directory = state.saved_dir
        if index is None:
            index, _ = self._load_saved()
            directory = state.saved_dir
        out: dict = {"index_dir": str(directory or self.index_dir), "indexed": None, "stale": None, "added": None,
                     "removed": None, "generated_at": None, "index_bytes": None,
                     "unreadable_dirs": dict(state.unreadable_dirs)}
        if directory is not None:
            found, _ = _probe_index(directory)
            if found is not None:
                out["index_bytes"] = found.st_size
        if index is None:
            return out
        walk = list_files(state.root, max_bytes=state.max_bytes, max_files=state.max_files, use_git=state.use_git,
                          ignore=state.ignore)
        added, removed, stale = _diff(index, {f.path: f for f in walk.files})
        out.update(indexed=len(index), stale=len(stale), added=len(added), removed=len(removed),
                   generated_at=index.metadata.get("generated_at"))
        return out

    def reload_if_changed(self) -> bool:
        """Adopt an index that another process saved since this one last read or wrote it.

        Cheap when nothing changed (one ``stat``).  Returns True when a newer
        index was loaded and published.
        """
        state = self._state
        directory = state.saved_dir
        if directory is None or state.status in ("building", "closed"):
            return False
        signature = _signature(directory)
        if signature is None or signature == state.disk_signature:
            return False
        from codelex.store import read_header

        try:
            header = read_header(directory)
        except (IndexFormatError, OSError):
            return False
        if header.get("metadata", {}).get("writer") == state.writer:  # our own debounced save
            state.disk_signature = signature
            return False
        try:
            index = WordIndex.load(directory)
        except (IndexFormatError, OSError) as exc:
            log.warning("codelex: ignoring the index another process wrote to %s: %s", directory, exc)
            state.disk_signature = signature
            return False
        with state.lock:
            if state.status in ("building", "closed"):
                return False
            index.metadata["writer"] = state.writer
            state.index = index
            state.truncated = bool(index.metadata.get("truncated"))
            state.generated_at = index.metadata.get("generated_at")
            state.disk_signature = signature
            if state.saver is not None:
                state.saver.cancel()
                state.saver.close()
                state.saver = None
        return True

    # --- queries --------------------------------------------------------------------

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
    ) -> SearchResult:
        """Rank files for ``query`` without ever waiting for a build.

        Parameters are those of :meth:`codelex.WordIndex.search`.  When no
        index is available the result says why; after a failed build the
        same call starts a retry in the background.

        Raises
        ------
        TypeError, codelex.QueryError
            As :meth:`codelex.WordIndex.search` does, also while unavailable.
        """
        state = self._state
        index = state.index
        if index is not None:
            results = index.search(query, limit=limit, paths=paths, lang=lang, centrality=centrality,
                                   demote_test_vendor=demote_test_vendor, demote_docs=demote_docs)
            return SearchResult(True, query, results, Coverage(len(index), state.truncated), state.generated_at)
        check_search_args(query, limit, paths, lang)  # unavailable: still reject a malformed query
        with state.lock:
            status, reason = state.status, state.reason
        if status == "refused":
            why = "refused"
        elif status == "failed":
            why = "last-build-failed"
            self.open(wait=False)
        else:
            why = "building"
            if status == "idle":
                self.open(wait=False)
        return SearchResult(False, query, [], Coverage(0, False), None, why, HINTS[why].format(reason=reason))

    # --- per-edit upkeep ----------------------------------------------------------

    def on_edit(self, path: str | os.PathLike[str], content: str | bytes | None = None) -> bool:
        """Bring one file up to date after an edit, then schedule a debounced save.

        Parameters
        ----------
        path : str or path-like
            Absolute, or relative to the root.
        content : str or bytes, optional
            The new content; read from disk when omitted (a file that no
            longer exists, or is no longer admissible, is removed).

        Returns
        -------
        bool
            True when the file is indexed after the call.

        Raises
        ------
        ValueError
            When ``path`` is outside the root or contains NUL.
        TypeError
            When ``content`` is neither str, bytes nor None.
        """
        if content is not None and not isinstance(content, (str, bytes)):
            raise TypeError(f"content must be str, bytes or None, not {type(content).__name__}")
        rel = self._relative(path)
        state = self._state
        with state.lock:
            if state.status == "building":
                state.pending_edits.append((rel, content))
            index = state.index
            if index is None:
                return False
            indexed = self._apply_edit(index, rel, content)
        self._schedule_save(index)
        return indexed

    def _relative(self, path: str | os.PathLike[str]) -> str:
        text = os.fspath(path)
        if "\x00" in text:
            raise ValueError("path contains a NUL character")
        p = Path(text)
        if not p.is_absolute():
            p = self.root / p
        p = Path(os.path.normpath(p))
        try:
            rel = p.relative_to(self.root)
        except ValueError:
            raise ValueError(f"{path} is outside the project root {self.root}") from None
        return rel.as_posix()

    def _apply_edit(self, index: WordIndex, rel: str, content) -> bool:
        state = self._state
        if path_skip_reason(rel) is not None:
            index.remove(rel)
            return False
        if content is None:
            outcome = read_file(str(state.root), rel, state.max_bytes)
            if isinstance(outcome, Document):
                return index.update(rel, outcome.content, mtime_ns=outcome.mtime_ns)
            if outcome != "unreadable":
                index.remove(rel)
                return False
            return rel in index
        head = content[:8192] if isinstance(content, bytes) else content[:8192].encode("utf-8", "surrogatepass")
        if content_skip_reason(head) is not None:
            index.remove(rel)
            return False
        return index.update(rel, content)  # mtime unknown (-1): the next open re-reads it

    def _schedule_save(self, index: WordIndex) -> None:
        state = self._state
        from codelex.store import PersistScheduler

        with state.lock:
            if state.saver is None or state.saver.index is not index:
                if state.saver is not None:
                    state.saver.close()
                state.saver = PersistScheduler(index, state.writable_dir(), debounce_ms=self.debounce_ms)
            saver = state.saver
        saver.schedule()

    # --- shutdown -------------------------------------------------------------------

    def close(self) -> None:
        """Cancel a running build (it never publishes), flush a pending save, release the root."""
        state = self._state
        with state.lock:
            if state.status == "closed":
                return
            state.job += 1  # supersedes a running build
            state.status = "closed"
            state.done.notify_all()
            thread, saver = state.thread, state.saver
            state.saver = None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        if saver is not None:
            saver.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Project {self.root} status={self.status} files={self.coverage.files}>"
