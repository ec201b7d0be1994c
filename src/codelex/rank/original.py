"""The original ranking of retrieved chunks (``../shared/seeds/rank.js``), function for function.

Same inputs, same outputs: every function here gives what the original
gives, including its tie breaks (by row index), its float summation order
(the similarity is summed dimension by dimension, as the original's loop
does) and its rounding (JavaScript's ``toFixed(4)``: the exact binary value,
halves away from zero).  It is vectorized with numpy where that keeps the
arithmetic identical; ``codelex._reference.rank_js`` is the line-by-line
port the tests compare it against.

The original's own reasons stand: rank fusion, not score normalisation,
because min-max stretching a tight cluster of unrelated similarities turns
noise into a confident ranking; a chunk found by only one method still
surfaces; excerpts are head-truncated because a function's signature and
first statements identify it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Sequence

import numpy as np

from codelex.defaults import (
    HYBRID_EXCERPT_LINES,
    HYBRID_LEXICAL_WEIGHT,
    HYBRID_LIMIT,
    HYBRID_PER_FILE,
    HYBRID_TOTAL_LINES,
    HYBRID_VECTOR_WEIGHT,
    RRF_K,
)

__all__ = [
    "MIN_TERM_LENGTH",
    "ORIGINAL_STOPWORDS",
    "ChunkMatrix",
    "ChunkRow",
    "RankedOrder",
    "Selected",
    "excerpt_of",
    "fit_budget",
    "fuse_rankings",
    "js_round4",
    "lexical_scores",
    "order_by",
    "pick_from",
    "query_terms",
    "rank_chunks",
    "rank_order",
    "select_from",
    "split_identifier",
]

#: Terms shorter than this carry no signal in code and match everywhere (the original's).
MIN_TERM_LENGTH = 2

#: The original's stop words: words in almost every source file, which rank nothing.
ORIGINAL_STOPWORDS = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "into", "when", "then",
    "const", "let", "var", "function", "return", "import", "export", "class",
    "def", "self", "new", "use", "are", "was", "were", "not", "but", "you", "how",
    "does", "what", "where", "which", "who", "why", "can", "should", "would",
})

_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_QUERY_SPLIT = re.compile(r"[^A-Za-z0-9_$]+")


@dataclass(frozen=True)
class ChunkRow:
    """One chunk: where it is, its text and, when known, the symbol it is about (lines 1-based)."""

    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None
    #: The names the chunk defines (the ranking pipeline's definition evidence; not the original's).
    names: frozenset = frozenset()


class ChunkMatrix:
    """Chunks and their unit vectors, row for row (the original's ``matrix``).

    Parameters
    ----------
    rows : sequence of ChunkRow
    vectors : array of shape (len(rows), dimensions)
        One vector per row (any float dtype).
    """

    def __init__(self, rows: Sequence[ChunkRow], vectors) -> None:
        self.rows = list(rows)
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != len(self.rows):
            raise ValueError(f"vectors must have shape ({len(self.rows)}, d), not {vectors.shape}")
        self.vectors = vectors
        self.dimensions = int(vectors.shape[1])
        self._haystacks: list[str] | None = None

    def haystack(self, at: int) -> str:
        """The lowercased text row ``at`` is matched against: path, symbol, text (built once)."""
        if self._haystacks is None:
            self._haystacks = [
                f"{r.path}{'' if r.symbol is None else ' ' + r.symbol} {r.text}".lower() for r in self.rows]
        return self._haystacks[at]


def split_identifier(identifier: str) -> list[str]:
    """The words of an identifier, as the original splits them (``getUserById`` → get, User, By, Id).

    The words keep their case; callers lowercase them.
    """
    spaced = _ACRONYM.sub(r"\1 \2", _LOWER_UPPER.sub(r"\1 \2", identifier))
    return [w for w in _NON_ALNUM.split(spaced) if w != ""]


def query_terms(query: str) -> list[str]:
    """The search terms of a query: raw tokens and their identifier words, lowercased, deduplicated, longest first."""
    found: dict[str, None] = {}
    for raw in _QUERY_SPLIT.split(str(query)):
        if raw == "":
            continue
        lower = raw.lower()
        if len(lower) >= MIN_TERM_LENGTH and lower not in ORIGINAL_STOPWORDS:
            found[lower] = None
        if len(raw) >= MIN_TERM_LENGTH:
            for word in split_identifier(raw):
                part = word.lower()
                if len(part) >= MIN_TERM_LENGTH and part not in ORIGINAL_STOPWORDS:
                    found[part] = None
    return sorted(found, key=len, reverse=True)  # stable, as the original's sort


def lexical_scores(matrix: ChunkMatrix, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The original's substring tf-idf of every row, header (path, symbol) matches ×3.

    Returns
    -------
    lexical : float64 array
        The raw score of each row (0 when nothing matched).
    matched : uint8 array
        1 where some term matched.
    """
    count = len(matrix.rows)
    lexical = np.zeros(count, dtype=np.float64)
    matched = np.zeros(count, dtype=np.uint8)
    if not terms:
        return lexical, matched
    hays = [matrix.haystack(at) for at in range(count)]
    frequency = {term: sum(1 for hay in hays if term in hay) for term in terms}
    for at, row in enumerate(matrix.rows):
        hay = hays[at]
        header = f"{row.path} {row.symbol or ''}".lower()
        score = 0.0
        for term in terms:
            df = frequency.get(term, 0)
            if df == 0:
                continue
            idf = math.log(1 + count / (1 + df))
            occurrences = hay.count(term)  # non-overlapping, as the original's indexOf loop
            if occurrences == 0:
                continue
            weight = 3 if term in header else 1
            score += idf * (1 + math.log(occurrences)) * weight
        if score > 0:
            lexical[at] = score
            matched[at] = 1
    return lexical, matched


def order_by(score) -> np.ndarray:
    """Row indices by score, descending, ties by index (a stable sort of the negated scores)."""
    score = np.asarray(score, dtype=np.float64)
    return np.argsort(-score, kind="stable")


def excerpt_of(text: str, max_lines: int) -> tuple[str, bool]:
    """``(excerpt, truncated)``: the first ``max_lines`` lines of ``text`` (head-truncated)."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text, False
    return "\n".join(lines[:max(0, max_lines)]), True


def js_round4(x: float) -> float:
    """``Number(x.toFixed(4))``: the exact binary value rounded to 4 decimals, halves away from zero."""
    if not math.isfinite(x):
        return float(x)
    return float(Decimal(x).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


@dataclass(frozen=True)
class RankedOrder:
    """Every row in fused order, with the per-row similarity and the best raw scores (rounded)."""

    order: np.ndarray
    similarity: np.ndarray
    vector_best: float
    lexical_best: float


def similarities(matrix: ChunkMatrix, query_vector) -> np.ndarray:
    """Each row's dot product with the query, summed dimension by dimension as the original sums it."""
    q = np.asarray(query_vector, dtype=np.float64).reshape(-1)
    if q.shape[0] != matrix.dimensions:
        raise ValueError(f"the query vector has {q.shape[0]} dimensions, the matrix {matrix.dimensions}")
    vectors = matrix.vectors
    out = np.zeros(len(matrix.rows), dtype=np.float64)
    for dim in range(matrix.dimensions):
        out += vectors[:, dim].astype(np.float64) * q[dim]
    return out


def rank_order(matrix: ChunkMatrix, query_vector, query: str, *, vector_weight: float = HYBRID_VECTOR_WEIGHT,
               lexical_weight: float = HYBRID_LEXICAL_WEIGHT, k: float = RRF_K) -> RankedOrder:
    """The fused order of every chunk for one query (the original's ``rankOrder``).

    ``vector_weight / (k + vector_rank) + lexical_weight / (k + lexical_rank)``
    over every row; both orders and the fused one break ties by row index.
    """
    count = len(matrix.rows)
    if count == 0:
        return RankedOrder(np.zeros(0, dtype=np.int64), np.zeros(0), 0.0, 0.0)
    similarity = similarities(matrix, query_vector)
    lexical, _ = lexical_scores(matrix, query_terms(query))
    vector_order = order_by(similarity)
    lexical_order = order_by(lexical)
    vector_rank = np.empty(count, dtype=np.int64)
    lexical_rank = np.empty(count, dtype=np.int64)
    vector_rank[vector_order] = np.arange(count)
    lexical_rank[lexical_order] = np.arange(count)
    fused = vector_weight / (k + vector_rank) + lexical_weight / (k + lexical_rank)
    return RankedOrder(order_by(fused), similarity, js_round4(float(similarity[vector_order[0]])),
                       js_round4(float(lexical[lexical_order[0]])))


def fuse_rankings(rankings: Sequence[Sequence[int]], *, k: float = RRF_K) -> list[int]:
    """One order from several rankings of the same rows: the sum of ``1 / (k + rank)`` where a row appears.

    Empty rankings are ignored; a single ranking is returned as is; ties go
    to the smaller row index.
    """
    present = [list(r) for r in rankings if r is not None and len(r) > 0]
    if not present:
        return []
    if len(present) == 1:
        return present[0]
    scores: dict[int, float] = {}
    for ranking in present:
        for rank, row in enumerate(ranking):
            scores[row] = scores.get(row, 0.0) + 1 / (k + rank)
    return sorted(scores, key=lambda row: (-scores[row], row))


@dataclass(frozen=True)
class Selected:
    """One result: a chunk's place, its excerpt within the budget, its similarity (4 decimals)."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    similarity: float
    excerpt: str
    truncated: bool
    row: int = -1

    def to_dict(self) -> dict:
        """The original's result object (camelCase; ``symbol`` only when known)."""
        out: dict = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line}
        if self.symbol is not None:
            out["symbol"] = self.symbol
        out.update(similarity=self.similarity, excerpt=self.excerpt, truncated=self.truncated)
        return out


