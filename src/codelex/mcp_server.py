"""The MCP server: ``codelex mcp`` (stdio), built on the official MCP Python SDK.

Tools: ``symbol_search`` (files), ``code_search`` (function-sized excerpts), ``find_related`` (look-alike
code), ``docs_search`` (documentation sections), ``file_outline`` and ``read_symbol`` (a file's definitions,
one definition's source), ``text_search`` (an exact string or an RE2 regex), ``index_status`` (what is
indexed, how fresh, how ready; waits for the index, the definitions or the embeddings: ``wait_for``) and
``reindex`` (the index brought up to date with the disk now, or rebuilt: in the background, one build per
project, waited for within a bound).  Every parameter is described in its JSON schema (with integer bounds
and enums); every tool but ``reindex`` is annotated read-only (``reindex`` writes only codelex's own index:
not destructive, idempotent); every answer carries its data as ``structuredContent`` beside the text, and
every tool declares that data's JSON schema (``outputSchema``, :mod:`codelex.mcp_schemas`).

The list answers (``symbol_search``, ``code_search``, ``text_search``, ``docs_search``) come in pages: one
that has more ends with ``nextCursor``, an opaque cursor (the next offset, a digest of the query and the
parameters that rank it, and the index's state) to pass back as ``cursor``; a cursor of another query, or
malformed, is an error result.  Sizes are the caller's: ``limit`` per page, ``snippet_lines`` (lines around
each file's best line, ``symbol_search``), ``excerpt_lines`` and ``lines`` (per excerpt and in all,
``code_search``).

``symbol_search`` answers like the original's ``pilens_symbol_search``:
numbered lines (``Top N file(s) for "<q>":``), a staleness note when the
index is ten minutes old or more, the coverage line, then a fenced JSON
block with ``query``, ``coverage`` and ``results`` (each with the best line's
text and a ``suggestedNext`` step).  A cold project never blocks a call: the
build runs in the background and the call returns the ``available: false``
JSON with the reason and a hint.

What it serves: the project it was started in (the current directory's,
as the CLI discovers it) and the roots named when it started (``codelex mcp
--root DIR``, repeatable, or ``$CODELEX_MCP_ROOTS``); a tool's ``cwd`` must
lie inside one of them, anything else is an error result.  Text indexed from
a hostile checkout could otherwise steer an agent into searching, and
creating an index in, ``~/.ssh`` or ``~/.config``.

One warm :class:`~codelex.project.Project` is kept per root, watched: a file
watcher feeds edits, creations, deletions and renames to the index within
about 20 ms, so answers carry no staleness note (when the watcher cannot start,
the note and the background refresh of an index ten minutes old come back).
Before each call it checks (one ``stat``) whether another process wrote a
newer index, and adopts it; the original could serve a stale copy for up to
20 minutes.  The project's configuration files are followed the same way (and
by the watcher): a changed one re-lists the tree, a broken one makes each call
an error result naming the file and the key until it is fixed.

Requires the ``mcp`` extra: ``pip install 'codelex[mcp]'``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from codelex.defaults import (
    DEFAULT_FUSION,
    DEFAULT_LIMIT,
    DEFAULT_RANKING,
    HYBRID_EXCERPT_LINES,
    HYBRID_LIMIT,
    HYBRID_TOTAL_LINES,
    MCP_DOCS_LIMIT,
    MCP_MAX_EXCERPT_LINES,
    MCP_MAX_LIMIT,
    MCP_MAX_PAGE_OFFSET,
    MCP_MAX_SNIPPET_LINES,
    MCP_MAX_TOTAL_LINES,
    MCP_MAX_WAIT_S,
    MCP_REINDEX_WAIT_S,
    MCP_SNIPPET_LINES,
    RANKINGS,
    STALE_AFTER_S,
    TEXT_SEARCH_LIMIT,
    TEXT_SEARCH_MAX_CONTEXT,
    VERSION,
)
from codelex.languages import BY_KIND
from codelex.errors import QueryError
from codelex.output import (
    mcp_code_search_answer,
    mcp_docs_answer,
    mcp_no_answer,
    mcp_outline_answer,
    mcp_page_lines,
    mcp_related_answer,
    mcp_search_answer,
    mcp_source_answer,
    mcp_status_answer,
    report_data,
    mcp_unavailable_answer,
    wired,
)
from codelex.mcp_schemas import OUTPUT_SCHEMAS
from codelex.project import Project, refusal_reason
from codelex.project.readiness import READINESS, project_status
from codelex.project.pool import ProjectPool
from codelex.query import SearchOptions
from codelex.render import display_path, display_text, echo_query, error_text, format_age, wire_text

__all__ = ["build_server", "code_search_answer", "code_search_text", "docs_search_answer", "docs_search_text",
           "file_outline_answer", "file_outline_text", "find_related_answer", "find_related_text",
           "index_status_answer", "reindex_answer", "text_search_answer",
           "read_symbol_answer", "read_symbol_text", "serve", "symbol_search_answer", "symbol_search_text"]

#: A tool's answer: its text (what a model reads) and the same answer as data (the result's structured content).
Answer = tuple[str, dict]

_QUERY_HELP = (
    "Words or identifiers to rank files by (identifier-aware: getUserByID matches 'get user by id'). "
    "Inline filters: lang:KIND (e.g. lang:python), file:TEXT (path substring), ext:EXT; prefix any filter "
    "with '-' to exclude."
)

#: The projects this server keeps warm (watched), one per served root, and their docs.
_pool = ProjectPool()

#: Environment variable naming more roots for the server to serve (``os.pathsep``-separated), as ``--root``.
ROOTS_ENV = "CODELEX_MCP_ROOTS"
#: The roots this server serves (:func:`serve_roots`): the project it was started in, then the roots named
#: when it started.  A tool's ``cwd`` must lie inside one of them.
_roots: list[Path] = []


def serve_roots(cwd: str | os.PathLike[str] | None = None, named=()) -> tuple[list[Path], list[str]]:
    """``(roots, problems)``: what a server started in ``cwd`` (default: the current directory) with the roots
    ``named`` (``--root``, then ``$CODELEX_MCP_ROOTS``) serves.

    The project ``cwd`` belongs to (:func:`codelex.project.discover_root`) comes first, unless it is refused
    (at or above the home directory: an editor may start the server there); a named root that is no
    directory, or is refused, is a problem (the CLI fails on one).
    """
    from codelex.project import discover_root

    roots: list[Path] = []
    problems: list[str] = []
    try:
        here = discover_root(cwd if cwd is not None else os.getcwd())
    except (OSError, RuntimeError, ValueError):
        here = None
    if here is not None and refusal_reason(here) is None:
        roots.append(here)
    env = [p for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    for raw in (*named, *env):
        try:
            root = Path(raw).expanduser().resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            problems.append(f"{raw}: {exc}")
            continue
        if not root.is_dir():
            problems.append(f"{display_path(str(root))}: not a directory")
            continue
        refused = refusal_reason(root)
        if refused is not None:
            problems.append(f"{display_path(str(root))}: {refused}")
            continue
        if root not in roots:
            roots.append(root)
    return roots, problems


def _served_root(directory: Path) -> Path | None:
    """The served root ``directory`` lies in (the innermost one), or None."""
    inside = [r for r in _roots if directory == r or r in directory.parents]
    return max(inside, key=lambda r: len(r.parts)) if inside else None


def _scope_hint() -> str:
    served = ", ".join(display_path(str(r)) for r in _roots) or "none"
    return (f"This server serves: {served}. Pass a directory inside one of them as `cwd` (or none); to serve "
            f"another project, start the server with `codelex mcp --root DIR` (repeatable) or ${ROOTS_ENV}.")


def _project_for(cwd: str | None) -> Project:
    """The project of a tool's ``cwd``: the served root it lies in (default: the first served root)."""
    if cwd is not None and not isinstance(cwd, str):
        raise ToolError("`cwd` must be a directory path.")
    if not cwd:
        if not _roots:
            raise ToolError("No project to search: this server was not started in one. " + _scope_hint())
        root = _roots[0]
    else:
        if "\x00" in cwd:
            raise ToolError("Cannot search that `cwd`: it contains a NUL character.")
        try:
            directory = Path(cwd).expanduser().resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise ToolError(f"Cannot search {echo_query(repr(cwd))}: {error_text(exc)}") from None
        try:
            readable = directory.is_dir() and os.access(directory, os.R_OK | os.X_OK)
        except (OSError, ValueError):
            readable = False
        if not readable:
            raise ToolError(f"Cannot search {echo_query(repr(cwd))}: not a readable directory. "
                            "Pass the project directory as `cwd`.")
        refused = refusal_reason(directory)
        if refused is not None:
            raise ToolError(f"Refusing to index {display_path(str(directory))}: {display_text(refused)}. "
                            + _scope_hint())
        served = _served_root(directory)
        if served is None:
            raise ToolError(f"Refusing to search {display_path(str(directory))}: outside the projects this "
                            f"server serves. " + _scope_hint())
        root = served
    try:  # watched (edits reach the index as they happen); a project already open follows its configuration
        return _pool.get(root)
    except (OSError, ValueError) as exc:  # e.g. a bad [tool.codelex] table (ConfigError): an error result
        raise ToolError(f"Cannot open {display_path(str(root))}: {error_text(exc)}") from None


