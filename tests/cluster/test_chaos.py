"""The chaos suite: faults injected into a served cluster, each with its outcome asserted.

Every answer is checked against a local federation over the same shard files: an answer is either exact
(no shard missing, results equal to the federation's over every shard) or labelled partial, its missing
shards named, its results equal to the federation's over the shards that answered.  Never a wrong
complete answer, never a wait past the deadline.  Recovery (the cluster exact again, every replica loaded)
is asserted within a bound; `benchmarks/cluster_chaos.py` measures the times.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from codelex.cluster import serve as serve_module  # noqa: E402
from codelex.cluster.build import build_cluster, parse_units  # noqa: E402
from codelex.cluster.serve import Coordinator, ShardHolder, start_coordinator, stop_coordinator  # noqa: E402
from codelex.cluster.store import ShardStore  # noqa: E402
from codelex.errors import ClusterError  # noqa: E402

from .conftest import make_repos  # noqa: E402

pytestmark = pytest.mark.chaos

QUERIES = ["parse config", "register route", "load settings path", "lang:go route", "repo:gamma parse",
           "server", "split words", "parsing configs", "how are servers started"]
RECOVERY_BOUND_S = 90.0


@pytest.fixture(scope="module")
def sources(ray_local, tmp_path_factory):
    base = tmp_path_factory.mktemp("chaos")
    repos = make_repos(base / "src")
    store = base / "store"
    assert build_cluster(parse_units([str(p) for p in repos.values()]), str(store)).ok
    return base, repos, store


@pytest.fixture
def store(sources, tmp_path):
    """A private copy of the built store (a test may corrupt its files)."""
    _, _, built = sources
    own = tmp_path / "store"
    shutil.copytree(built, own)
    return own


def _federation(store_path: Path, names=None):
    from codelex.federation import Federation

    s = ShardStore(str(store_path))
    records = s.manifest()
    return Federation([(n, s.open_shard(r)) for n, r in sorted(records.items()) if names is None or n in names])


class Oracle:
    """The expected answers: per set of answering shards, a federation over their (intact) files."""

    def __init__(self, store_path: Path) -> None:
        self.pristine = store_path.parent / "pristine"
        shutil.copytree(store_path, self.pristine)
        self.names = sorted(ShardStore(str(self.pristine)).manifest())
        self.cache: dict = {}
        self.checked = 0

    def check(self, query: str, answer: dict) -> bool:
        """Assert ``answer`` is exact or a labelled partial answer equal to its shards' federation's; whether
        it was exact."""
        missing = set(answer["missing"])
        assert answer.get("partial", bool(missing)) == bool(missing), answer
        present = tuple(n for n in self.names if n not in missing)
        if not present:
            assert answer["results"] == []
            self.checked += 1
            return False
        if present not in self.cache:
            self.cache[present] = _federation(self.pristine, set(present))
        expected = [h.to_dict() for h in self.cache[present].search(query, limit=10)] if not (
            query.startswith("repo:") and query.split()[0][5:] in missing) else []
        assert answer["results"] == expected, (query, answer["missing"], answer["results"][:2], expected[:2])
        self.checked += 1
        return not missing


def _ask_all(coordinator, oracle: Oracle, deadline: float = 5.0) -> bool:
    """Every query once, each checked and within its deadline; whether all were exact."""
    missing = {}
    for query in QUERIES:
        started = time.monotonic()
        answer = coordinator.search(query, limit=10, deadline_s=deadline)
        assert time.monotonic() - started < deadline + 1.0, (query, time.monotonic() - started)
        if not oracle.check(query, answer):
            missing.update(answer["missing"])
    return missing == {} or missing


def _until(predicate, bound: float = RECOVERY_BOUND_S, step: float = 0.25) -> float:
    """Seconds until ``predicate()`` holds (AssertionError after ``bound``)."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < bound, "no recovery within the bound"
        time.sleep(step)
    return time.monotonic() - started


def _healthy(coordinator) -> bool:
    status = coordinator.status()
    return not status["errors"] and not status["degraded"] and all(a["error"] is None for a in status["actors"])


