"""The query stage: the query language (inline filters), the validated options and the request parsed once."""

from codelex.query.globs import glob_regex, literal_glob, paths_predicate
from codelex.query.options import CentralityMap, SearchOptions, check_limit
from codelex.query.parse import FILTER_KEYS, Filter, ParsedQuery, parse_query, resolve_kind, validate_filters
from codelex.query.request import Request, parse_request

__all__ = [
    "CentralityMap",
    "FILTER_KEYS",
    "Filter",
    "ParsedQuery",
    "Request",
    "SearchOptions",
    "check_limit",
    "glob_regex",
    "literal_glob",
    "parse_query",
    "parse_request",
    "paths_predicate",
    "resolve_kind",
    "validate_filters",
]
