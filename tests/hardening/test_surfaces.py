"""Hostile input at the surfaces: the CLI answers one line and exit 2; the MCP server answers error
results and stays up (a valid call after every bad one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "codelex", *args], capture_output=True, cwd=cwd, timeout=120,
                          env=dict(os.environ, CODELEX_NO_SERVER="1", **(env or {})))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "home" / "work" / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name):\n    return check_password(name)\n")
    return root


def _one_line_exit_2(r):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codelex: "), lines
    assert b"Traceback" not in r.stderr


@pytest.mark.parametrize("command", [["search", "x"], ["index"], ["docs", "x"], ["outline", "a.py"],
                                     ["code", "x"]])
def test_cli_refuses_roots_at_or_above_home_and_missing_or_odd_roots(repo, tmp_path, command):
    home = repo.parents[1]
    env = {"HOME": str(home)}
    for root in (home, home.parent, repo / "src/auth.py", tmp_path / "missing", os.fsdecode(b"/tmp/\xff\xfe")):
        _one_line_exit_2(_cli(*command, "--root", str(root), env=env))


def test_cli_non_utf8_arguments_and_huge_values(repo):
    bad = os.fsdecode(b"\xff\xfe parse")
    r = _cli("search", bad, "--root", str(repo))
    assert r.returncode in (0, 1) and b"Traceback" not in r.stderr
    r = _cli("search", "authenticate", "--root", str(repo), "--path", os.fsdecode(b"src/\xff*"))
    assert r.returncode in (0, 1) and b"Traceback" not in r.stderr
    for args in (["-n", "9" * 40], ["--max-bytes", "9" * 40]):
        r = _cli("search", "authenticate", "--root", str(repo), *args)
        assert r.returncode == 0 and b"src/auth.py" in r.stdout, (args, r.stderr)
    for args in (["-n", "-1"], ["-n", "x"], ["--max-bytes", "-3"], ["--lang", "klingon"],
                 ["--ranking", "best"]):
        _one_line_exit_2(_cli("search", "authenticate", "--root", str(repo), *args))
    long_query = "authenticate " + "x" * 120_000  # (one argument is capped at 128 KiB by the kernel)
    r = _cli("search", long_query, "--root", str(repo))
    assert r.returncode in (0, 1) and b"Traceback" not in r.stderr


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads unreadable directories anyway")
def test_cli_unreadable_root(tmp_path):
    root = tmp_path / "home" / "closed"
    root.mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    os.chmod(root, 0)
    try:
        _one_line_exit_2(_cli("search", "x", "--root", str(root), env={"HOME": str(tmp_path / "home")}))
    finally:
        os.chmod(root, 0o755)


mcp = pytest.importorskip("mcp")


def test_mcp_bad_roots_types_and_sizes_are_error_results_and_the_server_stays_up(repo):
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = repo.parents[1]
    env = dict(os.environ, HOME=str(home), CODELEX_PERSIST_DEBOUNCE_MS="0")
    # Indexed beforehand by `codelex index`, as the same user (the same home: the same key, so the server
    # trusts the index rather than rebuilding it).
    subprocess.run([sys.executable, "-m", "codelex", "index", "--root", str(repo)], cwd=str(repo), env=env,
                   check=True, capture_output=True, timeout=300)
    surrogate = "\x00\x1b[31m\ufffd\u202e"  # NUL, an escape sequence, a replacement char, a bidi override
    calls = [
        ("symbol_search", {"query": "user", "cwd": str(home)}),  # the home directory itself
        ("symbol_search", {"query": "user", "cwd": "/"}),  # above it
        ("symbol_search", {"query": "user", "cwd": str(repo / "missing")}),
        ("symbol_search", {"query": "user", "cwd": str(repo / "src/auth.py")}),
        ("symbol_search", {"query": "user", "cwd": "relative/dir"}),
        ("symbol_search", {"query": "user", "limit": -5}),
        ("symbol_search", {"query": "user", "limit": "ten"}),
        ("symbol_search", {"query": ["a", "list"]}),
        ("symbol_search", {"query": "lang:klingon user"}),
        ("symbol_search", {"query": surrogate}),
        ("symbol_search", {"query": "user", "paths": ["["]}),
        ("docs_search", {"query": "x" * (2 << 20)}),
        ("code_search", {"query": "user", "limit": 10**40, "alternatives": ["y" * (1 << 20)] * 3}),
        ("file_outline", {"path": "../../../../etc/passwd"}),
        ("file_outline", {"path": surrogate + ".py"}),
        ("read_symbol", {"path": "src/auth.py", "symbol": "x" * (1 << 20)}),
        ("read_symbol", {"path": "src/auth.py", "symbol": "authenticate_user", "line": -(10**30)}),
        ("find_related", {"path": "src/auth.py", "line": 10**30}),
        ("find_related", {"path": "/", "line": 1}),
        ("no_such_tool", {}),
    ]

    async def body(session):
        outcomes = []
        for name, arguments in calls:
            try:
                result = await session.call_tool(name, arguments)
                text = "".join(p.text for p in result.content if getattr(p, "type", "") == "text")
                outcomes.append((name, result.is_error, len(text)))
            except Exception as exc:  # a protocol-level error is an answer too, as long as the server lives
                outcomes.append((name, True, len(str(exc))))
            after = await session.call_tool("symbol_search", {"query": "authenticate user"})
            assert not after.is_error and "src/auth.py" in after.content[0].text, (name, arguments)
        return outcomes

    async def run():
        params = StdioServerParameters(command=sys.executable, args=["-m", "codelex", "mcp"], cwd=str(repo), env=env)
        with anyio.fail_after(300):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    outcomes = anyio.run(run)
    by_call = dict(zip(range(len(calls)), outcomes))
    for i in (0, 1, 2, 3, 6, 7, 8, 19):  # refused roots, bad limit types, unknown names: errors
        assert by_call[i][1], (calls[i], by_call[i])
    for name, _, size in outcomes:
        assert size < 200_000, (name, size)  # a huge input is never echoed back whole


@pytest.mark.timeout(300)
def test_deeply_nested_definitions_outline_in_every_surface(tmp_path):
    """Regression (review finding 10): 3,000 nested JavaScript functions made `codelex outline` print a
    RecursionError traceback (exit 1) and MCP file_outline fail; qualified names grew to 17 KB each."""
    import json

    pytest.importorskip("tree_sitter_javascript")
    from codelex import Project
    from codelex.mcp_server import file_outline_text
    from codelex.structure import analyze
    from codelex.structure.extract import MAX_NESTING

    root = tmp_path / "home" / "deep"
    root.mkdir(parents=True)
    n = 3000
    source = "".join(f"function f{i}() {{\n" for i in range(n)) + "}\n" * n
    (root / "deep.js").write_text(source)
    structure = analyze("deep.js", source.encode())
    assert len(structure.definitions) == n
    assert max(len(d.qualified_name) for d in structure.definitions) < 8 * (MAX_NESTING + 2)
    env = {"HOME": str(tmp_path / "home")}
    r = _cli("outline", "deep.js", cwd=root, env=env)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-2000:]
    lines = r.stdout.decode().splitlines()
    assert len(lines) == n and lines[0].startswith("function f0") and lines[1].startswith("  function f1")
    r = _cli("outline", "deep.js", "--json", cwd=root, env=env)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-2000:]
    assert json.loads(r.stdout)["definitions"][0]["name"] == "f0"
    with Project(root, build_structure=False) as project:
        text = file_outline_text(project, "deep.js")
    assert text.startswith("Outline of deep.js (javascript, 3000 definition(s)):")
