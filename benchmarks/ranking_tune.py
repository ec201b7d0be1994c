"""Field-ranking tuning on the development sets (``../shared/eval`` only), vectorized for grid searches.

Usage::

    python benchmarks/ranking_tune.py grid --defs scanner --grid '{"def_boost": [1.6, 2.5]}'
    python benchmarks/ranking_tune.py eval --defs scanner --params '{"weights": [1, 0.3, 1, 2]}'

``benchmarks/ranking_eval.py`` measures the chosen settings (and the
ablations) through the native index itself.

Scores are computed with numpy over per-field posting arrays built with
codelex's tokenizer, with exactly the formula of
:mod:`codelex._reference.bm25f` (BM25F with per-field weights and length
normalisation, idf from the largest field df, the definition and file-name
boosts, stem variants) and the classic priors, so a setting chosen here is
what the native ``code`` ranking computes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import relevance as rel  # noqa: E402

import _oracles  # noqa: E402,F401  (codelex._reference from the source tree if the wheel lacks it)
import codelex  # noqa: E402
from codelex.text import scan_definitions  # noqa: E402
from codelex._reference.bm25f import FieldParams  # noqa: E402
from codelex.lexical.priors import DOC_FACTOR, FLAG_DOC, FLAG_TEST_VENDOR, TEST_VENDOR_FACTOR, prior_flags  # noqa: E402

FIELDS = ("body", "dir", "name", "defs")
#: How stem variants score: "separate" (each its own BM25F term, as the native ranking) or "grouped".
STEM_MODE = "separate"
STEM_WORDS_ONLY = False


def definitions_of(path: str, text: str, source: str) -> list[tuple[str, int]]:
    if source == "none":
        return []
    if source == "scanner":
        return scan_definitions(path, text)
    from codelex.structure import analyze

    s = analyze(path, text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if s.status != "parsed":
        return scan_definitions(path, text)
    return [(d.name, d.signature_line) for d in s.definitions]


@dataclass
class FieldCorpus:
    paths: list[str]
    postings: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # field -> token -> (docs, tf)
    lengths: dict[str, np.ndarray]
    prior: np.ndarray
    vocab: list[str]

    @classmethod
    def build(cls, docs, def_source: str = "structure") -> FieldCorpus:
        paths = [p for p, _ in docs]
        acc: dict[str, dict[str, dict[int, int]]] = {f: {} for f in FIELDS}
        lengths = {f: np.zeros(len(docs), dtype=np.float64) for f in FIELDS}
        for i, (path, text) in enumerate(docs):
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            directory, _, base = path.rpartition("/")
            dot = base.rfind(".")
            stem = base[:dot] if dot > 0 else base
            body_lines: dict[str, set[int]] = {}
            n_body = 0
            for no, line in enumerate(text.split("\n"), 1):
                for t in codelex.tokenize_line(line):
                    body_lines.setdefault(t, set()).add(no)
                    n_body += 1
            lengths["body"][i] = n_body
            for t, ls in body_lines.items():
                acc["body"].setdefault(t, {})[i] = len(ls)
            for f, toks in (("dir", codelex.tokenize_line(directory)), ("name", codelex.tokenize_line(stem))):
                lengths[f][i] = len(toks)
                for t in set(toks):
                    acc[f].setdefault(t, {})[i] = 1
            def_lines: dict[str, set[int]] = {}
            n_defs = 0
            for name, line in definitions_of(path, text, def_source):
                for t in codelex.split_identifier(name):
                    def_lines.setdefault(t, set()).add(line)
                    n_defs += 1
            lengths["defs"][i] = n_defs
            for t, ls in def_lines.items():
                acc["defs"].setdefault(t, {})[i] = len(ls)
        postings = {f: {t: (np.fromiter(d.keys(), np.int64), np.fromiter(d.values(), np.float64))
                        for t, d in acc[f].items()} for f in FIELDS}
        prior = np.array([(TEST_VENDOR_FACTOR if prior_flags(p) & FLAG_TEST_VENDOR else 1.0)
                          * (DOC_FACTOR if prior_flags(p) & FLAG_DOC else 1.0) for p in paths])
        vocab = sorted(set().union(*[set(acc[f]) for f in FIELDS]))
        return cls(paths, postings, lengths, prior, vocab)

    def stems(self) -> dict[str, list[str]]:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        groups: dict[str, list[str]] = {}
        for t, s in zip(self.vocab, stemmer.stemWords(self.vocab)):
            groups.setdefault(s, []).append(t)
        return {t: [u for u in groups[s] if u != t] for t, s in zip(self.vocab, stemmer.stemWords(self.vocab))}

    def rank(self, query: str, p: FieldParams, stems=None, k: int = 10, priors: bool = True) -> list[str]:
        tokens = list(dict.fromkeys(codelex.tokenize_line(codelex.parse_query(query).terms)))
        if not tokens:
            return []
        n = len(self.paths)
        avg = {f: (self.lengths[f].mean() or 1.0) for f in FIELDS}
        norms = {f: 1 - p.b[i] + p.b[i] * self.lengths[f] / avg[f] for i, f in enumerate(FIELDS)}
        if STEM_WORDS_ONLY and stems is not None:
            # Word forms for prose only: a query of two or more words, each plain lower-case letters.
            words = codelex.parse_query(query).terms.split()
            if len(words) < 2 or not all(w.isalpha() and w.islower() for w in words):
                stems = None
        if STEM_MODE == "grouped" and stems is not None and p.stem_weight > 0:
            # Variants fold into their token's tf~ (weighted), one idf and one saturation per token.
            groups = [[(t, 1.0)] + [(u, p.stem_weight) for u in stems.get(t, []) if u not in tokens] for t in tokens]
        else:
            terms = [(t, 1.0) for t in tokens]
            if stems is not None and p.stem_weight > 0:
                terms += [(u, p.stem_weight) for t in tokens for u in stems.get(t, []) if u not in tokens]
            groups = [[tw] for tw in terms]
        score = np.zeros(n)
        for group in groups:
            tilde = np.zeros(n)
            df = 0
            outer = group[0][1] if len(group) == 1 else 1.0
            for t, weight in group:
                lists = [(i, self.postings[f].get(t)) for i, f in enumerate(FIELDS)]
                df = max(df, max((len(lst[0]) for _, lst in lists if lst is not None), default=0))
                inner = 1.0 if len(group) == 1 else weight
                for i, lst in lists:
                    if lst is not None and p.weights[i]:
                        docs, tf = lst
                        tilde[docs] += inner * p.weights[i] * tf / norms[FIELDS[i]][docs]
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            nz = tilde > 0
            score[nz] += outer * idf * tilde[nz] * (p.k1 + 1) / (p.k1 + tilde[nz])
        if p.def_boost != 1.0 or p.name_boost != 1.0:
            for f, boost in (("defs", p.def_boost), ("name", p.name_boost)):
                if boost == 1.0:
                    continue
                has = np.ones(n, dtype=bool)
                for t in tokens:
                    lst = self.postings[f].get(t)
                    m = np.zeros(n, dtype=bool)
                    if lst is not None:
                        m[lst[0]] = True
                    has &= m
                score[has] *= boost
        if priors:
            score *= self.prior
        cand = np.flatnonzero(score > 0)
        order = sorted(cand.tolist(), key=lambda i: (-score[i], self.paths[i]))[:k]
        return [self.paths[i] for i in order]


def load_all(def_source: str = "structure"):
    sets = {}
    for name in rel.SETS:
        loaded = rel.load_set(name)
        if loaded is not None:
            docs, queries = loaded
            sets[name] = (FieldCorpus.build(docs, def_source), queries)
    for repo in rel.SEMBLE_REPOS:
        docs, queries = rel.load_semble(repo)
        sets[f"semble:{repo}"] = (FieldCorpus.build(docs, def_source), queries)
    return sets


def evaluate(sets, p: FieldParams, use_stems: bool = False) -> dict[str, dict[str, float]]:
    out = {}
    semble = {}
    for name, (corpus, queries) in sets.items():
        stems = corpus.stems() if use_stems else None
        ranked = [corpus.rank(q["query"], p, stems) for q in queries]
        if name.startswith("semble:"):
            semble[name[7:]] = rel.semble_metrics(ranked, queries)
        else:
            out[name] = rel.metrics(ranked, queries)
    if semble:
        out["semble-dev"] = rel.semble_summary(semble)
    return out


CLASSIC = FieldParams(weights=(1.0, 0.0, 0.0, 0.0), b=(0.75, 0.5, 0.5, 0.5), def_boost=1.0, name_boost=1.0, stem_weight=0.0)


def _fmt(res: dict) -> str:
    return "  ".join(f"{k}: MRR {v['MRR@10']:.3f}" + (f" sNDCG {v['sNDCG@10']:.3f}" if "sNDCG@10" in v else "")
                     for k, v in res.items())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["grid", "eval"])
    ap.add_argument("--defs", default="structure", choices=["structure", "scanner", "none"])
    ap.add_argument("--params", help="JSON of FieldParams fields (eval)")
    ap.add_argument("--grid", help='JSON: FieldParams field -> list of values (grid), e.g. {"def_boost": [1, 2]}')
    ap.add_argument("--stem-mode", choices=["separate", "grouped"], default="separate")
    ap.add_argument("--stem-words-only", action="store_true", help="stem variants for prose queries only")
    args = ap.parse_args(argv)
    global STEM_MODE, STEM_WORDS_ONLY
    STEM_MODE = args.stem_mode
    STEM_WORDS_ONLY = args.stem_words_only
    sets = load_all(args.defs)
    base = evaluate(sets, CLASSIC)
    print("classic", _fmt(base), flush=True)
    if args.mode == "eval":
        p = FieldParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params).items()})
        print("params", _fmt(evaluate(sets, p, use_stems=p.stem_weight > 0)))
        return 0
    if args.mode == "grid":
        space = json.loads(args.grid)
        keys = sorted(space)
        best = None
        for values in itertools.product(*(space[k] for k in keys)):
            p = FieldParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in zip(keys, values)})
            res = evaluate(sets, p, use_stems=p.stem_weight > 0)
            gains = [res[k]["MRR@10"] - base[k]["MRR@10"] for k in res]
            worst, total = min(gains), sum(gains)
            print(json.dumps({k: v for k, v in zip(keys, values)} | {"worst": round(worst, 4),
                                                                    "total": round(total, 4)}),
                  _fmt(res), flush=True)
            if best is None or (worst >= 0, total) > best[0]:
                best = ((worst >= 0, total), p, res)
        print("BEST", best[1], _fmt(best[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
