"""Live freshness: a watched project follows edits, creations, deletions and renames."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from codelex import Project

pytest.importorskip("watchdog")


def files_for(project: Project, query: str) -> list[str]:
    return [h.file for h in project.search(query, limit=20).results]


@pytest.fixture
def watched(tmp_path: Path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("def zephyrquux():\n    return 1\n")
    (root / "src/util.py").write_text("def marmotvale():\n    return 2\n")
    (root / ".gitignore").write_text("generated/\n*.log.py\n")
    project = Project(root, watch=True, build_structure=False)
    project.open()
    assert project.watching, project.watch_status
    yield root, project
    project.close()


def test_edit_create_delete_rename(watched):
    root, project = watched
    (root / "src/app.py").write_text("def brontowhale():\n    return 3\n")
    assert project.sync()
    assert files_for(project, "brontowhale") == ["src/app.py"] and files_for(project, "zephyrquux") == []
    (root / "src/new.py").write_text("def frobnicatrix():\n    pass\n")
    assert project.sync()
    assert files_for(project, "frobnicatrix") == ["src/new.py"]
    (root / "src/util.py").unlink()
    assert project.sync()
    assert files_for(project, "marmotvale") == [] and "src/util.py" not in project.index
    os.rename(root / "src/new.py", root / "src/renamed.py")
    assert project.sync()
    assert files_for(project, "frobnicatrix") == ["src/renamed.py"] and "src/new.py" not in project.index


def test_directories_moved_in_and_removed(watched, tmp_path):
    root, project = watched
    outside = tmp_path / "outside" / "pkg"
    (outside / "inner").mkdir(parents=True)
    (outside / "mod.py").write_text("def quokkamod():\n    pass\n")
    (outside / "inner" / "deep.py").write_text("def narwhaldeep():\n    pass\n")
    shutil.move(str(outside), str(root / "src" / "pkg"))
    assert project.sync()
    assert files_for(project, "quokkamod") == ["src/pkg/mod.py"]
    assert files_for(project, "narwhaldeep") == ["src/pkg/inner/deep.py"]
    os.rename(root / "src" / "pkg", root / "src" / "pkg2")
    assert project.sync()
    assert files_for(project, "narwhaldeep") == ["src/pkg2/inner/deep.py"]
    shutil.rmtree(root / "src" / "pkg2")
    assert project.sync()
    assert files_for(project, "quokkamod") == [] and not any(f.startswith("src/pkg") for f in project.index.files)


def test_ignored_paths_trigger_no_work(watched):
    root, project = watched
    before = project.watch_status["batches"]
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("def gennyzork(): pass\n")
    (root / "src" / "debug.log.py").write_text("def loggyzork(): pass\n")
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules" / "x" / "index.js").write_text("function vendyzork() {}\n")
    (root / ".codelex" / "scratch.py").write_text("def indexyzork(): pass\n")
    (root / "notes.bin").write_bytes(b"\x00\x01")
    assert project.sync()
    assert project.watch_status["batches"] == before  # nothing reached the index
    for name in ("gennyzork", "loggyzork", "vendyzork", "indexyzork"):
        assert files_for(project, name) == []


def test_burst_of_edits_each_seen_after_sync(watched):
    root, project = watched
    target = root / "src" / "hot.py"

    def word(i: int) -> str:  # one token per edit, sharing no identifier part with the others
        return "zq" + "".join("abcdefghij"[int(c)] for c in str(i))

    for i in range(1000):
        target.write_text(f"def {word(i)}():\n    return {i}\n")
        assert project.sync()
        assert files_for(project, word(i)) == ["src/hot.py"], i
        if i:
            assert files_for(project, word(i - 1)) == []


def test_changes_arrive_without_sync(watched):
    root, project = watched
    (root / "src/app.py").write_text("def eventually_visible():\n    pass\n")
    deadline = time.monotonic() + 10
    while files_for(project, "eventually_visible") != ["src/app.py"]:
        assert time.monotonic() < deadline, "the watcher never applied the edit"
        time.sleep(0.01)


def test_a_watcher_that_cannot_start_falls_back_to_stat_checks(tmp_path, monkeypatch):
    import watchdog.observers

    class Broken(watchdog.observers.Observer):
        def schedule(self, *args, **kwargs):
            raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Broken)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def llamaone(): pass\n")
    with Project(root, watch=True, build_structure=False) as project:
        project.open()
        status = project.watch_status
        assert not project.watching and status["state"] == "failed" and "watch limit" in status["reason"]
        (root / "a.py").write_text("def alpacatwo(): pass\n")
        time.sleep(0.01)
        assert project.sync()  # a stat check instead
        assert files_for(project, "alpacatwo") == ["a.py"]


def test_unwatched_sync_refreshes(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def wombatold(): pass\n")
    with Project(root, build_structure=False) as project:
        project.open()
        assert project.watch_status["state"] == "off"
        (root / "b.py").write_text("def platypusnew(): pass\n")
        project.sync()
        assert files_for(project, "platypusnew") == ["b.py"]


def test_lost_events_mean_a_stat_check(watched):
    import logging

    root, project = watched
    report_before = project.last_report
    (root / "src/late.py").write_text("def capybaralate():\n    pass\n")
    logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
    deadline = time.monotonic() + 10
    while project.watch_status["overflows"] < 1 or project.last_report is report_before:
        assert time.monotonic() < deadline, "no refresh after the overflow"
        time.sleep(0.02)
    assert files_for(project, "capybaralate") == ["src/late.py"]


# --- issue 27: a hostile checkout ------------------------------------------------------

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links (POSIX)")


def _returns_within(fn, seconds: float):
    """``fn()`` on a daemon thread; its result, or a failure when it is still running after ``seconds``."""
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} did not return within {seconds} s"
    return out[0] if out else None


def _unblock_readers(fifo: Path) -> None:
    """Give whatever opened ``fifo`` for reading an end of file (so a failed run does not hang its teardown)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # ENXIO: no reader is waiting
        pass


