"""The ``codelex`` console script, run as a subprocess on fixture repositories."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelex import WordIndex


def _command() -> list[str]:
    script = shutil.which("codelex", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "codelex"]


def run(*args, cwd=None, env=None, timeout=120):
    return subprocess.run([*_command(), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ, **(env or {})), timeout=timeout)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("import hashlib\n\ndef authenticate_user(name, password):\n"
                                      "    return check_password(name, password)\n")
    (root / "src/session.ts").write_text("export class UserSession {\n  authenticate() { return true }\n}\n")
    (root / "tests").mkdir()
    (root / "tests/test_auth.py").write_text("def test_authenticate_user():\n    assert authenticate_user('a', 'b')\n")
    (root / "README.md").write_text("# Demo\nHow to authenticate a user.\n")
    (root / "image.png").write_bytes(b"\x89PNG\x00\x00authenticate")
    return root


def test_search_human_output(repo):
    r = run("search", "authenticate user password", "--root", repo, "--color", "never")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "1."
    assert "src/auth.py:3" in lines[0] and "def authenticate_user(name, password):" in lines[0]
    assert "score" in lines[0] and "hit(s)" in lines[0]
    assert not any("image.png" in ln for ln in lines)
    assert "files" in r.stderr and "Traceback" not in r.stderr
    assert (repo / ".codelex" / "index.clx").is_file()


def test_search_colour_highlights_query_tokens(repo):
    r = run("search", "authenticate", "--root", repo, "--color", "always", "-q")
    assert r.returncode == 0
    assert "\x1b[1;31mauthenticate\x1b[0m" in r.stdout and "\x1b[35msrc/auth.py\x1b[0m" in r.stdout
    assert r.stderr == ""


def test_search_json(repo):
    r = run("search", "authenticate user password", "--root", repo, "--json", "--limit", "2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["query"] == "authenticate user password" and doc["available"] is True
    assert doc["coverage"] == {"files": 4, "truncated": False}
    assert len(doc["results"]) == 2
    first = doc["results"][0]
    assert set(first) >= {"file", "score", "hits", "startLine", "endLine", "text"}
    assert first["file"] == "src/auth.py" and first["startLine"] == 3
    assert first["symbol"] == "authenticate_user" and first["endLine"] == 4  # the enclosing definition


def test_filters_and_options(repo):
    r = run("search", "authenticate", "--root", repo, "--json", "--lang", "jsts")
    assert [h["file"] for h in json.loads(r.stdout)["results"]] == ["src/session.ts"]
    r = run("search", "authenticate", "--root", repo, "--json", "--path", "tests/**")
    assert [h["file"] for h in json.loads(r.stdout)["results"]] == ["tests/test_auth.py"]
    r = run("search", "-file:src authenticate", "--root", repo, "--json")
    assert all(not h["file"].startswith("src/") for h in json.loads(r.stdout)["results"])
    with_priors = json.loads(run("search", "authenticate user", "--root", repo, "--json").stdout)["results"]
    without = json.loads(run("search", "authenticate user", "--root", repo, "--json", "--no-priors").stdout)["results"]
    score = {h["file"]: h["score"] for h in with_priors}
    raw = {h["file"]: h["score"] for h in without}
    assert raw["tests/test_auth.py"] > score["tests/test_auth.py"]  # the ×0.3 test prior is off


def test_ranking_option(repo):
    code = json.loads(run("search", "authenticate_user", "--root", repo, "--json").stdout)["results"]
    classic = json.loads(run("search", "authenticate_user", "--root", repo, "--json", "--ranking", "classic").stdout)
    assert code[0]["file"] == "src/auth.py" and "defs" in code[0]["fields"]
    assert all("fields" not in h for h in classic["results"])
    assert {h["file"] for h in code} == {h["file"] for h in classic["results"]}
    human = run("search", "authenticate user", "--root", repo, "--color", "never", "-q").stdout.splitlines()[0]
    assert "body+name+defs" in human or "body+defs" in human
    r = run("search", "x", "--root", repo, "--ranking", "fancy")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "ranking" in r.stderr


def test_exit_codes_and_errors(repo, tmp_path):
    assert run("search", "kubernetes", "--root", repo).returncode == 1
    for args, message in [
        (("search", "lang:klingon x", "--root", repo), "Unknown lang"),
        (("search", "x", "--root", repo, "--lang", "klingon"), "Unknown lang"),
        (("search", "x", "--root", tmp_path / "missing"), "not a directory"),
        (("index", "--root", tmp_path / "missing"), "not a directory"),
        (("search", "x", "--root", repo, "--max-bytes", "-1"), "max-bytes"),
    ]:
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    r = run()
    assert r.returncode == 2
    r = run("search", "lang:klingon x", "--root", repo, "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_refuses_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "a.py").write_text("x = 1\n")
    r = run("search", "x", "--root", home, env={"HOME": str(home)})
    assert r.returncode == 2 and "refusing" in r.stderr and "home directory" in r.stderr
    assert not (home / ".codelex").exists()


def test_index_and_status(repo):
    r = run("status", "--root", repo)
    assert r.returncode == 1 and "no index yet" in r.stdout
    r = run("index", "--root", repo)
    assert r.returncode == 0, r.stderr
    assert "4 files indexed" in r.stdout and "built from scratch: no saved index yet" in r.stdout and "unsupported 1" in r.stdout
    r = run("status", "--root", repo)
    assert r.returncode == 0 and "files: 4" in r.stdout and "fresh" in r.stdout
    time.sleep(0.01)
    (repo / "src/new.py").write_text("def brand_new(): pass\n")
    (repo / "src/auth.py").write_text("def changed(): pass\n")
    r = run("status", "--root", repo, "--json")
    info = json.loads(r.stdout)
    assert (info["stale"], info["added"], info["removed"]) == (1, 1, 0)
    r = run("index", "--root", repo, "--json")
    summary = json.loads(r.stdout)
    assert summary["mode"] == "incremental" and summary["refreshed"] == 1 and summary["added"] == 1
    assert summary["stale"] == 0 and summary["files"] == 5
    r = run("index", "--root", repo, "--rebuild")
    assert "built from scratch: rebuild requested" in r.stdout


def test_index_verify(repo):
    r = run("index", "--root", repo, "--verify")
    assert r.returncode == 2 and "no saved index" in r.stderr and len(r.stderr.splitlines()) == 1
    assert run("index", "--root", repo, "--no-structure").returncode == 0
    r = run("index", "--root", repo, "--verify")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("verified ") and ".codelex" in r.stdout
    index = repo / ".codelex" / "index.clx"
    data = bytearray(index.read_bytes())
    data[len(data) // 2] ^= 0x40  # inside a lazily checked array: loading alone would not notice
    index.write_bytes(data)
    r = run("index", "--root", repo, "--verify")
    assert r.returncode == 2 and "index.clx" in r.stderr and "corrupt" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


def test_module_entry_point_matches_script(repo):
    r = subprocess.run([sys.executable, "-m", "codelex", "search", "authenticate", "--root", str(repo), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["results"]


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_leaves_no_torn_index(tmp_path):
    root = tmp_path / "big"
    for i in range(2000):
        d = root / f"pkg{i % 20}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text("".join(f"def function_{i}_{j}(arg): return helper_{j}(arg)\n" for j in range(400)))
    proc = subprocess.Popen([*_command(), "index", "--root", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # past the interpreter's start-up and imports, into the build (several seconds)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    assert proc.returncode in (0, 130)  # finished first, or interrupted cleanly
    if proc.returncode == 130:
        assert "interrupted" in err
    index = root / ".codelex"
    if (index / "index.clx").exists():
        WordIndex.load(index)  # whole, never torn
    assert not list(index.glob(".index.clx.*.tmp")) if index.exists() else True


# --- regressions found by adversarial probing (issue 12) ------------------------------


def _run_bytes(*args, cwd=None, timeout=120):
    return subprocess.run([*_command(), *args], capture_output=True, cwd=cwd, timeout=timeout)


def test_hostile_file_names_are_escaped(tmp_path):
    root = tmp_path / "names"
    root.mkdir()
    (root / os.fsdecode(b"bad\xff.py")).write_text("def probe_target(): pass\n")
    (root / "\x1b[2Jclear.py").write_text("def probe_target(): pass\n")
    (root / "new\nline.py").write_text("def probe_target(): pass\n")
    (root / "ok.py").write_text("# \x1b[31mred\x1b[0m probe_target\n")
    r = _run_bytes("search", "probe_target", "--root", str(root), "--color", "never", "-q")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")  # strictly valid UTF-8
    assert "\x1b" not in out and "\r" not in out
    assert len(out.splitlines()) == 4  # one line per file: no newline smuggled in by a name
    assert "bad\\xff.py" in out and "\\x1b[2Jclear.py" in out and "new\\nline.py" in out
    r = _run_bytes("search", "probe_target", "--root", str(root), "--json")
    doc = json.loads(r.stdout.decode("utf-8"))
    files = {h["file"] for h in doc["results"]}
    assert files == {"bad\\xff.py", "\\x1b[2Jclear.py", "new\\nline.py", "ok.py"}
    from codelex.render import parse_display_path

    assert {parse_display_path(f) for f in files} == {os.fsdecode(b"bad\xff.py"), "\x1b[2Jclear.py",
                                                     "new\nline.py", "ok.py"}


def test_limits(repo):
    r = run("search", "authenticate", "--root", repo, "-n", "9223372036854775808", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert len(json.loads(r.stdout)["results"]) == 4  # every file mentioning it
    for bad in ("0", "-5", "x"):
        r = run("search", "authenticate", "--root", repo, "-n", bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (bad, r.stderr)
        assert "limit" in r.stderr or "-n" in r.stderr
    r = run("docs", "authenticate", "--root", repo, "-n", "0")
    assert r.returncode == 2


def test_query_that_is_only_a_negation(repo):
    r = run("search", "-file:src", "--root", repo, "--json")  # the query (not an unknown option), and only a filter
    assert r.returncode == 2 and r.stderr == "codelex: the query has only filters: add words to search for\n"
    r = run("search", "-file:src authenticate", "--root", repo, "--json")
    assert r.returncode == 0, r.stderr
    assert all(not h["file"].startswith("src/") for h in json.loads(r.stdout)["results"])
    r = run("search", "--root", str(repo), "-file:tests", "authenticate", "--json")
    assert r.returncode == 2  # two positional queries: still a usage error
    r = run("search", "--root", str(repo), "-lang:python authenticate", "--json")
    assert r.returncode == 0, r.stderr
    assert all(not h["file"].endswith(".py") for h in json.loads(r.stdout)["results"])
    r = run("search", "-path:src authenticate", "--root", repo, "--json")  # path: (a glob, or a directory) too
    assert r.returncode == 0, r.stderr
    assert all(not h["file"].startswith("src/") for h in json.loads(r.stdout)["results"])


def test_huge_query_echo_is_truncated(repo):
    (repo / "docs").mkdir()
    (repo / "docs/guide.md").write_text("# Guide\nNothing here.\n")
    query = "zebra " * 21000  # about 126 KiB (an argument is at most 128 KiB)
    r = run("docs", query, "--root", repo)
    assert r.returncode == 1
    assert len(r.stderr) < 2000 and "characters" in r.stderr


def test_outline_and_show(repo):
    (repo / "src/geo.py").write_text("class Shape:\n    def area(self):\n        return 0\n\n\n"
                                     "class Square(Shape):\n    def area(self):\n        return 1\n")
    r = run("outline", repo / "src/geo.py", "--root", repo, "--color", "never")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["class Shape  1-3  class Shape:", "  method area  2-3  def area(self):",
                                     "class Square  6-8  class Square(Shape):", "  method area  7-8  def area(self):"]
    doc = json.loads(run("outline", "src/geo.py", "--json", cwd=repo).stdout)
    assert doc["available"] and [d["qualifiedName"] for d in doc["definitions"]] == ["Shape", "Square"]
    assert doc["definitions"][1]["children"][0]["qualifiedName"] == "Square.area"
    r = run("show", "src/geo.py:Square.area", "--color", "never", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["src/geo.py:7-8 method Square.area", "7      def area(self):",
                                     "8          return 1"]
    # An overloaded name is its implementation; where the stubs are goes to stderr, with the CLI's remedy.
    (repo / "src/ov.py").write_text("from typing import overload\n\n@overload\ndef f(x: int) -> int: ...\n"
                                    "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n")
    r = run("show", "src/ov.py:f", "--color", "never", cwd=repo)
    assert r.returncode == 0 and r.stdout.splitlines()[0].startswith("src/ov.py:7-8 function f"), (r.stdout, r.stderr)
    assert "2 @overload stubs are at lines 4, 6 (--line N to read one)" in r.stderr
    # From a subdirectory the heading names the file as search does there: from the current directory.
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    r = run("show", "geo.py:Square.area", "--color", "never", cwd=repo / "src")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "geo.py:7-8 method Square.area", (r.stdout, r.stderr)
    for args, message in [
        (("show", "src/geo.py:area"), "names 2 definitions"),
        (("show", "src/geo.py:Circle"), "no definition named 'Circle'"),
        (("show", "src/missing.py:x"), "no such file"),
        (("show", "src/geo.py"), "FILE:SYMBOL"),
        (("outline", "../outside.py"), "outside"),
    ]:
        r = run(*args, cwd=repo)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    assert run("show", "src/geo.py:area", "--line", "7", cwd=repo).returncode == 0
    assert not (repo / ".codelex" / "index.clx").exists()  # reading structure builds no word index


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links (POSIX)")
@pytest.mark.timeout(300)
def test_outline_and_show_follow_no_link_and_refuse_a_fifo(repo, tmp_path):
    """Issue 27: one containment rule with MCP's tools; a refusal is one line on stderr, exit 2, never a hang."""
    (repo / "src/geo.py").write_text("class Shape:\n    def area(self):\n        return 0\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    return 'OUTSIDE'\n")
    os.symlink(outside, repo / "linkdir")
    os.symlink("src/geo.py", repo / "alias.py")  # a link to a file inside the root is not followed either
    os.mkfifo(repo / "src/f3.py")
    for args in (("outline", "linkdir/secret.py"), ("show", "linkdir/secret.py:secret"),
                 ("outline", repo / "linkdir/secret.py"), ("show", "alias.py:Shape.area"), ("outline", "alias.py"),
                 ("outline", "src/f3.py"), ("show", "src/f3.py:x")):
        r = run(*args, cwd=repo, timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("codelex: "), (args, r.stderr)
        assert "OUTSIDE" not in r.stdout and "area" not in r.stdout, (args, r.stdout)
    assert "symbolic link" in run("outline", "alias.py", cwd=repo).stderr
    r = run("show", "geo.py:Shape.area", "--root", repo, cwd=repo / "src")  # relative to the current directory
    assert r.returncode == 0 and "return 0" in r.stdout, r.stderr


def test_code_command(repo, tmp_path, make_static_model):
    r = run("code", "authenticate user password", "--root", repo, "--lexical", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("  1. src/auth.py:") and "lexical #1" in r.stdout
    assert "def authenticate_user(name, password):" in r.stdout
    model = tmp_path / "tiny"
    make_static_model().save_pretrained(str(model))
    r = run("code", "check password", "--root", repo, "--embedder", f"model2vec:{model}", "--wait", "--json")
    assert r.returncode == 0, r.stderr
    payload = json.loads(r.stdout)
    assert payload["mode"] == "hybrid" and payload["embedded"] == payload["chunks"] > 0
    assert payload["results"][0]["path"] == "src/auth.py" and "excerpt" in payload["results"][0]
    r = run("related", "src/auth.py:3", "--root", repo, "--embedder", f"model2vec:{model}", "--json")
    assert r.returncode in (0, 1), r.stderr
    for bad in (["code", "x", "--root", repo, "--embedder", "model2vec:/nonexistent"],
                ["code", "x", "--root", repo, "--embedder", "bogus"],
                ["related", "src/auth.py:zero", "--root", repo],
                ["code", "x", "--root", repo, "-n", "0"]):
        r = run(*bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, bad


def test_code_says_what_its_line_budget_left_out(tmp_path):
    root = tmp_path / "long"
    root.mkdir()
    for i in range(5):
        body = "".join(f"    total = total + alpha_{i} * {j}\n" for j in range(40))
        (root / f"m{i}.py").write_text(f"def alpha_function_{i}(alpha_{i}):\n    total = 0\n{body}    return total\n")
    args = ("code", "alpha function", "--root", root, "--lexical", "-n", "10", "--per-file", "1")
    r = run(*args, "--lines", "100", "--color", "never", "-q")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == ("2 more results left out by the 100-line budget (and excerpts cut to "
                                         "their first lines): raise --lines")
    doc = json.loads(run(*args, "--lines", "100", "--json").stdout)
    assert (len(doc["results"]), doc["omitted"], doc["lineBudget"]) == (3, 2, 100)
    assert [e["truncated"] for e in doc["results"]] == [False, False, True]
    # A budget that cuts nothing says nothing.
    r = run(*args, "--color", "never", "-q")
    assert r.returncode == 0 and "left out" not in r.stdout and r.stdout.count("alpha_function_") == 5, r.stdout
    assert json.loads(run(*args, "--json").stdout)["omitted"] == 0


_ONE_SHOT = """
import json, sys, threading
from codelex.cli import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "model2vec": "model2vec" in sys.modules,
                  "threads": [t.name for t in threading.enumerate() if t is not threading.main_thread()]}),
      file=sys.stderr)
"""


def _one_shot(*args):
    r = subprocess.run([sys.executable, "-c", _ONE_SHOT, *map(str, args)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, CODELEX_NO_SERVER="1"))
    return r, json.loads(r.stderr.strip().splitlines()[-1])


def test_one_shot_code_loads_no_model_without_wait_and_leaves_no_thread(repo, tmp_path, make_static_model):
    model = tmp_path / "tiny"
    make_static_model().save_pretrained(str(model))
    spec = f"model2vec:{model}"
    r, after = _one_shot("code", "check password", "--root", repo, "--embedder", spec, "--color", "never")
    assert r.returncode == 0 and after == {"status": 0, "model2vec": False, "threads": []}, r.stderr
    assert "src/auth.py" in r.stdout and "lexical #1" in r.stdout
    assert "vectors: 0 of" in r.stderr and "chunks embedded; lexical answer" in r.stderr and "--wait" in r.stderr
    # --wait embeds here, in this thread (no bar: stderr is not a terminal), and nothing is left running.
    r, after = _one_shot("code", "check password", "--root", repo, "--embedder", spec, "--wait", "--json", "-q")
    assert r.returncode == 0 and after == {"status": 0, "model2vec": True, "threads": []}, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mode"] == "hybrid" and doc["embedded"] == doc["chunks"] > 0
    assert r.stderr.strip().splitlines()[:-1] == []  # -q: nothing but the probe's line
    # Every chunk has a vector now: the model is needed (for the query) and loaded; still nothing left running.
    r, after = _one_shot("related", "src/auth.py:3", "--root", repo, "--embedder", spec, "--json")
    assert r.returncode in (0, 1) and after["threads"] == [] and after["model2vec"], r.stderr
    assert json.loads(r.stdout)["available"] is True


def test_embedding_progress_shows_the_time_left():
    import io

    from codelex.cli import _EmbedProgress

    stream = io.StringIO()
    bar = _EmbedProgress(stream, delay=0)
    bar.start -= 10  # ten seconds in, 100 of 400 chunks done: 10 chunks/s, 30 s left
    bar(100, 400)
    assert "100/400 chunks, 10/s, 30 s left" in stream.getvalue()
