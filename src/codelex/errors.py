"""Exceptions raised by codelex."""


class CodelexError(Exception):
    """Base class of codelex's own errors."""


class QueryError(CodelexError, ValueError):
    """A query (or a structured filter) cannot be understood, e.g. an unknown ``lang:``."""


class IndexFormatError(CodelexError, ValueError):
    """A persisted index is malformed, corrupt, or of an unsupported version."""
