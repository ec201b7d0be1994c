"""Bringing an index in line with the files on disk: the diff, an incremental refresh, a full build.

The churn rules are the original's (rebuild when too much of the file set
changed); its token-cost model is not used, because here an update costs
O(the file's own postings), not a pass over shared posting lists.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import itemgetter

from codelex.defaults import FILE_SET_CHURN, STALE_CHURN, STALE_MIN_FILES
from codelex.ingest import CONTENT_SKIPS, Document, SourceFile, WalkResult, read_files
from codelex.lexical import WordIndex
from codelex.project.results import RefreshReport
from codelex.project.state import RootState

__all__ = ["content_skipped", "diff", "full_build", "refresh"]

ProgressCallback = Callable[[int, int, int], object]

_AS_LISTED = itemgetter(0, 2, 1)  # a file table's (path, mtime_ns, size) as a SourceFile's (path, size, mtime_ns)


def content_skipped(index: WordIndex) -> dict[str, list]:
    """Files left out for their content at the last build: ``path -> [mtime_ns, size, reason]``."""
    skipped = index.metadata.get("content_skipped")
    return skipped if isinstance(skipped, dict) else {}


def diff(index: WordIndex, current: dict[str, SourceFile]) -> tuple[list[str], list[str], list[str]]:
    """``(added, removed, stale)`` paths between an index and the files on disk now.

    A file is stale when its size or ``mtime_ns`` differs from what the index
    recorded (per-edit updates record −1, so they count as stale).  A file
    left out for its content last time, and unchanged since, is neither.
    """
    table = index.file_table()
    known_skips = content_skipped(index)

    def unchanged_skip(path: str) -> bool:
        entry = known_skips.get(path)
        f = current[path]
        return isinstance(entry, list) and len(entry) >= 2 and entry[0] == f.mtime_ns and entry[1] == f.size

    # Nothing changed (the common case) is seen in one comparison of the lists, when the index holds the files in
    # the walk's order (a full build does): a large tree's refresh then costs no Python loop over its files.
    listed = [f for f in current.values() if f.path not in known_skips or not unchanged_skip(f.path)] \
        if known_skips else list(current.values())
    if len(listed) == len(table) and listed == list(map(_AS_LISTED, table)):  # (SourceFile: path, size, mtime)
        return [], [], []
    old_set = {path for path, _, _ in table}

    added = [p for p in current if p not in old_set and not unchanged_skip(p)]
    removed = []
    stale = []
    for path, mtime_ns, size in table:
        f = current.get(path)
        if f is None:
            removed.append(path)
        elif mtime_ns != f.mtime_ns or size != f.size:
            stale.append(path)
    stale.sort()  # in path order, as the walk lists them
    return added, removed, stale


def refresh(state: RootState, job: int, index: WordIndex, walk: WalkResult,
            progress: ProgressCallback | None) -> tuple[RefreshReport | None, str | None]:
    """Apply what changed on disk to ``index``; ``(None, reason)`` when a full build is due instead."""
    new = {f.path: f for f in walk.files}
    if index.metadata.get("max_bytes", index.max_bytes) != state.options.max_bytes:
        # Another cap: a file once read and found over the old one is judged again (the walk applied the new one).
        index.metadata["content_skipped"] = {p: e for p, e in content_skipped(index).items()
                                             if not (isinstance(e, list) and e[-1:] == ["too-large"])}
    index.max_bytes = state.options.max_bytes  # (the settings' cap, which the walk applied: a raised one admits)
    added, removed, stale = diff(index, new)
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
        with state.edit_lock:  # (each change of the published index as an edit makes it: see edits_held)
            index.remove(path)
        report.dropped += 1
    to_read = [new[p] for p in sorted(stale + added)]
    stale_set = set(stale)
    read_skipped: Counter = Counter()
    read_ok = set()
    content_skips: dict[str, str] = {}
    max_bytes = state.options.max_bytes
    for doc in read_files(state.root, to_read, max_bytes=max_bytes, skipped=read_skipped, progress=progress,
                          should_continue=lambda: state.build.current(job), on_skip=content_skips.__setitem__):
        with state.edit_lock:
            indexed = index.update(doc.path, doc.content, mtime_ns=doc.mtime_ns)
        if not indexed:  # (over the cap: never reported added)
            read_skipped["too-large"] += 1
            continue
        read_ok.add(doc.path)
        if doc.path in stale_set:
            report.refreshed += 1
        else:
            report.added += 1
    state.check_job(job)
    for f in to_read:
        if f.path in read_ok:
            continue
        # Left out on reading: gone, binary, generated or grown past the cap.
        # Only a transient read failure keeps the old content.
        outcome = state.options.admission.read(f.path)
        with state.edit_lock:
            if isinstance(outcome, Document):  # raced back into existence
                index.update(outcome.path, outcome.content, mtime_ns=outcome.mtime_ns)
            elif outcome != "unreadable" and index.remove(f.path):
                report.dropped += 1
    report.skipped.update(read_skipped)
    report.reused = len(new) - report.refreshed - report.added - sum(read_skipped.values())
    # Remember what was left out for its content; forget files gone or indexed now.
    known = {p: e for p, e in content_skipped(index).items() if p in new and p not in read_ok}
    for p, r in content_skips.items():
        if r in CONTENT_SKIPS:
            known[p] = [new[p].mtime_ns, new[p].size, r]
        else:
            known.pop(p, None)
    index.metadata["content_skipped"] = known  # saved with the index when it changed
    return report, None


def _extracting(docs, seed: dict):
    """The build's items, extracting each file's import references on the way (the contents are in hand)."""
    from codelex.graph import extract_imports, graph_language

    for d in docs:
        if graph_language(d.path) is not None:
            text = d.content.decode("utf-8", "surrogateescape") if isinstance(d.content, bytes) else d.content
            seed[d.path] = (d.mtime_ns, extract_imports(d.path, text))
        yield d.path, d.content, d.mtime_ns


def full_build(state: RootState, job: int, walk: WalkResult, reason: str,
               progress: ProgressCallback | None) -> tuple[WordIndex, RefreshReport]:
    """A fresh index over the walk's files (reading and tokenizing overlap; cancelled builds stop early)."""
    skipped: Counter = Counter(walk.skipped)
    content_skips: dict[str, str] = {}
    max_bytes = state.options.max_bytes
    docs = read_files(state.root, walk.files, max_bytes=max_bytes, skipped=skipped, progress=progress,
                      should_continue=lambda: state.build.current(job), on_skip=content_skips.__setitem__)
    seed: dict | None = {} if state.imports.wanted else None
    items = ((d.path, d.content, d.mtime_ns) for d in docs) if seed is None else _extracting(docs, seed)
    index = WordIndex.build(items, max_bytes=max_bytes)
    state.check_job(job)  # a superseded build stopped reading early: never publish it
    if seed is not None:
        state.imports.seed = (index, seed)
    listed = {f.path: f for f in walk.files}
    index.metadata["content_skipped"] = {
        p: [listed[p].mtime_ns, listed[p].size, r] for p, r in content_skips.items() if r in CONTENT_SKIPS
    }
    report = RefreshReport(mode="full", reason=reason, files=len(index), added=len(index), skipped=skipped,
                           pruned_dirs=Counter(walk.pruned_dirs), truncated=walk.truncated)
    return index, report
