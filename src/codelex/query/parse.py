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
import re
from collections.abc import Iterable
from dataclasses import dataclass

from codelex.defaults import FILTER_KEYS
from codelex.errors import QueryError
from codelex.kinds import canonical_kind, supported_kinds
from codelex.text import tokenize_line

#: A ``key:value`` piece: a filter when its key is one of FILTER_KEYS, else a search term.
_PIECE_RE = re.compile(r"^(-)?([A-Za-z][A-Za-z0-9_-]*):(.+)$", re.DOTALL)


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


def resolve_kind(value: str, *, inline: bool = True) -> str:
    """The :data:`codelex.KINDS` key of a ``lang`` value: a kind or one of its
    :data:`codelex.KIND_ALIASES` (``py``, ``ts``, ``rs``, ``golang``, ``c++`` ...), any case."""
    kind = canonical_kind(value)
    if kind is None:
        where = "in query" if inline else "for the lang parameter"
        raise QueryError(f'Unknown lang: "{value}" {where} — supported languages: {supported_kinds()} '
                         f"(short names such as py, ts, rs, golang, c++, sh are accepted too).")
    return kind


def validate_filters(filters: Iterable[Filter]) -> None:
    """Raise :class:`codelex.QueryError` for any filter whose value cannot be resolved."""
    for flt in filters:
        if flt.key == "lang":
            resolve_kind(flt.value)
        elif flt.key == "path":
            from codelex.query.globs import paths_predicate

            paths_predicate([flt.value])  # a bad glob (a reversed range, over the cap) is a QueryError


__all__ = ["FILTER_KEYS", "Filter", "ParsedQuery", "parse_query", "resolve_kind", "validate_filters"]
