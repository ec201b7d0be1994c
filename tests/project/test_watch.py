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
