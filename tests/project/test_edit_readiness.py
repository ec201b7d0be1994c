"""A watched project readies its loaded index for edits off the caller's thread (issue 27, finding 15).

The mechanism is checked (the index's warm-up thread was started by the open,
before any edit), never a time; see tests/lexical/test_first_edit.py for the
edit path itself and benchmarks/first_edit.py for the figures.
"""

from __future__ import annotations

import time

import pytest

from codelex import Project

pytest.importorskip("watchdog")


def _tree(root):
    for i in range(40):
        (root / f"pkg{i % 4}").mkdir(exist_ok=True)
        (root / f"pkg{i % 4}" / f"mod_{i}.py").write_text(f"def handler_{i}():\n    return parse_config({i})\n")


def _settle(index, timeout=60.0):
    deadline = time.monotonic() + timeout
    while index._live.warmup_state == "running" and time.monotonic() < deadline:
        time.sleep(0.002)
    return index._live.warmup_state


def test_watched_open_of_a_saved_index_starts_the_warmup(tmp_path):
    root, where = tmp_path / "repo", tmp_path / "index"
    root.mkdir()
    _tree(root)
    with Project(root, index_dir=where, build_structure=False, import_graph=False) as project:
        project.open()
        assert project.index._live.warmup_state == "none"  # a built index has nothing to ready
    with Project(root, index_dir=where, build_structure=False, import_graph=False, watch=True) as project:
        project.open()
        assert project.last_report.mode != "full"  # the saved index was loaded
        index = project.index
        assert index._live.warmup_state in ("running", "done")  # started by the open, before any edit
        assert _settle(index) == "done"
        assert project.on_edit(root / "pkg1" / "mod_1.py", "def renamed_handler(): pass\n")
        assert [h.file for h in project.search("renamed handler").results][:1] == ["pkg1/mod_1.py"]


def test_unwatched_open_leaves_a_loaded_index_cold(tmp_path):
    """A project nobody edits (a one-shot command, a query-only library user) gets no warm-up, nor its memory."""
    root, where = tmp_path / "repo", tmp_path / "index"
    root.mkdir()
    _tree(root)
    with Project(root, index_dir=where, build_structure=False, import_graph=False) as project:
        project.open()
    with Project(root, index_dir=where, build_structure=False, import_graph=False) as project:
        project.open()
        assert project.last_report.mode != "full"
        assert project.index._live.warmup_state == "none"
