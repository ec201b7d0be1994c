"""The MCP server: ``codelex mcp`` (stdio), built on the official MCP Python SDK.

Tools: ``symbol_search`` (files), ``code_search`` (function-sized excerpts), ``find_related`` (look-alike
code), ``docs_search`` (documentation sections), ``file_outline`` and ``read_symbol`` (a file's definitions,
one definition's source), ``text_search`` (an exact string or an RE2 regex) and ``index_status`` (what is
indexed, how fresh, how ready).  Every parameter is described in its JSON schema (with integer bounds and
enums), every tool annotated read-only, and every answer carries its data as ``structuredContent`` beside
the text.

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

import math
import os
import time
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from codelex.defaults import (
    DEFAULT_FUSION,
    DEFAULT_LIMIT,
    DEFAULT_RANKING,
    HYBRID_LIMIT,
    HYBRID_TOTAL_LINES,
    MCP_DOCS_LIMIT,
    MCP_MAX_LIMIT,
    MCP_MAX_TOTAL_LINES,
    MCP_MAX_WAIT_S,
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
    mcp_related_answer,
    mcp_search_answer,
    mcp_source_answer,
    mcp_unavailable_answer,
    wired,
)
from codelex.project import Project, refusal_reason
from codelex.project.pool import ProjectPool
from codelex.query import SearchOptions
from codelex.render import display_path, display_text, echo_query, error_text, format_age, wire_text

__all__ = ["build_server", "code_search_answer", "code_search_text", "docs_search_answer", "docs_search_text",
           "file_outline_answer", "file_outline_text", "find_related_answer", "find_related_text",
           "index_status_answer", "text_search_answer",
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


def symbol_search_answer(project: Project, query: str, limit=None, paths=None, lang=None, ranking=None) -> Answer:
    """The tool's reply for a project (separate from the server for reuse and tests).

    Raises
    ------
    ToolError
        For an empty query or a malformed one (an unknown ``lang:``...), or
        an unknown ranking.
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
    if project.watch and not project.watching and project.watch_status["state"] == "off":
        project.start_watching()  # (an index adopted from another process arrives without open())
    state_before = project.status
    if project.index is None and state_before in ("idle", "failed"):
        project.open(wait=False)
    echo = echo_query(query)
    try:
        result = project.search(query, SearchOptions(limit=_limit(limit), paths=paths or None, lang=lang,
                                                     ranking=ranking))
    except (QueryError, TypeError, ValueError) as exc:
        raise ToolError(f'Symbol search failed for "{echo}": {error_text(exc)}') from None
    if not result.available:
        return mcp_unavailable_answer(result, echo)

    staleness = None
    if not project.watching and result.generated_at is not None \
            and time.time() - result.generated_at >= STALE_AFTER_S:
        staleness = (f"Index last updated {format_age(time.time() - result.generated_at)} ago; a refresh is running in the "
                     f"background (or run `codelex index`).")
        if project.status == "ready":
            project.open(wait=False)  # refresh in the background; this answer uses the current index
    graph_ready = project.import_graph and project.graph_status["state"] == "ready"
    importers = (lambda file: len(project.importers(file, timeout=0))) if graph_ready else None  # how central
    return mcp_search_answer(result, str(project.root), echo, staleness=staleness, importers=importers)


def docs_search_answer(root: Path, query: str, limit=None) -> Answer:
    """The ``docs_search`` reply: numbered sections with snippets, then a fenced JSON block (the data)."""
    from codelex.docs import terms

    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a non-empty `query`.")
    n = _limit(limit, MCP_DOCS_LIMIT)
    index = _pool.docs(root)
    hits = index.search(query, n) if terms(query) else []
    return mcp_docs_answer(hits, query, len(index))


def _resolve(project: Project, path) -> str:
    """A tool's ``path`` argument: relative to the project root (or absolute), in plain or escaped form."""
    from codelex.render import parse_display_path

    if not isinstance(path, str) or not path.strip():
        raise ToolError("Provide a `path` (relative to the project directory).")
    for candidate in (path, parse_display_path(path)):
        full = Path(candidate) if os.path.isabs(candidate) else project.root / candidate
        if full.is_file():
            return candidate
    return path


