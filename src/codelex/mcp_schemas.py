"""The JSON schemas of the MCP tools' answers as data (``outputSchema``: what each ``structuredContent`` holds).

One schema per tool, :data:`OUTPUT_SCHEMAS` by tool name; :mod:`codelex.mcp_server` publishes them with the
tools, and the SDK's client checks every answer that is not an error result against its tool's schema.  An
answer either answers (its results) or says why it cannot yet (``available: false`` and a hint: a cold index,
chunks being prepared); the schemas hold both.  Objects stay open to new keys (a client must ignore what it
does not know); the keys listed are the ones every answer of that kind carries or may carry, with their types.

Light: plain data, no import beyond the standard library.
"""

from __future__ import annotations

__all__ = ["OUTPUT_SCHEMAS"]

_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_STRS = {"type": "array", "items": _STR}


def _nullable(schema: dict) -> dict:
    return {**schema, "type": [schema["type"], "null"]}


def _object(properties: dict, required=(), **extra) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), **extra}


#: Paging: the cursor of the next page (absent on the last), and what the cursor given said (e.g. the index
#: changed since the previous page).
_PAGING = {"nextCursor": _STR, "note": _STR}

_SUGGESTED = _object({"tool": _STR, "path": _STR, "symbol": _STR, "line": _INT}, ["tool", "path"])

_SYMBOL_HIT = _object({
    "file": _STR, "score": _NUM, "hits": _INT, "startLine": _INT, "endLine": _INT, "symbol": _STR,
    "fields": _STRS, "importers": _INT, "text": _STR,
    "snippet": _object({"startLine": _INT, "lines": _STRS}, ["startLine", "lines"]),
}, ["file", "score", "hits", "startLine", "endLine", "text"])

_SYMBOL_SEARCH = _object({
    "available": _BOOL, "query": _STR, "hint": _nullable(_STR), "unavailableReason": _nullable(_STR),
    "coverage": _object({"files": _INT, "truncated": _BOOL}, ["files", "truncated"]),
    "results": {"type": "array", "items": _SYMBOL_HIT}, "staleness": _STR, "provisional": _BOOL, "pending": _STRS,
    "generation": _STR, "suggestedNext": _SUGGESTED, **_PAGING,
}, ["query"], anyOf=[{"required": ["coverage", "results"]}, {"required": ["available", "unavailableReason"]}])

_DOCS_SECTION = _object({
    "path": _STR, "anchor": _STR, "title": _STR, "heading": _STR, "startLine": _INT, "endLine": _INT,
    "score": _NUM, "snippet": _STR, "labels": _STRS, "language": _STR,
}, ["path", "title", "heading", "startLine", "endLine", "score", "snippet"])

_DOCS_SEARCH = _object({"query": _STR, "sections": _INT, "results": {"type": "array", "items": _DOCS_SECTION},
                        "scope": _STR, "suggestedNext": _SUGGESTED, "available": _BOOL, "hint": _STR, **_PAGING},
                       ["query"], anyOf=[{"required": ["sections", "results"]}, {"required": ["available", "hint"]}])

_SPAN = _object({"startLine": _INT, "endLine": _INT}, ["startLine", "endLine"])

_FILE_OUTLINE = _object({
    "path": _STR, "language": _nullable(_STR), "status": _STR, "available": _BOOL, "reason": _STR,
    "definitions": {"type": "array", "items": {"$ref": "#/$defs/definition"}},
}, ["path", "status", "available", "definitions"], **{"$defs": {"definition": _object({
    "qualifiedName": _STR, "kind": _STR, "startLine": _INT, "endLine": _INT, "outerStartLine": _INT,
    "doc": _SPAN, "signature": _STR, "children": {"type": "array", "items": {"$ref": "#/$defs/definition"}},
}, ["qualifiedName", "kind", "startLine", "endLine"])}})

_READ_SYMBOL = _object({
    "path": _STR, "symbol": _STR, "kind": _STR, "startLine": _INT, "endLine": _INT, "text": _STR,
    "overloads": {"type": "array", "items": _INT},
}, ["path", "symbol", "kind", "startLine", "endLine", "text"])

_CHUNK = _object({
    "path": _STR, "startLine": _INT, "endLine": _INT, "symbol": _STR, "similarity": _NUM, "excerpt": _STR,
    "truncated": _BOOL, "vectorRank": _nullable(_INT), "lexicalRank": _nullable(_INT),
}, ["path", "startLine", "endLine", "similarity", "excerpt", "truncated", "vectorRank", "lexicalRank"])

