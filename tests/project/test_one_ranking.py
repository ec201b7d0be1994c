"""One ranking (issue 39): what the ranking reads beyond the words (the names files define, the import graph's
counts) stands for the index's files as they are, or the answer says it is provisional; and the size cap is
followed, up or down, without a rebuild and without dropping a file silently."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codelex import Project
from codelex.persist.graph import load_graph_counts
from codelex.graph.extract import EXTRACTION_RULES

BIG = 600_000


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text("def connect_pool(size):\n    return [size]\n")
    for i in range(6):
        (root / f"pkg/user_{i}.py").write_text(f"from pkg.core import connect_pool\n\ndef pool_{i}():\n"
                                               f"    return connect_pool({i})\n")
    (root / "pkg/leaf.py").write_text("def connection_pool_size():\n    return 4  # connection pool\n")
    return root


def _answer(project: Project, query: str):
    result = project.search(query, limit=10)
    return [(h.file, round(h.score, 9)) for h in result.results], result


def test_the_saved_counts_stand_for_the_index_they_were_derived_for(repo):
    with Project(repo) as project:
        project.open()
        files, result = _answer(project, "connection pool")
        assert not result.provisional
        digest = project.index.files_digest()
    counts, covers = load_graph_counts(repo / ".codelex", EXTRACTION_RULES)
    assert covers == digest and counts.get("pkg/core.py")
    # A one-shot command over the same files ranks with the saved counts: no graph built, the same answer.
    with Project(repo, import_graph="saved") as project:
        project.open()
        again, result = _answer(project, "connection pool")
        assert not result.provisional and project.graph_status["state"] == "off"
    assert again == files


def test_an_answer_before_the_counts_of_changed_files_are_known_says_it_is_provisional(repo):
    with Project(repo) as project:
        project.open()
    (repo / "pkg/user_9.py").write_text("from pkg.leaf import connection_pool_size\n")
    with Project(repo) as project:
        project.open(wait=False)
        assert project.wait(60) or True  # (waits for the index build, then the graph it starts, if any)
    with Project(repo) as project:  # a server-like handle: the saved counts are for other files now
        (repo / "pkg/user_8.py").write_text("from pkg.leaf import connection_pool_size\n")
        project.open(wait=False)
        from codelex.project import lifecycle

        project.service.wait_build(60)  # the index, not the graph
        early = project.search("connection pool", limit=10)
        assert early.provisional and early.pending == ("import graph",)
        assert early.to_dict()["provisional"] is True
        project.wait(60)
        later = project.search("connection pool", limit=10)
        assert not later.provisional
    with Project(repo, import_graph="saved") as project:  # a one-shot: the same answer as the settled one
        project.open()
        result = project.search("connection pool", limit=10)
        assert not result.provisional
        assert [(h.file, h.score) for h in result.results] == [(h.file, h.score) for h in later.results]


def test_a_one_shot_over_changed_files_derives_the_counts_instead_of_using_stale_ones(repo):
    with Project(repo) as project:
        project.open()
    for i in range(6):
        (repo / f"pkg/extra_{i}.py").write_text("from pkg.leaf import connection_pool_size\n")
    with Project(repo, import_graph="saved") as project:
        project.open()
        result = project.search("connection pool", limit=10)
        assert not result.provisional
        oneshot = [(h.file, h.score) for h in result.results]
        digest = project.index.files_digest()
    assert load_graph_counts(repo / ".codelex", EXTRACTION_RULES)[1] == digest  # saved for the next one
    with Project(repo) as project:
        project.open()
        assert [(h.file, h.score) for h in project.search("connection pool", limit=10).results] == oneshot


def test_edits_followed_by_a_process_are_saved_with_the_counts_a_later_one_ranks_with(repo):
    with Project(repo, debounce_ms=0) as project:
        project.open()
        (repo / "pkg/user_7.py").write_text("from pkg.leaf import connection_pool_size\n")
        assert project.on_edit("pkg/user_7.py")
        served = [(h.file, h.score) for h in project.search("connection pool", limit=10).results]
    with Project(repo, import_graph="saved") as project:
        project.open()
        result = project.search("connection pool", limit=10)
        assert not result.provisional and project.graph_status["state"] == "off"  # the saved counts stood
        assert [(h.file, h.score) for h in result.results] == served


def test_names_are_read_for_the_content_the_index_holds(repo):
    """An edit the structure store has not analyzed yet ranks with the edited file's names at once."""
    with Project(repo) as project:
        project.open()
        project.wait_structure(60)
        assert project.on_edit("pkg/leaf.py", "def ConnectionPoolFactory():\n    return None\n")
        top = project.search("ConnectionPoolFactory", limit=3).results
        assert top[0].file == "pkg/leaf.py"
        fresh = [(h.file, h.score) for h in project.search("connection pool factory", limit=10).results]
        project.wait_structure(60)
        time.sleep(0.3)  # (the edit's background analysis, 0.2 s later)
        assert [(h.file, h.score) for h in project.search("connection pool factory", limit=10).results] == fresh


