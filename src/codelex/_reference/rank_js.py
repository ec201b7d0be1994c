"""A line-by-line Python port of ``../shared/seeds/rank.js`` (tests only).

Plain loops over plain lists, mirroring the original statement for
statement; ``codelex.rank.original`` must give exactly what this gives.
Rows are dicts with the original's keys (``path``, ``startLine``,
``endLine``, ``text``, optional ``symbol``); a matrix is
``{"rows": [...], "vectors": [floats, row-major], "dimensions": d}``.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import ROUND_HALF_UP, Decimal

RRF_K = 60
MIN_TERM_LENGTH = 2
STOPWORDS = {
    "the", "and", "for", "with", "that", "this", "from", "into", "when", "then",
    "const", "let", "var", "function", "return", "import", "export", "class",
    "def", "self", "new", "use", "are", "was", "were", "not", "but", "you", "how",
    "does", "what", "where", "which", "who", "why", "can", "should", "would",
}


def to_fixed4(x):
    """``Number(x.toFixed(4))``."""
    return float(Decimal(x).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


def split_identifier(identifier):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return [w for w in re.split(r"[^A-Za-z0-9]+", s) if w != ""]


def query_terms(query):
    found = []
    for raw in re.split(r"[^A-Za-z0-9_$]+", str(query)):
        if raw == "":
            continue
        lower = raw.lower()
        if len(lower) >= MIN_TERM_LENGTH and lower not in STOPWORDS and lower not in found:
            found.append(lower)
        if len(raw) >= MIN_TERM_LENGTH:
            for word in split_identifier(raw):
                part = word.lower()
                if len(part) >= MIN_TERM_LENGTH and part not in STOPWORDS and part not in found:
                    found.append(part)
    # Array.prototype.sort is stable.
    return sorted(found, key=functools.cmp_to_key(lambda left, right: len(right) - len(left)))


def _haystack(row):
    symbol = "" if row.get("symbol") is None else " " + row["symbol"]
    return (row["path"] + symbol + " " + row["text"]).lower()


def _index_of(hay, term, start):
    return hay.find(term, start)


def lexical_scores(matrix, terms):
    count = len(matrix["rows"])
    lexical = [0.0] * count
    matched = [0] * count
    if len(terms) == 0:
        return lexical, matched
    frequency = {}
    for term in terms:
        seen = 0
        for at in range(count):
            if term in _haystack(matrix["rows"][at]):
                seen += 1
        frequency[term] = seen
    for at in range(count):
        row = matrix["rows"][at]
        hay = _haystack(row)
        header = (row["path"] + " " + (row.get("symbol") or "")).lower()
        score = 0.0
        for term in terms:
            df = frequency.get(term, 0)
            if df == 0:
                continue
            idf = math.log(1 + count / (1 + df))
            occurrences = 0
            start = _index_of(hay, term, 0)
            while start != -1:
                occurrences += 1
                start = _index_of(hay, term, start + len(term))
            if occurrences == 0:
                continue
            weight = 3 if term in header else 1
            score += idf * (1 + math.log(occurrences)) * weight
        if score > 0:
            lexical[at] = score
            matched[at] = 1
    return lexical, matched


def _order_by(score):
    def cmp(left, right):
        d = score[right] - score[left]
        if d != 0:
            return -1 if d < 0 else 1
        return left - right
    return sorted(range(len(score)), key=functools.cmp_to_key(cmp))


def excerpt_of(text, max_lines):
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return {"excerpt": text, "truncated": False}
    return {"excerpt": "\n".join(lines[0:max_lines]), "truncated": True}


def rank_order(matrix, query_vector, query, vector_weight=0.7, lexical_weight=0.3):
    count = len(matrix["rows"])
    if count == 0:
        return {"order": [], "similarity": [], "vectorBest": 0, "lexicalBest": 0}
    dimensions = matrix["dimensions"]
    similarity = [0.0] * count
    for at in range(count):
        total = 0.0
        offset = at * dimensions
        for dim in range(dimensions):
            total += float(matrix["vectors"][offset + dim]) * float(query_vector[dim])
        similarity[at] = total
    terms = query_terms(query)
    lexical, _ = lexical_scores(matrix, terms)
    vector_order = _order_by(similarity)
    lexical_order = _order_by(lexical)
    vector_rank = [count] * count
    lexical_rank = [count] * count
    for rank in range(count):
        vector_rank[vector_order[rank]] = rank
    for rank in range(count):
        lexical_rank[lexical_order[rank]] = rank
    fused = [0.0] * count
    for at in range(count):
        fused[at] = vector_weight / (RRF_K + vector_rank[at]) + lexical_weight / (RRF_K + lexical_rank[at])
    return {
        "order": _order_by(fused),
        "similarity": similarity,
        "vectorBest": to_fixed4(similarity[vector_order[0]]),
        "lexicalBest": to_fixed4(lexical[lexical_order[0]]),
    }


def fuse_rankings(rankings):
    present = [r for r in rankings if isinstance(r, list) and len(r) > 0]
    if len(present) == 0:
        return []
    if len(present) == 1:
        return list(present[0])
    scores = {}
    for ranking in present:
        for rank in range(len(ranking)):
            row = ranking[rank]
            scores[row] = scores.get(row, 0) + 1 / (RRF_K + rank)

    def cmp(left, right):
        d = scores[right] - scores[left]
        if d != 0:
            return -1 if d < 0 else 1
        return left - right
    return sorted(scores.keys(), key=functools.cmp_to_key(cmp))


def select_from(order, matrix, similarity, limit=8, per_file=2, excerpt_lines=80, total_lines=400):
    per_file_used = {}
    results = []
    remaining = total_lines
    for at in order:
        if len(results) >= limit:
            break
        if remaining <= 0 and len(results) > 0:
            break
        row = matrix["rows"][at] if 0 <= at < len(matrix["rows"]) else None
        if row is None:
            continue
        used = per_file_used.get(row["path"], 0)
        if used >= per_file:
            continue
        per_file_used[row["path"]] = used + 1
        allowance = max(1, min(excerpt_lines, remaining))
        ex = excerpt_of(row["text"], allowance)
        remaining -= len(ex["excerpt"].split("\n"))
        result = {"path": row["path"], "startLine": row["startLine"], "endLine": row["endLine"]}
        if row.get("symbol") is not None:
            result["symbol"] = row["symbol"]
        result["similarity"] = to_fixed4(similarity[at])
        result["excerpt"] = ex["excerpt"]
        result["truncated"] = ex["truncated"]
        results.append(result)
    return results
