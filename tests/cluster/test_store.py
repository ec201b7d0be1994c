"""The shard store: records checked as untrusted input, atomic layout, a store that is not a local directory."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fsspec")

from codelex.cluster.build import build_unit, parse_units  # noqa: E402
from codelex.cluster.store import ShardStore, UnitRecord, check_unit_name  # noqa: E402
from codelex.errors import IndexFormatError  # noqa: E402

from .conftest import make_repos  # noqa: E402


def test_unit_specs():
    units = parse_units(["/srv/a/", "b2=/srv/x", "git+file:///srv/git/c.git", "/srv/d.git"])
    assert [(u.name, u.is_git) for u in units] == [("a", False), ("b2", False), ("c", True), ("d", True)]
    with pytest.raises(ValueError, match="two units"):
        parse_units(["/x/a", "/y/a"])
    with pytest.raises(ValueError, match="no source"):
        parse_units(["a="])
    for bad in ("", ".hidden", "a b", "a:b", "x" * 129, "a/b"):
        with pytest.raises(ValueError):
            check_unit_name(bad)


def test_build_skips_unchanged_units_without_reading(tmp_path):
    repos = make_repos(tmp_path / "src")
    store = str(tmp_path / "store")
    (unit,) = parse_units([str(repos["alpha"])])
    first = build_unit(unit, store)
    assert first["status"] == "built" and first["record"]["files"] == 3
    again = build_unit(unit, store)
    assert again["status"] == "unchanged" and not again["read"]
    (repos["alpha"] / "src/config.py").touch()  # same bytes, new mtime: read, hashed, not rebuilt
    touched = build_unit(unit, store)
    assert touched["status"] == "unchanged" and touched["read"]
    (repos["alpha"] / "src/config.py").write_text("def parse_yaml(): pass\n")
    changed = build_unit(unit, store)
    assert changed["status"] == "built" and changed["record"]["content_hash"] != first["record"]["content_hash"]
    s = ShardStore(store)
    index = s.open_shard(s.record("alpha"))
    assert index.search("parse yaml")[0].file == "src/config.py"
    assert (tmp_path / "store" / "units" / "alpha.json").stat().st_mode & 0o077 == 0  # owner-only


def test_untrusted_records_are_refused(tmp_path):
    repos = make_repos(tmp_path / "src")
    store = str(tmp_path / "store")
    record = build_unit(parse_units([str(repos["beta"])])[0], store)["record"]
    assert UnitRecord.from_dict(record).name == "beta"
    for bad in ({**record, "name": "../x"}, {**record, "content_hash": "../../etc"}, {**record, "files": -1},
                {**record, "files": True}, {k: v for k, v in record.items() if k != "shard_digest"}, [], "x"):
        with pytest.raises(IndexFormatError):
            UnitRecord.from_dict(bad)
    s = ShardStore(store)
    s.put_manifest({"beta": UnitRecord.from_dict(record)})
    assert s.manifest_generation() == 1
    manifest = tmp_path / "store" / "manifest.json"
    body = json.loads(manifest.read_text())
    body["units"]["beta"]["shard_bytes"] = "many"
    manifest.write_text(json.dumps(body))
    with pytest.raises(IndexFormatError, match="corrupt cluster record"):
        s.manifest()
    manifest.write_text("{not json")
    with pytest.raises(IndexFormatError, match="not JSON"):
        s.manifest()
    (tmp_path / "store" / "units" / "beta.json").write_text("[]")
    assert s.record("beta") is None  # an unreadable record: the unit is rebuilt


def test_a_store_that_is_not_a_local_directory(tmp_path):
    """An fsspec store (memory://, as s3:// would be): shards put whole, fetched into a private cache and
    checked against the record's digest, then validated in full."""
    repos = make_repos(tmp_path / "src")
    url = f"memory://codelex-test-{tmp_path.name}"
    (unit,) = parse_units([str(repos["gamma"])])
    assert build_unit(unit, url)["status"] == "built"
    s = ShardStore(url)
    assert not s.local
    record = s.record("gamma")
    assert s.has_shard(record)
    cache = tmp_path / "cache"
    index = s.open_shard(record, cache)
    assert index.search("parse config")[0].file == "index.ts"
    copy = next(cache.rglob("index.clx"))
    assert copy.stat().st_mode & 0o077 == 0
    # A shard that does not match its record is refused, never loaded.
    with s.fs.open(f"{s.path}/{record.shard}/index.clx", "wb") as f:
        f.write(b"forged")
    copy.unlink()
    with pytest.raises(IndexFormatError, match="digest"):
        s.open_shard(record, cache)


def test_a_git_url_unit_is_cloned_and_built(tmp_path):
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    repos = make_repos(tmp_path / "src")
    work = repos["beta"]
    env = dict(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x",
               HOME=str(tmp_path), PATH="/usr/bin:/bin")
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"]):
        subprocess.run([git, "-C", str(work), *argv], check=True, env=env, timeout=60)
    bare = tmp_path / "beta.git"
    subprocess.run([git, "clone", "-q", "--bare", str(work), str(bare)], check=True, env=env, timeout=60)
    (unit,) = parse_units([f"git+file://{bare}"])
    assert unit.name == "beta" and unit.is_git
    result = build_unit(unit, str(tmp_path / "store"))
    assert result["status"] == "built" and result["record"]["files"] == 2
    assert result["record"]["source"] == f"git+file://{bare}"
    # A fresh clone has new mtimes: its contents are hashed, and an unchanged unit is not rebuilt.
    assert build_unit(unit, str(tmp_path / "store"))["status"] == "unchanged"


def test_a_git_url_unit_never_runs_a_git_a_relative_path_entry_names(tmp_path, monkeypatch):
    """Issue 39: a planted ``bin/git`` with ``PATH=bin:$PATH`` ran; git is looked up in absolute entries only."""
    import os

    from codelex.cluster.build import _clone

    planted = tmp_path / "bin" / "git"
    planted.parent.mkdir()
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\nexit 1\n")
    planted.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "bin" + os.pathsep + "/nonexistent-codelex-dir")
    with pytest.raises(FileNotFoundError, match="git is not installed"):
        _clone(f"file://{tmp_path / 'nothing.git'}", str(tmp_path / "into"))
    assert not (tmp_path / "ran").exists()
