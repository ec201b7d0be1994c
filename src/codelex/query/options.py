"""One validated, frozen search request: :class:`SearchOptions`.

Every surface builds one (``WordIndex.search``, ``Project.search``, the CLI,
the MCP server), so an argument is checked once, the same way everywhere;
the keyword arguments of the search methods are a convenient front that
builds it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from codelex.defaults import DEFAULT_LIMIT, DEFAULT_RANKING, MAX_LIMIT, RANKINGS
from codelex.query.globs import paths_predicate
from codelex.query.parse import resolve_kind


def check_limit(limit: object) -> int:
    """Validate a result limit: an int (not a bool), clamped to ``[0, MAX_LIMIT]``; ``<= 0`` means none.

    Raises
    ------
    TypeError
        If ``limit`` is not an int, or is a bool.
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be int, not {type(limit).__name__}")
    return max(0, min(limit, MAX_LIMIT))


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be bool, not {type(value).__name__}")
    return value


class CentralityMap(Mapping):
    """Importer counts (path -> files importing it), validated once.

    A search given one reuses the per-slot multipliers it computed for the
    same slot layout, instead of walking the counts on every query (an
    import graph holds one entry per imported file: tens of thousands on a
    large tree).  Immutable.
    """

    __slots__ = ("_counts", "cache")

    def __init__(self, counts: Mapping[str, int]) -> None:
        checked = {}
        for path, count in counts.items():
            if not isinstance(path, str):
                raise TypeError(f"centrality keys must be paths (str), not {type(path).__name__}")
            if int(count or 0) > 0:
                checked[path] = int(count)
        self._counts = checked
        self.cache: dict = {}  # (id of a slot table, slots, priors key) -> (table, multipliers, bound)

    def __getitem__(self, path: str) -> int:
        return self._counts[path]

    def __iter__(self):
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def __repr__(self) -> str:
        return f"CentralityMap({len(self._counts)} files)"


@dataclass(frozen=True)
class SearchOptions:
    """How to rank: everything of a search request but the query text.

    Parameters
    ----------
    limit : int, default 20
        Maximum number of hits; ``<= 0`` gives none; larger than
        :data:`codelex.defaults.MAX_LIMIT` is clamped.
    paths : str or sequence of str, optional
        Globs over the stored paths (``**``, ``*``, ``?``, ``[...]``,
        ``{a,b}``); a bare directory scopes its subtree.
    lang : str, optional
        A kind of :data:`codelex.KINDS` (case-insensitive).
    centrality : mapping of str to int, optional
        Importing-file counts per path; boosts by ``1 + ln(1 + c) / 4``.
        An empty mapping turns the prior off, also where a
        :class:`codelex.Project` would apply its import graph's.
    demote_test_vendor, demote_docs : bool, default True
        Apply the ×0.3 test/vendor and ×0.5 doc/data priors.
    ranking : {"code", "classic"}, default "code"
        ``code``: BM25F over the body, the directory and file name, and the
        names the file defines, with a boost for a file that defines the
        query; ``classic``: the original's BM25 over the body alone.

    Raises
    ------
    TypeError
        For an argument of the wrong type (a bool limit included).
    codelex.QueryError
        For an unknown ``lang``, or a bad or oversized glob in ``paths``
        (see :func:`codelex.query.globs.glob_regex`).

    Examples
    --------
    >>> SearchOptions(limit=5, lang="Python").lang
    'python'
    >>> SearchOptions(limit=2**70).limit == 2**31 - 1
    True
    """

    limit: int = DEFAULT_LIMIT
    paths: tuple[str, ...] | None = None
    lang: str | None = None
    centrality: Mapping[str, int] | None = None
    demote_test_vendor: bool = True
    demote_docs: bool = True
    ranking: str = DEFAULT_RANKING

    def __post_init__(self) -> None:
        def set_(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        limit = self.limit
        if limit.__class__ is not int or not 0 <= limit <= MAX_LIMIT:
            set_("limit", check_limit(limit))
        paths = self.paths
        if paths is not None:
            if isinstance(paths, str):
                paths = (paths,)
            elif isinstance(paths, (bytes, Mapping)) or not isinstance(paths, Iterable):
                raise TypeError(f"paths must be a str or a sequence of str, not {type(paths).__name__}")
            else:
                paths = tuple(paths)
            for pattern in paths:
                if not isinstance(pattern, str):
                    raise TypeError(f"paths must be strings, not {type(pattern).__name__}")
            set_("paths", paths)
            # Compiled now (the cached property's slot): a bad glob is a QueryError before any search.
            self.__dict__["paths_predicate"] = paths_predicate(paths)
        if self.lang is not None:
            if not isinstance(self.lang, str):
                raise TypeError(f"lang must be str, not {type(self.lang).__name__}")
            set_("lang", resolve_kind(self.lang, inline=False))
        if isinstance(self.centrality, CentralityMap):
            pass  # validated when it was made; searches reuse its per-slot multipliers
        elif self.centrality is not None:
            if not isinstance(self.centrality, Mapping):
                raise TypeError(f"centrality must be a mapping of path to count, not {type(self.centrality).__name__}")
            counts = {}
            for path, count in self.centrality.items():
                if not isinstance(path, str):
                    raise TypeError(f"centrality keys must be paths (str), not {type(path).__name__}")
                counts[path] = int(count or 0)
            set_("centrality", MappingProxyType(counts))  # empty: explicitly none (a project's graph included)
        _check_bool(self.demote_test_vendor, "demote_test_vendor")
        _check_bool(self.demote_docs, "demote_docs")
        if self.ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, not {self.ranking!r}")

    def __reduce__(self):
        # Rebuilt from its fields (and validated again): the compiled path predicate and the read-only
        # centrality view do not pickle, and a request crosses processes to a federation's shards.
        c = self.centrality
        return (SearchOptions, (self.limit, self.paths, self.lang, None if c is None else dict(c),
                                self.demote_test_vendor, self.demote_docs, self.ranking))

    @classmethod
    def of(cls, options: SearchOptions | None = None, overrides: Mapping[str, object] | None = None) -> SearchOptions:
        """``options`` with ``overrides`` applied, or new options from the overrides alone.

        Raises
        ------
        TypeError
            If ``options`` is not a SearchOptions, or an override is not one of its fields.
        """
        if options is None:
            if not overrides:
                return _DEFAULT
            try:  # the same few option sets come again and again: build each once
                key = tuple((k, v.__class__, v) for k, v in overrides.items())  # 1 and True differ
                cached = _CACHE.get(key)
            except TypeError:  # an unhashable value (a list of paths, a centrality mapping)
                return cls(**overrides)
            if cached is None:
                cached = cls(**overrides)
                if len(_CACHE) >= _CACHE_SIZE:
                    _CACHE.clear()
                _CACHE[key] = cached
            return cached
        if not isinstance(options, cls):
            raise TypeError(f"options must be SearchOptions, not {type(options).__name__}")
        return dataclasses.replace(options, **overrides) if overrides else options

    @functools.cached_property
    def paths_predicate(self) -> Callable[[str], bool] | None:
        """``path -> bool`` for :attr:`paths` (None when it selects everything)."""
        return paths_predicate(self.paths)

    @property
    def filters_paths(self) -> bool:
        """Whether the options restrict the files searched (``paths`` or ``lang``)."""
        return self.paths_predicate is not None or self.lang is not None


_DEFAULT = SearchOptions()
_CACHE: dict[tuple, SearchOptions] = {}
_CACHE_SIZE = 256


__all__ = ["CentralityMap", "SearchOptions", "check_limit"]
