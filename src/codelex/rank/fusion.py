"""Fusing the vector ranking with the lexical one: what a query is, how far the halves agree, the weights.

One small module, as pyserini keeps its fusion: :class:`QueryRankings`
holds one query's two rankings and what they say about the query (its
class, how much the halves agree, how sure each is), a :class:`Fusion`
turns that into weights and the fused order (:func:`fused_order`).  The
presets (:data:`FUSIONS`): ``original`` is the seed's, exactly; ``shape``
weighs by the query's class alone; ``adaptive`` (the default) also reads
the evidence of both rankings.  Both ``shape`` and ``adaptive`` were
tuned on ``../shared/eval`` only (``benchmarks/hybrid_eval.py --tune``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from codelex.defaults import HYBRID_LEXICAL_WEIGHT, HYBRID_VECTOR_WEIGHT, RRF_K
from codelex.rank.chunks import ChunkCorpus
from codelex.rank.pipeline import analyze_query

__all__ = ["FUSIONS", "Adaptation", "Fusion", "QueryRankings", "fuse", "fused_order", "query_class",
           "query_shape"]

_SYMBOLISH = re.compile(r"[a-z0-9][A-Z]|_|::|\.|->|[A-Z]{2}")


def query_shape(query: str) -> str:
    """``symbol`` for a query that names code (one identifier-like term: ``getUserById``, ``Foo::bar``,
    ``snake_case``, ``JoinSet``), else ``prose``."""
    terms = query.split()
    if len(terms) == 1 and (_SYMBOLISH.search(terms[0]) or terms[0][:1].isupper()):
        return "symbol"
    return "prose"


def query_class(query: str, lexical_rows: Sequence[int], corpus: ChunkCorpus, look: int = 3) -> str:
    """How the query should be fused: ``symbol`` (it looks like an identifier), ``defined`` (one of
    the ``look`` best lexical chunks defines a name that holds every query token: the lexical
    ranking has found what the query names, e.g. ``read varint`` and ``ReadVarint``), else
    ``prose``.  This is the lexical-confidence signal: scale-free, it reads no score."""
    if query_shape(query) == "symbol":
        return "symbol"
    from codelex.text.tokenize import tokenize_line

    from codelex.text import scan_definitions

    wanted = set(tokenize_line(query))
    if wanted:
        for row in lexical_rows[:look]:
            chunk = corpus.rows[row]
            # The chunk's symbol, and every name its text defines (merged chunks hold several).
            names = [chunk.symbol] if chunk.symbol else []
            names += [name for name, _ in scan_definitions(chunk.path, chunk.text)]
            if any(wanted <= set(tokenize_line(name)) for name in names):
                return "defined"
    return "prose"


@dataclass(frozen=True)
class Fusion:
    """How the two rankings are fused.

    ``weights`` maps a query class (:func:`query_class`: ``prose``,
    ``symbol``, ``defined``; missing classes fall back to ``prose``) to
    ``(vector_weight, lexical_weight)``; each chunk scores
    ``w_v / (k + vector_rank) + w_l / (k + lexical_rank)`` over the rankings
    cut at ``depth`` (None: every chunk, ranks from 0 as the original counts
    them, unmatched chunks after the matched ones in row order).
    """

    name: str
    weights: dict = field(default_factory=dict)
    k: float = RRF_K
    depth: int | None = None
    #: Moves the class's weights by the evidence of both rankings (None: the class's weights as they are).
    adapt: Adaptation | None = None
    #: A file's n-th chunk keeps ``same_file ** (n - 1)`` of its fused score (1: no decay; see fused_order).
    same_file: float = 1.0

    def weights_for(self, query_class_: str) -> tuple[float, float]:
        return self.weights.get(query_class_, self.weights["prose"])

    def weights_of(self, rankings: QueryRankings) -> tuple[float, float]:
        """The weights for one query: its class's, adapted to what both rankings show."""
        weights = self.weights_for(rankings.query_class)
        return weights if self.adapt is None else self.adapt.weights(rankings, weights)


