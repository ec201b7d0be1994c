"""Several indexes searched as one: :class:`Federation`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from codelex.errors import ShardUnavailableError
from codelex.federation.coordinator import ShardHandle, check_shard_name, federated_search, split_shard_filters
from codelex.lexical.hits import Hit
from codelex.lexical.index import WordIndex
from codelex.lexical.shards import GlobalQueryStats, merge_query_stats, missing_words
from codelex.query.options import SearchOptions
from codelex.query.request import parse_request

__all__ = ["Federation"]


class _ProjectShard:
    """An opened project as a shard: its current word index (rebuilt or refreshed as the project goes)."""

    def __init__(self, name: str, project: Any) -> None:
        self.name = name
        self.project = project

    def _index(self) -> WordIndex:
        index = self.project.index
        if index is None:
            status = getattr(self.project, "status", "not ready")
            raise ShardUnavailableError(f"shard {self.name!r}: the project has no index yet ({status})")
        return index

    def query_stats(self, query, options=None, *, words=(), **kwargs):
        return self._index().query_stats(query, options, words=words, **kwargs)

    def search(self, query, options=None, *, global_stats=None, **kwargs):
        return self._index().search(query, options, global_stats=global_stats, **kwargs)


def _handle(name: str, shard: object) -> ShardHandle:
    if isinstance(shard, (str, os.PathLike)):
        return WordIndex.load(shard)
    if callable(getattr(shard, "query_stats", None)) and callable(getattr(shard, "search", None)):
        return shard  # type: ignore[return-value]  # a WordIndex, or a handle to one elsewhere
    if hasattr(shard, "index"):
        return _ProjectShard(name, shard)
    raise TypeError(f"shard {name!r}: expected a WordIndex, a Project, an index directory or a shard handle "
                    f"(query_stats and search), not {type(shard).__name__}")


class Federation:
    """Several word indexes (shards) searched as one index over all their files.

    A search asks every shard for its statistics of the query (document
    count, token totals per field, dfs, stem variants), sums them, and has
    every selected shard score with those sums; the shards' top hits are
    then merged.  Answers, scores included, are those of one index built
    over every shard's files (each file as its shard indexed it: its
    directory and name fields, language and priors come from its path
    within the shard), for both rankings, every filter and the priors.

    Parameters
    ----------
    shards : mapping of str to shard, or iterable of (str, shard) pairs
        Shard names (non-empty, no whitespace, no ``:``) to a
        :class:`codelex.WordIndex`, an opened :class:`codelex.Project` (its
        current index), an index directory (loaded with
        :meth:`WordIndex.load`) or any object with ``query_stats`` and
        ``search`` as a ``WordIndex`` has them (a handle to a remote shard).
        The order is the shards' order (the last tie-break).

    Raises
    ------
    ValueError
        For no shard, a repeated name or an invalid one.
    TypeError
        For a name that is not a str or a shard of another type.
    codelex.IndexFormatError
        For an index directory that does not hold an intact index.

    Notes
    -----
    Hits name files ``shard:path``.  ``repo:NAME`` in a query searches
    shard ``NAME`` only (several OR together; ``-repo:NAME`` leaves one
    out); the statistics stay the whole collection's, as for every filter.
    ``file:``, ``ext:``, ``lang:`` and the ``paths`` option see each file's
    path within its shard (``file:src/`` matches ``a:src/x.py``; select
    shards with ``repo:``).  ``centrality`` is keyed by qualified paths.
    Edits to a shard (:meth:`WordIndex.update`, ``remove``) count from the
    next search on: statistics are gathered per query.

    Examples
    --------
    >>> a = WordIndex.build([("src/auth.py", "def login_user(): ...")])
    >>> b = WordIndex.build([("lib/user.py", "class User: ...")])
    >>> fed = Federation({"a": a, "b": b})
    >>> [h.file for h in fed.search("login user")]
    ['a:src/auth.py', 'b:lib/user.py']
    >>> [h.file for h in fed.search("repo:b user")]
    ['b:lib/user.py']
    """

    def __init__(self, shards: Mapping[str, object] | Iterable[tuple[str, object]]) -> None:
        items = list(shards.items()) if isinstance(shards, Mapping) else list(shards)
        if not items:
            raise ValueError("a federation needs at least one shard")
        seen: set[str] = set()
        handles: list[tuple[str, ShardHandle]] = []
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise TypeError(f"shards must be a mapping or (name, shard) pairs, not {item!r}")
            name = check_shard_name(item[0])
            if name in seen:
                raise ValueError(f"shard name {name!r} given twice")
            seen.add(name)
            handles.append((name, _handle(name, item[1])))
        self._shards = tuple(handles)
        self._by_name = dict(handles)

    @property
    def names(self) -> tuple[str, ...]:
        """The shards' names, in order."""
        return tuple(name for name, _ in self._shards)

    def __len__(self) -> int:
        return len(self._shards)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> ShardHandle:
        """The shard named ``name`` (``KeyError`` when there is none)."""
        return self._by_name[name]

    def __repr__(self) -> str:
        return f"<Federation shards={list(self.names)}>"

    def query_stats(self, query: str, options: SearchOptions | None = None, **kwargs) -> GlobalQueryStats:
        """Phase 1 alone: the collection's statistics for ``query`` (every shard's, merged).

        ``repo:`` filters are left out first, as :meth:`search` does.
        """
        text, _ = split_shard_filters(query, self.names)
        request = parse_request(text, options, kwargs)
        stats = [handle.query_stats(request) for _, handle in self._shards]
        merged = merge_query_stats(stats)
        stats = [handle.query_stats(request, words=missing_words(s, merged)) if missing_words(s, merged) else s
                 for (_, handle), s in zip(self._shards, stats)]
        return merge_query_stats(stats)

    def search(self, query: str, options: SearchOptions | None = None, **kwargs) -> list[Hit]:
        """Rank the files of every shard for a query, as one index over all of them would.

        Parameters
        ----------
        query : str
            Free text plus inline filters (``lang:``, ``file:``, ``ext:``,
            and ``repo:`` to select shards; each negated with ``-``).
        options : SearchOptions, optional
            And keyword arguments (``limit``, ``ranking``, ``paths``,
            ``lang``, ``centrality``, ``demote_test_vendor``,
            ``demote_docs``), as :meth:`WordIndex.search` takes them.

        Returns
        -------
        list of Hit
            Best first: by score, then path within the shard, then shard
            order; paths qualified ``shard:path``.

        Raises
        ------
        TypeError
            If ``query`` is not a str, or an option has the wrong type.
        codelex.QueryError
            For an unknown ``lang:`` or ``repo:`` in the query.
        ShardUnavailableError
            When a project shard has no index yet.
        """
        return federated_search(self._shards, query, options, **kwargs)
