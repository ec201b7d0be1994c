"""How a search answer leaves the process: one renderer per output format, for the CLI and the MCP server.

============  ==================================================================================
format        what it prints
============  ==================================================================================
``text``      the ranked listing for people: rank, ``path:line``, the enclosing symbol, score,
              hits and matched fields, the best line (query words highlighted in colour)
``json``      one document: the answer's wire shape (:meth:`SearchResult.to_dict`), each hit
              with ``path`` (as shown here), ``file`` (escaped) and ``text`` (its best line)
``jsonl``     those hit objects, one per line
``files``     the paths alone, best first (``-l``)
``vimgrep``   ``path:line:column:text``, the column of the first query word in the best line
``mcp``       MCP ``symbol_search``'s reply: numbered lines, notes, then a fenced JSON block
============  ==================================================================================

:func:`search_lines` renders the first five, :func:`mcp_search_text` the last; a hit's JSON object
is made in one place (:func:`hit_entry`, :func:`mcp_entry`), from :meth:`codelex.Hit.to_dict`.
Adding a format is a function here and its name in :data:`FORMATS`.  Paths and text go through
:mod:`codelex.render`'s escapes.  Light: the command line imports this before anything heavy.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from codelex.render import best_line_text, display_path, display_text, echo_query, wire_text

__all__ = ["FORMATS", "VIMGREP_MAX_CHARS", "Style", "Where", "highlighter", "hit_entry", "match_column",
           "mcp_entry", "mcp_search_text", "mcp_unavailable_text", "search_lines", "use_colour"]

#: The command line's output formats of a search answer (``--json``, ``--jsonl``, ``-l``, ``--vimgrep``, else text).
FORMATS = ("text", "json", "jsonl", "files", "vimgrep")
#: ``--vimgrep`` prints the whole line (indentation included), up to this many characters.
VIMGREP_MAX_CHARS = 4096


class Style:
    """ANSI colours, on when writing to a terminal (or forced), as ripgrep does."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def path(self, text: str) -> str:
        return self._wrap("35", text)

    def line_no(self, text: str) -> str:
        return self._wrap("32", text)

    def symbol(self, text: str) -> str:
        return self._wrap("36", text)

    def match(self, text: str) -> str:
        return self._wrap("1;31", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def use_colour(choice: str, stream) -> bool:
    """``--color``: ``always``, ``never``, or ``auto`` (a terminal that is not dumb, and no ``$NO_COLOR``)."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def highlighter(query_tokens: Sequence[str], style: Style) -> Callable[[str], str]:
    """A function that colours the query's words in a line (identity without colour)."""
    if not style.enabled or not query_tokens:
        return lambda text: text
    words = sorted(set(query_tokens), key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    return lambda text: pattern.sub(lambda m: style.match(m.group(0)), text)


def match_column(text: str, tokens: Sequence[str]) -> int:
    """The 1-based byte column of the first query token in ``text`` (case-insensitive), else 1, as ripgrep's
    ``--vimgrep`` and editors' quickfix lists count it."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a case mapping changed the length: positions would be off
        return 1
    found = [i for i in (lowered.find(t.lower()) for t in tokens if t) if i >= 0]
    if not found:
        return 1
    return len(text[:min(found)].encode("utf-8", "surrogateescape")) + 1


class Where:
    """Where an answer's files are: the ``root`` their best lines are read from, and how a root-relative path
    is shown (escaped; the command line shows it relative to the current directory when it found the root)."""

    __slots__ = ("root", "shown")

    def __init__(self, root: str, shown: Callable[[str], str] = display_path) -> None:
        self.root = root
        self.shown = shown


def hit_entry(hit, where: Where) -> dict:
    """A hit as ``--json`` and ``--jsonl`` print it: :meth:`~codelex.Hit.to_dict`, ``path`` as shown, ``file``
    and ``symbol`` escaped, ``text`` the best line."""
    entry = hit.to_dict()
    entry["path"] = where.shown(hit.file)
    entry["file"] = display_path(hit.file)
    if hit.symbol is not None:
        entry["symbol"] = wire_text(hit.symbol)
    entry["text"] = wire_text(best_line_text(where.root, hit.file, hit.start_line))
    return entry


def search_lines(result, fmt: str, where: Where, *, query: str, tokens: Sequence[str] = (),
                 style: Style | None = None) -> Iterator[str]:
    """The lines (without line breaks) that print ``result`` (a :class:`~codelex.project.SearchResult`) in the
    output format ``fmt`` (one of :data:`FORMATS`); ``query`` is the question as asked, ``tokens`` its words
    (highlighted, and placed by ``vimgrep``), ``style`` the text listing's colours."""
    hits = result.results
    if fmt == "text":
        style = style or Style(False)
        highlight = highlighter(tokens, style)
        for rank, hit in enumerate(hits, 1):
            text = display_text(best_line_text(where.root, hit.file, hit.start_line))
            symbol = f" {style.symbol(display_text(hit.symbol))}" if hit.symbol is not None else ""
            matched = f", {'+'.join(hit.fields)}" if hit.fields != ("body",) else ""
            yield (f"{rank:>3}. {style.path(where.shown(hit.file))}:{style.line_no(str(hit.start_line))}{symbol}  "
                   f"{style.dim(f'score {hit.score:.2f}, {hit.hits} hit(s){matched}')}  {highlight(text)}")
    elif fmt == "json":
        payload = result.to_dict()
        payload["query"] = echo_query(query)
        payload["results"] = [hit_entry(hit, where) for hit in hits]
        yield json.dumps(payload, ensure_ascii=False)
    elif fmt == "jsonl":  # one object per hit, streamed
        for hit in hits:
            yield json.dumps(hit_entry(hit, where), ensure_ascii=False)
    elif fmt == "files":
        for hit in hits:
            yield where.shown(hit.file)
    elif fmt == "vimgrep":
        for hit in hits:
            text = best_line_text(where.root, hit.file, hit.start_line, VIMGREP_MAX_CHARS, strip=False)
            yield f"{where.shown(hit.file)}:{hit.start_line}:{match_column(text, tokens)}:{display_text(text)}"
    else:
        raise ValueError(f"unknown output format {fmt!r} (one of {', '.join(FORMATS)})")


# --- MCP -------------------------------------------------------------------------------------


def mcp_entry(hit, root: str, importers: int | None = None) -> dict:
    """A hit as MCP ``symbol_search``'s JSON block holds it: :meth:`~codelex.Hit.to_dict`, ``importers`` (how
    many files import it, when the import graph is ready), ``file``, ``text`` and ``symbol`` escaped for
    display, and the ``suggestedNext`` tool call."""
    entry = hit.to_dict()
    if importers is not None:
        entry["importers"] = importers
    entry["file"] = display_path(hit.file)
    entry["text"] = display_text(best_line_text(root, hit.file, hit.start_line))
    if hit.symbol is not None:
        entry["symbol"] = display_text(hit.symbol)
        entry["suggestedNext"] = {"tool": "read_symbol", "path": entry["file"], "symbol": entry["symbol"]}
    else:
        entry["suggestedNext"] = {"tool": "read_file", "path": entry["file"], "line": hit.start_line}
    return entry


def _fenced_json(data: dict) -> list[str]:
    return ["", "```json", json.dumps(data, ensure_ascii=False), "```"]


def mcp_unavailable_text(result, echo: str) -> str:
    """MCP ``symbol_search``'s reply while no index answers: the hint, then the ``available: false`` JSON."""
    payload = {"available": False, "query": echo, "hint": result.hint, "unavailableReason": result.unavailable_reason}
    text = result.hint or "No codelex index for this workspace yet; retry shortly."
    return f"{text}\n\n```json\n{json.dumps(payload, ensure_ascii=False)}\n```"


def mcp_search_text(result, root: str, echo: str, *, staleness: str | None = None,
                    importers: Callable[[str], int] | None = None) -> str:
    """MCP ``symbol_search``'s reply for an answered query: ``Top N file(s) for "<q>":`` and one line per hit
    (with its enclosing symbol and matched fields), the ``staleness`` note if any, the coverage line, then
    the fenced JSON block (``query``, ``coverage``, ``results`` of :func:`mcp_entry`, ``staleness``)."""
    entries = [mcp_entry(hit, root, None if importers is None else importers(hit.file)) for hit in result.results]
    payload: dict = {"query": echo, "coverage": {"files": result.coverage.files,
                                                  "truncated": result.coverage.truncated}, "results": entries}
    if staleness:
        payload["staleness"] = staleness
    lines = []
    if entries:
        lines.append(f'Top {len(entries)} file(s) for "{echo}":')
        for rank, (hit, entry) in enumerate(zip(result.results, entries), 1):
            where = f" in {entry['symbol']} (lines {hit.start_line}-{hit.end_line})" if hit.symbol is not None else ""
            matched = f", matched {'+'.join(hit.fields)}" if hit.fields != ("body",) else ""
            lines.append(f"  {rank}. {entry['file']} (score {hit.score:.2f}, {hit.hits} hit(s), line {hit.start_line})"
                         f"{where}{matched}")
    else:
        lines.append(f'No files matched "{echo}".')
    if staleness:
        lines.extend(["", staleness])
    capped = " (capped — results may be incomplete)" if result.coverage.truncated else ""
    lines.append(f"Index covers {result.coverage.files} files{capped}.")
    lines.extend(_fenced_json(payload))
    return "\n".join(lines)