@pytest.fixture
def fast_checks(monkeypatch):
    """The coordinator's (this process's) schedule shortened for the tests."""
    monkeypatch.setattr(serve_module, "HEALTH_TIMEOUT_S", 1.0)
    monkeypatch.setattr(serve_module, "LOAD_RETRY_S", 0.5)


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_a_stopped_or_killed_holder_is_answered_around_and_replaced(store, fast_checks, how):
    oracle = Oracle(store)
    coordinator = Coordinator(str(store), health_interval=0.3)
    victim = None
    try:
        status = coordinator.start(actors=2, replicas=2)
        assert status["replicas"] == 2 and all(len(a["shards"]) == 3 for a in status["actors"])
        assert _ask_all(coordinator, oracle) is True
        victim = status["actors"][0]["pid"]
        os.kill(victim, signal.SIGSTOP if how == "stop" else signal.SIGKILL)
        for _ in range(3):  # every answer exact: the other replica answers, hedged or retried
            assert _ask_all(coordinator, oracle) is True
        _until(lambda: _healthy(coordinator) and coordinator.status()["actors"][0]["pid"] not in (None, victim))
        assert _ask_all(coordinator, oracle) is True
        assert any("actor 0" in what for _t, what in coordinator.status()["events"]) or how == "kill"
    finally:
        if victim is not None and how == "stop":
            try:
                os.kill(victim, signal.SIGCONT)
            except ProcessLookupError:
                pass
        coordinator.stop()


#: The directory whose files name the holder processes that answer late (see SlowHolder).
SLOW_DIR = "/nonexistent"


class SlowHolder(ShardHolder):
    """A holder that answers 3 s late while a file named by its pid is in SLOW_DIR."""

    def _late(self) -> None:
        if os.path.exists(os.path.join(SLOW_DIR, str(os.getpid()))):
            time.sleep(3.0)

    def query_stats(self, names, request, again=None):
        self._late()
        return super().query_stats(names, request, again)

    def search(self, requests, request, global_stats):
        self._late()
        return super().search(requests, request, global_stats)


def test_a_slow_replica_is_hedged(store, ray_local, tmp_path, monkeypatch):
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(sys.modules[__name__], "SLOW_DIR", str(tmp_path))
    oracle = Oracle(store)
    coordinator = Coordinator(str(store), holder=SlowHolder)
    try:
        status = coordinator.start(actors=2, replicas=2)
        for _ in range(3):
            assert _ask_all(coordinator, oracle) is True  # (the shards' latency history)
        (tmp_path / str(status["actors"][1]["pid"])).touch()
        for query in QUERIES * 2:
            started = time.monotonic()
            answer = coordinator.search(query, limit=10, deadline_s=5.0)
            assert time.monotonic() - started < 2.5, query  # a hedge, not the slow replica's 3 s
            assert oracle.check(query, answer)
    finally:
        coordinator.stop()


def _shard_file(store_path: Path, name: str) -> Path:
    record = ShardStore(str(store_path)).manifest()[name]
    return store_path / record.shard / "index.clx"


