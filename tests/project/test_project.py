"""Project lifecycle: open, refresh, rebuild, background builds, per-edit upkeep, refusal."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

import codelex
from codelex import Project, WordIndex
from codelex.ingest import list_files, read_files

QUERIES = ["parse config", "handler request", "user session", "lang:python value", "-file:test handler"]


def make_repo(root: Path, n: int = 40) -> Path:
    for i in range(n):
        p = root / f"src/pkg{i % 4}/mod{i:02}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def handler_{i}(request):\n    return parse_config(request, value={i})\n")
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests/test_handlers.py").write_text("def test_handler(): assert handler_1(None)\n")
    (root / "README.md").write_text("# Project\nParse config and handle user sessions.\n")
    return root


def fresh_results(root: Path) -> list:
    """What a from-scratch build over the tree answers now."""
    result = list_files(root)
    idx = WordIndex.build((d.path, d.content, d.mtime_ns) for d in read_files(root, result.files))
    return [_plain(idx.search(q)) for q in QUERIES]


def _plain(hits) -> list:
    """Hits without what the structure adds (a project names each hit's enclosing definition)."""
    return [(h.file, h.score, h.hits, h.start_line) for h in hits]


def results(project: Project) -> list:
    """What the project's index answers (its search ranks the same candidates through the pipeline, whose
    stages read the index's answer: tests/rank/test_pipeline.py holds them)."""
    out = []
    for q in QUERIES:
        r = project.search(q)
        assert r.available and {h.file for h in r.results} <= set(project.index.files)
        out.append(_plain(project.index.search(q)))
    return out


def test_open_builds_saves_and_reopens(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        assert p.open().status == "ready"
        assert p.last_report.mode == "full" and p.last_report.reason == "no-index" and p.last_report.saved
        assert results(p) == fresh_results(root)
        assert (root / ".codelex/.gitignore").read_text().strip().endswith("*")
        assert (root / ".codelex/index.clx").is_file()
    with Project(root) as p:  # a new process would see the same: the saved index, nothing stale
        p.open()
        assert p.last_report.mode == "incremental"
        assert (p.last_report.refreshed, p.last_report.added, p.last_report.dropped) == (0, 0, 0)
        assert not p.last_report.saved
        assert results(p) == fresh_results(root)
        assert p.coverage == codelex.Coverage(len(p.index), False)


def test_refresh_after_edits_additions_and_deletions_equals_a_fresh_build(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
    time.sleep(0.01)
    (root / "src/pkg0/mod00.py").write_text("def parse_settings(): return user_session()\n")
    (root / "src/pkg1/mod01.py").write_text("")  # shrinks to empty
    (root / "src/pkg2/mod02.py").unlink()
    (root / "src/pkg3/new.py").write_text("class UserSession: handler = 1\n")
    (root / "src/pkg3/blob.py").write_bytes(b"\x00binary")  # never admitted
    (root / "src/pkg3/mod03.py").write_bytes(b"\x00now binary")  # was indexed: dropped on reading
    with Project(root) as p:
        p.open()
        rep = p.last_report
        assert rep.mode == "incremental", rep
        assert (rep.refreshed, rep.added) == (2, 1)
        assert rep.dropped == 2  # mod02 deleted, mod03 turned binary
        assert "src/pkg3/mod03.py" not in p.index and "src/pkg2/mod02.py" not in p.index
        assert results(p) == fresh_results(root)
        assert p.last_report.saved
    with Project(root) as p:
        p.open()
        assert p.last_report.refreshed == 0 and results(p) == fresh_results(root)


def test_churn_forces_a_full_build(tmp_path):
    root = make_repo(tmp_path / "repo", n=10)
    with Project(root) as p:
        p.open()
    for i in range(6):
        (root / f"src/extra{i}.py").write_text(f"extra_{i} = 1\n")
    with Project(root) as p:
        p.open()
        assert p.last_report.mode == "full" and p.last_report.reason == "file-set-churn"
        assert results(p) == fresh_results(root)


def test_corrupt_saved_index_is_rebuilt(tmp_path, caplog):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
    (root / ".codelex/index.clx").write_bytes(b"CODELEX\x00garbage")
    with caplog.at_level(logging.WARNING, logger="codelex"), Project(root) as p:
        p.open()
        assert p.status == "ready"
        assert p.last_report.mode == "full" and p.last_report.reason.startswith("unreadable-index")
        assert any("unusable" in r.message for r in caplog.records)
        assert results(p) == fresh_results(root)
    WordIndex.load(root / ".codelex")  # rewritten whole


def test_an_older_index_format_is_rebuilt(tmp_path, caplog):
    """A saved index of the previous format version is refused, never read with this layout, and rebuilt."""
    import struct

    from codelex.persist.lexical import FORMAT_VERSION

    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
    file = root / ".codelex/index.clx"
    data = bytearray(file.read_bytes())
    struct.pack_into("<I", data, 8, FORMAT_VERSION - 1)
    file.write_bytes(data)
    with caplog.at_level(logging.WARNING, logger="codelex"), Project(root) as p:
        p.open()
        assert p.last_report.mode == "full" and p.last_report.reason.startswith("unreadable-index")
        assert any(f"version {FORMAT_VERSION - 1}" in r.getMessage() for r in caplog.records)
        assert results(p) == fresh_results(root)
    WordIndex.load(root / ".codelex")  # rewritten in this format


def test_background_open_never_blocks_a_query(tmp_path):
    root = make_repo(tmp_path / "repo")
    gate = threading.Event()

    def progress(done, total, nbytes):
        gate.wait(timeout=30)  # hold the build until the test has queried

    with Project(root, progress=progress) as p:
        t = time.perf_counter()
        p.open(wait=False)
        r = p.search("parse config")
        assert time.perf_counter() - t < 5
        assert not r.available and r.unavailable_reason == "building"
        assert "background" in r.hint and r.results == [] and r.coverage.files == 0
        assert r.to_dict()["unavailableReason"] == "building"
        assert p.open(wait=False).status == "building"  # joined, not restarted
        gate.set()
        assert p.wait(timeout=60)
        r = p.search("parse config")
        assert r.available and r.results and r.generated_at is not None
        assert r.to_dict()["snapshotGeneratedAt"] == r.generated_at


def test_one_build_per_root(tmp_path):
    root = make_repo(tmp_path / "repo")
    gate = threading.Event()
    calls = []

    def progress(done, total, nbytes):
        calls.append(threading.get_ident())
        gate.wait(timeout=30)

    a = Project(root, progress=progress)
    b = Project(root)
    a.open(wait=False)
    b.open(wait=False)
    assert b.status == "building"
    gate.set()
    assert b.wait(timeout=60) and a.status == b.status == "ready"
    assert len(set(calls)) == 1  # one builder thread
    assert a.index is b.index
    a.close()


def test_superseded_and_cancelled_builds_never_publish(tmp_path):
    root = make_repo(tmp_path / "repo")
    first_gate, release = threading.Event(), threading.Event()

    def slow(done, total, nbytes):
        first_gate.set()
        release.wait(timeout=30)

    p = Project(root, progress=slow)
    p.open(wait=False)
    assert first_gate.wait(timeout=30)
    closer = threading.Thread(target=p.close)  # cancels the running build, then joins it
    closer.start()
    while p.status != "closed":
        time.sleep(0.001)
    release.set()
    closer.join(timeout=60)
    assert p.index is None and p.status == "closed"
    assert not (root / ".codelex/index.clx").exists()
    with pytest.raises(RuntimeError):
        p.open()

    # A rebuild supersedes a running build: only the newer one publishes.
    first_gate.clear()
    release.clear()
    seen = []

    def gated(done, total, nbytes):
        seen.append(done)
        release.wait(timeout=30)

    q = Project(root, progress=gated)
    q.open(wait=False)
    (root / "src/late.py").write_text("late_arrival = parse_config()\n")
    q.service.progress = None
    q.rebuild(wait=True)  # runs to completion while the first build is parked
    assert "src/late.py" in q.index
    release.set()
    time.sleep(0.2)
    assert "src/late.py" in q.index and q.status == "ready"
    q.close()


def test_on_edit(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root, debounce_ms=0) as p:
        p.open()
        assert p.on_edit("src/pkg0/mod00.py", "def renamed_handler(): pass\n") is True
        assert p.search("renamed handler").results[0].file == "src/pkg0/mod00.py"
        assert p.index.file_info("src/pkg0/mod00.py").mtime_ns == -1  # re-read at the next open
        (root / "src/pkg1/fresh.py").write_text("def brand_new_thing(): pass\n")
        assert p.on_edit(root / "src/pkg1/fresh.py") is True  # absolute path, read from disk
        assert p.index.file_info("src/pkg1/fresh.py").mtime_ns > 0
        (root / "src/pkg1/fresh.py").unlink()
        assert p.on_edit("src/pkg1/fresh.py") is False and "src/pkg1/fresh.py" not in p.index
        assert p.on_edit("src/pkg2/mod02.py", b"\x00\x01binary") is False
        assert "src/pkg2/mod02.py" not in p.index
        assert p.on_edit("node_modules/x/index.js", "anything") is False
        assert p.on_edit("src/big.py", "x = 1\n" * 100_000) is False  # over 512 KiB
        with pytest.raises(ValueError):
            p.on_edit(tmp_path / "elsewhere.py", "x")
        with pytest.raises(ValueError):
            p.on_edit("a\x00b.py", "x")
        with pytest.raises(TypeError):
            p.on_edit("src/a.py", 42)
    # The debounced save ran (debounce 0): a new process sees the edits.
    loaded = WordIndex.load(root / ".codelex")
    assert "src/pkg0/mod00.py" in loaded and "src/pkg2/mod02.py" not in loaded


def test_edits_during_a_build_are_kept(tmp_path):
    root = make_repo(tmp_path / "repo")
    gate = threading.Event()
    with Project(root, progress=lambda *a: gate.wait(timeout=30), debounce_ms=60_000) as p:
        p.open(wait=False)
        assert p.on_edit("src/pkg0/mod00.py", "def edited_during_build(): pass\n") is False  # no index yet
        gate.set()
        p.wait(timeout=60)
        assert p.search("edited during build").results[0].file == "src/pkg0/mod00.py"


def test_refused_roots(tmp_path, monkeypatch):
    home = tmp_path / "home" / "user"
    home.mkdir(parents=True)
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
    for root in (home, tmp_path):
        with Project(root) as p:
            assert p.open().status == "refused"
            r = p.search("anything")
            assert not r.available and r.unavailable_reason == "refused"
            assert "home directory" in r.hint
            assert not (Path(root) / ".codelex").exists()
    project_dir = make_repo(home / "code" / "proj")
    with Project(project_dir) as p:
        assert p.open().status == "ready"


def test_failed_build_reports_and_retries(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo")
    import codelex.project.lifecycle as lifecycle

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(lifecycle, "list_files", broken)
    with Project(root) as p:
        assert p.open().status == "failed"
        monkeypatch.undo()
        r = p.search("parse config")
        assert not r.available and r.unavailable_reason == "last-build-failed"
        assert "disk on fire" in r.hint
        assert p.wait(timeout=60) and p.status == "ready"  # the query started a retry
        assert p.search("parse config").available


def test_query_errors_even_while_unavailable(tmp_path):
    root = make_repo(tmp_path / "repo")
    gate = threading.Event()
    with Project(root, progress=lambda *a: gate.wait(timeout=30)) as p:
        p.open(wait=False)
        with pytest.raises(codelex.QueryError):
            p.search("lang:klingon x")
        with pytest.raises(TypeError):
            p.search(42)
        gate.set()


def test_index_dir_choices(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo")
    explicit = tmp_path / "elsewhere"
    with Project(root, index_dir=explicit) as p:
        p.open()
        assert (explicit / "index.clx").is_file() and not (root / ".codelex").exists()
    monkeypatch.setenv("CODELEX_INDEX_DIR", str(tmp_path / "shared"))
    with Project(root) as p:
        p.open()
        assert p.index_dir.parent == tmp_path / "shared" and (p.index_dir / "index.clx").is_file()
    monkeypatch.delenv("CODELEX_INDEX_DIR")
    import codelex.persist.layout as layout

    monkeypatch.setattr(layout, "prepare_local_dir", lambda d: False)  # a read-only root
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with Project(root) as p:
        p.open()
        assert str(p.index_dir).startswith(str(tmp_path / "cache"))
        assert (p.index_dir / "index.clx").is_file()


def test_max_files_and_coverage(tmp_path):
    root = make_repo(tmp_path / "repo", n=10)
    with Project(root, max_files=5) as p:
        p.open()
        r = p.search("handler")
        assert r.coverage == codelex.Coverage(5, True)
        assert p.last_report.truncated and p.last_report.skipped["max-files"] == 7
    with Project(root) as p:  # other options: the saved index is not reused blindly
        p.open()
        assert p.last_report.reason == "options-changed"
        assert p.coverage == codelex.Coverage(12, False)


def test_bad_arguments(tmp_path):
    with pytest.raises(NotADirectoryError):
        Project(tmp_path / "missing")
    with pytest.raises(ValueError):
        Project(tmp_path, max_files=-1)
    with pytest.raises(ValueError):
        Project(tmp_path, max_bytes="big")


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git")
def test_git_work_tree(tmp_path):
    import subprocess

    root = make_repo(tmp_path / "repo")
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path))
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True, env=env)
    (root / ".gitignore").write_text("src/pkg3/\n")
    with Project(root) as p:
        p.open()
        assert not any(f.startswith("src/pkg3/") for f in p.index.files)
        assert not any(f.startswith(".codelex") for f in p.index.files)
    (root / "src/pkg0/mod00.py").write_text("def renamed_in_git(): pass\n")
    (root / "src/pkg1/untracked.py").write_text("untracked_but_visible = 1\n")
    with Project(root) as p:
        p.open()
        assert p.last_report.mode == "incremental"
        assert results(p) == fresh_results(root)
        assert "src/pkg1/untracked.py" in p.index


def test_files_left_out_for_their_content_are_not_reread(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", n=8)
    (root / "src/blob.py").write_bytes(b"\x00binary")
    (root / "src/gen.py").write_text("# Code generated by a tool. DO NOT EDIT.\nx = 1\n")
    with Project(root) as p:
        p.open()
        assert p.last_report.skipped["binary"] == 1 and p.last_report.skipped["generated"] == 1
    import codelex.project.refresh as refresh_module

    reads = []
    real = refresh_module.read_files

    def counting(root_, files, **kw):
        files = list(files)
        reads.extend(f.path for f in files)
        return real(root_, files, **kw)

    monkeypatch.setattr(refresh_module, "read_files", counting)
    with Project(root) as p:
        p.open()
        assert reads == [] and p.check()["added"] == 0  # remembered, not re-read, not "new"
    time.sleep(0.01)
    (root / "src/blob.py").write_text("def now_text(): pass\n")  # changed: read again, and indexed
    with Project(root) as p:
        p.open()
        assert reads == ["src/blob.py"] and "src/blob.py" in p.index


def test_background_open_serves_the_saved_index_at_once(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
    time.sleep(0.01)
    (root / "src/pkg0/mod00.py").write_text("def changed_since_saved(): pass\n")
    gate = threading.Event()
    with Project(root, progress=lambda *a: gate.wait(timeout=30)) as p:
        p.open(wait=False)
        r = p.search("parse config")
        assert r.available and r.results and p.status == "building"  # the saved index answers
        assert not p.search("changed since saved").results  # ...as saved, until the refresh lands
        gate.set()
        assert p.wait(timeout=60) and p.status == "ready"
        assert p.search("changed since saved").results[0].file == "src/pkg0/mod00.py"


def test_unreadable_index_location_is_skipped(tmp_path, monkeypatch):
    """Regression (issue 12): an unreadable shared cache made every first open fail."""
    root = make_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    (cache / "codelex").mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path, *args, **kwargs):
        if os.fspath(path).startswith(str(cache / "codelex") + os.sep):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):  # (index files are examined, never followed: with lstat)
        if os.fspath(path).startswith(str(cache / "codelex") + os.sep) and os.fspath(path).endswith(".clx"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    with Project(root) as p:
        assert p.open().status == "ready"
        assert (root / ".codelex" / "index.clx").is_file()
        info = p.check()
        assert info["indexed"] == 42
    import shutil

    shutil.rmtree(root / ".codelex")
    (root / ".codelex").write_text("not a directory")  # the local candidate is unusable too
    with Project(root) as p:
        assert p.open().status == "ready"  # built and served, although it cannot be saved
        assert p.search("handler").available
        info = p.check()
        assert any("Permission denied" in why for why in info["unreadable_dirs"].values()), info


def test_refused_root_answers_refused_from_the_first_query(tmp_path, monkeypatch):
    """Regression (issue 13): the first query on the home directory answered "building"."""
    home = tmp_path / "home" / "user"
    home.mkdir(parents=True)
    (home / "notes.py").write_text("def secret(): pass\n")
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
    with Project(home) as p:
        r = p.search("secret")
        assert not r.available and r.unavailable_reason == "refused", r
        assert "refused" in r.hint and p.status == "refused"
        assert p.wait(timeout=0) and not (home / ".codelex").exists()  # no build was started
        assert p.search("secret").unavailable_reason == "refused"


def test_a_corrupt_index_found_by_a_query_is_rebuilt(tmp_path):
    """Large arrays are verified as they are read: a query that meets a bad chunk drops the index and a
    rebuild follows in the background; answers are then those of a fresh build."""
    import codelex
    from codelex.defaults import INDEX_FILE

    root = tmp_path / "repo"
    for i in range(400):
        (root / f"pkg{i % 7}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 7}" / f"mod{i}.py").write_text(f"def handler_{i}(request):\n    return common_value\n" * 30)
    idx = tmp_path / "idx"
    with codelex.Project(root, index_dir=idx) as p:
        p.open()
        expected = [h.file for h in p.search("common_value handler_7").results]
    data = bytearray((idx / INDEX_FILE).read_bytes())
    for pos in range(len(data) // 3, 2 * len(data) // 3, 997):  # flips all over the middle: postings, lines
        data[pos] ^= 0x5A
    (idx / INDEX_FILE).write_bytes(data)
    with codelex.Project(root, index_dir=idx) as p:
        p.open()  # refuses the file at load, or loads it and meets the damage on first read
        first = p.search("common_value handler_7")
        if not first.available:
            assert p.wait(60)
        assert [h.file for h in p.search("common_value handler_7").results] == expected
