"""The MCP tools' answers: each tool's arguments checked and its answer made, as text and data.

Every ``*_answer`` function takes the project a call is for (or its docs) and the tool's arguments as a client
sent them, and returns an :data:`Answer` (the text a model reads, and the same answer as data), rendered by
:mod:`codelex.output`; a bad argument is a ``ToolError`` in our own words.  :mod:`codelex.mcp_server` declares
the tools and hands each call here.  List answers come in pages: a cursor holds the next offset, a digest of the
query and the parameters that rank it, and the index's state.
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

from mcp.server.mcpserver.exceptions import ToolError

from codelex.defaults import (
    DEFAULT_LIMIT,
    DEFAULT_RANKING,
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
    HYBRID_EXCERPT_LINES,
    HYBRID_LIMIT,
    HYBRID_TOTAL_LINES,
)
from codelex.errors import QueryError
from codelex.output import (
    mcp_code_search_answer,
    mcp_docs_answer,
    mcp_importers_answer,
    mcp_references_answer,
    mcp_no_answer,
    mcp_outline_answer,
    mcp_page_lines,
    mcp_paged,
    mcp_related_answer,
    mcp_search_answer,
    mcp_source_answer,
    mcp_status_answer,
    mcp_unavailable_answer,
    report_data,
)
from codelex.project import Project
from codelex.project.readiness import READINESS, project_status
from codelex.query import SearchOptions
from codelex.render import display_path, display_text, echo_query, error_text, format_age

__all__ = ["Answer", "Reindex", "code_search_answer", "code_search_text", "docs_search_answer", "file_outline_answer",
           "file_outline_text", "find_related_answer", "find_related_text", "index_status_answer", "read_symbol_answer",
           "read_symbol_text", "reindex_answer", "symbol_search_answer", "symbol_search_text", "text_search_answer"]

#: A tool's answer: its text (what a model reads) and the same answer as data (the result's structured content).
Answer = tuple[str, dict]


def _count(value, name: str, default: int, maximum: int = MCP_MAX_LIMIT, minimum: int = 1) -> int:
    """A count parameter (``limit``, ``lines``, ``snippet_lines``, ``excerpt_lines``, ``context``): omitted, its
    ``default``; else a whole number from ``minimum`` to ``maximum`` (the schema's bounds; not a bool, not a
    string), or a ToolError saying so: never clamped in silence (0, 2.5 or 10**30 were taken as 1, 2 or the
    maximum)."""
    if value is None:
        return default
    whole = not isinstance(value, bool) and (isinstance(value, int) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()))
    if not whole or not minimum <= value <= maximum:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
        raise ToolError(f"`{name}` must be a whole number from {minimum} to {maximum}, not {shown}.")
    return int(value)


# --- paging: cursor / nextCursor -------------------------------------------------------------------------------
# A cursor is opaque to the client: "cx1." and the URL-safe base64 of [offset, digest, stamp].  The digest names
# the tool, the project and the parameters that decide the ranking (not `limit` or the snippet sizes: a client
# may change its page size between pages); the stamp names the index's state (when it was last built, how many
# files it holds and, for a search, the generation its answer ranked against), so a page of an index that changed
# since the previous one says so.  A page is cut from the first offset + limit (+ 1, to know whether more
# follow) results, so offsets stop at MCP_MAX_PAGE_OFFSET.

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


def _page_start(cursor, digest: str) -> tuple[int, str | None]:
    """``(offset, stamp)`` of the page ``cursor`` asks for (``(0, None)`` without one): the stamp of the index's
    state it was made at (see :func:`_moved`).

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
    return offset, made_at


def _moved(made_at: str | None, stamp: str) -> str | None:
    """The note of a page whose cursor was made at another state of the index than this page's (``stamp``)."""
    return None if made_at is None or made_at == stamp else _MOVED


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
    n = _count(limit, "limit", DEFAULT_LIMIT)
    digest = _page_digest("symbol_search", project.root, query=query, paths=paths or None, lang=lang,
                          ranking=ranking)
    offset, made_at = _page_start(cursor, digest)
    try:
        result = project.search(query, SearchOptions(limit=offset + n + 1, paths=paths or None, lang=lang,
                                                     ranking=ranking))
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(f'Symbol search failed for "{echo}": {error_text(exc)}') from None
    if not result.available:
        return mcp_unavailable_answer(result, echo)
    ranked = result.results
    result = dataclasses.replace(result, results=ranked[offset:offset + n])
    stamp = f"{_index_stamp(project)}:{result.generation}"  # (the generation this page ranked against, whole)
    note = _moved(made_at, stamp)
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
    snippet = _count(snippet_lines, "snippet_lines", MCP_SNIPPET_LINES, MCP_MAX_SNIPPET_LINES)
    return mcp_search_answer(result, str(project.root), echo, staleness=staleness, importers=importers,
                             snippet_lines=snippet, first_rank=offset + 1, next_cursor=next_cursor, page_note=note)


