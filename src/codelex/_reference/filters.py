"""Reference filters: inline filters as plain ``path -> bool`` predicates (tests only).

The production path turns filters into cached per-slot masks
(:mod:`codelex.lexical.masks`); these predicates are the oracle they are
compared against.
"""

from __future__ import annotations

from collections.abc import Sequence

from codelex.defaults import WINDOWS
from codelex.kinds import extname, kind_of
from codelex.query.parse import Filter, resolve_kind, validate_filters


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    return path.lower() if WINDOWS else path


def filter_matches(flt: Filter, path: str) -> bool:
    """Whether ``path`` matches the (un-negated) condition of ``flt``."""
    if flt.key == "lang":
        return kind_of(path) == resolve_kind(flt.value)
    if flt.key == "ext":
        return extname(path).lower() == "." + flt.value.lstrip(".").lower()
    return _norm_path(flt.value) in _norm_path(path)


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


__all__ = ["filter_matches", "filters_predicate"]
