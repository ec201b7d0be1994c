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
index is ten minutes old or more, the coverage line, then the suggested next
call; its data (``query``, ``coverage``, ``results`` with each best line's
text, ``suggestedNext``) is the structured content, not a second copy in the
text.  A cold project never blocks a call: the
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

import os
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
    HYBRID_EXCERPT_LINES,
    HYBRID_LIMIT,
    HYBRID_TOTAL_LINES,
    MCP_DOCS_LIMIT,
    MCP_DOCS_WAIT_S,
    MCP_MAX_EXCERPT_LINES,
    MCP_MAX_LIMIT,
    MCP_MAX_SNIPPET_LINES,
    MCP_MAX_TOTAL_LINES,
    MCP_MAX_WAIT_S,
    MCP_REINDEX_WAIT_S,
    MCP_SNIPPET_LINES,
    RANKINGS,
    TEXT_SEARCH_LIMIT,
    TEXT_SEARCH_MAX_CONTEXT,
    VERSION,
)
from codelex.output import (
    wired,
)
from codelex.mcp_schemas import OUTPUT_SCHEMAS
from codelex.project import Project, refusal_reason
from codelex.project.readiness import READINESS
from codelex.project.pool import ProjectPool
from codelex.render import display_path, display_text, echo_query, error_text, wire_text

from codelex.mcp_answers import (  # (the answers are re-exported: the server's public functions)
    Answer,
    code_search_answer,
    code_search_text,
    file_outline_answer,
    file_outline_text,
    find_related_answer,
    find_related_text,
    importers_answer,
    index_status_answer,
    read_symbol_answer,
    references_answer,
    read_symbol_text,
    reindex_answer,
    symbol_search_answer,
    symbol_search_text,
    text_search_answer,
)
from codelex.mcp_answers import docs_search_answer as _docs_answer

__all__ = ["build_server", "code_search_answer", "code_search_text", "docs_search_answer", "docs_search_text",
           "file_outline_answer", "file_outline_text", "find_related_answer", "find_related_text", "importers_answer",
           "references_answer",
           "index_status_answer", "reindex_answer", "text_search_answer",
           "read_symbol_answer", "read_symbol_text", "serve", "symbol_search_answer", "symbol_search_text"]

