"""Filters as per-slot masks: inline ``lang:``/``file:``/``ext:`` filters and the ``paths``/``lang`` options.

Each filter's mask is computed once per table and cached (extended as slots
are appended), so a repeated filtered query costs a few vectorized ``&``.
Positive filters of one key OR, different keys AND, negations subtract; df
stays global, so a surviving file keeps exactly its unfiltered score.
(``codelex._reference.filters`` states the same rules path by path.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from codelex.defaults import WINDOWS
from codelex.lexical.doctable import KIND_IDS, DocTable
from codelex.query.options import SearchOptions
from codelex.query.parse import Filter, resolve_kind

__all__ = ["filter_mask", "search_mask"]


def filter_mask(table: DocTable, n: int, flt: Filter) -> np.ndarray:
    """Slots ``[0, n)`` matching the un-negated condition of one filter (cached)."""
    if flt.key == "lang":
        kind = KIND_IDS[resolve_kind(flt.value)]
        return table.mask(("lang", kind), n, lambda a, b: table.kind(b)[a:b] == kind)
    if flt.key == "ext":
        want = "." + flt.value.lstrip(".").lower()
        return table.mask(
            ("ext", want), n,
            lambda a, b: np.fromiter((e == want for e in table.ext(b)[a:b]), dtype=bool, count=b - a),
        )
    if flt.key == "path":  # a glob over the path, or a directory and everything under it (as `paths`)
        from codelex.query.globs import paths_predicate

        matches = paths_predicate([flt.value])
        return table.mask(
            ("path", flt.value), n,
            lambda a, b: np.fromiter((matches(p) for p in table.paths[a:b]), dtype=bool, count=b - a),
        )
    needle = flt.value.replace("\\", "/")
    if WINDOWS:  # the original's rule: the file: filter is case-folded on Windows
        needle = needle.lower()

        def compute(a: int, b: int) -> np.ndarray:
            return np.fromiter((needle in p.lower() for p in table.paths[a:b]), dtype=bool, count=b - a)
    else:

        def compute(a: int, b: int) -> np.ndarray:
            return np.fromiter((needle in p for p in table.paths[a:b]), dtype=bool, count=b - a)

    return table.mask(("file", needle), n, compute)


def search_mask(table: DocTable, n: int, filters: Sequence[Filter], options: SearchOptions) -> np.ndarray | None:
    """The uint8 mask of the slots a request may return (None: every slot)."""
    predicate = options.paths_predicate
    if not filters and options.lang is None and predicate is None:
        return None
    mask = np.ones(n, dtype=bool)
    groups: dict[str, np.ndarray] = {}
    for flt in filters:
        m = filter_mask(table, n, flt)
        if flt.negated:
            mask &= ~m
        else:
            groups[flt.key] = groups[flt.key] | m if flt.key in groups else m.copy()
    for m in groups.values():
        mask &= m
    if options.lang is not None:
        mask &= table.kind(n) == KIND_IDS[options.lang]
    if predicate is not None:
        mask &= table.mask(
            ("paths", options.paths), n,
            lambda a, b: np.fromiter((predicate(p) for p in table.paths[a:b]), dtype=bool, count=b - a),
        )
    return mask.view(np.uint8)
