"""The ranking pipeline against semble, on every development set, in one run.

    python benchmarks/pipeline_eval.py                      # every set, every engine, markdown tables
    python benchmarks/pipeline_eval.py --sets semble-dev --engines codelex-search,semble
    python benchmarks/pipeline_eval.py --ablate              # plus one row per pipeline stage switched off
    python benchmarks/pipeline_eval.py --ablate translations,near_copies   # ...or per stage named
    python benchmarks/pipeline_eval.py --json out.json

Engines (each through its public API, on the same corpora written to disk):

- ``codelex-search``: ``Project.search`` (files), the product's default ranking;
- ``codelex-code``: ``Project.code_search`` without an embedder (chunks; files in the order of their chunks);
- ``codelex-hybrid``, ``codelex-vector``, ``codelex-original``: ``Project.code_search`` with the default
  embedder (all-MiniLM-L6-v2 on ONNX Runtime) and the ``adaptive`` fusion (the default), the vector half
  alone, or the seed's fusion; the first run embeds every chunk (minutes; the vectors are kept in the
  set's index directory, shared with ``hybrid_eval.py``);
- ``semble``: semble 0.7.0's own index and ``search`` with alpha = 0 (its lexical pipeline), in its own
  venv (``python benchmarks/contender_semble.py --setup``; skipped with a note when absent).

Sets: ``../shared/eval`` only.  semble-dev is scored as semble scores it (sNDCG@10 and MRR@10, mean over
repositories, by category); at chunk level (csNDCG@10) a target with a line span counts only for a
returned chunk of that file overlapping it.  The other sets: MRR@10 and R@10 on files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contender_semble  # noqa: E402
import relevance as rel  # noqa: E402

BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))
ENGINES = ("codelex-search", "codelex-code", "semble")
SETS = ("semble-dev", "semble-dev-whole", "cosqa-dev", "stdlib-s0-doc", "stdlib-s0-id", "go-id-s0")
K = 10
#: The semble-dev sets and the prefix of their repositories' names (``semble:pydantic``, ``whole:pydantic``).
SEMBLE_SETS = {"semble-dev": "semble", "semble-dev-whole": "whole"}


def load_sets(names) -> dict[str, tuple[list, list[dict]]]:
    out = {}
    for name in names:
        if name in SEMBLE_SETS:
            for repo in rel.SEMBLE_REPOS:
                loaded = rel.load_semble(repo, whole=name == "semble-dev-whole")
                if loaded is None:
                    print(f"# {name}/{repo}: not built (python3 ../shared/eval/semble-dev-whole/build.py "
                          f"--out {rel.SEMBLE_WHOLE_DIR}); skipped", file=sys.stderr)
                    continue
                out[f"{SEMBLE_SETS[name]}:{repo}"] = loaded
        else:
            loaded = rel.load_set(name)
            if loaded is None:
                print(f"# {name}: corpus unavailable, skipped", file=sys.stderr)
                continue
            out[name] = loaded
    return out


def files_of(chunks) -> list[str]:
    """Files in the order of their first chunk."""
    seen, out = set(), []
    for path, *_ in chunks:
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def chunk_metrics(ranked: list[list[tuple]], queries: list[dict], k: int = K) -> dict[str, float]:
    """csNDCG@10: semble's NDCG over the top k chunks; a span target is covered only by an overlapping chunk."""
    per = []
    for chunks, q in zip(ranked, queries):
        top = chunks[:k]
        found = set()
        targets = q.get("targets", [])
        for t in targets:
            files = set(t.get("files", []))
            span = (t.get("start_line"), t.get("end_line"))
            for i, (path, start, end) in enumerate(top):
                if path in files and (span[0] is None or (start <= span[1] and end >= span[0])):
                    found.add(i)
                    break
        dcg = sum(1 / math.log2(i + 2) for i in found)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(targets))))
        per.append((q.get("category", "all"), dcg / ideal if ideal else 0.0))
    out = {"csNDCG@10": sum(p[1] for p in per) / max(1, len(per))}
    for cat in sorted({p[0] for p in per}):
        rows = [p[1] for p in per if p[0] == cat]
        out[f"{cat}:csNDCG@10"] = sum(rows) / len(rows)
    return out


def materialize(name: str, docs) -> Path:
    """The corpus as files under the bench directory (written once per set)."""
    root = BENCH_DIR / "eval-corpora" / name.replace(":", "-")
    marker = root / ".complete"
    if not marker.exists():
        if root.exists():
            shutil.rmtree(root)
        contender_semble.write_corpus(docs, root)
        marker.write_text(str(len(docs)))
    return root


def run_codelex(sets, engines, *, ablate: list[str] | None = None) -> dict[str, dict[str, dict]]:
    """``{engine: {set: {"files": [...], "chunks": [...]}}}``, each a list per query."""
    from codelex import Project

    out: dict[str, dict[str, dict]] = {}
    for name, (docs, queries) in sets.items():
        root = materialize(name, docs)
        index_dir = BENCH_DIR / "eval-indexes" / name.replace(":", "-")
        t = time.perf_counter()
        with Project(root, index_dir=index_dir, max_bytes=None, use_git=False) as project:
            project.open()
            project.wait_structure()
            project.prepare_code_search()
            opened = time.perf_counter() - t
            for engine in engines:
                if not engine.startswith("codelex"):
                    continue
                t = time.perf_counter()
                files, chunks = [], []
                for q in queries:
                    if engine == "codelex-search":
                        hits = project.search(q["query"], limit=K).results
                        files.append([h.file for h in hits])
                        chunks.append([(h.file, h.start_line, h.end_line) for h in hits])
                    else:
                        fusion = {"codelex-hybrid": "adaptive", "codelex-vector": "vector",
                                  "codelex-original": "original"}.get(engine)
                        result = project.code_search(q["query"], embedder=False if fusion is None else None,
                                                     fusion=fusion, wait=fusion is not None, limit=K, per_file=K,
                                                     total_lines=10**6, excerpt_lines=10**6, background=False)
                        if fusion is not None and result.mode != "hybrid":
                            raise SystemExit(f"{engine}: {name}: not hybrid ({result.hint})")
                        chunks.append([(h.path, h.start_line, h.end_line) for h in result.hits])
                        files.append(files_of(chunks[-1]))
                out.setdefault(engine, {})[name] = {"files": files, "chunks": chunks,
                                                    "seconds": time.perf_counter() - t, "open": opened}
        print(f"# {name}: {len(docs)} files, codelex opened in {opened:.1f} s", file=sys.stderr)
    return out


