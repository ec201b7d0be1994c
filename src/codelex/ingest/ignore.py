"""Ignore files: the ``.gitignore`` chain of a tree walk, and caller patterns in git mode.

Semantics are git's, through pathspec's ``GitIgnoreSpec``: each ignore file
is anchored at its own directory, a deeper file overrides a shallower one,
the last matching rule wins and negations re-include.

Ignore files come from checkouts nobody vetted, and are read as git reads
them: a symbolic link is not followed (git 2.32+ warns and skips it), a FIFO,
device or directory is skipped without blocking (:mod:`codelex.safefs`), a
file over :data:`MAX_IGNORE_BYTES` is skipped, and a line pathspec cannot
compile (a trailing backslash, a reversed range such as ``[z-a]``) is
dropped rather than failing the walk: git accepts such lines (a trailing
backslash matches nothing; ``[z-a]`` matches ``z`` alone, which is the one
difference).
"""

from __future__ import annotations

import os
import re
import warnings

from codelex.errors import UnsafePathError
from codelex.safefs import read_bytes

__all__ = ["MAX_BACKTRACKING_WILDCARDS", "MAX_IGNORE_BYTES", "GitignoreOracle", "IgnoreChain", "any_pattern", "compile_lines", "ignored_by",
           "pattern_error", "read_ignore_lines", "usable_lines"]

#: Larger ignore files are skipped, as git does (its PATTERN_MAX_FILE_SIZE).
MAX_IGNORE_BYTES = 100 * 1024 * 1024

# pathspec copies a bracket expression into its regex verbatim, so a POSIX class ("[[:alpha:]]", which git
# accepts) makes re warn about a possible nested set when it (or any_pattern below) compiles it: noise on a
# command's stderr.
warnings.filterwarnings("ignore", message="Possible nested set", category=FutureWarning,
                        module=r"(pathspec\.|codelex\.ingest\.ignore$)")


def _re2():
    """The google-re2 module (linear-time matching), or None where it cannot be imported."""
    global _RE2
    if _RE2 is False:
        try:
            import re2 as module
        except ImportError:  # pragma: no cover - a dependency; absent only from a broken install
            module = None
        _RE2 = module
    return _RE2


_RE2 = False  # not looked up yet


def _compile_errors() -> tuple[type[BaseException], ...]:
    module = _re2()
    return (ValueError, re.error, RecursionError) + ((module.error,) if module is not None else ())


#: Without RE2, a pattern whose regex holds more unbounded repetitions than this is dropped: Python's
#: backtracking engine can take time exponential in their number on a long name (``*a*a*a*a*b``).
MAX_BACKTRACKING_WILDCARDS = 2


def _too_slow_to_backtrack(pattern) -> bool:
    regex = getattr(pattern, "regex", None)
    text = getattr(regex, "pattern", "")
    return isinstance(text, str) and text.count("*") + text.count("+") > MAX_BACKTRACKING_WILDCARDS


def _spec(patterns_or_lines, *, lines: bool):
    """A ``GitIgnoreSpec`` matched by RE2 (linear time, whatever a hostile ignore file holds), else by
    pathspec's backtracking backend without the patterns that could make it take exponential time."""
    from pathspec import GitIgnoreSpec

    backend = "re2" if _re2() is not None else "simple"
    if backend == "simple":
        patterns = GitIgnoreSpec.from_lines(patterns_or_lines, backend="simple").patterns if lines \
            else list(patterns_or_lines)
        return GitIgnoreSpec([p for p in patterns if not _too_slow_to_backtrack(p)], backend="simple")
    if lines:
        return GitIgnoreSpec.from_lines(patterns_or_lines, backend=backend)
    return GitIgnoreSpec(list(patterns_or_lines), backend=backend)


def _compile_one(line: str):
    """The compiled pathspec pattern of one line (None for a blank one), or the exception compiling it raised."""
    try:
        patterns = _spec([line], lines=True).patterns
        if not patterns and line.strip() and not line.startswith("#"):
            from pathspec import GitIgnoreSpec

            # (dropped by the backtracking guard: say why)
            if GitIgnoreSpec.from_lines([line], backend="simple").patterns:
                return ValueError(f"more than {MAX_BACKTRACKING_WILDCARDS} wildcards (too slow to match)")
    except _compile_errors() as exc:  # GitIgnorePatternError is a ValueError
        return exc
    return patterns[0] if patterns else None


