"""Relevance on the development sets in ``../shared/eval`` (MRR@10, R@10, nDCG@10)."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

EVAL_DIR = Path(os.environ.get("CODELEX_EVAL_DIR", Path(__file__).resolve().parents[2] / "shared" / "eval"))


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_set(name: str) -> tuple[list[tuple[str, str]], list[dict]] | None:
    """``(docs, queries)`` of an eval set, or None when its corpus is unavailable."""
    if name == "cosqa-dev":
        d = EVAL_DIR / "cosqa-dev"
        return [(r["path"], r["text"]) for r in _jsonl(d / "corpus.jsonl")], _jsonl(d / "queries.jsonl")
    if name in ("stdlib-s0-doc", "stdlib-s0-id"):
        d = EVAL_DIR / "stdlib-s0"
        kind = name.rsplit("-", 1)[1]
        return [(r["path"], r["text"]) for r in _jsonl(d / "corpus.jsonl")], _jsonl(d / f"queries-{kind}.jsonl")
    if name == "go-id-s0":
        d = EVAL_DIR / "go-id-s0"
        dest = os.environ.get("CODELEX_GO_CORPUS")
        try:
            root = subprocess.run(["bash", str(d / "get-corpus.sh")] + ([dest] if dest else []), check=True,
                                  capture_output=True, text=True, timeout=600).stdout.strip().splitlines()[-1]
        except (OSError, subprocess.SubprocessError, IndexError):
            return None
        files = [f for f in (d / "files.txt").read_text().splitlines() if f]
        docs = [(f, (Path(root) / f).read_bytes()) for f in files]
        return docs, _jsonl(d / "queries.jsonl")
    raise ValueError(name)


SETS = ["cosqa-dev", "stdlib-s0-doc", "stdlib-s0-id", "go-id-s0"]
# MRR@10 of the original pi-lens word index and of bm25s defaults (eval/README.md).
ORIGINAL_MRR = {"cosqa-dev": 0.313, "stdlib-s0-doc": 0.466, "stdlib-s0-id": 0.867, "go-id-s0": 0.533}
BM25S_MRR = {"cosqa-dev": 0.253, "stdlib-s0-doc": 0.388, "stdlib-s0-id": 0.870, "go-id-s0": 0.288}


def metrics(ranked: list[list[str]], queries: list[dict], k: int = 10) -> dict[str, float]:
    mrr = recall = ndcg = 0.0
    for files, q in zip(ranked, queries):
        relevant = set(q["relevant"])
        top = files[:k]
        for i, f in enumerate(top):
            if f in relevant:
                mrr += 1 / (i + 1)
                break
        recall += len(relevant & set(top)) / len(relevant)
        dcg = sum(1 / math.log2(i + 2) for i, f in enumerate(top) if f in relevant)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
        ndcg += dcg / ideal
    n = len(queries) or 1
    return {"MRR@10": mrr / n, "R@10": recall / n, "nDCG@10": ndcg / n}


def evaluate_codelex(docs, queries) -> dict[str, float]:
    import codelex

    index = codelex.WordIndex.build(docs, max_bytes=None)  # the sets say: index exactly these files
    ranked = [[h.file for h in index.search(q["query"], limit=10)] for q in queries]
    return metrics(ranked, queries)