def _limit(limit, default: int = DEFAULT_LIMIT) -> int:
    """As the original's MCP tool: a finite number becomes max(1, floor(n)), clamped to
    :data:`codelex.defaults.MCP_MAX_LIMIT` (the schemas' maximum); anything else the default."""
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit):
        return default
    return max(1, min(math.floor(limit), MCP_MAX_LIMIT))


def _lines(lines) -> int:
    """``code_search``'s ``lines``: a finite number becomes max(1, floor(n)), clamped to
    :data:`codelex.defaults.MCP_MAX_TOTAL_LINES`; anything else the default (the original's 400)."""
    if isinstance(lines, bool) or not isinstance(lines, (int, float)) or not math.isfinite(lines):
        return HYBRID_TOTAL_LINES
    return max(1, min(math.floor(lines), MCP_MAX_TOTAL_LINES))


def _bounded(value, default: int, low: int, high: int) -> int:
    """A count parameter: a finite number becomes floor(n) clamped to ``low..high``; anything else ``default``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return max(low, min(math.floor(value), high))


# --- paging: cursor / nextCursor -------------------------------------------------------------------------------
# A cursor is opaque to the client: "cx1." and the URL-safe base64 of [offset, digest, stamp].  The digest names
# the tool, the project and the parameters that decide the ranking (not `limit` or the snippet sizes: a client
# may change its page size between pages); the stamp names the index's state (when it was last built and how
# many files it holds), so a page of an index that changed since the previous one says so.  A page is cut from
# the first offset + limit (+ 1, to know whether more follow) results, so offsets stop at MCP_MAX_PAGE_OFFSET.

_CURSOR_PREFIX = "cx1."
_CURSOR_MAX_CHARS = 200
_MOVED = "The index changed since the previous page: results may have moved between pages."


def _page_digest(tool: str, root, **params) -> str:
    """What a cursor must match: the tool, the project root and the ranking's parameters, digested."""
    text = json.dumps([tool, str(root), params], sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _index_stamp(project: Project) -> str:
    """The index's state, cheaply: when it was last built or refreshed and how many files it holds."""
    return hashlib.sha256(f"{project.generated_at}:{project.coverage.files}".encode()).hexdigest()[:8]


def _encode_cursor(offset: int, digest: str, stamp: str) -> str:
    raw = json.dumps([offset, digest, stamp], separators=(",", ":")).encode("ascii")
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _page_start(cursor, digest: str, stamp: str) -> tuple[int, str | None]:
    """``(offset, note)`` of the page ``cursor`` asks for (``(0, None)`` without one); the note when the index
    changed since the cursor was made.

    Raises
    ------
    ToolError
        For a cursor that is malformed (not one this server issued) or made for another query or parameters.
    """
    if cursor is None or cursor == "":
        return 0, None
    malformed = ToolError("Malformed `cursor`: pass the `nextCursor` of a previous answer exactly as given, or omit "
                          "it to start from the first page.")
    if not isinstance(cursor, str) or len(cursor) > _CURSOR_MAX_CHARS or not cursor.startswith(_CURSOR_PREFIX):
        raise malformed
    body = cursor[len(_CURSOR_PREFIX):]
    try:
        offset, made_for, made_at = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, TypeError):  # (binascii.Error and UnicodeDecodeError are ValueErrors)
        raise malformed from None
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 < offset <= MCP_MAX_PAGE_OFFSET \
            or not isinstance(made_for, str) or not isinstance(made_at, str):
        raise malformed
    if made_for != digest:
        raise ToolError("This `cursor` belongs to another query or other parameters: call with the same query, "
                        "paths, lang and options as the call that returned it, or omit `cursor` to start over.")
    return offset, (None if made_at == stamp else _MOVED)