def compile_lines(lines):
    """A ``GitIgnoreSpec`` of ``lines``, without the lines that cannot be compiled (git accepts them).

    The one way codelex compiles gitignore-style patterns (ignore files,
    configuration, arguments): matched by RE2, so no pattern and no file
    name can make matching take more than linear time.
    """
    lines = list(lines)
    try:
        return _spec(lines, lines=True)
    except _compile_errors():
        pass
    return _spec([p for p in map(_compile_one, lines) if p is not None and not isinstance(p, BaseException)],
                 lines=False)


def usable_lines(lines) -> list[str]:
    """``lines`` without those pathspec cannot compile (as :func:`compile_lines` drops them)."""
    return [line for line in lines if not isinstance(_compile_one(line), BaseException)]


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` is no usable gitignore-style pattern (None when it is one).

    For patterns a person wrote for codelex (configuration, arguments):
    besides what pathspec cannot compile, a pattern that can never match
    (blank, a comment, an unclosed ``[``) is refused as a likely mistake.
    """
    compiled = _compile_one(pattern)
    if isinstance(compiled, BaseException):
        if pattern.endswith("\\") and (len(pattern) - len(pattern.rstrip("\\"))) % 2:
            return "a trailing backslash escapes nothing"
        if isinstance(compiled, re.error):
            return compiled.msg  # e.g. "bad character range z-a" (its position would be in pathspec's regex)
        return str(compiled).split("\n", 1)[0] or type(compiled).__name__
    if compiled is None or compiled.include is None:
        if not pattern.strip():
            return "an empty pattern"
        if pattern.startswith("#"):
            return "a comment, not a pattern (write \\# for a literal #)"
        return "matches nothing (an unclosed '[' or a lone '/')"
    return None


def read_ignore_lines(root: str | os.PathLike[str], rel: str) -> list[str] | None:
    """The lines of the ignore file ``rel`` under ``root``, read as git reads one; None when it is skipped.

    Skipped (None): missing, a symbolic link (anywhere in ``rel``), not a
    regular file, unreadable, or over :data:`MAX_IGNORE_BYTES`.  Never blocks.
    """
    try:
        data, _ = read_bytes(root, rel, MAX_IGNORE_BYTES)
    except (OSError, UnsafePathError):
        return None
    if len(data) > MAX_IGNORE_BYTES:
        return None
    return data.decode("utf-8", "surrogateescape").splitlines()


class IgnoreChain:
    """The ``.gitignore`` files from the root down to the current directory, then the caller's patterns."""

    def __init__(self, extra=None) -> None:
        self._specs: list[tuple[str, object, re.Pattern | None]] = []  # (directory prefix, spec, prefilter)
        self._extra = extra

    def push(self, prefix: str, directory: str) -> bool:
        """Enter ``directory`` (root-relative ``prefix``): its ``.gitignore``, if one is read, joins the chain.

        Returns whether one did (then :meth:`pop` leaves it).
        """
        lines = read_ignore_lines(directory, ".gitignore")  # (the walk never entered a linked directory)
        if lines is None:
            return False
        spec = compile_lines(lines)
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
    module = _re2()
    if module is not None:  # linear time, as the spec's own matching
        options = module.Options()
        options.log_errors = False
        try:
            return module.compile("|".join(parts), options)
        except module.error:
            return None
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
    it while its ``lstat`` (type, inode, mtime, size) holds (one ``lstat`` per
    directory and question).  Same semantics as :class:`IgnoreChain`.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)
        self._specs: dict[str, tuple[tuple | None, object]] = {}

    def _spec(self, prefix: str):
        rel = f"{prefix}/.gitignore" if prefix else ".gitignore"
        try:
            st = os.lstat(os.path.join(self.root, rel))
            signature: tuple | None = (st.st_mode, st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            signature = None
        cached = self._specs.get(prefix)
        if cached is not None and cached[0] == signature:
            return cached[1]
        spec = None
        if signature is not None:
            lines = read_ignore_lines(self.root, rel)
            spec = compile_lines(lines) if lines is not None else None
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
