"""Hybrid chunk search on ../shared/eval: lexical alone, vector alone, the original's fusion, shape, adaptive.

    python benchmarks/hybrid_eval.py [--sets cosqa-dev,semble-dev,stdlib-s0-doc,stdlib-s0-id,go-id-s0]
                                     [--embedder minilm] [--max-tokens N] [--precision fp32|int8]
                                     [--tune] [--json OUT]

Each set's chunks come from the structure stage; their vectors are the
project's own (``$CODELEX_BENCH_DIR/eval-indexes/<set>/embeddings``, shared
with ``pipeline_eval.py``: the first run embeds everything, minutes).  Per
query the two rankings are computed once (the lexical one is the ranking
pipeline's, as ``code`` has it; the vector one exact), then every fusion
is applied to them, so ``--tune`` can try many.  cosqa, stdlib and go are
scored on files (a file at the rank of its best chunk); semble-dev as
semble scores it (sNDCG@10 / MRR@10 on files) and on chunks (csNDCG@10).
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
from pipeline_eval import chunk_metrics, load_sets  # noqa: E402

from codelex.defaults import PIPELINE_DEPTH  # noqa: E402
from codelex.dense import VectorCache, embed_checked, embedder_from_spec  # noqa: E402
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, HybridSearcher, chunk_rows, embedding_text  # noqa: E402
from codelex.rank.fusion import FUSIONS, QueryRankings, fuse, fused_order  # noqa: E402
from codelex.rank.pipeline import analyze_query  # noqa: E402
from codelex.structure import analyze  # noqa: E402

BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))
DEPTH = 100  # each ranking's rows kept per query (every fusion but the original's reads at most these)


def corpus_of(docs):
    rows = []
    for path, text in docs:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        rows.extend(chunk_rows(path, data, analyze(path, data)))
    return ChunkCorpus.from_rows(rows)


def rankings(sets, embedder) -> dict[str, tuple[ChunkCorpus, list[QueryRankings]]]:
    """Per set, its corpus and every query's two rankings."""
    out = {}
    for name, (docs, queries) in sets.items():
        t = time.perf_counter()
        corpus = corpus_of(docs)
        lexical = ChunkLexicalIndex(corpus)
        # (the stdlib sets share one corpus, so they share its vectors)
        cache = VectorCache(embedder, BENCH_DIR / "eval-indexes" / name.replace(":", "-").replace("s0-id", "s0-doc"))
        texts = [embedding_text(r) for r in corpus.rows]
        n_new = cache.embed_missing(corpus.keys, texts)
        if n_new:
            cache.save(keep=corpus.keys)
        embedded = time.perf_counter() - t
        vectors, present = cache.matrix(corpus.keys)
        searcher = HybridSearcher(corpus, lexical, vectors, present)
        qv = embed_checked(embedder, [q["query"] for q in queries])
        ranked = []
        for q, v in zip(queries, qv):
            lex_rows, lex_scores = lexical.pipeline_ranking(analyze_query(q["query"]), PIPELINE_DEPTH, corpus)
            vec_rows, vec_sims = searcher.vector_ranking(v)  # (every row: the original's fusion ranks them all)
            ranking = QueryRankings.of(q["query"], corpus, np.asarray(vec_rows), np.asarray(vec_sims), lex_rows,
                                       lex_scores)
            raw_lexical, _ = lexical.ranking(q["query"], len(corpus))  # the original's own lexical half
            ranked.append((ranking, raw_lexical))
        print(f"# {name}: {len(docs)} files, {len(corpus)} chunks, {n_new} embedded in {embedded:.1f} s",
              file=sys.stderr)
        out[name] = (corpus, ranked)
    return out


def orders_for(method, corpus: ChunkCorpus, ranked: list[tuple[QueryRankings, list]]) -> list[list[int]]:
    if method == "lexical":
        return [list(r.lexical_rows) for r, _ in ranked]
    if method == "vector":
        return [list(r.vector_rows[:DEPTH]) for r, _ in ranked]
    fusion = FUSIONS[method] if isinstance(method, str) else method
    if fusion.depth is None:  # the original: every row of both, its raw lexical ranking
        wv, wl = fusion.weights_for("prose")
        return [list(fuse(r.vector_rows, raw, len(corpus), fusion, wv, wl)[:DEPTH]) for r, raw in ranked]
    rows = corpus.rows
    return [list(fused_order(r, fusion, len(corpus), lambda row: rows[row].path)) for r, _ in ranked]


