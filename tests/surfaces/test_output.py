"""codelex.output: one renderer per output format of a search answer, for the CLI and MCP alike."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codelex.lexical.hits import Hit
from codelex.output import FORMATS, Style, Where, hit_entry, mcp_search_text, search_lines
from codelex.project import Coverage, SearchResult


def run(*args):
    script = shutil.which("codelex", path=os.path.dirname(sys.executable))
    command = [script] if script else [sys.executable, "-m", "codelex"]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, CODELEX_NO_SERVER="1"))


@pytest.fixture
def answer(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/auth.py").write_text("import os\n\nclass Login:\n    def check_user(self):\n"
                                          "        return authenticate_user()\n")
    (tmp_path / "README.md").write_text("authenticate users here\n")
    hits = [Hit("src/auth.py", 3.25, 2, 5, 5, None, ("body", "defs")).with_symbol("Login.check_user", 5),
            Hit("README.md", 0.5, 1, 1)]
    return str(tmp_path), SearchResult(True, "authenticate user", hits, Coverage(2, False), 1.0)


def test_every_format_renders(answer):
    root, result = answer
    where = Where(root)
    tokens = ("authenticate", "user")
    text = list(search_lines(result, "text", where, query=result.query, tokens=tokens))
    assert text[0] == ("  1. src/auth.py:5 Login.check_user  score 3.25, 2 hit(s), body+defs  "
                       "return authenticate_user()")
    assert text[1] == "  2. README.md:1  score 0.50, 1 hit(s)  authenticate users here"  # no symbol known
    doc = json.loads(next(search_lines(result, "json", where, query=result.query)))
    assert doc["query"] == "authenticate user" and doc["coverage"] == {"files": 2, "truncated": False}
    assert doc["results"][0] == {"file": "src/auth.py", "score": 3.25, "hits": 2, "startLine": 5, "endLine": 5,
                                 "symbol": "Login.check_user", "fields": ["body", "defs"], "path": "src/auth.py",
                                 "text": "return authenticate_user()"}
    lines = [json.loads(x) for x in search_lines(result, "jsonl", where, query=result.query)]
    assert lines == doc["results"]
    assert list(search_lines(result, "files", where, query=result.query)) == ["src/auth.py", "README.md"]
    assert list(search_lines(result, "vimgrep", where, query=result.query, tokens=tokens)) == [
        "src/auth.py:5:16:        return authenticate_user()", "README.md:1:1:authenticate users here"]
    assert set(FORMATS) == {"text", "json", "jsonl", "files", "vimgrep"}
    with pytest.raises(ValueError):
        list(search_lines(result, "xml", where, query=result.query))


def test_paths_as_shown_and_escapes(answer):
    root, result = answer
    shown = Where(root, lambda file: "../" + file)
    assert next(search_lines(result, "files", shown, query="q")) == "../src/auth.py"
    assert hit_entry(result.results[0], shown)["path"] == "../src/auth.py"
    odd = Hit("src/auth.py", 1.0, 1, 5, 5, "bad\x1bname")
    assert hit_entry(odd, Where(root))["symbol"] == "bad\\x1bname"
    coloured = next(search_lines(result, "text", Where(root), query="q", tokens=("user",), style=Style(True)))
    assert "\x1b[36mLogin.check_user\x1b[0m" in coloured and "\x1b[1;31muser\x1b[0m" in coloured


def test_mcp_text_names_the_symbol_and_suggests_the_next_tool(answer):
    root, result = answer
    text = mcp_search_text(result, root, "authenticate user", importers=lambda file: 3)
    first = text.splitlines()[1]
    assert first == ("  1. src/auth.py (score 3.25, 2 hit(s), line 5) in Login.check_user (lines 5-5), "
                     "matched body+defs")
    block = json.loads(text.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert block["results"][0]["suggestedNext"] == {"tool": "read_symbol", "path": "src/auth.py",
                                                    "symbol": "Login.check_user"}
    assert block["results"][0]["importers"] == 3 and block["results"][1]["suggestedNext"]["tool"] == "read_file"
    assert "Index covers 2 files." in text


def test_the_plain_listing_shows_the_enclosing_symbol(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("import hashlib\n\nclass Gate:\n    def authenticate_user(self, name):\n"
                                      "        return check_password(name)\n")
    r = run("search", "check password", "--root", root, "--color", "never", "-q")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("  1. src/auth.py:5 Gate.authenticate_user  score "), first
    doc = json.loads(run("search", "check password", "--root", root, "--json").stdout)
    assert doc["results"][0]["symbol"] == "Gate.authenticate_user"  # the same symbol JSON shows
