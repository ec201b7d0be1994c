"""codelex: identifier-aware BM25 code search with a C++ core.

>>> import codelex
>>> codelex.split_identifier("HTTPServer")
['httpserver', 'http', 'server']

The package follows the data flow, one subpackage per stage (see
ARCHITECTURE.md): :mod:`codelex.ingest` → :mod:`codelex.text` →
:mod:`codelex.lexical` (with :mod:`codelex.query`) → :mod:`codelex.project`
and :mod:`codelex.docs`, hybrid chunk search (:mod:`codelex.rank` with
:mod:`codelex.dense`; the original's functions as :mod:`codelex.hybrid`) → the surfaces (:mod:`codelex.cli`,
:mod:`codelex.mcp_server`), with :mod:`codelex.persist` for storage.  This
module re-exports the public API; parts that pull in heavier dependencies
(persistence, the project walk) load on first use.
"""

TYPE_CHECKING = False  # (not typing.TYPE_CHECKING: importing typing costs more than this module)

from codelex.defaults import DEFAULT_MAX_BYTES, DEFAULT_RANKING, RANKINGS, STOPWORDS, VERSION
from codelex.errors import (
    AmbiguousSymbolError,
    ClientConfigError,
    CodelexError,
    ConfigError,
    EmbedderError,
    IndexFormatError,
    QueryError,
    ShardUnavailableError,
    SymbolNotFoundError,
    UnsafePathError,
)

__version__ = VERSION

if TYPE_CHECKING:  # pragma: no cover - what the lazy names resolve to, for type checkers
    from codelex.dense import FunctionEmbedder, SentenceTransformerEmbedder, StaticModelEmbedder
    from codelex.federation import Federation, GlobalQueryStats, ShardQueryStats, merge_query_stats
    from codelex.kinds import CODE_KINDS, KIND_ALIASES, KINDS, NON_CODE_KINDS
    from codelex.lexical import FileInfo, Hit, WordIndex, centrality_from_reverse_deps
    from codelex.persist.scheduler import PersistScheduler
    from codelex.project import CodeResult, Coverage, Project, RefreshReport, SearchResult
    from codelex.query import Filter, ParsedQuery, SearchOptions, parse_query
    from codelex.rank import HybridHit, HybridResult
    from codelex.text import Vocabulary, scan_definitions, split_identifier, tokenize_document, tokenize_line

# Everything that loads the native core (and numpy) is imported on first use: `import codelex` costs a few
# milliseconds, and a command line that only talks to a running server never pays for the core at all.
_LAZY = {
    "CODE_KINDS": "codelex.kinds",
    "KIND_ALIASES": "codelex.kinds",
    "KINDS": "codelex.kinds",
    "NON_CODE_KINDS": "codelex.kinds",
    "FileInfo": "codelex.lexical",
    "Hit": "codelex.lexical",
    "WordIndex": "codelex.lexical",
    "centrality_from_reverse_deps": "codelex.lexical",
    # Several indexes as one (the word index's stage, and the coordinator beside it).
    "Federation": "codelex.federation",
    "GlobalQueryStats": "codelex.federation",
    "ShardQueryStats": "codelex.federation",
    "merge_query_stats": "codelex.federation",
    "Filter": "codelex.query",
    "ParsedQuery": "codelex.query",
    "SearchOptions": "codelex.query",
    "parse_query": "codelex.query",
    "Vocabulary": "codelex.text",
    "scan_definitions": "codelex.text",
    "split_identifier": "codelex.text",
    "tokenize_document": "codelex.text",
    "tokenize_line": "codelex.text",
    # Persistence pulls in xxhash and filelock, the project its walk: loaded on first use only.
    "PersistScheduler": "codelex.persist.scheduler",
    "Project": "codelex.project",
    "SearchResult": "codelex.project",
    "CodeResult": "codelex.project",
    "Coverage": "codelex.project",
    "RefreshReport": "codelex.project",
    # Hybrid chunk search (numpy only; embedders load their libraries when built).
    "HybridResult": "codelex.rank",
    "HybridHit": "codelex.rank",
    "FunctionEmbedder": "codelex.dense",
    "SentenceTransformerEmbedder": "codelex.dense",
    "StaticModelEmbedder": "codelex.dense",
}


_SUBPACKAGES = frozenset({"cli", "dense", "docs", "federation", "hybrid", "ingest", "kinds", "lexical", "mcp_server",
                          "persist",
                          "project", "query", "rank", "render", "server", "structure", "text"})


def __getattr__(name: str):
    import importlib

    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"codelex.{name}")
    else:
        raise AttributeError(f"module 'codelex' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AmbiguousSymbolError",
    "CODE_KINDS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_RANKING",
    "KINDS",
    "KIND_ALIASES",
    "NON_CODE_KINDS",
    "RANKINGS",
    "STOPWORDS",
    "ClientConfigError",
    "CodelexError",
    "ConfigError",
    "CodeResult",
    "Coverage",
    "EmbedderError",
    "FileInfo",
    "Filter",
    "Federation",
    "FunctionEmbedder",
    "GlobalQueryStats",
    "Hit",
    "HybridHit",
    "HybridResult",
    "IndexFormatError",
    "ParsedQuery",
    "PersistScheduler",
    "Project",
    "QueryError",
    "RefreshReport",
    "SearchOptions",
    "SearchResult",
    "SentenceTransformerEmbedder",
    "ShardQueryStats",
    "ShardUnavailableError",
    "StaticModelEmbedder",
    "SymbolNotFoundError",
    "UnsafePathError",
    "Vocabulary",
    "WordIndex",
    "centrality_from_reverse_deps",
    "merge_query_stats",
    "parse_query",
    "scan_definitions",
    "split_identifier",
    "tokenize_document",
    "tokenize_line",
]