def file_outline_answer(project: Project, path) -> Answer:
    """The ``file_outline`` reply: the file's definitions, nested, one line each; the same as data."""
    from codelex.errors import CodelexError

    rel = _resolve(project, path)
    try:
        outline = project.outline(rel)
    except (FileNotFoundError, ValueError, CodelexError) as exc:
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
    except (FileNotFoundError, ValueError, TypeError, CodelexError) as exc:
        raise ToolError(f"Cannot read {echo_query(symbol)} in {echo_query(display_path(str(path)))}: "
                        f"{error_text(exc)}") from None
    return mcp_source_answer(source)


def code_search_answer(project: Project, query, limit=None, alternatives=None, paths=None, lang=None,
                       fusion=None, lines=None) -> Answer:
    """The ``code_search`` reply: function-sized excerpts, best first, then a fenced JSON block."""
    from codelex.errors import CodelexError

    if not isinstance(query, str) or not query.strip():
        raise ToolError("Provide a `query`: words describing behaviour, or an identifier.")
    if alternatives is not None and (not isinstance(alternatives, list)
                                     or not all(isinstance(a, str) for a in alternatives)):
        raise ToolError("`alternatives` must be a list of strings.")
    try:
        result = project.code_search(query, alternatives=alternatives or (), limit=_limit(limit, HYBRID_LIMIT),
                                     paths=paths, lang=lang, fusion=fusion, total_lines=_lines(lines))
    except (ValueError, TypeError, CodelexError, OSError) as exc:
        raise ToolError(f"Cannot search {echo_query(query)}: {error_text(exc)}") from None
    if not result.available:
        return mcp_no_answer(result)
    return mcp_code_search_answer(result, query)


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


#: How long ``index_status`` lets an idle definitions store start once the index is there (it starts at once).
_STRUCTURE_SETTLE_S = 1.0


def _seconds(wait) -> float:
    """``index_status``'s ``wait``: a finite number of seconds, clamped to 0..MCP_MAX_WAIT_S; anything else 0."""
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not math.isfinite(wait):
        return 0.0
    return max(0.0, min(float(wait), MCP_MAX_WAIT_S))


def index_status_answer(project: Project, wait=None) -> Answer:
    """The ``index_status`` reply: what is indexed and how fresh, and how far the definitions, the import graph
    and the embeddings are; after waiting up to ``wait`` seconds for them to be ready.

    A project not opened yet starts building in the background, as a search would: asking is the first step.
    """
    project.reload_if_changed()
    if project.index is None and project.status in ("idle", "failed"):
        project.open(wait=False)
    deadline = time.monotonic() + _seconds(wait)
    left = lambda: max(0.0, deadline - time.monotonic())  # noqa: E731 (the budget the three waits share)
    if left():
        project.wait(left())
        # The definitions' build begins just after the index is published: a moment idle is not "done".
        settle = time.monotonic() + min(left(), _STRUCTURE_SETTLE_S)
        while project.structure_status["status"] == "idle" and time.monotonic() < settle:
            time.sleep(0.02)
        project.wait_structure(left())
        project.wait_embeddings(left())
    watch = project.watch_status
    structure = project.structure_status
    graph = project.graph_status
    embedding = project.embedding_status()
    coverage = project.coverage
    generated = project.generated_at
    age = None if generated is None else max(0.0, time.time() - generated)
    data = {
        "root": display_path(str(project.root)),
        "status": project.status,
        "files": coverage.files,
        "truncated": coverage.truncated,
        "ageSeconds": None if age is None else round(age, 1),
        "watching": project.watching,
        "structure": structure["status"],
        "importGraph": graph["state"],
        "embedding": {"embedded": embedding["embedded"], "chunks": embedding["chunks"],
                      "running": embedding["running"], "error": embedding["error"]},
    }
    if project.status_reason:
        data["reason"] = display_text(project.status_reason)
    lines = [f"Project {data['root']}: {data['status']}" + (f" ({data['reason']})" if "reason" in data else "")
             + "."]
    if project.index is None:
        lines.append("Index: none yet (building in the background; call again, or pass `wait`).")
    else:
        capped = " (capped: raise max_files to index the rest)" if coverage.truncated else ""
        fresh = ("kept fresh by a file watcher" if project.watching
                 else f"watcher {watch['state']}{': ' + display_text(watch['reason']) if watch.get('reason') else ''}"
                      "; refreshed when ten minutes old")
        when = f"built {format_age(age)} ago" if age is not None else "not yet built"
        lines.append(f"Index: {coverage.files:,} files{capped}, {when}, {fresh}.")
    lines.append(f"Definitions (file_outline, read_symbol): {structure['status']}"
                 + (f" ({display_text(structure['reason'])})" if structure.get("reason") else "") + ".")
    lines.append(f"Import graph: {graph['state']}.")
    done, total = embedding["embedded"], embedding["chunks"]
    if embedding["error"]:
        vectors = f"unavailable ({display_text(embedding['error'])}): code_search and find_related rank lexically"
    elif total and done >= total:
        vectors = f"complete ({total:,} chunks): code_search is hybrid"
    elif embedding["running"] or total:
        vectors = (f"{done:,} of {total:,} chunks{' (running)' if embedding['running'] else ''}: code_search is "
                   "lexical until complete; pass `wait` to wait for it")
    else:
        vectors = "not started: the first code_search or find_related starts them in the background"
    lines.append(f"Embeddings: {vectors}.")
    return "\n".join(lines), data