def docs_search_answer(docs_of, root: Path, query: str, limit=None, cursor=None, paths=None, language=None) -> Answer:
    """The ``docs_search`` reply: numbered sections with snippets, and the data; ``cursor``
    (a previous answer's ``nextCursor``) asks for the page after it; ``paths`` (globs) and ``language`` (a tag,
    or ``all``) narrow the documents (by default, a project with translations answers in its main language).
    ``docs_of()`` gives the project's docs (:class:`codelex.docs.DocsIndex`; asked once the arguments are
    checked: a cold project's docs are read then), ``root`` is the project's root."""
    from codelex.docs import terms
    from codelex.output import docs_scope_note

    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a non-empty `query`.")
    if language is not None and (not isinstance(language, str) or not language.strip()):
        raise ToolError("`language` must be a language tag such as 'en' or 'pt-br', or 'all'.")
    n = _count(limit, "limit", MCP_DOCS_LIMIT)
    try:
        index = docs_of()
    except TimeoutError:  # a cold root: its first reading goes on in the background, as a cold index builds
        hint = "The documentation of this project is being read in the background; call again shortly."
        return hint, {"available": False, "query": echo_query(query), "hint": hint}
    except (OSError, ValueError) as exc:  # a broken settings file, a first reading that failed
        raise ToolError(f"Cannot read the documentation: {error_text(exc)}") from None
    digest = _page_digest("docs_search", root, query=query, paths=paths, language=language)
    stamp = index.stamp[:8]
    offset, made_at = _page_start(cursor, digest)
    note = _moved(made_at, stamp)
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
    """The ``code_search`` reply: function-sized excerpts, best first, and the data.

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
    n, budget = _count(limit, "limit", HYBRID_LIMIT), _count(lines, "lines", HYBRID_TOTAL_LINES, MCP_MAX_TOTAL_LINES)
    per_result = _count(excerpt_lines, "excerpt_lines", HYBRID_EXCERPT_LINES, MCP_MAX_EXCERPT_LINES)
    digest = _page_digest("code_search", project.root, query=query, alternatives=alternatives or [], paths=paths,
                          lang=lang, fusion=fusion)
    stamp = _index_stamp(project)
    offset, made_at = _page_start(cursor, digest)
    note = _moved(made_at, stamp)
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
        result = project.find_related(rel, int(line), limit=_count(limit, "limit", HYBRID_LIMIT))
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
        readiness = dataclasses.replace(readiness, ready=project.wait_until("structure", 0).ready)  # (as now)
    waited = time.monotonic() - began
    return mcp_status_answer(project_status(project), readiness, wait_for, waited)


@dataclasses.dataclass
class Reindex:
    """A build ``reindex`` started: when (monotonic), whether from scratch, the report before it (the build's
    own replaces it once saved), and how many files it has read of how many (its progress callback's)."""

    began: float
    full: bool
    before: object
    progress: list = dataclasses.field(default_factory=lambda: [0, 0])

    def note(self, done: int, total: int, _bytes: int = 0) -> None:
        self.progress[:] = [done, total]


#: The last build ``reindex`` started, per project root (what a second call while it runs reports).
_reindexes: dict[Path, Reindex] = {}
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
    run = Reindex(began, full is True, project.last_report)
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
    n = _count(limit, "limit", TEXT_SEARCH_LIMIT)
    digest = _page_digest("text_search", project.root, pattern=pattern, regex=regex, ignore_case=ignore_case,
                          paths=opts.paths, lang=opts.lang)
    stamp = _index_stamp(project)
    offset, made_at = _page_start(cursor, digest)
    note = _moved(made_at, stamp)
    around = _count(context, "context", 0, TEXT_SEARCH_MAX_CONTEXT, minimum=0)
    found = search_text(project.root, files, matcher, limit=offset + n + 1, context=around,
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
    return "\n".join(lines), mcp_paged(data, next_cursor, note)


def symbol_search_text(project: Project, query: str, limit=None, paths=None, lang=None, ranking=None) -> str:
    """The text of :func:`symbol_search_answer`."""
    return symbol_search_answer(project, query, limit, paths, lang, ranking)[0]


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


def importers_answer(project: Project, path, limit=None, cursor=None) -> Answer:
    """The ``importers`` reply: one page of the files that import ``path`` (a file, or a dotted module), each
    with its importing line, from the import graph; while the graph is built, ``available: false`` at once
    (the build started), never a wait.  ``cursor`` (a previous answer's ``nextCursor``) asks for the next."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise ToolError("Provide the `path` of a file of the project (or a dotted module, e.g. pkg.core).")
    n = _count(limit, "limit", DEFAULT_LIMIT)
    digest = _page_digest("importers", project.root, path=path)
    offset, made_at = _page_start(cursor, digest)
    project.reload_if_changed()
    try:
        result = project.import_sites(path, timeout=0)
    except (FileNotFoundError, ValueError) as exc:
        raise ToolError(f"Cannot list the importers of {echo_query(repr(path))}: {error_text(exc)}") from None
    if not result.available:
        return mcp_importers_answer(result)
    stamp = _index_stamp(project)
    next_cursor, note = _next_cursor(offset + n, len(result.importers) > offset + n, digest, stamp,
                                     _moved(made_at, stamp))
    return mcp_importers_answer(result, offset=offset, limit=n, next_cursor=next_cursor, page_note=note)


def references_answer(project: Project, name, limit=None, paths=None, cursor=None) -> Answer:
    """The ``references`` reply: one page of the files whose text holds the identifier ``name``, those that
    define it first, each with its lines; ``cursor`` (a previous answer's ``nextCursor``) asks for the next."""
    if isinstance(paths, str):
        paths = [paths]
    n = _count(limit, "limit", DEFAULT_LIMIT)
    digest = _page_digest("references", project.root, name=name, paths=paths or None)
    offset, made_at = _page_start(cursor, digest)
    project.reload_if_changed()
    try:
        result = project.references(name, limit=n, offset=offset, paths=paths or None)
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(f"Cannot find the references of {echo_query(repr(name))}: {error_text(exc)}") from None
    if not result.available:
        return mcp_references_answer(result)
    stamp = _index_stamp(project)
    nxt = result.next_offset
    next_cursor, note = _next_cursor(nxt or 0, nxt is not None, digest, stamp, _moved(made_at, stamp))
    return mcp_references_answer(result, first_rank=offset + 1, next_cursor=next_cursor, page_note=note)
