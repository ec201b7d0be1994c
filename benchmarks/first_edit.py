"""The first edits after a build and after a load: what an index costs before it is warm.

A median update figure hides whatever an index builds lazily on the first
edit or query.  This benchmark measures, on a corpus, in fresh processes:

- ``build``: ``WordIndex.build`` from disk, a save, then the first N edits
  (one line inserted in the middle of a random file) one by one;
- ``load``: ``WordIndex.load`` of that save in a new process, the first query
  and the next ones (each a query not asked before), then the first N edits;
  ``load-prepared``: the same after ``WordIndex.prepare_edits()`` (what a
  watched project does on a load) has finished;
- ``project-build``: a ``Project`` opened over the tree without an index
  (a full build, saved), then the first N ``on_edit`` calls; ``project``: a
  ``Project`` opened in a new process over that save, then the first N
  ``on_edit`` calls: what a per-user server or an MCP session does when it
  starts.  The projects are watched (``watch=True``, as the server's and the
  MCP session's are); ``on_edit`` applies each edit at once.

Each phase reports every edit's time (p50 and max), and the process's RSS
before and after the first edit and after the last.  ``--idle S`` waits S
seconds between the load and the first edit (what a user who opens a
project and edits later sees); the default 0 is the worst case, an edit at
once.

    python benchmarks/first_edit.py --corpus linux
    python benchmarks/first_edit.py --corpus stdlib --edits 20 --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import materialize  # noqa: E402

QUERIES = ["parse config", "http request", "read file", "socket timeout", "json decode", "thread pool",
           "unicode error", "temporary directory", "date format", "memory allocation", "device driver",
           "lock free queue", "signal handler", "path join", "hash digest", "exit code", "event loop",
           "interrupt controller", "page table", "buffer overflow", "spin lock irq"]


def rss_mib(field: str = "VmRSS") -> float:
    """The process's resident memory (``RssAnon``: its anonymous part, what no file backs), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def small_edit(content: bytes, i: int) -> bytes:
    """One new line in the middle of a file (a typical single edit)."""
    lines = content.split(b"\n")
    mid = len(lines) // 2
    return b"\n".join(lines[:mid] + [b"edited_value_%d = compute_edit(%d)" % (i, i)] + lines[mid:])


def edit_plan(root: Path, paths: list[str], n: int, seed: int = 1) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    return [(p, small_edit((root / p).read_bytes(), i)) for i, p in enumerate(rng.sample(paths, n))]


def timed_ms(fn) -> float:
    t = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t) / 1e6


def run_edits(apply, plan) -> dict:
    """Each edit timed; RSS (and its anonymous part) before the first, after the first and after the last."""
    out = {"rss_before_first_edit_mib": rss_mib(), "anon_before_first_edit_mib": rss_mib("RssAnon")}
    times = []
    for i, (path, content) in enumerate(plan):
        times.append(timed_ms(lambda: apply(path, content)))
        if i == 0:
            out["rss_after_first_edit_mib"] = rss_mib()
            out["anon_after_first_edit_mib"] = rss_mib("RssAnon")
    out["rss_after_edits_mib"] = rss_mib()
    out["anon_after_edits_mib"] = rss_mib("RssAnon")
    out["edit_ms"] = times
    return out


def phase_build(corpus: str, workdir: Path, n: int) -> dict:
    import codelex

    root, paths = materialize(corpus)
    plan = edit_plan(root, paths, n)

    def docs():
        for p in paths:
            with open(root / p, "rb") as f:
                yield p, f.read()

    t = time.perf_counter()
    index = codelex.WordIndex.build(docs(), max_bytes=None)
    out = {"files": len(paths), "build_s": time.perf_counter() - t}
    t = time.perf_counter()
    index.save(workdir / "index")
    out["save_s"] = time.perf_counter() - t
    out["index_mib"] = sum(f.stat().st_size for f in (workdir / "index").iterdir()) / 2**20
    out.update(run_edits(lambda p, c: index.update(p, c), plan))
    return out