def pick_from(order: Sequence[int], matrix: ChunkMatrix, similarity, *, limit: int = HYBRID_LIMIT,
              per_file: int = HYBRID_PER_FILE, excerpt_lines: int = HYBRID_EXCERPT_LINES) -> list[Selected]:
    """The results a fused order gives before the shared line budget: :func:`select_from` without ``total_lines``.

    At most ``limit`` results and ``per_file`` per path, in order, each
    excerpt at most ``excerpt_lines`` lines (head-truncated); indices
    outside the rows are skipped.  :func:`fit_budget` then cuts them to a
    budget exactly as :func:`select_from` does.
    """
    per_file_used: dict[str, int] = {}
    results: list[Selected] = []
    rows = matrix.rows
    for at in order:
        at = int(at)
        if len(results) >= limit:
            break
        if not 0 <= at < len(rows):
            continue
        row = rows[at]
        used = per_file_used.get(row.path, 0)
        if used >= per_file:
            continue
        per_file_used[row.path] = used + 1
        excerpt, truncated = excerpt_of(row.text, excerpt_lines)
        results.append(Selected(row.path, row.start_line, row.end_line, row.symbol,
                                js_round4(float(similarity[at])), excerpt, truncated, at))
    return results


def fit_budget(results: Sequence, total_lines: int) -> tuple[list, int]:
    """``(kept, omitted)``: the original's shared line budget applied to results already picked, in rank order.

    ``results`` are what :func:`pick_from` gives (or any frozen dataclasses
    with ``excerpt`` and ``truncated`` in the same order: a hybrid answer's
    hits).  The budget is allocated by rank: each result gets at most what
    is left (its excerpt head-truncated to it, ``truncated`` then set), at
    least one line, and at least one result is kept however small the
    budget.  ``omitted`` is how many results the budget left out: 0 when it
    cut none.  ``fit_budget(pick_from(order, ...), total_lines)[0]`` is
    ``select_from(order, ..., total_lines=total_lines)``, result for result.
    """
    from dataclasses import replace

    kept: list = []
    remaining = total_lines
    for result in results:
        if remaining <= 0 and kept:
            break
        allowance = max(1, remaining)
        excerpt, cut = excerpt_of(result.excerpt, allowance)
        if cut:
            result = replace(result, excerpt=excerpt, truncated=True)
        remaining -= len(excerpt.split("\n"))
        kept.append(result)
    return kept, len(results) - len(kept)


