"""Hybrid chunk search speed: embedding throughput, and query latency over 100,000 chunks.

    python benchmarks/hybrid_bench.py [--chunks 100000] [--embedder minilm-int8] [--skip-throughput]

Throughput: the embedder over 1,024 chunks of the stdlib corpus.
Latency: the chunks of semble-dev-whole (whole checkouts: tests, examples and docs included; semble-dev's
source roots when $CODELEX_SEMBLE_WHOLE_DIR is not built) with their vectors from the hybrid_eval cache
(run that first), tiled under copyN/ prefixes up to --chunks rows, each copy's vectors jittered (sigma
0.02) and renormalised; the sets' 198 queries, their own vectors. Reports HybridSearcher.search p50/p95
with the query vector given for the adaptive fusion, with the vector half's path priors and without them
(interleaved, same run), and the original fusion; the first search on a fresh corpus; the query embedding
alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import relevance as rel  # noqa: E402

from codelex.dense import VectorCache, embed_checked, embedder_from_spec  # noqa: E402
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, ChunkRow, HybridSearcher, chunk_rows, embedding_text  # noqa: E402
from codelex.structure import analyze  # noqa: E402

CACHE = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench")) / "eval-indexes"


def stdlib_chunks(limit: int) -> list[ChunkRow]:
    root = Path(sysconfig.get_paths()["stdlib"])
    rows: list[ChunkRow] = []
    for p in sorted(root.rglob("*.py")):
        if "site-packages" in p.parts:
            continue
        data = p.read_bytes()
        rel_path = str(p.relative_to(root))
        rows.extend(chunk_rows(rel_path, data, analyze(rel_path, data)))
        if len(rows) >= limit:
            break
    return rows[:limit]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--embedder", default="minilm-int8")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args(argv)
    embedder = embedder_from_spec(args.embedder)
    if not args.skip_throughput:
        sample = [embedding_text(r) for r in stdlib_chunks(1024)]
        embed_checked(embedder, sample[:32])  # warm up
        t = time.perf_counter()
        embed_checked(embedder, sample)
        dt = time.perf_counter() - t
        chars = sum(len(s) for s in sample) / len(sample)
        print(f"throughput: {len(sample) / dt:.1f} chunks/s ({embedder.name}, {chars:.0f} characters a chunk on average)")
    # Real chunks and vectors, tiled.
    whole = rel.load_semble(rel.SEMBLE_REPOS[0], whole=True) is not None
    base_rows: list[ChunkRow] = []
    base_vecs = []
    queries = []
    for repo in rel.SEMBLE_REPOS:
        docs, qs = rel.load_semble(repo, whole=whole)
        rows = []
        for path, text in docs:
            data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
            rows.extend(chunk_rows(path, data, analyze(path, data)))
        corpus = ChunkCorpus.from_rows(rows)
        cache = VectorCache(embedder, CACHE / f"{'whole' if whole else 'semble'}-{repo}")
        vecs, present = cache.matrix(corpus.keys)
        if not present.all():
            print(f"{repo}: run benchmarks/hybrid_eval.py --models {args.embedder} first (vectors missing)",
                  file=sys.stderr)
            return 2
        base_rows.extend(ChunkRow(f"{repo}/{r.path}", r.start_line, r.end_line, r.text, r.symbol) for r in rows)
        base_vecs.append(vecs)
        queries.extend(q["query"] for q in qs)
    base = np.concatenate(base_vecs)
    rng = np.random.default_rng(0)
    rows, vecs = [], []
    copy = 0
    while len(rows) < args.chunks:
        take = min(len(base_rows), args.chunks - len(rows))
        rows.extend(ChunkRow(f"copy{copy}/{r.path}", r.start_line, r.end_line, r.text, r.symbol)
                    for r in base_rows[:take])
        v = base[:take] + (0.02 * rng.standard_normal((take, base.shape[1])).astype(np.float32) if copy else 0)
        vecs.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        copy += 1
    vectors = np.concatenate(vecs).astype(np.float32)
    t = time.perf_counter()
    corpus = ChunkCorpus.from_rows(rows)
    lexical = ChunkLexicalIndex(corpus)
    t_lex = time.perf_counter() - t
    t = time.perf_counter()
    searcher = HybridSearcher(corpus, lexical, vectors, None, lambda q: embed_checked(embedder, [q])[0])
    t_vec = time.perf_counter() - t
    qv = embed_checked(embedder, queries)
    print(f"{len(corpus):,} chunks of {len(corpus.file_rows):,} files ({'whole checkouts' if whole else 'source roots'}): "
          f"chunk index built in {t_lex:.1f} s, vector index in {t_vec * 1e3:.0f} ms; {len(queries)} queries")
    t = time.perf_counter()
    searcher.search(queries[0], query_vector=qv[0], fusion="adaptive")
    print(f"first search on the fresh corpus (adaptive): {(time.perf_counter() - t) * 1e3:.1f} ms")
    weighted = searcher.prior_vector_ranking

    def unweighted(query_vector, depth, allowed=None, facts=None):
        rows_, sims = searcher.vector_ranking(query_vector, depth, allowed)
        return rows_, sims, sims

    lat: dict[str, list[float]] = {"adaptive": [], "adaptive, vector half without path priors": []}
    for rnd in range(4):  # (interleaved, so that both see the same machine; the first pass warms up)
        for q, v in zip(queries, qv):
            for name, ranking in zip(lat, (weighted, unweighted)):
                searcher.prior_vector_ranking = ranking  # type: ignore[method-assign]
                t = time.perf_counter()
                searcher.search(q, query_vector=v, fusion="adaptive")
                if rnd:
                    lat[name].append(time.perf_counter() - t)
    searcher.prior_vector_ranking = weighted  # type: ignore[method-assign]
    lat["original"] = []
    for q, v in zip(queries, qv):
        t = time.perf_counter()
        searcher.search(q, query_vector=v, fusion="original")
        lat["original"].append(time.perf_counter() - t)
    for name, xs in lat.items():
        print(f"search ({name}), query vector given: p50 {statistics.median(xs) * 1e3:.2f} ms, "
              f"p95 {pct(xs, 0.95) * 1e3:.2f} ms, max {max(xs) * 1e3:.2f} ms")
    emb = []
    for q in queries:
        t = time.perf_counter()
        embed_checked(embedder, [q])
        emb.append(time.perf_counter() - t)
    print(f"query embedding alone: p50 {statistics.median(emb) * 1e3:.2f} ms, p95 {pct(emb, 0.95) * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
