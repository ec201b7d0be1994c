"""Project.refresh_in_background: a non-blocking refresh (or rebuild), one build at a time per root."""

from __future__ import annotations

import threading
import time

import pytest

from codelex import Project


def report_after(project: Project, before, timeout: float = 60.0):
    """The build's report: published after its save, which follows the index's publication (what wait() waits
    for), so it is polled for, within a bound."""
    deadline = time.monotonic() + timeout
    while project.last_report is before and time.monotonic() < deadline:
        time.sleep(0.01)
    return project.last_report


def test_refresh_in_background_applies_changes_and_never_runs_two_builds(project_root):
    gate, reading = threading.Event(), threading.Event()
    seen = []

    def held(done, total, nbytes):  # holds the build while files are read
        seen.append((done, total))
        reading.set()
        gate.wait(timeout=30)

    for i in range(20):  # (enough files that one added and one removed are no churn: no full rebuild)
        (project_root / f"lib/mod{i:02}.py").parent.mkdir(exist_ok=True)
        (project_root / f"lib/mod{i:02}.py").write_text(f"def helper_{i}():\n    return {i}\n")
    with Project(project_root, use_git=False, build_structure=False, import_graph=False) as project:
        project.open()
        assert project.status == "ready" and project.coverage.files == 23
        (project_root / "auth.py").write_text("def check(user, password, token):\n    return token\n")
        (project_root / "conf.py").unlink()
        (project_root / "new_module.py").write_text("def brand_new_function():\n    return 1\n")
        before = project.last_report

        started = time.monotonic()
        assert project.refresh_in_background(progress=held) is True
        assert time.monotonic() - started < 5  # returned while the build is held
        assert reading.wait(timeout=30)
        assert project.status == "building"
        assert project.refresh_in_background() is False  # joined: not repeated, not superseded
        assert project.refresh_in_background(full=True) is False
        gate.set()
        assert project.wait(timeout=60)

        report = report_after(project, before)
        assert report is not before and report.mode == "incremental"
        assert (report.added, report.refreshed, report.dropped) == (1, 1, 1), report
        assert seen and seen[-1][1] == 2  # this build's own progress callback: the two files read
        assert [h.file for h in project.search("brand new function").results] == ["new_module.py"]
        assert project.search("parse").results == []

        assert project.refresh_in_background(full=True) is True
        assert project.wait(timeout=60)
        report = report_after(project, report)
        assert (report.mode, report.reason, report.added) == ("full", "requested", 23)


def test_refresh_in_background_starts_a_first_build_and_refuses_when_closed(project_root):
    project = Project(project_root, use_git=False, build_structure=False, import_graph=False)
    assert project.status == "idle"
    assert project.refresh_in_background() is True
    assert project.wait(timeout=60) and project.status == "ready" and project.coverage.files == 3
    project.close()
    with pytest.raises(RuntimeError):
        project.refresh_in_background()
