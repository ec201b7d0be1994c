"""Listing: the files of a tree to index, decided from paths and ``lstat`` alone.

Inside a git work tree the list comes from ``git ls-files`` (tracked plus
untracked-but-not-ignored files); elsewhere the tree is walked depth-first
in sorted order, honouring nested ``.gitignore`` files.  Either way excluded
and generated directories are pruned, symlinks are never followed, and the
rules of an :class:`codelex.ingest.Admission` decide, as they do for one
edited path.  :func:`files_under` walks a directory that appeared under a
watched root by the same rules.
"""

from __future__ import annotations

import collections
import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from codelex._native import ingest as _native_ingest
from codelex.defaults import DEFAULT_MAX_BYTES
from codelex.ingest.admission import Admission, is_code
from codelex.errors import UnsafePathError
from codelex.runtime import neutral_cwd, trusted_executable
from codelex.safefs import check_relative, list_directory

__all__ = ["ListingRecord", "SourceFile", "WalkResult", "files_under", "list_files"]

#: A directory modified this recently (ns) before a walk is not trusted by the
#: listing cache: a change within the file system's mtime granularity could
#: leave the same mtime (git's "racy" rule for its untracked cache).
RACY_NS = 2_000_000_000


class SourceFile(NamedTuple):
    """A file chosen by the walk: its root-relative ``/`` path, size and mtime at listing time.

    (A named tuple: a large tree's listing makes one per file, and a frozen
    dataclass costs ten times as much to create.)
    """

    path: str
    size: int
    mtime_ns: int


@dataclass
class WalkResult:
    """What :func:`list_files` found.

    Attributes
    ----------
    files : list of SourceFile
        In path order; with a ``max_files`` cap, code files first.
    skipped : collections.Counter
        Files left out, by reason: ``unsupported`` (no known kind),
        ``ignored`` (a ``.gitignore`` rule; counted only without git, which
        hides them), ``excluded-dir`` (under an excluded directory; counted
        per file with git, per directory in ``pruned_dirs`` without), ``symlink``, ``too-large``, ``lockfile``, ``minified``,
        ``declaration``, ``build-artifact``, ``generated``, ``vanished``,
        ``unreadable``, ``not-a-file``, ``max-files``; :func:`read_files` adds
        ``binary``, ``generated``, ``too-large``, ``vanished`` and
        ``unreadable`` as it reads.
    pruned_dirs : collections.Counter
        Directories not descended into, by reason (``excluded``,
        ``generated``, ``ignored``, ``symlink``).
    truncated : bool
        Whether ``max_files`` cut the list.
    source : str
        ``"git"`` or ``"walk"``.
    too_large : dict of str to int
        The files every other rule admits that are over the size cap, with
        their sizes (listed by name: raising the cap admits them).
    """

    root: Path
    files: list[SourceFile] = field(default_factory=list)
    skipped: collections.Counter = field(default_factory=collections.Counter)
    too_large: dict = field(default_factory=dict)
    pruned_dirs: collections.Counter = field(default_factory=collections.Counter)
    truncated: bool = False
    source: str = "walk"
    record: ListingRecord | None = None
    cached: bool = False


@dataclass
class ListingRecord:
    """What a walk saw, so that the next listing can skip it when no directory changed.

    Adding, removing or renaming a file changes its directory's mtime, and
    an edited ``.gitignore`` changes its own: when every recorded directory
    and ignore file has the mtime (and size) it had, the walk would find the
    same candidates, and only their sizes (the cap) need a fresh ``lstat``.

    Attributes
    ----------
    key : str
        The listing options and rules the record holds for.
    dirs : list of (str, int)
        Every directory scanned (root-relative, ``""`` for the root) and its
        ``mtime_ns`` before the scan (-1 when too recent to trust).
    gitignores : list of (str, int, int)
        Each ``.gitignore`` read: its directory, ``mtime_ns`` and size.
    candidates : list of str
        Regular files that passed every name rule, in path order (before the size cap).
    skipped, pruned_dirs : dict
        The walk's counts, except ``too-large`` (recounted from fresh sizes).
    """

    key: str
    dirs: list[tuple[str, int]]
    gitignores: list[tuple[str, int, int]]
    candidates: list[str]
    skipped: dict[str, int]
    pruned_dirs: dict[str, int]


