"""A hostile checkout: codelex never runs the code of the tree it indexes (issue 27, finding 1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelex.runtime import child_import_path, neutral_cwd, python_command
from tests.surfaces.test_cli import _command

# Files that Python would import from the current directory if it were on sys.path.
HOSTILE = ("codelex/__init__.py", "codelex/__main__.py", "json.py", "numpy/__init__.py", "xxhash.py",
           "pickle.py", "tree_sitter/__init__.py", "markdown_it/__init__.py", "mdit_py_plugins/__init__.py")


def _hostile_tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "checkout"
    markers = tmp_path / "markers"
    markers.mkdir()
    root.mkdir()
    for rel in HOSTILE:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        marker = markers / rel.replace("/", "_")
        target.write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(99)\n")
    # More than the structure stage analyzes in-process (64 files): worker processes start.
    for i in range(90):
        (root / f"mod_{i}.py").write_text(f"def handler_{i}(request):\n    return parse_config(request) + {i}\n")
    (root / "docs").mkdir()
    (root / "docs/guide.md").write_text("# Guide\n\n## Parse config\n\nHow to parse config files.\n")
    return root, markers


def _env(tmp_path: Path, **extra) -> dict:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("CODELEX_NO_SERVER", "PYTHONPATH")}
    env.update(XDG_RUNTIME_DIR=str(runtime), **extra)
    return env


def _run(args, cwd: Path, env: dict, timeout: float = 120):
    return subprocess.run([*_command(), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


@pytest.mark.timeout(300)
@pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or os.name != "posix", reason="the server needs Unix sockets")
def test_commands_in_a_hostile_checkout_import_nothing_from_it(tmp_path):
    if not _command()[0].endswith("codelex"):
        pytest.skip("needs the codelex console script (python -m puts the current directory on sys.path)")
    root, markers = _hostile_tree(tmp_path)
    env = _env(tmp_path)
    try:
        indexed = _run(["index"], root, env)
        assert indexed.returncode == 0, indexed.stderr
        assert f"(no-grammar 1, parsed {90 + len(HOSTILE)})" in indexed.stdout and "Traceback" not in indexed.stderr, indexed.stdout + indexed.stderr
        # The first search starts the per-user server; the next ones go through it.
        first = _run(["search", "parse config", "-l"], root, env)
        assert first.returncode == 0 and "mod_" in first.stdout, first.stderr
        deadline = time.monotonic() + 60
        while True:
            status = _run(["serve", "--status"], root, env)
            if status.returncode == 0:
                break
            assert time.monotonic() < deadline, "the server never came up"
            time.sleep(0.2)
        served = _run(["search", "parse config", "-l"], root, env)
        assert served.returncode == 0 and "mod_" in served.stdout, served.stderr
        assert str(root.resolve()) in json.loads(_run(["serve", "--status"], root, env).stdout)["roots"]
        code = _run(["code", "parse config", "--lexical"], root, env)
        assert code.returncode == 0 and "mod_" in code.stdout, code.stderr
        docs = _run(["docs", "parse config"], root, env)  # (served too: Markdown parsed in the server)
        assert docs.returncode == 0 and "docs/guide.md#parse-config" in docs.stdout, docs.stderr
        # A later search of another directory still works (the server never imported the checkout's codelex).
        other = tmp_path / "other"
        other.mkdir()
        (other / "a.py").write_text("def parse_config():\n    pass\n")
        assert _run(["search", "parse config", "-l"], other, env).stdout.split() == ["a.py"]
    finally:
        _run(["serve", "--stop"], root, env)
    assert sorted(p.name for p in markers.iterdir()) == []


def test_child_command_is_isolated_from_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "json.py").write_text("raise SystemExit(42)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # as `python -m` or `python -c` in this directory would
    assert str(tmp_path) not in child_import_path() and "" not in child_import_path()
    proc = subprocess.run(python_command("codelex.runtime:neutral_cwd"), cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # The child starts from a neutral directory and sees the same codelex as the parent.
    probe = ("import codelex, json, os; print(json.dumps([codelex.__file__, os.getcwd(), json.__file__]))")
    proc = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path[:] = {child_import_path()!r}; {probe}"],
                          cwd=neutral_cwd(), capture_output=True, text=True, timeout=60)
    own, cwd, json_file = json.loads(proc.stdout)
    import codelex

    assert Path(own).resolve() == Path(codelex.__file__).resolve()
    assert cwd == neutral_cwd() and not json_file.startswith(str(tmp_path))


@pytest.mark.skipif(os.name != "posix", reason="a shell script as the fsmonitor hook")
def test_the_checkouts_git_config_runs_nothing(tmp_path):
    import shutil

    from codelex.ingest import list_files

    git = shutil.which("git")
    if git is None:
        pytest.skip("no git")
    root = tmp_path / "checkout"
    root.mkdir()
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\necho ''\n")
    hook.chmod(0o755)
    (root / "a.py").write_text("def listed():\n    pass\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a",
               GIT_COMMITTER_EMAIL="a@b")
    for args in (["init", "-q"], ["add", "a.py"], ["commit", "-qm", "x"], ["config", "core.fsmonitor", str(hook)]):
        subprocess.run([git, *args], cwd=root, check=True, env=env, capture_output=True, timeout=60)
    subprocess.run([git, "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root, env=env,
                   capture_output=True, timeout=60)
    if not marker.exists():
        pytest.skip("this git does not run core.fsmonitor for ls-files")
    marker.unlink()
    walk = list_files(root, use_git=True)
    assert walk.source == "git" and [f.path for f in walk.files] == ["a.py"]
    assert not marker.exists()


def _model_folder(folder: Path, make_static_model) -> Path:
    make_static_model().save_pretrained(str(folder))
    return folder


@pytest.mark.parametrize("where", ["pyproject.toml", ".codelex.toml", ".codelex/config.toml"])
@pytest.mark.parametrize("spec", ["model2vec:model", "st:model", "sentence-transformers:/opt/models/x",
                                  "model2vec:/dev", "st:../elsewhere", "./model"])
def test_a_repository_configuration_names_no_model_folder(tmp_path, where, spec):
    """Regression (review finding 3): `embedder = "model2vec:model"` in a committed configuration chose the model
    folder (a config.json linked to /dev/stdin hung `codelex code` and the MCP server; `st:` folders load code
    of their own).  A repository may name only an installed model; a path is a one-line ConfigError."""
    from codelex import ConfigError
    from codelex.project.config import load_config

    root = tmp_path / "repo"
    (root / ".codelex").mkdir(parents=True, mode=0o700)
    text = f'embedder = "{spec}"\n'
    (root / where).write_text("[tool.codelex]\n" + text if where == "pyproject.toml" else text)
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    message = str(caught.value)
    assert where in message and "embedder" in message and "--embedder" in message and "CODELEX_EMBEDDER" in message
    assert "\n" not in message
    (root / where).write_text('[tool.codelex]\nembedder = "minilm"\n' if where == "pyproject.toml"
                              else 'embedder = "minilm"\n')
    assert load_config(root)["embedder"] == "minilm"


@pytest.mark.timeout(120)
@pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev/stdin")
def test_a_model_folder_holding_a_fifo_or_a_device_link_is_refused_not_read(tmp_path, make_static_model):
    """Regression (review finding 3): a model folder whose config.json is a FIFO or a link to /dev/stdin blocked
    the loading thread forever (with the MCP server, reading its own stdin).  A folder the user names must hold
    regular files (links to regular files allowed): anything else is an EmbedderError before the library reads."""
    pytest.importorskip("model2vec")
    from codelex import EmbedderError
    from codelex.dense import embedder_loader

    good = _model_folder(tmp_path / "good", make_static_model)
    assert embedder_loader(f"model2vec:{good}")().dimensions > 0
    linked = tmp_path / "linked"  # a Hugging Face cache's layout: links to blobs elsewhere
    linked.mkdir()
    for f in good.iterdir():
        (linked / f.name).symlink_to(f)
    assert embedder_loader(f"model2vec:{linked}")().dimensions > 0
    for name, plant in (("fifo", lambda p: os.mkfifo(p)), ("stdin", lambda p: p.symlink_to("/dev/stdin")),
                        ("zero", lambda p: p.symlink_to("/dev/zero"))):
        bad = _model_folder(tmp_path / name, make_static_model)
        (bad / "config.json").unlink()
        plant(bad / "config.json")
        with pytest.raises(EmbedderError, match="not a regular file"):
            embedder_loader(f"model2vec:{bad}")
        r = subprocess.run([*_command(), "code", "hello world", "--root", str(tmp_path / "good"), "--embedder",
                            f"model2vec:{bad}"], capture_output=True, text=True, timeout=60, stdin=subprocess.PIPE,
                           env=dict(os.environ, CODELEX_NO_SERVER="1"))
        assert r.returncode == 2 and "not a regular file" in r.stderr and "Traceback" not in r.stderr, r.stderr
