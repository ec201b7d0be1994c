"""What embedding a huge tree's chunks costs, and what the default ``embed_limit`` embeds of it (issue 29, item 5).

    python benchmarks/embed_cost.py ROOT [--every 20] [--time-sample 1500] [--limit 25000]
                                    [--variants fp32-256,int8-128] [--json OUT]

(``--variants ""`` skips the timing.)

e.g. ``python benchmarks/embed_cost.py ~/.cache/codelex-bench/kernel/linux-source-6.1``.

1. Lists ROOT as a project does (``codelex.ingest.list_files``), sorted by
   path (the corpus order of a project's chunks).
2. Chunks every ``--every``-th file (read with ``codelex.ingest.read_file``,
   ``codelex.structure.analyze``, ``codelex.rank.chunk_rows``) and scales the
   sample's counts by ``files / sampled files``: chunks in total, per
   embedding priority (``codelex.project.code.embedding_priority``: 0
   source, 1 tests/examples, 2 docs/data) and per top-level directory, and
   their embedding texts' (``codelex.rank.embedding_text``) length in tokens
   (the OnnxEmbedder's tokenizer: whole, and what a 256- and a 128-token
   window sees).
3. The default's share: a project embeds the first ``--limit`` chunks in
   priority order, then corpus order.  Estimated from the sample (each sampled
   chunk stands for ``files / sampled files`` chunks), and then found
   exactly by chunking the files in that order until ``--limit`` chunks.
4. Times each ``--variants`` entry (``PRECISION-TOKENS``) of
   ``codelex.dense.OnnxEmbedder`` on ``--time-sample`` chunks drawn at random
   from the sample (seed 0) and as many drawn from the default's share, in
   embedding order and in calls of ``EMBED_BATCH`` texts as a project embeds
   them; hours for the whole tree and for the default's share follow.

Run it alone on the machine: the hours come from wall-clock throughput on
every CPU this process may use; throughput per CPU-second (every thread's)
is printed too, steadier when the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

PRIORITY_NAMES = {0: "0 source", 1: "1 tests/examples", 2: "2 docs/data"}


def top_dir(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "(top-level files)"


def file_chunks(root: Path, path: str, max_bytes: int) -> list[str]:
    """The embedding texts of one file's chunks, as a project makes them (none when it cannot be read)."""
    from codelex.ingest import Document, read_file
    from codelex.rank import chunk_rows, embedding_text
    from codelex.structure import analyze

    doc = read_file(str(root), path, max_bytes)
    if not isinstance(doc, Document):
        return []
    return [embedding_text(r) for r in chunk_rows(path, doc.content, analyze(path, doc.content))]


def parse_variant(spec: str) -> tuple[str, int]:
    precision, tokens = spec.split("-")
    return precision, int(tokens)


