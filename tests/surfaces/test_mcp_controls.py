"""The MCP server's controls (issue 33): reindex, pagination cursors, snippet and excerpt sizes, waiting for the
embeddings, and every tool's output schema; each through the official SDK's client, connected in process."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")

import anyio  # noqa: E402
import numpy as np  # noqa: E402
from mcp import Client  # noqa: E402

from codelex import mcp_answers, mcp_server  # noqa: E402
from codelex.defaults import MCP_MAX_SNIPPET_LINES, MCP_MAX_WAIT_S  # noqa: E402


def text_of(result) -> str:
    return "".join(part.text for part in result.content if getattr(part, "type", "") == "text")


def run_tools(roots: list[Path], body, **options):
    """``body(client)`` against the server serving ``roots``, in this process (its projects closed after)."""
    async def main():
        server = mcp_server.build_server(roots, **options)
        with anyio.fail_after(180):
            async with Client(server) as client:
                return await body(client)

    try:
        return anyio.run(main)
    finally:
        mcp_server._pool.close()


async def until(client, tool: str, args: dict, done, tries: int = 200):
    """Call ``tool`` until ``done(result)`` (a cold index answers "building" first)."""
    result = None
    for _ in range(tries):
        result = await client.call_tool(tool, args)
        if done(result):
            return result
        await anyio.sleep(0.05)
    return result


@pytest.fixture
def widgets(tmp_path: Path) -> Path:
    """Twelve files that mention widgets (ranked by how often), documentation, and filler enough that a few
    changes are an incremental refresh, not a rebuild."""
    root = tmp_path / "widgets"
    (root / "src").mkdir(parents=True)
    for i in range(12):
        body = "".join(f"    widget_total += widget_{i} * {k}\n" for k in range(i + 1))
        (root / f"src/widget_{i:02}.py").write_text(
            f"def build_widget_{i}(widget_{i}):\n    widget_total = 0\n{body}    return widget_total\n")
    for i in range(20):
        (root / f"src/filler_{i:02}.py").write_text(f"def filler_{i}():\n    return {i}\n")
    (root / "docs").mkdir()
    (root / "docs/guide.md").write_text("".join(
        f"# Widget chapter {i}\n\nWidgets are assembled in step {i} of the widget pipeline.\n\n" for i in range(7)))
    return root


# --- output schemas ------------------------------------------------------------------------------------------


def undeclared_keys(schema: dict, value, root: dict | None = None, where: str = "$") -> list[str]:
    """The keys of ``value`` that ``schema`` does not declare (``properties``), recursively: an answer whose
    data grew a key its schema does not publish."""
    root = root or schema
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    out = []
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, item in value.items():
            if key not in props:
                out.append(f"{where}.{key}")
            else:
                out.extend(undeclared_keys(props[key], item, root, f"{where}.{key}"))
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out.extend(undeclared_keys(schema["items"], item, root, f"{where}[{i}]"))
    return out


def check_against(schema: dict, data) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    assert undeclared_keys(schema, data) == []


def test_every_tool_declares_the_schema_its_answers_validate_against(widgets, monkeypatch):
    monkeypatch.setattr("codelex.project.code_search.CodeSearch._spec",
                        lambda self, embedder, config: HashEmbedder() if embedder is None else embedder)

    async def body(client):
        out = {"cold": await client.call_tool("symbol_search", {"query": "widget"})}
        out["status"] = await client.call_tool("index_status", {"wait": 20, "wait_for": "embeddings"})
        out["symbol"] = await client.call_tool("symbol_search", {"query": "build widget", "limit": 2,
                                                                 "snippet_lines": 3})
        out["docs"] = await client.call_tool("docs_search", {"query": "widget pipeline", "limit": 2})
        out["outline"] = await client.call_tool("file_outline", {"path": "src/widget_03.py"})
        out["source"] = await client.call_tool("read_symbol", {"path": "src/widget_03.py",
                                                               "symbol": "build_widget_3"})
        out["code"] = await client.call_tool("code_search", {"query": "build widget", "limit": 2})
        out["related"] = await client.call_tool("find_related", {"path": "src/widget_03.py", "line": 2})
        out["text"] = await client.call_tool("text_search", {"pattern": "widget_total", "limit": 2, "context": 1})
        out["reindex"] = await client.call_tool("reindex", {"wait": 20})
        await client.call_tool("importers", {"path": "src/widget_03.py"})  # (starts the import graph)
        for _ in range(200):
            out["importers"] = await client.call_tool("importers", {"path": "src/widget_03.py"})
            if "available" not in out["importers"].structured_content:
                break
            await anyio.sleep(0.05)
        out["references"] = await client.call_tool("references", {"name": "widget_total", "limit": 2})
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        return out

    out = run_tools([widgets], body, output_schemas=True)
    tools = out.pop("tools")
    assert set(tools) == set(mcp_server.OUTPUT_SCHEMAS) == {
        "symbol_search", "docs_search", "file_outline", "read_symbol", "code_search", "find_related",
        "index_status", "text_search", "reindex", "importers", "references"}
    answered = {"cold": "symbol_search", "status": "index_status", "symbol": "symbol_search", "docs": "docs_search",
                "outline": "file_outline", "source": "read_symbol", "code": "code_search", "related": "find_related",
                "text": "text_search", "reindex": "reindex", "importers": "importers", "references": "references"}
    for key, name in answered.items():
        result = out[key]
        assert not result.is_error, (key, text_of(result))
        assert tools[name].output_schema == mcp_server.OUTPUT_SCHEMAS[name]
        check_against(tools[name].output_schema, result.structured_content)
    # The answers checked hold what their schemas' optional parts describe (not only the bare minimum).
    assert out["cold"].structured_content["available"] is False
    assert out["status"].structured_content["ready"] is True
    assert "snippet" in out["symbol"].structured_content["results"][0]
    assert "nextCursor" in out["symbol"].structured_content and "nextCursor" in out["docs"].structured_content
    assert out["code"].structured_content["mode"] == "hybrid"
    assert out["reindex"].structured_content["finished"] is True
    assert out["references"].structured_content["files"] > 2 and "nextCursor" in out["references"].structured_content
    assert out["references"].structured_content["results"][0]["lines"][0]["text"]
    # The check itself fails on an answer its schema does not describe.
    bad = dict(out["symbol"].structured_content, results=[{"file": 3}])
    with pytest.raises(jsonschema.ValidationError):
        check_against(mcp_server.OUTPUT_SCHEMAS["symbol_search"], bad)
    assert undeclared_keys(mcp_server.OUTPUT_SCHEMAS["reindex"], {"root": "x", "surprise": 1}) == ["$.surprise"]


# --- pagination ----------------------------------------------------------------------------------------------


def test_list_answers_page_with_cursors_and_refuse_a_foreign_or_malformed_one(widgets):
    (widgets / "late.py").write_text("def late_widget():\n    return 'widget'\n")

    async def body(client):
        call = client.call_tool
        out = {"all": await until(client, "symbol_search", {"query": "widget", "limit": 50},
                                  lambda r: "Top " in text_of(r))}
        pages, cursor = [], None
        for limit in (5, 5, 50):  # (a page size may change between pages)
            page = await call("symbol_search", {"query": "widget", "limit": limit,
                                                **({"cursor": cursor} if cursor else {})})
            pages.append(page)
            cursor = page.structured_content.get("nextCursor")
            if cursor is None:
                break
        out["pages"] = pages
        first = pages[0].structured_content["nextCursor"]
        out["foreign"] = await call("symbol_search", {"query": "filler", "cursor": first})
        out["other_lang"] = await call("symbol_search", {"query": "widget", "lang": "python", "cursor": first})
        out["malformed"] = await call("symbol_search", {"query": "widget", "cursor": "not-a-cursor"})
        out["forged"] = await call("symbol_search", {"query": "widget", "cursor": "cx1.WzEwMDAwMDAsIngiLCJ5Il0"})
        out["still_up"] = await call("symbol_search", {"query": "widget", "limit": 1})

        text_pages, cursor = [], None
        while True:
            page = await call("text_search", {"pattern": "return widget_total", "limit": 5,
                                              **({"cursor": cursor} if cursor else {})})
            text_pages.append(page)
            cursor = page.structured_content.get("nextCursor")
            if cursor is None or len(text_pages) > 5:
                break
        out["text_pages"] = text_pages
        out["text_foreign"] = await call("text_search", {"pattern": "widget_total", "cursor": first})

        docs1 = await call("docs_search", {"query": "widget pipeline", "limit": 4})
        docs2 = await call("docs_search", {"query": "widget pipeline", "limit": 4,
                                           "cursor": docs1.structured_content["nextCursor"]})
        out["docs"] = (docs1, docs2)

        code1 = await until(client, "code_search", {"query": "build widget", "limit": 3},
                            lambda r: not r.is_error and "No answer yet" not in text_of(r))
        code2 = await call("code_search", {"query": "build widget", "limit": 3,
                                           "cursor": code1.structured_content["nextCursor"]})
        out["code"] = (code1, code2)
        out["code_foreign"] = await call("code_search", {"query": "build widget", "fusion": "vector",
                                                         "cursor": code1.structured_content["nextCursor"]})

        # The index changes between pages (a file added): the next page says so.
        (widgets / "src/widget_new.py").write_text("def widget_new():\n    return 'widget'\n")
        await call("reindex", {"wait": 20})
        out["moved"] = await call("symbol_search", {"query": "widget", "limit": 5, "cursor": first})
        return out

    out = run_tools([widgets], body)
    everything = [r["file"] for r in out["all"].structured_content["results"]]
    assert len(everything) == 14  # the twelve widget files, late.py and the guide
    pages = out["pages"]
    assert len(pages) == 3
    files = [r["file"] for p in pages for r in p.structured_content["results"]]
    assert files == everything  # the pages, in order, are the one answer: nothing repeated, nothing skipped
    assert [len(p.structured_content["results"]) for p in pages] == [5, 5, 4]
    assert 'More results: call again with the same arguments and cursor "cx1.' in text_of(pages[0])
    assert text_of(pages[1]).startswith('Files 6-10 for "widget":\n  6. ')
    assert "nextCursor" not in pages[2].structured_content and "More results" not in text_of(pages[2])
    for name in ("foreign", "other_lang", "text_foreign", "code_foreign"):
        assert out[name].is_error and "belongs to another query or other parameters" in text_of(out[name]), name
    for name in ("malformed", "forged"):
        assert out[name].is_error and text_of(out[name]).startswith("Malformed `cursor`"), name
    assert not out["still_up"].is_error and len(out["still_up"].structured_content["results"]) == 1

    text_pages = out["text_pages"]
    lines = [(m["path"], m["line"]) for p in text_pages for m in p.structured_content["results"]]
    assert len(lines) == 12 == len(set(lines)) and lines == sorted(lines)
    assert [p.structured_content["stopped"] for p in text_pages] == ["limit", "limit", None]
    assert "after the first 5 in" in text_of(text_pages[1])

    docs1, docs2 = out["docs"]
    sections = [(r["path"], r["anchor"]) for d in (docs1, docs2) for r in d.structured_content["results"]]
    assert len(sections) == 7 == len(set(sections)) and "nextCursor" not in docs2.structured_content
    assert text_of(docs2).startswith('Sections 5-7 for "widget pipeline":')

    code1, code2 = out["code"]
    chunks = [(r["path"], r["startLine"]) for c in (code1, code2) for r in c.structured_content["results"]]
    assert len(chunks) == 6 == len(set(chunks))
    assert text_of(code2).startswith('Chunks 4-6 for "build widget":\n4. ')

    moved = out["moved"]
    assert not moved.is_error and moved.structured_content["note"].startswith("The index changed since")


# --- snippet and excerpt sizes -------------------------------------------------------------------------------


def test_snippet_lines_and_excerpt_lines_size_each_result(widgets):
    async def body(client):
        call = client.call_tool
        out = {"plain": await until(client, "symbol_search", {"query": "widget_11", "limit": 1},
                                    lambda r: "Top " in text_of(r))}
        out["three"] = await call("symbol_search", {"query": "widget_11", "limit": 1, "snippet_lines": 3})
        out["huge"] = await call("symbol_search", {"query": "widget_11", "limit": 1, "snippet_lines": 10**9})
        out["most"] = await call("symbol_search", {"query": "widget_11", "limit": 1,
                                                   "snippet_lines": MCP_MAX_SNIPPET_LINES})
        out["short"] = await until(client, "code_search", {"query": "build widget", "limit": 4,
                                                           "excerpt_lines": 2},
                                   lambda r: not r.is_error and "No answer yet" not in text_of(r))
        out["long"] = await call("code_search", {"query": "build widget", "limit": 4})
        return out

    out = run_tools([widgets], body)
    plain = out["plain"].structured_content["results"][0]
    assert "snippet" not in plain  # today's answer: the best line alone
    three = out["three"].structured_content["results"][0]
    best = three["startLine"]
    source = (widgets / three["file"]).read_text().split("\n")
    first = max(1, best - 1)
    assert three["snippet"] == {"startLine": first, "lines": source[first - 1:first + 2]}
    assert three["text"] == plain["text"]
    assert f"       {first + 1}| {source[first]}" in text_of(out["three"])
    assert out["huge"].is_error and f"`snippet_lines` must be a whole number from 1 to {MCP_MAX_SNIPPET_LINES}" \
        in text_of(out["huge"])  # (issue 41: an error, never a silent clamp)
    most = out["most"].structured_content["results"][0]["snippet"]
    assert not out["most"].is_error and len(most["lines"]) <= MCP_MAX_SNIPPET_LINES
    short = out["short"].structured_content["results"]
    assert short and all(len(r["excerpt"].split("\n")) <= 2 for r in short)
    assert any(r["truncated"] for r in short)
    assert any(len(r["excerpt"].split("\n")) > 2 for r in out["long"].structured_content["results"])


# --- reindex -------------------------------------------------------------------------------------------------


def test_reindex_applies_what_changed_on_disk_in_the_background_one_build_at_a_time(widgets, monkeypatch):
    # No watcher: the changes below reach the index only through reindex (a watcher would apply them first).
    monkeypatch.setattr("codelex.project.Project.start_watching", lambda self: False)
    held, reading = threading.Event(), threading.Event()
    hold = {"on": False}
    note = mcp_answers.Reindex.note

    def held_note(self, done, total, nbytes=0):  # a build reindex started, held while it reads files
        note(self, done, total, nbytes)
        if hold["on"]:
            reading.set()
            held.wait(timeout=30)

    monkeypatch.setattr(mcp_answers.Reindex, "note", held_note)

    async def body(client):
        call = client.call_tool
        out = {"first": await call("reindex", {"wait": 20})}
        (widgets / "src/widget_05.py").write_text("def build_widget_5():\n    return 'rebuilt gizmo'\n")
        (widgets / "src/filler_00.py").unlink()
        (widgets / "src/gizmo.py").write_text("def gizmo_factory():\n    return 1\n")
        out["changed"] = await call("reindex", {"wait": 20})
        out["gizmo"] = await call("symbol_search", {"query": "gizmo factory"})
        out["again"] = await call("reindex", {})

        hold["on"] = True
        started = time.monotonic()
        out["full"] = await call("reindex", {"full": True, "wait": 0.5})
        out["full_s"] = time.monotonic() - started
        await anyio.to_thread.run_sync(lambda: reading.wait(30))
        out["second"] = await call("reindex", {"wait": 0})
        out["status_while"] = await call("symbol_search", {"query": "gizmo factory"})
        hold["on"] = False
        held.set()
        out["status"] = await call("index_status", {"wait": 20, "wait_for": "index"})
        out["after"] = await call("reindex", {"wait": 20})
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        return out

    out = run_tools([widgets], body)
    first = out["first"]
    assert not first.is_error, text_of(first)
    data = first.structured_content
    assert data["started"] and data["finished"] and data["report"]["mode"] == "full"
    assert data["report"]["reason"] == "no-index" and data["report"]["files"] == 33
    assert text_of(first).startswith(f"Rebuilt {widgets} from scratch (no-index) in ")

    changed = out["changed"].structured_content
    assert changed["started"] and changed["finished"] and changed["full"] is False
    report = changed["report"]
    assert (report["mode"], report["added"], report["updated"], report["removed"], report["files"]) == \
        ("incremental", 1, 1, 1, 33), report
    assert report["unchanged"] == 31
    assert text_of(out["changed"]).startswith(f"Reindexed {widgets} in ")
    assert "1 file(s) added, 1 updated, 1 removed, 31 unchanged (33 files indexed)" in text_of(out["changed"])
    # (the added file, and the changed one, which now says "gizmo": both as on disk)
    assert {r["file"] for r in out["gizmo"].structured_content["results"]} == {"src/gizmo.py", "src/widget_05.py"}
    again = out["again"].structured_content["report"]
    assert (again["added"], again["updated"], again["removed"]) == (0, 0, 0)

    full = out["full"]
    assert not full.is_error and out["full_s"] < 10  # waited 0.5 s, not for the held build
    assert full.structured_content["started"] and not full.structured_content["finished"]
    assert full.structured_content["full"] is True
    assert "not finished within 0.5 s: call index_status" in text_of(full)
    second = out["second"]
    assert not second.is_error and not second.structured_content["started"]
    assert second.structured_content["full"] is True  # the running build's, not this call's
    assert second.structured_content["progress"]["total"] > 0
    assert text_of(second).startswith(f"A build of {widgets} was already running, started ")
    assert "files read)" in text_of(second)
    assert "src/gizmo.py" in text_of(out["status_while"])  # the previous index answers meanwhile
    assert out["status"].structured_content["ready"] is True
    after = out["after"].structured_content
    assert after["started"] and after["finished"] and after["report"]["mode"] == "incremental"

    hints = out["tools"]["reindex"].annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (False, False, True)
    wait = out["tools"]["reindex"].input_schema["properties"]["wait"]
    assert wait["maximum"] == MCP_MAX_WAIT_S and wait["description"]


# --- waiting for the embeddings ------------------------------------------------------------------------------


class HashEmbedder:
    """A stand-in embedding model (hashed words): no download, deterministic."""

    name = "test-hash-32"
    dimensions = 32

    def embed(self, texts):
        out = np.zeros((len(texts), self.dimensions), np.float32)
        for i, text in enumerate(texts):
            out[i, 0] = 1.0
            for word in text.lower().split():
                out[i, 1 + int(hashlib.md5(word.encode()).hexdigest(), 16) % (self.dimensions - 1)] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class BrokenEmbedder(HashEmbedder):
    name = "test-broken"

    def embed(self, texts):
        raise RuntimeError("the model crashed")


@pytest.mark.parametrize("embedder", [HashEmbedder, BrokenEmbedder])
def test_index_status_waits_for_the_embeddings(widgets, monkeypatch, embedder):
    monkeypatch.setattr("codelex.project.code_search.CodeSearch._spec",
                        lambda self, asked, config: embedder() if asked is None else asked)

    async def body(client):
        out = {"before": await client.call_tool("index_status", {"wait": 20, "wait_for": "structure"})}
        started = time.monotonic()
        out["embeddings"] = await client.call_tool("index_status", {"wait": 25, "wait_for": "embeddings"})
        out["seconds"] = time.monotonic() - started
        out["code"] = await client.call_tool("code_search", {"query": "build widget", "limit": 1})
        out["bad"] = await client.call_tool("index_status", {"wait_for": "everything"})
        out["schema"] = next(t for t in (await client.list_tools()).tools if t.name == "index_status").input_schema
        return out

    out = run_tools([widgets], body)
    before = out["before"].structured_content
    assert before["waitedFor"] == "structure" and before["ready"] is True and before["structure"] == "ready"
    assert before["embedding"]["embedded"] == 0  # nothing asked for them yet
    data = out["embeddings"].structured_content
    assert not out["embeddings"].is_error and data["waitedFor"] == "embeddings"
    if embedder is HashEmbedder:
        assert data["ready"] is True and data["embedding"]["embedded"] == data["embedding"]["chunks"] > 0
        assert "code_search is hybrid" in text_of(out["embeddings"])
        assert out["code"].structured_content["mode"] == "hybrid"
    else:  # waiting cannot help: said at once, not after the 25 s
        assert data["ready"] is False and out["seconds"] < 15
        assert "the model crashed" in (data["embedding"]["error"] or data["embedding"].get("unavailable", ""))
        assert "Waited" in text_of(out["embeddings"]) and "cannot be by waiting" in text_of(out["embeddings"])
    assert out["bad"].is_error and "`wait_for` must be one of index, structure, embeddings" in text_of(out["bad"])
    assert out["schema"]["properties"]["wait_for"]["enum"] == ["index", "structure", "embeddings"]


def test_docs_search_prefers_the_main_language_and_takes_paths_and_language(tmp_path: Path):
    root = tmp_path / "site"
    page = "# Dependencies { #dependencies }\n\n## Dependencies with yield { #dependencies-with-yield }\n\n" \
           "Use dependencies with yield to run cleanup code.\n"
    for lang in ("en", "de", "ko"):
        (root / "docs" / lang / "docs").mkdir(parents=True)
        (root / "docs" / lang / "docs" / "dependencies.md").write_text(page)
    (root / "README.md").write_text("# Site\n\nDependencies are injected.\n")

    async def body(client):
        out = {}
        out["default"] = await client.call_tool("docs_search", {"query": "dependencies with yield", "limit": 10})
        out["german"] = await client.call_tool("docs_search", {"query": "dependencies with yield", "limit": 10,
                                                               "language": "de"})
        out["all"] = await client.call_tool("docs_search", {"query": "yield", "limit": 10, "language": "all"})
        out["paths"] = await client.call_tool("docs_search", {"query": "dependencies", "paths": ["README.md"]})
        out["unknown"] = await client.call_tool("docs_search", {"query": "yield", "language": "fr"})
        out["after"] = await client.call_tool("docs_search", {"query": "yield"})
        tools = {t.name: t for t in (await client.list_tools()).tools}
        out["schema"] = tools["docs_search"].input_schema
        return out

    out = run_tools([root], body)
    default = out["default"].structured_content
    assert {r["path"].split("/")[1] for r in default["results"] if r["path"] != "README.md"} == {"en"}
    first = default["results"][0]
    assert first["anchor"] == "dependencies-with-yield" and first["language"] == "en"
    assert "left out" in default["scope"] and "de" in default["scope"] and "`language`" in default["scope"]
    assert {r["path"] for r in out["german"].structured_content["results"]} == {"docs/de/docs/dependencies.md",
                                                                             "README.md"}
    assert {r["language"] for r in out["all"].structured_content["results"]} == {"en", "de", "ko"}
    assert [r["path"] for r in out["paths"].structured_content["results"]] == ["README.md"]
    assert out["unknown"].is_error and "unknown documentation language 'fr'" in text_of(out["unknown"])
    assert not out["after"].is_error  # the server stays up
    props = out["schema"]["properties"]
    assert "description" in props["language"] and "description" in props["paths"]


# --- sizes (issue 41) ------------------------------------------------------------------------------------------


def test_the_tool_list_and_a_default_answer_fit_an_agents_context(tmp_path):
    root = tmp_path / "sized"
    (root / "src").mkdir(parents=True)
    for i in range(40):  # more files than a default answer's 20, each with a definition around its best line
        (root / f"src/handler_{i:02}.py").write_text(
            f"from src.handler_{(i + 1) % 40:02} import route_request_{(i + 1) % 40}\n\n\n"
            f"def route_request_{i}(request, session_manager_{i}):\n"
            f"    \"\"\"Route an incoming request through the session manager and its handlers.\"\"\"\n"
            f"    return session_manager_{i}.dispatch(request, handler=route_request_{(i + 1) % 40})\n")

    async def body(client):
        tools = await client.list_tools()
        for _ in range(200):
            answer = await client.call_tool("symbol_search", {"query": "route request session manager"})
            if "Top " in text_of(answer):
                break
            await anyio.sleep(0.05)
        return tools, answer

    tools, answer = run_tools([root], body)
    listed = len(tools.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert listed <= 12 * 1024, listed
    assert all(t.output_schema is None for t in tools.tools)  # (published on request: output_schemas=True)
    assert not answer.is_error and len(answer.structured_content["results"]) == 20
    size = len(answer.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert size <= 8 * 1024, size
    assert "```json" not in text_of(answer)  # one representation: the data is the structured content


def test_a_cold_docs_search_answers_at_once_while_the_docs_are_read(widgets, monkeypatch):
    """Issue 41: a cold docs_search blocked for the whole first reading (16 s on a large tree); now it answers
    available: false within MCP_DOCS_WAIT_S while the reading goes on, and the answer once it is done."""
    from codelex.defaults import MCP_DOCS_WAIT_S
    from codelex.docs import DocsIndex

    real = DocsIndex.for_project.__func__

    def slow(cls, *args, **kwargs):
        time.sleep(MCP_DOCS_WAIT_S + 2.0)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(DocsIndex, "for_project", classmethod(slow))

    async def body(client):
        started = time.monotonic()
        cold = await client.call_tool("docs_search", {"query": "widget pipeline"})
        took = time.monotonic() - started
        warm = await until(client, "docs_search", {"query": "widget pipeline"},
                           lambda r: "available" not in (r.structured_content or {}))
        return cold, took, warm

    cold, took, warm = run_tools([widgets], body, output_schemas=True)
    assert not cold.is_error and cold.structured_content["available"] is False, text_of(cold)
    assert "being read in the background" in text_of(cold) and took < MCP_DOCS_WAIT_S + 1.5, took
    assert not warm.is_error and warm.structured_content["results"][0]["path"] == "docs/guide.md"


def test_a_cwd_below_the_root_narrows_every_search_to_its_subtree(widgets):
    """Issue 41: `cwd` picked the project but searched all of it."""
    (widgets / "src/nested").mkdir()
    (widgets / "src/nested/widget_extra.py").write_text("def widget_total_extra():\n    return 'widget'\n")

    async def body(client):
        out = {"whole": await until(client, "symbol_search", {"query": "widget"}, lambda r: "Top " in text_of(r))}
        nested = str(widgets / "src/nested")
        out["symbol"] = await client.call_tool("symbol_search", {"query": "widget", "cwd": nested})
        out["text"] = await client.call_tool("text_search", {"pattern": "widget", "cwd": nested})
        out["references"] = await client.call_tool("references", {"name": "widget_total_extra", "cwd": nested})
        out["explicit"] = await client.call_tool("symbol_search", {"query": "widget", "cwd": nested,
                                                                   "paths": ["docs/"]})
        out["code"] = await until(client, "code_search", {"query": "widget", "cwd": nested},
                                  lambda r: "No answer yet" not in text_of(r))
        return out

    out = run_tools([widgets], body)
    files = {k: {r.get("file") or r.get("path") for r in out[k].structured_content["results"]} for k in out}
    assert len(files["whole"]) > 1 and files["symbol"] == {"src/nested/widget_extra.py"}
    assert files["references"] == {"src/nested/widget_extra.py"} and files["code"] == {"src/nested/widget_extra.py"}
    assert files["text"] == {"src/nested/widget_extra.py"}
    assert files["explicit"] == {"docs/guide.md"}  # (paths given: root-relative, as they say)


def test_importers_and_references_page_and_a_glob_named_cwd_is_itself(tmp_path):
    root = tmp_path / "paged"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text("def shared_helper():\n    return 1\n")
    for i in range(5):
        (root / f"pkg/user_{i}.py").write_text(f"from pkg.core import shared_helper\n\nv{i} = shared_helper()\n")
    for name in ("[ab]", "a"):  # a directory named like a glob, and the one that glob would match
        (root / name).mkdir()
        (root / name / "w.py").write_text("def shared_helper_use():\n    return 'shared_helper'\n")

    async def body(client):
        await until(client, "symbol_search", {"query": "shared"}, lambda r: "Top " in text_of(r))
        pages, args = [], {"path": "pkg/core.py", "limit": 2}
        for _ in range(10):
            page = await until(client, "importers", args, lambda r: "available" not in r.structured_content)
            pages.append(page.structured_content)
            if "nextCursor" not in page.structured_content:
                break
            args = dict(args, cursor=page.structured_content["nextCursor"])
        refs, args = [], {"name": "shared_helper", "limit": 2}
        for _ in range(10):
            page = await client.call_tool("references", args)
            refs.append(page.structured_content)
            if "nextCursor" not in page.structured_content:
                break
            args = dict(args, cursor=page.structured_content["nextCursor"])
        scoped = await client.call_tool("references", {"name": "shared_helper", "cwd": str(root / "[ab]")})
        return pages, refs, scoped

    pages, refs, scoped = run_tools([root], body)
    importers = [e["file"] for p in pages for e in p["importers"]]
    assert importers == [f"pkg/user_{i}.py" for i in range(5)] and len(pages) == 3 and pages[0]["files"] == 5
    used = [r["file"] for p in refs for r in p["results"]]
    assert len(used) == len(set(used)) == 8 and used[0] == "pkg/core.py"  # (its definer first; no repeats)
    assert [r["file"] for r in scoped.structured_content["results"]] == ["[ab]/w.py"]


def test_counts_are_taken_as_sent_and_checked(widgets):
    """Issue 41 (review): `limit: true` and `limit: "5"` were coerced to 1 and 5, and `context` was clamped."""
    async def body(client):
        await until(client, "symbol_search", {"query": "widget"}, lambda r: "Top " in text_of(r))
        return {name: await client.call_tool(tool, args) for name, tool, args in (
            ("true", "symbol_search", {"query": "widget", "limit": True}),
            ("text", "symbol_search", {"query": "widget", "limit": "5"}),
            ("wide", "text_search", {"pattern": "widget", "context": 11}),
            ("negative", "text_search", {"pattern": "widget", "context": -3}),
            ("fine", "text_search", {"pattern": "widget_total", "context": 2, "limit": 1}))}

    out = run_tools([widgets], body)
    for name in ("true", "text", "wide", "negative"):
        assert out[name].is_error and "must be a whole number" in text_of(out[name]), name
    assert "`context` must be a whole number from 0 to 10, not 11" in text_of(out["wide"])
    assert not out["fine"].is_error and len(out["fine"].structured_content["results"]) == 1
