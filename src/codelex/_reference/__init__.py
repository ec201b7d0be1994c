"""Pure-Python oracles of the native core and of the production fast paths (tests only).

Small and obviously correct rather than fast.  Tests compare the compiled
modules and the mask/multiplier caches against these; nothing at run time
falls back to them, and no production module imports this package.
"""

from codelex._reference.bm25 import B, K1, ReferenceIndex
from codelex._reference.bm25f import FIELDS, FieldParams, ReferenceFieldIndex, field_tokens
from codelex._reference.definitions import scan_definitions
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
    "FIELDS",
    "K1",
    "STOPWORDS",
    "FieldParams",
    "ReferenceFieldIndex",
    "ReferenceIndex",
    "filter_matches",
    "filters_predicate",
    "field_tokens",
    "identifiers",
    "prior_multiplier",
    "scan_definitions",
    "split_identifier",
    "split_lines",
    "tokenize_document",
    "tokenize_line",
]