def _next_cursor(next_offset: int, more: bool, digest: str, stamp: str, note: str | None) -> tuple[str | None,
                                                                                                  str | None]:
    """``(nextCursor, note)``: the cursor of the page at ``next_offset`` when ``more`` results follow (None past
    :data:`~codelex.defaults.MCP_MAX_PAGE_OFFSET`, the note then saying where paging stops)."""
    if not more:
        return None, note
    if next_offset > MCP_MAX_PAGE_OFFSET:
        stop = (f"Paging stops at result {MCP_MAX_PAGE_OFFSET}: narrow the query (paths, lang) to reach the rest.")
        return None, f"{note} {stop}" if note else stop
    return _encode_cursor(next_offset, digest, stamp), note


def symbol_search_answer(project: Project, query: str, limit=None, paths=None, lang=None, ranking=None,
                         cursor=None, snippet_lines=None) -> Answer:
    """The tool's reply for a project (separate from the server for reuse and tests).

    ``cursor`` (a previous answer's ``nextCursor``) asks for the page after it; ``snippet_lines`` for that many
    lines around each file's best line (default :data:`~codelex.defaults.MCP_SNIPPET_LINES`: the line alone).

    Raises
    ------
    ToolError
        For an empty query or a malformed one (an unknown ``lang:``...), an
        unknown ranking, or a cursor that is malformed or not this query's.
    """
    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a non-empty `query`.")
    if ranking is None:
        ranking = DEFAULT_RANKING
    if ranking not in RANKINGS:
        raise ToolError(f"`ranking` must be one of {', '.join(RANKINGS)}.")
    if isinstance(paths, str):
        paths = [paths]
    project.reload_if_changed()
    if project.service.watch and not project.watching and project.watch_status["state"] == "off":
        project.start_watching()  # (an index adopted from another process arrives without open())
    state_before = project.status
    if project.index is None and state_before in ("idle", "failed"):
        project.open(wait=False)
    echo = echo_query(query)
    n = _limit(limit)
    digest = _page_digest("symbol_search", project.root, query=query, paths=paths or None, lang=lang,
                          ranking=ranking)
    stamp = _index_stamp(project)
    offset, note = _page_start(cursor, digest, stamp)
    try:
        result = project.search(query, SearchOptions(limit=offset + n + 1, paths=paths or None, lang=lang,
                                                     ranking=ranking))
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(f'Symbol search failed for "{echo}": {error_text(exc)}') from None
    if not result.available:
        return mcp_unavailable_answer(result, echo)
    ranked = result.results
    result = dataclasses.replace(result, results=ranked[offset:offset + n])
    next_cursor, note = _next_cursor(offset + n, len(ranked) > offset + n, digest, stamp, note)

    staleness = None
    if not project.watching and result.generated_at is not None \
            and time.time() - result.generated_at >= STALE_AFTER_S:
        staleness = (f"Index last updated {format_age(time.time() - result.generated_at)} ago; a refresh is running in the "
                     f"background (or run `codelex index`).")
        if project.status == "ready":
            project.open(wait=False)  # refresh in the background; this answer uses the current index
    graph_ready = project.service.import_graph and project.graph_status["state"] == "ready"
    importers = (lambda file: len(project.importers(file, timeout=0))) if graph_ready else None  # how central
    snippet = _bounded(snippet_lines, MCP_SNIPPET_LINES, 1, MCP_MAX_SNIPPET_LINES)
    return mcp_search_answer(result, str(project.root), echo, staleness=staleness, importers=importers,
                             snippet_lines=snippet, first_rank=offset + 1, next_cursor=next_cursor, page_note=note)


def docs_search_answer(root: Path, query: str, limit=None, cursor=None, paths=None, language=None) -> Answer:
    """The ``docs_search`` reply: numbered sections with snippets, then a fenced JSON block (the data); ``cursor``
    (a previous answer's ``nextCursor``) asks for the page after it; ``paths`` (globs) and ``language`` (a tag,
    or ``all``) narrow the documents (by default, a project with translations answers in its main language)."""
    from codelex.docs import terms
    from codelex.output import docs_scope_note

    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a non-empty `query`.")
    if language is not None and (not isinstance(language, str) or not language.strip()):
        raise ToolError("`language` must be a language tag such as 'en' or 'pt-br', or 'all'.")
    n = _limit(limit, MCP_DOCS_LIMIT)
    index = _pool.docs(root)
    digest = _page_digest("docs_search", root, query=query, paths=paths, language=language)
    stamp = index.stamp[:8]
    offset, note = _page_start(cursor, digest, stamp)
    try:
        ranked = index.search(query, offset + n + 1, paths=paths, language=language) if terms(query) else []
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    next_cursor, note = _next_cursor(offset + n, len(ranked) > offset + n, digest, stamp, note)
    scope = docs_scope_note(index.languages, index.main_language, language, paths,
                            remedy="pass `language` (a tag, or 'all')", bare=True)
    return mcp_docs_answer(ranked[offset:offset + n], query, len(index), first_rank=offset + 1,
                           next_cursor=next_cursor, page_note=note, scope=scope or None,
                           language=index.language_of)


def _resolve(project: Project, path) -> str:
    """A tool's ``path`` argument: relative to the project root (or absolute), in plain or escaped form."""
    from codelex.render import parse_display_path

    if not isinstance(path, str) or not path.strip():
        raise ToolError("Provide a `path` (relative to the project directory).")
    for candidate in (path, parse_display_path(path)):
        full = Path(candidate) if os.path.isabs(candidate) else project.root / candidate
        try:
            if full.is_file():
                return candidate
        except (OSError, ValueError):  # a name too long for the file system, a NUL...: the tool says so below
            continue
    return path


def file_outline_answer(project: Project, path) -> Answer:
    """The ``file_outline`` reply: the file's definitions, nested, one line each; the same as data."""
    from codelex.errors import CodelexError

    rel = _resolve(project, path)
    try:
        outline = project.outline(rel)
    except (OSError, ValueError, CodelexError) as exc:
        raise ToolError(f"Cannot outline {echo_query(display_path(str(path)))}: {error_text(exc)}") from None
    return mcp_outline_answer(outline)


