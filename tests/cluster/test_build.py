"""Builds on Ray: progress as units finish, skipped unchanged units, a worker dying, a unit that always fails."""

from __future__ import annotations

import os
import time
import sys

import pytest

pytest.importorskip("ray")

from codelex.cluster.build import build_cluster, build_unit, parse_units  # noqa: E402
from codelex.cluster.store import ShardStore  # noqa: E402

from .conftest import make_repos  # noqa: E402


def _by_value(ray) -> None:
    """Ray's workers cannot import this test module by name: its functions travel by value."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def dies_once(unit, store_url, **kwargs):
    """A unit's build whose worker process dies on its first attempt (as an OOM kill or a crash would)."""
    marker = os.path.join(os.path.dirname(store_url), f"died-{unit.name}")
    if unit.name == "beta" and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return build_unit(unit, store_url, **kwargs)


def test_build_reports_units_as_they_finish_and_skips_unchanged_ones(ray_local, tmp_path):
    repos = make_repos(tmp_path / "src")
    store = str(tmp_path / "store")
    units = parse_units([str(p) for p in repos.values()])
    events = []
    report = build_cluster(units, store, progress=events.append)
    assert report.ok and sorted(report.built) == ["alpha", "beta", "gamma"]
    assert sorted(e.unit for e in events) == ["alpha", "beta", "gamma"]
    assert [e.done for e in events] == [1, 2, 3] and all(e.total == 3 for e in events)
    s = ShardStore(store)
    assert sorted(s.manifest()) == ["alpha", "beta", "gamma"] and s.manifest_generation() == 1
    (repos["gamma"] / "server.ts").write_text("export function stopServer() {}\n")
    report = build_cluster(units, store)
    assert report.built == ["gamma"] and sorted(report.unchanged) == ["alpha", "beta"]
    assert s.manifest_generation() == 2
    assert s.open_shard(s.manifest()["gamma"]).search("stop server")[0].file == "server.ts"


def test_a_dying_worker_is_retried_and_a_failing_unit_reported(ray_local, tmp_path):
    """The build finishes: the unit whose worker died once is built on its retry, the one that always fails
    is named with why (after its retries), and keeps its previous shard in the manifest."""
    _by_value(ray_local)
    repos = make_repos(tmp_path / "src")
    store = str(tmp_path / "store")
    alpha = parse_units([f"alpha={repos['alpha']}"])
    build_cluster(alpha, store)
    units = parse_units([f"alpha={tmp_path / 'gone'}", str(repos["beta"]), str(repos["gamma"])])
    events = []
    report = build_cluster(units, store, retries=1, progress=events.append, builder=dies_once)
    assert sorted(report.built) == ["beta", "gamma"]
    assert report.retried == {"alpha": 1, "beta": 1}
    assert list(report.failed) == ["alpha"] and "not a directory" in report.failed["alpha"]
    kinds = [(e.kind, e.unit) for e in events]
    assert ("retry", "beta") in kinds and ("failed", "alpha") in kinds and ("built", "beta") in kinds
    assert kinds.count(("retry", "alpha")) == 1
    died = next(e for e in events if e.kind == "retry" and e.unit == "beta")
    assert "Worker" in died.detail or "died" in died.detail.lower(), died.detail
    manifest = ShardStore(store).manifest()
    assert sorted(manifest) == ["alpha", "beta", "gamma"]  # alpha: its last good shard, still served
    assert manifest["alpha"].files == 3


def test_a_changed_unit_is_updated_on_its_previous_shard(tmp_path):
    """Only the changed files are indexed again, and the shard ranks as a whole build of the same files."""
    import shutil

    from codelex.cluster.build import build_unit
    from codelex.cluster.store import ShardStore

    repos = make_repos(tmp_path / "src")
    repo = tmp_path / "unit"
    shutil.copytree(repos["alpha"], repo)
    for i in range(30):
        (repo / f"src/mod{i}.py").write_text(f"def handler_{i}(config):\n    return parse_config(config) + {i}\n")
    hour_ago = time.time() - 3600  # (files written just before a build are indexed again: racily clean)
    for p in repo.rglob("*"):
        os.utime(p, (hour_ago, hour_ago))
    incremental, whole = str(tmp_path / "inc"), str(tmp_path / "whole")
    (unit,) = parse_units([f"live={repo}"])
    assert build_unit(unit, incremental)["updated_files"] is None  # (the first build: whole)
    (repo / "src" / "mod3.py").write_text("def tokenize_yaml(text):\n    return text.split()\n")
    (repo / "src" / "mod4.py").unlink()
    (repo / "src" / "new.py").write_text("def load_settings_twice(path): pass\n")
    result = build_unit(unit, incremental)
    assert result["status"] == "built" and result["updated_files"] == 3
    assert build_unit(unit, whole)["updated_files"] is None
    inc_store, whole_store = ShardStore(incremental), ShardStore(whole)
    a = inc_store.open_shard(inc_store.record("live"))
    b = whole_store.open_shard(whole_store.record("live"))
    assert inc_store.record("live").content_hash == whole_store.record("live").content_hash
    assert sorted(a.files) == sorted(b.files) and "src/mod4.py" not in a.files
    for query in ["tokenize yaml", "parse config", "handler 3", "load settings", "config", "handler"]:
        assert [(h.file, round(h.score, 9)) for h in a.search(query, limit=20)] == [
            (h.file, round(h.score, 9)) for h in b.search(query, limit=20)
        ], query
    assert build_unit(unit, incremental)["status"] == "unchanged"


def test_a_checkout_s_own_modules_never_reach_the_workers(tmp_path):
    """Ray puts the driver's working directory on its workers' import path: `cluster index` run inside a
    hostile tree (a numpy.py, fsspec.py, json.py or codelex/ at its top) must import none of them, and a
    relative --store still names the directory under the one the command ran in."""
    import subprocess

    tree = tmp_path / "tree"
    (tree / "codelex").mkdir(parents=True)
    (tree / "unit").mkdir()
    (tree / "unit" / "a.py").write_text("def parse_config(): pass\n")
    marker = tmp_path / "imported"
    for name in ("numpy.py", "fsspec.py", "json.py", "codelex/__init__.py"):
        (tree / name).write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "PYTHONPATH")}
    codelex = os.path.join(os.path.dirname(sys.executable), "codelex")  # (the installed command, as a user runs it)
    proc = subprocess.run(
        [codelex, "cluster", "index", "--store", "shards", "--num-cpus", "1", "unit"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()
    assert (tree / "shards" / "manifest.json").is_file()
