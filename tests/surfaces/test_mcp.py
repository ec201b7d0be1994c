"""The MCP server, driven over stdio by the official SDK's own client (a real protocol round trip)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import types
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from codelex import WordIndex  # noqa: E402


def text_of(result) -> str:
    return "".join(part.text for part in result.content if getattr(part, "type", "") == "text")


def data_of(result) -> dict:
    """An answer's data: a tool result's structured content (its text carries no second, JSON copy), or the
    data of an answer function's ``(text, data)``."""
    if isinstance(result, tuple):
        return result[1]
    assert "```json" not in text_of(result)
    return result.structured_content


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "home" / "work" / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.ts").write_text("export function authenticateUser(name: string) {\n  return checkPassword(name)\n}\n")
    (root / "src/db.py").write_text("def load_user(user_id):\n    return query(user_id)\n")
    return root


def _same_user_cache() -> str:
    """The cache directory whose key this process signs with: the server, another home notwithstanding, is
    the same user (it trusts the indexes the test writes, as it would `codelex index`'s)."""
    from codelex.persist import trust

    trust.user_key()
    return str(trust.key_file().parent.parent)


async def _session_run(repo: Path, body):
    home = repo.parents[1]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "codelex", "mcp"], cwd=str(repo),
        env=dict(os.environ, HOME=str(home), CODELEX_PERSIST_DEBOUNCE_MS="0", XDG_CACHE_HOME=_same_user_cache()),
    )
    with anyio.fail_after(180):  # a server that died would leave the call hanging
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)


def run_session(repo: Path, body):
    return anyio.run(_session_run, repo, body)


def test_round_trip(repo):
    async def body(session):
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        assert "symbol_search" in names
        schema = next(t for t in tools.tools if t.name == "symbol_search").input_schema
        assert set(schema["properties"]) >= {"query", "cwd", "limit", "paths", "lang"}
        assert schema["required"] == ["query"]

        # Cold: never blocks; says a background build is running.
        started = time.monotonic()
        cold = await session.call_tool("symbol_search", {"query": "authenticate user"})
        assert time.monotonic() - started < 10
        assert not cold.is_error
        cold_text = text_of(cold)
        assert re.search(r"background|retry", cold_text)
        payload = data_of(cold)
        assert payload["available"] is False and payload["unavailableReason"] == "building"

        warm = None
        for _ in range(200):
            warm = await session.call_tool("symbol_search", {"query": "authenticate user", "cwd": str(repo)})
            if "Top " in text_of(warm):
                break
            await anyio.sleep(0.05)
        text = text_of(warm)
        assert not warm.is_error
        assert text.startswith('Top 2 file(s) for "authenticate user":')
        assert re.search(r"  1\. src/auth\.ts \(score \d+\.\d\d, 2 hit\(s\), line 1\)", text)
        assert "Index covers 2 files." in text
        data = data_of(warm)
        assert data["coverage"] == {"files": 2, "truncated": False}
        first = data["results"][0]
        assert first["file"] == "src/auth.ts" and first["startLine"] == 1 and first["endLine"] == 3
        assert first["symbol"] == "authenticateUser"
        assert first["text"].startswith("export function authenticateUser")
        assert "suggestedNext" not in first  # (one per answer: the first result's)
        assert data["suggestedNext"] == {"tool": "read_symbol", "path": "src/auth.ts", "symbol": "authenticateUser"}
        assert text.endswith('Next: read_symbol(path="src/auth.ts", symbol="authenticateUser")')

        scoped = data_of((await session.call_tool("symbol_search", {"query": "user", "lang": "python"})))
        assert [r["file"] for r in scoped["results"]] == ["src/db.py"]
        scoped = data_of((await session.call_tool("symbol_search", {"query": "user", "paths": ["src/*.ts"]})))
        assert [r["file"] for r in scoped["results"]] == ["src/auth.ts"]
        limited = await session.call_tool("symbol_search", {"query": "user", "limit": 0})
        assert limited.is_error and "`limit` must be a whole number from 1 to 200" in text_of(limited)  # no clamp
        whole = data_of((await session.call_tool("symbol_search", {"query": "user", "limit": 1.0})))
        assert len(whole["results"]) == 1  # (a whole number sent as 1.0 is one)

        none = await session.call_tool("symbol_search", {"query": "kubernetes"})
        assert not none.is_error
        assert text_of(none).startswith('No files matched "kubernetes".') and "Index covers 2 files." in text_of(none)

        bad = await session.call_tool("symbol_search", {"query": "lang:klingon user"})
        assert bad.is_error and "lang" in text_of(bad) and "python" in text_of(bad)
        empty = await session.call_tool("symbol_search", {"query": "   "})
        assert empty.is_error and text_of(empty) == "Provide a non-empty `query`."
        home = await session.call_tool("symbol_search", {"query": "x", "cwd": str(repo.parents[1])})
        assert home.is_error and "home directory" in text_of(home)
        missing = await session.call_tool("symbol_search", {"query": "x", "cwd": str(repo / "nope")})
        assert missing.is_error and "not a readable directory" in text_of(missing)

        # Another process writes a newer index: the next call serves it, not the warm copy.
        newer = WordIndex.build([("src/other.go", "func Kubernetes() {}\n")])
        newer.metadata.update(generated_at=time.time(), truncated=False)
        newer.save(repo / ".codelex")
        fresh = await session.call_tool("symbol_search", {"query": "kubernetes"})
        assert "src/other.go" in text_of(fresh)
        return True

    assert run_session(repo, body)


