"""codelex: identifier-aware BM25 code search with a C++ core.

>>> import codelex
>>> codelex.split_identifier("HTTPServer")
['httpserver', 'http', 'server']
"""

from codelex._native import _core
from codelex.errors import CodelexError, IndexFormatError, QueryError
from codelex.index import DEFAULT_MAX_BYTES, FileInfo, Hit, WordIndex
from codelex.kinds import CODE_KINDS, KINDS, NON_CODE_KINDS
from codelex.priors import centrality_from_reverse_deps
from codelex.query import Filter, ParsedQuery, parse_query
from codelex.tokenize import STOPWORDS, Vocabulary, split_identifier, tokenize_document, tokenize_line

__version__ = "0.1.0"


_LAZY = {
    # Persistence pulls in xxhash and filelock, the project its walk: loaded on first use only.
    "PersistScheduler": "codelex.store",
    "Project": "codelex.project",
    "SearchResult": "codelex.project",
    "Coverage": "codelex.project",
    "RefreshReport": "codelex.project",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codelex' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "CODE_KINDS",
    "DEFAULT_MAX_BYTES",
    "FileInfo",
    "PersistScheduler",
    "Project",
    "SearchResult",
    "Coverage",
    "RefreshReport",
    "KINDS",
    "NON_CODE_KINDS",
    "Filter",
    "Hit",
    "ParsedQuery",
    "WordIndex",
    "centrality_from_reverse_deps",
    "parse_query",
    "STOPWORDS",
    "CodelexError",
    "IndexFormatError",
    "QueryError",
    "Vocabulary",
    "split_identifier",
    "tokenize_document",
    "tokenize_line",
]
