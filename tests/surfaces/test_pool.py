"""The one pool of opened projects that the per-user server and the MCP server share (codelex.project.pool)."""

from __future__ import annotations

import pytest

from codelex.errors import ConfigError
from codelex.project.pool import ProjectPool


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name):\n    return name\n")
    (root / "README.md").write_text("# Demo\n\n## Login\n\nHow to authenticate a user.\n")
    return root.resolve()


def test_both_servers_get_one_watched_project_per_root_and_options(repo):
    pool = ProjectPool()
    try:
        mcp = pool.get(repo)  # MCP: made and watched, nothing waited for
        assert mcp.service.watch and mcp.status in ("idle", "building", "ready")
        served = pool.project(repo, {})  # the server: the same project, opened and published
        assert served is mcp and served.status == "ready" and served.watching
        assert pool.get(repo) is mcp and pool.project(repo) is mcp
        capped = pool.project(repo, {"max_bytes": 10})
        assert capped is not mcp and capped.status == "ready"
        assert pool.watch_states() == {str(repo): "watching"}
        assert served.search("authenticate").results[0].file == "src/auth.py"
        mcp.close()  # a closed project is made again
        again = pool.get(repo)
        assert again is not mcp and again.status != "closed"
    finally:
        pool.close()
    assert pool.watch_states() == {}


def test_a_broken_configuration_is_the_next_calls_error(repo):
    pool = ProjectPool()
    try:
        pool.project(repo, {})
        (repo / ".codelex.toml").write_text("ignore = 3\n")
        for take in (pool.get, pool.project):
            with pytest.raises(ConfigError, match="ignore"):
                take(repo)
        (repo / ".codelex.toml").write_text("ignore = []\n")
        assert pool.project(repo).status == "ready"
    finally:
        pool.close()


def test_docs_are_kept_and_follow_the_watchers_edits(repo):
    pool = ProjectPool()
    try:
        first = pool.docs(repo)
        assert any(h.section.heading == "Login" for h in first.search("authenticate", 5))
        assert pool.docs(repo) is first  # nothing changed: the same generation
        project = pool.get(repo)
        assert project.watching and project.docs_status["version"] == 1
        doc = next(p for p in repo.rglob("*.md") if ".codelex" not in p.parts)
        doc.write_text(doc.read_text() + "\n## Rotation\nKeys rotate nightly.\n")
        assert project.sync()
        again = pool.docs(repo)
        assert again is not first and [h.section.heading for h in again.search("rotate nightly", 1)] == ["Rotation"]
        assert project.docs_status["version"] == 2
        doc.unlink()
        assert project.sync()
        assert not pool.docs(repo).search("rotate nightly", 1)
    finally:
        pool.close()
