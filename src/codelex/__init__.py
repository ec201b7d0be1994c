"""codelex: identifier-aware BM25 code search with a C++ core.

>>> import codelex
>>> codelex.split_identifier("HTTPServer")
['httpserver', 'http', 'server']
"""

from codelex._native import _core
from codelex.errors import CodelexError, IndexFormatError, QueryError
from codelex.tokenize import STOPWORDS, Vocabulary, split_identifier, tokenize_document, tokenize_line

__version__ = "0.1.0"

__all__ = [
    "STOPWORDS",
    "CodelexError",
    "IndexFormatError",
    "QueryError",
    "Vocabulary",
    "split_identifier",
    "tokenize_document",
    "tokenize_line",
]
