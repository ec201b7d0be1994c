"""What leaves the process is safe to print, and editor columns are right (issue 27, finding 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codelex.output import match_column

HOSTILE_CHARS = ("\u009b", "\u009d", "\u202e", "\x1b")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", "from codelex.cli import main; raise SystemExit(main())", *args],
                          capture_output=True, timeout=120, cwd=cwd, env=dict(os.environ, CODELEX_NO_SERVER="1"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "evil.py").write_text("def overdrive_handler():  # overdrive \u009b2J\u009d0;title\x07 "
                                  "\u202edesrever\u202c \x1b[31m\n    return 1\n", encoding="utf-8")
    (root / "docs/guide.md").write_text("# Overdrive\n\nThe overdrive \u009b2J mode \u202eesrever\n",
                                        encoding="utf-8")
    (root / "plain.py").write_text("def other():\n        return overdrive_value  # indented\n")
    return root


@pytest.mark.parametrize("args", [("search", "overdrive", "--json"), ("search", "overdrive", "--jsonl"),
                                  ("docs", "overdrive", "--json"), ("code", "overdrive", "--json", "--lexical"),
                                  ("search", "overdrive"), ("search", "overdrive", "--vimgrep"),
                                  ("outline", "evil.py", "--json")])
def test_machine_output_escapes_c1_controls_and_bidi_overrides(repo, args):
    r = _cli(*args, "--root", str(repo), cwd=repo)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")
    for ch in HOSTILE_CHARS:
        assert ch not in out, (args, ch)
    if "--json" in args:
        doc = json.loads(out)
        text = json.dumps(doc, ensure_ascii=False)
        assert "\\\\xc2\\\\x9b" in text or "\\\\xe2\\\\x80\\\\xae" in text  # escaped, as plain output shows them


def test_vimgrep_columns_count_the_indentation(repo):
    r = _cli("search", "overdrive_value", "--vimgrep", "--root", str(repo))
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.decode().splitlines() if x.startswith("plain.py:")][0]
    path, number, column, text = line.split(":", 3)
    assert number == "2" and text == "        return overdrive_value  # indented"
    assert int(column) == text.index("overdrive_value") + 1 == 16


def test_match_column_is_a_byte_column():
    assert match_column("    é = parse(x)", ["parse"]) == len("    é = ".encode()) + 1
    assert match_column("nothing here", ["parse"]) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads unreadable directories anyway")
def test_an_unreadable_root_is_named_as_such(tmp_path):
    root = tmp_path / "locked"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.codelex]\n")
    root.chmod(0o311)
    try:
        r = _cli("search", "x", "--root", str(root))
    finally:
        root.chmod(0o755)
    err = r.stderr.decode()
    assert r.returncode == 2 and "cannot read the project directory" in err and "pyproject" not in err


def test_a_lone_carriage_return_is_escaped_on_the_wire_as_in_plain_output(tmp_path):
    """Regression (review finding 12): MCP read_symbol and code_search kept a lone CR, which returns a terminal to
    the line's start and hides what precedes it; only CR LF stays a line break."""
    from codelex import Project
    from codelex.render import display_text, wire_text

    assert wire_text("a\r\nb") == "a\r\nb"
    assert wire_text("safe()\revil()") == "safe()\\revil()" == display_text("safe()\revil()")
    assert wire_text("x\r") == "x\\r" and wire_text("\u009b\r\n") == "\\xc2\\x9b\r\n"
    pytest.importorskip("mcp")
    pytest.importorskip("tree_sitter_python")
    from codelex.mcp_server import _result, code_search_text, read_symbol_text

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_bytes(b"def hidden_payload():\n    looks_fine = 1  \r    rm_rf_everything()\r\n    return 0\n")
    with Project(root) as project:
        project.open()
        project.wait_structure()
        for text in (read_symbol_text(project, "a.py", "hidden_payload"),
                     code_search_text(project, "hidden payload")):
            sent = _result(text).content[0].text
            assert "looks_fine = 1  \\r    rm_rf_everything()" in sent, sent
            assert "\r" not in sent.replace("\r\n", ""), sent