@contextlib.contextmanager
def _three_hours_later(monkeypatch):
    """The MCP answers' clock three hours ahead: the index it answers from looks three hours old."""
    from codelex import mcp_answers

    clock = types.SimpleNamespace(time=lambda: time.time() + 3 * 3600, monotonic=time.monotonic, sleep=time.sleep)
    with monkeypatch.context() as patch:
        patch.setattr(mcp_answers, "time", clock)
        yield


def test_staleness_note_and_background_refresh(repo, monkeypatch):
    from codelex.mcp_server import symbol_search_answer, symbol_search_text
    from codelex.project import Project

    with Project(repo) as project:
        project.open()
        with _three_hours_later(monkeypatch):  # as if refreshed three hours ago
            text, data = symbol_search_answer(project, "authenticate")
        assert "\n\nIndex last updated 3h ago;" in text
        assert text.index("Index last updated") < text.index("Index covers 2 files.")
        assert data["staleness"].startswith("Index last updated 3h ago")
        assert project.wait(timeout=60)  # the call started a refresh in the background
        assert time.time() - project.generated_at < 60
        assert "Index last updated" not in symbol_search_text(project, "authenticate")


def test_watched_project_answers_without_staleness_and_follows_edits(repo, monkeypatch):
    pytest.importorskip("watchdog")
    from codelex.mcp_server import symbol_search_answer, symbol_search_text
    from codelex.project import Project

    with Project(repo, watch=True) as project:
        project.open()
        assert project.watching
        with _three_hours_later(monkeypatch):  # old, but every edit since has been applied
            text, data = symbol_search_answer(project, "authenticate")
        assert "Index last updated" not in text and "staleness" not in data
        files = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.py") if ".codelex" not in p.parts)
        (repo / files[0]).write_text("def wolverinezap():\n    pass\n")
        project.sync()
        assert files[0] in symbol_search_text(project, "wolverinezap")


def test_symbol_search_ranking(repo):
    from codelex.mcp_server import ToolError, symbol_search_answer, symbol_search_text
    from codelex.project import Project

    with Project(repo) as project:
        project.open()
        code = symbol_search_answer(project, "authenticate")
        classic = symbol_search_answer(project, "authenticate", ranking="classic")
        assert "matched " in code[0] and "matched " not in classic[0]
        assert "fields" in code[1]["results"][0]
        assert all("fields" not in r for r in classic[1]["results"])
        with pytest.raises(ToolError, match="ranking"):
            symbol_search_text(project, "authenticate", ranking="fancy")
        with pytest.raises(ToolError, match="ranking"):
            symbol_search_text(project, "authenticate", ranking=3)


def test_docs_search_tool(repo):
    (repo / "docs").mkdir()
    (repo / "docs/auth.rst").write_text("Authentication\n==============\n\nUsers authenticate with a password.\n")

    async def body(session):
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"symbol_search", "docs_search"} <= names
        hit = await session.call_tool("docs_search", {"query": "authenticate password"})
        none = await session.call_tool("docs_search", {"query": "kubernetes"})
        empty = await session.call_tool("docs_search", {"query": " "})
        return hit, none, empty

    hit, none, empty = run_session(repo, body)
    text = text_of(hit)
    assert not hit.is_error
    assert text.startswith('Top 1 section(s) for "authenticate password":')
    assert "docs/auth.rst#authentication — Authentication › Authentication" in text
    data = data_of(hit)
    assert data["results"][0]["snippet"].startswith("Users authenticate with a password")
    assert not none.is_error and "No documentation section matched" in text_of(none)
    assert "symbol_search" in text_of(none)
    assert empty.is_error and text_of(empty) == "Provide a non-empty `query`."