def _context(context) -> int:
    """``text_search``'s ``context``: a finite number becomes floor(n) in 0..TEXT_SEARCH_MAX_CONTEXT; else 0."""
    if isinstance(context, bool) or not isinstance(context, (int, float)) or not math.isfinite(context):
        return 0
    return max(0, min(math.floor(context), TEXT_SEARCH_MAX_CONTEXT))


def text_search_answer(project: Project, pattern, regex=None, ignore_case=None, limit=None, context=None,
                       paths=None, lang=None) -> Answer:
    """The ``text_search`` reply: the indexed files' lines that hold ``pattern`` (a literal string, or an RE2
    regular expression with ``regex``), ``path:line:column: text``, then how far the search went."""
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
    found = search_text(project.root, files, matcher, limit=n, context=_context(context),
                        max_bytes=project.config.get("max_bytes"))
    kind = "regex" if regex else "string"
    lines = [f"{len(found.matches)} line(s) matching {kind} \"{shown}\" in {found.matched_files} file(s):"
             if found.matches else f"No line matches {kind} \"{shown}\"."]
    results = []
    for m in found.matches:
        path = display_path(m.path)
        for k, text in enumerate(m.before, m.line - len(m.before)):
            lines.append(f"{path}-{k}-  {display_text(text)}")
        lines.append(f"{path}:{m.line}:{m.column}: {display_text(m.text)}")
        for k, text in enumerate(m.after, m.line + 1):
            lines.append(f"{path}-{k}-  {display_text(text)}")
        entry = m.to_dict()
        entry["path"] = path
        results.append(entry)
    why = {"limit": f"stopped at the limit of {n} lines: pass a larger `limit` or narrower `paths`",
           "time": "stopped at the time budget: narrow it with `paths` or `lang`"}.get(found.stopped)
    skipped = f", {found.unreadable:,} skipped (unreadable, links or too large)" if found.unreadable else ""
    lines.append(f"Searched {found.searched:,} of {found.files:,} indexed files{skipped}"
                 + (f"; {why}." if why else "."))
    data = {"pattern": shown, "regex": regex, "ignoreCase": ignore_case, "files": found.files,
            "searched": found.searched, "unreadable": found.unreadable, "stopped": found.stopped,
            "results": results}
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
_Paths = _optional(list[str], _STRINGS,
                   "Globs over paths relative to the project root that scope the search (e.g. 'src/**/*.py'); a "
                   "bare directory scopes its subtree.")
