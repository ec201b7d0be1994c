"""Pure-Python oracles of the native core and of the production fast paths (tests only).

Small and obviously correct rather than fast.  Tests compare the compiled
modules and the mask/multiplier caches against these; nothing at run time
falls back to them, and no production module imports this package.
"""

from codelex._reference.bm25 import B, K1, ReferenceIndex
from codelex._reference.filters import filter_matches, filters_predicate
from codelex._reference.priors import prior_multiplier
from codelex._reference.tokenize import (
    STOPWORDS,
    identifiers,
    split_identifier,
    split_lines,
    tokenize_document,
    tokenize_line,
)

__all__ = [
    "B",
    "K1",
    "STOPWORDS",
    "ReferenceIndex",
    "filter_matches",
    "filters_predicate",
    "identifiers",
    "prior_multiplier",
    "split_identifier",
    "split_lines",
    "tokenize_document",
    "tokenize_line",
]