@needs_posix
@pytest.mark.timeout(60)
def test_a_fifo_never_blocks_the_watcher(tmp_path):
    """Regression (issue 27, 4a): ``mkfifo src/f3.py`` blocked the watcher; later edits never arrived and
    sync() and close() never returned."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("def zephyrquux():\n    return 1\n")
    fifo = root / "src/f3.py"
    project = Project(root, watch=True, build_structure=False)
    try:
        project.open()
        assert project.watching, project.watch_status
        os.mkfifo(fifo)
        assert _returns_within(project.sync, 15)
        assert "src/f3.py" not in project.index
        (root / "src/app.py").write_text("def brontowhale():\n    return 3\n")
        assert _returns_within(project.sync, 15)
        assert files_for(project, "brontowhale") == ["src/app.py"] and project.watch_status["state"] == "watching"
        _returns_within(project.close, 15)
    finally:
        for _ in range(3):
            _unblock_readers(fifo)
        _returns_within(project.close, 15)


@pytest.mark.timeout(60)
def test_sync_and_stop_wait_a_bounded_time_for_a_batch_that_hangs(tmp_path):
    """A batch that never finishes (whatever blocks it) cannot hold sync() or stop() past their time limits."""
    import threading

    from codelex.project.watch import ProjectWatcher

    root = tmp_path / "repo"
    (root / ".codelex").mkdir(parents=True)
    entered, release = threading.Event(), threading.Event()

    def apply(changes) -> None:
        entered.set()
        release.wait(120)

    watcher = ProjectWatcher(root, lambda rel, is_dir: True, apply, sentinel_dir=root / ".codelex")
    assert watcher.start() is None
    try:
        (root / "a.py").write_text("x = 1\n")
        assert entered.wait(10), "the batch was never applied"
        (root / "b.py").write_text("y = 2\n")
        started = time.monotonic()
        assert _returns_within(lambda: watcher.sync(timeout=1.0), 10) is False
        assert time.monotonic() - started < 5
        _returns_within(watcher.stop, 20)
    finally:
        release.set()
        watcher.stop()


@needs_posix
@pytest.mark.timeout(60)
def test_a_directory_replaced_by_a_symlink_is_not_followed(watched, tmp_path):
    """Regression (issue 27, 6): a watched directory replaced by a link to a tree outside indexed the outside
    files."""
    root, project = watched
    (root / "src/pkg").mkdir()
    (root / "src/pkg/mod.py").write_text("def quokkamod():\n    pass\n")
    assert project.sync()
    assert files_for(project, "quokkamod") == ["src/pkg/mod.py"]
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.py").write_text("def secretoutside():\n    pass\n")
    (outside / "deep" / "more.py").write_text("def deepoutside():\n    pass\n")
    shutil.rmtree(root / "src/pkg")
    os.symlink(outside, root / "src/pkg")
    # And a directory created, then replaced by a link before its batch is applied (within the debounce).
    (root / "src/fresh").mkdir()
    (root / "src/fresh/mine.py").write_text("def freshmine():\n    pass\n")
    shutil.rmtree(root / "src/fresh")
    os.symlink(outside, root / "src/fresh")
    assert project.sync()
    time.sleep(0.2)  # (any straggling batch)
    assert project.sync()
    assert not any(f.startswith(("src/pkg", "src/fresh")) for f in project.index.files), sorted(project.index.files)
    assert files_for(project, "secretoutside") == [] and files_for(project, "deepoutside") == []


@needs_posix
def test_new_directories_are_walked_without_following_links(tmp_path, monkeypatch):
    """A directory reported as new that is (by now) a link, or holds one, is not entered: no path through a
    link reaches per-edit upkeep."""
    from codelex.project import edits
    from codelex.project.watch import Changes

    root = tmp_path / "repo"
    (root / "src/real/sub").mkdir(parents=True)
    (root / "src/real/a.py").write_text("a = 1\n")
    (root / "src/real/sub/b.py").write_text("b = 1\n")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "x.py").write_text("x = 1\n")
    (outside / "deep" / "y.py").write_text("y = 1\n")
    os.symlink(outside, root / "src/linked")
    os.symlink(outside, root / "src/real/inner")
    with Project(root, build_structure=False) as project:
        project.open()
        seen = []
        monkeypatch.setattr(edits, "edit", lambda state, rel, content, debounce_ms: seen.append(rel))
        changes = Changes()
        changes.new_dirs.update({"src/linked", "src/real", "src/gone"})
        project.service.apply_changes(changes)
    assert sorted(seen) == ["src/real/a.py", "src/real/sub/b.py"], seen


@pytest.mark.timeout(60)
def test_a_directory_turned_into_a_file_leaves_no_ghosts(watched):
    """Regression (issue 27, 8): ``rm -rf d2; echo x > d2`` kept the ``d2/*`` entries (ENOTDIR read as
    "unreadable", which keeps old content); the file ``d2`` is indexed when admissible."""
    root, project = watched
    (root / "d2.py").mkdir()
    for i in range(30):
        (root / "d2.py" / f"f{i}.py").write_text(f"def ghost{i}():\n    pass\n")
    assert project.sync()
    assert sum(f.startswith("d2.py/") for f in project.index.files) == 30
    shutil.rmtree(root / "d2.py")
    (root / "d2.py").write_text("def filenowhere():\n    pass\n")
    assert project.sync()
    assert [f for f in project.index.files if f.startswith("d2.py")] == ["d2.py"]
    assert files_for(project, "ghost3") == [] and files_for(project, "filenowhere") == ["d2.py"]
