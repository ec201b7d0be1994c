"""The import graph: extraction and resolution cost and edge counts, and relevance with and without centrality.

Usage::

    python benchmarks/graph_bench.py cost        # stdlib corpus, Linux tree, Go 1.19 src/
    python benchmarks/graph_bench.py relevance   # MRR@10 on every set in ../shared/eval, ± centrality
    python benchmarks/graph_bench.py project ROOT  # a Project's cold build ± the graph, graph ready after

``cost`` reads each corpus into memory first (as the suite does), then times
``ImportGraph.build`` (extraction and resolution), the index build of the
same files, and one per-edit update of the graph beside the index's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _corpora():
    from corpus import materialize

    out = [("stdlib", *materialize("stdlib")), ("linux", *materialize("linux"))]
    import os

    go = os.environ.get("CODELEX_GO_CORPUS")
    roots = [Path(go) / "src", *Path(go).glob("usr/share/go-*/src"), *Path(go).glob("usr/lib/go-*/src")] if go else []
    root = next((r for r in roots if r.is_dir()), None)
    if root is not None:  # Go's own tree (Debian's golang-1.19-src): every .go file, and go.mod files
        paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.go"))
        out.append(("go-1.19 src", root, paths))
    return out


def cost() -> str:
    import codelex
    from codelex.graph import ImportGraph

    rows = ["| corpus | files | references | resolved | unresolved | edges | graph build (s) | index build (s) | "
            "graph ÷ index | update: graph / index (ms) |", "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for name, root, paths in _corpora():
        texts = {}
        for p in paths:
            try:
                texts[p] = (Path(root) / p).read_bytes().decode("utf-8", "surrogateescape")
            except OSError:
                pass
        t = time.perf_counter()
        graph = ImportGraph.build(texts.keys(), texts.get)
        g_s = time.perf_counter() - t
        t = time.perf_counter()
        index = codelex.WordIndex.build(list(texts.items()), max_bytes=None)
        i_s = time.perf_counter() - t
        s = graph.stats()
        sample = [p for p in sorted(texts) if graph.imports(p)][:: max(1, len(texts) // 200)][:50]
        g_up, i_up = [], []
        for p in sample:
            text = texts[p] + "\n"
            t = time.perf_counter()
            graph.update(p, text)
            g_up.append(time.perf_counter() - t)
            t = time.perf_counter()
            index.update(p, text)
            i_up.append(time.perf_counter() - t)
        rows.append(f"| {name} | {len(texts):,} | {s['refs']:,} | {s['resolved']:,} | {s['unresolved']:,} | "
                    f"{s['edges']:,} | {g_s:.2f} | {i_s:.2f} | {g_s / i_s:.2f} | "
                    f"{statistics.median(g_up) * 1e3:.3f} / {statistics.median(i_up) * 1e3:.3f} |")
    return "\n".join(rows)


def relevance() -> str:
    import codelex
    import relevance as rel
    from codelex.graph import from_mapping

    rows = ["| set | files | queries | MRR@10 without | MRR@10 with centrality | importer counts |",
            "|---|--:|--:|--:|--:|--:|"]
    sets = [(n, rel.load_set(n)) for n in rel.SETS] + [(f"semble-dev/{r}", rel.load_semble(r))
                                                      for r in rel.SEMBLE_REPOS]
    for name, loaded in sets:
        if loaded is None:
            rows.append(f"| {name} | — | — | corpus unavailable | | |")
            continue
        docs, queries = loaded
        docs = [(p, t.decode("utf-8", "surrogateescape") if isinstance(t, bytes) else t) for p, t in docs]
        index = codelex.WordIndex.build(docs, max_bytes=None)
        centrality = from_mapping(dict(docs)).centrality_map()
        score = rel.semble_metrics if name.startswith("semble") else rel.metrics
        key = "MRR@10"
        plain = score([[h.file for h in index.search(q["query"], limit=10)] for q in queries], queries)[key]
        boosted = score([[h.file for h in index.search(q["query"], limit=10, centrality=centrality)]
                         for q in queries], queries)[key]
        rows.append(f"| {name} | {len(docs):,} | {len(queries):,} | {plain:.3f} | {boosted:.3f} | "
                    f"{len(centrality):,} |")
    return "\n".join(rows)


_CHILD = """
import json, resource, sys, time
import codelex.project
from codelex import Project
root, index_dir, graph = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
t = time.perf_counter()
p = Project(root, index_dir=index_dir, import_graph=graph, build_structure=False)
p.open()
out = {"open_s": time.perf_counter() - t}
if graph:
    any_file = next(iter(p.index.files))
    t = time.perf_counter()
    p.importers(any_file, timeout=600)
    out["graph_after_s"] = time.perf_counter() - t
    out["graph"] = p.graph_status
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
p.close()
print(json.dumps(out))
"""


def project(root: str, runs: int = 2) -> str:
    """Cold builds of ``root`` in fresh processes without and with the graph, then a warm open with it."""
    import json
    import shutil
    import subprocess
    import tempfile

    def child(index_dir: str, graph: bool) -> dict:
        out = subprocess.run([sys.executable, "-c", _CHILD, root, index_dir, "1" if graph else "0"],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.splitlines()[-1])

    rows = ["| run | cold build without graph (s) | cold build with graph (s) | graph ready after it (s) | "
            "warm open (s) | graph ready after warm open (s) | peak RSS without / with (MiB) |",
            "|--:|--:|--:|--:|--:|--:|--:|"]
    for run in range(runs):
        dirs = [tempfile.mkdtemp(prefix="codelex-graph-bench-") for _ in range(2)]
        try:
            plain = child(dirs[0], False)
            cold = child(dirs[1], True)
            warm = child(dirs[1], True)
        finally:
            for d in dirs:
                shutil.rmtree(d, ignore_errors=True)
        rows.append(f"| {run + 1} | {plain['open_s']:.2f} | {cold['open_s']:.2f} | {cold['graph_after_s']:.2f} | "
                    f"{warm['open_s']:.2f} | {warm['graph_after_s']:.2f} | "
                    f"{plain['rss_mb']:.0f} / {cold['rss_mb']:.0f} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["cost", "relevance", "project"])
    ap.add_argument("root", nargs="?", help="project: the tree to build")
    args = ap.parse_args(argv)
    if args.what == "project":
        if not args.root:
            ap.error("project needs ROOT")
        print(project(args.root))
    else:
        print(cost() if args.what == "cost" else relevance())
    return 0


if __name__ == "__main__":
    sys.exit(main())