def _record_holds(root: Path, record: ListingRecord, key: str) -> bool:
    """Whether every directory and ignore file the record saw is unchanged (so its candidates stand)."""
    if record.key != key:
        return False
    root_s = str(root)
    try:
        for rel, mtime in record.dirs:
            if mtime < 0:
                return False
            st = os.lstat(os.path.join(root_s, rel)) if rel else os.stat(root_s)  # a directory now a link: changed
            if st.st_mtime_ns != mtime or not stat.S_ISDIR(st.st_mode):
                return False
        for rel, mtime, size in record.gitignores:
            st = os.lstat(os.path.join(root_s, rel, ".gitignore"))
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
    except OSError:
        return False
    return True

def _git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under root, or None outside git."""
    git = trusted_executable("git")
    if git is None:
        return None
    # A checkout's own .git/config must not run anything: core.fsmonitor names a program git would start.
    out = _run_git([git, "-c", "core.fsmonitor=false", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                    "--exclude-standard"])
    if out is None:
        return None
    return [p for p in map(os.fsdecode, out.split(b"\0")) if p and _clean(p)]


#: Where Linux says (``/proc/PID/wchan``) a process sleeps while it opens a FIFO nobody writes to.
_FIFO_WAITS = frozenset({"wait_for_partner", "fifo_open"})


#: The longest git may take to list a work tree before the tree is walked instead: git's own ignore matching
#: backtracks, and a hostile ``.gitignore`` (``*a*a*a*a*a*a*b`` beside long names) keeps it busy for hours;
#: the walk matches with RE2.  (The Linux tree lists in well under a second.)
GIT_LIST_TIMEOUT_S = 30.0


def _run_git(argv: list[str], timeout: float | None = None) -> bytes | None:
    """git's standard output; None when it fails, times out, or waits to open a FIFO.

    git opens ignore files (and its own configuration) with a blocking
    ``open``: a FIFO ``.gitignore`` in a checkout would hold it until a
    writer came.  Where the kernel tells (Linux), a git found waiting there
    is stopped at once, and the caller walks the tree, which skips such files.
    """
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=neutral_cwd())
    except (OSError, subprocess.SubprocessError):
        return None
    deadline = time.monotonic() + (GIT_LIST_TIMEOUT_S if timeout is None else timeout)
    step = 0.05
    with proc:
        while True:
            try:
                out, _ = proc.communicate(timeout=step)  # (retrying after a timeout loses no output)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline or _waits_on_fifo(proc.pid):
                proc.kill()
                proc.communicate()
                return None
            step = min(step * 2, 0.5)
    return out if proc.returncode == 0 else None


def _waits_on_fifo(pid: int) -> bool:
    """Whether the process ``pid`` sleeps opening a FIFO (Linux; False where the kernel does not say)."""
    try:
        with open(f"/proc/{pid}/wchan", "rb") as f:
            return f.read(64).decode("ascii", "replace").strip() in _FIFO_WAITS
    except OSError:
        return False


def _clean(rel: str) -> bool:
    """Whether a path git listed is a clean relative path (a crafted git index may hold anything)."""
    try:
        check_relative(rel)
    except UnsafePathError:
        return False
    return True


def _walk_tree(root: Path, result: WalkResult, admission: Admission, dirs: list | None = None,
               gitignores: list | None = None) -> list[tuple[str, os.stat_result]]:
    """Depth-first, sorted, honouring .gitignore files; returns (path, lstat) of regular files.

    With ``dirs`` and ``gitignores``, records what :class:`ListingRecord` needs.
    """
    out: list[tuple[str, os.stat_result]] = []
    chain = admission.chain()
    dir_reason = admission.dir_reason
    racy_after = time.time_ns() - RACY_NS
    # Stack of (directory path, prefix), with None markers where an ignore file is popped.
    stack: list[tuple[str, str] | None] = [(str(root), "")]
    while stack:
        item = stack.pop()
        if item is None:
            chain.pop()
            continue
        directory, prefix = item
        if dirs is not None:
            # Stat before reading: a change after this point shows as another mtime next time.
            try:
                mtime = os.stat(directory).st_mtime_ns
            except OSError:
                mtime = -1
            dirs.append((prefix.rstrip("/"), mtime if mtime < racy_after else -1))
            try:
                ig = os.stat(os.path.join(directory, ".gitignore"))
                gitignores.append((prefix.rstrip("/"), ig.st_mtime_ns if ig.st_mtime_ns < racy_after else -1,
                                   ig.st_size))
            except OSError:
                pass
        pushed = chain.push(prefix, directory)
        if pushed:
            stack.append(None)
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            result.pruned_dirs["unreadable"] += 1
            continue
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    try:
                        to_dir = entry.is_dir()
                    except OSError:  # a link loop (ELOOP) is a link, not a file that vanished
                        to_dir = False
                    if to_dir:
                        result.pruned_dirs["symlink"] += 1
                    else:
                        result.skipped["symlink"] += 1
                    continue
                if entry.is_dir(follow_symlinks=False):
                    reason = dir_reason(entry.name)
                    if reason is None and chain.ignored(rel, True):
                        reason = "ignored"
                    if reason is not None:
                        result.pruned_dirs[reason] += 1
                    else:
                        subdirs.append((entry.path, rel + "/"))
                    continue
                if chain.ignored(rel, False):
                    result.skipped["ignored"] += 1
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                result.skipped["vanished"] += 1
                continue
            out.append((rel, st))
        stack.extend(reversed(subdirs))  # so that the smallest name is visited first
    out.sort(key=lambda x: x[0])
    return out


def list_files(
    root: str | os.PathLike[str],
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    max_files: int | None = None,
    use_git: bool | None = None,
    ignore: Iterable[str] = (),
    accept: Callable[[str], bool] | None = None,
    previous: ListingRecord | None = None,
    include: Iterable[str] = (),
    kinds: Iterable[str] | None = None,
    admission: Admission | None = None,
) -> WalkResult:
    """Choose the files of ``root`` to index, from paths and ``lstat`` alone.

    Parameters
    ----------
    root : str or path-like
        A directory.
    max_bytes : int or None, default 512 KiB
        Larger files are counted as ``too-large`` and never read.
    max_files : int or None
        Cap on the number of files; code files are kept before doc/data
        files, and ``truncated`` reports the cut.
    use_git : bool or None
        ``None`` (default) asks git when the root is in a work tree and
        walks otherwise; ``False`` always walks (honouring ``.gitignore``
        files); ``True`` requires git.
    ignore : iterable of str
        Extra gitignore-style patterns, relative to the root, applied after
        (and so overriding) the repository's own ignore rules.
    include : iterable of str
        Gitignore-style patterns: when given, only files matching one are
        indexed (the others count as ``not-included``).
    kinds : iterable of str, optional
        Only files of these kinds (:data:`codelex.KINDS` keys) are indexed
        (the others count as ``not-included``).
    accept : callable, optional
        ``accept(path) -> bool`` replaces the file-name rules (kinds,
        lockfiles, bundles, twins); directories, ignore files, symlinks and
        the size cap still apply.
    previous : ListingRecord, optional
        An earlier walk's ``record``: when none of its directories and ignore
        files changed, only its candidates are ``lstat``-ed again (``cached``).
        With a record and ``use_git=None`` the tree is walked, not listed by
        git (git was absent, failed or slower than :data:`GIT_LIST_TIMEOUT_S`).
    admission : Admission, optional
        The rules, built elsewhere (a project's); it replaces ``ignore``,
        ``include``, ``kinds``, ``accept`` and ``max_bytes``.

    Returns
    -------
    WalkResult

    Raises
    ------
    NotADirectoryError
        When ``root`` is not a directory.
    RuntimeError
        When ``use_git=True`` and git cannot list the files.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"not a directory: {root}")
    result = WalkResult(root=root)
    if admission is None:
        admission = Admission(root, ignore=ignore, include=include, kinds=kinds, max_bytes=max_bytes, accept=accept)
    return _list_admitted(root, admission, result, max_files=max_files, use_git=use_git, previous=previous)


