"""Ignore files: the ``.gitignore`` chain of a tree walk, and caller patterns in git mode.

Semantics are git's, through pathspec's ``GitIgnoreSpec``: each ignore file
is anchored at its own directory, a deeper file overrides a shallower one,
the last matching rule wins and negations re-include.
"""

from __future__ import annotations

import os
import re

__all__ = ["GitignoreOracle", "IgnoreChain", "any_pattern", "ignored_by"]


class IgnoreChain:
    """The ``.gitignore`` files from the root down to the current directory, then the caller's patterns."""

    def __init__(self, extra=None) -> None:
        self._specs: list[tuple[str, object, re.Pattern | None]] = []  # (directory prefix, spec, prefilter)
        self._extra = extra

    def push(self, prefix: str, directory: str) -> bool:
        try:
            with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except OSError:
            return False
        from pathspec import GitIgnoreSpec

        spec = GitIgnoreSpec.from_lines(lines)
        self._specs.append((prefix, spec, any_pattern(spec)))
        return True

    def pop(self) -> None:
        self._specs.pop()

    def ignored(self, path: str, is_dir: bool) -> bool:
        """The last matching rule of the deepest ``.gitignore`` wins, as in git."""
        verdict = False
        suffix = "/" if is_dir else ""
        for prefix, spec, any_pattern in self._specs:
            rel = path[len(prefix):] + suffix
            if any_pattern is not None and any_pattern.search(rel) is None:
                continue  # no pattern of this file matches: no verdict
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        if self._extra is not None:
            result = self._extra.check_file(path + suffix)
            if result.include is not None:
                verdict = result.include
        return verdict


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def any_pattern(spec) -> re.Pattern | None:
    """One regex matching wherever some pattern of ``spec`` matches (a prefilter).

    pathspec checks patterns one by one in Python, which dominates a walk of
    a large tree; most paths match none, and this alternation of the same
    compiled expressions says so in one C-level search.  The exact verdict
    (last match, directory priority) still comes from pathspec.
    """
    parts = []
    flags = None
    for pattern in getattr(spec, "patterns", ()):
        regex = getattr(pattern, "regex", None)
        if getattr(pattern, "include", None) is None or regex is None:
            continue
        if not isinstance(regex.pattern, str) or "(?P=" in regex.pattern:
            return None
        if flags is None:
            flags = regex.flags
        elif regex.flags != flags:
            return None
        parts.append("(?:" + _NAMED_GROUP.sub("(?:", regex.pattern) + ")")
    if not parts:
        return re.compile(r"(?!)")  # matches nothing
    try:
        return re.compile("|".join(parts), flags or 0)
    except re.error:
        return None


def ignored_by(spec, rel: str) -> bool:
    """Whether the caller's patterns exclude rel or one of its directories (git mode)."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        if spec.check_file("/".join(parts[:i]) + "/").include:
            return True
    return bool(spec.check_file(rel).include)


class GitignoreOracle:
    """Whether one path is ignored by the ``.gitignore`` files above it, asked one path at a time.

    The walk keeps a chain as it descends; a file watcher meets paths in any
    order, so this reads each directory's ``.gitignore`` on demand and keeps
    it while its ``(mtime_ns, size)`` holds (one ``stat`` per directory and
    question).  Same semantics as :class:`IgnoreChain`.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)
        self._specs: dict[str, tuple[tuple[int, int] | None, object]] = {}

    def _spec(self, prefix: str):
        file = os.path.join(self.root, prefix, ".gitignore")
        try:
            st = os.stat(file)
            signature: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            signature = None
        cached = self._specs.get(prefix)
        if cached is not None and cached[0] == signature:
            return cached[1]
        spec = None
        if signature is not None:
            try:
                with open(file, encoding="utf-8", errors="surrogateescape") as f:
                    lines = f.read().splitlines()
            except OSError:
                lines = []
            from pathspec import GitIgnoreSpec

            spec = GitIgnoreSpec.from_lines(lines)
        if len(self._specs) > 4096:
            self._specs.clear()
        self._specs[prefix] = (signature, spec)
        return spec

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether ``rel`` (root-relative, ``/``-separated) or one of its directories is ignored."""
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            sub_is_dir = depth < len(parts) or is_dir
            if self._verdict(parts, depth, sub_is_dir):
                return True
        return False

    def _verdict(self, parts: list[str], depth: int, is_dir: bool) -> bool:
        """The deepest ``.gitignore``'s last matching rule for the path of ``parts[:depth]``."""
        verdict = False
        suffix = "/" if is_dir else ""
        for level in range(depth):
            spec = self._spec("/".join(parts[:level]))
            if spec is None:
                continue
            result = spec.check_file("/".join(parts[level:depth]) + suffix)
            if result.include is not None:
                verdict = result.include
        return verdict