def read_symbol_answer(project: Project, path, symbol, line=None) -> Answer:
    """The ``read_symbol`` reply: where the definition is, then its exact source in a fenced block."""
    from codelex.errors import CodelexError

    if not isinstance(symbol, str) or not symbol.strip():
        raise ToolError("Provide a `symbol` (a name from file_outline or symbol_search).")
    if line is not None and (isinstance(line, bool) or not isinstance(line, (int, float)) or not math.isfinite(line)):
        raise ToolError("`line` must be a line number.")
    rel = _resolve(project, path)
    try:
        source = project.read_symbol(rel, symbol, line=None if line is None else int(line))
    except (OSError, ValueError, TypeError, CodelexError) as exc:
        raise ToolError(f"Cannot read {echo_query(symbol)} in {echo_query(display_path(str(path)))}: "
                        f"{error_text(exc)}") from None
    return mcp_source_answer(source)


def code_search_answer(project: Project, query, limit=None, alternatives=None, paths=None, lang=None,
                       fusion=None, lines=None, cursor=None, excerpt_lines=None) -> Answer:
    """The ``code_search`` reply: function-sized excerpts, best first, then a fenced JSON block.

    Each excerpt is at most ``excerpt_lines`` lines (default :data:`~codelex.defaults.HYBRID_EXCERPT_LINES`),
    and the page's excerpts ``lines`` in all (the budget, allocated by rank); ``cursor`` (a previous answer's
    ``nextCursor``) asks for the page after it: the next one starts where the budget stopped this one.
    """
    from codelex.errors import CodelexError
    from codelex.rank.original import fit_budget

    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a `query`: words describing behaviour, or an identifier.")
    if alternatives is not None and (not isinstance(alternatives, list)
                                     or not all(isinstance(a, str) for a in alternatives)):
        raise ToolError("`alternatives` must be a list of strings.")
    n, budget = _limit(limit, HYBRID_LIMIT), _lines(lines)
    per_result = _bounded(excerpt_lines, HYBRID_EXCERPT_LINES, 1, MCP_MAX_EXCERPT_LINES)
    digest = _page_digest("code_search", project.root, query=query, alternatives=alternatives or [], paths=paths,
                          lang=lang, fusion=fusion)
    stamp = _index_stamp(project)
    offset, note = _page_start(cursor, digest, stamp)
    wanted = offset + n + 1  # (one more than the page: whether more follow)
    try:  # picked with a budget that never binds, then the page cut to `lines` (as one answer is)
        result = project.code_search(query, alternatives=alternatives or (), limit=wanted, paths=paths, lang=lang,
                                     fusion=fusion, excerpt_lines=per_result, total_lines=wanted * per_result)
    except (ValueError, TypeError, CodelexError, OSError) as exc:
        raise ToolError(f"Cannot search {echo_query(query)}: {error_text(exc)}") from None
    if not result.available:
        return mcp_no_answer(result)
    ranked = result.hits
    kept, omitted = fit_budget(ranked[offset:offset + n], budget)
    result = dataclasses.replace(result, hits=kept, omitted=omitted, line_budget=budget)
    next_cursor, note = _next_cursor(offset + len(kept), omitted > 0 or len(ranked) > offset + n, digest, stamp,
                                     note)
    return mcp_code_search_answer(result, query, first_rank=offset + 1, next_cursor=next_cursor, page_note=note)


def find_related_answer(project: Project, path, line, limit=None) -> Answer:
    """The ``find_related`` reply: the chunks most like the one at path:line."""
    from codelex.errors import CodelexError

    if isinstance(line, bool) or not isinstance(line, (int, float)) or not math.isfinite(line) or line < 1:
        raise ToolError("`line` must be a line number.")
    rel = _resolve(project, path)
    try:
        result = project.find_related(rel, int(line), limit=_limit(limit, HYBRID_LIMIT))
    except (FileNotFoundError, ValueError, TypeError, CodelexError, OSError) as exc:
        raise ToolError(f"Cannot relate {echo_query(display_path(str(path)))}:{int(line)}: "
                        f"{error_text(exc)}") from None
    if not result.available:
        return mcp_no_answer(result)
    return mcp_related_answer(result, rel, int(line))


def _seconds(wait) -> float:
    """``index_status``'s ``wait``: a finite number of seconds, clamped to 0..MCP_MAX_WAIT_S; anything else 0."""
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not math.isfinite(wait):
        return 0.0
    return max(0.0, min(float(wait), MCP_MAX_WAIT_S))


def index_status_answer(project: Project, wait=None, wait_for=None) -> Answer:
    """The ``index_status`` reply: what is indexed and how fresh, and how far the definitions, the import graph
    and the embeddings are; after waiting up to ``wait`` seconds for them to be ready.

    ``wait_for`` names what to wait for (:data:`~codelex.project.readiness.READINESS`, each including the ones
    before it: see :meth:`codelex.Project.wait_until`).  Omitted: the index, the definitions and an embedding
    already running.  The data's ``ready`` says whether it is.

    A project not opened yet starts building in the background, as a search would: asking is the first step.

    Raises
    ------
    ToolError
        For an unknown ``wait_for``.
    """
    if wait_for is not None and wait_for not in READINESS:
        raise ToolError(f"`wait_for` must be one of {', '.join(READINESS)}.")
    project.reload_if_changed()
    if project.index is None and project.status in ("idle", "failed"):
        project.open(wait=False)
    began = time.monotonic()
    seconds = _seconds(wait)
    readiness = project.wait_until(wait_for or "structure", seconds)
    if wait_for is None and seconds:
        project.wait_embeddings(max(0.0, seconds - (time.monotonic() - began)))
    waited = time.monotonic() - began
    return mcp_status_answer(project_status(project), readiness, wait_for, waited)


@dataclasses.dataclass
class _Reindex:
    """A build ``reindex`` started: when (monotonic), whether from scratch, the report before it (the build's
    own replaces it once saved), and how many files it has read of how many (its progress callback's)."""

    began: float
    full: bool
    before: object
    progress: list = dataclasses.field(default_factory=lambda: [0, 0])

    def note(self, done: int, total: int, _bytes: int = 0) -> None:
        self.progress[:] = [done, total]


#: The last build ``reindex`` started, per project root (what a second call while it runs reports).
_reindexes: dict[Path, _Reindex] = {}
_reindexes_lock = threading.Lock()


def _report_text(root: str, data: dict) -> str:
    if data["mode"] == "full":
        why = "" if data["reason"] == "requested" else f" ({display_text(str(data['reason']))})"
        what = f"Rebuilt {root} from scratch{why} in {data['seconds']:.2f} s: {data['files']:,} files indexed"
    else:
        what = (f"Reindexed {root} in {data['seconds']:.2f} s: {data['added']:,} file(s) added, "
                f"{data['updated']:,} updated, {data['removed']:,} removed, {data['unchanged']:,} unchanged "
                f"({data['files']:,} files indexed)")
    capped = " (capped by max_files)" if data["truncated"] else ""
    saved = f" The index could not be saved: {data['saveError']}." if data["saveError"] else ""
    return (f"{what}{capped}.{saved} Definitions and embeddings follow in the background (index_status says how "
            "far).")


