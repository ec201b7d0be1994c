"""A root's build lifecycle: load the saved index, walk, refresh or rebuild, publish, save.

One build runs per root at a time.  A build started while another runs
joins it, unless it supersedes it (``rebuild``, ``refresh``); a superseded
or cancelled build stops reading and never publishes.  Failures are
reported through the state's status, never raised into a query.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from codelex.errors import IndexFormatError
from codelex.ingest import WalkResult, list_files
from codelex.lexical import WordIndex
from codelex.persist.container import UntrustedIndexError
from codelex.persist.layout import index_signature, make_private, probe_index
from codelex.persist.listing import load_listing, save_listing
from codelex.project.edits import apply_edit
from codelex.project.refresh import content_skipped, diff, full_build, refresh
from codelex.project.results import RefreshReport
from codelex.project.roots import refusal_reason
from codelex.project.state import RootState

__all__ = ["adopt_saved", "availability", "check", "close", "load_saved", "reload_if_changed", "skipped_files", "start",
           "wait"]

log = logging.getLogger("codelex")

ProgressCallback = Callable[[int, int, int], object]


def start(state: RootState, *, full: bool, wait_for_it: bool, reason: str | None, supersede: bool = False,
          progress: ProgressCallback | None = None, structure: bool = True) -> None:
    """Start (or join) a build of ``state``'s root; in this thread when ``wait_for_it``."""
    build = state.build
    with state.lock:
        if state.status == "closed":
            raise RuntimeError("the project is closed")
        refused = refusal_reason(state.root)
        if refused is not None:
            state.status, state.reason = "refused", refused
            state.done.notify_all()
            return
        joining = state.status == "building" and not supersede
        if not joining:
            job = build.begin()  # supersedes a running build: it stops at its next check, never publishing
            if not wait_for_it:
                build.spawn(job, _run, state, full, reason, progress, structure,
                            name=f"codelex-build-{state.root.name}")
    if wait_for_it:
        if joining:
            wait(state)
        else:
            build.run(job, _run, state, full, reason, progress, structure)


def wait(state: RootState, timeout: float | None = None) -> bool:
    """Wait for a running build; True when none is running (any more)."""
    return state.build.wait(timeout)


def _run(job: int, state: RootState, full: bool, reason: str | None, progress: ProgressCallback | None,
         structure: bool = True) -> None:
    """The build job's run (see :meth:`codelex.project.jobs.Job.run`: a failure is reported through the status)."""
    started = time.perf_counter()
    report = _build(state, job, full, reason, progress, structure)
    report.seconds = time.perf_counter() - started
    with state.lock:
        if state.build.current(job):
            state.report = report
            state.build.done.notify_all()  # (a wait for the report, Job.wait_until, asks again now)


def _build(state: RootState, job: int, full: bool, reason: str | None,
           progress: ProgressCallback | None, structure: bool) -> RefreshReport:
    opts = state.options
    index: WordIndex | None = None
    if not full:
        index, reason = load_saved(state)
    state.check_job(job)
    # With an index to refresh, the last walk's record may spare this one (see ingest.ListingRecord).
    previous = load_listing(state.saved_dir) if index is not None and state.saved_dir is not None else None
    walk = list_files(state.root, max_files=opts.max_files, use_git=opts.use_git, previous=previous,
                      admission=opts.admission)
    state.check_job(job)
    report = None
    skips_before = dict(content_skipped(index)) if index is not None else None
    if index is not None:
        try:
            report, churn = refresh(state, job, index, walk, progress)
        except IndexFormatError as exc:  # a chunk read by the refresh failed its digest: rebuild
            log.warning("codelex: the saved index of %s is corrupt (%s); rebuilding it", state.root, exc)
            with state.lock:
                if state.index is index:
                    state.index = None
            report, churn = None, "corrupt-index"
        if report is None:
            index, reason = None, churn
    if index is None:
        index, report = full_build(state, job, walk, reason or "no-index", progress)
    state.check_job(job)
    settings = dict(max_files=opts.max_files, max_bytes=opts.max_bytes, ignore=list(opts.ignore),
                    include=list(opts.include), kinds=list(opts.kinds) if opts.kinds is not None else None)
    changed = report.mode == "full" or report.refreshed or report.added or report.dropped \
        or index.metadata.get("truncated") != walk.truncated or content_skipped(index) != skips_before \
        or any(index.metadata.get(k) != v for k, v in settings.items())  # (new settings: saved with them)
    index.metadata.update(root=str(state.root), truncated=walk.truncated, generated_at=time.time(),
                          writer=state.writer, **settings)
    _publish(state, job, index, walk, changed)
    if changed:
        report.save_error = save(state, index)
        report.saved = report.save_error is None
    if walk.record is not None and not walk.cached and state.saved_dir is not None \
            and report.save_error is None:  # (a save that just failed, e.g. on a held lock: no second wait)
        try:
            save_listing(walk.record, state.saved_dir)
        except OSError as exc:  # a cache: the next open walks again
            log.info("codelex: could not save the listing cache in %s: %s", state.saved_dir, exc)
    state.check_job(job)
    if structure:  # the structure follows in the background (worker processes); queries never wait for it
        state.structure.refresh(walk.files, state.preferred_dir())
    return report