def test_hostile_inputs_never_take_the_server_down(repo):
    """Regression (issue 12): non-UTF-8 names, absurd limits and huge queries; a valid call after each."""
    bad_name = os.fsdecode(b"bad\xff.py")
    (repo / bad_name).write_text("def probe(): pass\n")
    (repo / "docs").mkdir()
    (repo / "docs" / os.fsdecode(b"bad\xff.md")).write_text("# Probe\nThe probe section.\n")
    from codelex.project import Project

    with Project(repo) as project:  # indexed beforehand, as `codelex index` would
        project.open()

    async def body(session):
        out = {}
        out["symbol"] = await session.call_tool("symbol_search", {"query": "probe"})
        out["docs"] = await session.call_tool("docs_search", {"query": "probe section"})
        for name, limit in (("1e300", 1e300), ("10**30", 10**30), ("2**63", 2**63)):
            out[name] = await session.call_tool("symbol_search", {"query": "user", "limit": limit})
        huge = "probe " + "x" * (1 << 20)
        out["huge"] = await session.call_tool("symbol_search", {"query": huge})
        out["after"] = await session.call_tool("symbol_search", {"query": "authenticate user"})
        return out

    out = run_session(repo, body)
    symbol = text_of(out["symbol"])
    assert not out["symbol"].is_error, symbol
    assert "bad\\xff.py" in symbol
    assert data_of(out["symbol"])["results"][0]["file"] == "bad\\xff.py"
    docs = text_of(out["docs"])
    assert not out["docs"].is_error and "docs/bad\\xff.md" in docs
    for name in ("1e300", "10**30", "2**63"):  # an error in our words (issue 41: never a silent clamp)
        assert out[name].is_error and "`limit` must be a whole number" in text_of(out[name]), name
        assert len(text_of(out[name])) < 200
    huge = text_of(out["huge"])
    assert not out["huge"].is_error
    assert len(huge) < 10_000, len(huge)
    assert "1,048,582 characters" in huge
    assert "src/auth.ts" in text_of(out["after"]) and not out["after"].is_error