def reindex_answer(project: Project, full=None, wait=None) -> Answer:
    """The ``reindex`` reply: the project's index brought up to date with the disk now (the tree listed again,
    the files added, changed or removed since applied; from scratch with ``full``), on the project's build
    thread, waited for at most ``wait`` seconds (default :data:`~codelex.defaults.MCP_REINDEX_WAIT_S`, at most
    :data:`~codelex.defaults.MCP_MAX_WAIT_S`): what changed, or that it is still running.

    One build runs per project: while one runs (this tool's, or an open's), a call starts none, says so with its
    progress, and waits for that one.

    Raises
    ------
    ToolError
        When the build cannot start (a closed project, a broken configuration file) or failed.
    """
    from codelex.errors import CodelexError

    if full is not None and not isinstance(full, bool):
        raise ToolError("`full` must be true or false.")
    seconds = float(MCP_REINDEX_WAIT_S) if wait is None else _seconds(wait)
    shown = display_path(str(project.root))
    began = time.monotonic()
    run = _Reindex(began, full is True, project.last_report)
    try:
        started = project.refresh_in_background(full=full is True, progress=run.note)
    except (RuntimeError, OSError, ValueError, CodelexError) as exc:
        raise ToolError(f"Cannot reindex {shown}: {error_text(exc)}") from None
    if project.status == "refused":
        raise ToolError(f"Refusing to index {shown}: {display_text(project.status_reason or 'refused')}.")
    with _reindexes_lock:
        if started:
            _reindexes[project.root] = run
        else:  # the build running: this tool's (its report not replaced yet), else another's (an open's)
            earlier = _reindexes.get(project.root)
            run = earlier if earlier is not None and earlier.before is project.last_report else None
    before = run.before if run is not None else project.last_report
    # Until a build's report replaces the one from before this call (the report follows the save, which follows
    # publication), or the time is up; through another caller's build started meanwhile too, so that a call
    # never says it waited when it did not.
    project.service.wait_build_until(lambda: project.last_report is not before or project.status == "failed",
                                     max(0.0, began + seconds - time.monotonic()))
    if project.status == "failed":
        raise ToolError(f"Reindexing {shown} failed: {display_text(project.status_reason or 'unknown error')}. "
                        "index_status says more; a later call retries.")
    report = project.last_report
    finished = report is not before and report is not None
    data: dict = {"root": shown, "started": started, "finished": finished,
                  "full": run.full if run is not None else None, "status": project.status,
                  "waitedSeconds": round(time.monotonic() - began, 2)}
    lines = []
    if not started:
        since = f", started {time.monotonic() - run.began:.1f} s ago by reindex" if run is not None else ""
        lines.append(f"A build of {shown} was already running{since}: not started again.")
    if finished:
        data["report"] = report_data(report)
        lines.append(_report_text(shown, data["report"]))
    else:
        if run is not None:
            done, total = run.progress
            data["runningSeconds"] = round(time.monotonic() - run.began, 2)
            data["progress"] = {"done": done, "total": total}
        read = f" ({data['progress']['done']:,} of {data['progress']['total']:,} files read)" \
            if data.get("progress", {}).get("total") else ""
        kind = "rebuild" if data["full"] else "reindex" if data["full"] is not None else "build"
        lines.append(f"The {kind} of {shown} is running{read}, not finished within {seconds:g} s: call "
                     "index_status to follow it (or reindex with `wait`, which starts nothing new while it runs).")
    return "\n".join(lines), data


def _context(context) -> int:
    """``text_search``'s ``context``: a finite number becomes floor(n) in 0..TEXT_SEARCH_MAX_CONTEXT; else 0."""
    if isinstance(context, bool) or not isinstance(context, (int, float)) or not math.isfinite(context):
        return 0
    return max(0, min(math.floor(context), TEXT_SEARCH_MAX_CONTEXT))


def text_search_answer(project: Project, pattern, regex=None, ignore_case=None, limit=None, context=None,
                       paths=None, lang=None, cursor=None) -> Answer:
    """The ``text_search`` reply: the indexed files' lines that hold ``pattern`` (a literal string, or an RE2
    regular expression with ``regex``), ``path:line:column: text``, then how far the search went; ``cursor`` (a
    previous answer's ``nextCursor``) asks for the lines after it."""
    from codelex.textsearch import compile_pattern, search_text

    if not isinstance(pattern, str) or not pattern:
        raise ToolError("Provide a `pattern`: the exact text (or, with `regex`, a regular expression) to find.")
    regex, ignore_case = regex is True, ignore_case is True
    try:
        matcher = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
        opts = SearchOptions(paths=[paths] if isinstance(paths, str) else paths or None, lang=lang)
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(f"Cannot search for {echo_query(repr(pattern))}: {error_text(exc)}") from None
    project.reload_if_changed()
    if project.index is None and project.status in ("idle", "failed"):
        project.open(wait=False)
    index = project.index
    shown = echo_query(pattern)
    if index is None:
        return ("No index of this project yet (it is being built in the background); retry shortly.",
                {"available": False, "pattern": shown})
    from codelex.kinds import kind_of

    admit = opts.paths_predicate
    files = [f for f in index.files if (admit is None or admit(f)) and (opts.lang is None or kind_of(f) == opts.lang)]
    n = _limit(limit, TEXT_SEARCH_LIMIT)
    digest = _page_digest("text_search", project.root, pattern=pattern, regex=regex, ignore_case=ignore_case,
                          paths=opts.paths, lang=opts.lang)
    stamp = _index_stamp(project)
    offset, note = _page_start(cursor, digest, stamp)
    found = search_text(project.root, files, matcher, limit=offset + n + 1, context=_context(context),
                        max_bytes=project.config.get("max_bytes"))
    more = len(found.matches) > offset + n
    page = found.matches[offset:offset + n]
    if found.stopped == "limit":  # (the search's limit was one past the page: whether more follow)
        found.stopped = "limit" if more else None
    next_cursor, note = _next_cursor(offset + n, more, digest, stamp, note)
    kind = "regex" if regex else "string"
    after = f" after the first {offset}" if offset else ""
    lines = [f"{len(page)} line(s) matching {kind} \"{shown}\"{after} in {len({m.path for m in page})} file(s):"
             if page else f"No {'more ' if offset else ''}line matches {kind} \"{shown}\"."]
    results = []
    for m in page:
        path = display_path(m.path)
        for k, text in enumerate(m.before, m.line - len(m.before)):
            lines.append(f"{path}-{k}-  {display_text(text)}")
        lines.append(f"{path}:{m.line}:{m.column}: {display_text(m.text)}")
        for k, text in enumerate(m.after, m.line + 1):
            lines.append(f"{path}-{k}-  {display_text(text)}")
        entry = m.to_dict()
        entry["path"] = path
        results.append(entry)
    why = {"limit": f"stopped at the limit of {n} lines: pass a larger `limit` or narrower `paths` (or the "
                    "`cursor` below for the next lines)",
           "time": "stopped at the time budget: narrow it with `paths` or `lang`"}.get(found.stopped)
    skipped = f", {found.unreadable:,} skipped (unreadable, links or too large)" if found.unreadable else ""
    lines.append(f"Searched {found.searched:,} of {found.files:,} indexed files{skipped}"
                 + (f"; {why}." if why else "."))
    lines.extend(mcp_page_lines(next_cursor, note))
    data = {"pattern": shown, "regex": regex, "ignoreCase": ignore_case, "files": found.files,
            "searched": found.searched, "unreadable": found.unreadable, "stopped": found.stopped,
            "results": results}
    if next_cursor:
        data["nextCursor"] = next_cursor
    if note:
        data["note"] = note
    return "\n".join(lines), data


