"""Exceptions raised by codelex."""


class CodelexError(Exception):
    """Base class of codelex's own errors."""


class QueryError(CodelexError, ValueError):
    """A query (or a structured filter) cannot be understood, e.g. an unknown ``lang:``."""


class IndexFormatError(CodelexError, ValueError):
    """A persisted index is malformed, corrupt, or of an unsupported version."""


class SymbolNotFoundError(CodelexError, LookupError):
    """A definition asked for by name is not in the file; ``nearest`` holds the closest names."""

    def __init__(self, message: str, nearest: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.nearest = nearest


class AmbiguousSymbolError(CodelexError, LookupError):
    """A name matches several definitions; ``candidates`` holds them (qualified name and line)."""

    def __init__(self, message: str, candidates: tuple[tuple[str, int], ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class EmbedderError(CodelexError, ValueError):
    """An embedder is missing, cannot load, or returned vectors of the wrong shape, NaN or zero vectors."""


class ConfigError(CodelexError, ValueError):
    """A project configuration (``[tool.codelex]`` in ``pyproject.toml``, ``.codelex/config.toml``) is malformed."""


class ClientConfigError(ConfigError):
    """An MCP client's configuration cannot be changed (``codelex mcp install``): an unknown client or scope,
    a malformed file, a symbolic link; ``snippet`` holds the entry to add by hand, when there is one."""

    def __init__(self, message: str, snippet: str = "") -> None:
        super().__init__(message)
        self.snippet = snippet


class UnsafePathError(CodelexError, ValueError):
    """A path leaves the project root or passes through a symbolic link (codelex never follows one there)."""


class ShardUnavailableError(CodelexError, RuntimeError):
    """A federation's shard cannot answer: an opened project whose index is not built yet, say."""


class ClusterError(CodelexError, RuntimeError):
    """A cluster command cannot run: Ray or fsspec missing, no Ray cluster to reach, no shards being served."""
