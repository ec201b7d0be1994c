"""The coordinator of a federated search: phase 1 on every shard, the merge, phase 2, the top-k merge.

It talks to shards through two methods only, so a shard may be a local
:class:`~codelex.lexical.index.WordIndex` or a handle to one elsewhere (a
process, a Ray actor) that forwards them:

- ``query_stats(query, options, words=()) -> ShardQueryStats`` (``words``: more
  words to report dfs for, see :func:`~codelex.lexical.shards.missing_words`)
- ``search(query, options, global_stats=GlobalQueryStats) -> list[Hit]``

``query`` is the query text without its ``repo:`` filters and ``options`` a
:class:`~codelex.query.options.SearchOptions` (picklable), so everything that
crosses to a shard is plain data.  Each step is a function of its own
(:func:`split_shard_filters`, :func:`merge_query_stats`, :func:`shard_options`,
:func:`merge_hits`), for a transport that runs the calls its own way;
:func:`federated_search` chains them, fanning out through a ``fan_out`` the
caller may replace (a thread pool's ``map``, say).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from codelex.defaults import SHARD_FILTER_KEY, SHARD_SEPARATOR
from codelex.errors import QueryError
from codelex.lexical.hits import Hit
from codelex.lexical.shards import GlobalQueryStats, ShardQueryStats, merge_query_stats, missing_words
from codelex.query.options import SearchOptions
from codelex.query.request import Request, parse_request

__all__ = [
    "ShardHandle",
    "check_shard_name",
    "federated_search",
    "merge_hits",
    "qualify",
    "shard_options",
    "split_qualified",
    "split_shard_filters",
]


class ShardHandle(Protocol):
    """What the coordinator needs of a shard (a :class:`~codelex.lexical.index.WordIndex` is one)."""

    def query_stats(self, query: Request, *, words: Sequence[str] = ()) -> ShardQueryStats: ...

    def search(self, query: Request, *, global_stats: GlobalQueryStats | None = None) -> list[Hit]: ...


def check_shard_name(name: object) -> str:
    """A valid shard name: a non-empty str without whitespace or :data:`~codelex.defaults.SHARD_SEPARATOR`.

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        If it is empty, or holds whitespace (a ``repo:`` filter could not
        name it) or the separator (a qualified path could not be split).
    """
    if not isinstance(name, str):
        raise TypeError(f"a shard name must be str, not {type(name).__name__}")
    if not name or SHARD_SEPARATOR in name or any(c.isspace() for c in name) or "\x00" in name:
        raise ValueError(f"invalid shard name {name!r}: non-empty, without whitespace or {SHARD_SEPARATOR!r}")
    return name


def qualify(name: str, path: str) -> str:
    """The federation's name of a shard's file: ``name:path``."""
    return f"{name}{SHARD_SEPARATOR}{path}"


def split_qualified(path: str) -> tuple[str, str]:
    """``(shard name, path within it)`` of a qualified path (``ValueError`` without a separator)."""
    name, sep, rest = path.partition(SHARD_SEPARATOR)
    if not sep:
        raise ValueError(f"not a qualified path (shard{SHARD_SEPARATOR}path): {path!r}")
    return name, rest


def split_shard_filters(query: str, names: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """Take the ``repo:`` filters out of a query: ``(the rest of the query, the shards selected)``.

    Positive filters OR together, negations subtract (as the other filters'
    keys do); without any, every shard is selected.  The rest is the query
    as a shard parses it (the pieces it would split, re-joined by spaces).

    Raises
    ------
    TypeError
        If ``query`` is not a str.
    codelex.QueryError
        For a ``repo:`` naming no shard.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be str, not {type(query).__name__}")
    pieces = query.split()
    keep: list[str] = []
    wanted: list[str] = []
    dropped: set[str] = set()
    known = set(names)
    prefix = SHARD_FILTER_KEY + ":"
    for piece in pieces:
        negated = piece.startswith("-")
        body = piece[1:] if negated else piece
        if len(body) <= len(prefix) or body[:len(prefix)].lower() != prefix:
            keep.append(piece)
            continue
        name = body[len(prefix):]
        if name not in known:
            raise QueryError(f'Unknown {SHARD_FILTER_KEY}: "{name}" in query — shards: {", ".join(names)}.')
        (dropped.add(name) if negated else wanted.append(name))
    if not wanted and not dropped:
        return query, tuple(names)
    chosen = set(wanted) if wanted else known
    return " ".join(keep), tuple(n for n in names if n in chosen and n not in dropped)


