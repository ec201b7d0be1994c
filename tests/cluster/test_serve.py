"""Serving on Ray: answers equal to a local federation's, a dead or slow actor's shards named as missing within
the deadline, shards replaced while serving, and the command line end to end."""

from __future__ import annotations

import os
import sys
import time

import pytest

pytest.importorskip("ray")

from codelex.cluster.build import build_cluster, parse_units  # noqa: E402
from codelex.cluster.serve import Coordinator, ShardHolder, place_by_size  # noqa: E402
from codelex.cluster.store import ShardStore, UnitRecord  # noqa: E402

from .conftest import make_repos  # noqa: E402

QUERIES = ["parse config", "register route", "load settings path", "lang:go route", "repo:gamma parse",
           "-repo:alpha parse config", "server", "split words", "parsing configs", "routes registered",
           "loading the settings", "how are servers started"]


@pytest.fixture(scope="module")
def built(ray_local, tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    repos = make_repos(base / "src")
    store = str(base / "store")
    assert build_cluster(parse_units([str(p) for p in repos.values()]), store).ok
    return base, repos, store


def _federation(store: str):
    from codelex.federation import Federation

    s = ShardStore(store)
    return Federation([(name, s.open_shard(r)) for name, r in sorted(s.manifest().items())])


def test_placement_by_size():
    def rec(name, size):
        return UnitRecord(name, "/x", "0" * 32, "0" * 32, 1, size, "0" * 32, 0.0, 0.0)

    bins = place_by_size([rec("a", 10), rec("b", 7), rec("c", 5), rec("d", 4)], 2)
    assert [[r.name for r in b] for b in bins] == [["a", "d"], ["b", "c"]]
    assert [[r.name for r in b] for b in place_by_size([rec("e", 1)], 2, loads=[5, 0])] == [[], ["e"]]


def test_answers_equal_a_local_federation(built):
    base, repos, store = built
    coordinator = Coordinator(store)
    try:
        status = coordinator.start(actors=2)
        assert status["shards"] == 3 and not status["errors"]
        assert sorted(len(a["shards"]) for a in status["actors"]) == [1, 2]
        federation = _federation(store)
        for query in QUERIES:
            for ranking in ("code", "classic"):
                answer = coordinator.search(query, limit=5, ranking=ranking, deadline_s=30.0)
                assert answer["missing"] == {}, (query, answer)
                expected = [h.to_dict() for h in federation.search(query, limit=5, ranking=ranking)]
                assert answer["results"] == expected, (query, ranking)
    finally:
        coordinator.stop()


def test_a_dead_actor_is_named_missing_within_the_deadline_and_replaced(built, ray_local):
    base, repos, store = built
    coordinator = Coordinator(store)
    try:
        status = coordinator.start(actors=2)
        victim = next(a for a in status["actors"] if len(a["shards"]) == 1)
        others = sorted(n for a in status["actors"] if a is not victim for n in a["shards"])
        ray_local.kill(coordinator.actors[victim["slot"]], no_restart=True)
        started = time.monotonic()
        answer = coordinator.search("parse config", deadline_s=5.0)
        assert time.monotonic() - started < 6.0
        assert list(answer["missing"]) == victim["shards"], answer
        assert answer["answered"] and set(answer["answered"]) <= set(others)
        assert all(not r["file"].startswith(victim["shards"][0] + ":") for r in answer["results"])
        # The dead actor is replaced in the background: its shard answers again, within a bound.
        until = time.monotonic() + 60.0
        while time.monotonic() < until:
            answer = coordinator.search("parse config", deadline_s=5.0)
            if not answer["missing"]:
                break
            time.sleep(0.5)
        assert answer["missing"] == {} and answer["shards"] == 3
    finally:
        coordinator.stop()


#: The marker file that makes SlowHolder slow (set before its actors start: the class travels by value).
SLOW_MARKER = "/nonexistent"


class SlowHolder(ShardHolder):
    """A holder that answers phase 1 late for shard ``gamma`` once a marker file exists."""

    def query_stats(self, names, request, again=None):
        if "gamma" in names and os.path.exists(SLOW_MARKER):
            time.sleep(3.0)
        return super().query_stats(names, request, again)


def test_a_slow_shard_is_not_waited_for(built, ray_local, tmp_path, monkeypatch):
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    base, repos, store = built
    marker = tmp_path / "slow"
    monkeypatch.setattr(sys.modules[__name__], "SLOW_MARKER", str(marker))
    coordinator = Coordinator(store, holder=SlowHolder)
    try:
        coordinator.start(actors=3)  # one shard per actor
        assert coordinator.search("parse config", deadline_s=10.0)["missing"] == {}
        marker.touch()
        started = time.monotonic()
        answer = coordinator.search("parse config", deadline_s=1.0)
        assert time.monotonic() - started < 2.0
        assert answer["missing"] == {"gamma": "no answer within the deadline"}
        assert sorted(answer["answered"]) == ["alpha", "beta"]
    finally:
        coordinator.stop()


def test_a_shard_replaced_while_serving(built, ray_local, tmp_path):
    base, repos, store = built
    import shutil

    repo = tmp_path / "delta"
    shutil.copytree(repos["alpha"], repo)
    own = str(tmp_path / "store")
    build_cluster(parse_units([str(repo), str(repos["beta"])]), own)
    coordinator = Coordinator(own)
    try:
        coordinator.start(actors=2)
        assert coordinator.search("tokenize yaml")["results"] == []
        (repo / "src" / "yaml.py").write_text("def tokenize_yaml(text): pass\n")
        report = build_cluster(parse_units([str(repo), str(repos["beta"])]), own)
        assert report.built == ["delta"]
        reloaded = coordinator.reload()
        assert reloaded["replaced"] == ["delta"] and reloaded["generation"] == 2
        answer = coordinator.search("tokenize yaml")
        assert answer["results"][0]["file"] == "delta:src/yaml.py" and answer["generation"] == 2
        assert answer["results"] == [h.to_dict() for h in _federation(own).search("tokenize yaml")]
    finally:
        coordinator.stop()


def test_the_command_line_end_to_end(built, ray_local, tmp_path, capsys):
    from codelex.cli import main

    base, repos, store = built
    own = str(tmp_path / "store")
    assert main(["cluster", "index", "--store", own, *(str(p) for p in repos.values())]) == 0
    err = capsys.readouterr().err
    assert "[3/3]" in err and "built" in err
    try:
        assert main(["cluster", "serve", "--store", own, "--actors", "2", "--name", "cli-test", "--http", "0"]) == 0
        out = capsys.readouterr().out
        assert "3 shards" in out and "actor 1" in out
        import json
        import urllib.error
        import urllib.parse
        import urllib.request

        url = next(line.split()[1] for line in out.splitlines() if line.strip().startswith("http:")).split("?")[0]
        with urllib.request.urlopen(url + "?" + urllib.parse.urlencode({"q": "register route", "n": 2}),
                                    timeout=30) as reply:
            answer = json.load(reply)
        assert answer["results"][0]["file"] == "beta:lib/router.go" and answer["missing"] == {}
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(url + "?q=repo:nope+x", timeout=30)
        assert bad.value.code == 400 and "Unknown repo" in json.load(bad.value)["error"]
        assert main(["cluster", "search", "register route", "--name", "cli-test", "-n", "2"]) == 0
        captured = capsys.readouterr()
        assert captured.out.startswith("1. beta:lib/router.go:2") and "from 3 of 3 shards" in captured.err
        assert main(["cluster", "search", "-repo:alpha", "--name", "cli-test"]) == 1  # a query, not an option
        capsys.readouterr()
        assert main(["cluster", "search", "repo:nope x", "--name", "cli-test"]) == 2
        assert "Unknown repo" in capsys.readouterr().err
    finally:
        assert main(["cluster", "serve", "--stop", "--name", "cli-test"]) == 0
    assert main(["cluster", "search", "x", "--name", "cli-test"]) == 2
    assert "no coordinator 'cli-test'" in capsys.readouterr().err
    assert main(["cluster", "index", "--store", own, "a=", "x"]) == 2  # bad input: one line, exit 2


def test_words_other_shards_found_are_asked_again(ray_local, tmp_path):
    """A stem variant one shard's bodies hold and another holds only as a directory name: the second shard is
    asked again for its dfs (the federation's second round), and the answer equals the local federation's."""
    files = {"prose": {"a.md": "the routing of requests is described here and routing tables too\n"},
             "code": {"routing/x.go": "func handle() {}\n", "b.go": "func route() {}\n"}}
    repos = make_repos(tmp_path / "src", files)
    store = str(tmp_path / "store")
    assert build_cluster(parse_units([str(p) for p in repos.values()]), store).ok
    coordinator = Coordinator(store)
    try:
        coordinator.start(actors=2)
        federation = _federation(store)
        from codelex.lexical.shards import merge_query_stats, missing_words

        for query in ("how is a route found", "routes for requests", "route requests"):
            stats = [federation[n].query_stats(query) for n in federation.names]
            assert any(missing_words(s, merge_query_stats(stats)) for s in stats)  # (the case arises)
            answer = coordinator.search(query, deadline_s=30.0)
            assert answer["missing"] == {}
            assert answer["results"] == [h.to_dict() for h in federation.search(query)], query
    finally:
        coordinator.stop()


def test_a_replacement_that_does_not_load_leaves_the_old_version_serving(ray_local, tmp_path):
    repos = make_repos(tmp_path / "src")
    store = str(tmp_path / "store")
    units = parse_units([str(repos["alpha"]), str(repos["beta"])])
    build_cluster(units, store)
    coordinator = Coordinator(store)
    try:
        coordinator.start(actors=2)
        before = coordinator.search("parse config")
        (repos["alpha"] / "src" / "config.py").write_text("def parse_toml(): pass\n")
        assert build_cluster(units, store).built == ["alpha"]
        shard = tmp_path / "store" / ShardStore(store).manifest()["alpha"].shard / "index.clx"
        shard.write_bytes(b"\0" * shard.stat().st_size)  # a torn or forged file in the store
        reloaded = coordinator.reload()
        assert list(reloaded["errors"]) == ["alpha"]
        after = coordinator.search("parse config")
        assert after["missing"] == {} and after["results"] == before["results"]
    finally:
        coordinator.stop()
