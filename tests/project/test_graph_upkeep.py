"""The import graph as a project's job: awaited by a waited-for open, so one query has one answer (issue 30, item 5)."""

from __future__ import annotations

import shutil

import pytest

from codelex import Project



def _ranking(project: Project, query: str = "parse config"):
    return [(h.file, h.score) for h in project.search(query).results]


@pytest.mark.timeout(120)
def test_a_one_shot_search_after_a_waited_open_ranks_with_the_graph(tmp_path, two_equal_files):
    root = tmp_path / "repo"
    two_equal_files(root)
    with Project(root, build_structure=False) as project:  # nothing saved yet: the prior can only be the graph
        project.open()
        first = _ranking(project)  # the first query, at once: no waiting for anything in the background
        assert project.graph_status["state"] == "ready"
    shutil.rmtree(root / ".codelex")
    with Project(root, build_structure=False) as ready:
        ready.open()
        assert ready.importers("lib/beta.py") == ["app0/main.py", "app1/main.py", "app2/main.py"]
        settled = _ranking(ready)  # a project whose graph is surely ready
    assert first == settled
    assert first[0][0] == "lib/beta.py" and first[0][1] > first[1][1]


@pytest.mark.timeout(120)
def test_a_refresh_that_changes_files_waits_for_the_graph_again(tmp_path, two_equal_files):
    root = tmp_path / "repo"
    two_equal_files(root)
    with Project(root, build_structure=False) as project:
        project.open()
        assert _ranking(project)[0][0] == "lib/beta.py"
        for i in range(3):  # now every importer takes alpha
            (root / f"app{i}/main.py").write_text("from lib import alpha\n")
        (root / "app3").mkdir()
        (root / "app3/main.py").write_text("from lib import alpha\n")
        project.refresh()
        assert project.graph_status["state"] == "ready"
        assert _ranking(project)[0][0] == "lib/alpha.py"


@pytest.mark.timeout(120)
def test_graph_status_says_off_building_ready_and_the_job_is_closed_with_the_project(tmp_path, two_equal_files):
    root = tmp_path / "repo"
    two_equal_files(root)
    project = Project(root, build_structure=False)
    project.open(wait=False)
    assert project.wait(60)
    assert project.graph_status["state"] in ("off", "building", "ready")
    project.importers("lib/beta.py", timeout=60)
    assert project.graph_status["state"] == "ready"
    job = project.service.graph.job
    project.close()
    assert job.closed and not job.running


@pytest.mark.timeout(120)
def test_a_one_shot_project_ranks_as_the_server_would_when_nothing_was_saved(tmp_path, monkeypatch, two_equal_files):
    """import_graph="saved" (the CLI's one-shot mode) builds no background graph, but when no process ever saved
    the counts its first search derives and saves them, so it answers as a project with the graph does; the next
    one-shot reads them and builds nothing."""
    root = tmp_path / "repo"
    two_equal_files(root)
    with Project(root, build_structure=False, import_graph="saved") as one_shot:
        one_shot.open()
        first = _ranking(one_shot)
    with Project(root, build_structure=False) as served:  # what the server answers: the live graph
        served.open()
        assert served.graph_status["state"] == "ready"
        assert _ranking(served) == first and first[0][0] == "lib/beta.py"
    from codelex.graph import ImportGraph

    def no_build(*args, **kwargs):
        raise AssertionError("the saved counts should have been used")

    monkeypatch.setattr(ImportGraph, "build", no_build)
    with Project(root, build_structure=False, import_graph="saved") as again:
        again.open()
        assert _ranking(again) == first