def _corrupt(file: Path, how: str) -> bytes:
    data = file.read_bytes()
    if how == "flip":
        with open(file, "r+b") as f:  # in place: the served mapping sees the new bytes
            for i in range(200):
                at = (len(data) // 3 + i * 37) % len(data)
                f.seek(at)
                f.write(bytes([data[at] ^ 0x5A]))
    elif how == "truncate":
        with open(file, "r+b") as f:
            f.truncate(len(data) // 2)
    elif how == "replace":  # a new file renamed over it (as a save does): the served bytes are untouched
        tmp = file.with_suffix(".tmp")
        tmp.write_bytes(b"garbage" * 100)
        os.replace(tmp, file)
    else:
        file.unlink()
    return data


@pytest.mark.parametrize("how", ["flip", "truncate", "delete", "replace"])
def test_a_damaged_shard_file_is_never_answered_from(store, fast_checks, how):
    """Bytes changed in place (flipped, truncated): the shard is named missing at once, every replica mapping
    that file.  The path deleted or replaced by a rename: the bytes served are intact, every answer exact."""
    oracle = Oracle(store)
    coordinator = Coordinator(str(store), health_interval=0.3)
    try:
        coordinator.start(actors=2, replicas=2)
        assert _ask_all(coordinator, oracle) is True
        victim = _shard_file(store, "gamma")
        original = _corrupt(victim, how)
        partial = 0
        for _ in range(3):
            for query in QUERIES:
                answer = coordinator.search(query, limit=10, deadline_s=5.0)
                if not oracle.check(query, answer):
                    partial += 1
                    assert set(answer["missing"]) == {"gamma"}, answer["missing"]
        if how in ("flip", "truncate"):
            assert partial == len(QUERIES) * 3
        else:
            assert partial == 0
        victim.unlink(missing_ok=True)
        victim.write_bytes(original)  # the store repaired: the shard serves again, unprompted
        _until(lambda: _healthy(coordinator))
        assert _ask_all(coordinator, oracle) is True
    finally:
        coordinator.stop()


def test_a_scrub_finds_what_no_stat_shows(store, ray_local):
    """A byte changed behind the file's back (its times put back, as a disk's corruption would leave them):
    the scheduled digest check drops the shard."""
    coordinator = Coordinator(str(store))
    try:
        coordinator.start(actors=1, replicas=1)
        victim = _shard_file(store, "beta")
        st = victim.stat()
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0xFF
        with open(victim, "r+b") as f:
            f.write(data)
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
        holder = coordinator.actors[0]
        failed = ray_local.get(holder.scrub.remote(), timeout=60)
        assert list(failed) == ["beta"] and "digest" in failed["beta"]
        coordinator.check_health()
        answer = coordinator.search("register route", deadline_s=5.0)
        assert "beta" in answer["missing"] and answer["partial"]
    finally:
        coordinator.stop()


@pytest.mark.parametrize("damage", ["garbage", "missing", "empty", "every shard corrupt"])
def test_a_serve_that_fails_leaves_nothing_behind(store, ray_local, damage):
    manifest = store / "manifest.json"
    if damage == "every shard corrupt":
        for name in ShardStore(str(store)).manifest():
            _corrupt(_shard_file(store, name), "flip")
    elif damage == "garbage":
        manifest.write_text("{not json")
    elif damage == "missing":
        manifest.unlink()
    else:
        import json

        data = json.loads(manifest.read_text())
        data["units"] = {}
        manifest.write_text(json.dumps(data))
    name = f"chaos-broken-{damage.replace(' ', '-')}"
    with pytest.raises(ClusterError):
        start_coordinator(str(store), name=name, actors=1, timeout=60.0)
    with pytest.raises(ValueError):
        ray_local.get_actor(name)


def test_the_coordinator_restarts_after_its_process_dies(store, ray_local):
    oracle = Oracle(store)
    name = "chaos-restart"
    handle, status = start_coordinator(str(store), name=name, actors=2, replicas=2, timeout=120.0,
                                       health_interval=0.5)
    try:
        assert not status["errors"] and status["replicas"] == 2
        first = status["pid"]
        os.kill(first, signal.SIGKILL)

        def exact_again() -> bool:
            try:
                answer = ray_local.get(handle.search.remote("parse config", deadline_s=5.0), timeout=15)
            except (ray_local.exceptions.RayActorError, ray_local.exceptions.GetTimeoutError):
                return False
            return oracle.check("parse config", answer)  # (a partial answer while it loads: checked, not exact)

        _until(exact_again)
        assert ray_local.get(handle.status.remote(), timeout=30)["pid"] != first
    finally:
        stop_coordinator(name)


def test_the_command_line_says_a_partial_answer(store, ray_local, capsys):
    from codelex.cli import main

    try:
        assert main(["cluster", "serve", "--store", str(store), "--actors", "2", "--name", "chaos-cli"]) == 0
        assert "2 replicas each" in capsys.readouterr().out
        assert main(["cluster", "search", "parse config", "--name", "chaos-cli"]) == 0
        capsys.readouterr()
        _corrupt(_shard_file(store, "gamma"), "flip")
        assert main(["cluster", "search", "parse config", "--name", "chaos-cli"]) == 3
        err = capsys.readouterr().err
        assert "missing shard gamma" in err and "partial answer" in err
        assert main(["cluster", "search", "parse config", "--name", "chaos-cli", "--allow-partial"]) == 0
    finally:
        main(["cluster", "serve", "--stop", "--name", "chaos-cli"])


def test_a_new_generation_is_served_without_a_second_serve(sources, tmp_path, fast_checks):
    _, repos, _ = sources
    repo = tmp_path / "live"
    shutil.copytree(repos["alpha"], repo)
    own = str(tmp_path / "store")
    assert build_cluster(parse_units([str(repo), str(repos["beta"])]), own).ok
    coordinator = Coordinator(own, health_interval=0.3)
    try:
        coordinator.start(actors=2, replicas=2)
        assert coordinator.search("tokenize yaml")["results"] == []
        (repo / "src" / "yaml.py").write_text("def tokenize_yaml(text): pass\n")
        report = build_cluster(parse_units([str(repo), str(repos["beta"])]), own)
        assert report.built == ["live"] and report.generation == 2

        def served() -> bool:
            answer = coordinator.search("tokenize yaml", deadline_s=5.0)
            return bool(answer["results"]) and answer["generation"] == 2
        _until(served, bound=30.0)
        answer = coordinator.search("tokenize yaml")
        assert answer["results"][0]["file"] == "live:src/yaml.py" and not answer["partial"]
        assert answer["results"] == [h.to_dict() for h in _federation(Path(own)).search("tokenize yaml")]
    finally:
        coordinator.stop()


@pytest.mark.parametrize("deadline", ["inf", "nan", "0", "-1", "601"])
def test_a_deadline_is_finite(deadline, capsys):
    from codelex.cli import main

    with pytest.raises(SystemExit) as usage:  # (a usage error, from argparse: exit 2)
        main(["cluster", "search", "x", "--deadline", deadline])
    assert usage.value.code == 2 and "--deadline" in capsys.readouterr().err


def test_a_store_in_process_memory_is_refused(tmp_path, capsys):
    from codelex.cli import main

    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["cluster", "index", "--store", "memory://codelex-chaos", str(tmp_path)]) == 2
    assert "one process's memory" in capsys.readouterr().err


def test_joining_a_cluster_is_bounded_and_names_the_error(monkeypatch):
    import ray

    from codelex.cluster import ray_runtime

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: time.sleep(5))
    started = time.monotonic()
    with pytest.raises(ClusterError, match="did not connect .* within 1 s"):
        ray_runtime.connect("auto", timeout=1.0)
    assert time.monotonic() - started < 2.5
    with pytest.raises(ClusterError, match="still under way"):  # (the abandoned one has not ended yet)
        ray_runtime.connect("auto", timeout=1.0)
    monkeypatch.setattr(ray_runtime, "_pending_init", None)

    class AuthenticationError(ConnectionError):
        pass

    def refuse(**kw):
        raise AuthenticationError("InvalidAuthToken: the token does not match the cluster's")

    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(ClusterError, match="refused this client's authentication.*InvalidAuthToken"):
        ray_runtime.connect("auto", timeout=5.0)


def test_a_search_with_no_cluster_to_reach_ends_at_once(capsys, monkeypatch):
    """No Ray at the address (a cluster stopped, a wrong port): one line, exit 2, within the probe's bound."""
    import socket

    import ray

    from codelex.cli import main

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # (this process's own Ray is not the one asked)

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    assert main(["cluster", "search", "parse config", "--address", f"127.0.0.1:{port}"]) == 2
    assert time.monotonic() - started < 15
    assert "cannot reach a Ray cluster" in capsys.readouterr().err
