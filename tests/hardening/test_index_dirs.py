"""Index directories and their caches against another local user (issue 27, findings 2, 3, 7 and 13).

The attacker is another local user who owns (or can write) the project the
victim searches.  Tests that need a second user run as root, which can hand
files to ``nobody`` and read as ``nobody``; elsewhere they are skipped.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codelex import Project
from codelex.defaults import INDEX_DIR_NAME
from codelex.ingest import ListingRecord
from codelex.persist.layout import dir_refusal, index_locations, root_slug
from codelex.persist.listing import load_listing, save_listing

POSIX = os.name == "posix" and hasattr(os, "geteuid")
IS_ROOT = POSIX and os.geteuid() == 0
OTHER_UID = 65534  # nobody
needs_second_user = pytest.mark.skipif(not IS_ROOT, reason="a second local user needs root (to chown, and to "
                                                            "read as that user)")
posix_only = pytest.mark.skipif(not POSIX, reason="owners and modes are POSIX")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("CODELEX_INDEX_DIR", raising=False)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("def handle_request(req):\n    return parse_config(req)\n")
    (root / "src/util.py").write_text("def parse_config(text):\n    return text\n")
    return root


def _files(root: Path, query: str) -> list[str]:
    with Project(root, build_structure=False) as project:
        project.open()
        return [hit.file for hit in project.search(query).results]


def test_a_crafted_listing_cache_never_reaches_outside_the_root(tmp_path):
    root = _tree(tmp_path)
    outside = tmp_path / "victim"
    outside.mkdir()
    (outside / "private.py").write_text("SECRET_TOKEN = 'hunter2'  # private_victim_secret\n")
    with Project(root, build_structure=False) as project:
        project.open()
        directory = project.index_dir
    record = load_listing(directory)
    assert record is not None
    forged = ListingRecord(record.key, record.dirs, record.gitignores,
                           sorted(record.candidates + ["../victim/private.py", str(outside / "private.py")]),
                           record.skipped, record.pruned_dirs)
    save_listing(forged, directory)
    assert load_listing(directory) is None  # refused as a whole: the tree is walked again
    assert _files(root, "private_victim_secret") == []
    with Project(root, build_structure=False) as project:
        project.open()
        assert all(".." not in f and not f.startswith("/") for f in project.index.files)


@posix_only
def test_index_files_are_owner_only_whatever_the_sources_modes(tmp_path):
    root = _tree(tmp_path)
    secret = root / "secret_conf.py"
    secret.write_text("DATABASE_PASSWORD = 'owner_only_secret_value'\n")
    secret.chmod(0o600)
    (root / "NOTES.md").write_text("# Notes\nowner_only_secret_value\n")
    (root / "NOTES.md").chmod(0o600)
    with Project(root) as project:
        project.open()
        project.wait_structure(60)
        directory = project.index_dir
    from codelex.docs import DocsIndex

    DocsIndex.for_project(root)
    assert directory == root / INDEX_DIR_NAME
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    written = [p for p in directory.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"index.clx", "structure.clx", "docs.clx"}
    for p in written:
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p


@posix_only
def test_an_old_world_readable_index_directory_is_made_owner_only(tmp_path):
    root = _tree(tmp_path)
    (root / INDEX_DIR_NAME).mkdir(mode=0o755)
    os.chmod(root / INDEX_DIR_NAME, 0o755)
    _files(root, "parse config")
    assert stat.S_IMODE((root / INDEX_DIR_NAME).stat().st_mode) == 0o700


@needs_second_user
def test_another_user_cannot_read_the_index(tmp_path):
    root = _tree(tmp_path)
    tmp_path.chmod(0o755)
    (root / "secret_conf.py").write_text("API_KEY = 'another_user_must_not_see'\n")
    (root / "secret_conf.py").chmod(0o600)
    _files(root, "parse config")
    index_file = root / INDEX_DIR_NAME / "index.clx"
    assert b"another_user_must_not_see" in index_file.read_bytes()
    probe = subprocess.run(["cat", str(index_file)], user=OTHER_UID, capture_output=True, timeout=30)
    assert probe.returncode != 0 and b"another_user_must_not_see" not in probe.stdout


@needs_second_user
def test_an_index_directory_owned_by_another_user_is_never_loaded_nor_written(tmp_path):
    # The attacker (nobody) owns the project and planted an index directory with a crafted listing.
    root = _tree(tmp_path)
    tmp_path.chmod(0o755)
    planted = root / INDEX_DIR_NAME
    with Project(root, build_structure=False, index_dir=tmp_path / "forge") as project:
        project.open()  # a genuine index, to copy
    forge = tmp_path / "forge"
    planted.mkdir()
    for p in forge.iterdir():
        if p.is_file():
            (planted / p.name).write_bytes(p.read_bytes())
    for p in [root, *root.rglob("*")]:
        os.chown(p, OTHER_UID, OTHER_UID)
    before = {p.name: p.stat().st_mtime_ns for p in planted.iterdir()}
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.status == "ready"
        assert project.index_dir != planted
        assert str(project.index_dir).startswith(str(tmp_path / "user-cache"))
        info = project.check()
        assert "owned by another user" in info["unreadable_dirs"][str(planted)]
    assert {p.name: p.stat().st_mtime_ns for p in planted.iterdir()} == before  # nothing written there


@posix_only
def test_a_project_writable_by_others_keeps_its_index_in_the_user_cache(tmp_path):
    root = _tree(tmp_path)
    root.chmod(0o777)
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.index_dir == tmp_path / "user-cache" / "codelex" / "projects" / root_slug(root.resolve())
        assert "writable by other users" in project.check()["unreadable_dirs"][str(root.resolve() / INDEX_DIR_NAME)]
    assert not (root / INDEX_DIR_NAME).exists()
    assert stat.S_IMODE((tmp_path / "user-cache" / "codelex").stat().st_mode) == 0o700
    # The command line says so.
    status = subprocess.run([sys.executable, "-c", "from codelex.cli import main; raise SystemExit(main())",
                             "status", "--root", str(root)], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, CODELEX_NO_SERVER="1"))
    assert "writable by other users" in status.stdout and "user-cache" in status.stdout


@posix_only
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_dot_codelex_that_is_a_file_or_a_link_falls_back_to_the_user_cache(tmp_path, kind):
    root = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if kind == "file":
        (root / INDEX_DIR_NAME).write_text("not a directory\n")
    else:
        (root / INDEX_DIR_NAME).symlink_to(elsewhere)
        (elsewhere / "config.toml").write_text("not = [valid\n")  # never read: not an index directory of ours
    assert dir_refusal(root / INDEX_DIR_NAME) is not None
    assert _files(root, "parse config") == ["src/util.py", "src/app.py"]
    assert [p.name for p in elsewhere.iterdir()] == ([] if kind == "file" else ["config.toml"])  # nothing written
    usable, refused = index_locations(root.resolve(), None)
    assert str(root.resolve() / INDEX_DIR_NAME) in refused and len(usable) == 1


def test_an_empty_gitignore_left_by_a_full_disk_is_rewritten(tmp_path):
    root = _tree(tmp_path)
    (root / INDEX_DIR_NAME).mkdir()
    (root / INDEX_DIR_NAME / ".gitignore").write_bytes(b"")
    _files(root, "parse config")
    assert (root / INDEX_DIR_NAME / ".gitignore").read_text().splitlines()[-1] == "*"


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", "from codelex.cli import main; raise SystemExit(main())", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=dict(os.environ, CODELEX_NO_SERVER="1"))


def test_an_index_that_cannot_be_saved_is_a_failure_not_a_success(tmp_path):
    root = _tree(tmp_path)
    (root / INDEX_DIR_NAME / "index.clx").mkdir(parents=True)  # in the way of the save
    r = _cli("index", "--root", str(root), "--no-structure")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "files indexed" not in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not save the index" in lines[0] and "not kept" in lines[0], r.stderr
    verify = _cli("index", "--root", str(root), "--verify")
    assert verify.returncode == 2
    status = _cli("status", "--root", str(root))
    assert "index.clx" not in status.stdout or "not a regular file" in status.stdout


def test_a_structure_that_cannot_be_saved_is_a_failure_not_a_success(tmp_path):
    """Regression (review finding 9): with `.codelex/structure.clx/` a directory holding a file, `codelex index`
    printed "structure: 2 files analyzed" and exited 0; the save's failure was only a log line."""
    pytest.importorskip("tree_sitter_python")
    root = _tree(tmp_path)
    (root / INDEX_DIR_NAME / "structure.clx").mkdir(parents=True)  # in the way of the save
    (root / INDEX_DIR_NAME / "structure.clx" / "keep").write_text("x")
    r = _cli("index", "--root", str(root))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "structure:" not in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not save the structure" in lines[0] and "not kept" in lines[0], r.stderr
    assert "Is a directory" in lines[0] or "directory" in lines[0].lower()
    (root / INDEX_DIR_NAME / "structure.clx" / "keep").unlink()
    (root / INDEX_DIR_NAME / "structure.clx").rmdir()
    r = _cli("index", "--root", str(root), "--rebuild")
    assert r.returncode == 0 and "structure: 2 files analyzed" in r.stdout, r.stdout + r.stderr