def symbol_search_text(project: Project, query: str, limit=None, paths=None, lang=None, ranking=None) -> str:
    """The text of :func:`symbol_search_answer`."""
    return symbol_search_answer(project, query, limit, paths, lang, ranking)[0]


def docs_search_text(root: Path, query: str, limit=None) -> str:
    """The text of :func:`docs_search_answer`."""
    return docs_search_answer(root, query, limit)[0]


def file_outline_text(project: Project, path) -> str:
    """The text of :func:`file_outline_answer`."""
    return file_outline_answer(project, path)[0]


def read_symbol_text(project: Project, path, symbol, line=None) -> str:
    """The text of :func:`read_symbol_answer`."""
    return read_symbol_answer(project, path, symbol, line)[0]


def code_search_text(project: Project, query, limit=None, alternatives=None, paths=None, lang=None, fusion=None,
                     lines=None) -> str:
    """The text of :func:`code_search_answer`."""
    return code_search_answer(project, query, limit, alternatives, paths, lang, fusion, lines)[0]


def find_related_text(project: Project, path, line, limit=None) -> str:
    """The text of :func:`find_related_answer`."""
    return find_related_answer(project, path, line, limit)[0]


def _result(text: str, *, error: bool = False, data: dict | None = None) -> CallToolResult:
    """A tool result whose text always serializes (no lone surrogate can reach the writer), with ``data`` as
    its structured content (an error result carries none)."""
    return CallToolResult(content=[TextContent(type="text", text=wire_text(text))], is_error=error,
                          structured_content=None if error or data is None else wired(data))


def _reply(answer_of_project, cwd, *args, **kwargs) -> CallToolResult:
    """A tool's result: ``answer_of_project(project, ...)`` (an :data:`Answer`, or a text alone), or its
    ToolError as an error result (our own words, not the SDK's "Error executing tool ..." wrapper)."""
    try:
        answer = answer_of_project(_project_for(cwd), *args, **kwargs)
    except ToolError as exc:
        return _result(str(exc), error=True)
    text, data = answer if isinstance(answer, tuple) else (answer, None)
    return _result(text, data=data)


# --- the tools' parameters, as their JSON schemas publish them ------------------------------------------------
# Each schema is written out (WithJsonSchema) and the Python type kept loose: a client that sends 20.0, 0 or
# 1e300 for `limit`, an alias such as `py` for `lang`, gets the clamped or resolved answer, or an error in our
# own words, never the SDK's validation dump; the schema still tells an agent exactly what to send.

#: The language kinds ``lang`` takes (the registry's; aliases such as ``py`` are accepted but not listed).
LANG_KINDS = tuple(sorted(BY_KIND))


def _fusions() -> tuple[str, ...]:
    """The fusion presets' names, from their one home (:data:`codelex.rank.fusion.FUSIONS`), the default first."""
    from codelex.rank.fusion import FUSIONS

    return (DEFAULT_FUSION, *sorted(name for name in FUSIONS if name != DEFAULT_FUSION))


def _no_default(schema: dict) -> None:
    # An omitted parameter means "the default" (said in its description); a published `"default": null` would
    # contradict the parameter's own type.
    schema.pop("default", None)


def _optional(python_type, schema: dict, description: str):
    """An optional parameter: the loose ``python_type`` checked by the code, published as ``schema``."""
    return Annotated[python_type | None, WithJsonSchema(schema),
                     Field(description=description, json_schema_extra=_no_default)]


def _count(description: str, maximum: int = MCP_MAX_LIMIT):
    """An optional positive integer parameter, published as ``integer`` in 1..``maximum`` (the code clamps)."""
    return _optional(float, {"type": "integer", "minimum": 1, "maximum": maximum}, description)


def _choice(description: str, names: tuple[str, ...]):
    """An optional string parameter published with its ``enum`` (the code checks, in its own words)."""
    return _optional(str, {"type": "string", "enum": list(names)}, description)


def _text(description: str):
    return Annotated[str, Field(description=description)]


_STRINGS = {"type": "array", "items": {"type": "string"}}
_Cwd = _optional(str, {"type": "string"},
                 "A directory inside a project this server serves (absolute, or relative to where it started); "
                 "default: the first served project. Other directories are refused.")
_Paths = _optional(object, _STRINGS,
                   "Globs over paths relative to the project root that scope the search (e.g. 'src/**/*.py'); a "
                   "bare directory scopes its subtree.")
_Path = _text("The file, relative to the project root (as search results name it) or absolute inside it.")
_Line = Annotated[float, WithJsonSchema({"type": "integer", "minimum": 1}),
                  Field(description="A 1-based line number inside the chunk (a function, method or block).")]
_PickLine = _optional(float, {"type": "integer", "minimum": 1},
                      "Picks one of several definitions of the same name: the one whose lines hold this 1-based "
                      "line (the candidates an ambiguous name lists carry it).")
_Lang = _choice("Only files of this language kind (as the inline filter lang:KIND).", LANG_KINDS)
_DocsLanguage = _optional(object, {"type": "string"},
                          "The documents' human language, as a tag ('en', 'de', 'pt-br'): that language's documents "
                          "and the untranslated ones. Default: the project's main language when its docs have "
                          "translations (docs/<lang>/... or page.<lang>.md); 'all' for every language.")