def test_file_outline_and_read_symbol_tools(repo):
    (repo / "src/geo.py").write_text("class Shape:\n    def area(self):\n        return 0\n")

    async def body(session):
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"file_outline", "read_symbol"} <= names
        out = {}
        out["outline"] = await session.call_tool("file_outline", {"path": "src/geo.py"})
        out["read"] = await session.call_tool("read_symbol", {"path": "src/geo.py", "symbol": "Shape.area"})
        out["unknown"] = await session.call_tool("read_symbol", {"path": "src/geo.py", "symbol": "Circle"})
        out["missing"] = await session.call_tool("file_outline", {"path": "src/nope.py"})
        out["outside"] = await session.call_tool("file_outline", {"path": "../../x.py"})
        out["empty"] = await session.call_tool("read_symbol", {"path": "src/geo.py", "symbol": " "})
        out["after"] = await session.call_tool("read_symbol", {"path": "src/geo.py", "symbol": "Shape"})
        return out

    out = run_session(repo, body)
    text = text_of(out["outline"])
    assert not out["outline"].is_error
    assert text.startswith("Outline of src/geo.py (python, 2 definition(s)):")
    assert "  class Shape  (lines 1-3)" in text and "    method Shape.area  (lines 2-3)" in text
    # Compact (issue 33): the outline once as text and once as data, never a JSON copy inside the text.
    assert "```json" not in text and "{" not in text
    data = out["outline"].structured_content
    assert data["path"] == "src/geo.py" and data["language"] == "python"
    area = data["definitions"][0]["children"][0]
    assert area == {"qualifiedName": "Shape.area", "kind": "method", "startLine": 2, "endLine": 3,
                    "signature": "def area(self):"}
    read = text_of(out["read"])
    assert not out["read"].is_error
    assert read == "src/geo.py:2-3 method Shape.area\n```\n    def area(self):\n        return 0\n```"
    assert out["read"].structured_content == {"path": "src/geo.py", "symbol": "Shape.area", "kind": "method",
                                              "startLine": 2, "endLine": 3,
                                              "text": "    def area(self):\n        return 0"}
    assert out["unknown"].structured_content is None  # an error result carries text only
    for name in ("unknown", "missing", "outside", "empty"):
        assert out[name].is_error, (name, text_of(out[name]))
    assert "nearest" in text_of(out["unknown"]) or "no definition" in text_of(out["unknown"])
    assert not out["after"].is_error and "class Shape" in text_of(out["after"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links (POSIX)")
@pytest.mark.timeout(300)
def test_outline_and_read_symbol_follow_no_link_and_refuse_a_fifo(repo, tmp_path):
    """Regression (issue 27): ``linkdir/secret.py``, outlined while ``linkdir`` was a directory, was read outside
    the root once ``linkdir`` became a link there; a FIFO is refused at once; the server stays up."""
    (repo / "linkdir").mkdir()
    (repo / "linkdir/secret.py").write_text("def secret():\n    return 'inside'\n")
    from codelex.project import Project

    with Project(repo) as project:  # indexed and analyzed beforehand: the structure store knows the path
        project.open()
        assert project.wait_structure(60)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    return 'OUTSIDE'\n")
    import shutil

    shutil.rmtree(repo / "linkdir")
    os.symlink(outside, repo / "linkdir")
    os.mkfifo(repo / "src/f3.py")

    async def body(session):
        out = {}
        out["outline"] = await session.call_tool("file_outline", {"path": "linkdir/secret.py"})
        out["read"] = await session.call_tool("read_symbol", {"path": "linkdir/secret.py", "symbol": "secret"})
        out["absolute"] = await session.call_tool("read_symbol", {"path": str(repo / "linkdir/secret.py"),
                                                                  "symbol": "secret"})
        with anyio.fail_after(30):
            out["fifo"] = await session.call_tool("file_outline", {"path": "src/f3.py"})
        out["after"] = await session.call_tool("read_symbol", {"path": "src/db.py", "symbol": "load_user"})
        return out

    out = run_session(repo, body)
    for name in ("outline", "read", "absolute", "fifo"):
        assert out[name].is_error, (name, text_of(out[name]))
        assert "OUTSIDE" not in text_of(out[name])
    assert "symbolic link" in text_of(out["read"])
    assert not out["after"].is_error and "def load_user" in text_of(out["after"])


def test_code_search_and_find_related_tools(repo):
    async def body(session):
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"code_search", "find_related"} <= names
        out = {}
        for _ in range(100):  # the first calls start the builds in the background
            out["search"] = await session.call_tool("code_search", {"query": "load user"})
            if "No answer yet" not in text_of(out["search"]):
                break
            await anyio.sleep(0.1)
        out["empty"] = await session.call_tool("code_search", {"query": " "})
        out["alts"] = await session.call_tool("code_search", {"query": "x", "alternatives": "not a list"})
        out["related"] = await session.call_tool("find_related", {"path": "src/db.py", "line": 1})
        out["badline"] = await session.call_tool("find_related", {"path": "src/db.py", "line": -3})
        out["after"] = await session.call_tool("symbol_search", {"query": "load_user"})
        return out

    out = run_session(repo, body)
    text = text_of(out["search"])
    assert not out["search"].is_error and "src/db.py:1-2" in text, text
    # Lexical at once: no embedding model in the test environment (the hint says how to get one), or one
    # loading in the background (the hint says how many chunks have a vector meanwhile).
    assert "Mode: lexical" in text
    assert "lexical ranking only" in text or "loading the embedding model in the background" in text
    assert data_of(out["search"])["results"][0]["path"] == "src/db.py"
    for name in ("empty", "alts", "badline"):
        assert out[name].is_error, name
    # At once, never an error: while the chunks are being prepared it says so; once they are, and until the
    # vectors are there, related by shared identifiers (issue 29), said so.
    related = text_of(out["related"])
    assert not out["related"].is_error
    assert "related by shared identifiers" in related or related.startswith("No answer yet: the chunks"), related
    assert not out["after"].is_error


def test_symbol_search_mentions_importer_counts(tmp_path):
    from codelex.mcp_server import symbol_search_answer
    from codelex.project import Project

    root = tmp_path / "repo"
    root.mkdir()
    (root / "core.py").write_text("def authenticate_user(): pass\n")
    (root / "a.py").write_text("import core\n")
    (root / "b.py").write_text("from core import authenticate_user\n")
    with Project(root) as project:
        project.open()
        project.importers("core.py")  # the graph is ready
        results = data_of(symbol_search_answer(project, "authenticate"))["results"]
        assert results[0]["file"] == "core.py" and results[0]["importers"] == 2


@pytest.mark.timeout(300)
def test_configuration_changes_reach_the_tools(repo):
    """Regression (issue 27): the MCP server kept the settings it first read and never reported a broken file;
    a FIFO configuration file hung it."""
    query = {"query": "authenticate user load", "cwd": str(repo)}

    async def body(session):
        async def files_until(expected):
            found = None
            for _ in range(600):
                result = await session.call_tool("symbol_search", query)
                found = sorted(r["file"] for r in data_of((result)).get("results", []))  # (building)
                if found == expected:
                    break
                await anyio.sleep(0.05)
            return found

        out = {"first": await files_until(["src/auth.ts", "src/db.py"])}
        (repo / ".codelexignore").write_text("src/db.py\n")
        out["ignored"] = await files_until(["src/auth.ts"])
        (repo / "pyproject.toml").write_text('[tool.codelex]\ninclude = ["[z-a]"]\n')
        out["broken"] = await session.call_tool("symbol_search", query)
        out["broken_outline"] = await session.call_tool("file_outline", {"path": "src/db.py", "cwd": str(repo)})
        (repo / "pyproject.toml").unlink()
        os.mkfifo(repo / ".codelex.toml")
        with anyio.fail_after(30):
            out["fifo"] = await session.call_tool("symbol_search", query)
        (repo / ".codelex.toml").unlink()
        (repo / ".codelexignore").unlink()
        out["fixed"] = await files_until(["src/auth.ts", "src/db.py"])
        return out

    out = run_session(repo, body)
    assert out["first"] == ["src/auth.ts", "src/db.py"]
    assert out["ignored"] == ["src/auth.ts"]
    for name in ("broken", "broken_outline"):
        assert out[name].is_error and "pyproject.toml: include: bad pattern '[z-a]'" in text_of(out[name])
    assert out["fifo"].is_error and ".codelex.toml: not a regular file" in text_of(out["fifo"])
    assert out["fixed"] == ["src/auth.ts", "src/db.py"]


def test_tools_serve_only_the_projects_the_server_was_started_for(tmp_path, monkeypatch):
    """Regression (review finding 7): any `cwd` below home was served: `symbol_search {"query": "oauth_token",
    "cwd": "~/.config"}` answered with secrets and created `.codelex/` in ~/.config and ~/.ssh; a NUL in `cwd`
    was an unhandled ValueError."""
    from codelex import mcp_server
    from codelex.mcp_server import _reply, build_server, docs_search_text, serve_roots, symbol_search_text

    home = tmp_path / "home"
    repo = home / "work" / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src/auth.py").write_text("def authenticate_user(name):\n    return name\n")
    (repo / ".git").mkdir()
    other = home / "work" / "other"
    other.mkdir()
    (other / "tokens.py").write_text("OAUTH_TOKEN = 'other project'\n")
    secrets = home / ".config" / "app"
    secrets.mkdir(parents=True)
    (secrets / "settings.py").write_text("oauth_token = 'hunter2'\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODELEX_MCP_ROOTS", raising=False)
    assert serve_roots(repo / "src") == ([repo.resolve()], [])
    assert serve_roots(home)[0] == []  # started in the home directory: nothing by default
    monkeypatch.setenv("CODELEX_MCP_ROOTS", str(other))
    roots, problems = serve_roots(repo, named=[str(home / "missing"), str(home)])
    assert roots == [repo.resolve(), other.resolve()] and len(problems) == 2
    monkeypatch.delenv("CODELEX_MCP_ROOTS")
    build_server([repo.resolve()])
    try:
        for cwd in (str(home / ".config"), "~/.config", str(secrets), str(tmp_path), str(other), "/etc"):
            result = _reply(symbol_search_text, cwd, "oauth token")
            text = result.content[0].text
            assert result.is_error and ("outside the projects" in text or "Refusing" in text), (cwd, text)
            assert "hunter2" not in text
        assert not (home / ".config" / ".codelex").exists() and not (secrets / ".codelex").exists()
        assert not (other / ".codelex").exists()
        for bad in ("\x00", str(repo) + "\x00/x", 42):
            result = _reply(symbol_search_text, bad, "user")
            assert result.is_error, bad
        for cwd in (None, "", str(repo), str(repo / "src"), os.path.relpath(repo / "src")):
            assert mcp_server._project_for(cwd).root == repo.resolve(), cwd
        assert "authenticate" not in _reply(docs_search_text, str(secrets), "oauth").content[0].text
        build_server([repo.resolve(), other.resolve()])
        assert mcp_server._project_for(str(other)).root == other.resolve()
        build_server([])
        result = _reply(symbol_search_text, None, "user")
        assert result.is_error and "--root" in result.content[0].text
    finally:
        mcp_server._pool.close()
        mcp_server._roots = []


def test_codelex_mcp_serves_the_roots_named_at_start(repo, tmp_path):
    other = repo.parent / "other"
    other.mkdir()
    (other / "tokens.py").write_text("def rotate_oauth_token():\n    pass\n")
    home = repo.parents[1]

    async def body(session):
        out = {}
        for _ in range(200):
            out["other"] = await session.call_tool("symbol_search", {"query": "rotate oauth", "cwd": str(other)})
            if "Top " in text_of(out["other"]):
                break
            await anyio.sleep(0.05)
        out["outside"] = await session.call_tool("symbol_search", {"query": "x", "cwd": str(home / ".config")})
        return out

    async def run_it():
        params = StdioServerParameters(command=sys.executable, args=["-m", "codelex", "mcp", "--root", str(other)],
                                       cwd=str(repo), env=dict(os.environ, HOME=str(home)))
        with anyio.fail_after(180):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    (home / ".config").mkdir()
    out = anyio.run(run_it)
    assert not out["other"].is_error and "tokens.py" in text_of(out["other"]), text_of(out["other"])
    assert out["outside"].is_error and "--root" in text_of(out["outside"])
    import subprocess

    r = subprocess.run([sys.executable, "-m", "codelex", "mcp", "--root", str(tmp_path / "missing")], cwd=str(repo),
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.startswith("codelex: cannot serve") and len(r.stderr.splitlines()) == 1


def test_code_search_says_what_its_line_budget_left_out(tmp_path):
    from codelex import Project
    from codelex.mcp_server import code_search_answer

    root = tmp_path / "long"
    root.mkdir()
    for i in range(5):
        body = "".join(f"    total = total + alpha_{i} * {j}\n" for j in range(40))
        (root / f"m{i}.py").write_text(f"def alpha_function_{i}(alpha_{i}):\n    total = 0\n{body}    return total\n")
    project = Project(root, use_git=False)
    try:
        project.open()
        project.prepare_code_search()
        text, data = code_search_answer(project, "alpha function", limit=10, lines=100)
        assert ("2 more results left out by the 100-line budget, and excerpts were cut to their first lines: pass "
                "a larger `lines`") in text, text
        assert data["omitted"] == 2
        text, data = code_search_answer(project, "alpha function", limit=10, lines=1000)
        assert "left out" not in text and data["omitted"] == 0
    finally:
        project.close()


def test_tools_describe_every_parameter_with_types_enums_and_annotations(repo):
    """Issue 33: only titles reached the client (no descriptions), `limit` was a `number`, `ranking`, `fusion`
    and `lang` free strings, no annotations, and the instructions named 3 of the 6 tools."""
    from codelex import KINDS, RANKINGS
    from codelex.defaults import MCP_MAX_LIMIT
    from codelex.rank.fusion import FUSIONS

    async def body(session):
        init = session.initialize_result  # (as the session's own initialize() received it)
        tools = {t.name: t for t in (await session.list_tools()).tools}
        over = await session.call_tool("symbol_search", {"query": "user", "limit": MCP_MAX_LIMIT + 1})
        bad = await session.call_tool("code_search", {"query": "user", "fusion": "fancy"})
        unknown = await session.call_tool("symbol_search", {"query": "user", "lang": "klingon"})
        return init, tools, over, bad, unknown

    init, tools, over, bad, unknown = run_session(repo, body)
    assert unknown.is_error and all(kind in text_of(unknown) for kind in KINDS)
    for name, tool in tools.items():
        assert tool.description and tool.title, name
        assert name in init.instructions, name
        for param, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (name, param)
            assert "type" in schema and "default" not in schema and "anyOf" not in schema, (name, param, schema)
        hints = tool.annotations
        # Every tool reads, but reindex, which writes codelex's own index: neither destructive nor more than once.
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == \
            (name != "reindex", False, True, False), name
        if "limit" in tool.input_schema["properties"]:
            assert tool.input_schema["properties"]["limit"] == {**tool.input_schema["properties"]["limit"],
                                                                "type": "integer", "minimum": 1,
                                                                "maximum": MCP_MAX_LIMIT}
    search = tools["symbol_search"].input_schema["properties"]
    assert search["ranking"]["enum"] == list(RANKINGS)
    # The language: a string, its common names in the description (issue 41: the 40-kind enum three times made
    # the tool list twice the size), an unknown one an error result naming them all (below).
    assert search["lang"] == tools["code_search"].input_schema["properties"]["lang"] == \
        tools["text_search"].input_schema["properties"]["lang"]
    assert search["lang"]["type"] == "string" and "enum" not in search["lang"] and "python" in search["lang"][
        "description"]
    assert sorted(tools["code_search"].input_schema["properties"]["fusion"]["enum"]) == sorted(FUSIONS)
    assert tools["code_search"].input_schema["properties"]["lines"]["type"] == "integer"
    assert tools["read_symbol"].input_schema["properties"]["line"] == {
        **tools["read_symbol"].input_schema["properties"]["line"], "type": "integer", "minimum": 1}
    # The maximum is the code's: a larger limit is an error result in the server's words (issue 41: it was
    # clamped in silence), as an unknown preset is.
    assert over.is_error and f"from 1 to {MCP_MAX_LIMIT}" in text_of(over)
    assert bad.is_error and "fusion" in text_of(bad)


def test_answers_carry_structured_content_alongside_their_text(repo):
    """Issue 33: hits as data (structuredContent); issue 41: the text renders them, with no second JSON copy."""
    (repo / "docs").mkdir()
    (repo / "docs/auth.md").write_text("# Login\n\nUsers authenticate with a password.\n")

    async def body(session):
        out = {}
        for _ in range(200):
            out["symbol"] = await session.call_tool("symbol_search", {"query": "authenticate user"})
            if "Top " in text_of(out["symbol"]):
                break
            await anyio.sleep(0.05)
        out["docs"] = await session.call_tool("docs_search", {"query": "authenticate password"})
        out["nodocs"] = await session.call_tool("docs_search", {"query": "kubernetes"})
        for _ in range(100):
            out["code"] = await session.call_tool("code_search", {"query": "load user"})
            if "No answer yet" not in text_of(out["code"]):
                break
            await anyio.sleep(0.1)
        return out

    out = run_session(repo, body)
    symbol = out["symbol"]
    assert symbol.structured_content == data_of((symbol))
    assert symbol.structured_content["results"][0]["file"] == "src/auth.ts"
    assert out["docs"].structured_content == data_of((out["docs"]))
    assert out["docs"].structured_content["results"][0]["path"] == "docs/auth.md"
    assert out["nodocs"].structured_content["results"] == []
    code = out["code"].structured_content
    assert code["results"][0]["path"] == "src/db.py" and code["results"][0]["excerpt"].startswith("def load_user")
    assert {k: v for k, v in code.items() if k != "results"} == \
        {k: v for k, v in data_of((out["code"])).items() if k != "results"}


def test_read_symbol_resolves_an_overloaded_name_to_its_implementation(repo):
    """Issue 33: `read_symbol MonkeyPatch.setattr` (two @overload stubs and the body) was an error until the
    agent passed `line`; now the implementation, saying where the stubs are. A real ambiguity still lists."""
    (repo / "src/patch.py").write_text(
        "import typing\nfrom typing import overload\n\n\nclass MonkeyPatch:\n"
        "    @overload\n    def setattr(self, target: str, value: object) -> None: ...\n\n"
        "    @typing.overload  # the qualified spelling\n"
        "    def setattr(self, target: object, name: str, value: object) -> None: ...\n\n"
        "    def setattr(self, target, name, value=None):\n        return None\n\n\n"
        "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n\n\n"
        "def twice():\n    return 1\n\n\ndef twice():\n    return 2\n")

    async def body(session):
        out = {}
        for symbol in ("MonkeyPatch.setattr", "setattr", "run", "twice"):
            out[symbol] = await session.call_tool("read_symbol", {"path": "src/patch.py", "symbol": symbol})
        out["stub"] = await session.call_tool("read_symbol", {"path": "src/patch.py", "symbol": "setattr",
                                                              "line": 7})
        return out

    out = run_session(repo, body)
    for symbol in ("MonkeyPatch.setattr", "setattr"):
        text = text_of(out[symbol])
        assert not out[symbol].is_error, text
        assert text.startswith("src/patch.py:12-13 method MonkeyPatch.setattr\nThe implementation; its 2 "
                               "@overload stubs are at lines 7, 10 (pass `line` to read one).\n```\n"
                               "    def setattr(self, target,")
        assert out[symbol].structured_content["overloads"] == [7, 10]
    stub = out["stub"]
    assert not stub.is_error and "@overload\n    def setattr(self, target: str" in text_of(stub)
    assert "overloads" not in stub.structured_content and "The implementation" not in text_of(stub)
    assert out["run"].is_error and "A.run (line 17)" in text_of(out["run"]) and "B.run (line 22)" in text_of(out["run"])
    assert out["twice"].is_error and "line 26" in text_of(out["twice"]) and "line 30" in text_of(out["twice"])


def test_index_status_says_what_is_indexed_and_waits_for_it(repo):
    """Issue 33: no tool said what is indexed or how ready it is, nor waited for it."""
    async def body(session):
        out = {"first": await session.call_tool("index_status", {})}
        out["waited"] = await session.call_tool("index_status", {"wait": 20, "cwd": str(repo / "src")})
        out["absurd"] = await session.call_tool("index_status", {"wait": 1e300})  # clamped, never hangs
        out["outside"] = await session.call_tool("index_status", {"cwd": str(repo.parents[1])})
        return out

    out = run_session(repo, body)
    first = text_of(out["first"])
    assert not out["first"].is_error and first.startswith(f"Project {repo}: "), first
    waited = out["waited"]
    text = text_of(waited)
    assert not waited.is_error
    assert f"Project {repo}: ready." in text and "Index: 2 files, built " in text, text
    assert "Definitions (file_outline, read_symbol): ready." in text and "Embeddings: " in text, text
    data = waited.structured_content
    assert data["root"] == str(repo) and data["status"] == "ready" and data["files"] == 2
    assert data["structure"] == "ready" and data["ageSeconds"] >= 0
    assert set(data["embedding"]) == {"embedded", "chunks", "running", "error"}
    assert not out["absurd"].is_error
    assert out["outside"].is_error and "home directory" in text_of(out["outside"])


@pytest.mark.timeout(300)
def test_text_search_finds_exact_strings_and_regexes_within_bounds(repo, tmp_path):
    """Issue 33: no exact or regex search for when an agent knows the string. Bounded: RE2 (a pattern that
    backtracks for ever in Python's engine answers at once), a line limit, files read without following a
    link out of the root; a bad pattern is an error result and the server stays up."""
    (repo / "src/errors.py").write_text("def fail():\n    raise ValueError('user (id) not found')\n"
                                        "# aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n")
    (repo / "src/link.py").write_text("SECRET = 'inside'\n")
    from codelex.project import Project

    with Project(repo) as project:  # indexed while link.py was a file
        project.open()
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 'OUTSIDE'\n")
    (repo / "src/link.py").unlink()
    os.symlink(outside, repo / "src/link.py")

    async def body(session):
        out = {}
        call = session.call_tool
        out["exact"] = await call("text_search", {"pattern": "user (id) not found"})
        out["regex"] = await call("text_search", {"pattern": r"def \w+_user\(", "regex": True, "context": 1})
        out["case"] = await call("text_search", {"pattern": "VALUEERROR", "ignore_case": True, "lang": "python"})
        out["limited"] = await call("text_search", {"pattern": "user", "limit": 1})
        started = time.monotonic()  # exponential in Python's engine on the "aaa…ab" line; linear in RE2
        out["evil"] = await call("text_search", {"pattern": "(a+)+c", "regex": True})
        out["evil_s"] = time.monotonic() - started
        out["secret"] = await call("text_search", {"pattern": "SECRET"})
        out["bad"] = await call("text_search", {"pattern": "(unclosed", "regex": True})
        out["backref"] = await call("text_search", {"pattern": r"(a)\1", "regex": True})
        out["empty"] = await call("text_search", {"pattern": ""})
        out["after"] = await call("text_search", {"pattern": "checkPassword", "paths": ["src/*.ts"]})
        return out

    out = run_session(repo, body)
    exact = out["exact"]
    assert not exact.is_error, text_of(exact)
    assert text_of(exact).startswith('1 line(s) matching string "user (id) not found" in 1 file(s):\n'
                                     "src/errors.py:2:23:     raise ValueError('user (id) not found')")
    assert exact.structured_content["results"] == [{"path": "src/errors.py", "line": 2, "column": 23,
                                                    "text": "    raise ValueError('user (id) not found')"}]
    regex = out["regex"]
    assert [r["path"] for r in regex.structured_content["results"]] == ["src/db.py"]
    assert "src/db.py:1:1: def load_user(user_id):" in text_of(regex)
    assert "src/db.py-2-      return query" in text_of(regex)
    assert regex.structured_content["results"][0]["after"] == ["    return query(user_id)"]
    assert [r["path"] for r in out["case"].structured_content["results"]] == ["src/errors.py"]
    limited = out["limited"]
    assert len(limited.structured_content["results"]) == 1 and limited.structured_content["stopped"] == "limit"
    assert "pass a larger `limit`" in text_of(limited)
    assert not out["evil"].is_error and out["evil"].structured_content["results"] == [] and out["evil_s"] < 5
    secret = out["secret"]
    # (the link is dropped from the index as the server opens it; were it still listed, the safe read refuses it)
    assert not secret.is_error and "OUTSIDE" not in text_of(secret)
    assert secret.structured_content["results"] == []
    for name in ("bad", "backref", "empty"):
        assert out[name].is_error, name
    assert "missing )" in text_of(out["bad"])
    assert [r["path"] for r in out["after"].structured_content["results"]] == ["src/auth.ts"]


def test_a_file_name_too_long_for_the_file_system_is_a_named_error(repo):
    """Issue 39: file_outline, read_symbol and find_related with a 300-character file name answered a generic
    error (and printed a traceback); each says what went wrong, in codelex's words."""
    from codelex.mcp_server import ToolError, file_outline_text, find_related_text, read_symbol_text
    from codelex.project import Project

    name = "a" * 300 + ".py"
    with Project(repo) as project:
        project.open()
        project.wait_structure(60)
        project.prepare_code_search()
        for call in (lambda: file_outline_text(project, name), lambda: read_symbol_text(project, name, "f"),
                     lambda: find_related_text(project, name, 1)):
            with pytest.raises(ToolError, match=r"^Cannot (outline|read|relate) .*aaaa"):
                call()

    async def body(session):
        answer = await session.call_tool("file_outline", {"path": name})
        return answer.is_error, text_of(answer)

    is_error, text = run_session(repo, body)
    assert is_error and text.startswith("Cannot outline") and "Traceback" not in text