def select_from(order: Sequence[int], matrix: ChunkMatrix, similarity, *, limit: int = HYBRID_LIMIT,
                per_file: int = HYBRID_PER_FILE, excerpt_lines: int = HYBRID_EXCERPT_LINES,
                total_lines: int = HYBRID_TOTAL_LINES) -> list[Selected]:
    """The results a caller sees, from a fused order (the original's ``selectFrom``).

    At most ``limit`` results and ``per_file`` per path; a shared budget of
    ``total_lines`` allocated by rank, each excerpt at most
    ``excerpt_lines`` and head-truncated; at least one result however small
    the budget.  Indices outside the rows are skipped.  It is
    :func:`pick_from` then :func:`fit_budget`, which also says how many
    results the budget left out.
    """
    return fit_budget(pick_from(order, matrix, similarity, limit=limit, per_file=per_file,
                                excerpt_lines=excerpt_lines), total_lines)[0]


def rank_chunks(matrix: ChunkMatrix, query_vector, query: str, *, limit: int = HYBRID_LIMIT,
                per_file: int = HYBRID_PER_FILE, excerpt_lines: int = HYBRID_EXCERPT_LINES,
                total_lines: int = HYBRID_TOTAL_LINES, vector_weight: float = HYBRID_VECTOR_WEIGHT,
                lexical_weight: float = HYBRID_LEXICAL_WEIGHT) -> tuple[list[Selected], float, float]:
    """``(results, vector_best, lexical_best)`` for one query: :func:`rank_order` then :func:`select_from`."""
    ranked = rank_order(matrix, query_vector, query, vector_weight=vector_weight, lexical_weight=lexical_weight)
    results = select_from(ranked.order, matrix, ranked.similarity, limit=limit, per_file=per_file,
                          excerpt_lines=excerpt_lines, total_lines=total_lines)
    return results, ranked.vector_best, ranked.lexical_best