def time_variant(precision: str, tokens: int, texts: list[str], batch: int) -> dict:
    from codelex.dense.onnx_embedder import OnnxEmbedder

    OnnxEmbedder(max_tokens=tokens, precision=precision)  # (makes the cached ONNX file once)
    t0 = time.perf_counter()
    embedder = OnnxEmbedder(max_tokens=tokens, precision=precision)
    load = time.perf_counter() - t0
    embedder.embed(["warm up"])
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        embedder.embed(texts[i:i + batch])
    bulk, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"load_s": load, "bulk_s": bulk, "cpu_s": cpu, "chunks": len(texts), "chunks_per_s": len(texts) / bulk,
            "chunks_per_cpu_s": len(texts) / cpu, "loadavg": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--every", type=int, default=20, help="chunk every N-th file (default 20)")
    ap.add_argument("--time-sample", type=int, default=1500, help="chunks timed per variant and set (default 1500)")
    ap.add_argument("--limit", type=int, help="embed_limit (default: codelex.defaults.DEFAULT_EMBED_LIMIT)")
    ap.add_argument("--variants", default="fp32-256,int8-128", help="PRECISION-TOKENS, comma-separated")
    ap.add_argument("--max-bytes", type=int, default=512 * 1024, help="a project's file size cap (default 512 KiB)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from tokenizers import Tokenizer

    from codelex.defaults import DEFAULT_EMBED_LIMIT, EMBED_BATCH
    from codelex.dense.onnx_embedder import OnnxEmbedder, default_model_folder
    from codelex.ingest import list_files
    from codelex.project.code import embedding_priority

    root = args.root.resolve()
    limit = DEFAULT_EMBED_LIMIT if args.limit is None else args.limit
    out: dict = {"root": str(root), "every": args.every, "limit": limit, "loadavg_start": os.getloadavg()}

    # 1. The listing, in corpus order.
    t0 = time.perf_counter()
    files = sorted(f.path for f in list_files(root, max_bytes=args.max_bytes).files)
    try:  # (a priority may also order by depth within its class: class = priority // PRIORITY_DEPTHS)
        from codelex.project.code import PRIORITY_DEPTHS
    except ImportError:
        PRIORITY_DEPTHS = 1
    priority = {p: embedding_priority(p) for p in files}  # the embedding order's key
    klass = {p: v // PRIORITY_DEPTHS for p, v in priority.items()}  # 0 source, 1 tests/examples, 2 docs/data
    out["files"] = len(files)
    out["files_by_priority"] = dict(Counter(klass.values()))
    print(f"{root}: {len(files):,} files listed ({time.perf_counter() - t0:.1f} s); by priority: "
          + ", ".join(f"{PRIORITY_NAMES[k]} {v:,}" for k, v in sorted(out["files_by_priority"].items())))

    # 2. The sample.
    t0 = time.perf_counter()
    sampled = files[::args.every]
    rows: list[tuple[int, str, str]] = []  # (priority class, path, text) in corpus order
    for path in sampled:
        rows.extend((klass[path], path, text) for text in file_chunks(root, path, args.max_bytes))
    scale = len(files) / len(sampled)
    print(f"sample: {len(sampled):,} files (every {args.every}th), {len(rows):,} chunks "
          f"({len({t for _, _, t in rows}):,} distinct texts), chunked in {time.perf_counter() - t0:.1f} s; "
          f"scale {scale:.3f}")
    t0 = time.perf_counter()
    embedder = OnnxEmbedder()
    seen256 = np.array([len(ids) for ids in embedder._encode([t for _, _, t in rows])])
    whole_tok = Tokenizer.from_file(str(default_model_folder() / "tokenizer.json"))
    whole_tok.no_truncation()
    whole_tok.no_padding()
    whole = np.array([len(e.ids) for e in whole_tok.encode_batch([t for _, _, t in rows])])
    assert (np.minimum(whole, embedder.max_tokens) == seen256).all()
    print(f"tokenized in {time.perf_counter() - t0:.1f} s")
    prio = np.array([p for p, _, _ in rows])

    def token_figures(mask: np.ndarray) -> dict:
        w = whole[mask]
        if not w.size:
            return {}
        return {"mean_tokens_whole": float(w.mean()), "median_tokens_whole": float(np.median(w)),
                "mean_tokens_seen_256": float(np.minimum(w, 256).mean()),
                "mean_tokens_seen_128": float(np.minimum(w, 128).mean()),
                "share_over_256": float((w > 256).mean()), "share_over_128": float((w > 128).mean())}

    everything = np.ones(len(rows), bool)
    out["sample_files"] = len(sampled)
    out["sample_chunks"] = len(rows)
    out["chunks_estimate"] = len(rows) * scale
    out["tokens"] = token_figures(everything)
    out["by_priority"] = {}
    print(f"\nestimated chunks: {len(rows) * scale:,.0f}")
    print(f"{'priority':<18} {'chunks (est.)':>14} {'share':>6} {'tokens mean':>11} {'seen@256':>8} "
          f"{'seen@128':>8} {'>256':>5}")
    for p in [None, 0, 1, 2]:
        mask = everything if p is None else prio == p
        n = int(mask.sum())
        f = token_figures(mask)
        if p is not None:
            out["by_priority"][PRIORITY_NAMES[p]] = {"sample_chunks": n, "chunks_estimate": n * scale, **f}
        if f:
            print(f"{'all' if p is None else PRIORITY_NAMES[p]:<18} {n * scale:>14,.0f} {n / len(rows):>6.1%} "
                  f"{f['mean_tokens_whole']:>11.0f} {f['mean_tokens_seen_256']:>8.0f} "
                  f"{f['mean_tokens_seen_128']:>8.0f} {f['share_over_256']:>5.0%}")
    by_dir: dict[str, Counter] = defaultdict(Counter)
    for p, path, _ in rows:
        by_dir[top_dir(path)][p] += 1
    out["by_top_dir"] = {d: {PRIORITY_NAMES[p]: n * scale for p, n in c.items()} for d, c in by_dir.items()}
    print("\nestimated chunks by top-level directory (largest 12): "
          + ", ".join(f"{d} {sum(c.values()) * scale:,.0f}"
                      for d, c in sorted(by_dir.items(), key=lambda x: -sum(x[1].values()))[:12]))

    # 3. The default's share: priority, then corpus order.
    order = np.argsort(np.array([priority[p] for _, p, _ in rows]), kind="stable")
    take = order[:int(np.ceil(limit / scale))]
    share_dirs = Counter((PRIORITY_NAMES[rows[i][0]], top_dir(rows[i][1])) for i in take)
    est_last = rows[take[-1]][1] if take.size else None
    out["default_estimate"] = {
        "chunks": min(limit, len(rows) * scale), "share_of_tree": min(1.0, limit / (len(rows) * scale)),
        "last_path": est_last, "by_priority_dir": {f"{p} {d}": n * scale for (p, d), n in share_dirs.items()},
        **token_figures(np.isin(np.arange(len(rows)), take))}
    print(f"\nthe default ({limit:,} chunks = {out['default_estimate']['share_of_tree']:.1%} of the tree), "
          f"estimated from the sample: ends near {est_last}; "
          + ", ".join(f"{k} {v:,.0f}" for k, v in sorted(out["default_estimate"]["by_priority_dir"].items(),
                                                          key=lambda x: -x[1])))
    t0 = time.perf_counter()
    exact: list[tuple[str, str]] = []  # (path, text)
    for path in sorted(files, key=lambda p: priority[p]):  # (stable: priority, then corpus order)
        if len(exact) >= limit:
            break
        exact.extend((path, t) for t in file_chunks(root, path, args.max_bytes))
    exact = exact[:limit]
    exact_dirs = Counter((PRIORITY_NAMES[klass[p]], top_dir(p)) for p, _ in exact)
    exact_sub = Counter("/".join(p.split("/")[:2]) if p.count("/") >= 2 else top_dir(p) for p, _ in exact)
    exact_whole = np.array([len(e.ids) for e in whole_tok.encode_batch([t for _, t in exact])])
    out["default_exact"] = {
        "chunks": len(exact), "files": len({p for p, _ in exact}), "last_path": exact[-1][0] if exact else None,
        "by_priority_dir": {f"{p} {d}": n for (p, d), n in exact_dirs.items()},
        "by_second_dir": dict(exact_sub.most_common()),
        "mean_tokens_whole": float(exact_whole.mean()),
        "mean_tokens_seen_256": float(np.minimum(exact_whole, 256).mean()),
        "mean_tokens_seen_128": float(np.minimum(exact_whole, 128).mean()),
        "share_over_256": float((exact_whole > 256).mean())}
    print(f"the default, found exactly ({time.perf_counter() - t0:.1f} s): {len(exact):,} chunks of "
          f"{out['default_exact']['files']:,} files, the last {out['default_exact']['last_path']}; "
          + ", ".join(f"{k} {v:,}" for k, v in sorted(out["default_exact"]["by_priority_dir"].items(),
                                                       key=lambda x: -x[1]))
          + f"; tokens mean {exact_whole.mean():.0f} (seen@256 {np.minimum(exact_whole, 256).mean():.0f})")
    print("  by directory: " + ", ".join(f"{d} {n:,}" for d, n in exact_sub.most_common()))

    # 4. Timing.
    rng = random.Random(0)
    rank = np.empty(len(rows), int)
    rank[order] = np.arange(len(rows))  # (a chunk's place in the embedding order)
    tree_sample = [rows[i][2] for i in sorted(rng.sample(range(len(rows)), min(args.time_sample, len(rows))),
                                              key=lambda i: rank[i])]
    default_sample = [exact[i][1] for i in sorted(rng.sample(range(len(exact)), min(args.time_sample, len(exact))))]
    out["timing"] = {}
    print(f"\ntiming on {len(tree_sample):,} chunks of the tree and {len(default_sample):,} of the default's "
          f"share (calls of {EMBED_BATCH}); load average {os.getloadavg()[0]:.2f}")
    for spec in filter(None, args.variants.split(",")):
        precision, tokens = parse_variant(spec)
        t_tree = time_variant(precision, tokens, tree_sample, EMBED_BATCH)
        t_default = time_variant(precision, tokens, default_sample, EMBED_BATCH)
        hours_tree = out["chunks_estimate"] / t_tree["chunks_per_s"] / 3600
        hours_default = len(exact) / t_default["chunks_per_s"] / 3600
        out["timing"][spec] = {"tree": t_tree, "default": t_default, "hours_tree": hours_tree,
                               "hours_default": hours_default}
        print(f"onnx {spec}: load {t_tree['load_s']:.2f} s; tree sample {t_tree['chunks_per_s']:.1f} chunks/s "
              f"({t_tree['chunks_per_cpu_s']:.1f} a CPU-s) -> whole tree {hours_tree:.1f} h; default's share "
              f"{t_default['chunks_per_s']:.1f} chunks/s ({t_default['chunks_per_cpu_s']:.1f} a CPU-s) -> "
              f"{len(exact):,} chunks in {hours_default * 60:.1f} min (load average {os.getloadavg()[0]:.2f})")
    out["loadavg_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
