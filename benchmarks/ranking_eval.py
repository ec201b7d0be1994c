"""Relevance of the rankings on every development set, through the native index: classic, code, ablations.

Usage::

    python benchmarks/ranking_eval.py                  # classic vs code, every set, markdown table
    python benchmarks/ranking_eval.py --ablate         # plus one row per removed field or boost
    python benchmarks/ranking_eval.py --json out.json

Sets: ``../shared/eval`` only (CoSQA dev, the stdlib halves, the Go half when
its corpus can be fetched, and semble-dev's ten repositories, whose headline
is the mean over repositories of semble's own NDCG@10, "sNDCG").  Each
variant is a :class:`codelex.WordIndex` with its ranking attributes set; the
definitions are the native scanner's unless ``--defs structure`` (the
tree-sitter structure stage's, for the files it parses).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import relevance as rel  # noqa: E402

import codelex  # noqa: E402
from codelex import defaults  # noqa: E402

#: name -> (ranking, attribute overrides)
VARIANTS = {
    "classic": ("classic", {}),
    "code": ("code", {}),
}
ABLATIONS = {
    "code - defs field": ("code", {"field_weights": defaults.FIELD_WEIGHTS[:3] + (0.0,)}),
    "code - def boost": ("code", {"def_boost": 1.0}),
    "code - defs field & boost": ("code", {"field_weights": defaults.FIELD_WEIGHTS[:3] + (0.0,), "def_boost": 1.0}),
    "code - name field": ("code", {"field_weights": defaults.FIELD_WEIGHTS[:2] + (0.0, defaults.FIELD_WEIGHTS[3])}),
    "code - name boost": ("code", {"name_boost": 1.0}),
    "code - dir field": ("code", {"field_weights": (defaults.FIELD_WEIGHTS[0], 0.0) + defaults.FIELD_WEIGHTS[2:]}),
    "code: body only (BM25F form, no stems)": ("code", {"field_weights": (1.0, 0.0, 0.0, 0.0), "def_boost": 1.0,
                                                       "name_boost": 1.0, "stem_weight": 0.0}),
    "code - stems": ("code", {"stem_weight": 0.0}),
    "code, stems 0.2": ("code", {"stem_weight": 0.2}),
    "code, stems 0.7": ("code", {"stem_weight": 0.7}),
}


def _docs_with_definitions(docs, source: str):
    if source == "scanner":
        return docs
    from codelex.structure import analyze

    out = []
    for path, text in docs:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        s = analyze(path, data)
        defs = [(d.name, d.signature_line) for d in s.definitions] if s.status == "parsed" else None
        out.append((path, text, -1, defs))
    return out


def load_sets(source: str) -> dict[str, tuple[codelex.WordIndex, list[dict]]]:
    sets = {}
    for name in rel.SETS:
        loaded = rel.load_set(name)
        if loaded is None:
            print(f"# {name}: corpus unavailable, skipped", file=sys.stderr)
            continue
        docs, queries = loaded
        sets[name] = (codelex.WordIndex.build(_docs_with_definitions(docs, source), max_bytes=None), queries)
    for repo in rel.SEMBLE_REPOS:
        docs, queries = rel.load_semble(repo)
        sets[f"semble:{repo}"] = (codelex.WordIndex.build(_docs_with_definitions(docs, source), max_bytes=None),
                                  queries)
    return sets


def evaluate(sets, ranking: str, overrides: dict) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    semble: dict[str, dict[str, float]] = {}
    for name, (index, queries) in sets.items():
        saved = {k: getattr(index, k) for k in overrides}
        for k, v in overrides.items():
            setattr(index, k, v)
        try:
            ranked = [[h.file for h in index.search(q["query"], limit=10, ranking=ranking)] for q in queries]
        finally:
            for k, v in saved.items():
                setattr(index, k, v)
        if name.startswith("semble:"):
            m = rel.semble_metrics(ranked, queries)
            m.update({f"file:{k}": v for k, v in rel.metrics(ranked, queries).items()})
            semble[name[7:]] = m
        else:
            out[name] = rel.metrics(ranked, queries)
    if semble:
        out["semble-dev"] = rel.semble_summary(semble)
    return out


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    names = [n for n in (*rel.SETS, "semble-dev") if any(n in r for r in results.values())]
    head = "| ranking | " + " | ".join(
        f"{n} MRR / R@1 / nDCG" if n != "semble-dev" else "semble-dev sNDCG / MRR / R@1 / nDCG" for n in names) + " |"
    rows = [head, "|" + "---|" * (len(names) + 1)]
    for variant, res in results.items():
        cells = []
        for n in names:
            m = res.get(n)
            if m is None:
                cells.append("–")
            elif n == "semble-dev":
                cells.append(f"{m['sNDCG@10']:.3f} / {m['MRR@10']:.3f} / {m['R@1']:.3f} / {m['file:nDCG@10']:.3f}")
            else:
                cells.append(f"{m['MRR@10']:.3f} / {m['R@1']:.3f} / {m['nDCG@10']:.3f}")
        rows.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def categories(results: dict[str, dict[str, dict[str, float]]]) -> str:
    cats = sorted({k.split(":")[0] for r in results.values() for k in r.get("semble-dev", {})
                   if k.endswith(":sNDCG@10") and not k.startswith("file:")})
    rows = ["| ranking | " + " | ".join(f"{c} sNDCG / MRR" for c in cats) + " |", "|" + "---|" * (len(cats) + 1)]
    for variant, res in results.items():
        m = res.get("semble-dev", {})
        rows.append(f"| {variant} | " + " | ".join(
            f"{m.get(c + ':sNDCG@10', 0):.3f} / {m.get(c + ':MRR@10', 0):.3f}" for c in cats) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ablate", action="store_true", help="one row per removed field or boost, and stems")
    ap.add_argument("--defs", choices=["scanner", "structure"], default="scanner")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    sets = load_sets(args.defs)
    variants = dict(VARIANTS) | (ABLATIONS if args.ablate else {})
    results = {}
    for name, (ranking, overrides) in variants.items():
        results[name] = evaluate(sets, ranking, overrides)
        print(f"# {name} done", file=sys.stderr, flush=True)
    print(table(results))
    print()
    print("semble-dev per category:")
    print()
    print(categories(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
