"""What one shard of a federation contributes to a query, and the collection's statistics merged from all.

A federation answers a query in two phases.  Phase 1: every shard reports
:class:`ShardQueryStats` (:meth:`WordIndex.query_stats
<codelex.lexical.index.WordIndex.query_stats>`): its live documents, token
totals per field, the dfs of every word the query would look up there, and
each query token's stem variants in its vocabulary.  :func:`merge_query_stats`
sums them into :class:`GlobalQueryStats` (the union index's vocabulary is the
union of the shards', so a variant found in any shard counts).  Phase 2: every
shard scores with them (``WordIndex.search(..., global_stats=...)``), so its
scores are those of one index over all the shards' files.

Both are plain, picklable data (ints, strs, tuples, dicts): they cross any
transport (a process pool, Ray, HTTP as JSON via :meth:`to_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["GlobalQueryStats", "ShardQueryStats", "merge_query_stats", "missing_words"]

#: The four fields whose dfs a word carries, in the native order.
FIELDS = ("body", "dir", "name", "defs")


@dataclass(frozen=True, eq=True)
class ShardQueryStats:
    """Phase 1 of a federated query: one shard's statistics for it.

    Attributes
    ----------
    docs : int
        Live documents of the shard.
    body_tokens : int
        Body token occurrences over them (BM25's document lengths summed).
    field_tokens : tuple of 3 ints
        Token occurrences of the ``dir``, ``name`` and ``defs`` fields.
    query_tokens : tuple of str
        The query's distinct tokens, in order (what phase 2 checks it is given).
    dfs : dict of str to tuple of 4 ints
        Per word the shard looked up (the query tokens and their variants),
        its df in the body, dir, name and defs fields (0 where absent).
    variants : dict of str to tuple of str
        Per query token, its stem variants in the shard's vocabulary, sorted
        (code ranking, prose queries, a stem weight above 0; else empty).
    ranking : str
        ``"code"`` or ``"classic"``.
    params : tuple
        The shard's ranking parameters (``k1``, ``b``, field weights, field
        ``b``, def and name boosts, stem weight): shards of one federation
        must agree on them.
    """

    docs: int
    body_tokens: int
    field_tokens: tuple[int, int, int]
    query_tokens: tuple[str, ...]
    dfs: dict[str, tuple[int, int, int, int]]
    variants: dict[str, tuple[str, ...]]
    ranking: str
    params: tuple

    def to_dict(self) -> dict:
        """A JSON-compatible form (:meth:`from_dict` reads it back)."""
        return {"docs": self.docs, "body_tokens": self.body_tokens, "field_tokens": list(self.field_tokens),
                "query_tokens": list(self.query_tokens), "dfs": {w: list(d) for w, d in self.dfs.items()},
                "variants": {t: list(v) for t, v in self.variants.items()}, "ranking": self.ranking,
                "params": _listed(self.params)}

    @classmethod
    def from_dict(cls, data: Mapping) -> ShardQueryStats:
        """The statistics :meth:`to_dict` wrote."""
        return cls(**_fields_from_dict(data))


@dataclass(frozen=True, eq=True)
class GlobalQueryStats(ShardQueryStats):
    """Phase 1's result for the whole collection: the shards' statistics summed (see :func:`merge_query_stats`).

    Attributes
    ----------
    shards : int
        How many shards were merged.

    The other attributes are :class:`ShardQueryStats`', over the collection.
    """

    shards: int = 1

    def to_dict(self) -> dict:
        return {**super().to_dict(), "shards": self.shards}

    @classmethod
    def from_dict(cls, data: Mapping) -> GlobalQueryStats:
        return cls(**_fields_from_dict(data), shards=int(data.get("shards", 1)))

    def df(self, word: str) -> tuple[int, int, int, int]:
        """``word``'s df per field in the collection (0 where no shard has it)."""
        return self.dfs.get(word, (0, 0, 0, 0))


def merge_query_stats(stats: Sequence[ShardQueryStats]) -> GlobalQueryStats:
    """Sum the shards' statistics: counts, totals and dfs add up; stem variants unite.

    Parameters
    ----------
    stats : sequence of ShardQueryStats
        One per shard, for the same query (in any order: the result does
        not depend on it).

    Returns
    -------
    GlobalQueryStats

    Raises
    ------
    ValueError
        If ``stats`` is empty, or its members disagree on the query's tokens,
        the ranking or the ranking parameters (their scores could not be
        those of one index).
    TypeError
        If a member is not a :class:`ShardQueryStats`.
    """
    stats = list(stats)
    if not stats:
        raise ValueError("merge_query_stats needs the statistics of at least one shard")
    for s in stats:
        if not isinstance(s, ShardQueryStats):
            raise TypeError(f"expected ShardQueryStats, not {type(s).__name__}")
    first = stats[0]
    for s in stats[1:]:
        for name in ("query_tokens", "ranking", "params"):
            if getattr(s, name) != getattr(first, name):
                raise ValueError(f"shards disagree on {name}: {getattr(first, name)!r} != {getattr(s, name)!r}")
    docs = sum(s.docs for s in stats)
    body = sum(s.body_tokens for s in stats)
    fields = tuple(sum(s.field_tokens[f] for s in stats) for f in range(3))
    dfs: dict[str, list[int]] = {}
    for s in stats:
        for word, d in s.dfs.items():
            acc = dfs.setdefault(word, [0, 0, 0, 0])
            for f in range(4):
                acc[f] += d[f]
    variants: dict[str, set[str]] = {}
    for s in stats:
        for token, vs in s.variants.items():
            variants.setdefault(token, set()).update(vs)
    shards = sum(s.shards if isinstance(s, GlobalQueryStats) else 1 for s in stats)
    return GlobalQueryStats(
        docs=docs, body_tokens=body, field_tokens=fields, query_tokens=first.query_tokens,  # type: ignore[arg-type]
        dfs={w: tuple(d) for w, d in dfs.items()},  # type: ignore[misc]
        variants={t: tuple(sorted(vs)) for t, vs in variants.items()},  # the order a vocabulary lists them in
        ranking=first.ranking, params=first.params, shards=shards,
    )


def _listed(value):
    return [_listed(v) for v in value] if isinstance(value, (tuple, list)) else value


def _tupled(value):
    return tuple(_tupled(v) for v in value) if isinstance(value, (tuple, list)) else value


def _fields_from_dict(data: Mapping) -> dict:
    return {
        "docs": int(data["docs"]), "body_tokens": int(data["body_tokens"]),
        "field_tokens": tuple(int(x) for x in data["field_tokens"]),
        "query_tokens": tuple(str(t) for t in data["query_tokens"]),
        "dfs": {str(w): tuple(int(x) for x in d) for w, d in data["dfs"].items()},
        "variants": {str(t): tuple(str(v) for v in vs) for t, vs in data["variants"].items()},
        "ranking": str(data["ranking"]), "params": _tupled(data["params"]),
    }


def missing_words(stats: ShardQueryStats, merged: GlobalQueryStats) -> tuple[str, ...]:
    """The stem variants of ``merged`` that ``stats`` holds no dfs for, sorted.

    A variant that only other shards' bodies hold may still be a term of
    this shard's dir, name or defs field; its dfs here must count (the union
    index looks every variant up in every field), so the coordinator asks
    the shard again with ``query_stats(..., words=missing)`` and merges
    anew.  Empty for most queries (identifiers have no variants).
    """
    out = {w for vs in merged.variants.values() for w in vs if w not in stats.dfs}
    return tuple(sorted(out))
