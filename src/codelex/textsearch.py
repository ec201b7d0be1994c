"""Exact and regular-expression search over a project's indexed files (the MCP tool ``text_search``).

For when an agent knows the string: an error message, a configuration key, a
call it means to rename.  Bounded on every side, because a pattern comes from
a model and the files from a checkout that may be hostile:

- a regular expression runs on RE2 (google-re2, a dependency): linear in the
  text, so no pattern backtracks for ever; a literal string is matched as
  one, without regex syntax;
- a match never spans lines (RE2's ``never_nl``): each answer is one line;
- files are read through :func:`codelex.safefs.read_bytes`, the project's own
  reading path: relative to the root, never through a symbolic link, never a
  FIFO or device, at most ``max_bytes`` each;
- the search stops at ``limit`` matching lines or after ``budget_s`` seconds
  (checked between files), and says which stopped it.
"""

from __future__ import annotations

import bisect
import itertools
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from codelex.defaults import DEFAULT_MAX_BYTES, TEXT_SEARCH_BUDGET_S, TEXT_SEARCH_LINE_CHARS, TEXT_SEARCH_MAX_PATTERN

__all__ = ["TextMatch", "TextSearchResult", "compile_pattern", "search_text"]


@dataclass(frozen=True)
class TextMatch:
    """One matching line: ``path`` (relative to the root), 1-based ``line`` and ``column`` (in characters), the
    line's ``text`` (cut to :data:`~codelex.defaults.TEXT_SEARCH_LINE_CHARS`), and the lines around it
    (``before``, ``after``) when context was asked for."""

    path: str
    line: int
    column: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        out = {"path": self.path, "line": self.line, "column": self.column, "text": self.text}
        if self.before:
            out["before"] = list(self.before)
        if self.after:
            out["after"] = list(self.after)
        return out


@dataclass
class TextSearchResult:
    """The matching lines, in path then line order, and how far the search went.

    ``stopped`` is None when every file was searched, ``"limit"`` when the
    ``limit`` of matching lines was reached, ``"time"`` when the time budget
    ran out; ``unreadable`` counts files skipped (gone, a link, not regular,
    too large).
    """

    matches: list[TextMatch] = field(default_factory=list)
    files: int = 0
    searched: int = 0
    matched_files: int = 0
    unreadable: int = 0
    stopped: str | None = None


def _re2():
    try:
        import re2
    except ImportError:  # pragma: no cover - a dependency; absent only from a broken install
        return None
    return re2


def compile_pattern(pattern: str, *, regex: bool = False, ignore_case: bool = False):
    """A compiled matcher with ``finditer`` for ``pattern``: RE2 for a regular expression (linear time; no
    backreferences or lookaround), the literal string otherwise.

    Raises
    ------
    ValueError
        For an empty or oversized pattern, one that does not compile (the
        message says why), or a regular expression where RE2 is missing.
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("the pattern is empty")
    if len(pattern) > TEXT_SEARCH_MAX_PATTERN:
        raise ValueError(f"the pattern is {len(pattern):,} characters; at most {TEXT_SEARCH_MAX_PATTERN:,}")
    if "\n" in pattern or "\r" in pattern:
        raise ValueError("the pattern holds a line break; matches are single lines")
    if not regex:
        # An escaped literal has nothing to backtrack over: Python's engine is linear on it.
        return re.compile(re.escape(pattern), re.IGNORECASE if ignore_case else 0)
    re2 = _re2()
    if re2 is None:  # pragma: no cover
        raise ValueError("regular expressions need google-re2 (pip install google-re2); pass regex=false")
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.never_nl = True
    options.log_errors = False  # (its errors reach the caller as the ValueError below, not stderr)
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(f"not a regular expression RE2 takes: {why}") from None


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_SEARCH_LINE_CHARS else text[:TEXT_SEARCH_LINE_CHARS] + "…"


def search_text(root, files: Iterable[str], matcher, *, limit: int, context: int = 0,
                max_bytes: int | None = DEFAULT_MAX_BYTES, budget_s: float = TEXT_SEARCH_BUDGET_S) -> TextSearchResult:
    """The lines of ``files`` (relative to ``root``, searched in sorted order) that ``matcher``
    (:func:`compile_pattern`'s) matches, at most ``limit`` of them, each with ``context`` lines either side.

    Parameters
    ----------
    root : str or path-like
        The project root; every file is read under it, safely (see the module).
    files : iterable of str
        Root-relative paths (the index's).
    limit : int
        Matching lines at most (a line matching twice counts once, at its first match).
    context : int
        Lines before and after each match to include.
    max_bytes : int or None
        Files larger than this are skipped (counted in ``unreadable``).
    budget_s : float
        Seconds after which no further file is started.
    """
    from codelex.safefs import read_bytes

    ordered = sorted(set(files))
    result = TextSearchResult(files=len(ordered))
    deadline = time.monotonic() + budget_s
    for rel in ordered:
        if time.monotonic() > deadline:
            result.stopped = "time"
            break
        try:
            data, _ = read_bytes(root, rel, max_bytes)
        except (OSError, ValueError):  # gone, a link, not regular, outside the root (UnsafePathError)
            result.unreadable += 1
            continue
        result.searched += 1
        if max_bytes is not None and len(data) > max_bytes:
            result.unreadable += 1
            continue
        text = data.decode("utf-8", "replace")
        starts = None
        lines = None
        last_line = 0
        found = False
        for m in matcher.finditer(text):
            if starts is None:  # (only for files that match: most do not)
                lines = text.split("\n")
                starts = [0, *itertools.accumulate(len(x) + 1 for x in lines[:-1])]
            number = bisect.bisect_right(starts, m.start())
            if number == last_line:
                continue
            last_line = number
            found = True
            line_start = starts[number - 1]
            before = tuple(_cut(x.rstrip("\r")) for x in lines[max(0, number - 1 - context):number - 1])
            after = tuple(_cut(x.rstrip("\r")) for x in lines[number:number + context])
            result.matches.append(TextMatch(rel, number, m.start() - line_start + 1,
                                            _cut(lines[number - 1].rstrip("\r")), before, after))
            if len(result.matches) >= limit:
                result.stopped = "limit"  # (perhaps more in this file or the next: the caller may raise it)
                break
        result.matched_files += found
        if result.stopped:
            break
    return result
