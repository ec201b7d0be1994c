"""How an answer leaves the process: one renderer per answer kind and output format, for the CLI and MCP.

A search answer (files), in the command line's formats and MCP's:

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
``mcp``       MCP ``symbol_search``'s reply: numbered lines, notes, the suggested next call (the data is the
              structured content, not a second copy in the text)
============  ==================================================================================

:func:`search_lines` renders the first five, :func:`mcp_search_text` the last; a hit's JSON object
is made in one place (:func:`hit_entry`, :func:`mcp_entry`), from :meth:`codelex.Hit.to_dict`.

The other answers, each as ``text`` and ``json`` for the command line (``*_lines``) and as MCP's reply
(``mcp_*_text``):

================  =========================================  =================================
answer            command line                               MCP
================  =========================================  =================================
chunks            :func:`code_lines` (``code``, ``related``)  :func:`mcp_code_search_text`,
                                                             :func:`mcp_related_text`
docs sections     :func:`docs_lines` (``docs``)              :func:`mcp_docs_text`
a file's outline  :func:`outline_lines` (``outline``)        :func:`mcp_outline_text`
a definition      :func:`source_lines` (``show``)            :func:`mcp_source_text`
================  =========================================  =================================

Adding a format is a function here and its name in :data:`FORMATS`.  Paths and text go through
:mod:`codelex.render`'s escapes.  Light: the command line imports this before anything heavy.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence

from codelex.defaults import MCP_SCORE_DIGITS
from codelex.render import best_line_text, display_path, display_text, echo_query, wire_text

__all__ = ["FORMATS", "VIMGREP_MAX_CHARS", "Style", "Where", "budget_note", "code_fence", "code_lines", "docs_entry",
           "docs_lines", "docs_scope_note", "highlighter", "hit_entry", "match_column", "mcp_code_search_answer",
           "mcp_code_search_text",
           "mcp_docs_answer", "mcp_docs_text", "mcp_entry", "mcp_importers_answer", "mcp_next_step",
           "mcp_references_answer", "mcp_no_answer", "mcp_no_answer_text",
           "mcp_outline_answer", "mcp_outline_text", "mcp_page_lines", "mcp_paged", "mcp_related_answer",
           "mcp_related_text",
           "mcp_search_answer", "mcp_search_text", "mcp_source_answer", "mcp_source_text", "mcp_unavailable_answer",
           "mcp_unavailable_text", "outline_entry", "outline_lines", "overloads_note", "search_lines", "source_lines",
           "use_colour", "wired"]

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



def code_fence(text: str) -> str:
    """A Markdown fence that ``text`` cannot close: one backtick longer than its longest run of backticks (at
    least three), so a file's own fence lines never end the block early and pose as codelex's text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)

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


def scoped_path(root: str, scope: str | None, file: str) -> str:
    """A root-relative path as the user's commands take it: relative to ``scope`` (the current directory,
    root-relative, when the command line found the root from it), else as it is."""
    if not scope:
        return file
    return os.path.relpath(os.path.join(root, file), os.path.join(root, scope)).replace(os.sep, "/")


class Where:
    """Where an answer's files are: the ``root`` their best lines are read from, and how a root-relative path
    is shown (escaped; relative to ``scope``, the current directory, when the command line found the root from
    it: :func:`scoped_path`)."""

    __slots__ = ("root", "scope")

    def __init__(self, root: str, scope: str | None = None) -> None:
        self.root = root
        self.scope = scope

    def shown(self, file: str) -> str:
        """How a root-relative path prints."""
        return display_path(scoped_path(self.root, self.scope, file))


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


def _file_lines(root: str, path: str, first: int, last: int, max_chars: int = 200) -> list[str]:
    """Lines ``first``..``last`` (1-based) of ``path`` (root-relative, opened through :mod:`codelex.safefs`: no
    link followed), each cut to ``max_chars`` with its line break removed; fewer at the end of the file, none
    when it cannot be read."""
    from codelex.safefs import open_file

    out: list[str] = []
    try:
        fd, _ = open_file(root, path)
        with os.fdopen(fd, "rb") as f:
            for number, text in enumerate(f, 1):
                if number > last:
                    break
                if number >= first:
                    out.append(text.decode("utf-8", "replace").rstrip("\r\n")[:max_chars])
    except (OSError, ValueError):  # (ValueError: UnsafePathError, an unusable path)
        return []
    return out


