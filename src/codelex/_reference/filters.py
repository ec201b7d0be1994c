"""Reference filters: inline filters as plain ``path -> bool`` predicates (tests only).

The production path turns filters into cached per-slot masks
(:mod:`codelex.lexical.masks`); these predicates are the oracle they are
compared against.  They state the filters on their own: a file's kind is
read here from the language registry's data (:data:`codelex.languages.LANGUAGES`,
the vocabulary, as :mod:`codelex.defaults` holds the constants) by a plain
scan, not through the production look-ups.

- ``lang:K``: the file's kind is ``K`` (a kind or an alias, any case); a
  file's kind is the first language whose ``names`` expression matches its
  whole name, else the one listing its lowercased extension (the text from
  the last dot of its name, when that dot is not the name's first character);
- ``ext:E``: its lowercased extension is ``.E`` (a leading dot of ``E`` ignored);
- ``path:G``: the glob ``G`` matches the whole path, or the path lies under
  it (the ``paths`` parameter's rule; the glob engine, tested on its own in
  tests/query, is the production one);
- ``file:S`` (any other key): ``S`` occurs in the path, ``\\`` read as ``/``,
  case-insensitively on Windows.

A filter prefixed ``-`` excludes the files it matches; filters of the same
key are alternatives, of different keys all apply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codelex.defaults import WINDOWS
from codelex.errors import QueryError
from codelex import languages


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    return path.lower() if WINDOWS else path


def _extension(path: str) -> str:
    name = path.split("/")[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def _kind(path: str) -> str | None:
    name = path.split("/")[-1]
    for lang in languages.LANGUAGES:
        if lang.names and re.fullmatch(lang.names, name):
            return lang.kind
    ext = _extension(path)
    for lang in languages.LANGUAGES:
        if ext in lang.extensions:
            return lang.kind
    return None


def _resolve_kind(value: str) -> str:
    key = value.strip().lower()
    for lang in languages.LANGUAGES:
        if key == lang.kind or key in lang.aliases:
            return lang.kind
    raise QueryError(f"Unknown lang: {value!r}")


def filter_matches(flt, path: str) -> bool:
    """Whether ``path`` matches the (un-negated) condition of ``flt`` (its ``key`` and ``value``)."""
    if flt.key == "lang":
        return _kind(path) == _resolve_kind(flt.value)
    if flt.key == "ext":
        return _extension(path) == "." + flt.value.lstrip(".").lower()
    if flt.key == "path":
        from codelex.query.globs import paths_predicate

        return bool(paths_predicate([flt.value])(path))
    return _norm_path(flt.value) in _norm_path(path)


def filters_predicate(filters: Sequence):
    """A ``path -> bool`` predicate for the filters (``key``, ``value``, ``negated``; None when there are none).

    Raises
    ------
    codelex.QueryError
        When a ``lang`` filter names no kind.
    """
    if not filters:
        return None
    for flt in filters:
        if flt.key == "lang":
            _resolve_kind(flt.value)
    groups: dict[str, list] = {}
    negated: list = []
    for flt in filters:
        (negated if flt.negated else groups.setdefault(flt.key, [])).append(flt)

    def predicate(path: str) -> bool:
        for flt in negated:
            if filter_matches(flt, path):
                return False
        return all(any(filter_matches(f, path) for f in group) for group in groups.values())

    return predicate


__all__ = ["filter_matches", "filters_predicate"]