# --- the size cap -----------------------------------------------------------------------------------------


def _big(root: Path) -> None:
    (root / "pkg/big.py").write_text("def gigantic_table():\n    return 1\n" + "# padding\n" * (BIG // 10))


def test_a_raised_size_cap_admits_a_big_file_and_a_lowered_one_leaves_it_out(repo):
    _big(repo)
    with Project(repo) as project:
        project.open()
        assert "pkg/big.py" not in project.index
        skipped = project.check()["skipped"]
        assert skipped == {"pkg/big.py": f"over max_bytes 524288 ({os.path.getsize(repo / 'pkg/big.py'):,} bytes)"}
    (repo / ".codelex.toml").write_text("max_bytes = 1000000\n")
    with Project(repo) as project:
        project.open()
        assert project.last_report.mode == "incremental"  # (another cap: no rebuild)
        assert "pkg/big.py" in project.index and project.last_report.added >= 1
        assert [h.file for h in project.search("gigantic_table").results][:1] == ["pkg/big.py"]
        assert project.check()["skipped"] == {}
    with Project(repo) as project:  # the next process: kept, not dropped again
        project.open()
        assert "pkg/big.py" in project.index
        (repo / ".codelex.toml").write_text("max_bytes = 100000\n")
        project.refresh()
        assert "pkg/big.py" not in project.index and "pkg/big.py" in project.check()["skipped"]
        assert project.search("gigantic_table").results == []


def test_a_watched_project_follows_a_raised_size_cap(repo):
    pytest.importorskip("watchdog")
    _big(repo)
    with Project(repo, watch=True) as project:
        project.open()
        assert "pkg/big.py" not in project.index
        (repo / ".codelex.toml").write_text("max_bytes = 1000000\n")
        deadline = time.monotonic() + 30
        while "pkg/big.py" not in project.index and time.monotonic() < deadline:
            project.sync()
            time.sleep(0.1)
        assert "pkg/big.py" in project.index
        assert project.index.max_bytes == 1000000
        # An edit of the big file is indexed under the new cap, not dropped by the old one.
        (repo / "pkg/big.py").write_text("def colossal_table():\n    return 2\n" + "# padding\n" * (BIG // 10))
        assert project.on_edit("pkg/big.py")
        assert [h.file for h in project.search("colossal_table").results][:1] == ["pkg/big.py"]


def test_a_loosened_index_directory_is_owner_only_again_on_open(repo):
    with Project(repo) as project:
        project.open()
    directory = repo / ".codelex"
    directory.chmod(0o755)
    for f in directory.iterdir():
        if f.is_file():
            f.chmod(0o644)
    with Project(repo, import_graph="saved") as project:
        project.open()  # (nothing to save: an unchanged tree)
        assert directory.stat().st_mode & 0o077 == 0
        assert all(f.stat().st_mode & 0o077 == 0 for f in directory.iterdir() if f.is_file() and not f.is_symlink())