def mcp_entry(hit, root: str, importers: int | None = None, snippet_lines: int = 1) -> dict:
    """A hit as MCP ``symbol_search``'s data holds it: :meth:`~codelex.Hit.to_dict`, ``importers`` (how
    many files import it, when the import graph is ready), ``file``, ``text`` and ``symbol`` escaped for
    display, the score to :data:`MCP_SCORE_DIGITS` digits.  With ``snippet_lines`` above 1, ``snippet``: that many lines
    centred on the best line, ``{startLine, lines}`` (escaped for display)."""
    entry = hit.to_dict()
    entry["score"] = round(hit.score, MCP_SCORE_DIGITS)
    if importers is not None:
        entry["importers"] = importers
    entry["file"] = display_path(hit.file)
    entry["text"] = display_text(best_line_text(root, hit.file, hit.start_line))
    if snippet_lines > 1:
        first = max(1, hit.start_line - (snippet_lines - 1) // 2)
        lines = _file_lines(root, hit.file, first, first + snippet_lines - 1)
        entry["snippet"] = {"startLine": first, "lines": [display_text(t) for t in lines]}
    if hit.symbol is not None:
        entry["symbol"] = display_text(hit.symbol)
    return entry


def mcp_next_step(entry: dict) -> dict:
    """The tool call that reads a result further (an answer's ``suggestedNext``, for its first result): its
    definition with ``read_symbol`` when one encloses it, else the file at its line (the client's own read)."""
    path = entry.get("file", entry.get("path"))
    if entry.get("symbol") is not None and "file" in entry:
        return {"tool": "read_symbol", "path": path, "symbol": entry["symbol"]}
    return {"tool": "read_file", "path": path, "line": entry.get("startLine", 1)}


def _next_step_line(step: dict) -> str:
    """The text's last line: the suggested next call, as arguments an agent can copy."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in step.items() if k != "tool")
    return f"Next: {step['tool']}({args})"


def mcp_unavailable_answer(result, echo: str) -> tuple[str, dict]:
    """MCP ``symbol_search``'s reply while no index answers, ``(text, data)``: the text is the hint, then the
    ``available: false`` JSON that is the data."""
    payload = {"available": False, "query": echo, "hint": result.hint, "unavailableReason": result.unavailable_reason}
    text = result.hint or "No codelex index for this workspace yet; retry shortly."
    return f"{text} (unavailable: {result.unavailable_reason})", payload


def mcp_unavailable_text(result, echo: str) -> str:
    """The text of :func:`mcp_unavailable_answer`."""
    return mcp_unavailable_answer(result, echo)[0]


def mcp_search_text(result, root: str, echo: str, *, staleness: str | None = None,
                    importers: Callable[[str], int] | None = None) -> str:
    """MCP ``symbol_search``'s reply for an answered query: ``Top N file(s) for "<q>":`` and one line per hit
    (with its enclosing symbol and matched fields), the ``staleness`` note if any, the coverage line, then
    the suggested next call (the data, :func:`mcp_search_answer`'s, is not repeated in the text)."""
    return mcp_search_answer(result, root, echo, staleness=staleness, importers=importers)[0]


def _page_title(count: int, first_rank: int, what: str, echo: str) -> str:
    """``Top N what for "<q>":`` on a first page, ``what first-last for "<q>":`` on a later one."""
    if first_rank <= 1:
        return f'Top {count} {what} for "{echo}":'
    return f'{what.replace("(s)", "s").capitalize()} {first_rank}-{first_rank + count - 1} for "{echo}":'


def mcp_page_lines(next_cursor: str | None, note: str | None = None) -> list[str]:
    """The lines an MCP list answer ends its text with when it is one page of more (``next_cursor``), and the
    ``note`` on its cursor, if any (e.g. the index changed since the previous page)."""
    lines = [note] if note else []
    if next_cursor:
        lines.append(f'More results: call again with the same arguments and cursor "{next_cursor}".')
    return lines


def mcp_paged(data: dict, next_cursor: str | None, note: str | None = None) -> dict:
    """``data`` with the page's ``nextCursor`` and the ``note`` on its cursor, when there are (every MCP list
    answer's data, as :func:`mcp_page_lines` ends its text)."""
    if next_cursor:
        data["nextCursor"] = next_cursor
    if note:
        data["note"] = note
    return data


def mcp_search_answer(result, root: str, echo: str, *, staleness: str | None = None,
                      importers: Callable[[str], int] | None = None, snippet_lines: int = 1, first_rank: int = 1,
                      next_cursor: str | None = None, page_note: str | None = None) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_search_text`'s text and the answer as data (the tool's structured content:
    ``query``, ``coverage``, ``results`` of :func:`mcp_entry`, ``staleness``, ``suggestedNext``...).

    ``result`` is one page of the answer, whose first hit ranks ``first_rank``; ``next_cursor`` (data
    ``nextCursor``) fetches the next page, and ``page_note`` says something of the cursor.  ``snippet_lines``
    (above 1) shows that many lines around each best line, under its line and in the data (``snippet``).
    """
    entries = [mcp_entry(hit, root, None if importers is None else importers(hit.file), snippet_lines)
               for hit in result.results]
    payload: dict = {"query": echo, "coverage": {"files": result.coverage.files,
                                                  "truncated": result.coverage.truncated}, "results": entries}
    if staleness:
        payload["staleness"] = staleness
    if result.provisional:
        payload["provisional"] = True
        payload["pending"] = list(result.pending)
    if result.generation is not None:
        payload["generation"] = result.generation
    mcp_paged(payload, next_cursor, page_note)
    lines = []
    if entries:
        lines.append(_page_title(len(entries), first_rank, "file(s)", echo))
        for rank, (hit, entry) in enumerate(zip(result.results, entries), first_rank):
            where = f" in {entry['symbol']} (lines {hit.start_line}-{hit.end_line})" if hit.symbol is not None else ""
            matched = f", matched {'+'.join(hit.fields)}" if hit.fields != ("body",) else ""
            lines.append(f"  {rank}. {entry['file']} (score {hit.score:.2f}, {hit.hits} hit(s), line {hit.start_line})"
                         f"{where}{matched}")
            snippet = entry.get("snippet")
            if snippet:
                width = len(str(snippet["startLine"] + len(snippet["lines"]) - 1))
                lines.extend(f"       {str(n).rjust(width)}| {text}"
                             for n, text in enumerate(snippet["lines"], snippet["startLine"]))
    elif first_rank > 1:
        lines.append(f'No more files matched "{echo}".')
    else:
        lines.append(f'No files matched "{echo}".')
    if staleness:
        lines.extend(["", staleness])
    if result.provisional:
        from codelex.project.results import pending_note

        lines.extend(["", pending_note(result.pending)])
    capped = " (capped — results may be incomplete)" if result.coverage.truncated else ""
    lines.append(f"Index covers {result.coverage.files} files{capped}.")
    lines.extend(mcp_page_lines(next_cursor, page_note))
    if entries:
        payload["suggestedNext"] = mcp_next_step(entries[0])
        lines.append(_next_step_line(payload["suggestedNext"]))
    return "\n".join(lines), payload


# --- the import graph and an identifier's references (importers, references) ------------------------------


def mcp_importers_answer(result, *, offset: int = 0, limit: int | None = None, next_cursor: str | None = None,
                         page_note: str | None = None) -> tuple[str, dict]:
    """``(text, data)`` of MCP ``importers``: one page (``limit`` from ``offset``) of the importing files, each
    with the line that imports (data ``path``, ``files`` in all, ``importers`` of ``{file, line, text}``), or
    why there is no answer yet (``available: false``, ``hint``)."""
    path = display_path(result.path)
    if not result.available:
        hint = display_text(result.hint or "unavailable")
        return hint, {"available": False, "path": path, "hint": hint}
    page = result.importers[offset:None if limit is None else offset + limit]
    entries = [{"file": display_path(s.file), "line": s.line, "text": None if s.text is None else display_text(s.text)}
               for s in page]
    data: dict = {"path": path, "files": len(result.importers), "importers": entries}
    if not entries:
        lines = [f"No {'more ' if offset else ''}indexed file imports {path}."]
    else:
        span = f"{offset + 1}-{offset + len(entries)} of " if offset or len(entries) < len(result.importers) else ""
        lines = [f"{span}{len(result.importers)} file(s) import {path}:"]
        lines += [f"  {e['file']}:{e['line']}: {e['text']}" if e["line"] is not None else f"  {e['file']}"
                  for e in entries]
    mcp_paged(data, next_cursor, page_note)
    lines += mcp_page_lines(next_cursor, page_note)
    return "\n".join(lines), data


def mcp_references_answer(result, *, first_rank: int = 1, next_cursor: str | None = None,
                          page_note: str | None = None) -> tuple[str, dict]:
    """``(text, data)`` of MCP ``references``: one page of the files using the identifier (those that define it
    first), each with its lines (a definition's marked); data ``name``, ``files`` (the candidate files, an upper
    bound), ``results`` of ``{file, defines, lines: [{line, text, definition}], more}``; ``first_rank`` above 1
    on a later page."""
    name = display_text(result.name)
    if not result.available:
        hint = display_text(result.hint or "unavailable")
        return hint, {"available": False, "name": name, "hint": hint}
    results = [{"file": display_path(f.file), "defines": f.defines, "more": f.more,
                "lines": [{"line": r.line, "text": display_text(r.text), "definition": r.definition}
                          for r in f.lines]} for f in result.files]
    data: dict = {"name": name, "files": result.total, "results": results}
    if not results:
        text = [f'No {"more " if first_rank > 1 else ""}indexed file uses the identifier "{name}".']
    else:
        more = "More files" if first_rank > 1 else "Files"
        text = [f'{more} using "{name}", definitions first ({result.total} candidate file(s) in the index):']
        for f in results:
            text.append(f"{f['file']}{' (defines it)' if f['defines'] else ''}")
            text += [f"  {r['line']}: {r['text']}{'  [definition]' if r['definition'] else ''}" for r in f["lines"]]
            if f["more"]:
                text.append(f"  (+{f['more']} more line(s))")
    mcp_paged(data, next_cursor, page_note)
    text += mcp_page_lines(next_cursor, page_note)
    return "\n".join(text), data


# --- chunks (code, related) ---------------------------------------------------------------------------


def _places(hit, mode: str) -> str:
    """Where a chunk stands: its similarity (a hybrid answer's), its place in the vector and lexical rankings."""
    places = [f"similarity {hit.similarity:.4f}"] if mode in ("hybrid", "provisional") and hit.vector_rank else []
    if hit.vector_rank is not None:
        places.append(f"vector #{hit.vector_rank}")
    if hit.lexical_rank is not None:
        places.append(f"lexical #{hit.lexical_rank}")
    return ", ".join(places)


def _symbol_after(symbol: str | None) -> str:
    """`` Name`` (escaped) after a chunk's span, or "" when it has none."""
    return f" {display_text(symbol)}" if symbol else ""


def budget_note(result, remedy: str, cut: str) -> str | None:
    """One line when the shared line budget left results out (None when it cut nothing): how many, the budget,
    ``cut`` when excerpts were shortened too, then ``remedy``."""
    omitted = getattr(result, "omitted", 0)
    if not omitted:
        return None
    cut = cut if any(h.truncated for h in result.hits) else ""
    return (f"{omitted} more result{'s' if omitted != 1 else ''} left out by the {result.line_budget:,}-line "
            f"budget{cut}: {remedy}")


def _chunks_payload(result) -> dict:
    """A chunks answer's wire shape (:meth:`~codelex.project.CodeResult.to_dict`), the query echoed, paths escaped."""
    payload = result.to_dict()
    payload["query"] = echo_query(result.query)
    for hit, entry in zip(result.hits, payload["results"]):
        entry["path"] = display_path(hit.path)
    return payload


def code_lines(result, fmt: str, *, style: Style | None = None) -> Iterator[str]:
    """The lines that print a chunks answer (``codelex code`` and ``related``; a
    :class:`~codelex.project.CodeResult`): ``json``, one document whose excerpts and symbols are escaped for the
    wire; ``text``, per chunk ``path:start-end Symbol`` and where it ranked, then its numbered excerpt, then the
    line budget's note."""
    if fmt == "json":
        payload = _chunks_payload(result)
        for hit, entry in zip(result.hits, payload["results"]):
            entry["excerpt"] = wire_text(hit.excerpt)
            if hit.symbol is not None:
                entry["symbol"] = wire_text(hit.symbol)
        yield json.dumps(payload, ensure_ascii=False)
        return
    if fmt != "text":
        raise ValueError(f"unknown output format {fmt!r} for chunks (text or json)")
    style = style or Style(False)
    for rank, h in enumerate(result.hits, 1):
        yield (f"{rank:>3}. {style.path(display_path(h.path))}:{style.line_no(f'{h.start_line}-{h.end_line}')}"
               f"{_symbol_after(h.symbol)}  {style.dim(_places(h, result.mode))}")
        for number, text in enumerate(h.excerpt.split("\n"), h.start_line):
            yield f"     {style.line_no(str(number))}  {display_text(text)}"
        if h.truncated:
            yield f"     {style.dim('…')}"
    note = budget_note(result, "raise --lines", " (and excerpts cut to their first lines)")
    if note:
        yield style.dim(note)


def mcp_no_answer_text(result) -> str:
    """MCP ``code_search``'s and ``find_related``'s reply while there is no answer (its hint)."""
    return f"No answer yet: {display_text(result.hint or 'unavailable')}"


def mcp_no_answer(result) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_no_answer_text` and ``{available: false, mode, hint}``."""
    return mcp_no_answer_text(result), {"available": False, "mode": result.mode,
                                        "hint": display_text(result.hint or "unavailable")}


def _mcp_chunks_answer(result, title: str, first_rank: int = 1, next_cursor: str | None = None,
                       page_note: str | None = None) -> tuple[str, dict]:
    lines = [title]
    for rank, h in enumerate(result.hits, first_rank):
        fence = code_fence(h.excerpt)
        lines.append(f"{rank}. {display_path(h.path)}:{h.start_line}-{h.end_line}{_symbol_after(h.symbol)} "
                     f"({_places(h, result.mode)})")
        lines.extend([fence, h.excerpt + ("\n…" if h.truncated else ""), fence])
    note = budget_note(result, "pass a larger `lines`, a smaller `limit` or narrower `paths`.",
                       ", and excerpts were cut to their first lines")
    if note:  # an answer cut short says so, and how to get the rest
        lines.append(note)
    if result.hint:
        lines.append(display_text(result.hint))
    lines.append(f"Mode: {result.mode}; {result.embedded:,} of {result.chunks:,} chunks embedded.")
    lines.extend(mcp_page_lines(next_cursor, page_note))
    full = _chunks_payload(result)
    mcp_paged(full, next_cursor, page_note)
    # The data keeps the excerpts (as the text shows them, escaped) and the symbols escaped alike.
    for hit, entry in zip(result.hits, full["results"]):
        entry["excerpt"] = wire_text(hit.excerpt)
        if hit.symbol is not None:
            entry["symbol"] = display_text(hit.symbol)
    return "\n".join(lines), full


def mcp_code_search_answer(result, query: str, *, first_rank: int = 1, next_cursor: str | None = None,
                           page_note: str | None = None) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_code_search_text` and the answer as data, its excerpts included; ``result``
    one page whose first chunk ranks ``first_rank``, ``next_cursor`` (data ``nextCursor``) the next page's."""
    title = _page_title(len(result.hits), first_rank, "chunk(s)", echo_query(query))
    return _mcp_chunks_answer(result, title, first_rank, next_cursor, page_note)


def mcp_code_search_text(result, query: str) -> str:
    """MCP ``code_search``'s reply: ``Top N chunk(s) for "<q>":``, each chunk's place and fenced excerpt, the
    budget's note, the hint and the mode line (the data, excerpts included, is the structured content)."""
    return mcp_code_search_answer(result, query)[0]


def mcp_related_answer(result, path: str, line: int) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_related_text` and the answer as data, its excerpts included."""
    return _mcp_chunks_answer(result, f"Chunks most like {display_path(path)}:{line}:")


def mcp_related_text(result, path: str, line: int) -> str:
    """MCP ``find_related``'s reply: as :func:`mcp_code_search_text`, titled ``Chunks most like path:line:``."""
    return mcp_related_answer(result, path, line)[0]


# --- documentation sections (docs) -------------------------------------------------------------------


def docs_entry(hit, query: str, escape: Callable[[str], str] = wire_text,
               language: Callable[[str], str] | None = None) -> dict:
    """A documentation section as the JSON answers hold it: ``path`` (escaped), ``anchor``, ``title``,
    ``heading``, its lines, ``score``, the ``snippet`` for ``query``, ``labels`` (other names that reach it,
    when it has any) and ``language`` (its document's, when ``language(path)`` names one), text through
    ``escape`` (the command line's :func:`~codelex.render.wire_text`; MCP's :func:`~codelex.render.display_text`)."""
    from codelex.docs import snippet

    s = hit.section
    entry = {"path": display_path(s.path), "anchor": escape(s.anchor), "title": escape(s.title),
             "heading": escape(s.heading), "startLine": s.start_line, "endLine": s.end_line, "score": hit.score,
             "snippet": escape(snippet(s, query))}
    if s.labels:
        entry["labels"] = [escape(label) for label in s.labels]
    tag = language(s.path) if language is not None else ""
    if tag:
        entry["language"] = tag
    return entry


def docs_lines(hits, fmt: str, *, query: str, sections: int, style: Style | None = None,
               language: Callable[[str], str] | None = None) -> Iterator[str]:
    """The lines that print ``codelex docs``'s answer (``hits`` of :meth:`codelex.docs.DocsIndex.search` among
    ``sections``): ``json``, one document; ``text``, per section ``path#anchor — title › heading (score)`` and
    its snippet.  ``language(path)`` names a document's language (see :func:`docs_entry`)."""
    if fmt == "json":
        yield json.dumps({"query": echo_query(query), "sections": sections,
                          "results": [docs_entry(h, query, language=language) for h in hits]}, ensure_ascii=False)
        return
    if fmt != "text":
        raise ValueError(f"unknown output format {fmt!r} for docs (text or json)")
    from codelex.docs import snippet

    style = style or Style(False)
    for rank, h in enumerate(hits, 1):
        s = h.section
        where = display_path(f"{s.path}#{s.anchor}" if s.anchor else s.path)
        yield (f"{rank:>3}. {style.path(where)} — {display_text(s.title)} › {display_text(s.heading)}  "
               f"{style.dim(f'(score {h.score})')}")
        yield f"     {display_text(snippet(s, query))}"


def docs_scope_note(languages: dict[str, int], main: str, asked: str | None, paths,
                    remedy: str = "--lang TAG or --lang all", bare: bool = False) -> str:
    """What a docs answer left out, for the summary line: ``" (in en; 1,204 sections in de, ko left out: --lang
    TAG or --lang all)"`` (``remedy``: how this surface asks for them; ``bare``: without the space and
    parentheses), or ``""`` when it searched everything."""
    parts = []
    if asked is None and main:
        others = [tag for tag in languages if tag and tag != main]
        if others:
            skipped = sum(languages[tag] for tag in others)
            shown = ", ".join(others[:4]) + (", …" if len(others) > 4 else "")
            parts.append(f"in {main}; {skipped:,} section{'s' if skipped != 1 else ''} in {shown} left out: {remedy}")
    elif asked is not None and asked.strip().lower() not in ("all", "*"):
        parts.append(f"in {asked} and neutral documents")
    if paths:
        parts.append("under " + ", ".join(display_text(str(p)) for p in ([paths] if isinstance(paths, str) else paths)))
    if not parts:
        return ""
    return "; ".join(parts) if bare else f" ({'; '.join(parts)})"


def mcp_docs_text(hits, query: str, sections: int) -> str:
    """MCP ``docs_search``'s reply: numbered sections with snippets, then the suggested next call (or, without a
    match, one line saying so)."""
    return mcp_docs_answer(hits, query, sections)[0]


def mcp_docs_answer(hits, query: str, sections: int, *, first_rank: int = 1, next_cursor: str | None = None,
                    page_note: str | None = None, scope: str | None = None,
                    language: Callable[[str], str] | None = None) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_docs_text` and the answer as data (``results`` empty without a match);
    ``hits`` one page whose first section ranks ``first_rank``, ``next_cursor`` (data ``nextCursor``) the next
    page's; ``scope`` what the documents searched were narrowed to (data ``scope``), ``language(path)`` a
    document's language (each result's ``language``)."""
    echo = echo_query(query)
    if not hits:
        more = "more " if first_rank > 1 else ""
        searched = f" Searched {scope}." if scope else ""
        return "\n".join([f'No {more}documentation section matched "{echo}" (among {sections} sections).{searched} '
                          "Try other words, or symbol_search to find code.", *mcp_page_lines(None, page_note)]), \
            {"query": echo, "sections": sections, "results": [], **({"note": page_note} if page_note else {}),
             **({"scope": scope} if scope else {})}
    lines = [_page_title(len(hits), first_rank, "section(s)", echo)]
    results = []
    for rank, h in enumerate(hits, first_rank):
        s = h.section
        entry = docs_entry(h, query, display_text, language)
        where = f"{entry['path']}#{entry['anchor']}" if s.anchor else entry["path"]
        lines.append(f"  {rank}. {where} — {entry['title']} › {entry['heading']} (score {h.score}, "
                     f"lines {s.start_line}-{s.end_line})")
        lines.append(f"     {entry['snippet']}")
        results.append(entry)
    data = {"query": echo, "sections": sections, "results": results}
    if scope:
        data["scope"] = scope
        lines.append(f"  (searched {scope})")
    mcp_paged(data, next_cursor, page_note)
    lines.extend(mcp_page_lines(next_cursor, page_note))
    data["suggestedNext"] = mcp_next_step(results[0])
    lines.append(_next_step_line(data["suggestedNext"]))
    return "\n".join(lines), data


# --- a file's outline (outline) ----------------------------------------------------------------------


def outline_entry(outline) -> dict:
    """An outline as the JSON answers hold it: :meth:`~codelex.project.Outline.to_dict`, ``path`` escaped."""
    data = outline.to_dict()
    data["path"] = display_path(outline.path)
    return data


def wired(value):
    """``value`` (a JSON-ready structure) with every string in it through :func:`~codelex.render.wire_text`."""
    pending = [value]
    while pending:  # (iterative: no nesting depth overflows the stack)
        node = pending.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in list(items):
            if isinstance(item, str):
                node[key] = wire_text(item)
            elif isinstance(item, (dict, list)):
                pending.append(item)
    return value


def _outline_rows(outline) -> Iterator[tuple[int, object, str]]:
    """``(depth, definition, signature)``, parents first (iterative: no nesting depth overflows the stack)."""
    for i, depth in outline.order():
        yield depth, outline.definitions[i], outline.signatures[i] if i < len(outline.signatures) else ""


def outline_lines(outline, fmt: str, *, style: Style | None = None) -> Iterator[str]:
    """The lines that print ``codelex outline``'s answer: ``json``, :func:`outline_entry`; ``text``, one
    indented line per definition (kind, name, lines, signature)."""
    if fmt == "json":
        # Names and signatures come from the file: escaped as every JSON answer's text is (a C1 control or a
        # bidi override in a hostile file must not reach the terminal as it is).
        yield json.dumps(wired(outline_entry(outline)), ensure_ascii=False)
        return
    if fmt != "text":
        raise ValueError(f"unknown output format {fmt!r} for an outline (text or json)")
    style = style or Style(False)
    for depth, d, signature in _outline_rows(outline):
        yield (f"{'  ' * depth}{style.dim(d.kind)} {style.path(display_text(d.name))}  "
               f"{style.line_no(f'{d.start_line}-{d.end_line}')}  {display_text(signature)}")


def mcp_outline_text(outline) -> str:
    """MCP ``file_outline``'s reply: the file's definitions, nested, one line each (kind, qualified name, lines,
    signature)."""
    return mcp_outline_answer(outline)[0]


def _compact(entry: dict) -> dict:
    """An outline entry without what the rest repeats (``name`` ends ``qualifiedName``; ``signatureLine`` is
    ``startLine`` but for decorators, and the signature's text is there)."""
    pending = [entry]
    while pending:  # (iterative, as wired)
        node = pending.pop()
        for d in node.get("definitions", node.get("children", ())):
            d.pop("name", None)
            d.pop("signatureLine", None)
            pending.append(d)
    return entry


def mcp_outline_answer(outline) -> tuple[str, dict]:
    """``(text, data)``: the outline as lines (:func:`mcp_outline_text`) and as nested data, each only once:
    a JSON copy in the text doubled the reply (6.7 KB for 21 definitions; issue 33)."""
    data = _compact(wired(outline_entry(outline)))
    shown = display_path(outline.path)
    if not outline.available:
        lines = [f"No outline for {shown}: {outline.reason}."]
    else:
        lines = [f"Outline of {shown} ({outline.language}, {len(outline.definitions)} definition(s)):"]
        for depth, d, signature in _outline_rows(outline):
            lines.append(f"{'  ' * (depth + 1)}{d.kind} {display_text(d.qualified_name)}  "
                         f"(lines {d.start_line}-{d.end_line})  {display_text(signature)}")
        if not outline.definitions:
            lines.append("  (no definitions)")
        lines.append("Use read_symbol with a name above to read its source.")
    return "\n".join(lines), data


# --- one definition's source (show, read_symbol) -----------------------------------------------------


def _source_heading(source) -> str:
    d = source.definition
    return (f"{display_path(source.path)}:{source.start_line}-{source.end_line} {d.kind} "
            f"{display_text(d.qualified_name)}")


def source_lines(source, *, style: Style | None = None) -> Iterator[str]:
    """The lines that print ``codelex show``'s answer: ``path:start-end kind Name``, then the numbered source."""
    style = style or Style(False)
    yield style.dim(_source_heading(source))
    width = len(str(source.end_line))
    for number, text in enumerate(source.text.split("\n"), source.start_line):
        yield f"{style.line_no(str(number).rjust(width))}  {display_text(text)}"


def overloads_note(source, remedy: str = "pass `line` to read one") -> str | None:
    """One line when ``source`` is the implementation of ``@overload`` stubs (None otherwise): where they are,
    and ``remedy`` (how this surface reads one: MCP's ``line``, the CLI's ``--line``)."""
    stubs = getattr(source, "overloads", ())
    if not stubs:
        return None
    where = ", ".join(str(n) for n in stubs)
    return (f"The implementation; its {len(stubs)} @overload stub{'s' if len(stubs) != 1 else ''} "
            f"{'are' if len(stubs) != 1 else 'is'} at line{'s' if len(stubs) != 1 else ''} {where} "
            f"({remedy}).")


def mcp_source_text(source) -> str:
    """MCP ``read_symbol``'s reply: where the definition is (and, for an overloaded name's implementation, where
    its stubs are), then its exact source in a fenced block."""
    fence = code_fence(source.text)
    note = overloads_note(source)
    heading = _source_heading(source) + (f"\n{note}" if note else "")
    return f"{heading}\n{fence}\n{source.text}\n{fence}"


def mcp_source_answer(source) -> tuple[str, dict]:
    """``(text, data)``: :func:`mcp_source_text` and :meth:`~codelex.project.SymbolSource.to_dict` (path and
    name escaped for display, the source as the wire carries it)."""
    data = source.to_dict()
    data.update(path=display_path(source.path), symbol=display_text(data["symbol"]), text=wire_text(data["text"]))
    return mcp_source_text(source), data


# --- a project's status (MCP index_status) ---------------------------------------------------------------------


def _vectors_phrase(embedding: dict, ready: bool, blocked: str | None) -> str:
    """How far the embeddings are, and what that means for code_search."""
    done, total = embedding["embedded"], embedding["chunks"]
    if ready:
        return f"ready ({done:,} of {total:,} chunks): code_search is hybrid"
    if embedding["error"]:
        return f"unavailable ({display_text(embedding['error'])}): code_search and find_related rank lexically"
    if blocked:
        return f"cannot become ready by waiting ({blocked}): code_search ranks lexically"
    if total and done >= total:
        return f"complete ({total:,} chunks): code_search is hybrid"
    if embedding["running"] or total:
        return (f"{done:,} of {total:,} chunks{' (running)' if embedding['running'] else ''}: code_search is "
                "lexical until complete; pass `wait` to wait for it")
    return "not started: the first code_search or find_related starts them in the background"


def mcp_status_data(status, readiness, wait_for: str | None, waited: float) -> dict:
    """A project's status (:class:`codelex.project.readiness.ProjectStatus`) after a wait
    (:class:`~codelex.project.readiness.Readiness`), as MCP ``index_status``'s structured answer."""
    embedding = status.embedding
    data = {
        "root": display_path(status.root), "status": status.status, "files": status.files,
        "truncated": status.truncated, "ageSeconds": None if status.age is None else round(status.age, 1),
        "watching": status.watching, "structure": status.structure["status"], "importGraph": status.graph["state"],
        "embedding": {"embedded": embedding["embedded"], "chunks": embedding["chunks"],
                      "running": embedding["running"], "error": embedding["error"]},
    }
    if readiness.blocked:
        data["embedding"]["unavailable"] = display_text(readiness.blocked)
    data["waitedFor"] = wait_for or "default"
    data["ready"] = readiness.ready
    data["waitedSeconds"] = round(waited, 2)
    if status.reason:
        data["reason"] = display_text(status.reason)
    return data


def mcp_status_answer(status, readiness, wait_for: str | None, waited: float) -> tuple[str, dict]:
    """MCP ``index_status``'s reply: a few lines for the agent, and :func:`mcp_status_data`."""
    from codelex.render import format_age

    data = mcp_status_data(status, readiness, wait_for, waited)
    lines = [f"Project {data['root']}: {data['status']}" + (f" ({data['reason']})" if "reason" in data else "")
             + "."]
    if not status.has_index:
        lines.append("Index: none yet (building in the background; call again, or pass `wait`).")
    else:
        watch = status.watch
        capped = " (capped: raise max_files to index the rest)" if status.truncated else ""
        fresh = ("kept fresh by a file watcher" if status.watching
                 else f"watcher {watch['state']}{': ' + display_text(watch['reason']) if watch.get('reason') else ''}"
                      "; refreshed when ten minutes old")
        when = f"built {format_age(status.age)} ago" if status.age is not None else "not yet built"
        lines.append(f"Index: {status.files:,} files{capped}, {when}, {fresh}.")
    structure = status.structure
    lines.append(f"Definitions (file_outline, read_symbol): {structure['status']}"
                 + (f" ({display_text(structure['reason'])})" if structure.get("reason") else "") + ".")
    lines.append(f"Import graph: {status.graph['state']}.")
    vectors_ready = wait_for == "embeddings" and readiness.ready
    blocked = display_text(readiness.blocked) if readiness.blocked else None
    lines.append(f"Embeddings: {_vectors_phrase(status.embedding, vectors_ready, blocked)}.")
    if wait_for is not None:
        lines.append(f"Waited {waited:.1f} s for {wait_for}: " + ("ready." if data["ready"] else
                     "not ready yet (call again with `wait`)." if not readiness.blocked else "cannot be by waiting."))
    return "\n".join(lines), data


# --- builds and status (CLI index and status, MCP reindex) ------------------------------------------------------

#: What a full build's reason (:attr:`codelex.project.RefreshReport.reason`) means, for people.
BUILD_REASONS = {
    "no-index": "no saved index yet",
    "requested": "rebuild requested",
    "untrusted-index": "the saved index was not written by this user",
    "file-set-churn": "too many files added or removed since the last index",
    "stale-document-churn": "too many files changed since the last index",
    "options-changed": "the index settings changed",
}


def human_bytes(n: int | None) -> str:
    """``12.3 MiB``; ``—`` for an unknown size."""
    if n is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def build_phrase(mode: str, reason: str | None) -> str:
    """What a build did, for people: "updated", or "built from scratch: <why>"."""
    if mode != "full":
        return "updated" if mode == "incremental" else display_text(mode)
    if not reason:
        return "built from scratch"
    key, _, detail = reason.partition(": ")
    if key == "unreadable-index":  # (its detail can quote what a saved file held: escaped, as everything printed)
        return f"built from scratch: the saved index could not be read ({display_text(detail)})"
    return f"built from scratch: {BUILD_REASONS.get(reason, display_text(reason))}"


def report_data(report) -> dict:
    """A build's report (:class:`codelex.project.RefreshReport`) in its one JSON shape (CLI ``index --json``'s
    ``report``, MCP ``reindex``'s)."""
    skipped = sum(report.skipped.values())
    unchanged = report.reused if report.mode == "incremental" else 0
    return {"mode": report.mode, "reason": report.reason, "files": report.files, "added": report.added,
            "updated": report.refreshed, "removed": report.dropped, "unchanged": max(0, unchanged),
            "seconds": round(report.seconds, 3), "saved": report.saved,
            "saveError": display_text(report.save_error) if report.save_error else None,
            "truncated": report.truncated, **({"skipped": skipped} if skipped else {})}


def index_lines(summary: dict) -> Iterator[str]:
    """``codelex index``'s account for people, from its JSON summary (paths already shown)."""
    yield (f"{summary['files']:,} files indexed in {summary['seconds']:.2f} s "
           f"({build_phrase(summary['mode'], summary['reason'])}); {summary['refreshed']:,} refreshed, "
           f"{summary['added']:,} added, {summary['dropped']:,} dropped")
    skipped = ", ".join(f"{k} {v:,}" for k, v in sorted(summary["skipped"].items())) or "none"
    yield f"skipped: {skipped}"
    if summary["pruned_dirs"]:
        yield "directories pruned: " + ", ".join(f"{k} {v:,}" for k, v in sorted(summary["pruned_dirs"].items()))
    yield f"index: {summary['index_dir']} ({human_bytes(summary['index_bytes'])})"
    structure = summary["structure"]
    if structure["status"] == "ready":
        counts = {k: v for k, v in structure["stats"].items()
                  if k in ("parsed", "no-grammar", "unavailable", "parse-failed", "timeout")}
        detail = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())) or "nothing changed"
        yield (f"structure: {structure['stats'].get('analyzed', 0):,} files analyzed in {structure['seconds']:.2f} s "
               f"({detail})")
    elif structure["status"] == "failed":
        yield f"structure: failed ({display_text(str(structure['reason']))})"
    if summary["pending"]:  # (a graph that took over GRAPH_WAIT_S: answers say they are provisional until it is)
        yield (f"ranking: still deriving the {' and the '.join(summary['pending'])}; answers say they are "
               "provisional until it is saved")


