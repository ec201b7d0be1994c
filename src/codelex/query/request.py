"""A search request parsed once: :class:`Request`, the query's terms and filters with the options.

The surface that takes a query builds one (:func:`parse_request`, which also
checks it: a malformed request fails there, whether or not an index exists).
Every layer below is handed the request and derives what it needs from it
(:meth:`Request.derive`): the ranking pipeline's candidate and definer
searches, a federation's per-shard requests.  Nothing below the surface
parses or rebuilds query text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from codelex.query.options import SearchOptions
from codelex.query.parse import Filter, ParsedQuery, parse_query, validate_filters

__all__ = ["Request", "parse_request"]


@dataclass(frozen=True)
class Request:
    """One search request: the query as given, parsed once, and how to rank.

    Parameters
    ----------
    text : str
        The query as the user wrote it (what an answer echoes).
    parsed : ParsedQuery
        Its free-text terms and inline filters.
    options : SearchOptions
        Limit, filters and priors.

    Examples
    --------
    >>> r = parse_request("lang:py parse config", limit=5)
    >>> r.terms, [f.key for f in r.filters], r.options.limit
    ('parse config', ['lang'], 5)
    >>> r.derive("parse", limit=50).terms, r.derive("parse", limit=50).filters == r.filters
    ('parse', True)
    """

    text: str
    parsed: ParsedQuery
    options: SearchOptions

    @property
    def terms(self) -> str:
        """The free text (the query without its inline filters)."""
        return self.parsed.terms

    @property
    def filters(self) -> tuple[Filter, ...]:
        """The inline filters, in query order."""
        return self.parsed.filters

    @property
    def tokens(self) -> tuple[str, ...]:
        """The distinct index tokens of :attr:`terms`, in order."""
        return self.parsed.tokens

    def derive(self, terms: str | None = None, **overrides) -> Request:
        """A sub-request: other free ``terms`` under the same filters (None: the same terms), options with
        ``overrides`` applied (fields of :class:`SearchOptions`)."""
        parsed = self.parsed if terms is None or terms == self.parsed.terms else ParsedQuery(terms, self.filters)
        options = SearchOptions.of(self.options, overrides) if overrides else self.options
        if parsed is self.parsed and options is self.options:
            return self
        return Request(self.text, parsed, options)

    def with_options(self, options: SearchOptions) -> Request:
        """The same query under other ``options`` (a federation's shard takes its own view of them)."""
        if not isinstance(options, SearchOptions):
            raise TypeError(f"options must be SearchOptions, not {type(options).__name__}")
        return self if options is self.options else Request(self.text, self.parsed, options)


def parse_request(query: object, options: SearchOptions | None = None,
                  overrides: Mapping[str, object] | None = None, **more: object) -> Request:
    """Parse and check a whole request once: the query (its filters resolved) and the options.

    Parameters
    ----------
    query : str or Request
        The query text, inline filters included; a :class:`Request` is
        taken as it is (``overrides`` applied to its options).
    options : SearchOptions, optional
        How to rank (not with a Request, which carries its own).
    overrides, **more
        Fields of :class:`SearchOptions` to set.

    Raises
    ------
    TypeError
        For a query that is neither a str nor a Request, an option of the
        wrong type, or options given with a Request.
    codelex.QueryError
        For an unknown ``lang:`` or a bad ``path:`` glob, in the query or
        the options.
    """
    changes = {**(overrides or {}), **more}
    if isinstance(query, Request):
        if options is not None:
            raise TypeError("a Request carries its own options: give overrides, not options")
        return query.derive(**changes)
    parsed = parse_query(query)  # (a TypeError for a non-str)
    opts = SearchOptions.of(options, changes)
    validate_filters(parsed.filters)
    return Request(query, parsed, opts)
