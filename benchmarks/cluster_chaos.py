"""A served cluster under faults, replicas and scale: the figures of the chaos suite's outcomes.

Three parts, each on a private local Ray (2 CPUs), writing ``benchmarks/results/cluster-chaos.json``:

- ``latency``: the ``repos`` corpus of ``cluster_bench.py`` (10 semble-dev repositories and pytest, one
  shard each) served with 1 and 2 replicas on 2 holders, and with 2 replicas while one holder answers
  every call 200 ms late, against one index over the same files in the same run: p50/p95, and every
  answer compared with a local federation's.
- ``faults``: each fault injected into that served store (a holder stopped, killed; the coordinator's
  process killed; a shard file flipped, truncated, deleted; the manifest broken before a serve): the
  outcome of every answer asked while it lasts (exact, labelled partial, wrong: must be 0), and the time
  until every answer is exact and every replica loaded again.  Then a one-file edit end to end: the
  unit updated on its previous shard, and the time until the watching coordinator serves it.
- ``scale``: 1,000 shards (the stdlib split into 1,000 units of one or two files) on 4 holders: load
  time, query p50/p95, the statistics round's size, each holder's memory, against a local federation.

    python benchmarks/cluster_chaos.py [latency faults scale]
    python benchmarks/cluster_chaos.py raystop     # alone, last: it stops every Ray process here
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import signal
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cluster_bench import SCRATCH, _pct, queries_for, units_of  # noqa: E402

WORK = SCRATCH / "chaos"
SLOW_S = 0.2
SLOW_MARK = "/nonexistent"


def _slow_holder():
    from codelex.cluster.serve import ShardHolder

    class SlowHolder(ShardHolder):
        """Answers SLOW_S late while a file named by its pid is in SLOW_MARK's directory."""

        def _late(self):
            if os.path.exists(os.path.join(SLOW_MARK, str(os.getpid()))):
                time.sleep(SLOW_S)

        def query_stats(self, names, request, again=None):
            self._late()
            return super().query_stats(names, request, again)

        def search(self, requests, request, global_stats):
            self._late()
            return super().search(requests, request, global_stats)

    return SlowHolder


def _federation(store_url: str, names=None):
    from codelex.cluster.store import ShardStore
    from codelex.federation import Federation

    s = ShardStore(store_url)
    return Federation([(n, s.open_shard(r)) for n, r in sorted(s.manifest().items()) if names is None or n in names])


class Checker:
    """Each answer against a local federation over the intact shards that answered it."""

    def __init__(self, store_url: str) -> None:
        pristine = Path(store_url).parent / (Path(store_url).name + "-pristine")
        shutil.rmtree(pristine, ignore_errors=True)
        shutil.copytree(store_url, pristine)
        self.pristine = str(pristine)
        self.cache: dict = {}
        from codelex.cluster.store import ShardStore

        self.names = sorted(ShardStore(self.pristine).manifest())

    def outcome(self, query: str, answer: dict) -> str:
        missing = set(answer["missing"])
        present = tuple(n for n in self.names if n not in missing)
        if present not in self.cache:
            self.cache[present] = _federation(self.pristine, set(present)) if present else None
        fed = self.cache[present]
        repo = next((p[5:] for p in query.split() if p.startswith("repo:")), None)
        expected = [] if fed is None or (repo is not None and repo in missing) else \
            [h.to_dict() for h in fed.search(query, limit=10)]
        if answer["results"] != expected:
            return "wrong"
        return "partial" if missing else "exact"


def _ask(coordinator, queries, checker, counts, deadline=5.0, handle=None, ray=None):
    worst = 0.0
    for q in queries:
        t = time.perf_counter()
        try:
            answer = (ray.get(handle.search.remote(q, limit=10, deadline_s=deadline), timeout=deadline + 10) if handle
                      else coordinator.search(q, limit=10, deadline_s=deadline))
        except Exception as exc:
            counts["error"] = counts.get("error", 0) + 1
            counts.setdefault("errors", []).append(type(exc).__name__)
            continue
        worst = max(worst, time.perf_counter() - t)
        kind = checker.outcome(q, answer)
        counts[kind] = counts.get(kind, 0) + 1
    counts["slowest_s"] = max(counts.get("slowest_s", 0.0), round(worst, 3))
    return counts


