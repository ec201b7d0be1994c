"""Sharded indexes: one index vs a local federation vs Ray (2 local workers), on two corpora.

- ``linux``: the Linux tree split into 8 shards by top-level directory (drivers, arch, fs, net, sound,
  include, tools, and the rest together);
- ``repos``: the 10 repositories of ``../shared/eval/semble-dev`` (their corpora written out as trees) plus
  pytest, one shard each.  The one index's root holds the 11 trees, so its paths are ``repo/path``.

Measured: build wall time (one index in-process; the shards one after another in-process; the shards as
Ray tasks on 2 workers), query p50/p95 (one index, the local federation, the Ray coordinator called from
the driver), the fan-out's overhead (Ray's p50 less the federation's), memory per holder actor, and on
every query that Ray's answer (scores included) equals the local federation's.

Run: ``python benchmarks/cluster_bench.py [linux|repos ...] [--address auto]`` (Ray: a running cluster at
``--address``, else a private local one with 2 CPUs).  Writes ``benchmarks/results/cluster-<corpus>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))
LINUX = BENCH_DIR / "kernel" / "linux-source-6.1"
SEMBLE = HERE.parent.parent / "shared" / "eval" / "semble-dev"
PYTEST = BENCH_DIR / "corpora" / "pytest-8.3.5"
SCRATCH = BENCH_DIR / "cluster"
LINUX_OWN = ("drivers", "arch", "fs", "net", "sound", "include", "tools")

EXTRA = ["spin lock irq", "page fault handler", "usb device probe", "network packet queue", "file system mount",
         "interrupt controller", "parse arguments", "fixture scope", "async runtime spawn", "json schema validate",
         "string utils", "coroutine dispatcher", "http client request", "hash map insert", "repo:pytest fixture",
         "-repo:drivers device probe", "lang:rust spawn task", "file:test parse"]


def _hardlink_tree(src: Path, dst: Path) -> None:
    """``dst`` as a copy of ``src`` made of hard links (mtimes kept, nothing copied)."""
    shutil.copytree(src, dst, copy_function=os.link, symlinks=True)


def units_of(corpus: str) -> tuple[list[str], Path]:
    """The unit specs of a corpus and the one directory holding all their files (the single index's root)."""
    if corpus == "linux":
        rest = SCRATCH / "linux-rest"
        if not rest.exists():
            rest.mkdir(parents=True)
            for entry in sorted(LINUX.iterdir()):
                if entry.name in LINUX_OWN or entry.is_symlink():
                    continue
                if entry.is_dir():
                    _hardlink_tree(entry, rest / entry.name)
                elif entry.is_file():
                    os.link(entry, rest / entry.name)
        return [f"{d}={LINUX / d}" for d in LINUX_OWN] + [f"rest={rest}"], LINUX
    if corpus == "repos":
        trees = SCRATCH / "repos-src"
        if not trees.exists():  # the semble-dev corpora are JSON lines: written out as trees, once
            for d in sorted(p for p in SEMBLE.iterdir() if (p / "corpus.jsonl").is_file()):
                for line in (d / "corpus.jsonl").read_text().splitlines():
                    row = json.loads(line)
                    rel = Path(row["path"])
                    if rel.is_absolute() or ".." in rel.parts:
                        continue
                    target = trees / d.name / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(row["text"])
            _hardlink_tree(PYTEST, trees / "pytest")
        repos = sorted(p for p in trees.iterdir() if p.is_dir())
        return [f"{r.name}={r}" for r in repos], trees
    raise SystemExit(f"unknown corpus {corpus!r}: linux or repos")


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _timed(fn, queries: list[str], repeat: int) -> tuple[list[float], list]:
    out, answers = [], []
    for q in queries:
        best = None
        for _ in range(repeat):
            t = time.perf_counter()
            a = fn(q)
            dt = time.perf_counter() - t
            out.append(dt)
            best = a
        answers.append(best)
    return out, answers


def _union_index(units):
    """One index over every unit's files under their paths within the unit, and path -> unit; (None, None)
    when two units hold the same path."""
    from codelex import WordIndex
    from codelex.cluster.build import unit_walk
    from codelex.ingest import read_files

    docs, owner = [], {}
    for u in units:
        root, options, _settings, walk = unit_walk(u.source)
        for d in read_files(root, walk.files, max_bytes=options.max_bytes):
            if d.path in owner:
                return None, None
            owner[d.path] = u.name
            docs.append((d.path, d.content, d.mtime_ns))
    return WordIndex.build(docs, workers=2), owner


def queries_for(names: list[str]) -> list[str]:
    from queries import NATURAL

    known = set(names)
    semble = []
    for name in names:  # the semble-dev repositories' own (LLM-written) queries, 8 each
        qfile = SEMBLE / name / "queries.jsonl"
        if qfile.is_file():
            semble += [json.loads(line)["query"] for line in qfile.read_text().splitlines()[:8]]
    extra = [q for q in EXTRA if not any(p.startswith(("repo:", "-repo:")) and p.split(":", 1)[1] not in known
                                         for p in q.split())]
    return list(NATURAL) + extra + semble


def run(corpus: str, address: str | None, repeat: int) -> dict:
    import codelex
    from codelex.cluster.build import build_cluster, build_unit, parse_units
    from codelex.cluster.ray_runtime import connect
    from codelex.cluster.serve import Coordinator
    from codelex.cluster.store import ShardStore
    from codelex.federation import Federation

    specs, union_root = units_of(corpus)
    units = parse_units(specs)
    work = SCRATCH / corpus
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    result: dict = {"corpus": corpus, "units": [u.name for u in units], "cpus": os.cpu_count()}

    # One index over every file (in-process, 2 threads).
    (single_unit,) = parse_units([f"single={union_root}"])
    t = time.perf_counter()
    single_rec = build_unit(single_unit, str(work / "single"), workers=2)["record"]
    result["single_build_s"] = time.perf_counter() - t
    result["files"] = single_rec["files"]
    single = ShardStore(str(work / "single")).open_shard(ShardStore(str(work / "single")).record("single"))

    # The shards one after another, in-process (2 threads each): a local federation's build.
    t = time.perf_counter()
    for u in units:
        build_unit(u, str(work / "local"), workers=2)
    result["local_build_s"] = time.perf_counter() - t

    # The shards as Ray tasks on 2 workers (1 CPU each).
    ray = connect(address, start_local=True, num_cpus=2)
    result["ray_cpus"] = ray.cluster_resources().get("CPU")
    t = time.perf_counter()
    report = build_cluster(units, str(work / "ray"), cpus_per_unit=1)
    result["ray_build_s"] = time.perf_counter() - t
    assert report.ok, report.failed
    store = ShardStore(str(work / "ray"))
    records = store.manifest()
    result["shards"] = {n: {"files": r.files, "bytes": r.shard_bytes, "build_s": r.seconds}
                        for n, r in sorted(records.items())}
    t = time.perf_counter()
    again = build_cluster(units, str(work / "ray"))
    result["ray_rebuild_unchanged_s"] = time.perf_counter() - t
    assert sorted(again.unchanged) == sorted(u.name for u in units), again

    federation = Federation([(n, store.open_shard(r)) for n, r in sorted(records.items())])
    coordinator = Coordinator(str(work / "ray"))
    t = time.perf_counter()
    status = coordinator.start(actors=2)
    result["serve_load_s"] = time.perf_counter() - t
    queries = queries_for(sorted(records))
    result["queries"] = len(queries)
    for q in queries[:5]:  # warm: first reads of the mapped arrays
        federation.search(q)
        coordinator.search(q, deadline_s=30.0)
        if not any(p.startswith(("repo:", "-repo:")) for p in q.split()):
            single.search(q)
    plain = [q for q in queries if not any(p.startswith(("repo:", "-repo:")) for p in q.split())]
    single_t, _ = _timed(lambda q: single.search(q), plain, repeat)
    fed_t, fed_answers = _timed(lambda q: federation.search(q), queries, repeat)
    ray_t, ray_answers = _timed(lambda q: coordinator.search(q, deadline_s=30.0), queries, repeat)
    mismatches = []
    for q, f, r in zip(queries, fed_answers, ray_answers):
        if r["missing"] or r["results"] != [h.to_dict() for h in f]:
            mismatches.append(q)
    # One index over the union of the units' files under their paths within their unit (when no two units
    # hold one path: Linux's do, Makefiles and Kconfigs): its answers, qualified, must be the federation's.
    union, owner = _union_index(units)
    if union is not None:
        union_bad = []
        for q in queries:
            if any(p.startswith(("repo:", "-repo:")) for p in q.split()):
                continue
            want = [h._replace(file=f"{owner[h.file]}:{h.file}").to_dict() for h in union.search(q)]
            if [h.to_dict() for h in federation.search(q)] != want:
                union_bad.append(q)
        result["union_exact_queries"] = len(plain) - len(union_bad)
        result["union_mismatches"] = union_bad
    else:
        result["union_exact_queries"] = None  # (paths collide across units)
    status = coordinator.status()
    coordinator.stop()
    for name, times in (("single", single_t), ("federation", fed_t), ("ray", ray_t)):
        result[f"{name}_p50_ms"] = statistics.median(times) * 1e3
        result[f"{name}_p95_ms"] = _pct(times, 0.95) * 1e3
    result["fanout_overhead_p50_ms"] = result["ray_p50_ms"] - result["federation_p50_ms"]
    result["exact_queries"] = len(queries) - len(mismatches)
    result["mismatches"] = mismatches
    result["actors"] = [{"shards": a["shards"], "shard_bytes": a["shard_bytes"], "rss_bytes": a["rss_bytes"]}
                        for a in status["actors"]]
    result["codelex"] = codelex.__version__
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="*", default=["repos", "linux"])
    ap.add_argument("--address", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    out_dir = HERE / "results"
    for corpus in args.corpora:
        result = run(corpus, args.address, args.repeat)
        (out_dir / f"cluster-{corpus}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps({k: v for k, v in result.items() if k not in ("shards",)}, indent=1))


if __name__ == "__main__":
    main()
