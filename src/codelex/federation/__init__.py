"""Several indexes searched as one, with the collection's exact statistics.

:class:`Federation` over local shards; the two-phase protocol it speaks
(:meth:`WordIndex.query_stats <codelex.lexical.index.WordIndex.query_stats>` →
:func:`merge_query_stats` → ``WordIndex.search(..., global_stats=...)`` →
:func:`merge_hits`) for shards elsewhere, in :mod:`codelex.federation.coordinator`.
"""

from codelex.errors import ShardUnavailableError
from codelex.federation.coordinator import (
    ShardHandle,
    check_shard_name,
    federated_search,
    merge_hits,
    qualify,
    shard_options,
    split_qualified,
    split_shard_filters,
)
from codelex.federation.federation import Federation
from codelex.lexical.shards import GlobalQueryStats, ShardQueryStats, merge_query_stats, missing_words

__all__ = [
    "Federation",
    "GlobalQueryStats",
    "ShardHandle",
    "ShardQueryStats",
    "ShardUnavailableError",
    "check_shard_name",
    "federated_search",
    "merge_hits",
    "merge_query_stats",
    "missing_words",
    "qualify",
    "shard_options",
    "split_qualified",
    "split_shard_filters",
]
