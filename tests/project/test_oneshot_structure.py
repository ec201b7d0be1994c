"""A one-shot open of an unchanged tree: the structure store is complete for its walk, so nothing is analyzed,
no thread starts, and a search answers (hits and symbol names) exactly as once the structure was waited for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codelex import Project
from codelex.ingest import list_files
from codelex.persist.structure import load_structure
from codelex.project.structure import walk_digest

pytest.importorskip("tree_sitter")


def make_repo(root: Path, n: int = 12) -> Path:
    (root / "src").mkdir(parents=True)
    for i in range(n):
        (root / f"src/timers_{i}.py").write_text(
            f"class Timer{i}:\n    def schedule_timeout(self, delay):\n        return delay + {i}\n\n\n"
            f"def interrupt_{i}(timer):\n    # schedule the timer interrupt\n    return timer.schedule_timeout({i})\n")
    (root / "src/wait.c").write_text("long schedule_timeout(long timeout)\n{\n\treturn timeout;\n}\n")
    (root / "README.md").write_text("# Timers\n\nschedule a timer interrupt\n")
    return root


def _answer(project: Project, query: str) -> list[tuple]:
    return [(h.file, h.start_line, h.symbol, h.end_line) for h in project.search(query).results]


QUERIES = ("schedule timeout", "timer interrupt", "Timer3", "delay")


def test_an_unchanged_tree_needs_no_analysis_and_answers_as_the_waited_for_structure(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
        assert p.structure_status["stats"]["analyzed"] == 14
        waited = {q: _answer(p, q) for q in QUERIES}
    assert load_structure(root / ".codelex").covers is not None  # saved with the store
    assert any(sym is not None for q in QUERIES for _, _, sym, _ in waited[q])
    with Project(root, import_graph="saved") as p:
        p.open()
        upkeep = p.service.structure
        assert upkeep.status == "ready"  # at once: nothing to analyze
        assert upkeep.build.thread is None  # and no thread to wait for at exit
        assert upkeep.stats["analyzed"] == 0
        assert {q: _answer(p, q) for q in QUERIES} == waited
        assert upkeep.index._base.checks is not None  # only the files read were checked: never the whole store


def test_a_changed_file_is_analyzed_again_then_the_store_is_complete_again(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
    path = root / "src/timers_0.py"
    path.write_text(path.read_text() + "\n\ndef added_later():\n    pass\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
        assert p.structure_status["stats"]["analyzed"] == 1
        assert p.service.structure.build.thread is not None
        assert [h.symbol for h in p.search("added_later").results][:1] == ["added_later"]
    with Project(root) as p:
        p.open()
        assert p.service.structure.status == "ready" and p.service.structure.build.thread is None


def test_an_edit_forgets_that_the_store_was_complete(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root, debounce_ms=0) as p:
        p.open()
        assert p.wait_structure(60)
        store = p.service.structure.index
        assert store.covers is not None
        p.on_edit("src/timers_1.py", "def edited():\n    pass\n")
        assert p.outline("src/timers_1.py").definitions[0].name == "edited"
        assert store.covers is None


def test_the_digest_tells_walks_apart():
    from codelex.ingest import SourceFile

    a = [SourceFile("a.py", 10, 1), SourceFile("b.py", 20, 2)]
    assert walk_digest(a) == walk_digest(list(a))
    assert walk_digest(a) != walk_digest([SourceFile("a.py", 10, 1), SourceFile("b.py", 20, 3)])  # an mtime
    assert walk_digest(a) != walk_digest([SourceFile("a.py", 10, 1), SourceFile("b.py", 21, 2)])  # a size
    assert walk_digest(a) != walk_digest([SourceFile("a.py", 10, 1)])  # a file fewer
    assert walk_digest(a) != walk_digest([SourceFile("a.py", 10, 1), SourceFile("c.py", 20, 2)])  # a name


def test_a_store_found_corrupt_on_a_read_is_not_believed_again(tmp_path):
    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
        clean = {q: _answer(p, q) for q in QUERIES}
    file = root / ".codelex" / "structure.clx"
    snapshot = load_structure(root / ".codelex")
    entry = next(e for e in snapshot.container.header["arrays"] if e["name"] == "name_blob")
    row = snapshot.find("src/timers_3.py")
    at = int(snapshot.arrays["name_off"][int(snapshot.arrays["def_ptr"][row])])
    data = bytearray(file.read_bytes())
    data[entry["offset"] + at] ^= 0x01  # a bit flip in a name the search will read (the header, its MAC, intact)
    file.write_bytes(bytes(data))
    with Project(root, import_graph="saved") as p:
        p.open()
        assert p.service.structure.build.thread is None  # (the header still claims the walk)
        hits = p.search("Timer3").results
        assert hits and hits[0].file == "src/timers_3.py" and hits[0].symbol == "Timer3"  # parsed afresh, not misread
    assert load_structure(root / ".codelex").covers is None  # saved at close: the claim is gone from disk
    with Project(root) as p:
        p.open()
        assert p.service.structure.build.thread is not None  # so the next open analyzes again...
        assert p.wait_structure(60)
        assert {q: _answer(p, q) for q in QUERIES} == clean  # ...and answers as before the damage
    with Project(root) as p:
        p.open()
        assert p.service.structure.build.thread is None  # complete again


@pytest.mark.parametrize("then", ["stopped", "superseded"])
def test_a_run_stopped_after_its_analysis_records_the_walk_but_a_superseded_one_does_not(tmp_path, monkeypatch, then):
    import codelex.project.structure as upkeep_module

    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
    path = root / "src/timers_0.py"
    path.write_text(path.read_text() + "\n\ndef added_later():\n    pass\n")
    real = upkeep_module.analyze_files

    def analyze_then(*args, **kwargs):
        result = real(*args, **{**kwargs, "should_continue": None})
        upkeep = project.service.structure
        if then == "stopped":  # a one-shot command's exit, right after the analysis
            upkeep.build.stop()
        else:  # a newer walk's run began meanwhile
            with upkeep.lock:
                upkeep.begun = upkeep.build.begin()
        return result

    monkeypatch.setattr(upkeep_module, "analyze_files", analyze_then)
    project = Project(root, build_structure=False)  # (opened below with the structure, in this thread)
    try:
        project.open()
        upkeep = project.service.structure
        files = list_files(root).files
        upkeep.refresh(files, project.index_dir, wait=True)
        assert upkeep.index.record("src/timers_0.py").structure.definitions[-1].name == "added_later"  # kept
        saved = load_structure(root / ".codelex")
        if then == "stopped":
            assert saved.covers == walk_digest(files)  # the next open of this tree has nothing to do
        else:
            assert saved.covers is None
    finally:
        project.close()


def test_a_one_shot_search_lets_a_short_structure_refresh_finish_after_answering(tmp_path, monkeypatch, capsys):
    import time

    import codelex.project.structure as upkeep_module
    from codelex import cli

    root = make_repo(tmp_path / "repo")
    with Project(root) as p:
        p.open()
        assert p.wait_structure(60)
    path = root / "src/timers_0.py"
    path.write_text(path.read_text() + "\n\ndef added_later():\n    pass\n")
    real = upkeep_module.analyze_files

    def slow(*args, **kwargs):  # a refresh that outlasts the search (a large store's checks, a pool's start)
        time.sleep(1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(upkeep_module, "analyze_files", slow)
    monkeypatch.setenv("CODELEX_NO_SERVER", "1")
    assert cli.main(["search", "added_later", "-l", "-q", "--root", str(root)]) == 0
    assert capsys.readouterr().out.split() == ["src/timers_0.py"]
    files = list_files(root).files
    assert load_structure(root / ".codelex").covers == walk_digest(files)  # finished and saved, not stopped
    with Project(root) as p:
        p.open()
        assert p.service.structure.build.thread is None  # the next command has nothing to do
