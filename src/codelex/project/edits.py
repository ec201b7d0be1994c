"""Per-edit upkeep: one file admitted (the root's :class:`codelex.ingest.Admission`, as the walk's), read once for
every stage (word index, structure, import graph), then a debounced save."""

from __future__ import annotations

import os
from pathlib import Path

from codelex.ingest import Document, content_skip_reason, files_under
from codelex.ingest.rules import BINARY_PROBE_BYTES
from codelex.lexical import WordIndex
from codelex.project.state import RootState
from codelex.safefs import contained_relative

__all__ = ["apply_changes", "apply_edit", "edit", "relative_path", "schedule_save"]


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


def apply_edit(state: RootState, index: WordIndex, rel: str,
               content: str | bytes | None) -> tuple[bool, Document | str | bytes | None]:
    """Index ``rel``'s new content (read from disk when None).

    Returns ``(indexed, content)``: whether ``rel`` is indexed afterwards,
    and what the index took, for the other stages to take too (the
    :class:`~codelex.ingest.Document` read, or the content given; None when
    nothing was read).  A path the root's admission leaves out (the walk's
    rules, its ignore files, the twin rule), a file that vanished and
    content that is binary or generated remove the document instead.
    """
    admission = state.options.admission
    if admission.reason(rel, index) is not None:
        index.remove(rel)
        return False, None
    if content is None:
        outcome = admission.read(rel)
        if isinstance(outcome, Document):
            return index.update(rel, outcome.content, mtime_ns=outcome.mtime_ns), outcome
        if outcome != "unreadable":
            index.remove(rel)
            return False, None
        return rel in index, None  # (kept as it was: the next stage reads it when it can)
    head = content[:BINARY_PROBE_BYTES]
    if isinstance(head, str):
        head = head.encode("utf-8", "surrogatepass")
    if content_skip_reason(head) is not None:
        index.remove(rel)
        return False, None
    return index.update(rel, content), content  # mtime unknown (-1): the next open re-reads it


def schedule_save(state: RootState, index: WordIndex, debounce_ms: float | None) -> None:
    """Note that ``index`` changed: one save after the quiet window (see :class:`codelex.PersistScheduler`)."""
    state.saver.schedule(index, debounce_ms)


def edit(state: RootState, rel: str, content: str | bytes | None, debounce_ms: float | None) -> bool:
    """One edit of the project (see :meth:`codelex.Project.on_edit`); True when ``rel`` is indexed afterwards.

    The file is read once (when ``content`` is None) and that content feeds
    the word index, the structure and the import graph.  A source file
    created or removed beside a compiled one (``util.ts`` beside
    ``util.js``) moves the compiled one out of the index or back in, as the
    walk would.
    """
    state.docs.on_edit(rel)  # (the documentation's stage judges the file by its own admission when it reads it)
    with state.edit_lock:  # (edits wait for each other; for a query only when edits kept moving it: edits_held)
        with state.lock:
            if state.status == "building":
                state.pending_edits.append((rel, content))
            index = state.index
            if index is None:
                return False
            indexed, taken = apply_edit(state, index, rel, content)
        if indexed:
            state.structure.mark_stale(rel, taken, debounce_ms)
        else:
            state.structure.remove(rel)
        state.imports.on_edit(rel, taken.content if isinstance(taken, Document) else taken, indexed)
        schedule_save(state, index, debounce_ms)
        state.imports.schedule_save(state, debounce_ms)
        _follow_twins(state, index, rel, debounce_ms)
        return indexed


def _follow_twins(state: RootState, index: WordIndex, rel: str, debounce_ms: float | None) -> None:
    """The compiled files beside ``rel`` whose admission its edit decides again (indexed ones left out, or
    ones now admitted read)."""
    admission = state.options.admission
    for twin in admission.twins_of(rel):
        if twin in index:
            if admission.reason(twin, index) is not None:
                edit(state, twin, None, debounce_ms)  # (removes it)
        elif admission.present(twin) and admission.reason(twin, index) is None:
            edit(state, twin, None, debounce_ms)


def apply_changes(state: RootState, changes, debounce_ms: float | None) -> None:
    """A watcher's batch: each changed file re-read (or removed), directories that appeared walked
    (:func:`codelex.ingest.files_under`, by the root's admission), the indexed files under directories that
    went removed."""
    files = set(changes.files)
    index = state.index
    for gone in changes.gone_dirs:
        prefix = gone + "/"
        if index is not None:
            files.update(f for f in index.files if f.startswith(prefix))
        state.docs.on_gone_dir(gone)
    admission, documentation = state.options.admission, state.options.documentation
    for new in changes.new_dirs:
        files.update(files_under(state.root, new, admission))
        files.update(files_under(state.root, new, documentation))
    for rel in sorted(files):
        if admission.admits(rel) or (index is not None and rel in index):
            edit(state, rel, None, debounce_ms)
        else:  # documentation the word index does not take (the watcher lets both admissions' files through)
            state.docs.on_edit(rel)