_Cursor = _optional(object, {"type": "string"},
                    "The `nextCursor` of a previous answer, to get the page after it; the other arguments must be "
                    "the same as that call's (`limit` and the snippet sizes may change). Omit for the first page.")

#: Every tool but reindex reads (its index is a cache it keeps itself): nothing in the project or the world changes.
_READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
#: reindex writes the index (codelex's own cache, under the index directory): not read-only, but it destroys
#: nothing, and calling it twice leaves what calling it once does.
_REINDEXES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)


def _instructions(served: str) -> str:
    return (
        "codelex searches the codebases this server serves with indexes it keeps on disk and fresh (a file "
        "watcher applies edits within milliseconds). Tools: symbol_search ranks files for identifiers or words "
        "(where is X defined or used; fast, lexical); code_search returns function-sized excerpts for a "
        "description of behaviour or an identifier (embeddings fused with the lexical ranking, lexical until the "
        "project is embedded); find_related lists the code most like a file:line (look-alikes, duplicates); "
        "docs_search finds documentation sections (Markdown, reST); file_outline lists one file's definitions; "
        "read_symbol reads one definition's exact source; text_search finds an exact string or a regex (when you "
        "know the text); index_status says what is indexed, how fresh, and whether definitions and embeddings are "
        "ready (and can wait for one of them: wait_for); reindex brings the index up to date with the disk now "
        "(after changes the watcher could not see; full=true rebuilds), in the background, one build at a time. "
        "A typical path: symbol_search or code_search, then file_outline, then read_symbol. List answers come in "
        "pages: when one ends with a nextCursor, pass it as `cursor` (same arguments) for the next page. "
        "The first call on a project starts its index in the background and says so: call again shortly. "
        f"This server serves these projects only: {served}. A tool's optional `cwd` must be a directory "
        "inside one of them (default: the first); other directories are refused."
    )


#: The tools, in the order ``tools/list`` gives them: (name, title, description, annotations, function).
_TOOLS: list[tuple[str, str, str, ToolAnnotations, object]] = []


def _tool(name: str, title: str, description: str, annotations: ToolAnnotations = _READS):
    """Declare the function as the tool ``name``; :func:`build_server` publishes it with :data:`OUTPUT_SCHEMAS`'
    schema of its answers.  (Adding a tool: its answer function above, its schema in ``mcp_schemas``, and one
    function here.)"""
    def register(fn):
        _TOOLS.append((name, title, description, annotations, fn))
        return fn
    return register