def score(data, sets, method) -> dict:
    results, per_repo, chunk_repo = {}, {}, {}
    for name, (corpus, ranked) in data.items():
        queries = sets[name][1]
        orders = orders_for(method, corpus, ranked)
        if name.startswith("semble:"):
            files = [[corpus.rows[int(r)].path for r in o[:10]] for o in orders]
            chunks = [[(corpus.rows[int(r)].path, corpus.rows[int(r)].start_line, corpus.rows[int(r)].end_line)
                       for r in o[:10]] for o in orders]
            per_repo[name] = rel.semble_metrics(files, queries)
            chunk_repo[name] = chunk_metrics(chunks, queries)
        else:
            files = []
            for o in orders:
                seen, f = set(), []
                for r in o:
                    p = corpus.rows[int(r)].path
                    if p not in seen:
                        seen.add(p)
                        f.append(p)
                        if len(f) == 10:
                            break
                files.append(f)
            results[name] = rel.metrics(files, queries)
    if per_repo:
        summary = rel.semble_summary(per_repo)
        summary.update(rel.semble_summary(chunk_repo))
        results["semble-dev"] = summary
    return results


def headline(r: dict, n: str) -> float:
    return r[n]["sNDCG@10"] if n == "semble-dev" else r[n]["MRR@10"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="cosqa-dev,semble-dev,stdlib-s0-doc,stdlib-s0-id,go-id-s0")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--max-tokens", type=int, help="onnx: the tokens of a chunk the model sees")
    ap.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.max_tokens or args.precision != "fp32":
        from codelex.dense import OnnxEmbedder

        embedder = OnnxEmbedder(max_tokens=args.max_tokens, precision=args.precision)
    else:
        embedder = embedder_from_spec(args.embedder)
    sets = load_sets(args.sets.split(","))
    data = rankings(sets, embedder)
    methods: dict[str, object] = {m: m for m in ("lexical", "vector", *FUSIONS)}
    if args.tune:
        from fusion_grid import candidates

        methods.update(candidates())
    results = {m: score(data, sets, f) for m, f in methods.items()}
    names = [n for n in (*rel.SETS, "semble-dev") if any(n in r for r in results.values())]

    def margin(r):  # the worst gain over the better half, across the sets
        return min(headline(r, n) - max(headline(results["lexical"], n), headline(results["vector"], n))
                   for n in names)

    def cell(r, n):
        x = r.get(n)
        if x is None:
            return "—"
        if n == "semble-dev":
            return f"{x['sNDCG@10']:.3f} / {x['csNDCG@10']:.3f} / {x['MRR@10']:.3f}"
        return f"{x['MRR@10']:.3f} / {x['R@10']:.3f}"

    shown = list(methods)[:2 + len(FUSIONS)]
    if args.tune:
        tuned = list(methods)[2 + len(FUSIONS):]
        by_mean = sorted(tuned, key=lambda m: -sum(headline(results[m], n) for n in names))[:6]
        by_margin = sorted(tuned, key=lambda m: -margin(results[m]))[:6]
        shown += by_mean + [m for m in by_margin if m not in by_mean]
    print(f"embedder: {embedder.name}")
    print("| ranking | " + " | ".join(f"{n} {'sNDCG / csNDCG / MRR' if n == 'semble-dev' else 'MRR@10 / R@10'}"
                                      for n in names) + " | margin |")
    print("|---|" + "--:|" * (len(names) + 1))
    for m in shown:
        print(f"| {m} | " + " | ".join(cell(results[m], n) for n in names) +
              (f" | {margin(results[m]):+.3f} |" if m not in ("lexical", "vector") else " | |"))
    if "semble-dev" in names:
        cats = ("architecture", "semantic", "symbol")
        print("\nsemble-dev by category (sNDCG):")
        for m in shown[:2 + len(FUSIONS)]:
            print(f"- {m}: " + ", ".join(f"{c} {results[m]['semble-dev'][c + ':sNDCG@10']:.3f}" for c in cats))
    if args.json:
        Path(args.json).write_text(json.dumps({m: results[m] for m in shown}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