_CHUNKS = _object({
    "query": _STR, "available": _BOOL, "mode": _STR, "hint": _nullable(_STR), "embedded": _INT, "chunks": _INT,
    "vectorBest": _NUM, "lexicalBest": _NUM, "results": {"type": "array", "items": _CHUNK}, "omitted": _INT,
    "lineBudget": _nullable(_INT), "generation": _STR, **_PAGING,
}, ["available", "mode", "hint"])

_INDEX_STATUS = _object({
    "root": _STR, "status": _STR, "reason": _STR, "files": _INT, "truncated": _BOOL,
    "ageSeconds": _nullable(_NUM), "watching": _BOOL, "structure": _STR, "importGraph": _STR,
    "embedding": _object({"embedded": _INT, "chunks": _INT, "running": _BOOL, "error": _nullable(_STR),
                          "unavailable": _STR}, ["embedded", "chunks", "running", "error"]),
    "waitedFor": {"type": "string", "enum": ["index", "structure", "embeddings", "default"]},
    "ready": _BOOL, "waitedSeconds": _NUM,
}, ["root", "status", "files", "truncated", "ageSeconds", "watching", "structure", "importGraph", "embedding"])

_TEXT_MATCH = _object({"path": _STR, "line": _INT, "column": _INT, "text": _STR, "before": _STRS,
                       "after": _STRS}, ["path", "line", "column", "text"])

_TEXT_SEARCH = _object({
    "available": _BOOL, "pattern": _STR, "regex": _BOOL, "ignoreCase": _BOOL, "files": _INT, "searched": _INT,
    "unreadable": _INT, "stopped": {"type": ["string", "null"], "enum": ["limit", "time", None]},
    "results": {"type": "array", "items": _TEXT_MATCH}, **_PAGING,
}, ["pattern"], anyOf=[{"required": ["results", "files", "searched", "stopped"]}, {"required": ["available"]}])

_REINDEX = _object({
    "root": _STR, "started": _BOOL, "finished": _BOOL, "full": _nullable(_BOOL), "status": _STR,
    "waitedSeconds": _NUM, "runningSeconds": _NUM,
    "progress": _object({"done": _INT, "total": _INT}, ["done", "total"]),
    "report": _object({
        "mode": {"type": "string", "enum": ["incremental", "full"]}, "reason": _nullable(_STR), "files": _INT,
        "added": _INT, "updated": _INT, "removed": _INT, "unchanged": _INT, "seconds": _NUM, "saved": _BOOL,
        "saveError": _nullable(_STR), "truncated": _BOOL, "skipped": _INT,
    }, ["mode", "reason", "files", "added", "updated", "removed", "unchanged", "seconds", "saved"]),
}, ["root", "started", "finished", "status", "waitedSeconds"])

_UNAVAILABLE = {"available": _BOOL, "hint": _STR}

_IMPORTERS = _object({
    "path": _STR, "files": _INT, **_UNAVAILABLE, **_PAGING,
    "importers": {"type": "array", "items": _object({"file": _STR, "line": _nullable(_INT), "text": _nullable(_STR)},
                                                    ["file", "line", "text"])},
}, ["path"])

_REFERENCES = _object({
    "name": _STR, "files": _INT, **_UNAVAILABLE, **_PAGING,
    "results": {"type": "array", "items": _object({
        "file": _STR, "defines": _BOOL, "more": _INT,
        "lines": {"type": "array", "items": _object({"line": _INT, "text": _STR, "definition": _BOOL},
                                                    ["line", "text", "definition"])},
    }, ["file", "defines", "more", "lines"])},
}, ["name"])

#: Every tool's ``outputSchema``, by tool name.
OUTPUT_SCHEMAS: dict[str, dict] = {
    "symbol_search": _SYMBOL_SEARCH,
    "docs_search": _DOCS_SEARCH,
    "file_outline": _FILE_OUTLINE,
    "read_symbol": _READ_SYMBOL,
    "code_search": _CHUNKS,
    "find_related": _CHUNKS,
    "index_status": _INDEX_STATUS,
    "text_search": _TEXT_SEARCH,
    "importers": _IMPORTERS,
    "references": _REFERENCES,
    "reindex": _REINDEX,
}
