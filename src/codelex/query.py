"""Query language: free terms plus inline ``lang:``/``file:``/``ext:`` filters.

``lang:python file:src/ -file:test parse config`` searches ``parse config`` in
Python files under a path containing ``src/`` and not ``test``.  Positive
filters of the same key OR together, different keys AND, negations always
subtract.  Any other ``key:value`` piece (``std::vector``, URLs, ``C:\\path``,
``TODO:fixme``) stays a search term.  Filters select files before scoring;
idf stays global, so a surviving file keeps exactly its unfiltered score.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codelex.errors import QueryError
from codelex.kinds import KINDS, extname, kind_of, supported_kinds
from codelex.tokenize import tokenize_line

FILTER_KEYS = ("lang", "file", "ext")
#: Larger limits are clamped to this (no index holds more files; native code takes a signed 32-bit count).
MAX_LIMIT = 2**31 - 1
_PIECE_RE = re.compile(r"^(-)?([A-Za-z][A-Za-z0-9_-]*):(.+)$", re.DOTALL)
_WINDOWS = os.name == "nt"


@dataclass(frozen=True)
class Filter:
    """One inline filter: ``key:value``, or ``-key:value`` when ``negated``."""

    key: str
    value: str
    negated: bool = False


@dataclass(frozen=True)
class ParsedQuery:
    """A query split into its free-text ``terms`` and its ``filters``."""

    terms: str
    filters: tuple[Filter, ...]

    @functools.cached_property
    def tokens(self) -> tuple[str, ...]:
        """The distinct index tokens of ``terms``, in order."""
        return tuple(dict.fromkeys(tokenize_line(self.terms)))


def parse_query(text: str) -> ParsedQuery:
    """Split a query into search terms and inline filters.

    Parameters
    ----------
    text : str
        The query, e.g. ``"lang:python -file:test parse config"``.

    Returns
    -------
    ParsedQuery
        ``terms`` (the non-filter pieces re-joined with single spaces) and
        ``filters`` in query order.

    Raises
    ------
    TypeError
        If ``text`` is not a str.

    Notes
    -----
    Filter values are checked when the filter is applied, not here: an unknown
    ``lang:`` raises :class:`codelex.QueryError` from the search.
    """
    if not isinstance(text, str):
        raise TypeError(f"query must be str, not {type(text).__name__}")
    return _parse_cached(text)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> ParsedQuery:
    terms: list[str] = []
    filters: list[Filter] = []
    for piece in text.split():
        m = _PIECE_RE.match(piece)
        if m is None or m.group(2).lower() not in FILTER_KEYS:
            terms.append(piece)
            continue
        filters.append(Filter(m.group(2).lower(), m.group(3), bool(m.group(1))))
    return ParsedQuery(" ".join(terms), tuple(filters))


def check_limit(limit: object) -> int:
    """Validate a result limit: an int (not a bool), clamped to ``[0, MAX_LIMIT]``; ``<= 0`` means none."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be int, not {type(limit).__name__}")
    return max(0, min(limit, MAX_LIMIT))


def resolve_kind(value: str, *, inline: bool = True) -> str:
    """Validate a ``lang`` value (case-insensitive) against :data:`codelex.KINDS`."""
    kind = value.strip().lower()
    if kind not in KINDS:
        where = "in query" if inline else "for the lang parameter"
        raise QueryError(f'Unknown lang: "{value}" {where} — supported languages: {supported_kinds()}.')
    return kind


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    return path.lower() if _WINDOWS else path


def filter_matches(flt: Filter, path: str) -> bool:
    """Whether ``path`` matches the (un-negated) condition of ``flt``."""
    if flt.key == "lang":
        return kind_of(path) == resolve_kind(flt.value)
    if flt.key == "ext":
        return extname(path).lower() == "." + flt.value.lstrip(".").lower()
    return _norm_path(flt.value) in _norm_path(path)


def validate_filters(filters: Iterable[Filter]) -> None:
    """Raise :class:`QueryError` for any filter whose value cannot be resolved."""
    for flt in filters:
        if flt.key == "lang":
            resolve_kind(flt.value)


def filters_predicate(filters: Sequence[Filter]):
    """A ``path -> bool`` predicate for the filters (None when there are none)."""
    if not filters:
        return None
    validate_filters(filters)
    groups: dict[str, list[Filter]] = {}
    negated: list[Filter] = []
    for flt in filters:
        (negated if flt.negated else groups.setdefault(flt.key, [])).append(flt)

    def predicate(path: str) -> bool:
        for flt in negated:
            if filter_matches(flt, path):
                return False
        return all(any(filter_matches(f, path) for f in group) for group in groups.values())

    return predicate


# --- structured parameters ---------------------------------------------------


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a minimatch-style glob (``**``, ``*``, ``?``, ``[...]``, ``{a,b}``; dot files match)."""
    i, n, out = 0, len(pattern), []
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                if j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")  # "**/" also matches zero directories
                    j += 1
                else:
                    out.append(".*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:  # unbalanced brace: treat the pattern literally
        return re.compile(re.escape(pattern), re.IGNORECASE if _WINDOWS else 0)
    return re.compile("".join(out), re.IGNORECASE if _WINDOWS else 0)


def paths_predicate(patterns: Iterable[str] | None):
    """``path -> bool`` for the ``paths`` parameter (None when it selects everything).

    A file matches a pattern when the glob matches its path, or the path lies
    under it (a bare directory scopes its whole subtree).
    """
    if patterns is None:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    cleaned = []
    for pat in patterns:
        if not isinstance(pat, str):
            raise TypeError(f"paths must be strings, not {type(pat).__name__}")
        pat = pat.strip().replace("\\", "/")
        while pat.startswith("./"):
            pat = pat[2:]
        pat = pat.rstrip("/")
        if pat:
            cleaned.append(pat)
    if not cleaned:
        return None
    regexes = [(glob_regex(p), glob_regex(p + "/**")) for p in cleaned]

    def predicate(path: str) -> bool:
        return any(a.fullmatch(path) or b.fullmatch(path) for a, b in regexes)

    return predicate


__all__ = [
    "Filter",
    "ParsedQuery",
    "MAX_LIMIT",
    "check_limit",
    "filter_matches",
    "filters_predicate",
    "glob_regex",
    "parse_query",
    "paths_predicate",
    "resolve_kind",
]
