"""Path rules that differ by platform: the ``file:`` filter and path globs case-fold on Windows (the
original's rule), backslashes in filters mean ``/``; stored paths are always ``/``-separated."""

from __future__ import annotations

import os

import pytest

import codelex
from codelex import _reference
from codelex.lexical import masks
from codelex.query import globs

DOCS = [("src/App.py", "def parse_config(): pass\n"), ("lib/app.py", "def parse_config(): pass\n"),
        ("SRC/other.py", "def parse_config(): pass\n")]


@pytest.fixture(params=[False, True], ids=["posix", "windows"])
def windows(request, monkeypatch):
    from codelex._reference import filters

    for module in (masks, filters, globs):
        monkeypatch.setattr(module, "WINDOWS", request.param)
    globs.glob_regex.cache_clear()
    yield request.param
    globs.glob_regex.cache_clear()


@pytest.mark.parametrize("query", ["file:src/app parse", "file:SRC\\App parse", "-file:src parse",
                                   "file:src\\ parse"])
def test_file_filter_folds_case_on_windows_only(windows, query):
    index = codelex.WordIndex.build(DOCS)
    got = sorted(h.file for h in index.search(query))
    parsed = codelex.parse_query(query)
    predicate = _reference.filters_predicate(parsed.filters)
    want = sorted(p for p, _ in DOCS if predicate(p))
    assert got == want  # the native mask and the reference agree, on either platform
    if query == "file:SRC\\App parse":
        assert got == (["src/App.py"] if windows else [])


def test_path_globs_fold_case_on_windows_only(windows):
    index = codelex.WordIndex.build(DOCS)
    got = sorted(h.file for h in index.search("parse", paths=["src/**"]))
    assert got == (["SRC/other.py", "src/App.py"] if windows else ["src/App.py"])


def test_stored_paths_never_use_the_platform_separator(tmp_path):
    from codelex import Project

    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b" / "deep.py").write_text("def parse_config(): pass\n")
    with Project(tmp_path / "repo", build_structure=False, import_graph=False) as project:
        project.open()
        assert [h.file for h in project.search("parse config").results] == ["a/b/deep.py"]
        assert project.on_edit(os.path.join(str(tmp_path / "repo"), "a", "b", "deep.py")) is not None
        assert all("\\" not in p for p in project.index.files)