@pytest.mark.timeout(90)
@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_held_index_lock_delays_a_one_shot_command_by_seconds_not_minutes(tmp_path):
    """Regression (review finding 8): `flock .codelex/index.lock sleep 400 &` stalled `codelex search` for 120 s
    (a 60 s wait for the word index's save, another for the structure's).  Each save now waits
    defaults.LOCK_TIMEOUT_S; the answer stands with one warning line, and `codelex index` fails naming the lock."""
    import fcntl
    import time

    from codelex.defaults import LOCK_FILE, LOCK_TIMEOUT_S

    root = _tree(tmp_path)
    assert _cli("index", "--root", str(root)).returncode == 0
    fd = os.open(root / INDEX_DIR_NAME / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        (root / "src/new.py").write_text("def handle_new_request(req):\n    return req\n")
        started = time.monotonic()
        r = _cli("search", "handle request", "--root", str(root))
        assert time.monotonic() - started < 4 * LOCK_TIMEOUT_S + 8, r.stderr
        assert r.returncode == 0 and "src/new.py" in r.stdout, r.stderr
        warnings = [x for x in r.stderr.splitlines() if "warning" in x]
        assert len(warnings) == 1 and "could not save the index" in warnings[0] and "lock" in warnings[0]
        (root / "src/newer.py").write_text("def handle_newer(req):\n    return req\n")
        started = time.monotonic()
        r = _cli("index", "--root", str(root))
        assert time.monotonic() - started < 4 * LOCK_TIMEOUT_S + 8, r.stderr
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "lock" in lines[0] and "not kept" in lines[0], r.stderr
    finally:
        os.close(fd)
    assert _cli("index", "--root", str(root)).returncode == 0


def test_a_full_disk_at_save_is_reported(tmp_path, monkeypatch, capsys):
    import errno

    from codelex import WordIndex
    from codelex.cli import main

    root = _tree(tmp_path)

    def full(self, directory, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(directory))

    monkeypatch.setenv("CODELEX_NO_SERVER", "1")
    monkeypatch.setattr(WordIndex, "save", full)
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.status == "ready" and not project.last_report.saved
        assert "No space left on device" in project.last_report.save_error
    assert main(["index", "--root", str(root), "--no-structure"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err
    assert main(["search", "parse config", "--root", str(root), "-l"]) == 0  # the answer stands, with a warning
    captured = capsys.readouterr()
    assert captured.out.split() == ["src/util.py", "src/app.py"] and "warning" in captured.err


@posix_only
def test_no_usable_index_location_still_answers(tmp_path):
    root = _tree(tmp_path)
    (root / INDEX_DIR_NAME).write_text("a file, not a directory\n")
    cached = tmp_path / "user-cache" / "codelex" / "projects" / root_slug(root.resolve())
    cached.mkdir(parents=True)
    cached.chmod(0o777)  # writable by others: refused too
    with Project(root) as project:
        project.open()
        assert project.status == "ready" and project.last_report.save_error is not None
        assert [h.file for h in project.search("parse config").results] == ["src/util.py", "src/app.py"]
        assert project.index_dir == cached
        assert len(project.check()["unreadable_dirs"]) == 2