def run_semble(sets) -> dict[str, dict] | None:
    raw = contender_semble.semble_rankings(sets)
    if raw is None:
        print("# semble: no venv (python benchmarks/contender_semble.py --setup); skipped", file=sys.stderr)
        return None
    return {name: {"files": [files_of(hits) for hits in entry["results"]], "chunks": entry["results"],
                   "seconds": entry["seconds_search"], "open": entry["seconds_index"]} for name, entry in raw.items()}


def score(runs: dict[str, dict], sets) -> dict[str, dict]:
    """``{set or "semble-dev": metrics}`` for one engine."""
    per_repo: dict[str, dict] = {s: {} for s in SEMBLE_SETS}
    chunk_repo: dict[str, dict] = {s: {} for s in SEMBLE_SETS}
    out = {}
    prefixes = {p: s for s, p in SEMBLE_SETS.items()}
    for name, run in runs.items():
        queries = sets[name][1]
        prefix, _, repo = name.partition(":")
        if prefix in prefixes:
            per_repo[prefixes[prefix]][repo] = rel.semble_metrics(run["files"], queries)
            chunk_repo[prefixes[prefix]][repo] = chunk_metrics(run["chunks"], queries)
        else:
            out[name] = rel.metrics(run["files"], queries)
    for set_name, repos in per_repo.items():
        if repos:
            summary = rel.semble_summary(repos)
            summary.update(rel.semble_summary(chunk_repo[set_name]))
            out[set_name] = summary
            out[f"{set_name}/repos"] = {k: dict(v, **chunk_repo[set_name][k]) for k, v in repos.items()}
    return out


def table(results: dict[str, dict]) -> str:
    names = [n for n in SETS if any(n in r for r in results.values())]
    lines = ["| engine | " + " | ".join(
        f"{n} sNDCG / csNDCG / MRR" if n in SEMBLE_SETS else f"{n} MRR@10 / R@10" for n in names) + " |",
        "|---|" + "--:|" * len(names)]
    for engine, r in results.items():
        cells = []
        for n in names:
            m = r.get(n)
            if m is None:
                cells.append("—")
            elif n in SEMBLE_SETS:
                cells.append(f"{m['sNDCG@10']:.3f} / {m['csNDCG@10']:.3f} / {m['MRR@10']:.3f}")
            else:
                cells.append(f"{m['MRR@10']:.3f} / {m['R@10']:.3f}")
        lines.append(f"| {engine} | " + " | ".join(cells) + " |")
    for set_name in SEMBLE_SETS:
        if not any(set_name in r for r in results.values()):
            continue
        cats = ("architecture", "semantic", "symbol")
        lines += ["", f"{set_name} by category, sNDCG@10 (csNDCG@10):", "",
                  "| engine | " + " | ".join(cats) + " |", "|---|" + "--:|" * len(cats)]
        for engine, r in results.items():
            m = r.get(set_name)
            if m:
                lines.append(f"| {engine} | " + " | ".join(
                    f"{m.get(c + ':sNDCG@10', 0):.3f} ({m.get(c + ':csNDCG@10', 0):.3f})" for c in cats) + " |")
        lines += ["", f"{set_name} by repository, sNDCG@10:", "",
                  "| engine | " + " | ".join(rel.SEMBLE_REPOS) + " |", "|---|" + "--:|" * len(rel.SEMBLE_REPOS)]
        for engine, r in results.items():
            repos = r.get(f"{set_name}/repos")
            if repos:
                lines.append(f"| {engine} | " + " | ".join(
                    f"{repos[x]['sNDCG@10']:.3f}" if x in repos else "—" for x in rel.SEMBLE_REPOS) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--ablate", nargs="?", const="all", default=None, metavar="STAGES",
                    help="one codelex row per pipeline stage switched off (every stage, or those named, comma-separated)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    sets = load_sets(args.sets.split(","))
    engines = args.engines.split(",")
    runs: dict[str, dict[str, dict]] = {}
    if "semble" in engines:
        semble = run_semble(sets)
        if semble is not None:
            runs["semble (lexical)"] = semble
    runs.update(run_codelex(sets, engines))
    if args.ablate:
        from codelex.rank.pipeline import STAGES, stages_off

        for stage in (STAGES if args.ablate == "all" else args.ablate.split(",")):
            with stages_off(stage):
                for engine, by_set in run_codelex(sets, [e for e in engines if e.startswith("codelex")]).items():
                    runs[f"{engine} - {stage}"] = by_set
    results = {engine: score(by_set, sets) for engine, by_set in runs.items()}
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({e: {k: v for k, v in r.items()} for e, r in results.items()},
                                              indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