def fuse(vector_order: np.ndarray, lexical_order: Sequence[int], n: int, fusion: Fusion,
         vector_weight: float, lexical_weight: float) -> np.ndarray:
    """Row indices by fused score (ties by row), given both rankings of ``n`` rows."""
    k = fusion.k
    if fusion.depth is None:
        vector_rank = np.empty(n, dtype=np.int64)
        vector_rank[vector_order] = np.arange(n)
        # Unmatched rows follow the matched ones in row order, as the original's sort of zero scores.
        lexical_rank = np.full(n, -1, dtype=np.int64)
        lex = np.asarray(lexical_order, dtype=np.int64)
        lexical_rank[lex] = np.arange(lex.size)
        rest = np.flatnonzero(lexical_rank < 0)
        lexical_rank[rest] = lex.size + np.arange(rest.size)
        fused = vector_weight / (k + vector_rank) + lexical_weight / (k + lexical_rank)
        return np.argsort(-fused, kind="stable")
    touched, scores = _top_scores(vector_order, lexical_order, n, fusion, vector_weight, lexical_weight)
    return touched[np.argsort(-scores, kind="stable")]


def _top_scores(vector_order, lexical_order: Sequence[int], n: int, fusion: Fusion, vector_weight: float,
                lexical_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)``: the rows of either ranking's first ``fusion.depth``, ascending, and their fused scores."""
    k, depth = fusion.k, fusion.depth
    fused = np.zeros(n, dtype=np.float64)
    v = np.asarray(vector_order[:depth], dtype=np.int64)
    fused[v] += vector_weight / (k + np.arange(v.size))
    lex = np.asarray(list(lexical_order)[:depth], dtype=np.int64)
    fused[lex] += lexical_weight / (k + np.arange(lex.size))
    touched = np.union1d(v, lex)
    return touched, fused[touched]


@dataclass(frozen=True)
class QueryRankings:
    """One query's two rankings (each cut at a fusion's depth) and what they show.

    Attributes
    ----------
    query : str
    vector_rows, vector_similarities : numpy.ndarray
        The vector ranking, best first, and each row's similarity as it ranks: the cosine similarity times
        the row's path-prior weight (``HybridSearcher.prior_vector_ranking``; the raw cosine for the
        ``original`` fusion).
    lexical_rows : list of int
        The lexical ranking (the ranking pipeline's), best first.
    lexical_scores : tuple of float
        Its scores.
    query_class : str
        :func:`query_class`: ``symbol``, ``defined`` or ``prose``.
    names : bool
        The query names identifiers of the code (``how does parseConfig
        fail``): the lexical half can find them by name.
    agreement : int
        Rows the two rankings share in their first :data:`AGREEMENT_DEPTH`.
    vector_best : float
        The first row's similarity as it ranks (0 without a vector ranking).
    lexical_sharpness : float
        ``1 - score[AGREEMENT_DEPTH - 1] / score[0]`` of the lexical
        ranking (its last score when shorter; 0 when empty): near 1 when a
        few chunks stand far above the rest.
    """

    query: str
    vector_rows: np.ndarray
    vector_similarities: np.ndarray
    lexical_rows: list
    query_class: str
    names: bool
    agreement: int
    vector_best: float
    lexical_sharpness: float

    @classmethod
    def of(cls, query: str, corpus: ChunkCorpus, vector_rows, vector_similarities,
           lexical_rows: Sequence[int], lexical_scores: Sequence[float] = ()) -> QueryRankings:
        vector_rows = np.asarray(vector_rows, dtype=np.int64)
        vector_similarities = np.asarray(vector_similarities, dtype=np.float64)
        lexical_rows = [int(r) for r in lexical_rows]
        top = AGREEMENT_DEPTH
        agreement = len(set(vector_rows[:top].tolist()) & set(lexical_rows[:top]))
        best = float(vector_similarities[0]) if vector_similarities.size else 0.0
        scores = [float(x) for x in lexical_scores[:top]]
        sharpness = 1.0 - scores[-1] / scores[0] if scores and scores[0] > 0 else 0.0
        names = bool(analyze_query(query).names)
        return cls(query, vector_rows, vector_similarities, lexical_rows,
                   query_class(query, lexical_rows, corpus), names, agreement, best, min(max(sharpness, 0.0), 1.0))


#: Rows of each ranking compared to measure how far they agree.
AGREEMENT_DEPTH = 10