@_tool(
    name="symbol_search",
    title="Search files by identifiers and words",
    description=(
        "Find the files of a project most relevant to a query (identifiers, words, or both), best first, with "
        "the best-matching line of each and the definition around it. The first call on a project starts "
        "building its index in the background and says so; later calls answer in milliseconds."
    ),
)
def symbol_search(
    query: _text(_QUERY_HELP),
    cwd: _Cwd = None,
    limit: _count(f"How many files (default {DEFAULT_LIMIT}).") = None,
    paths: _Paths = None,
    lang: _Lang = None,
    ranking: _choice(f"'{RANKINGS[0]}' (default: BM25F over the body, the path and the names a file defines) "
                     "or 'classic' (BM25 over file bodies only).", RANKINGS) = None,
    snippet_lines: _count(f"Lines shown per file around its best-matching line (default {MCP_SNIPPET_LINES}: "
                          "the line alone; more add a `snippet` to each result).", MCP_MAX_SNIPPET_LINES) = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(symbol_search_answer, cwd, query, limit=limit, paths=paths, lang=lang, ranking=ranking,
                  cursor=cursor, snippet_lines=snippet_lines)

@_tool(
    name="docs_search",
    title="Search documentation sections",
    description=(
        "Find the sections of a project's documentation (.md, .mdx, .rst, docs/*.txt) that answer a question, "
        "best first, with each one's anchor (as the rendered site links it: Markdown {#id} attributes, Sphinx "
        "ids) and a snippet; translations stay out unless asked for (`language`). Use symbol_search or "
        "code_search for code."
    ),
)
def docs_search(
    query: _text("The question, or words the sections should hold."),
    cwd: _Cwd = None,
    limit: _count(f"How many sections (default {MCP_DOCS_LIMIT}).") = None,
    paths: _Paths = None,
    language: _DocsLanguage = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    try:
        project = _project_for(cwd)  # the same checks on cwd as symbol_search
        text, data = docs_search_answer(project.root, query, limit, cursor=cursor, paths=paths,
                                        language=language)
    except ToolError as exc:
        return _result(str(exc), error=True)
    return _result(text, data=data)

@_tool(
    name="file_outline",
    title="Outline a file's definitions",
    description=(
        "List the definitions (functions, methods, classes, types, constants) of one file of the project, "
        "nested, with their kinds, line spans and signatures. Use it after a search to see what a file "
        "holds, then read_symbol to read one definition."
    ),
)
def file_outline(path: _Path, cwd: _Cwd = None) -> CallToolResult:
    return _reply(file_outline_answer, cwd, path)

@_tool(
    name="read_symbol",
    title="Read one definition's source",
    description=(
        "Read the exact source of one definition of a file (with its decorators and doc comment). An "
        "ambiguous name lists its candidates (pass `line` to pick one); an unknown one names the nearest."
    ),
)
def read_symbol(
    path: _Path,
    symbol: _text("The definition's name: qualified (Outer.method, Type::fn) or bare, as file_outline or a "
                  "search result names it."),
    cwd: _Cwd = None,
    line: _PickLine = None,
) -> CallToolResult:
    return _reply(read_symbol_answer, cwd, path, symbol, line)

@_tool(
    name="code_search",
    title="Search code by behaviour or identifier",
    description=(
        "Find the functions, methods and classes of a project that answer a query, as excerpts, best first: "
        "an embedding ranking fused with the lexical one, so both a description of behaviour and an exact "
        "identifier work. Until the project's chunks are embedded (in the background) the answer is lexical "
        "and says how far embedding is."
    ),
)
def code_search(
    query: _text("What the code does, in words, or an identifier."),
    cwd: _Cwd = None,
    limit: _count(f"How many chunks (default {HYBRID_LIMIT}).") = None,
    alternatives: _optional(list[str], _STRINGS, "Other phrasings of the query (synonyms, likely "
                            "identifiers); each is ranked and the rankings fused.") = None,
    paths: _Paths = None,
    lang: _Lang = None,
    fusion: _choice(f"How the embedding and lexical rankings are fused: '{DEFAULT_FUSION}' (default, weighs "
                    "each by its evidence), 'shape' (by the query's shape), 'original' (fixed 0.7/0.3), "
                    "'vector' (the embedding ranking first).", _fusions()) = None,
    lines: _count(f"The page's excerpts' lines in all (default {HYBRID_TOTAL_LINES}), allocated by rank; an "
                  "answer this budget cut says so (and its `nextCursor` continues after it).",
                  MCP_MAX_TOTAL_LINES) = None,
    excerpt_lines: _count(f"Lines per excerpt at most (default {HYBRID_EXCERPT_LINES}); a longer chunk shows its "
                          "first lines and is marked truncated.", MCP_MAX_EXCERPT_LINES) = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(code_search_answer, cwd, query, limit, alternatives, paths, lang, fusion, lines, cursor,
                  excerpt_lines)

@_tool(
    name="find_related",
    title="Find code like this",
    description=(
        "Find the chunks of a project most similar (in embedding space) to the function or block at a file "
        "and line: look-alike implementations, duplicates, other handlers of the same kind. Same language "
        "only; until the project is embedded, related by shared identifiers (said so)."
    ),
)
def find_related(
    path: _Path,
    line: _Line,
    cwd: _Cwd = None,
    limit: _count(f"How many chunks (default {HYBRID_LIMIT}).") = None,
) -> CallToolResult:
    return _reply(find_related_answer, cwd, path, line, limit)

@_tool(
    name="index_status",
    title="What is indexed, and how fresh",
    description=(
        "Say what a project's indexes hold and how ready they are: the files indexed and how fresh, whether a "
        "watcher keeps them fresh, and whether definitions (file_outline, read_symbol), the import graph and "
        "the embeddings (code_search, find_related) are ready. Pass `wait` to wait for them, and `wait_for` "
        "to say which (e.g. 'embeddings' before relying on code_search's embedding ranking). The first call on "
        "a project starts its index."
    ),
)
def index_status(
    cwd: _Cwd = None,
    wait: _optional(float, {"type": "number", "minimum": 0, "maximum": MCP_MAX_WAIT_S},
                    f"Seconds to wait, at most {MCP_MAX_WAIT_S}, before answering (default 0: answer at once); "
                    "the answer comes as soon as what `wait_for` names is ready.") = None,
    wait_for: _choice("What `wait` waits for, each including the ones before it: 'index' (the files, for "
                      "symbol_search and text_search), 'structure' (definitions, for file_outline and "
                      "read_symbol), 'embeddings' (until code_search ranks by embeddings: starts them if "
                      "nothing has, answers at once when waiting cannot help, e.g. no model installed). "
                      "Default: the index, the definitions and an embedding already running.", READINESS) = None,
) -> CallToolResult:
    return _reply(index_status_answer, cwd, wait, wait_for)

@_tool(
    name="reindex",
    title="Bring the index up to date now",
    description=(
        "Bring a project's index up to date with the files on disk now: list the tree again and apply the "
        "files added, changed and removed (or, with `full`, rebuild it from scratch). For after changes the "
        "file watcher cannot see (a branch switch on another machine's mount, a watcher that could not "
        "start). The build runs in the background, one at a time per project: the answer says what changed "
        "when it finishes within `wait` seconds, else that it is running (a second call while it runs "
        "starts nothing and reports its progress). Definitions and embeddings follow in the background."
    ),
    annotations=_REINDEXES,
)
def reindex(
    cwd: _Cwd = None,
    full: _optional(bool, {"type": "boolean"}, "Rebuild the index from scratch instead of applying what "
                                              "changed (default false).") = None,
    wait: _optional(float, {"type": "number", "minimum": 0, "maximum": MCP_MAX_WAIT_S},
                    f"Seconds to wait for the build, at most {MCP_MAX_WAIT_S} (default {MCP_REINDEX_WAIT_S}; "
                    "0: answer at once).") = None,
) -> CallToolResult:
    return _reply(reindex_answer, cwd, full, wait)

@_tool(
    name="text_search",
    title="Find an exact string or regex",
    description=(
        "Find the lines of a project's indexed files that hold an exact string (or, with `regex`, match a "
        "regular expression: RE2 syntax, no backreferences or lookaround), as path:line:column: text, in "
        "path order. For when you know the text: an error message, a key, every use of a name to rename. "
        "Bounded: at most `limit` lines and a couple of seconds, and it says when it stopped early."
    ),
)
def text_search(
    pattern: _text("The exact text to find (or, with `regex`, an RE2 regular expression); one line at most."),
    regex: _optional(bool, {"type": "boolean"}, "Treat `pattern` as a regular expression (default false: "
                                               "the literal string).") = None,
    ignore_case: _optional(bool, {"type": "boolean"}, "Match regardless of case (default false).") = None,
    cwd: _Cwd = None,
    limit: _count(f"How many matching lines (default {TEXT_SEARCH_LIMIT}).") = None,
    context: _optional(float, {"type": "integer", "minimum": 0, "maximum": TEXT_SEARCH_MAX_CONTEXT},
                       "Lines to show before and after each match (default 0).") = None,
    paths: _Paths = None,
    lang: _Lang = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(text_search_answer, cwd, pattern, regex, ignore_case, limit, context, paths, lang, cursor)


def build_server(roots: list[Path] | None = None) -> MCPServer:
    """The server with its tools (not yet running), serving ``roots`` (default: :func:`serve_roots`'s)."""
    global _roots
    _roots = list(serve_roots()[0] if roots is None else roots)
    served = ", ".join(display_path(str(r)) for r in _roots) or "none (started outside a project)"
    tools: list[Tool] = []
    for name, title, description, hints, fn in _TOOLS:
        made = Tool.from_function(fn, name=name, title=title, description=description, annotations=hints,
                                  structured_output=False)  # (the function builds its CallToolResult)
        made.fn_metadata.output_schema = OUTPUT_SCHEMAS[name]  # published with the tool, checked by clients
        tools.append(made)
    return MCPServer("codelex", version=VERSION, instructions=_instructions(served), tools=tools)

def serve(roots: list[Path] | None = None) -> None:
    """Run the server on stdio until the client disconnects, serving ``roots`` (default: :func:`serve_roots`'s:
    the project of the current directory and ``$CODELEX_MCP_ROOTS``)."""
    try:
        build_server(roots).run("stdio")
    finally:
        _pool.close()  # flush pending saves
