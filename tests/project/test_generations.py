"""Generations (issue 40): an answer ranks against one generation of the word index, whole, and says which."""

from __future__ import annotations

import threading
import time

import pytest

from codelex import Project
from codelex.project.search import FileSearch


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/config.py").write_text("def parse_config(path):\n    return path\n")
    (root / "pkg/loader.py").write_text("from pkg.config import parse_config\n\n"
                                        "def load():\n    return parse_config(1)\n")
    return root


def test_an_answer_names_the_generation_it_ranked_against(repo):
    with Project(repo) as project:
        project.open()
        first = project.search("parse config")
        assert first.generation == "1.0" and first.to_dict()["generation"] == "1.0"
        assert project.search("parse config").generation == "1.0"  # nothing changed: the same generation
        (repo / "pkg/other.py").write_text("def parse_other_config():\n    pass\n")
        project.on_edit(repo / "pkg/other.py")
        after = project.search("parse config")
        assert after.generation == "1.1" and "pkg/other.py" in [h.file for h in after.results]
        project.rebuild()
        assert project.search("parse config").generation.startswith("2.")


def test_an_edit_landing_while_a_query_ranks_makes_it_rank_again(repo, monkeypatch):
    real = FileSearch._search_index
    calls = []

    def ranking(self, index, request, pending):
        calls.append(index.edits)
        result = real(self, index, request, pending)
        if len(calls) == 1:  # an edit lands between the query's reads of the index
            (repo / "pkg/late.py").write_text("def parse_late_config():\n    pass\n")
            self.service.on_edit(repo / "pkg/late.py")
        return result

    with Project(repo) as project:
        project.open()
        monkeypatch.setattr(FileSearch, "_search_index", ranking)
        answer = project.search("parse config")
        assert calls == [0, 1]
        assert answer.generation == "1.1" and "pkg/late.py" in [h.file for h in answer.results]


def test_edits_that_keep_landing_are_held_off_for_the_last_try(repo, monkeypatch):
    from codelex.defaults import GENERATION_TRIES

    real = FileSearch._search_index
    seen = []

    def ranking(self, index, request, pending):
        seen.append(index.edits)
        if len(seen) <= GENERATION_TRIES:  # an edit lands during every unhindered try
            self.service.on_edit(repo / "pkg/config.py", f"def parse_config_{len(seen)}(): pass\n")
            return real(self, index, request, pending)
        # the last try: an edit from another thread must wait until this query is done
        done = threading.Event()
        worker = threading.Thread(target=lambda: (self.service.on_edit(repo / "pkg/config.py", "x = 1\n"),
                                                  done.set()))
        worker.start()
        time.sleep(0.3)
        held_off = not done.is_set()
        result = real(self, index, request, pending)
        seen.append(("held off", held_off))
        self._worker = worker
        return result

    with Project(repo) as project:
        project.open()
        monkeypatch.setattr(FileSearch, "_search_index", ranking)
        answer = project.search("parse config")
        assert seen[-1] == ("held off", True)
        assert answer.generation == f"1.{GENERATION_TRIES}"
        project.files._worker.join(5)
        monkeypatch.setattr(FileSearch, "_search_index", real)
        assert project.search("parse config").generation == f"1.{GENERATION_TRIES + 1}"


def test_a_code_answer_names_the_generation_its_chunks_follow(repo):
    with Project(repo) as project:
        project.open()
        project.prepare_code_search()
        answer = project.code_search("parse config", embedder=False)
        assert answer.generation == "1.0" and answer.to_dict()["generation"] == "1.0"
        project.on_edit(repo / "pkg/config.py", "def parse_config(path, strict):\n    return path\n")
        assert project.code_search("parse config", embedder=False).generation == "1.1"