def _list_admitted(root: Path, admission: Admission, result: WalkResult, *, max_files: int | None,
                   use_git: bool | None, previous: ListingRecord | None) -> WalkResult:
    """:func:`list_files` once its rules are built: from the record when it holds, else from git or a walk."""
    key = admission.key
    if key is not None and previous is not None and use_git is not True and _record_holds(root, previous, key):
        # No directory or ignore file changed since the recorded walk (git
        # mode is never recorded, so a record means the root is walked).
        return _from_record(root, previous, admission, max_files)
    # A record exists only when the last listing walked: git was absent, failed or ran out of time there, so
    # walk again rather than wait for it once more (use_git=True still insists).
    ask_git = use_git is True or (use_git is None and previous is None)
    git_paths = _git_files(root) if ask_git else None
    if use_git and git_paths is None:
        raise RuntimeError(f"git cannot list the files of {root}")
    if git_paths is not None:
        result.source = "git"
        _, chosen = _admit_listed(_git_listing(root, git_paths, result, admission), admission, result)
    else:
        dirs: list[tuple[str, int]] | None = [] if key is not None else None
        gitignores: list[tuple[str, int, int]] = []
        candidates, chosen = _admit_listed(_walk_tree(root, result, admission, dirs, gitignores), admission, result)
        if key is not None:  # walks of the whole admission are recorded (``accept`` has no key)
            counts = dict(result.skipped)
            counts.pop("too-large", None)
            result.record = ListingRecord(key, dirs, gitignores, candidates, counts, dict(result.pruned_dirs))
    _cap(result, chosen, max_files)
    return result


