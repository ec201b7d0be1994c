"""Per-edit upkeep: one file brought up to date, then a debounced save."""

from __future__ import annotations

import os
from pathlib import Path

from codelex.ingest import Document, content_skip_reason, path_skip_reason, read_file
from codelex.ingest.rules import BINARY_PROBE_BYTES
from codelex.lexical import WordIndex
from codelex.project.state import RootState
from codelex.safefs import contained_relative, list_directory

__all__ = ["apply_changes", "apply_edit", "edit", "relative_path", "schedule_save", "watch_admits"]


def relative_path(root: Path, path: str | os.PathLike[str]) -> str:
    """``path`` (absolute, or relative to ``root``) as a root-relative ``/`` path.

    The containment rule of :func:`codelex.safefs.contained_relative`
    (lexical: what the path names is checked when it is opened).

    Raises
    ------
    codelex.UnsafePathError
        A ``ValueError``: ``path`` is outside ``root``, is ``root`` itself
        or contains NUL.
    """
    return contained_relative(root, path)


def apply_edit(state: RootState, index: WordIndex, rel: str, content: str | bytes | None) -> bool:
    """Index ``rel``'s new content (read from disk when None); True when it is indexed afterwards.

    A path the admission rules leave out, a file that vanished and content
    that is binary or generated remove the document instead.
    """
    if path_skip_reason(rel) is not None or not state.options.admits(rel):
        index.remove(rel)
        return False
    if content is None:
        outcome = read_file(str(state.root), rel, state.options.max_bytes)
        if isinstance(outcome, Document):
            return index.update(rel, outcome.content, mtime_ns=outcome.mtime_ns)
        if outcome != "unreadable":
            index.remove(rel)
            return False
        return rel in index
    head = content[:BINARY_PROBE_BYTES]
    if isinstance(head, str):
        head = head.encode("utf-8", "surrogatepass")
    if content_skip_reason(head) is not None:
        index.remove(rel)
        return False
    return index.update(rel, content)  # mtime unknown (-1): the next open re-reads it


def schedule_save(state: RootState, index: WordIndex, debounce_ms: float | None) -> None:
    """Note that ``index`` changed: one save after the quiet window (see :class:`codelex.PersistScheduler`)."""
    state.saver.schedule(index, debounce_ms)


def edit(state: RootState, rel: str, content: str | bytes | None, debounce_ms: float | None) -> bool:
    """One edit of the project (see :meth:`codelex.Project.on_edit`); True when ``rel`` is indexed afterwards."""
    with state.lock:
        if state.status == "building":
            state.pending_edits.append((rel, content))
        index = state.index
        if index is None:
            return False
        indexed = apply_edit(state, index, rel, content)
    if indexed:
        state.structure.mark_stale(rel, content, debounce_ms)
    else:
        state.structure.remove(rel)
    state.imports.on_edit(rel, content if indexed else None, indexed)
    schedule_save(state, index, debounce_ms)
    return indexed


def watch_admits(state: RootState, oracle, rel: str, is_dir: bool) -> bool:
    """Whether a watched path may concern the index: the walk's rules, the ignore files and settings."""
    from codelex.ingest.rules import dir_reason

    if is_dir:
        if any(dir_reason(part) is not None for part in rel.split("/")):
            return False
    elif path_skip_reason(rel) is not None or not state.options.admits(rel):
        return False
    return not oracle.ignored(rel, is_dir)


def apply_changes(state: RootState, changes, oracle, debounce_ms: float | None) -> None:
    """A watcher's batch: each changed file re-read (or removed), directories that appeared walked,
    the indexed files under directories that went removed."""
    files = set(changes.files)
    index = state.index
    for gone in changes.gone_dirs:
        prefix = gone + "/"
        if index is not None:
            files.update(f for f in index.files if f.startswith(prefix))
    root = str(state.root)
    for new in changes.new_dirs:
        # Walked from descriptors (safefs): a new directory that is, or turned into, a symbolic link is not
        # entered, nor is one below it; its files reach edit() as paths, which read_file refuses.
        stack = [new]
        while stack:
            rel_dir = stack.pop()
            try:
                entries = list_directory(root, rel_dir)
            except (OSError, ValueError):  # gone, no longer a directory, or a link: nothing to walk
                continue
            for name, is_dir in entries:
                rel = f"{rel_dir}/{name}"
                if is_dir:
                    if watch_admits(state, oracle, rel, True):
                        stack.append(rel)
                elif watch_admits(state, oracle, rel, False):
                    files.add(rel)
    for rel in sorted(files):
        edit(state, rel, None, debounce_ms)
