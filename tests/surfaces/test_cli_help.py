"""The command line's help, its flags' meanings, its empty queries and its progress off a terminal (issue 41)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from codelex import cli, server
from codelex.cli_common import EmbedProgress, Progress, progress_for
from codelex.cli_parser import build_parser
from codelex.defaults import VERSION


def _commands(parser: argparse.ArgumentParser, name: str = "codelex"):
    """(name, parser) of every command and subcommand, ``codelex`` itself first."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _commands(sub, f"{name} {sub_name}")


def test_every_command_has_a_description_examples_and_help_for_every_option():
    commands = dict(_commands(build_parser()))
    assert {"codelex search", "codelex status", "codelex index", "codelex cluster search",
            "codelex mcp install"} <= set(commands)
    for name, parser in commands.items():
        assert parser.description and parser.description.strip(), name
        lines = parser.epilog.splitlines()
        assert lines[0] == "examples:" and 2 <= len(lines) - 1 <= 4, name
        assert all(line.startswith("  codelex ") for line in lines[1:]), name
        text = parser.format_help()
        assert "\nexamples:\n" in text and all(line in text.splitlines() for line in lines[1:]), name
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            label = "/".join(action.option_strings) or action.dest
            assert isinstance(action.help, str) and action.help.strip(), f"{name}: {label} has no help"


def test_code_help_says_its_fusions_in_plain_words():
    text = dict(_commands(build_parser()))["codelex code"].format_help()
    assert "seed" not in text and "0.7" not in text
    assert "adaptive (default)" in " ".join(text.split())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name, password):\n    return check(name, password)\n")
    for lang, text in (("en", "How to authenticate a user with a password."),
                       ("de", "Wie man einen Benutzer authentifiziert (authenticate).")):
        (root / "docs" / lang / "docs").mkdir(parents=True)
        (root / "docs" / lang / "docs" / "guide.md").write_text(f"# Login\n\n{text}\n")
    (root / "docs/en/docs/extra.md").write_text("# Extra\n\nMore about logging in.\n")
    return root


