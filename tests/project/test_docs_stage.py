"""The documentation as a stage of the project (issue 40): one admission, a job, fed by the same edits."""

from __future__ import annotations

import time

import pytest

from codelex import Project
from codelex.project import docs_upkeep


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "docs/guide.md").write_text("# Guide\n\n## Login\nHow to authenticate a user.\n")
    (root / "notes/vendor.md").write_text("# Vendor\n\n## Login\nThe vendor's authenticate notes.\n")
    (root / "docs/extra.txt").write_text("Install notes: authenticate once.\n")
    (root / "app.py").write_text("def authenticate(user):\n    return user\n")
    return root


def _files(index) -> list[str]:
    return sorted(index.paths)


def test_docs_follow_the_projects_include_and_ignore(repo):
    with Project(repo) as project:
        assert _files(project.docs()) == ["docs/extra.txt", "docs/guide.md", "notes/vendor.md"]
    (repo / ".codelex.toml").write_text('include = ["docs/**"]\n')
    with Project(repo) as project:
        assert _files(project.docs()) == ["docs/extra.txt", "docs/guide.md"]
    (repo / ".codelex.toml").write_text('ignore = ["*.txt"]\n')
    with Project(repo) as project:
        assert _files(project.docs()) == ["docs/guide.md", "notes/vendor.md"]


def test_a_settings_change_reads_the_docs_again(repo):
    with Project(repo) as project:
        assert "notes/vendor.md" in _files(project.docs())
        (repo / ".codelex.toml").write_text('ignore = ["notes/"]\n')
        assert _files(project.docs()) == ["docs/extra.txt", "docs/guide.md"]


def test_edits_reach_the_docs_and_only_the_edited_files_are_parsed(repo, monkeypatch):
    from codelex.docs import index as docs_index

    with Project(repo) as project:
        first = project.docs()
        parsed = []
        real = docs_index.sections_from_file
        monkeypatch.setattr(docs_index, "sections_from_file", lambda p, t: (parsed.append(p), real(p, t))[1])
        (repo / "docs/guide.md").write_text("# Guide\n\n## Rotation\nKeys rotate nightly.\n")
        project.on_edit(repo / "docs/guide.md")
        (repo / "docs/new.md").write_text("# New\n\nfresh words here\n")
        project.on_edit("docs/new.md")
        project.on_edit("app.py", "def other(): pass\n")  # (code: not documentation)
        after = project.docs()
        assert sorted(parsed) == ["docs/guide.md", "docs/new.md"]
        assert [h.section.heading for h in after.search("rotate nightly", 1)] == ["Rotation"]
        assert [h.section.path for h in after.search("fresh words", 1)] == ["docs/new.md"]
        assert "docs/guide.md" in [h.section.path for h in first.search("authenticate", 5)]
        assert "docs/guide.md" not in [h.section.path for h in after.search("authenticate", 5)]
        (repo / "docs/new.md").unlink()
        project.on_edit("docs/new.md")
        assert "docs/new.md" not in project.docs().paths


def test_an_unwatched_project_checks_its_docs_after_the_ttl(repo, monkeypatch):
    with Project(repo) as project:
        first = project.docs()
        (repo / "docs/guide.md").write_text("# Guide\n\n## Rotation\nKeys rotate nightly.\n")
        assert project.docs() is first  # within the TTL: the index held
        monkeypatch.setattr(docs_upkeep, "DOCS_TTL_S", 0.0)
        assert [h.section.heading for h in project.docs().search("rotate nightly", 1)] == ["Rotation"]


def test_a_first_reading_that_takes_too_long_is_a_timeout(repo, monkeypatch):
    from codelex.docs import DocsIndex

    real = DocsIndex.for_project.__func__

    def slow(cls, *args, **kwargs):
        time.sleep(1.0)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(DocsIndex, "for_project", classmethod(slow))
    with Project(repo) as project:
        with pytest.raises(TimeoutError):
            project.docs(timeout=0.1)
        assert _files(project.docs(timeout=30)) == ["docs/extra.txt", "docs/guide.md", "notes/vendor.md"]