_Path = _text("The file, relative to the project root (as search results name it) or absolute inside it.")
_Line = Annotated[float, WithJsonSchema({"type": "integer", "minimum": 1}),
                  Field(description="A 1-based line number inside the chunk (a function, method or block).")]
_PickLine = _optional(float, {"type": "integer", "minimum": 1},
                      "Picks one of several definitions of the same name: the one whose lines hold this 1-based "
                      "line (the candidates an ambiguous name lists carry it).")
_Lang = _choice("Only files of this language kind (as the inline filter lang:KIND).", LANG_KINDS)

#: Every tool reads (its index is a cache it keeps itself): nothing in the project or the world changes.
_READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _instructions(served: str) -> str:
    return (
        "codelex searches the codebases this server serves with indexes it keeps on disk and fresh (a file "
        "watcher applies edits within milliseconds). Tools: symbol_search ranks files for identifiers or words "
        "(where is X defined or used; fast, lexical); code_search returns function-sized excerpts for a "
        "description of behaviour or an identifier (embeddings fused with the lexical ranking, lexical until the "
        "project is embedded); find_related lists the code most like a file:line (look-alikes, duplicates); "
        "docs_search finds documentation sections (Markdown, reST); file_outline lists one file's definitions; "
        "read_symbol reads one definition's exact source; text_search finds an exact string or a regex (when you "
        "know the text); index_status says what is indexed, how fresh, and "
        "whether definitions and embeddings are ready (and can wait for them). A typical path: symbol_search or "
        "code_search, then "
        "file_outline, then read_symbol. The first call on a project starts its index in the background and "
        "says so: call again shortly. "
        f"This server serves these projects only: {served}. A tool's optional `cwd` must be a directory "
        "inside one of them (default: the first); other directories are refused."
    )