def _git_listing(root: Path, git_paths: list[str], result: WalkResult,
                 admission: Admission) -> list[tuple[str, os.stat_result]]:
    """``lstat`` each path git listed that no pruned directory or ignore pattern excludes, sorted by path."""
    listed = []
    root_s = str(root)
    pruned_dirs: dict[str, str | None] = {}
    for rel in git_paths:
        if _is_pruned(rel, result, pruned_dirs):
            continue
        if admission.ignored_by_patterns(rel):
            result.skipped["ignored"] += 1
            continue
        try:
            st = os.lstat(os.path.join(root_s, rel))
        except FileNotFoundError:
            result.skipped["vanished"] += 1  # deleted in the work tree but still tracked
            continue
        except OSError:
            result.skipped["unreadable"] += 1
            continue
        listed.append((rel, st))
    listed.sort(key=lambda x: x[0])
    return listed


def _admit_listed(listed: list[tuple[str, os.stat_result]], admission: Admission,
                  result: WalkResult) -> tuple[list[str], list[SourceFile]]:
    """The listed paths the name rules admit (``candidates``, for the walk's record) and, of those, the regular
    files within the size cap (``chosen``); every refusal counted in ``result``."""
    # What the twin rule sees beside a file: the regular files listed (as Admission.present says for one path).
    present = {rel for rel, st in listed if stat.S_ISREG(st.st_mode)}
    candidates: list[str] = []
    chosen: list[SourceFile] = []
    name_reason, size_reason = admission.name_reason, admission.size_reason
    for rel, st in listed:
        if stat.S_ISLNK(st.st_mode):
            result.skipped["symlink"] += 1
            continue
        if not stat.S_ISREG(st.st_mode):
            result.skipped["not-a-file"] += 1  # submodules, sockets, fifos...
            continue
        reason = name_reason(rel, present)  # directories and ignore files were passed already
        if reason is None:
            candidates.append(rel)
            reason = size_reason(st.st_size)
            if reason is not None:
                result.too_large[rel] = st.st_size
        if reason is not None:
            result.skipped[reason] += 1
            continue
        chosen.append(SourceFile(rel, st.st_size, st.st_mtime_ns))
    return candidates, chosen


def _stat_candidates(root: Path, paths: list[str]) -> list[tuple[str, int, int, str | None]]:
    """``(path, size, mtime_ns, reason)`` per path by ``lstat``: natively on every core where supported.

    ``reason`` is None for a regular file, else ``vanished``, ``unreadable`` or ``not-a-file``.
    """
    if _native_ingest.SUPPORTED:
        mtime, size, kind = _native_ingest.stat_paths(root, paths, os.cpu_count() or 1)
        reasons = {_native_ingest.FILE: None, _native_ingest.MISSING: "vanished", _native_ingest.ERROR: "unreadable"}
        return [(p, s, m, reasons.get(k, "not-a-file"))
                for p, m, s, k in zip(paths, mtime.tolist(), size.tolist(), kind.tolist())]
    root_s = str(root)
    out = []
    for p in paths:
        try:
            st = os.lstat(os.path.join(root_s, p))
        except FileNotFoundError:
            out.append((p, -1, -1, "vanished"))
            continue
        except OSError:
            out.append((p, -1, -1, "unreadable"))
            continue
        out.append((p, st.st_size, st.st_mtime_ns, None if stat.S_ISREG(st.st_mode) else "not-a-file"))
    return out


