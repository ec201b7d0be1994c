"""Everyday use: project discovery, language aliases, configuration, output formats."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import codelex
from codelex import ConfigError, Project, QueryError, WordIndex
from codelex.kinds import KIND_ALIASES, KINDS
from codelex.project import discover_root

from tests.surfaces.test_cli import run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src/pkg").mkdir(parents=True)
    (root / "src/pkg/auth.py").write_text("def authenticate_user(name):\n    return lookup_user(name)\n")
    (root / "src/pkg/session.ts").write_text("export class UserSession {\n  authenticate() { return 1 }\n}\n")
    (root / "src/main.rs").write_text("fn authenticate() -> bool { true }\n")
    (root / "tools").mkdir()
    (root / "tools/deploy.sh").write_text("#!/bin/sh\nauthenticate_remote() { echo ok; }\n")
    (root / "docs").mkdir()
    (root / "docs/guide.md").write_text("# Guide\nHow to authenticate.\n")
    return root


# --- language aliases -----------------------------------------------------------


def test_every_alias_names_a_kind():
    assert all(kind in KINDS and alias not in KINDS for alias, kind in KIND_ALIASES.items())
    assert codelex.KIND_ALIASES is KIND_ALIASES


@pytest.mark.parametrize(("alias", "kind"), [("py", "python"), ("PY", "python"), ("ts", "jsts"), ("tsx", "jsts"),
                                             ("js", "jsts"), ("rs", "rust"), ("golang", "go"), ("c++", "cxx"),
                                             ("cpp", "cxx"), ("cs", "csharp"), ("rb", "ruby"), ("sh", "shell"),
                                             ("kt", "kotlin"), ("yml", "yaml"), (" Python ", "python")])
def test_aliases_resolve(alias, kind):
    index = WordIndex.build([("a.py", "authenticate"), ("b.ts", "authenticate"), ("c.rs", "authenticate"),
                             ("d.go", "authenticate"), ("e.cpp", "authenticate"), ("f.cs", "authenticate"),
                             ("g.rb", "authenticate"), ("h.sh", "authenticate"), ("i.kt", "authenticate"),
                             ("j.yml", "authenticate: 1")])
    by_option = {h.file for h in index.search("authenticate", lang=alias)}
    by_filter = {h.file for h in index.search(f"lang:{alias.strip()} authenticate")}
    expected = {h.file for h in index.search("authenticate", lang=kind)}
    assert by_option == by_filter == expected and expected


def test_unknown_language_lists_canonical_names():
    index = WordIndex.build([("a.py", "x")])
    with pytest.raises(QueryError) as info:
        index.search("lang:klingon x")
    assert "python" in str(info.value) and "rust" in str(info.value) and "py, ts" in str(info.value)


def test_cli_accepts_aliases(repo):
    r = run("search", "authenticate", "--root", repo, "--json", "--lang", "ts")
    assert [h["file"] for h in json.loads(r.stdout)["results"]] == ["src/pkg/session.ts"]
    r = run("search", "lang:rs authenticate", "--root", repo, "-l")
    assert r.stdout.split() == ["src/main.rs"]


# --- discovery --------------------------------------------------------------------


def test_discovery_prefers_an_index_then_git_then_the_directory(tmp_path):
    plain = tmp_path / "plain" / "a" / "b"
    plain.mkdir(parents=True)
    assert discover_root(plain) == plain.resolve()
    git_root = tmp_path / "gitrepo"
    (git_root / "src" / "deep").mkdir(parents=True)
    (git_root / ".git").mkdir()
    assert discover_root(git_root / "src" / "deep") == git_root.resolve()
    (git_root / "src" / ".codelex").mkdir()
    (git_root / "src" / ".codelex" / "index.clx").write_bytes(b"x")  # an index, even an unreadable one, claims it
    assert discover_root(git_root / "src" / "deep") == (git_root / "src").resolve()
    assert discover_root(git_root) == git_root.resolve()


def test_discovery_stops_below_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    work = home / "work" / "proj"
    work.mkdir(parents=True)
    (home / ".git").mkdir()  # a dotfiles repository must not make the account a project
    monkeypatch.setenv("HOME", str(home))
    assert discover_root(work) == work.resolve()
    assert discover_root(home) == home.resolve()  # returned as is, to be refused
    with Project.discover(work) as p:
        assert p.root == work.resolve()


def test_cli_from_a_subdirectory_uses_the_project_index(repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert run("index", cwd=repo).returncode == 0
    r = run("search", "authenticate", "--json", cwd=repo / "src")
    assert r.returncode == 0, r.stderr
    assert not (repo / "src" / ".codelex").exists()  # the project's index, not a second one
    files = [h["file"] for h in json.loads(r.stdout)["results"]]
    paths = [h["path"] for h in json.loads(r.stdout)["results"]]
    assert files and all(f.startswith("src/") for f in files)  # scoped to the subtree
    assert sorted(paths) == sorted(f[len("src/"):] for f in files)  # relative to the current directory
    r = run("search", "authenticate", "-l", cwd=repo / "src" / "pkg")
    assert sorted(r.stdout.split()) == ["auth.py", "session.ts"]
    r = run("search", "authenticate", "-l", "--whole-project", cwd=repo / "src" / "pkg")
    shown = r.stdout.split()
    assert "../../tools/deploy.sh" in shown and "auth.py" in shown
    r = run("search", "authenticate", "--color", "never", cwd=repo / "src")
    assert "under src/" in r.stderr and "pkg/auth.py:1" in r.stdout
    r = run("search", "authenticate", "-l", "--path", "pkg/*.ts", cwd=repo / "src")
    assert r.stdout.split() == ["pkg/session.ts"]
    # A glob is read from the current directory (issue 33: ../x from a subdirectory matched nothing) ...
    r = run("search", "authenticate", "-l", "--path", "../main.rs", cwd=repo / "src" / "pkg")
    assert r.returncode == 0 and r.stdout.split() == ["../main.rs"], (r.stdout, r.stderr)
    # ... and one that leaves the project is a usage error, not an empty answer.
    r = run("search", "authenticate", "-l", "--path", "../../../x.py", cwd=repo / "src" / "pkg")
    assert r.returncode == 2 and "leaves the project root" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_discovery_refuses_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "a.py").write_text("x = 1\n")
    r = run("search", "x", cwd=home, env={"HOME": str(home)})
    assert r.returncode == 2 and "refusing" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (home / ".codelex").exists()


# --- output formats ---------------------------------------------------------------


def test_files_only_vimgrep_and_jsonl(repo):
    r = run("search", "authenticate_user", "--root", repo, "-l")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "src/pkg/auth.py" and r.stderr == ""
    r = run("search", "authenticate_user", "--root", repo, "--vimgrep")
    first = r.stdout.splitlines()[0]
    path, line, column, text = first.split(":", 3)
    assert (path, line, column) == ("src/pkg/auth.py", "1", "5") and text == "def authenticate_user(name):"
    r = run("search", "authenticate", "--root", repo, "--jsonl", "-n", "3")
    objs = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(objs) == 3 and all({"file", "path", "score", "startLine", "text"} <= set(o) for o in objs)
    r = run("search", "authenticate", "--root", repo, "--json", "-l")
    assert r.returncode == 2 and "not allowed" in r.stderr
    assert run("search", "zzzqqqxx", "--root", repo, "-l").returncode == 1


# --- configuration ----------------------------------------------------------------


def test_configuration_files_and_precedence(repo):
    (repo / "pyproject.toml").write_text('[tool.codelex]\nignore = ["tools/"]\nlanguages = ["py", "ts", "sh"]\n'
                                         'max_bytes = 100000\n')
    with Project(repo) as p:
        p.open()
        assert set(p.index.files) == {"src/pkg/auth.py", "src/pkg/session.ts"}
        assert p.config["max_bytes"] == 100000 and p.config["languages"] == ["jsts", "python", "shell"]
    (repo / ".codelex.toml").write_text('languages = ["rust", "python"]\n')  # overrides pyproject key by key
    with Project(repo) as p:
        p.open()
        assert set(p.index.files) == {"src/pkg/auth.py", "src/main.rs"}
    with Project(repo, languages=["md"], ignore=["docs/"]) as p:  # arguments override the files
        p.open()
        assert set(p.index.files) == set()
    (repo / ".codelex.toml").write_text('include = ["src/pkg/"]\n')
    (repo / ".codelexignore").write_text("# generated\n*.ts\n")
    with Project(repo) as p:
        p.open()
        assert set(p.index.files) == {"src/pkg/auth.py"}
        assert str(repo / ".codelexignore") in p.config["sources"]
        p.on_edit("src/pkg/new.ts", "export const authenticate = 1")  # ignored: an edit never admits it
        p.on_edit("tools/x.py", "authenticate = 1")  # outside include
        assert set(p.index.files) == {"src/pkg/auth.py"}


@pytest.mark.parametrize(("text", "message"), [
    ("[tool.codelex]\nignored = []\n", "unknown key 'ignored'"),
    ("[tool.codelex]\nmax_bytes = -1\n", "max_bytes must be an integer >= 0"),
    ("[tool.codelex]\nmax_bytes = true\n", "max_bytes must be"),
    ("[tool.codelex]\nignore = \"tools/\"\n", "ignore must be a list of strings"),
    ("[tool.codelex]\nlanguages = [\"klingon\"]\n", "unknown language 'klingon'"),
    ("[tool.codelex]\nfusion = \"best\"\n", "fusion must be one of"),
    ("[tool.codelex\n", "not valid TOML"),
    ("[tool]\ncodelex = 3\n", "must be a table"),
    (b"[tool.codelex]\nignore = [\"\xa5\"]\n", "not UTF-8"),  # found by fuzzing (was a UnicodeDecodeError)
    # (issue 27: these printed a 40-line traceback and named neither the file nor the key)
    ("[tool.codelex]\nignore = [\"[\"]\n", "ignore: bad pattern '[': matches nothing"),
    ("[tool.codelex]\nignore = [\"[z-a]\"]\n", "ignore: bad pattern '[z-a]': bad character range z-a"),
    ("[tool.codelex]\ninclude = [\"\\\\\"]\n", "include: bad pattern '\\\\': a trailing backslash"),
    ("[tool.codelex]\nx = " + "[" * 20000 + "]" * 20000 + "\n", "nested too deeply"),  # was a RecursionError
])
def test_configuration_errors_name_the_file_and_key(repo, text, message):
    if isinstance(text, bytes):
        (repo / "pyproject.toml").write_bytes(text)
    else:
        (repo / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        Project(repo)
    assert message in str(info.value) and "pyproject.toml" in str(info.value)
    r = run("search", "x", "--root", repo)
    assert r.returncode == 2 and "pyproject.toml" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.timeout(60)
def test_a_fifo_configuration_file_fails_in_one_line(repo):
    os.mkfifo(repo / ".codelex.toml")  # (issue 27: every command on the root hung)
    r = run("search", "x", "--root", repo, timeout=50)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"codelex: {repo / '.codelex.toml'}: not a regular file"]


def test_ignore_file_lines_git_accepts_never_fail_a_build(repo):
    (repo / "src/.gitignore").write_text("pkg/session.ts\\\n[z-a]\n[[:alpha:]]x\nmain.rs\n")
    (repo / ".codelexignore").write_text("tools/\\\n[z-a]\ntools/\n")
    r = run("search", "authenticate", "--root", repo, "-l")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["docs/guide.md", "src/pkg/auth.py", "src/pkg/session.ts"]
    assert "Warning" not in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_status_shows_the_effective_configuration(repo):
    (repo / ".codelex.toml").write_text('max_files = 50\nignore = ["docs/"]\n')
    r = run("status", "--root", repo)
    assert "config: max_bytes 524288; max_files 50; ignore docs/" in r.stdout and ".codelex.toml" in r.stdout
    r = run("status", "--root", repo, "--json")
    assert json.loads(r.stdout)["config"]["max_files"] == 50
    r = run("search", "authenticate", "--root", repo, "--max-bytes", "10", "-l")  # the option beats the file
    assert r.returncode == 1


@pytest.mark.parametrize("how", ["world-writable", "sticky", "another user"])
def test_discovery_never_adopts_a_directory_someone_else_could_have_planted(tmp_path, how):
    """Regression (review finding 4): another local user's `.git` and `.codelex.toml` in a shared parent
    (`/tmp/x`) made the victim's `codelex search` in `/tmp/x/victimdir` index /tmp/x with the planted settings
    (hiding the victim's code).  Such an ancestor is never adopted, and discovery stops there."""
    import os

    if how == "another user" and (not hasattr(os, "geteuid") or os.geteuid() != 0):
        pytest.skip("needs root to hand a directory to another user")
    shared = tmp_path / "shared"
    victim = shared / "victimdir"
    (victim / "src").mkdir(parents=True)
    (victim / "src/app.py").write_text("def hello_victim():\n    return 1\n")
    (shared / ".git").mkdir()
    (shared / ".codelex.toml").write_text('ignore = ["victimdir/"]\n')
    (shared / ".codelex").mkdir()  # an index directory too, at the planted root
    if how == "another user":
        for path in (shared, shared / ".git", shared / ".codelex.toml", shared / ".codelex"):
            os.chown(path, 65534, 65534)
    else:
        os.chmod(shared, 0o1777 if how == "sticky" else 0o777)
    try:
        assert discover_root(victim / "src") == (victim / "src").resolve()  # (nothing marks victimdir yet)
        assert discover_root(victim) == victim.resolve()
        assert discover_root(shared) == shared.resolve()  # the starting directory is the user's choice
        (victim / ".git").mkdir()
        assert discover_root(victim / "src") == victim.resolve()
        r = run("search", "hello victim", "-l", cwd=victim / "src", env={"CODELEX_NO_SERVER": "1"})
        assert r.returncode == 0 and r.stdout.split() == ["app.py"], r.stdout + r.stderr
    finally:
        os.chmod(shared, 0o755)
