"""What the ranking pipeline costs a query, side by side with the native code ranking alone (issue 28).

    python benchmarks/pipeline_latency.py --corpus stdlib     # native, file route, chunk route
    python benchmarks/pipeline_latency.py --corpus linux      # native, file route (chunks: --chunks)
    python benchmarks/pipeline_latency.py --corpus linux --project   # Project.search as every surface answers

Today's ``search`` before the pipeline was ``WordIndex.search`` (the code
ranking, top 10).  The pipeline asks the index for PIPELINE_DEPTH candidates
and reranks them: at file granularity (a one-shot command on a large tree,
or before the chunks are indexed; each file's defined names here from the
native scanner, in a project from the structure store) or by chunk
(``--chunks``: the project's chunks, built here from the structure stage).  Queries: the suite's list
(sampled identifier pieces and natural phrases); p50/p95 over 3 timed passes
after a warm-up pass.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import materialize, stdlib_corpus  # noqa: E402
from queries import query_list  # noqa: E402

import codelex  # noqa: E402
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, chunk_rows, search_files  # noqa: E402


def _pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def _times(fn, queries, passes=3):
    for q in queries:  # warm-up
        fn(q)
    out = []
    for _ in range(passes):
        for q in queries:
            t = time.perf_counter_ns()
            fn(q)
            out.append((time.perf_counter_ns() - t) / 1e6)
    return out


_FIRST_TOUCH = """
import json, sys, time
t0 = time.perf_counter()
from codelex import Project
t1 = time.perf_counter()
p = Project(sys.argv[1], index_dir=sys.argv[2], import_graph="saved", max_bytes=None, use_git=False)
p.open()
t2 = time.perf_counter()
r = p.search(sys.argv[3], limit=10)
t3 = time.perf_counter()
p.search(sys.argv[4], limit=10)
t4 = time.perf_counter()
p.close()
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "first": t3 - t2, "second": t4 - t3,
                  "provisional": r.provisional}))
"""


def project_latency(corpus: str, queries_from) -> int:
    """``Project.search`` as every surface answers it (names from the structure store, the import graph's
    counts, translations, near-copies), warm, after a waited-for open of the corpus on disk; then a fresh
    process's first and second query over the saved index (the first-touch cost)."""
    import json
    import subprocess

    from corpus import BENCH_DIR

    import os

    root, files = materialize(corpus)
    index_dir = BENCH_DIR / "latency-indexes" / corpus
    extra = json.loads(os.environ.get("CODELEX_LATENCY_PROJECT", "{}"))  # (other Project arguments, to compare)
    t = time.perf_counter()
    with codelex.Project(root, index_dir=index_dir, max_bytes=None, use_git=False, **extra) as project:
        project.open()
        project.wait_structure()
        print(f"# {corpus}: {len(project.index):,} files, opened (index, structure, graph) in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
        docs = [(f, (root / f).read_bytes()) for f in files[:3000]] if corpus == "linux" else stdlib_corpus()
        queries = queries_from(docs)
        project.search(queries[0], limit=10)  # (a chunk ranking asked for builds its chunks here)
        ts = _times(lambda q: project.search(q, limit=10), queries)
    firsts = []
    for q, q2 in zip(queries[:5], queries[5:10]):
        out = subprocess.run([sys.executable, "-c", _FIRST_TOUCH, str(root), str(index_dir), q, q2],
                             capture_output=True, text=True, check=True)
        firsts.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{len(queries)} queries x 3 passes, {corpus}, Project.search (warm, in-process)\n")
    print("| | p50 (ms) | p95 (ms) | max (ms) |\n|---|--:|--:|--:|")
    print(f"| warm search | {_pct(ts, 50):.3f} | {_pct(ts, 95):.3f} | {max(ts):.2f} |")
    for key, label in (("open", "fresh process: open (load + stat check)"), ("first", "fresh process: first query"),
                       ("second", "fresh process: second query")):
        values = [f[key] * 1e3 for f in firsts]
        print(f"| {label} | {_pct(values, 50):.1f} | {_pct(values, 95):.1f} | {max(values):.1f} |")
    print(f"\n(first queries provisional: {sum(f['provisional'] for f in firsts)} of {len(firsts)})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="stdlib", choices=("stdlib", "linux"))
    ap.add_argument("--chunks", action="store_true", help="also time the chunk route (default on for stdlib)")
    ap.add_argument("--project", action="store_true",
                    help="time Project.search (the corpus written to disk, opened and analyzed) instead")
    args = ap.parse_args(argv)
    if args.project:
        return project_latency(args.corpus, query_list)
    if args.corpus == "stdlib":
        docs = stdlib_corpus()
    else:
        root, files = materialize("linux")
        docs = [(f, (root / f).read_bytes()) for f in files]
    t = time.perf_counter()
    index = codelex.WordIndex.build(docs, max_bytes=None)
    print(f"# {args.corpus}: {len(docs):,} files, index built in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    queries = query_list(docs)
    from codelex.text import scan_definitions

    t = time.perf_counter()
    names = {path: frozenset(n for n, _ in scan_definitions(path, data)) for path, data in docs}
    print(f"# names of {len(names):,} files (native scanner) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rows = [("native code ranking (before the pipeline)", _times(lambda q: index.search(q, limit=10), queries)),
            ("pipeline, file route", _times(lambda q: search_files(index, q, names_of=names.get), queries))]
    if args.chunks or args.corpus == "stdlib":
        from codelex.structure import analyze

        t = time.perf_counter()
        chunk_rows_ = []
        for path, data in docs:
            chunk_rows_.extend(chunk_rows(path, data, analyze(path, data)))
        corpus = ChunkCorpus.from_rows(chunk_rows_)
        lexical = ChunkLexicalIndex(corpus)
        print(f"# chunks: {len(corpus):,}, built in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        rows.append(("pipeline, chunk route", _times(lambda q: search_files(index, q, chunks=(corpus, lexical)),
                                                      queries)))
    base50, base95 = _pct(rows[0][1], 50), _pct(rows[0][1], 95)
    print(f"{len(queries)} queries x 3 passes, {args.corpus}\n")
    print("| path | p50 (ms) | p95 (ms) | max (ms) | p50 / native | p95 / native |")
    print("|---|--:|--:|--:|--:|--:|")
    for label, ts in rows:
        p50, p95 = _pct(ts, 50), _pct(ts, 95)
        print(f"| {label} | {p50:.3f} | {p95:.3f} | {max(ts):.2f} | {p50 / base50:.2f} | {p95 / base95:.2f} |")
    print(f"\n(mean {statistics.mean(rows[0][1]):.3f} ms native)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