def _from_record(root: Path, record: ListingRecord, admission: Admission, max_files: int | None) -> WalkResult:
    """The listing a walk would give, from a record that still holds: fresh sizes and mtimes only."""
    result = WalkResult(root=root, source="walk", record=record, cached=True)
    result.skipped.update(record.skipped)
    result.pruned_dirs.update(record.pruned_dirs)
    paths = record.candidates
    if _native_ingest.SUPPORTED:  # (in arrays: a large tree's candidates cost no Python call each)
        mtime, size, kind = _native_ingest.stat_paths(root, paths, os.cpu_count() or 1)
        regular = kind == _native_ingest.FILE
        large = regular & admission.too_large(size)
        missing, failed = kind == _native_ingest.MISSING, kind == _native_ingest.ERROR
        for reason, mask in (("vanished", missing), ("unreadable", failed), ("not-a-file", ~(regular | missing | failed)),
                             ("too-large", large)):
            n = int(np.count_nonzero(mask))
            if n:
                result.skipped[reason] += n
        for i in np.flatnonzero(large).tolist():
            result.too_large[paths[i]] = int(size[i])
        keep = np.flatnonzero(regular & ~large)
        kept = paths if keep.shape[0] == len(paths) else [paths[i] for i in keep.tolist()]
        chosen = list(map(SourceFile, kept, size[keep].tolist(), mtime[keep].tolist()))
    else:
        chosen = []
        for rel, size, mtime, reason in _stat_candidates(root, paths):
            if reason is None:
                reason = admission.size_reason(size)
                if reason is not None:
                    result.too_large[rel] = size
            if reason is not None:
                result.skipped[reason] += 1
            else:
                chosen.append(SourceFile(rel, size, mtime))
    _cap(result, chosen, max_files)
    return result


def _cap(result: WalkResult, chosen: list[SourceFile], max_files: int | None) -> None:
    if max_files is not None and len(chosen) > max_files:
        code = [f for f in chosen if is_code(f.path)]
        other = [f for f in chosen if not is_code(f.path)]
        kept = (code + other)[:max_files]
        result.skipped["max-files"] += len(chosen) - len(kept)
        result.truncated = True
        keep = {f.path for f in kept}
        chosen = [f for f in chosen if f.path in keep]
    result.files = chosen


def _pruned_reason(directory: str, cache: dict[str, str | None]) -> str | None:
    """Why ``directory`` (or one of its ancestors) is pruned; memoized per directory."""
    if directory in cache:
        return cache[directory]
    parent, _, name = directory.rpartition("/")
    reason = _pruned_reason(parent, cache) if parent else None
    if reason is None:
        reason = Admission.dirs_reason(name)
    cache[directory] = reason
    return reason


def _is_pruned(rel: str, result: WalkResult, cache: dict[str, str | None]) -> bool:
    """In git mode: a file under an excluded or generated directory (counted per file)."""
    directory = rel.rpartition("/")[0]
    reason = _pruned_reason(directory, cache) if directory else None
    if reason is not None:
        result.skipped[reason] += 1
        return True
    return False


def files_under(root: str | os.PathLike[str], directory: str, admission: Admission) -> list[str]:
    """The files under ``directory`` (root-relative) that the admission's path rules let through.

    For a directory that appeared under a watched root: walked from
    descriptors (:func:`codelex.safefs.list_directory`), so a directory that
    is, or turned into, a symbolic link is not entered, nor is one below it;
    the files are judged as one edited path is (:meth:`Admission.admits`),
    and read later through :mod:`codelex.safefs`, which refuses a path
    through a link.
    """
    root_s = os.fspath(root)
    found: list[str] = []
    stack = [directory]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list_directory(root_s, rel_dir)
        except (OSError, ValueError):  # gone, no longer a directory, or a link: nothing to walk
            continue
        for name, is_dir in entries:
            rel = f"{rel_dir}/{name}"
            if is_dir:
                if admission.admits(rel, True):
                    stack.append(rel)
            elif admission.admits(rel, False):
                found.append(rel)
    return found
