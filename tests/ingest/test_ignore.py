"""Ignore files from a hostile checkout: never blocking, never followed through links, never failing a build."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codelex.ingest import list_files
from codelex.ingest.ignore import GitignoreOracle, IgnoreChain

HAS_GIT = shutil.which("git") is not None


def write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=str(root)), timeout=60).stdout


def git_untracked(root: Path) -> set[str]:
    return set(git(root, "ls-files", "--others", "--exclude-standard").split())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "a.py")
    write(root, "src/b.py")
    write(root, "src/c.py")
    return root


@pytest.mark.timeout(60)
def test_a_fifo_gitignore_is_skipped_not_waited_for(tree):
    os.mkfifo(tree / "src/.gitignore")
    walked = list_files(tree, use_git=False)
    assert sorted(f.path for f in walked.files) == ["a.py", "src/b.py", "src/c.py"]
    assert not GitignoreOracle(tree).ignored("src/b.py")
    chain = IgnoreChain()
    assert not chain.push("src/", str(tree / "src"))


def test_a_symlinked_gitignore_is_not_followed_as_git_does(tree, tmp_path):
    outside = tmp_path / "patterns"
    outside.write_text("*.py\n")
    (tree / "src/.gitignore").symlink_to(outside)
    walked = list_files(tree, use_git=False)
    assert sorted(f.path for f in walked.files) == ["a.py", "src/b.py", "src/c.py"]
    assert not GitignoreOracle(tree).ignored("src/b.py")
    if HAS_GIT:
        git(tree, "init", "-q")
        assert {"src/b.py", "src/c.py"} <= git_untracked(tree)  # git warns and ignores the link


# Lines git accepts but pathspec cannot compile: a trailing backslash (git: matches nothing) and a
# reversed range (git: matches its first character only, here 'z'; skipped here, so no file named z).
ODD_LINES = ["b.py\\", "src/\\", "[z-a]", "[", "[[:alpha:]]x", "c.py"]


@pytest.mark.parametrize("use_git", [False, pytest.param(True, marks=pytest.mark.skipif(not HAS_GIT, reason="git"))])
def test_gitignore_lines_pathspec_cannot_compile_never_fail_a_build(tree, use_git):
    write(tree, "src/.gitignore", "\n".join(ODD_LINES) + "\n")
    write(tree, ".gitignore", "[z-a]\nsub\\\n")
    if use_git:
        git(tree, "init", "-q")
    walked = list_files(tree, use_git=use_git)
    listed = sorted(f.path for f in walked.files)
    assert listed == ["a.py", "src/b.py"]
    oracle = GitignoreOracle(tree)
    assert oracle.ignored("src/c.py") and not oracle.ignored("src/b.py")
    if HAS_GIT:
        if not use_git:
            git(tree, "init", "-q")
        assert {p for p in git_untracked(tree) if p.endswith(".py")} == set(listed)


def test_compile_lines_keeps_what_compiles():
    from codelex.ingest.ignore import compile_lines

    spec = compile_lines(["[z-a]", "*.log", "\\", "!keep.log"])
    assert spec.check_file("x.log").include and not spec.check_file("keep.log").include


@pytest.mark.timeout(60)
@pytest.mark.skipif(not HAS_GIT, reason="git")
def test_a_fifo_gitignore_in_a_git_work_tree_never_hangs_the_listing(tree):
    git(tree, "init", "-q")
    write(tree, "src/.gitignore", "c.py\n")
    git(tree, "add", "a.py", "src/b.py", "src/.gitignore")
    os.unlink(tree / "src/.gitignore")
    os.mkfifo(tree / "src/.gitignore")  # git itself would wait for a writer
    walked = list_files(tree)
    assert sorted(f.path for f in walked.files) == ["a.py", "src/b.py", "src/c.py"]


HOSTILE_PATTERN = "*a*a*a*a*a*a*a*a*b"  # Python's backtracking matcher takes ~forever on a long name of 'a's


@pytest.mark.timeout(60)
@pytest.mark.parametrize("re2", [True, False], ids=["re2", "backtracking-fallback"])
def test_a_hostile_pattern_never_makes_matching_slow(tree, monkeypatch, re2):
    import codelex.ingest.ignore as ignore

    if not re2:
        monkeypatch.setattr(ignore, "_RE2", None)  # (a broken install without google-re2)
    elif ignore._re2() is None:
        pytest.skip("google-re2 is not importable")
    long_name = "a" * 200 + ".py"
    write(tree, long_name)
    write(tree, "src/" + long_name)
    write(tree, ".gitignore", HOSTILE_PATTERN + "\n*.log\n")
    write(tree, "src/.gitignore", HOSTILE_PATTERN + "\n")
    walk = list_files(tree, use_git=False, ignore=[HOSTILE_PATTERN])
    assert {f.path for f in walk.files} >= {long_name, "src/" + long_name, "a.py"}
    spec = ignore.compile_lines([HOSTILE_PATTERN, "*.log"])
    assert spec.check_file("x.log").include and not spec.check_file(long_name).include
    assert spec.check_file("a" * 8 + "b").include is (True if re2 else None)  # the fallback drops the hostile pattern
    assert (ignore.pattern_error(HOSTILE_PATTERN) is None) is re2


@pytest.mark.timeout(120)
@pytest.mark.skipif(not HAS_GIT, reason="needs git")
def test_a_git_that_spins_on_a_hostile_gitignore_is_not_waited_on(tree, monkeypatch):
    import time

    import codelex.ingest.listing as listing

    monkeypatch.setattr(listing, "GIT_LIST_TIMEOUT_S", 2.0)
    git(tree, "init", "-q")
    write(tree, "a" * 200 + ".py")
    write(tree, ".gitignore", HOSTILE_PATTERN + "\n")
    started = time.monotonic()
    walk = list_files(tree)
    assert time.monotonic() - started < 30
    assert walk.source == "walk" and walk.record is not None and "a" * 200 + ".py" in {f.path for f in walk.files}
    started = time.monotonic()
    again = list_files(tree, previous=walk.record)  # the record says git failed: walked, git not asked again
    assert again.source == "walk" and time.monotonic() - started < 1.5