def phase_load(corpus: str, workdir: Path, n: int, idle: float, prepared: bool = False) -> dict:
    import codelex
    import codelex.persist.lexical  # noqa: F401  (imported lazily by codelex; not part of the load)

    root, paths = materialize(corpus)
    plan = edit_plan(root, paths, n)
    out = {"rss_before_load_mib": rss_mib()}
    t = time.perf_counter()
    index = codelex.WordIndex.load(workdir / "index")
    out["load_ms"] = (time.perf_counter() - t) * 1e3
    out["rss_after_load_mib"] = rss_mib()
    out["first_query_ms"] = timed_ms(lambda: index.search(QUERIES[0], limit=10))
    later = [timed_ms(lambda q=q: index.search(q, limit=10)) for q in QUERIES[1:]]
    out["later_queries_ms"] = later
    out["rss_after_queries_mib"] = rss_mib()
    if prepared and not hasattr(index, "prepare_edits"):  # (a version without it: as a plain load)
        out["prepare_ms"] = None
    elif prepared:
        t = time.perf_counter()
        index.prepare_edits()
        while index._live.warmup_state == "running":
            time.sleep(0.001)
        out["prepare_ms"] = (time.perf_counter() - t) * 1e3
        out["rss_after_prepare_mib"] = rss_mib()
    if idle:
        time.sleep(idle)
    out.update(run_edits(lambda p, c: index.update(p, c), plan))
    out["query_after_edits_ms"] = timed_ms(lambda: index.search(QUERIES[0], limit=10))
    return out


def phase_project(corpus: str, workdir: Path, n: int, idle: float, fresh: bool) -> dict:
    """A Project over the tree: built afresh (``fresh``) or opened over the index such a build saved."""
    import codelex

    root, paths = materialize(corpus)
    plan = edit_plan(root, paths, n)
    out = {"rss_before_open_mib": rss_mib()}
    t = time.perf_counter()
    # No structure or import graph (their worker processes and threads are not what is measured); a save
    # debounced past the run, flushed by close().
    project = codelex.Project(root, index_dir=workdir / ("project-index" if fresh else "project-index-copy"),
                              build_structure=False, import_graph=False, debounce_ms=600_000, watch=True)
    project.open(wait=True)
    out["open_s"] = time.perf_counter() - t
    out["mode"] = project.last_report.mode if project.last_report else None
    out["rss_after_open_mib"] = rss_mib()
    out["anon_after_open_mib"] = rss_mib("RssAnon")
    if fresh:  # the saved index, before any edit, for the next phase
        shutil.copytree(workdir / "project-index", workdir / "project-index-copy")
    out["first_query_ms"] = timed_ms(lambda: project.search(QUERIES[0], limit=10))
    if idle:
        time.sleep(idle)
    out.update(run_edits(project.on_edit, plan))
    project.close()
    return out