def build_server(roots: list[Path] | None = None) -> MCPServer:
    """The server with its tools (not yet running), serving ``roots`` (default: :func:`serve_roots`'s)."""
    global _roots
    _roots = list(serve_roots()[0] if roots is None else roots)
    served = ", ".join(display_path(str(r)) for r in _roots) or "none (started outside a project)"
    server = MCPServer("codelex", version=VERSION, instructions=_instructions(served))

    @server.tool(
        name="symbol_search",
        title="Search files by identifiers and words",
        description=(
            "Find the files of a project most relevant to a query (identifiers, words, or both), best first, with "
            "the best-matching line of each and the definition around it. The first call on a project starts "
            "building its index in the background and says so; later calls answer in milliseconds."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def symbol_search(
        query: _text(_QUERY_HELP),
        cwd: _Cwd = None,
        limit: _count(f"How many files (default {DEFAULT_LIMIT}).") = None,
        paths: _Paths = None,
        lang: _Lang = None,
        ranking: _choice(f"'{RANKINGS[0]}' (default: BM25F over the body, the path and the names a file defines) "
                         "or 'classic' (BM25 over file bodies only).", RANKINGS) = None,
    ) -> CallToolResult:
        return _reply(symbol_search_answer, cwd, query, limit=limit, paths=paths, lang=lang, ranking=ranking)

    @server.tool(
        name="docs_search",
        title="Search documentation sections",
        description=(
            "Find the sections of a project's documentation (.md, .mdx, .rst, docs/*.txt) that answer a question, "
            "best first, with each one's anchor and a snippet. Use symbol_search or code_search for code."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def docs_search(
        query: _text("The question, or words the sections should hold."),
        cwd: _Cwd = None,
        limit: _count(f"How many sections (default {MCP_DOCS_LIMIT}).") = None,
    ) -> CallToolResult:
        try:
            project = _project_for(cwd)  # the same checks on cwd as symbol_search
            text, data = docs_search_answer(project.root, query, limit)
        except ToolError as exc:
            return _result(str(exc), error=True)
        return _result(text, data=data)

    @server.tool(
        name="file_outline",
        title="Outline a file's definitions",
        description=(
            "List the definitions (functions, methods, classes, types, constants) of one file of the project, "
            "nested, with their kinds, line spans and signatures. Use it after a search to see what a file "
            "holds, then read_symbol to read one definition."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def file_outline(path: _Path, cwd: _Cwd = None) -> CallToolResult:
        return _reply(file_outline_answer, cwd, path)

    @server.tool(
        name="read_symbol",
        title="Read one definition's source",
        description=(
            "Read the exact source of one definition of a file (with its decorators and doc comment). An "
            "ambiguous name lists its candidates (pass `line` to pick one); an unknown one names the nearest."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def read_symbol(
        path: _Path,
        symbol: _text("The definition's name: qualified (Outer.method, Type::fn) or bare, as file_outline or a "
                      "search result names it."),
        cwd: _Cwd = None,
        line: _PickLine = None,
    ) -> CallToolResult:
        return _reply(read_symbol_answer, cwd, path, symbol, line)

    @server.tool(
        name="code_search",
        title="Search code by behaviour or identifier",
        description=(
            "Find the functions, methods and classes of a project that answer a query, as excerpts, best first: "
            "an embedding ranking fused with the lexical one, so both a description of behaviour and an exact "
            "identifier work. Until the project's chunks are embedded (in the background) the answer is lexical "
            "and says how far embedding is."
        ),
        annotations=_READS,
        structured_output=False,
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
        lines: _count(f"The excerpts' lines in all (default {HYBRID_TOTAL_LINES}); an answer this budget cut says "
                      "so.", MCP_MAX_TOTAL_LINES) = None,
    ) -> CallToolResult:
        return _reply(code_search_answer, cwd, query, limit, alternatives, paths, lang, fusion, lines)

    @server.tool(
        name="find_related",
        title="Find code like this",
        description=(
            "Find the chunks of a project most similar (in embedding space) to the function or block at a file "
            "and line: look-alike implementations, duplicates, other handlers of the same kind. Same language "
            "only; until the project is embedded, related by shared identifiers (said so)."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def find_related(
        path: _Path,
        line: _Line,
        cwd: _Cwd = None,
        limit: _count(f"How many chunks (default {HYBRID_LIMIT}).") = None,
    ) -> CallToolResult:
        return _reply(find_related_answer, cwd, path, line, limit)

    @server.tool(
        name="index_status",
        title="What is indexed, and how fresh",
        description=(
            "Say what a project's indexes hold and how ready they are: the files indexed and how fresh, whether a "
            "watcher keeps them fresh, and whether definitions (file_outline, read_symbol), the import graph and "
            "the embeddings (code_search, find_related) are ready. Pass `wait` to wait for them (e.g. before "
            "relying on code_search's embedding ranking). The first call on a project starts its index."
        ),
        annotations=_READS,
        structured_output=False,
    )
    def index_status(
        cwd: _Cwd = None,
        wait: _optional(float, {"type": "number", "minimum": 0, "maximum": MCP_MAX_WAIT_S},
                        f"Seconds to wait, at most {MCP_MAX_WAIT_S}, for the index, definitions and embeddings "
                        "to be ready before answering (default 0: answer at once).") = None,
    ) -> CallToolResult:
        return _reply(index_status_answer, cwd, wait)

    @server.tool(
        name="text_search",
        title="Find an exact string or regex",
        description=(
            "Find the lines of a project's indexed files that hold an exact string (or, with `regex`, match a "
            "regular expression: RE2 syntax, no backreferences or lookaround), as path:line:column: text, in "
            "path order. For when you know the text: an error message, a key, every use of a name to rename. "
            "Bounded: at most `limit` lines and a couple of seconds, and it says when it stopped early."
        ),
        annotations=_READS,
        structured_output=False,
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
    ) -> CallToolResult:
        return _reply(text_search_answer, cwd, pattern, regex, ignore_case, limit, context, paths, lang)

    return server


def serve(roots: list[Path] | None = None) -> None:
    """Run the server on stdio until the client disconnects, serving ``roots`` (default: :func:`serve_roots`'s:
    the project of the current directory and ``$CODELEX_MCP_ROOTS``)."""
    try:
        build_server(roots).run("stdio")
    finally:
        _pool.close()  # flush pending saves
