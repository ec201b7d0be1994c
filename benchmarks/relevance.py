"""Relevance on the development sets in ``../shared/eval`` (MRR@10, R@10, nDCG@10)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
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
SEMBLE_REPOS = ["pydantic", "tokio", "vitest", "commons-lang", "ktor", "kotlinx-coroutines", "exposed", "abseil-cpp",
                "ecto", "cats"]


#: Where ``../shared/eval/semble-dev-whole/build.py`` wrote the whole checkouts (its default: the temp dir).
SEMBLE_WHOLE_DIR = Path(os.environ.get("CODELEX_SEMBLE_WHOLE_DIR", Path(tempfile.gettempdir()) / "semble-dev-whole"))


def load_semble(repo: str, whole: bool = False) -> tuple[list[tuple[str, str]], list[dict]] | None:
    """``(docs, queries)`` of one semble-dev repository: its source root, or (``whole``) its whole checkout
    as semble-dev-whole's ``build.py`` wrote it (None when it has not been built)."""
    d = (SEMBLE_WHOLE_DIR if whole else EVAL_DIR / "semble-dev") / repo
    if not (d / "corpus.jsonl").is_file():
        return None
    return [(r["path"], r["text"]) for r in _jsonl(d / "corpus.jsonl")], _jsonl(d / "queries.jsonl")


def semble_metrics(ranked: list[list[str]], queries: list[dict], k: int = 10) -> dict[str, float]:
    """semble's sNDCG@10 (every target gains 1, found at the first rank whose file covers it) and MRR@10
    on the primary targets, plus R@1; means over the queries, and per category."""
    per: list[tuple[str, float, float, float]] = []
    for files, q in zip(ranked, queries):
        top = files[:k]
        targets = q.get("targets", [])
        found_at: set[int] = set()
        for t in targets:
            covered = set(t.get("files", []))
            for i, f in enumerate(top):
                if f in covered:
                    found_at.add(i)
                    break
        dcg = sum(1 / math.log2(i + 2) for i in found_at)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(targets))))
        ndcg = dcg / ideal if ideal else 0.0
        relevant = set(q.get("relevant", []))
        rr = next((1 / (i + 1) for i, f in enumerate(top) if f in relevant), 0.0)
        r1 = (len(relevant & set(top[:1])) / len(relevant)) if relevant else 0.0
        per.append((q.get("category", "all"), ndcg, rr, r1))
    n = len(per) or 1
    out = {"sNDCG@10": sum(p[1] for p in per) / n, "MRR@10": sum(p[2] for p in per) / n,
           "R@1": sum(p[3] for p in per) / n}
    for cat in sorted({p[0] for p in per}):
        rows = [p for p in per if p[0] == cat]
        out[f"{cat}:sNDCG@10"] = sum(p[1] for p in rows) / len(rows)
        out[f"{cat}:MRR@10"] = sum(p[2] for p in rows) / len(rows)
    return out


def semble_summary(per_repo: dict[str, dict[str, float]]) -> dict[str, float]:
    """The headline: the mean over repositories of each repository's figures (categories likewise)."""
    keys = sorted({k for m in per_repo.values() for k in m})
    return {k: sum(m[k] for m in per_repo.values() if k in m) / sum(1 for m in per_repo.values() if k in m)
            for k in keys}
# MRR@10 of the original pi-lens word index and of bm25s defaults (eval/README.md).
ORIGINAL_MRR = {"cosqa-dev": 0.313, "stdlib-s0-doc": 0.466, "stdlib-s0-id": 0.867, "go-id-s0": 0.533}
BM25S_MRR = {"cosqa-dev": 0.253, "stdlib-s0-doc": 0.388, "stdlib-s0-id": 0.870, "go-id-s0": 0.288}


def metrics(ranked: list[list[str]], queries: list[dict], k: int = 10) -> dict[str, float]:
    """MRR@10, R@1, R@10 and nDCG@10 over the queries that name relevant files."""
    pairs = [(files, q) for files, q in zip(ranked, queries) if q.get("relevant")]
    ranked, queries = [p[0] for p in pairs], [p[1] for p in pairs]
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
    r1 = sum(len(set(q["relevant"]) & set(files[:1])) / len(q["relevant"]) for files, q in zip(ranked, queries))
    return {"MRR@10": mrr / n, "R@1": r1 / n, "R@10": recall / n, "nDCG@10": ndcg / n}


def evaluate_codelex(docs, queries) -> dict[str, float]:
    import codelex

    index = codelex.WordIndex.build(docs, max_bytes=None)  # the sets say: index exactly these files
    ranked = [[h.file for h in index.search(q["query"], limit=10)] for q in queries]
    return metrics(ranked, queries)