def shard_options(options: SearchOptions, name: str) -> SearchOptions:
    """``options`` as shard ``name`` takes them: centrality keyed by its own paths (``name:path`` keys)."""
    c = options.centrality
    if not c:
        return options
    head = name + SHARD_SEPARATOR
    local = {path[len(head):]: count for path, count in c.items() if path.startswith(head)}
    return dataclasses.replace(options, centrality=local)


def merge_hits(answers: Sequence[tuple[str, Sequence[Hit]]], limit: int) -> list[Hit]:
    """The best ``limit`` of the shards' hits (each best first), paths qualified ``name:path``.

    Ranked as one index over every shard's files ranks them: by score,
    then by path within the shard, then by the shard's place in ``answers``
    (two shards may hold the same path).
    """
    if limit <= 0:
        return []
    keyed = (((-h[1], h[0], i), j, name, h) for i, (name, hits) in enumerate(answers) for j, h in enumerate(hits))
    out = []
    for _key, _j, name, h in heapq.nsmallest(limit, keyed):
        out.append(Hit(qualify(name, h[0]), h[1], h[2], h[3], h[4], h[5], h[6]))
    return out


def _sequential(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    return [fn(item) for item in items]


def federated_search(shards: Sequence[tuple[str, ShardHandle]], query: str, options: SearchOptions | None = None,
                     *, fan_out: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]] | None = None,
                     **kwargs) -> list[Hit]:
    """Search ``shards`` (``(name, handle)`` pairs, in order) as one index: both phases and the merge.

    Parameters
    ----------
    shards : sequence of (str, shard handle)
    query : str
        Free text, the inline filters of :func:`codelex.parse_query`, and
        ``repo:NAME`` / ``-repo:NAME`` to select shards.
    options : SearchOptions, optional
        And keyword arguments, as :meth:`WordIndex.search
        <codelex.lexical.index.WordIndex.search>` takes them; ``centrality``
        is keyed by qualified paths.
    fan_out : callable, optional
        ``fan_out(fn, items)`` applies ``fn`` to every item (default: one
        after the other); phase 1 runs on every shard, phase 2 on the
        selected ones.

    Returns
    -------
    list of Hit
        Paths qualified ``name:path``.
    """
    run = fan_out or _sequential
    names = [name for name, _ in shards]
    text, selected = split_shard_filters(query, names)
    request = parse_request(text, options, kwargs)  # the request's errors before any shard is asked; parsed once
    opts = request.options
    if opts.limit <= 0 or not request.tokens or not selected:
        return []
    handles: Mapping[str, ShardHandle] = dict(shards)
    # Statistics from every shard, selected or not: filters select documents, the statistics stay global.
    stats = list(run(lambda pair: pair[1].query_stats(request), list(shards)))
    global_stats = merge_query_stats(stats)
    # Variants some shards' bodies lack may be terms of their other fields: those shards count them too.
    again = [i for i, s in enumerate(stats) if missing_words(s, global_stats)]
    if again:
        redo = list(run(lambda i: shards[i][1].query_stats(request, words=missing_words(stats[i], global_stats)),
                        again))
        for i, s in zip(again, redo):
            stats[i] = s
        global_stats = merge_query_stats(stats)
    answers = list(run(lambda name: handles[name].search(request.with_options(shard_options(opts, name)),
                                                         global_stats=global_stats), list(selected)))
    return merge_hits(list(zip(selected, answers)), opts.limit)
