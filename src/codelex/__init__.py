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

from codelex.defaults import DEFAULT_MAX_BYTES, DEFAULT_RANKING, RANKINGS, STOPWORDS, VERSION
from codelex.errors import (
    AmbiguousSymbolError,
    CodelexError,
    ConfigError,
    EmbedderError,
    IndexFormatError,
    QueryError,
    SymbolNotFoundError,
)
from codelex.kinds import CODE_KINDS, KIND_ALIASES, KINDS, NON_CODE_KINDS
from codelex.lexical import FileInfo, Hit, WordIndex, centrality_from_reverse_deps
from codelex.query import Filter, ParsedQuery, SearchOptions, parse_query
from codelex.text import Vocabulary, scan_definitions, split_identifier, tokenize_document, tokenize_line

__version__ = VERSION

_LAZY = {
    # Persistence pulls in xxhash and filelock, the project its walk: loaded on first use only.
    "PersistScheduler": "codelex.persist.scheduler",
    "Project": "codelex.project",
    "SearchResult": "codelex.project",
    "Coverage": "codelex.project",
    "RefreshReport": "codelex.project",
    # Hybrid chunk search (numpy only; embedders load their libraries when built).
    "HybridResult": "codelex.rank",
    "HybridHit": "codelex.rank",
    "FunctionEmbedder": "codelex.dense",
    "SentenceTransformerEmbedder": "codelex.dense",
    "StaticModelEmbedder": "codelex.dense",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codelex' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


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
    "CodelexError",
    "ConfigError",
    "Coverage",
    "EmbedderError",
    "FileInfo",
    "Filter",
    "FunctionEmbedder",
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
    "StaticModelEmbedder",
    "SymbolNotFoundError",
    "Vocabulary",
    "WordIndex",
    "centrality_from_reverse_deps",
    "parse_query",
    "scan_definitions",
    "split_identifier",
    "tokenize_document",
    "tokenize_line",
]
