"""One index against a federation of shards over the same files (issue 32): build time, query latency,
the fan-out's cost, and exactness checked on every query.

Usage::

    python benchmarks/federation_bench.py linux8   # the Linux tree in 8 shards by top-level directory
    python benchmarks/federation_bench.py multi    # semble-dev's 10 repositories and pytest, a shard each

A federation's answer must be the single index's, scores included (hits named ``shard:path``); a
query whose answers differ is printed and counted.  Build times are in-process, one shard after
the other (``sum``) and the largest shard (what shards built side by side on enough workers wait for).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import BENCH_DIR, materialize  # noqa: E402
from relevance import SEMBLE_REPOS, load_semble  # noqa: E402

SHARDS = 8


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def linux_shards() -> tuple[dict[str, list[tuple[str, bytes]]], list[str]]:
    """The Linux tree's files in 8 shards by top-level directory (greedy by bytes), and the suite's queries."""
    root, paths = materialize("linux")
    by_top: dict[str, list[str]] = {}
    for p in paths:
        by_top.setdefault(p.split("/", 1)[0] if "/" in p else "(top)", []).append(p)
    sizes = {top: sum((root / p).stat().st_size for p in ps) for top, ps in by_top.items()}
    shards: list[list[str]] = [[] for _ in range(SHARDS)]
    load = [0] * SHARDS
    for top in sorted(sizes, key=sizes.get, reverse=True):
        i = load.index(min(load))
        shards[i] += by_top[top]
        load[i] += sizes[top]
    out = {f"s{i}": [(p, (root / p).read_bytes()) for p in sorted(ps)] for i, ps in enumerate(shards) if ps}
    results = Path(__file__).parent / "results" / "linux.json"
    queries = json.loads(results.read_text())["queries"]
    return out, [q for kind in ("natural", "identifier", "pair", "mix", "filtered") for q in queries[kind]]


def multi_shards() -> tuple[dict[str, list[tuple[str, bytes]]], list[str]]:
    """semble-dev's repositories and pytest (its src/ tree), one shard each, with semble-dev's questions."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    queries: list[str] = []
    for repo in SEMBLE_REPOS:
        docs, qs = load_semble(repo)
        out[repo] = [(p, t.encode()) for p, t in docs]
        queries += [q["query"] for q in qs]
    pytest_root = BENCH_DIR / "corpora" / "pytest-8.3.5"
    if pytest_root.is_dir():
        out["pytest"] = [(p.relative_to(pytest_root).as_posix(), p.read_bytes())
                         for p in sorted(pytest_root.rglob("*.py")) if p.is_file() and not p.is_symlink()]
    return out, queries


def _latencies(search, queries, reps: int) -> list[float]:
    out = []
    for q in queries:
        search(q)
        times = []
        for _ in range(reps):
            t = time.perf_counter_ns()
            search(q)
            times.append(time.perf_counter_ns() - t)
        out.append(sorted(times)[len(times) // 2] / 1e3)
    return out


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def run(corpus: str, reps: int) -> str:
    import codelex

    shards, queries = linux_shards() if corpus == "linux8" else multi_shards()
    names = list(shards)
    n_files = sum(len(v) for v in shards.values())
    union = [doc for name in names for doc in shards[name]]
    t = time.perf_counter()
    single = codelex.WordIndex.build(union, max_bytes=None)
    single_s = time.perf_counter() - t
    shard_s = {}
    built = {}
    for name in names:
        t = time.perf_counter()
        built[name] = codelex.WordIndex.build(shards[name], max_bytes=None)
        shard_s[name] = time.perf_counter() - t
    del union, shards
    federation = codelex.Federation(built)
    shard_of = {}
    for name in names:
        for path in built[name].files:
            shard_of[path] = name
    mismatches = []
    for q in queries:
        want = [(f"{shard_of[h.file]}:{h.file}", h.score, h.hits, h.start_line) for h in single.search(q, limit=10)]
        got = [(h.file, h.score, h.hits, h.start_line) for h in federation.search(q, limit=10)]
        if got != want:
            mismatches.append(q)
    one = _latencies(lambda q: single.search(q, limit=10), queries, reps)
    fed = _latencies(lambda q: federation.search(q, limit=10), queries, reps)
    over = sorted(f - s for f, s in zip(fed, one))
    rows = [
        f"Corpus `{corpus}`: {n_files:,} files in {len(names)} shards; {len(queries)} queries, top 10, median of "
        f"{reps} runs each; peak RSS of the process {_rss_mb():,.0f} MiB.",
        "",
        "| | build (s) | query p50 (µs) | query p95 (µs) | exact answers |",
        "|---|--:|--:|--:|--:|",
        f"| one index | {single_s:.2f} | {_pct(one, 50):,.1f} | {_pct(one, 95):,.1f} | — |",
        f"| federation, {len(names)} shards in one process | {sum(shard_s.values()):.2f} (largest shard "
        f"{max(shard_s.values()):.2f}) | {_pct(fed, 50):,.1f} | {_pct(fed, 95):,.1f} | "
        f"{len(queries) - len(mismatches)} of {len(queries)} |",
        "",
        f"Fan-out overhead per query (federation − one index): p50 {_pct(over, 50):,.1f} µs, "
        f"p95 {_pct(over, 95):,.1f} µs.",
    ]
    if mismatches:
        rows.append("Queries whose answers differ: " + ", ".join(repr(q) for q in mismatches[:10]))
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=["linux8", "multi"])
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args(argv)
    print(run(args.corpus, args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
