"""Issue 27: hybrid code search answers at once after open(), never loads a model inside a call that does not
wait, and never leaves a thread inside the embedder when the process ends."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from codelex import Project

pytest.importorskip("model2vec")
pytest.importorskip("tree_sitter_python")

FILES = {
    "auth.py": "def check(user, password):\n    return user.password == password\n",
    "conf.py": "def parse(file):\n    return read(file)\n",
}


@pytest.fixture
def two_files(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for rel, text in FILES.items():
        (root / rel).write_text(text)
    return root


@pytest.mark.timeout(120)
def test_code_search_answers_at_once_after_open(two_files):
    """open(wait=True) returns a project whose code_search answers (lexically) on the first call."""
    with Project(two_files, use_git=False) as p:
        p.open(wait=True)
        first = p.code_search("password", embedder=False)
        assert first.available, first.hint
        assert first.mode == "lexical" and first.hits and first.hits[0].path == "auth.py"
        assert first.hits[0].start_line == 1 and "being prepared" in first.hint
        # Filters apply to the early answer too.
        assert p.code_search("password", embedder=False, paths=["conf.py"]).hits == []
        p.prepare_code_search()
        later = p.code_search("password", embedder=False)
        assert later.available and later.hits[0].path == "auth.py" and later.hint is None
        assert later.hits[0].excerpt == first.hits[0].excerpt


@pytest.mark.timeout(120)
def test_code_search_answers_while_the_first_corpus_is_built(two_files, monkeypatch):
    """The first corpus takes seconds on a large tree: queries meanwhile never wait for it."""
    import threading

    import codelex.project.code as code_module

    chunk_rows = code_module.chunk_rows

    def slow_in_the_background(*args, **kwargs):
        if threading.current_thread().name == "codelex-chunks":
            time.sleep(1.5)
        return chunk_rows(*args, **kwargs)

    monkeypatch.setattr(code_module, "chunk_rows", slow_in_the_background)
    with Project(two_files, use_git=False) as p:
        p.open(wait=True)
        p.wait_structure()
        assert "being indexed" in p.code_search("password", embedder=False).hint  # starts the first corpus
        time.sleep(0.3)
        started = time.monotonic()
        r = p.code_search("password", embedder=False)
        assert time.monotonic() - started < 1.0
        assert r.available and r.hits[0].path == "auth.py" and "being indexed" in r.hint


@pytest.mark.timeout(120)
def test_code_search_adopts_a_saved_index(two_files):
    """A fresh process's first code_search (an MCP server's) uses the saved index instead of saying 'retry'."""
    with Project(two_files, use_git=False) as p:
        p.open(wait=True)
        p.wait_structure()
    with Project(two_files, use_git=False) as p:
        r = p.code_search("password", embedder=False)
        assert r.available, r.hint
        assert r.hits[0].path == "auth.py"


def _slow_loading(monkeypatch, seconds: float) -> None:
    from model2vec import StaticModel

    original = StaticModel.from_pretrained.__func__

    def slow(cls, *args, **kwargs):
        time.sleep(seconds)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(StaticModel, "from_pretrained", classmethod(slow))


@pytest.mark.timeout(120)
def test_a_model_loads_in_the_background(two_files, make_static_model, monkeypatch):
    """code_search and find_related answer before the model has loaded; it loads, then embeds, meanwhile."""
    from codelex.mcp_server import code_search_text, find_related_text

    with Project(two_files, use_git=False) as p:
        p.open()
        p.prepare_code_search()
        # (after the index is built: the toy model has no vector for the words of these files)
        make_static_model().save_pretrained(str(two_files / "models" / "tiny"))
        # (the user's choice: a repository's configuration may name only an installed model)
        monkeypatch.setenv("CODELEX_EMBEDDER", f"model2vec:{two_files / 'models' / 'tiny'}")
        _slow_loading(monkeypatch, 4.0)
        started = time.monotonic()
        r = p.code_search("password check")
        assert time.monotonic() - started < 2.0
        assert r.available and r.mode == "lexical" and "loading" in r.hint, r.hint
        started = time.monotonic()
        text = find_related_text(p, "auth.py", 1)
        assert time.monotonic() - started < 2.0 and "Mode: lexical" in text and "shared identifiers" in text, text
        text = code_search_text(p, "password check")
        assert time.monotonic() - started < 2.0 and "Mode: lexical" in text, text
        deadline = time.monotonic() + 60
        while p.code_search("password check").mode != "hybrid":  # loaded, then embedded, in the background
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert p.find_related("auth.py", 1).mode == "hybrid"
    with Project(two_files, use_git=False) as p:  # a model named by the caller is checked at once
        p.open()
        from codelex import EmbedderError

        with pytest.raises(EmbedderError, match="no model2vec model"):
            p.code_search("parse", embedder="model2vec:/nonexistent")


# The embedder of these runs holds a native resource while it works: the process must not finalize while
# a thread is inside it (a real model aborts it: "terminate called without an active exception").  The
# check is registered before codelex is imported, so it runs after any exit handler of codelex's.
_PRELUDE = textwrap.dedent("""
    import atexit, os, sys, threading, time
    inside = threading.Event()

    def finalizing():
        if inside.is_set():
            sys.stderr.write("terminate called without an active exception\\n")
            sys.stderr.flush()
            os._exit(134)

    atexit.register(finalizing)
    from model2vec import StaticModel
    encode = StaticModel.encode

    def slow_encode(self, *args, **kwargs):
        inside.set()
        try:
            time.sleep(6.0)  # longer than any bounded join of a closing project
            return encode(self, *args, **kwargs)
        finally:
            inside.clear()

    StaticModel.encode = slow_encode
""")


def _run(script: str, cwd, timeout: float = 90):
    env = dict(os.environ, CODELEX_NO_SERVER="1")
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(script)], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=timeout)
    return r, time.monotonic() - started


@pytest.mark.timeout(300)
@pytest.mark.parametrize("argv", [["code", "password check"], ["related", "auth.py:1"],
                                  ["related", "nosuch.py:3"]])
def test_one_shot_commands_leave_no_thread_in_the_model(two_files, make_static_model, argv):
    make_static_model().save_pretrained(str(two_files / "tiny"))
    script = f"""
        from codelex.cli import main
        status = main({argv!r} + ["--root", {str(two_files)!r}, "--embedder", "model2vec:" + {str(two_files / "tiny")!r}])
        sys.exit(status)
    """
    r, took = _run(script, two_files)
    assert r.returncode in (0, 1, 2), (r.returncode, r.stderr)
    assert "terminate called" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert took < 60
    if argv[0] == "code":
        assert r.returncode == 0 and "auth.py" in r.stdout and "--wait" in r.stderr, r.stderr


@pytest.mark.timeout(300)
def test_a_script_that_never_closes_its_project_exits_cleanly(two_files, make_static_model):
    """Library use: the background embedding is stopped and joined before the interpreter finalizes."""
    make_static_model().save_pretrained(str(two_files / "tiny"))
    script = f"""
        from codelex import Project
        p = Project({str(two_files)!r}, use_git=False)
        p.open()
        p.prepare_code_search()
        r = p.code_search("password", embedder="model2vec:" + {str(two_files / "tiny")!r})
        deadline = time.monotonic() + 30
        while not inside.is_set():  # the background embedding is inside the model
            assert time.monotonic() < deadline
            time.sleep(0.05)
        print(r.mode)
    """
    r, took = _run(script, two_files)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert r.stdout.strip() == "lexical" and took < 60
