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
from typing import Sequence

import numpy as np

from codelex.defaults import HYBRID_LEXICAL_WEIGHT, HYBRID_VECTOR_WEIGHT, RRF_K
from codelex.rank.chunks import ChunkCorpus

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
    depth = fusion.depth
    fused = np.zeros(n, dtype=np.float64)
    v = np.asarray(vector_order[:depth], dtype=np.int64)
    fused[v] += vector_weight / (k + np.arange(v.size))
    lex = np.asarray(list(lexical_order)[:depth], dtype=np.int64)
    fused[lex] += lexical_weight / (k + np.arange(lex.size))
    touched = np.union1d(v, lex)
    return touched[np.argsort(-fused[touched], kind="stable")]




@dataclass(frozen=True)
class QueryRankings:
    """One query's two rankings (each cut at a fusion's depth) and what they show.

    Attributes
    ----------
    query : str
    vector_rows, vector_similarities : numpy.ndarray
        The vector ranking, best first, and each row's cosine similarity.
    lexical_rows : list of int
        The lexical ranking (the ranking pipeline's), best first.
    query_class : str
        :func:`query_class`: ``symbol``, ``defined`` or ``prose``.
    names : bool
        The query names identifiers of the code (``how does parseConfig
        fail``): the lexical half can find them by name.
    agreement : int
        Rows the two rankings share in their first :data:`AGREEMENT_DEPTH`.
    vector_margin : float
        How far the best vector similarity stands above the
        :data:`AGREEMENT_DEPTH`-th: a sharp vector ranking has found one
        thing; a flat one is unsure.
    """

    query: str
    vector_rows: np.ndarray
    vector_similarities: np.ndarray
    lexical_rows: list
    query_class: str
    names: bool
    agreement: int
    vector_margin: float

    @classmethod
    def of(cls, query: str, corpus: ChunkCorpus, vector_rows, vector_similarities,
           lexical_rows: Sequence[int], lexical_scores: Sequence[float] = ()) -> QueryRankings:
        vector_rows = np.asarray(vector_rows, dtype=np.int64)
        vector_similarities = np.asarray(vector_similarities, dtype=np.float64)
        lexical_rows = [int(r) for r in lexical_rows]
        top = AGREEMENT_DEPTH
        agreement = len(set(vector_rows[:top].tolist()) & set(lexical_rows[:top]))
        sims = vector_similarities
        margin = float(sims[0] - sims[min(top, sims.size) - 1]) if sims.size else 0.0
        from codelex.rank.pipeline import analyze_query

        names = bool(analyze_query(query).names)
        return cls(query, vector_rows, vector_similarities, lexical_rows,
                   query_class(query, lexical_rows, corpus), names, agreement, margin)


#: Rows of each ranking compared to measure how far they agree.
AGREEMENT_DEPTH = 10


@dataclass(frozen=True)
class Adaptation:
    """How the evidence of both rankings moves a query's vector weight (the lexical weight is 1 minus it).

    A prose question that names identifiers of the code starts at ``named``
    (the lexical half finds names); halves that share at most
    ``disagree_at`` of their first :data:`AGREEMENT_DEPTH` rows move it by
    ``disagree`` (one of them is wrong, and on these sets it is more often
    one than the other); a vector ranking sharper than ``margin_pivot``
    moves it by ``margin_slope`` per unit of margin.  The result stays
    within ``[floor, 1 - floor]``: neither half is ever ignored.
    """

    named: float | None = None
    disagree_at: int = 0
    disagree: float = 0.0
    margin_pivot: float = 0.1
    margin_slope: float = 0.0
    floor: float = 0.05

    def weights(self, rankings: QueryRankings, weights: tuple[float, float]) -> tuple[float, float]:
        wv = weights[0] / max(weights[0] + weights[1], 1e-12)
        if rankings.query_class == "prose":
            if rankings.names and self.named is not None:
                wv = self.named
            if rankings.agreement <= self.disagree_at:
                wv += self.disagree
            wv += self.margin_slope * (rankings.vector_margin - self.margin_pivot)
        wv = min(max(wv, self.floor), 1.0 - self.floor)
        return wv, 1.0 - wv


def fused_order(rankings: QueryRankings, fusion: Fusion, n: int) -> np.ndarray:
    """Row indices by fused score under ``fusion`` (its depth: each ranking's first rows; ties by row)."""
    wv, wl = fusion.weights_of(rankings)
    return fuse(rankings.vector_rows, rankings.lexical_rows, n, fusion, wv, wl)


#: ``original``: the seed's fusion exactly (0.7 / 0.3, k = 60, every chunk ranked);
#: ``shape`` (the default): weights by query class over the top 100 of each ranking, tuned on ../shared/eval.
FUSIONS = {
    "original": Fusion("original", {"prose": (HYBRID_VECTOR_WEIGHT, HYBRID_LEXICAL_WEIGHT)}, RRF_K, None),
    "shape": Fusion("shape", {"prose": (0.7, 0.3), "symbol": (0.1, 0.9), "defined": (0.1, 0.9)}, 5, 100),
    "adaptive": Fusion("adaptive", {"prose": (0.7, 0.3), "symbol": (0.1, 0.9), "defined": (0.1, 0.9)}, 5, 100,
                       Adaptation()),
}


