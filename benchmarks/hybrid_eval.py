"""Hybrid chunk search on ../shared/eval: lexical only, vector only (MiniLM), the original's fusion, ours.

    python benchmarks/hybrid_eval.py [--sets cosqa-dev,semble-dev,stdlib-s0-doc,stdlib-s0-id,go-id-s0]
                                     [--embedder minilm] [--tune] [--json OUT]

Chunks come from the structure stage; vectors are cached by text hash in
$CODELEX_BENCH_DIR/embeddings (the first run embeds everything: minutes).
cosqa, stdlib and go are scored on files (a file at the rank of its best
chunk); semble-dev on chunks, as that benchmark scores chunk results (a
chunk covers a file target when its path matches).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import relevance as rel  # noqa: E402

from codelex.dense import VectorCache, embed_checked, embedder_from_spec  # noqa: E402
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, HybridSearcher, chunk_rows, embedding_text  # noqa: E402
from codelex.rank.hybrid import FUSIONS, Fusion, fuse, query_class  # noqa: E402
from codelex.structure import analyze  # noqa: E402

CACHE = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench")) / "embeddings"


def load_sets(names):
    out = {}
    for name in names:
        if name == "semble-dev":
            for repo in sorted(p.name for p in (rel.EVAL_DIR / "semble-dev").iterdir() if p.is_dir()):
                docs, queries = rel.load_semble(repo)
                out[f"semble:{repo}"] = (docs, queries)
        else:
            loaded = rel.load_set(name)
            if loaded is not None:
                out[name] = loaded
    return out


def corpus_of(docs):
    rows = []
    for path, text in docs:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        rows.extend(chunk_rows(path, data, analyze(path, data)))
    return ChunkCorpus.from_rows(rows)


def file_ranking(rows, order, k=10):
    seen, out = set(), []
    for r in order:
        p = rows[int(r)].path
        if p not in seen:
            seen.add(p)
            out.append(p)
            if len(out) >= k:
                break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="cosqa-dev,semble-dev,stdlib-s0-doc,stdlib-s0-id,go-id-s0")
    ap.add_argument("--embedder", default="minilm", help="a spec, or onnx (OnnxEmbedder with the options below)")
    ap.add_argument("--max-tokens", type=int, help="onnx: the tokens of a chunk the model sees")
    ap.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.embedder == "onnx":
        from codelex.dense.onnx_embedder import OnnxEmbedder

        embedder = OnnxEmbedder(max_tokens=args.max_tokens, precision=args.precision)
    else:
        embedder = embedder_from_spec(args.embedder)
    sets = load_sets(args.sets.split(","))
    fusions = dict(FUSIONS)
    if args.tune:
        for k in (5, 10, 20):
            for depth in (50, 100):
                for wv in (0.6, 0.7, 0.8, 0.9):
                    for ws in (0.1, 0.2):
                        for wd in (0.0, 0.05, 0.1):
                            fusions[f"k{k}/d{depth}/p{wv}/s{ws}/d{wd}"] = Fusion(
                                "t", {"prose": (wv, 1 - wv), "symbol": (ws, 1 - ws), "defined": (wd, 1 - wd)},
                                k, depth)
    results: dict[str, dict[str, dict]] = {}
    semble: dict[str, dict[str, dict]] = {}
    for name, (docs, queries) in sets.items():
        t = time.perf_counter()
        corpus = corpus_of(docs)
        lexical = ChunkLexicalIndex(corpus)
        cache = VectorCache(embedder, CACHE / name.replace(":", "-").replace("-doc", "").replace("-id", "") if name.startswith("stdlib") else CACHE / name.replace(":", "-"))
        texts = [embedding_text(r) for r in corpus.rows]
        n_new = cache.embed_missing(corpus.keys, texts)
        if n_new:
            cache.save()
        vectors, present = cache.matrix(corpus.keys)
        searcher = HybridSearcher(corpus, lexical, vectors, present)
        qv = embed_checked(embedder, [q["query"] for q in queries])
        print(f"# {name}: {len(docs)} files, {len(corpus)} chunks, {n_new} embedded, "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
        ranked: dict[str, list] = {m: [] for m in ("lexical", "vector", *fusions)}
        n = len(corpus)
        for q, v in zip(queries, qv):
            lex_rows, _ = lexical.ranking(q["query"], n)
            order, _sim = searcher.vector_order(v)
            ranked["lexical"].append(lex_rows)
            ranked["vector"].append(order)
            cls = query_class(q["query"], lex_rows, corpus)
            for fname, f in fusions.items():
                wv, wl = f.weights_for(cls)
                ranked[fname].append(fuse(order, lex_rows, n, f, wv, wl))
        for m, orders in ranked.items():
            if name.startswith("semble:"):
                files = [[corpus.rows[int(r)].path for r in o[:10]] for o in orders]
                semble.setdefault(m, {})[name[7:]] = rel.semble_metrics(files, queries)
            else:
                files = [file_ranking(corpus.rows, o) for o in orders]
                results.setdefault(m, {})[name] = rel.metrics(files, queries)
    for m, per in semble.items():
        results.setdefault(m, {})["semble-dev"] = rel.semble_summary(per)
    names = [n for n in (*rel.SETS, "semble-dev") if any(n in r for r in results.values())]

    def cell(r, n):
        x = r.get(n)
        if x is None:
            return "—"
        if n == "semble-dev":
            return f"{x['sNDCG@10']:.3f} / {x['MRR@10']:.3f}"
        return f"{x['MRR@10']:.3f} / {x['R@10']:.3f}"

    shown = ["lexical", "vector", "original", "shape"]
    if args.tune:
        def mean_score(r):
            return sum(r[n]["MRR@10"] if n != "semble-dev" else r[n]["sNDCG@10"] for n in names) / len(names)
        def margin(r):  # the worst gain over the better half, across the sets
            def sc(x, n):
                return x[n]["MRR@10"] if n != "semble-dev" else x[n]["sNDCG@10"]
            return min(sc(r, n) - max(sc(results["lexical"], n), sc(results["vector"], n)) for n in names)
        tuned = [m for m in results if m.startswith("k")]
        best = sorted(tuned, key=lambda m: -mean_score(results[m]))[:8]
        safest = sorted(tuned, key=lambda m: -margin(results[m]))[:8]
        shown += best + [m for m in safest if m not in best]
        print("margins (worst gain over the better half): " + ", ".join(
            f"{m} {margin(results[m]):+.3f}" for m in ["original", "shape", *best, *safest]))
    print("| ranking | " + " | ".join(f"{n} {'sNDCG / MRR' if n == 'semble-dev' else 'MRR@10 / R@10'}"
                                      for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for m in shown:
        print(f"| {m} | " + " | ".join(cell(results[m], n) for n in names) + " |")
    if "semble-dev" in names:
        cats = sorted({k.split(":")[0] for k in results["lexical"]["semble-dev"] if ":" in k})
        print("\nsemble-dev by category (sNDCG):")
        for m in ["lexical", "vector", "original", "shape"]:
            print(f"- {m}: " + ", ".join(f"{c} {results[m]['semble-dev'][c + ':sNDCG@10']:.3f}" for c in cats))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