def _healthy(status) -> bool:
    return not status["errors"] and not status["degraded"] and all(a["error"] is None for a in status["actors"])


def _recover(coordinator, queries, checker, counts, bound=180.0, handle=None, ray=None) -> float:
    """Ask the queries until one pass is all exact and the coordinator healthy; seconds it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < bound:
        before = dict(counts)
        _ask(coordinator, queries, checker, counts, handle=handle, ray=ray)
        status = ray.get(handle.status.remote(), timeout=30) if handle else coordinator.status()
        if counts.get("exact", 0) - before.get("exact", 0) == len(queries) and _healthy(status):
            return round(time.perf_counter() - start, 2)
        time.sleep(0.2)
    return float("nan")


def build_repos() -> tuple[str, list]:
    from codelex.cluster.build import build_cluster, parse_units

    specs, _root = units_of("repos")
    units = parse_units(specs)
    store = WORK / "store"
    shutil.rmtree(store, ignore_errors=True)
    assert build_cluster(units, str(store)).ok
    return str(store), units


def latency(store: str, units, repeat: int = 3) -> dict:
    from codelex.cluster.build import build_unit, parse_units
    from codelex.cluster.serve import Coordinator
    from codelex.cluster.store import ShardStore

    global SLOW_MARK
    out: dict = {}
    _specs, union_root = units_of("repos")
    (single_unit,) = parse_units([f"single={union_root}"])
    build_unit(single_unit, str(WORK / "single"), workers=2)
    s = ShardStore(str(WORK / "single"))
    single = s.open_shard(s.record("single"))
    queries = queries_for(sorted(ShardStore(store).manifest()))
    plain = [q for q in queries if not any(p.startswith(("repo:", "-repo:")) for p in q.split())]
    checker = Checker(store)
    for q in plain:
        single.search(q, limit=10)
    times = []
    for _ in range(repeat):
        for q in plain:
            t = time.perf_counter()
            single.search(q, limit=10)
            times.append(time.perf_counter() - t)
    out["single"] = {"p50_ms": statistics.median(times) * 1e3, "p95_ms": _pct(times, 0.95) * 1e3}
    marks = WORK / "slow"
    shutil.rmtree(marks, ignore_errors=True)
    marks.mkdir(parents=True)
    SLOW_MARK = str(marks)
    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    for label, replicas, slow in (("1 replica", 1, False), ("2 replicas", 2, False),
                                  ("2 replicas, one holder 200 ms late", 2, True)):
        coordinator = Coordinator(store, holder=_slow_holder())
        status = coordinator.start(actors=2, replicas=replicas)
        for q in queries:
            coordinator.search(q, deadline_s=30.0)  # warm, and the shards' latency history
        if slow:
            (marks / str(status["actors"][0]["pid"])).touch()
        times, counts = [], {}
        for _ in range(repeat):
            for q in queries:
                t = time.perf_counter()
                answer = coordinator.search(q, limit=10, deadline_s=5.0)
                times.append(time.perf_counter() - t)
                kind = checker.outcome(q, answer)
                counts[kind] = counts.get(kind, 0) + 1
        coordinator.stop()
        for f in marks.iterdir():
            f.unlink()
        out[label] = {"p50_ms": statistics.median(times) * 1e3, "p95_ms": _pct(times, 0.95) * 1e3, **counts}
        print(label, out[label], flush=True)
    out["queries"] = len(queries)
    return out


def _shard_file(store: str, name: str) -> Path:
    from codelex.cluster.store import ShardStore

    return Path(store) / ShardStore(store).manifest()[name].shard / "index.clx"


def faults(store: str, units) -> list[dict]:
    import ray

    from codelex.cluster import serve
    from codelex.cluster.serve import Coordinator, start_coordinator, stop_coordinator

    from codelex.cluster.store import ShardStore

    serve.LOAD_RETRY_S = 1.0
    queries = queries_for(sorted(ShardStore(store).manifest()))[:20]
    rows = []
    checker = Checker(store)

    def holder_fault(label: str, sig: int) -> None:
        coordinator = Coordinator(store, health_interval=1.0)
        status = coordinator.start(actors=2, replicas=2)
        _ask(coordinator, queries, checker, {})
        pid = status["actors"][0]["pid"]
        counts: dict = {}
        os.kill(pid, sig)
        t = time.perf_counter()
        _ask(coordinator, queries, checker, counts)
        recover = _recover(coordinator, queries, checker, counts)
        if sig == signal.SIGSTOP:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        coordinator.stop()
        rows.append({"fault": label, "recovered_s": recover, "since_fault_s": round(time.perf_counter() - t, 2),
                     **counts})
        print(rows[-1], flush=True)

    holder_fault("holder SIGSTOP (hung), 2 replicas", signal.SIGSTOP)
    holder_fault("holder kill -9, 2 replicas", signal.SIGKILL)

    for how in ("flip 200 bytes", "truncate to half", "delete", "replace by a rename"):
        own = str(WORK / "store-fault")
        shutil.rmtree(own, ignore_errors=True)
        shutil.copytree(store, own)
        coordinator = Coordinator(own, health_interval=1.0)
        coordinator.start(actors=2, replicas=2)
        _ask(coordinator, queries, checker, {})
        largest = max(ShardStore(own).manifest().values(), key=lambda r: r.shard_bytes)
        victim = _shard_file(own, largest.name)
        data = victim.read_bytes()
        if how.startswith("flip"):
            with open(victim, "r+b") as f:
                for i in range(200):
                    at = (len(data) // 3 + i * 4099) % len(data)
                    f.seek(at)
                    f.write(bytes([data[at] ^ 0x5A]))
        elif how.startswith("truncate"):
            with open(victim, "r+b") as f:
                f.truncate(len(data) // 2)
        elif how.startswith("replace"):
            tmp = victim.with_suffix(".tmp")
            tmp.write_bytes(b"garbage" * 1000)
            os.replace(tmp, victim)
        else:
            victim.unlink()
        counts = {}
        for _ in range(3):
            _ask(coordinator, queries, checker, counts)
        t = time.perf_counter()
        victim.unlink(missing_ok=True)
        victim.write_bytes(data)
        recover = _recover(coordinator, queries, checker, counts)
        coordinator.stop()
        rows.append({"fault": f"shard file: {how} (then restored)", "recovered_s": recover,
                     "since_fault_s": round(time.perf_counter() - t, 2), **counts})
        print(rows[-1], flush=True)

    # The coordinator's own process killed: Ray restarts it, and it loads the manifest again.
    handle, status = start_coordinator(store, name="chaos-bench", actors=2, replicas=2, timeout=300.0)
    counts = {}
    os.kill(status["pid"], signal.SIGKILL)
    recover = _recover(None, queries, checker, counts, handle=handle, ray=ray)
    stop_coordinator("chaos-bench")
    rows.append({"fault": "coordinator kill -9 (detached, Ray restarts it)", "recovered_s": recover, **counts})
    print(rows[-1], flush=True)

    # A serve over a broken manifest: refused, nothing left behind.
    own = str(WORK / "store-broken")
    shutil.rmtree(own, ignore_errors=True)
    shutil.copytree(store, own)
    (Path(own) / "manifest.json").write_text("{broken")
    t = time.perf_counter()
    try:
        start_coordinator(own, name="chaos-broken", actors=1, timeout=60.0)
        outcome = "served (wrong)"
    except Exception as exc:
        outcome = f"refused: {type(exc).__name__}"
    try:
        ray.get_actor("chaos-broken")
        left = "a coordinator was left behind"
    except ValueError:
        left = "nothing left behind"
    rows.append({"fault": "serve over a broken manifest", "outcome": f"{outcome}; {left}",
                 "seconds": round(time.perf_counter() - t, 2)})
    print(rows[-1], flush=True)
    return rows


def live_update(store: str, units, source: Path | None = None) -> dict:
    """A one-file edit end to end: the unit updated on its previous shard, the watching coordinator serving
    it.  The unit is a copy of ``source`` (default: the first of ``units``) served beside the others."""
    from codelex.cluster.build import build_cluster, parse_units
    from codelex.cluster.serve import Coordinator

    own = WORK / "live"
    shutil.rmtree(own, ignore_errors=True)
    src = WORK / "live-src"
    shutil.rmtree(src, ignore_errors=True)
    name = source.name if source is not None else units[0].name
    shutil.copytree(source or units[0].source, src, symlinks=True)
    (live,) = parse_units([f"{name}={src}"])
    others = [u for u in units if u.name != name]
    assert build_cluster([live, *others], str(own)).ok
    unit = live
    coordinator = Coordinator(str(own), health_interval=0.5)
    coordinator.start(actors=2, replicas=2)
    from codelex.cluster.store import ShardStore

    indexed = ShardStore(str(own)).open_shard(ShardStore(str(own)).record(unit.name)).files
    target = next(src / p for p in sorted(indexed) if (src / p).stat().st_size > 2000)  # (an indexed file)
    out = {"unit": unit.name, "files": coordinator.records[unit.name].files}
    rounds = []
    for i in range(3):
        word = f"zqxchaosmarker{i}"
        with open(target, "a") as f:
            f.write(f"\n# {word}\n")
        t = time.perf_counter()
        report = build_cluster([live, *others], str(own))
        built = time.perf_counter() - t
        while not coordinator.search(word, deadline_s=5.0)["results"]:
            time.sleep(0.05)
            assert time.perf_counter() - t < 120
        rounds.append({"build_s": round(built, 3), "served_s": round(time.perf_counter() - t, 3),
                       "updated_files": report.updated.get(unit.name)})
    coordinator.stop()
    t = time.perf_counter()
    build_cluster([live], str(WORK / "live-whole"), force=True)
    out["whole_unit_build_s"] = round(time.perf_counter() - t, 3)
    out["edits"] = rounds
    print(out, flush=True)
    return out


def scale(n_units: int = 1000, actors: int = 4, repeat: int = 2) -> dict:
    from corpus import materialize

    from codelex.cluster.build import build_unit, parse_units
    from codelex.cluster.serve import Coordinator, ShardHolder
    from codelex.cluster.store import ShardStore
    from codelex.lexical.shards import merge_query_stats
    from codelex.query.request import parse_request

    root, paths = materialize("stdlib")
    base = WORK / "scale-src"
    store = WORK / "scale-store"
    if not (store / "manifest.json").exists():
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
        paths = sorted(paths)
        n = min(n_units, len(paths))
        cuts = [len(paths) * k // n for k in range(n + 1)]  # (n groups as even as the files allow)
        groups = [paths[cuts[k]:cuts[k + 1]] for k in range(n)]
        specs = []
        for k, group in enumerate(groups):
            d = base / f"u{k:04d}"
            for p in group:
                (d / p).parent.mkdir(parents=True, exist_ok=True)
                os.link(Path(root) / p, d / p)
            specs.append(f"u{k:04d}={d}")
        t = time.perf_counter()
        records = {}
        for u in parse_units(specs):
            records[u.name] = build_unit(u, str(store))["record"]
        from codelex.cluster.store import UnitRecord

        ShardStore(str(store)).put_manifest({n: UnitRecord.from_dict(r) for n, r in records.items()})
        build_s = time.perf_counter() - t
    else:
        build_s = None
    s = ShardStore(str(store))
    manifest = s.manifest()
    out: dict = {"shards": len(manifest), "files": sum(r.files for r in manifest.values()),
                 "store_mib": sum(r.shard_bytes for r in manifest.values()) / 2**20, "build_s": build_s}
    from queries import NATURAL

    queries = list(NATURAL)
    t = time.perf_counter()
    fed = _federation(str(store))
    out["federation_open_s"] = time.perf_counter() - t
    ft = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            fed.search(q)
            ft.append(time.perf_counter() - t)
    out["federation_p50_ms"], out["federation_p95_ms"] = statistics.median(ft) * 1e3, _pct(ft, 0.95) * 1e3
    # The statistics round: what phase 1 sends back per query, all shards together.
    holder = ShardHolder(str(store))
    holder.load([r.to_dict() for r in manifest.values()])
    sizes = []
    for q in queries[:10]:
        request = parse_request(q, None, {})
        got = holder.query_stats(sorted(manifest), request)
        stats = [v[1] for v in got.values() if v[0] != "error"]
        sizes.append(len(pickle.dumps(got)))
        merge_query_stats(stats)
    out["stats_round_kib_p50"] = statistics.median(sizes) / 1024
    del holder
    coordinator = Coordinator(str(store))
    t = time.perf_counter()
    status = coordinator.start(actors=actors, replicas=1)
    out["serve_load_s"] = time.perf_counter() - t
    out["holder_rss_mib"] = [round((a["rss_bytes"] or 0) / 2**20, 1) for a in status["actors"]]
    checker_exact = 0
    for q in queries:
        coordinator.search(q, deadline_s=60.0)
    ct = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            answer = coordinator.search(q, limit=10, deadline_s=60.0)
            ct.append(time.perf_counter() - t)
            checker_exact += answer["results"] == [h.to_dict() for h in fed.search(q, limit=10)] and \
                not answer["missing"]
    out["cluster_p50_ms"], out["cluster_p95_ms"] = statistics.median(ct) * 1e3, _pct(ct, 0.95) * 1e3
    out["exact"] = f"{checker_exact} of {len(ct)}"
    status = coordinator.status()
    out["holder_rss_mib_after_queries"] = [round((a["rss_bytes"] or 0) / 2**20, 1) for a in status["actors"]]
    coordinator.stop()
    print(out, flush=True)
    return out


def ray_stop(store: str, searches: int = 7) -> dict:
    """``ray stop`` while command-line searches run against a served store: every search ends within its
    bound (exit 2: Ray went away, or 3: a partial answer), none hangs.  Runs its own ``ray start`` cluster
    and stops every Ray process on this machine: run this part alone, last."""
    import subprocess

    ray_bin = str(Path(sys.executable).with_name("ray"))
    cli = [sys.executable, "-m", "codelex", "cluster"]
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    subprocess.run([ray_bin, "stop", "--force"], capture_output=True, timeout=120)
    subprocess.run([ray_bin, "start", "--head", "--port", "6411", "--num-cpus", "2", "--include-dashboard",
                    "false"], check=True, capture_output=True, timeout=180, env=env)
    served = subprocess.run([*cli, "serve", "--store", store, "--address", "auto", "--name", "raystop"],
                            capture_output=True, text=True, timeout=600, env=env)
    assert served.returncode == 0, served.stderr
    runs = []
    for i in range(searches):
        t = time.perf_counter()
        proc = subprocess.Popen([*cli, "search", "parse config", "--address", "auto", "--name", "raystop",
                                 "--deadline", "5", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)
        runs.append((t, proc))
        time.sleep(0.3)
        if i == 2:
            stopper = subprocess.Popen([ray_bin, "stop", "--force"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
    out = []
    for t, proc in runs:
        try:
            _, err = proc.communicate(timeout=120)
            out.append({"exit": proc.returncode, "seconds": round(time.perf_counter() - t, 2),
                        "said": (err.strip().splitlines() or [""])[-1][:160]})
        except subprocess.TimeoutExpired:
            proc.kill()
            out.append({"exit": None, "seconds": 120.0, "said": "HUNG"})
    stopper.wait(timeout=120)
    result = {"searches": out, "longest_s": max(r["seconds"] for r in out),
              "hung": sum(r["exit"] is None for r in out)}
    print(result, flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["latency", "faults", "scale"])
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    out_file = HERE / "results" / "cluster-chaos.json"
    result = json.loads(out_file.read_text()) if out_file.exists() else {}
    if args.parts == ["raystop"]:
        result["ray_stop"] = ray_stop(str(WORK / "store"))
        out_file.write_text(json.dumps(result, indent=1) + "\n")
        return
    from codelex.cluster.ray_runtime import connect

    connect(None, start_local=True, num_cpus=2)
    if {"latency", "faults"} & set(args.parts):  # (the repos store)
        store, units = build_repos()
        if "latency" in args.parts:
            result["latency"] = latency(store, units)
            out_file.write_text(json.dumps(result, indent=1) + "\n")
        if "faults" in args.parts:
            result["faults"] = faults(store, units)
            out_file.write_text(json.dumps(result, indent=1) + "\n")
            result["live_update"] = live_update(store, units)
            out_file.write_text(json.dumps(result, indent=1) + "\n")
    if "live" in args.parts:  # a larger unit: Linux's fs/ (2,123 files)
        from cluster_bench import LINUX

        _store, units = build_repos()
        result["live_update_linux_fs"] = live_update(_store, units, LINUX / "fs")
        out_file.write_text(json.dumps(result, indent=1) + "\n")
    if "scale" in args.parts:
        result["scale"] = scale()
        out_file.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