@dataclass(frozen=True)
class Adaptation:
    """How the evidence of both rankings sets a prose query's vector weight (the lexical weight is 1 minus it).

    Measured on the development sets (``benchmarks/hybrid_eval.py``), each
    half wins on different questions, and these say which, before knowing:

    - a *sharp* lexical ranking (its :data:`AGREEMENT_DEPTH`-th score far
      below its first: :attr:`QueryRankings.lexical_sharpness`) has found
      the few chunks that hold the query's words; a flat one has not;
    - a question that *names* identifiers of the code is found by name;
    - a high best *vector similarity* means a chunk really says what the
      question asks;
    - halves that *disagree* (share at most ``disagree_at`` of their first
      rows) are more often saved by the vector half: the lexical half then
      matched words, not meaning.

    The vector weight is ``base - sharpness_slope * sharpness + named (if
    names) + similarity_slope * (best similarity - similarity_pivot) +
    disagree (if they disagree)``, kept within ``[floor, 1 - floor]`` so
    neither half is ever ignored.  Identifier queries (class ``symbol`` or
    ``defined``) keep their class's weights.
    """

    base: float = 0.9
    sharpness_slope: float = 0.9
    named: float = -0.4
    similarity_pivot: float = 0.6
    similarity_slope: float = 1.0
    disagree_at: int = 1
    disagree: float = 0.2
    floor: float = 0.05

    def weights(self, rankings: QueryRankings, weights: tuple[float, float]) -> tuple[float, float]:
        wv = weights[0] / max(weights[0] + weights[1], 1e-12)
        if rankings.query_class == "prose":
            wv = self.base - self.sharpness_slope * rankings.lexical_sharpness
            if rankings.names:
                wv += self.named
            wv += self.similarity_slope * (rankings.vector_best - self.similarity_pivot)
            if rankings.agreement <= self.disagree_at:
                wv += self.disagree
        wv = min(max(wv, self.floor), 1.0 - self.floor)
        return wv, 1.0 - wv


def fused_order(rankings: QueryRankings, fusion: Fusion, n: int,
                path_of: Callable[[int], str] | None = None) -> np.ndarray:
    """Row indices by fused score under ``fusion`` (its depth: each ranking's first rows; ties by row).

    With ``path_of`` (row -> file) and a ``same_file`` decay below 1, a
    file's second chunk keeps that share of its score, its third the square
    of it...: ten chunks of one file would hide the other files the answer
    needs (the ranking pipeline's saturation, applied to the fused ranking).
    """
    wv, wl = fusion.weights_of(rankings)
    if fusion.depth is None or fusion.same_file >= 1.0 or path_of is None:
        return fuse(rankings.vector_rows, rankings.lexical_rows, n, fusion, wv, wl)
    touched, scores = _top_scores(rankings.vector_rows, rankings.lexical_rows, n, fusion, wv, wl)
    order = np.argsort(-scores, kind="stable")
    rows, scores = touched[order], scores[order]
    seen: dict[str, int] = {}
    earlier = np.empty(rows.size, dtype=np.float64)  # the file's chunks ranked above this one
    for i, row in enumerate(rows.tolist()):
        path = path_of(row)
        earlier[i] = seen.get(path, 0)
        seen[path] = int(earlier[i]) + 1
    decayed = scores * fusion.same_file ** earlier
    return rows[np.lexsort((rows, -decayed))]


#: ``original``: the seed's fusion exactly (0.7 / 0.3, k = 60, every chunk ranked);
#: ``shape``: weights by query class over the top 100 of each ranking; ``adaptive`` (the default): weights by
#: the evidence of both rankings (Adaptation), a file's later chunks decayed; both tuned on ../shared/eval.
FUSIONS = {
    "original": Fusion("original", {"prose": (HYBRID_VECTOR_WEIGHT, HYBRID_LEXICAL_WEIGHT)}, RRF_K, None),
    "shape": Fusion("shape", {"prose": (0.7, 0.3), "symbol": (0.1, 0.9), "defined": (0.1, 0.9)}, 5, 100),
    "adaptive": Fusion("adaptive", {"prose": (0.7, 0.3), "symbol": (0.1, 0.9), "defined": (0.1, 0.9)}, 5, 100,
                       Adaptation(), same_file=0.5),
    # The vector half alone (its top 100; chunks only the lexical half found follow): for measuring the halves.
    "vector": Fusion("vector", {"prose": (1.0, 0.0)}, 5, 100),
}