def availability(state: RootState) -> tuple[str, str | None, bool]:
    """Why no index answers yet: ``(why, reason, start)``, ``why`` being ``refused``, ``last-build-failed`` or
    ``building`` (see :data:`codelex.project.results.HINTS`), ``reason`` the status's, ``start`` whether the
    caller should start a build in the background (an idle root, or a retry after a failed build)."""
    with state.lock:
        status, reason = state.status, state.reason
        if status == "idle":
            refused = refusal_reason(state.root)
            if refused is not None:
                state.status, state.reason = status, reason = "refused", refused
    if status == "refused":
        return "refused", reason, False
    if status == "failed":
        return "last-build-failed", reason, True
    return "building", reason, status == "idle"


def check(state: RootState, index_dir, config: dict) -> dict:
    """Compare the index with the files on disk, changing nothing (see :meth:`codelex.Project.check`)."""
    index = state.index
    directory = state.saved_dir
    if index is None:
        index, _ = load_saved(state)
        directory = state.saved_dir
    out: dict = {"index_dir": str(directory or index_dir), "indexed": None, "stale": None, "added": None,
                 "removed": None, "generated_at": None, "index_bytes": None,
                 "unreadable_dirs": dict(state.unreadable_dirs), "config": dict(config)}
    if directory is not None:
        found, _ = probe_index(directory)
        if found is not None:
            out["index_bytes"] = found.st_size
    if index is None:
        return out
    opts = state.options
    walk = list_files(state.root, max_files=opts.max_files, use_git=opts.use_git, admission=opts.admission)
    added, removed, stale = diff(index, {f.path: f for f in walk.files})
    out.update(indexed=len(index), stale=len(stale), added=len(added), removed=len(removed),
               generated_at=index.metadata.get("generated_at"), skipped=skipped_files(walk, index, opts.max_bytes))
    return out


#: What a file the settings admit but the index leaves out was skipped for, in words (``skipped_files``).
SKIP_WORDS = {"binary": "binary content", "generated": "a generated-code header", "not-a-file": "not a regular file"}


def skipped_files(walk: WalkResult, index: WordIndex, max_bytes: int | None) -> dict[str, str]:
    """The files every rule but their size or content admits, by path, with why the index leaves them out:
    over the size cap (the walk's, by name), or binary or generated content (found when last read)."""
    out = {path: f"over max_bytes {max_bytes} ({size:,} bytes)" for path, size in walk.too_large.items()}
    listed = {f.path for f in walk.files}
    for path, entry in content_skipped(index).items():
        if path in listed and path not in index and isinstance(entry, list) and entry:
            reason = entry[-1]
            out[path] = f"over max_bytes {max_bytes} when read" if reason == "too-large" else \
                SKIP_WORDS.get(reason, str(reason))
    return dict(sorted(out.items()))