def _in_process(argv, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setenv("CODELEX_NO_SERVER", "1")
    capsys.readouterr()
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def served():
    """The server's own path for a client's command line (:meth:`codelex.server.Server.answer`: the argv parsed
    by the server's parser, run by ``run_served`` on its pool, stdout and stderr captured), without a socket."""
    srv = server.Server(cli.run_served)

    def run(argv, cwd) -> tuple[int, str, str]:
        answer = srv.answer({"version": VERSION, "install": server.installation(), "op": "run", "argv": argv,
                             "cwd": str(cwd), "tty": False, "env": {}})
        assert answer["op"] == "done", answer
        return answer["status"], answer["stdout"], answer["stderr"]

    yield run
    srv.pool.close()


def test_docs_language_and_the_deprecated_lang(repo, capsys, monkeypatch, served):
    base = ["docs", "authenticate", "--root", str(repo), "--color", "never", "-q"]
    status, out, err = _in_process([*base, "--language", "all"], capsys, monkeypatch)
    assert status == 0 and "docs/en/docs/guide.md" in out and "docs/de/docs/guide.md" in out and err == ""
    status, out_de, err = _in_process([*base, "--language", "de"], capsys, monkeypatch)
    assert status == 0 and "docs/de/docs/guide.md" in out_de and "docs/en/docs/guide.md" not in out_de \
        and err == ""
    old = _in_process([*base, "--lang", "de"], capsys, monkeypatch)
    assert old == (0, out_de, "codelex: warning: docs --lang is deprecated; use --language\n")
    assert served([*base, "--lang", "de"], repo) == old
    with pytest.raises(SystemExit) as usage:  # (a usage error, from argparse)
        _in_process([*base, "--lang", "de", "--language", "de"], capsys, monkeypatch)
    err = capsys.readouterr().err
    assert usage.value.code == 2 and len(err.splitlines()) == 1 and "not allowed with" in err
    status, out, err = _in_process(base[:-1], capsys, monkeypatch)  # the main language's, by default
    assert status == 0 and "docs/de/docs/guide.md" not in out and "docs/en/docs/guide.md" in out
    assert "1 section in de left out: --language TAG or --language all" in err


EMPTY = "codelex: the query is empty: give words to search for\n"
NO_WORDS = "codelex: the query has no searchable words (only stop words, one-letter words, numbers or punctuation)\n"
ONLY_FILTERS = "codelex: the query has only filters: add words to search for\n"
DOCS_NO_WORDS = "codelex: the query has no searchable words (only stop words or punctuation)\n"


@pytest.mark.parametrize("command, query, message", [
    *[(c, q, EMPTY) for c in ("search", "code", "docs") for q in ("", "   ", "\t\n")],
    ("search", "the", NO_WORDS), ("search", "x !!", NO_WORDS), ("search", "404", NO_WORDS),
    ("search", "-file:src", ONLY_FILTERS), ("search", "lang:python", ONLY_FILTERS),
    ("code", "the of", NO_WORDS), ("code", "lang:python", ONLY_FILTERS),
    ("docs", "the of", DOCS_NO_WORDS), ("docs", "!!", DOCS_NO_WORDS),
])
def test_a_query_with_nothing_to_search_for_is_one_line_and_exit_2(repo, capsys, monkeypatch, served, command,
                                                                     query, message):
    argv = [command, query, "--root", str(repo), *(["--lexical"] if command == "code" else [])]
    local = _in_process(argv, capsys, monkeypatch)
    assert local == (2, "", message)
    assert served(argv, repo) == local  # the server runs the same code: the same answer


def test_cluster_search_refuses_an_empty_query_before_ray(capsys, monkeypatch):
    assert _in_process(["cluster", "search", "  ", "--name", "nowhere"], capsys, monkeypatch) == (2, "", EMPTY)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_progress_is_a_plain_line_every_ten_seconds():
    clock, stream = FakeClock(), io.StringIO()
    bar = EmbedProgress(stream, plain=True, clock=clock)
    for t, done in [(1, 100), (4.9, 400)]:  # work under a few seconds: nothing
        clock.now = 100 + t
        bar(done, 3643)
    assert stream.getvalue() == ""
    clock.now = 110
    bar(1200, 3643)
    assert stream.getvalue() == "codelex: embedding 1,200 of 3,643 chunks (120/s, 20 s left)\n"
    for t in (111, 115, 119.9):  # at most one line every ten seconds
        clock.now = t
        bar(1300, 3643)
    assert stream.getvalue().count("\n") == 1
    clock.now = 120
    bar(2400, 3643)
    clock.now = 131
    bar(3643, 3643)  # (the end: the command's own summary says it)
    bar.clear()
    lines = stream.getvalue().splitlines()
    assert lines == ["codelex: embedding 1,200 of 3,643 chunks (120/s, 20 s left)",
                     "codelex: embedding 2,400 of 3,643 chunks (120/s, 10 s left)"]
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    stream = io.StringIO()
    files = Progress(stream, plain=True, clock=clock)
    clock.now += 6
    files(1200, 3643, 12 * 2**20)
    assert stream.getvalue() == "codelex: indexing 1,200 of 3,643 files (12 MiB)\n"


def test_which_progress_each_stream_gets(monkeypatch):
    stream = io.StringIO()
    assert not progress_for(Progress, stream, True).plain and progress_for(Progress, stream, True, quiet=True)
    assert progress_for(EmbedProgress, stream, False).plain and progress_for(Progress, stream, False, quiet=True) \
        is None
    args = argparse.Namespace(wait=True, json=False, quiet=False, progress_stream=stream, stderr_tty=False)
    assert cli._embed_progress(args).plain  # served to a client whose stderr is a log
    for machine in ({"json": True}, {"quiet": True}, {"wait": False}):
        assert cli._embed_progress(argparse.Namespace(**{**vars(args), **machine})) is None
    monkeypatch.setattr("sys.stderr", io.StringIO())  # in-process, stderr not a terminal
    assert cli._embed_progress(argparse.Namespace(wait=True, json=False, quiet=False)).plain


def test_a_served_commands_plain_progress_reaches_a_client_that_is_not_a_terminal(monkeypatch, capsys):
    def request(payload, timeout=None, on_progress=None):
        assert payload["stderr_tty"] is False
        on_progress("codelex: embedding 1,200 of 3,643 chunks (120/s, 20 s left)\n")
        on_progress("\r\x1b[2Kembedding [###...] 10/30 chunks, 5/s, 4 s left")  # (a bar: never in a log)
        return {"op": "done", "status": 0, "stdout": "answer\n", "stderr": "summary\n"}

    monkeypatch.setattr(server, "request", request)
    assert server.run_remote(["code", "x", "--wait"]) == 0
    out, err = capsys.readouterr()
    assert out == "answer\n"
    assert err == "codelex: embedding 1,200 of 3,643 chunks (120/s, 20 s left)\nsummary\n"


def test_outline_show_and_status_are_served_and_answer_as_in_process(repo, capsys, monkeypatch, served):
    """Issue 41: outline, show and status were never served (1.0-2.5 s each in a fresh process)."""
    assert {"outline", "show", "status"} <= server.SERVED_COMMANDS
    monkeypatch.setenv("CODELEX_NO_SERVER", "1")
    monkeypatch.chdir(repo)  # (FILE is read from the current directory, as the served client's)
    assert cli.main(["index", "--root", str(repo)]) == 0
    for argv in (["outline", "src/auth.py", "--root", str(repo), "--color", "never"],
                 ["outline", "src/auth.py", "--root", str(repo), "--json"],
                 ["show", "src/auth.py:authenticate_user", "--root", str(repo), "--color", "never"],
                 ["show", "src/auth.py:nothing_here", "--root", str(repo)],
                 ["status", "--root", str(repo), "--json"]):
        here = _in_process(argv, capsys, monkeypatch)
        there = served(argv, repo)
        if argv[0] == "status":  # (who keeps it fresh differs by nature: the served project is watched)
            import json

            here_doc, there_doc = json.loads(here[1]), json.loads(there[1])
            assert here[0] == there[0] == 0 and here_doc["indexed"] == there_doc["indexed"] == 4, (here, there)
            assert here_doc["stale"] == there_doc["stale"] and here_doc["root"] == there_doc["root"]
            continue
        assert there == here, argv
        assert here[0] in (0, 2) and (here[0] == 0) == (argv[1] != "src/auth.py:nothing_here"), here