def config_line(config: dict) -> str:
    """The effective settings on one line, with the files they came from."""
    parts = [f"max_bytes {config['max_bytes'] if config['max_bytes'] is not None else 'none'}",
             f"max_files {config['max_files'] if config['max_files'] is not None else 'none'}"]
    for key in ("ignore", "include"):
        if config.get(key):
            parts.append(f"{key} {', '.join(display_text(p) for p in config[key])}")
    if config.get("languages") is not None:
        parts.append("languages " + ", ".join(config["languages"]))
    for key in ("embedder", "fusion"):
        if key in config:
            parts.append(f"{key} {display_text(config[key])}")
    sources = config.get("sources")
    where = f" (from {', '.join(display_path(s) for s in sources)})" if sources else " (defaults)"
    return "; ".join(parts) + where


#: ``codelex status`` names at most this many skipped files (``--json`` has them all).
STATUS_SKIPPED_SHOWN = 20


def check_data(info: dict, root: str) -> dict:
    """``codelex status --json``: :meth:`codelex.Project.check`'s answer, its paths shown."""
    return dict(info, root=display_path(root), index_dir=display_path(info["index_dir"]),
                unreadable_dirs={display_path(d): why for d, why in info["unreadable_dirs"].items()},
                skipped={display_path(p): why for p, why in (info.get("skipped") or {}).items()})


