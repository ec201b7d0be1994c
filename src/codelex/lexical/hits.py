"""What the word index answers: one ranked file (:class:`Hit`) and its wire shape (:meth:`Hit.to_dict`).

The type is Python's; the native index fills its instances (a :class:`Hit`
is a tuple, and the binding emits tuples of the type it is handed, so no
Python code runs per hit on a query's path).  How a hit is printed (the
listing, ``--json``, ``--jsonl``, ``-l``, ``--vimgrep``, MCP) is
:mod:`codelex.output`'s.
"""

from __future__ import annotations

from collections import namedtuple
from operator import index as _as_int

__all__ = ["BODY_ONLY", "Hit"]

#: The fields of a hit that matched the body alone (and of every hit of the classic ranking).
BODY_ONLY: tuple[str, ...] = ("body",)


# The seven values and their attributes (C-level accessors, as fast as an extension type's).
_Row = namedtuple("Hit", ["file", "score", "hits", "start_line", "end_line", "symbol", "fields"])
_Row.file.__doc__ = "Path as stored in the index."
_Row.score.__doc__ = "BM25 score times the priors."
_Row.hits.__doc__ = "Lines mentioning the matched query tokens, summed."
_Row.start_line.__doc__ = "The best-matching line (1-based)."
_Row.end_line.__doc__ = "The last line of the enclosing definition, else start_line."
_Row.symbol.__doc__ = "The enclosing definition's qualified name, or None."
_Row.fields.__doc__ = "The fields the query matched."


class Hit(_Row):
    """One ranked file.

    Attributes
    ----------
    file : str
        Path as stored in the index (``/``-separated, project-relative).
    score : float
        BM25 score times the priors.
    hits : int
        Sum over the matched query tokens of the number of lines mentioning them.
    start_line : int
        The best-matching line (1-based): the line whose distinct query tokens
        carry the largest total idf, the earliest on ties.
    end_line : int
        ``start_line``, or, when the structure of the file is known, the last
        line of the definition that encloses it.
    symbol : str or None
        The qualified name of that definition (None when unknown or outside
        every definition).
    fields : tuple of str
        The fields the query matched (``body``, ``dir``, ``name``, ``defs``;
        always ``("body",)`` in the classic ranking).

    Notes
    -----
    A tuple of those seven values, in that order (immutable, hashable,
    equal when the values are): the native index builds them without a
    Python call.
    """

    __slots__ = ()

    def __new__(cls, file: str, score: float, hits: int, start_line: int, end_line: int = -1,
                symbol: str | None = None, fields: tuple[str, ...] | None = BODY_ONLY) -> Hit:
        if not isinstance(file, str):
            raise TypeError(f"file must be str, not {type(file).__name__}")
        if symbol is not None and not isinstance(symbol, str):
            raise TypeError(f"symbol must be str or None, not {type(symbol).__name__}")
        if fields is None:
            fields = BODY_ONLY
        elif not isinstance(fields, tuple):
            raise TypeError(f"fields must be a tuple, not {type(fields).__name__}")
        if isinstance(score, (str, bytes, bytearray)):
            raise TypeError(f"score must be a number, not {type(score).__name__}")
        start_line = _as_int(start_line)
        end_line = _as_int(end_line)
        return tuple.__new__(cls, (file, float(score), _as_int(hits), start_line,
                                   start_line if end_line < 0 else end_line, symbol, fields))

    def with_symbol(self, symbol: str | None, end_line: int) -> Hit:
        """This hit, naming the definition ``symbol`` that encloses its best line and ends at ``end_line``."""
        return Hit(self[0], self[1], self[2], self[3], end_line, symbol, self[6])

    def to_dict(self) -> dict:
        """The original's result shape: ``{file, score, hits, startLine, endLine}``, plus ``symbol`` when known
        and ``fields`` when the query matched more than the body."""
        file, score, hits, start_line, end_line, symbol, fields = self
        out = {"file": file, "score": score, "hits": hits, "startLine": start_line, "endLine": end_line}
        if symbol is not None:
            out["symbol"] = symbol
        if fields != BODY_ONLY:
            out["fields"] = list(fields)
        return out

    def __repr__(self) -> str:
        file, score, hits, start_line, end_line, symbol, fields = self
        extra = f", symbol={symbol!r}" if symbol is not None else ""
        if fields != BODY_ONLY:
            extra += f", fields={fields!r}"
        return (f"Hit(file={file!r}, score={score:.6g}, hits={hits}, "
                f"start_line={start_line}, end_line={end_line}{extra})")

    def __reduce__(self):
        return (Hit, tuple(self))

    def __copy__(self) -> Hit:
        return self

    def __deepcopy__(self, memo) -> Hit:
        return self
