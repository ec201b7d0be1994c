"""The query stage: the query language (inline filters) and the validated search request."""

from codelex.query.globs import glob_regex, paths_predicate
from codelex.query.options import CentralityMap, SearchOptions, check_limit, parse_request
from codelex.query.parse import FILTER_KEYS, Filter, ParsedQuery, parse_query, resolve_kind, validate_filters

__all__ = [
    "CentralityMap",
    "FILTER_KEYS",
    "Filter",
    "ParsedQuery",
    "SearchOptions",
    "check_limit",
    "glob_regex",
    "parse_query",
    "parse_request",
    "paths_predicate",
    "resolve_kind",
    "validate_filters",
]
