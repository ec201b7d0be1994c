"""What a serving process maps: one saved index, written two ways, queried by fresh processes.

Linux's page cache keeps a write's pages in folios as large as the write (ext4 on kernels from 6.16),
and a read fault through a mapping maps the whole folio, so a process that reads a few postings of a
file written in one call becomes resident in megabytes of it. codelex writes its containers 64 KiB a
call (``persist.container``). This benchmark saves an index, makes a byte-identical copy written in
one call, and has fresh processes load each (alternating, ``--rounds`` times), ask the suite's queries
once (each never asked before: first touch) and again (warm), and report the query times and how much
the process grew.

    python benchmarks/serve_memory.py --corpus linux
    python benchmarks/serve_memory.py --corpus stdlib --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _child(index_dir: str, queries_file: str) -> dict:
    import codelex

    queries = json.loads(Path(queries_file).read_text())
    before = _rss_mb()
    index = codelex.WordIndex.load(index_dir)
    loaded = _rss_mb()
    first, warm = [], []
    for q in queries:
        t = time.perf_counter()
        index.search(q, limit=10)
        first.append((time.perf_counter() - t) * 1e3)
    for q in queries:
        t = time.perf_counter()
        index.search(q, limit=10)
        warm.append((time.perf_counter() - t) * 1e3)
    first.sort()
    warm.sort()
    return {"first_p50_ms": first[len(first) // 2], "first_total_ms": sum(first),
            "warm_p50_ms": warm[len(warm) // 2], "load_mb": loaded - before, "grown_mb": _rss_mb() - loaded}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="linux")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    import codelex
    from corpus import materialize
    from suite import query_set

    root, paths = materialize(args.corpus)
    sets = query_set(root, paths)
    queries = sets["natural"] + sets["identifier"] + sets["pair"] + sets.get("mix", [])
    with tempfile.TemporaryDirectory() as tmp:
        pieces, whole = Path(tmp) / "pieces", Path(tmp) / "whole"

        def docs():
            for p in paths:
                with open(root / p, "rb") as f:
                    yield p, f.read()

        codelex.WordIndex.build(docs(), max_bytes=None).save(pieces)
        whole.mkdir()
        for name in os.listdir(pieces):
            if name.endswith(".clx"):
                data = (pieces / name).read_bytes()
                with open(whole / name, "wb", buffering=0) as f:  # one call: the largest folios
                    f.write(data)
                shutil.copymode(pieces / name, whole / name)
                del data
        queries_file = Path(tmp) / "queries.json"
        queries_file.write_text(json.dumps(queries))
        rows: dict[str, list[dict]] = {"written 64 KiB a call (codelex)": [], "written in one call": []}
        for _ in range(args.rounds):
            for label, directory in zip(rows, (pieces, whole)):
                out = subprocess.run([sys.executable, __file__, "--child", str(directory), str(queries_file)],
                                     capture_output=True, text=True, check=True)
                rows[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"Corpus `{args.corpus}`: {len(paths):,} files; {len(queries)} queries, each asked once after a load "
          f"(first touch) and again (warm); {args.rounds} fresh processes per row, alternating; medians of them.\n")
    print("| index file | first-touch p50 (ms) | first-touch total (ms) | warm p50 (ms) | RSS grown by the queries (MiB) |")
    print("|---|--:|--:|--:|--:|")
    for label, runs in rows.items():
        def med(key, runs=runs):
            values = sorted(r[key] for r in runs)
            return values[len(values) // 2]
        print(f"| {label} | {med('first_p50_ms'):.2f} | {med('first_total_ms'):.0f} | {med('warm_p50_ms'):.3f} "
              f"| {med('grown_mb'):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
