"""Query latency of the code ranking against classic, same index, same process, same queries.

Usage::

    python benchmarks/ranking_latency.py --corpus stdlib
    python benchmarks/ranking_latency.py --corpus linux

The queries are the suite's (natural-language queries, sampled identifiers
and word pairs; ``benchmarks/suite.py``); each query's time is the median of
``--reps`` runs after a warm-up, the two rankings alternating run by run so
that both see the same machine state.  Prints p50/p95 per ranking and per
query group, and the code/classic ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import materialize  # noqa: E402
from suite import pct, query_set  # noqa: E402

import codelex  # noqa: E402


def median_ns(fn, reps: int) -> float:
    return paired_medians_ns([fn], reps)[0]


def paired_medians_ns(fns, reps: int) -> list[float]:
    """Each function's median time over ``reps`` runs, the functions alternating run by run (after a warm-up)."""
    for fn in fns:
        fn()
    times: list[list[int]] = [[] for _ in fns]
    for _ in range(reps):
        for fn, out in zip(fns, times):
            t = time.perf_counter_ns()
            fn()
            out.append(time.perf_counter_ns() - t)
    return [sorted(t)[len(t) // 2] for t in times]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--limit", type=int, default=10)
    args = ap.parse_args(argv)
    root, paths = materialize(args.corpus)

    def docs():
        for p in paths:
            with open(root / p, "rb") as f:
                yield p, f.read()

    t = time.perf_counter()
    index = codelex.WordIndex.build(docs(), max_bytes=None)
    print(f"# {args.corpus}: {len(paths):,} files indexed in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    groups = query_set(root, paths)
    rows = []
    overall: dict[str, list[float]] = {"classic": [], "code": []}
    for group, queries in groups.items():
        lat: dict[str, list[float]] = {"classic": [], "code": []}
        for q in queries:
            classic, code = paired_medians_ns(
                [lambda: index.search(q, limit=args.limit, ranking="classic"),
                 lambda: index.search(q, limit=args.limit, ranking="code")], args.reps)
            lat["classic"].append(classic / 1e3)
            lat["code"].append(code / 1e3)
        for r in lat:
            overall[r] += lat[r]
        rows.append((group, lat))
    rows.append(("all", overall))
    print(f"| {args.corpus} queries | classic p50 / p95 (µs) | code p50 / p95 (µs) | ratio p50 / p95 |")
    print("|---|---|---|---|")
    for group, lat in rows:
        c50, c95 = pct(lat["classic"], 50), pct(lat["classic"], 95)
        f50, f95 = pct(lat["code"], 50), pct(lat["code"], 95)
        print(f"| {group} ({len(lat['code'])}) | {c50:.1f} / {c95:.1f} | {f50:.1f} / {f95:.1f} | "
              f"{f50 / c50:.2f}x / {f95 / c95:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
