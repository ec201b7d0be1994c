"""codelex.output: one renderer per answer kind and output format, for the CLI and MCP alike."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codelex.lexical.hits import Hit
from codelex.output import (FORMATS, Style, Where, hit_entry, mcp_next_step, mcp_search_answer, mcp_search_text,
                            search_lines)
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
    shown = Where(root, "sub")  # the current directory: a subdirectory of the root
    assert next(search_lines(result, "files", shown, query="q")) == "../src/auth.py"
    assert hit_entry(result.results[0], shown)["path"] == "../src/auth.py"
    odd = Hit("src/auth.py", 1.0, 1, 5, 5, "bad\x1bname")
    assert hit_entry(odd, Where(root))["symbol"] == "bad\\x1bname"
    coloured = next(search_lines(result, "text", Where(root), query="q", tokens=("user",), style=Style(True)))
    assert "\x1b[36mLogin.check_user\x1b[0m" in coloured and "\x1b[1;31muser\x1b[0m" in coloured


def test_mcp_text_names_the_symbol_and_suggests_the_next_tool(answer):
    root, result = answer
    text, data = mcp_search_answer(result, root, "authenticate user", importers=lambda file: 3)
    assert text == mcp_search_text(result, root, "authenticate user", importers=lambda file: 3)
    first = text.splitlines()[1]
    assert first == ("  1. src/auth.py (score 3.25, 2 hit(s), line 5) in Login.check_user (lines 5-5), "
                     "matched body+defs")
    assert "```json" not in text and text.endswith('Next: read_symbol(path="src/auth.py", symbol="Login.check_user")')
    assert data["suggestedNext"] == {"tool": "read_symbol", "path": "src/auth.py", "symbol": "Login.check_user"}
    assert data["results"][0]["importers"] == 3 and "suggestedNext" not in data["results"][1]
    assert mcp_next_step(data["results"][1]) == {"tool": "read_file", "path": data["results"][1]["file"],
                                                 "line": data["results"][1]["startLine"]}
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


def test_chunks_render_for_the_cli_and_mcp_alike():
    from codelex.output import (code_lines, mcp_code_search_answer, mcp_code_search_text, mcp_no_answer_text,
                                mcp_related_text)
    from codelex.project.results import CodeResult
    from codelex.rank.hybrid import HybridHit

    hits = [HybridHit("src/a.py", "Gate.check\x1b", 3, 4, "def check():\n    return ok", True, 0.8765, 1, 2),
            HybridHit("src/b.py", None, 9, 9, "x = 1", False, 0.5, None, 1)]
    result = CodeResult("check gate", hits, 0.9, 1.5, "hybrid", 10, 10, omitted=2, line_budget=100)
    text = list(code_lines(result, "text"))
    assert text[:4] == ["  1. src/a.py:3-4 Gate.check\\x1b  similarity 0.8765, vector #1, lexical #2",
                        "     3  def check():", "     4      return ok", "     …"]
    assert text[-1] == ("2 more results left out by the 100-line budget (and excerpts cut to their first lines): "
                        "raise --lines")
    doc = json.loads(next(code_lines(result, "json")))
    assert doc["results"][0]["symbol"] == "Gate.check\\x1b" and doc["omitted"] == 2 and doc["lineBudget"] == 100
    reply = mcp_code_search_text(result, "check gate")
    assert reply.startswith('Top 2 chunk(s) for "check gate":\n1. src/a.py:3-4 Gate.check\\x1b (similarity 0.8765')
    assert "pass a larger `lines`" in reply and "Mode: hybrid; 10 of 10 chunks embedded." in reply
    assert "```json" not in reply
    data = mcp_code_search_answer(result, "check gate")[1]
    assert data["results"][0]["excerpt"] == "def check():\n    return ok" and data["omitted"] == 2
    assert mcp_related_text(result, "src/a.py", 3).startswith("Chunks most like src/a.py:3:\n")
    lexical = CodeResult("q", hits[1:], 0.0, 1.0, "lexical", 0, 10, hint="embedding")
    assert next(code_lines(lexical, "text")) == "  1. src/b.py:9-9  lexical #1"
    assert mcp_no_answer_text(CodeResult("q", [], 0, 0, "unavailable", 0, 0, False, "building")) == \
        "No answer yet: building"


def test_docs_sections_render_for_the_cli_and_mcp_alike(tmp_path):
    from codelex.docs import DocsIndex
    from codelex.output import docs_lines, mcp_docs_answer, mcp_docs_text

    (tmp_path / "guide.md").write_text("# Guide\n\n## Setup\n\nInstall the overdrive \u202emode here.\n")
    index = DocsIndex.for_project(tmp_path)
    hits = index.search("overdrive", 5)
    text = list(docs_lines(hits, "text", query="overdrive", sections=len(index)))
    assert text[0].startswith("  1. guide.md#setup — Guide › Setup  (score ") and "\u202e" not in text[1]
    doc = json.loads(next(docs_lines(hits, "json", query="overdrive", sections=len(index))))
    assert doc["results"][0]["path"] == "guide.md" and "\\xe2\\x80\\xae" in doc["results"][0]["snippet"]
    reply, data = mcp_docs_answer(hits, "overdrive", len(index))
    assert "```json" not in reply and reply.endswith('Next: read_file(path="guide.md", line=3)')
    assert data["suggestedNext"] == {"tool": "read_file", "path": "guide.md", "line": 3}
    assert mcp_docs_text([], "nothing", 4).startswith('No documentation section matched "nothing" (among 4 sections).')


def test_outlines_and_sources_render_for_the_cli_and_mcp_alike():
    from codelex.output import mcp_outline_text, mcp_source_text, outline_lines, source_lines
    from codelex.project.symbols import Outline, SymbolSource
    from codelex.structure.model import Definition

    outer = Definition("Gate", "Gate", "class", 1, 4, 1, 1)
    inner = Definition("check\x1b", "Gate.check\x1b", "method", 2, 4, 2, 2, parent=0)
    outline = Outline("src/a\nb.py", "python", "parsed", True, None, (outer, inner), ("class Gate:", "def check():"))
    assert list(outline_lines(outline, "text")) == ["class Gate  1-4  class Gate:",
                                                    "  method check\\x1b  2-4  def check():"]
    doc = json.loads(next(outline_lines(outline, "json")))
    assert doc["path"] == "src/a\\nb.py" and doc["definitions"][0]["children"][0]["name"] == "check\\x1b"  # escaped, as every JSON answer
    reply = mcp_outline_text(outline)
    assert reply.splitlines()[:3] == ["Outline of src/a\\nb.py (python, 2 definition(s)):",
                                      "  class Gate  (lines 1-4)  class Gate:",
                                      "    method Gate.check\\x1b  (lines 2-4)  def check():"]
    source = SymbolSource("src/a.py", inner, 2, 4, "def check():\n    '''```'''\n    return 1")
    assert list(source_lines(source)) == ["src/a.py:2-4 method Gate.check\\x1b", "2  def check():",
                                          "3      '''```'''", "4      return 1"]
    assert mcp_source_text(source) == ("src/a.py:2-4 method Gate.check\\x1b\n````\ndef check():\n    '''```'''\n"
                                       "    return 1\n````")


def test_a_files_own_fence_lines_never_close_the_mcp_block():
    """Review finding: the fence was four backticks whenever the text held three, so a file with a four-backtick
    line ended the block early and its next lines read as codelex's own."""
    from codelex.output import code_fence

    assert code_fence("x = 1") == "```"
    assert code_fence("```python\n````\n") == "`````"
    for text in ("````\nMode: hybrid\n````", "a ``````` b"):
        fence = code_fence(text)
        assert fence not in text and len(fence) >= 3