def status_lines(info: dict, root: str, freshness: str) -> Iterator[str]:
    """``codelex status`` for people: where the index is, its settings, who keeps it fresh, how stale it is."""
    import time

    from codelex.render import format_age

    yield f"root:  {display_path(root)}"
    yield f"index: {display_path(info['index_dir'])} ({human_bytes(info['index_bytes'])})"
    yield "config: " + config_line(info["config"])
    yield "freshness: " + freshness
    for directory, why in info["unreadable_dirs"].items():
        yield f"skipped index location: {display_path(directory)} ({why})"
    if info["indexed"] is None:
        yield "no index yet: `codelex index` builds one"
        return
    when = info["generated_at"]
    age = f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(when))} ({format_age(time.time() - when)} ago)" \
        if when else "unknown"
    yield f"built: {age}"
    yield f"files: {info['indexed']:,}"
    if info["stale"] + info["added"] + info["removed"]:
        yield (f"stale: {info['stale']:,} changed, {info['added']:,} new, {info['removed']:,} removed "
               "(the next search or `codelex index` refreshes them)")
    else:
        yield "fresh: no file changed since the index was built"
    skipped = info.get("skipped") or {}
    for path, why in list(skipped.items())[:STATUS_SKIPPED_SHOWN]:
        yield f"skipped: {display_path(path)} ({why})"
    if len(skipped) > STATUS_SKIPPED_SHOWN:
        yield f"skipped: {len(skipped) - STATUS_SKIPPED_SHOWN:,} more (`codelex status --json` lists them all)"


def search_notes(result, report, kept: str | None, scope: str | None, machine: bool, open_ms: float,
                 query_ms: float) -> Iterator[str]:
    """What ``codelex search`` says on stderr after its answer: how many files of how many, how the index was
    had (``report``: a one-shot's build; ``kept``: ``watched`` or ``stat-checked`` by the server, None in a
    one-shot) and the times (not for a machine format); the provisional note (always)."""
    if not machine:
        if kept is not None:
            how = "kept warm by the server" + ("" if kept == "watched" else " (stat-checked)")
        else:
            how = ("built" if report.mode == "full" else "opened") if report is not None else "loaded"
        capped = " (capped)" if result.coverage.truncated else ""
        under = f" under {display_text(scope)}/" if scope else ""
        yield (f"{len(result.results)} of {result.coverage.files:,} files{under}{capped}; index {how} in "
               f"{open_ms:.0f} ms, query {query_ms:.2f} ms")
    if result.provisional:
        from codelex.project.results import pending_note

        yield f"codelex: {pending_note(result.pending)}"
