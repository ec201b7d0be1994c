"""Project configuration from a checkout nobody vetted: hostile files, bad patterns, and changes followed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codelex import ConfigError, Project
from codelex.project.config import load_config

CONFIG_FILES = ["pyproject.toml", ".codelex.toml", ".codelexignore", ".codelex/config.toml"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/auth.py").write_text("def authenticate_user(name):\n    return name\n")
    (root / "src/gen.py").write_text("def authenticate_generated():\n    return 1\n")
    return root


def files(project: Project, query: str = "authenticate") -> list[str]:
    return sorted(h.file for h in project.search(query, limit=20).results)


# --- configuration files that are not regular files --------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", CONFIG_FILES)
def test_a_fifo_configuration_file_is_an_error_not_a_hang(repo, name):
    (repo / name).parent.mkdir(exist_ok=True)
    os.mkfifo(repo / name)
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert name.rsplit("/", 1)[-1] in str(info.value) and "not a regular file" in str(info.value)
    with pytest.raises(ConfigError):
        Project(repo)


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_a_symlinked_or_directory_configuration_file_is_an_error(repo, tmp_path, name):
    (repo / name).parent.mkdir(exist_ok=True)
    outside = tmp_path / "outside.toml"
    outside.write_text("[tool.codelex]\nmax_files = 1\n")
    (repo / name).symlink_to(outside)
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert name.rsplit("/", 1)[-1] in str(info.value) and "symbolic link" in str(info.value)
    (repo / name).unlink()
    (repo / name).mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert name.rsplit("/", 1)[-1] in str(info.value) and "not a regular file" in str(info.value)


# --- bad values: one line naming the file and the key ---------------------------------------------------


@pytest.mark.parametrize("key", ["ignore", "include"])
@pytest.mark.parametrize("pattern", ["[", "[z-a]", "\\", "src/\\"])
def test_bad_patterns_are_configuration_errors(repo, key, pattern):
    escaped = pattern.replace("\\", "\\\\")
    (repo / ".codelex.toml").write_text(f'{key} = ["src/", "{escaped}"]\n')
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    message = str(info.value)
    assert message.startswith(f"{repo / '.codelex.toml'}: {key}: bad pattern {pattern!r}: ")
    assert "\n" not in message


@pytest.mark.parametrize("key", ["include", "languages"])
def test_an_empty_include_or_languages_list_is_refused(repo, key):
    # Read as "no restriction" it indexed everything: the opposite of what an empty list says.
    (repo / ".codelex.toml").write_text(f"{key} = []\n")
    with pytest.raises(ConfigError, match=f"{key} is empty: list what to index, or remove the key"):
        load_config(repo)
    (repo / ".codelex.toml").write_text('ignore = []\n')  # an empty ignore list means what it says
    load_config(repo)


def test_bad_pattern_arguments_are_value_errors(repo):
    with pytest.raises(ValueError, match=r"ignore: bad pattern '\[z-a\]'"):
        Project(repo, ignore=["[z-a]"])
    with pytest.raises(ValueError, match="include: bad pattern"):
        Project(repo, include=["\\"])


@pytest.mark.parametrize("text", ["x = " + "[" * 20000 + "]" * 20000 + "\n",
                                  "x = " + "{a=" * 20000 + "}" * 20000 + "\n"])
def test_deep_nesting_is_a_configuration_error(repo, text):
    (repo / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match="pyproject.toml: nested too deeply"):
        load_config(repo)


def test_oversized_configuration_file_is_an_error(repo):
    with open(repo / "pyproject.toml", "wb") as f:
        f.truncate(64 << 20)
    with pytest.raises(ConfigError, match="pyproject.toml: larger than"):
        load_config(repo)


def test_codelexignore_lines_git_would_accept_never_fail_a_build(repo):
    (repo / ".codelexignore").write_text("[z-a]\nsrc/\\\n[\nsrc/gen.py\n")
    assert load_config(repo)["ignore"] == ["[", "src/gen.py"]  # the lines that mean something to pathspec
    with Project(repo, build_structure=False) as project:
        project.open()
        assert project.status == "ready", project.status_reason
        assert files(project) == ["src/auth.py"]


# --- changes followed ---------------------------------------------------------------------------------------


def test_configuration_changes_are_followed_by_an_open_project(repo):
    with Project(repo, build_structure=False) as project:
        project.open()
        assert files(project) == ["src/auth.py", "src/gen.py"]
        (repo / ".codelexignore").write_text("src/gen.py\n")
        assert project.reload_config()
        assert files(project) == ["src/auth.py"] and "src/gen.py" not in project.index
        assert project.config["ignore"] == ["src/gen.py"]
        os.unlink(repo / ".codelexignore")
        (repo / "pyproject.toml").write_text('[tool.codelex]\ninclude = ["src/gen.py"]\n')
        project.refresh()  # a refresh re-reads the configuration as well
        assert files(project) == ["src/gen.py"]
        (repo / "pyproject.toml").write_text('[tool.codelex]\ninclude = ["[z-a]"]\n')
        with pytest.raises(ConfigError, match="include: bad pattern"):
            project.search("authenticate")
        with pytest.raises(ConfigError):
            project.reload_config()
        (repo / "pyproject.toml").write_text('[tool.codelex]\nmax_files = 5\n')
        assert project.reload_config()
        assert files(project) == ["src/auth.py", "src/gen.py"]
        assert not project.reload_config()  # unchanged: nothing to do


def test_arguments_still_override_a_changed_configuration(repo):
    with Project(repo, build_structure=False, include=["src/auth.py"]) as project:
        project.open()
        (repo / ".codelex.toml").write_text('include = ["src/gen.py"]\n')
        assert not project.reload_config()  # the argument wins: admission did not change
        assert files(project) == ["src/auth.py"]


def test_a_watched_project_follows_configuration_and_ignore_files(repo):
    pytest.importorskip("watchdog")
    (repo / "src/sub").mkdir()
    (repo / "src/sub/deep.py").write_text("def authenticate_deep():\n    pass\n")
    with Project(repo, build_structure=False, watch=True, use_git=False) as project:
        project.open()
        assert project.watching, project.watch_status
        assert files(project) == ["src/auth.py", "src/gen.py", "src/sub/deep.py"]
        (repo / ".codelexignore").write_text("gen.py\n")
        deadline = time.monotonic() + 20  # the watcher alone (no sync, no search) adopts it
        while sorted(project.index.files) != ["src/auth.py", "src/sub/deep.py"]:
            assert time.monotonic() < deadline, sorted(project.index.files)
            time.sleep(0.02)
        (repo / "src/sub/.gitignore").write_text("deep.py\n")
        assert project.sync()
        assert sorted(project.index.files) == ["src/auth.py"]
        (repo / "src/sub/.gitignore").write_text("other.py\n")
        (repo / ".codelex").mkdir(exist_ok=True)
        (repo / ".codelex/config.toml").write_text('languages = ["rust"]\n')
        assert project.sync()
        assert sorted(project.index.files) == []
        os.unlink(repo / ".codelex/config.toml")
        os.unlink(repo / ".codelexignore")
        assert project.sync()
        assert sorted(project.index.files) == ["src/auth.py", "src/gen.py", "src/sub/deep.py"]


def test_new_settings_are_saved_even_when_no_file_changes(repo):
    with Project(repo, build_structure=False) as project:
        project.open()
        (repo / ".codelexignore").write_text("nothing_is_called_this_*\n")  # admits exactly the same files
        project.reload_config(wait=True)
        files = sorted(project.index.files)
    with Project(repo, build_structure=False) as project:  # a later process: loads, no rebuild for its options
        project.open()
        assert project.last_report.mode == "incremental", project.last_report
        assert sorted(project.index.files) == files
