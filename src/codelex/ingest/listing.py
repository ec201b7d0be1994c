"""Listing: the files of a tree to index, decided from paths and ``lstat`` alone.

Inside a git work tree the list comes from ``git ls-files`` (tracked plus
untracked-but-not-ignored files); elsewhere the tree is walked depth-first
in sorted order, honouring nested ``.gitignore`` files.  Either way excluded
and generated directories are pruned, symlinks are never followed, and the
admission rules of :mod:`codelex.ingest.rules` apply.
"""

from __future__ import annotations

import collections
import os
import stat
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from codelex.defaults import DEFAULT_MAX_BYTES
from codelex.ingest.ignore import IgnoreChain, ignored_by
from codelex.ingest.rules import dir_reason, file_skip_reason, is_twin
from codelex.kinds import NON_CODE_KINDS, kind_of

__all__ = ["SourceFile", "WalkResult", "list_files"]


@dataclass(frozen=True)
class SourceFile:
    """A file chosen by the walk: its root-relative ``/`` path, size and mtime at listing time."""

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
    """

    root: Path
    files: list[SourceFile] = field(default_factory=list)
    skipped: collections.Counter = field(default_factory=collections.Counter)
    pruned_dirs: collections.Counter = field(default_factory=collections.Counter)
    truncated: bool = False
    source: str = "walk"


def _git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under root, or None outside git."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=300, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


def _walk_tree(root: Path, result: WalkResult, extra) -> list[tuple[str, os.stat_result]]:
    """Depth-first, sorted, honouring .gitignore files; returns (path, lstat) of regular files."""
    out: list[tuple[str, os.stat_result]] = []
    chain = IgnoreChain(extra)
    # Stack of (directory path, prefix), with None markers where an ignore file is popped.
    stack: list[tuple[str, str] | None] = [(str(root), "")]
    while stack:
        item = stack.pop()
        if item is None:
            chain.pop()
            continue
        directory, prefix = item
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
                    if entry.is_dir():
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
    accept : callable, optional
        ``accept(path) -> bool`` replaces the file-name rules (kinds,
        lockfiles, bundles, twins), e.g. to list documentation files;
        directories, ignore files, symlinks and the size cap still apply.

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
    patterns = [p for p in ignore]
    if any(not isinstance(p, str) for p in patterns):
        raise TypeError("ignore patterns must be str")
    extra = None
    if patterns:
        from pathspec import GitIgnoreSpec

        extra = GitIgnoreSpec.from_lines(patterns)
    listed: list[tuple[str, os.stat_result | None]]
    git_paths = _git_files(root) if use_git is not False else None
    if use_git and git_paths is None:
        raise RuntimeError(f"git cannot list the files of {root}")
    if git_paths is not None:
        result.source = "git"
        listed = []
        root_s = str(root)
        pruned_dirs: dict[str, str | None] = {}
        for rel in git_paths:
            if _is_pruned(rel, result, pruned_dirs):
                continue
            if extra is not None and ignored_by(extra, rel):
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
    else:
        listed = _walk_tree(root, result, extra)
    present = {rel for rel, _ in listed}
    chosen: list[SourceFile] = []
    for rel, st in listed:
        if stat.S_ISLNK(st.st_mode):
            result.skipped["symlink"] += 1
            continue
        if not stat.S_ISREG(st.st_mode):
            result.skipped["not-a-file"] += 1  # submodules, sockets, fifos...
            continue
        if accept is not None:
            reason = None if accept(rel) else "unsupported"
        else:
            reason = file_skip_reason(rel.rsplit("/", 1)[-1])  # directories were pruned already
        if reason is None and accept is None and is_twin(rel, present):
            reason = "build-artifact"
        if reason is None and max_bytes is not None and st.st_size > max_bytes:
            reason = "too-large"
        if reason is not None:
            result.skipped[reason] += 1
            continue
        chosen.append(SourceFile(rel, st.st_size, st.st_mtime_ns))
    if max_files is not None and len(chosen) > max_files:
        code = [f for f in chosen if kind_of(f.path) not in NON_CODE_KINDS]
        other = [f for f in chosen if kind_of(f.path) in NON_CODE_KINDS]
        kept = (code + other)[:max_files]
        result.skipped["max-files"] += len(chosen) - len(kept)
        result.truncated = True
        keep = {f.path for f in kept}
        chosen = [f for f in chosen if f.path in keep]
    result.files = chosen
    return result


def _pruned_reason(directory: str, cache: dict[str, str | None]) -> str | None:
    """Why ``directory`` (or one of its ancestors) is pruned; memoized per directory."""
    if directory in cache:
        return cache[directory]
    parent, _, name = directory.rpartition("/")
    reason = _pruned_reason(parent, cache) if parent else None
    if reason is None:
        reason = dir_reason(name)
        if reason is not None:
            reason = "excluded-dir" if reason == "excluded" else "generated"
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