_QUERY_HELP = (
    "Words or identifiers (getUserByID matches 'get user by id'), with optional filters lang:KIND, file:TEXT, "
    "ext:EXT ('-' excludes)."
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


def _within(cwd, paths):
    """``paths``, or, when none are given and ``cwd`` lies below the served root it belongs to, that subtree:
    a tool's ``cwd`` narrows a search as a shell's current directory narrows ``codelex search``."""
    if paths or not cwd or not isinstance(cwd, str) or "\x00" in cwd:
        return paths
    try:
        directory = Path(cwd).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return paths  # (the project's checks on cwd say why)
    served = _served_root(directory)
    if served is None or directory == served:
        return paths
    from codelex.query import literal_glob

    return [literal_glob(directory.relative_to(served).as_posix()) + "/"]  # (a directory named [ab] is itself)


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


def docs_search_answer(root: Path, query: str, limit=None, cursor=None, paths=None, language=None) -> Answer:
    """The ``docs_search`` reply for the project at ``root``, from its docs this server keeps
    (:func:`codelex.mcp_answers.docs_search_answer`)."""
    return _docs_answer(lambda: _pool.docs(root, timeout=MCP_DOCS_WAIT_S), root, query, limit, cursor, paths,
                        language)


def docs_search_text(root: Path, query: str, limit=None) -> str:
    """The text of :func:`docs_search_answer`."""
    return docs_search_answer(root, query, limit)[0]


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
    """An optional positive integer parameter, published as ``integer`` in 1..``maximum``; taken as sent (no
    coercion of ``true`` or ``"5"``), the answer checks it (an error result outside the bounds)."""
    return _optional(object, {"type": "integer", "minimum": 1, "maximum": maximum}, description)


def _choice(description: str, names: tuple[str, ...]):
    """An optional string parameter published with its ``enum`` (the code checks, in its own words)."""
    return _optional(str, {"type": "string", "enum": list(names)}, description)


def _text(description: str):
    return Annotated[str, Field(description=description)]


_STRINGS = {"type": "array", "items": {"type": "string"}}
_Cwd = _optional(str, {"type": "string"}, "A directory inside a served project (default: the first one).")
_Paths = _optional(object, _STRINGS, "Globs over root-relative paths, e.g. 'src/**/*.py' (a directory: its subtree).")
_Path = _text("A file of the project: root-relative (as results name it) or absolute.")
_Line = Annotated[float, WithJsonSchema({"type": "integer", "minimum": 1}),
                  Field(description="A line (1-based) inside the function or block.")]
_PickLine = _optional(float, {"type": "integer", "minimum": 1},
                      "Picks, among definitions of one name, the one holding this line.")
_Lang = _optional(str, {"type": "string"},
                  "Only files of this language: python, typescript, go, rust, java, cpp... or a short name (py, ts).")
_DocsLanguage = _optional(object, {"type": "string"},
                          "A human language tag ('en', 'pt-br') or 'all' (default: the docs' main language).")
_Cursor = _optional(object, {"type": "string"},
                    "A previous answer's nextCursor, for the next page (the other arguments unchanged).")

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
        "docs_search finds documentation sections (Markdown, reST); importers lists the files importing a file; "
        "references lists every file and line using an identifier; file_outline lists one file's definitions; "
        "read_symbol reads one definition's exact source; text_search finds an exact string or a regex (when you "
        "know the text); index_status says what is indexed, how fresh, and whether definitions and embeddings are "
        "ready (and can wait for one of them: wait_for); reindex brings the index up to date with the disk now "
        "(after changes the watcher could not see; full=true rebuilds), in the background, one build at a time. "
        "A typical path: symbol_search or code_search, then file_outline, then read_symbol. List answers come in "
        "pages: when one ends with a nextCursor, pass it as `cursor` (same arguments) for the next page. "
        "The first call on a project starts its index in the background and says so: call again shortly. "
        f"This server serves these projects only: {served}. A tool's optional `cwd` must be a directory "
        "inside one of them (default: the first); other directories are refused. A `cwd` below a project's root "
        "narrows symbol_search, code_search, text_search and references to that subtree (unless `paths` says "
        "otherwise)."
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
    ranking: _choice(f"'{RANKINGS[0]}' (default: body, path and defined names) or 'classic' (body only, BM25).",
                     RANKINGS) = None,
    snippet_lines: _count(f"Lines around each best line (default {MCP_SNIPPET_LINES}).",
                          MCP_MAX_SNIPPET_LINES) = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(symbol_search_answer, cwd, query, limit=limit, paths=_within(cwd, paths), lang=lang, ranking=ranking,
                  cursor=cursor, snippet_lines=snippet_lines)

@_tool(
    name="docs_search",
    title="Search documentation sections",
    description=(
        "Find the sections of a project's documentation (.md, .mdx, .rst, docs/*.txt) that answer a question, "
        "best first, with anchors and snippets; translations only when asked for (`language`)."
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
        "List one file's definitions (functions, methods, classes, types, constants), nested, with kinds, line "
        "spans and signatures; then read_symbol reads one."
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
    symbol: _text("The definition's name, qualified (Outer.method, Type::fn) or bare."),
    cwd: _Cwd = None,
    line: _PickLine = None,
) -> CallToolResult:
    return _reply(read_symbol_answer, cwd, path, symbol, line)

@_tool(
    name="code_search",
    title="Search code by behaviour or identifier",
    description=(
        "Find the functions, methods and classes that answer a query, as excerpts, best first: embeddings fused "
        "with the lexical ranking, so behaviour in words and exact identifiers both work (lexical until the "
        "project is embedded, and said so)."
    ),
)
def code_search(
    query: _text("What the code does, in words, or an identifier."),
    cwd: _Cwd = None,
    limit: _count(f"How many chunks (default {HYBRID_LIMIT}).") = None,
    alternatives: _optional(list[str], _STRINGS, "Other phrasings (synonyms, likely identifiers), fused.") = None,
    paths: _Paths = None,
    lang: _Lang = None,
    fusion: _choice(f"How the embedding and lexical rankings are fused (default '{DEFAULT_FUSION}': by each "
                    "one's evidence).", _fusions()) = None,
    lines: _count(f"Excerpt lines in all, by rank (default {HYBRID_TOTAL_LINES}).", MCP_MAX_TOTAL_LINES) = None,
    excerpt_lines: _count(f"Lines per excerpt at most (default {HYBRID_EXCERPT_LINES}).",
                          MCP_MAX_EXCERPT_LINES) = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(code_search_answer, cwd, query, limit, alternatives, _within(cwd, paths), lang, fusion, lines, cursor,
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
        "What a project's indexes hold and how ready they are: the files and how fresh, the watcher, the "
        "definitions (file_outline, read_symbol), the import graph, the embeddings (code_search, find_related). "
        "`wait` waits for what `wait_for` names. The first call starts the index."
    ),
)
def index_status(
    cwd: _Cwd = None,
    wait: _optional(float, {"type": "number", "minimum": 0, "maximum": MCP_MAX_WAIT_S},
                    f"Seconds to wait, at most {MCP_MAX_WAIT_S}, for what `wait_for` names (default 0).") = None,
    wait_for: _choice("'index' (symbol_search, text_search), 'structure' (and file_outline, read_symbol) or "
                      "'embeddings' (and code_search's embedding ranking; started if need be). Default: the "
                      "index, the definitions and an embedding already running.", READINESS) = None,
) -> CallToolResult:
    return _reply(index_status_answer, cwd, wait, wait_for)

@_tool(
    name="reindex",
    title="Bring the index up to date now",
    description=(
        "Bring a project's index up to date with the disk now (after changes its file watcher could not see): "
        "apply the files added, changed and removed, or with `full` rebuild it. One build per project, in the "
        "background: the answer says what changed if it ends within `wait` s, else how far it is."
    ),
    annotations=_REINDEXES,
)
def reindex(
    cwd: _Cwd = None,
    full: _optional(bool, {"type": "boolean"}, "Rebuild from scratch (default false).") = None,
    wait: _optional(float, {"type": "number", "minimum": 0, "maximum": MCP_MAX_WAIT_S},
                    f"Seconds to wait for the build (default {MCP_REINDEX_WAIT_S}).") = None,
) -> CallToolResult:
    return _reply(reindex_answer, cwd, full, wait)

@_tool(
    name="text_search",
    title="Find an exact string or regex",
    description=(
        "Find the lines of a project's indexed files that hold an exact string (or match an RE2 `regex`), as "
        "path:line:column: text, in path order: when you know the text (an error message, a name to rename). "
        "Bounded by `limit` lines and a few seconds (said when hit)."
    ),
)
def text_search(
    pattern: _text("The exact text (or, with `regex`, an RE2 regex) to find, on one line."),
    regex: _optional(bool, {"type": "boolean"}, "`pattern` is a regex (default false).") = None,
    ignore_case: _optional(bool, {"type": "boolean"}, "Match regardless of case (default false).") = None,
    cwd: _Cwd = None,
    limit: _count(f"How many matching lines (default {TEXT_SEARCH_LIMIT}).") = None,
    context: _optional(object, {"type": "integer", "minimum": 0, "maximum": TEXT_SEARCH_MAX_CONTEXT},
                       "Lines to show before and after each match (default 0).") = None,
    paths: _Paths = None,
    lang: _Lang = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(text_search_answer, cwd, pattern, regex, ignore_case, limit, context, _within(cwd, paths), lang,
                  cursor)


@_tool(
    name="importers",
    title="Who imports this file",
    description=(
        "The project files importing a file (or dotted module, pkg.core), with their import lines."
    ),
)
def importers(
    path: _text("A file (root-relative or absolute) or a dotted module."),
    cwd: _Cwd = None,
    limit: _count(f"How many files per page (default {DEFAULT_LIMIT}).") = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(importers_answer, cwd, path, limit, cursor)


@_tool(
    name="references",
    title="Where an identifier is used",
    description=(
        "Every file and line using an identifier, the files defining it first (definitions marked)."
    ),
)
def references(
    name: _text("The identifier, e.g. parse_query or getUserByID."),
    cwd: _Cwd = None,
    limit: _count(f"How many files per page (default {DEFAULT_LIMIT}).") = None,
    paths: _Paths = None,
    cursor: _Cursor = None,
) -> CallToolResult:
    return _reply(references_answer, cwd, name, limit, _within(cwd, paths), cursor)


def build_server(roots: list[Path] | None = None, *, output_schemas: bool = False) -> MCPServer:
    """The server with its tools (not yet running), serving ``roots`` (default: :func:`serve_roots`'s).

    With ``output_schemas``, each tool publishes its answers' JSON schema (``outputSchema``,
    :data:`OUTPUT_SCHEMAS`), which a client then checks every answer against.  Off by default: the schemas
    would more than double the tool list every session starts with (an agent's context), and the answers'
    structured content is the same either way."""
    global _roots
    _roots = list(serve_roots()[0] if roots is None else roots)
    served = ", ".join(display_path(str(r)) for r in _roots) or "none (started outside a project)"
    tools: list[Tool] = []
    for name, title, description, hints, fn in _TOOLS:
        made = Tool.from_function(fn, name=name, title=title, description=description, annotations=hints,
                                  structured_output=False)  # (the function builds its CallToolResult)
        if output_schemas:
            made.fn_metadata.output_schema = OUTPUT_SCHEMAS[name]  # published with the tool, checked by clients
        # (pydantic titles every parameter with its own name, and the schema "<tool>Arguments": noise to an agent)
        made.parameters = {k: v for k, v in made.parameters.items() if k != "title"}
        made.parameters["properties"] = {param: {k: v for k, v in schema.items() if k != "title"}
                                         for param, schema in made.parameters.get("properties", {}).items()}
        tools.append(made)
    return MCPServer("codelex", version=VERSION, instructions=_instructions(served), tools=tools)


def serve(roots: list[Path] | None = None, *, output_schemas: bool = False) -> None:
    """Run the server on stdio until the client disconnects, serving ``roots`` (default: :func:`serve_roots`'s:
    the project of the current directory and ``$CODELEX_MCP_ROOTS``); ``output_schemas`` as
    :func:`build_server` takes it."""
    try:
        build_server(roots, output_schemas=output_schemas).run("stdio")
    finally:
        _pool.close()  # flush pending saves