def load_saved(state: RootState) -> tuple[WordIndex | None, str | None]:
    """The index to refresh: the one in memory, else the saved one; ``(None, reason)`` to rebuild."""
    current = state.index
    if current is not None:  # warm: refresh the index in memory rather than the file
        return current, None
    opts = state.options
    for directory in state.candidate_dirs():
        found, why = probe_index(directory)
        if why is not None:
            if str(directory) not in state.unreadable_dirs:  # (`status` lists these)
                log.info("codelex: skipping the index location %s: %s", directory, why)
            state.unreadable_dirs[str(directory)] = why
        if found is None:
            continue
        try:
            index = WordIndex.load(directory, trusted_only=True)
        except UntrustedIndexError as exc:  # committed, copied or forged: built afresh, never believed
            log.warning("codelex: the saved index in %s was not written by this user (%s); rebuilding", directory, exc)
            return None, "untrusted-index"
        except IndexFormatError as exc:
            log.warning("codelex: the saved index in %s is unusable (%s); rebuilding", directory, exc)
            return None, f"unreadable-index: {exc}"
        except OSError as exc:
            log.warning("codelex: cannot read the saved index in %s (%s); rebuilding", directory, exc)
            return None, f"unreadable-index: {exc}"
        meta = index.metadata
        # (another max_bytes needs no rebuild: the refresh lists with the new cap and reads what it admits)
        if meta.get("max_files") != opts.max_files \
                or meta.get("ignore", []) != list(opts.ignore) or meta.get("include", []) != list(opts.include) \
                or meta.get("kinds") != (list(opts.kinds) if opts.kinds is not None else None):
            return None, "options-changed"
        state.saved_dir = directory
        state.disk_signature = index_signature(directory)
        make_private(directory)  # (modes loosened since the save: owner-only again now, not at the next save)
        _expect_edits(state, index)
        return index, None
    return None, None


def _expect_edits(state: RootState, index: WordIndex) -> None:
    """A watched root's loaded index will receive edits: ready it for them off this thread (a native thread
    verifies the term dictionary the first edits would touch; see WordIndex.prepare_edits)."""
    if state.watcher is not None:
        index.prepare_edits()


def adopt_saved(state: RootState) -> None:
    """Publish the saved index, if any, before its refresh starts (a background open answers at once)."""
    if state.index is not None or state.status != "idle" or refusal_reason(state.root) is not None:
        return
    index, _ = load_saved(state)
    if index is None:
        return
    with state.lock:
        if state.index is None and state.status == "idle":
            state.index = index
            state.truncated = bool(index.metadata.get("truncated"))
            state.generated_at = index.metadata.get("generated_at")


def _publish(state: RootState, job: int, index: WordIndex, walk: WalkResult, changed: bool = True) -> None:
    with state.lock:
        state.check_job(job)
        if changed or index is not state.index:  # files changed outside per-edit upkeep: derive the graph again
            state.imports.drop()
        edits, state.pending_edits = state.pending_edits, []
        for rel, content in edits:  # edits that arrived during the build are newer
            apply_edit(state, index, rel, content)
        state.index = index
        state.truncated = walk.truncated
        state.generated_at = index.metadata.get("generated_at")
        state.status, state.reason = "ready", None
        state.done.notify_all()


def save(state: RootState, index: WordIndex) -> str | None:
    """Save ``index`` to the root's writable index directory; None, or why that failed (also logged)."""
    directory = None
    try:
        directory = state.writable_dir()
        index.metadata["writer"] = state.writer
        index.save(directory)
        state.saved_dir = directory
        state.disk_signature = index_signature(directory)
        return None
    except OSError as exc:
        where = f" in {directory}" if directory is not None else ""
        log.info("codelex: could not save the index of %s%s: %s", state.root, where, exc)
        return f"could not save the index{where}: {exc.strerror or exc}"


def reload_if_changed(state: RootState) -> bool:
    """Adopt an index that another process saved since this one last read or wrote it.

    Cheap when nothing changed (one ``stat``).  Returns True when a newer
    index was loaded and published.
    """
    directory = state.saved_dir
    if directory is None or state.status in ("building", "closed"):
        return False
    signature = index_signature(directory)
    if signature is None or signature == state.disk_signature:
        return False
    from codelex.persist.lexical import read_lexical_header

    try:
        header = read_lexical_header(directory)
    except (IndexFormatError, OSError):
        return False
    if header.get("metadata", {}).get("writer") == state.writer:  # our own debounced save
        state.disk_signature = signature
        return False
    try:
        index = WordIndex.load(directory, trusted_only=True)
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
        state.imports.drop()  # (another process's files: the graph is derived again, or its saved counts taken)
    state.saver.cancel()
    _expect_edits(state, index)
    return True


def close(state: RootState) -> None:
    """Cancel a running build (it never publishes), flush a pending save, release the root."""
    with state.lock:
        if state.status == "closed":
            return
        watcher, state.watcher = state.watcher, None
    if watcher is not None:  # first: its last changes are applied and saved with the rest
        watcher.stop()
    with state.lock:
        if state.status == "closed":
            return
        state.build.cancel(state="closed")  # supersedes a running build
    state.build.close()  # (cancelled above: it stops at its next check; waited for within a bound)
    state.saver.close()
    state.structure.close()
    state.code.close()
    state.imports.close()
    state.docs.close()