def phase_pending(corpus: str, workdir: Path, steps: list[int], reps: int = 5) -> dict:
    """Query latency with pending edits: p50/p95 over the suite's query set, merged and after k edits of distinct
    files (no merge in between): what removed base documents cost a search."""
    import codelex
    import codelex.persist.lexical  # noqa: F401
    from suite import _latencies, query_set

    root, paths = materialize(corpus)
    queries = query_set(root, paths)
    qs = queries["natural"] + queries["identifier"] + queries["pair"] + queries["mix"]
    index = codelex.WordIndex.load(workdir / "index")
    index.merge_ratio = None
    plan = edit_plan(root, paths, max(steps), seed=3)
    out = {"queries": len(qs), "steps": {}}
    done = 0
    for k in [0, *steps]:
        for path, content in plan[done:k]:
            index.update(path, content)
        done = max(done, k)
        lat = _latencies(lambda q: index.search(q, limit=10), qs, reps)
        out["steps"][k] = {"p50_ms": pct(lat, 50) * 1e3, "p95_ms": pct(lat, 95) * 1e3,
                           "mean_ms": sum(lat) / len(lat) * 1e3}
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def _child(phase: str, corpus: str, workdir: Path, n: int, idle: float, pending: str = "") -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--corpus", corpus, "--workdir", str(workdir),
           "--edits", str(n), "--idle", str(idle), "--pending", pending]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{phase} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(name: str, r: dict) -> str:
    e = r["edit_ms"]
    first_q = f"{r['first_query_ms']:.1f}" if "first_query_ms" in r else "—"
    later_q = f"{pct(r['later_queries_ms'], 50):.2f}" if "later_queries_ms" in r else "—"
    def mem(when: str) -> str:
        return f"{r[f'rss_{when}_mib']:,.0f} ({r[f'anon_{when}_mib']:,.0f})"

    return (f"| {name} | {e[0]:.2f} | {e[1]:.2f} | {pct(e, 50):.3f} | {max(e):.2f} | {first_q} | {later_q} | "
            f"{mem('before_first_edit')} | {mem('after_first_edit')} | {mem('after_edits')} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="stdlib", help="stdlib, linux or synthetic:N")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--idle", type=float, default=0.0, help="seconds between the load/open and the first edit")
    parser.add_argument("--phases", default="build,load,load-prepared,project-build,project",
                        help="build, load (of build's save), load-prepared, project-build, project (open of "
                             "project-build's save)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--pending", default="", help="also: query latency after these many pending edits, e.g. "
                        "20,500,5000 (a load of the build's save; no merge in between)")
    parser.add_argument("--phase", choices=("build", "load", "load-prepared", "project-build", "project", "pending"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        if args.phase == "build":
            out = phase_build(args.corpus, args.workdir, args.edits)
        elif args.phase == "pending":
            out = phase_pending(args.corpus, args.workdir, [int(k) for k in args.pending.split(",")])
        elif args.phase in ("load", "load-prepared"):
            out = phase_load(args.corpus, args.workdir, args.edits, args.idle, args.phase == "load-prepared")
        else:
            out = phase_project(args.corpus, args.workdir, args.edits, args.idle, args.phase == "project-build")
        print(json.dumps(out))
        return 0
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    results = {}
    tmp = Path(tempfile.mkdtemp(prefix="codelex-first-edit-"))
    try:
        results["build"] = _child("build", args.corpus, tmp, args.edits, args.idle)
        if "project" in phases and "project-build" not in phases:
            phases.insert(phases.index("project"), "project-build")
        for phase in phases:
            if phase != "build":
                results[phase] = _child(phase, args.corpus, tmp, args.edits, args.idle)
        if args.pending:
            results["pending"] = _child("pending", args.corpus, tmp, args.edits, args.idle, args.pending)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    b = results["build"]
    print(f"Corpus `{args.corpus}`: {b['files']:,} files; build {b['build_s']:.1f} s, save {b['save_s']:.1f} s, "
          f"index {b['index_mib']:,.0f} MiB. First {args.edits} edits (one line inserted in the middle of a random "
          f"file), each timed; idle before the first edit: {args.idle:g} s.")
    if "load" in results:
        r = results["load"]
        print(f"Load {r['load_ms']:.1f} ms; RSS {r['rss_before_load_mib']:,.0f} MiB before the load, "
              f"{r['rss_after_load_mib']:,.0f} after, {r['rss_after_queries_mib']:,.0f} after {len(QUERIES)} queries.")
    for phase in ("project-build", "project"):
        if phase in results:
            r = results[phase]
            print(f"{phase}: Project.open {r['open_s']:.2f} s (mode {r['mode']}); RSS {r['rss_after_open_mib']:,.0f} "
                  f"MiB after it ({r['anon_after_open_mib']:,.0f} anonymous).")
    print()
    print("| after | edit 1 (ms) | edit 2 (ms) | p50 (ms) | max (ms) | first query (ms) | later queries p50 (ms) | "
          "RSS (anonymous) before edit 1, MiB | after edit 1 | after the last |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for phase in phases:
        print(_row({"build": "WordIndex.build", "load": "WordIndex.load (new process)",
                    "load-prepared": "WordIndex.load + prepare_edits() (new process)",
                    "project-build": "Project.open, building (new process)",
                    "project": "Project.open of a saved index (new process)"}[phase], results[phase]))
    print()
    for phase in phases:
        print(f"{phase}, each edit (ms): " + " ".join(f"{x:.2f}" for x in results[phase]["edit_ms"]))
    if "pending" in results:
        r = results["pending"]
        print()
        print(f"Search with pending edits ({r['queries']} queries of the suite's set, top 10, median of 5 runs each):")
        print()
        print("| pending edits | p50 (ms) | p95 (ms) | mean (ms) |")
        print("|--:|--:|--:|--:|")
        for k, v in r["steps"].items():
            print(f"| {k} | {v['p50_ms']:.3f} | {v['p95_ms']:.3f} | {v['mean_ms']:.3f} |")
    if args.json:
        args.json.write_text(json.dumps({"corpus": args.corpus, "edits": args.edits, "idle": args.idle,
                                         "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
