"""Hybrid chunk search: a vector ranking and the chunk index's lexical ranking, fused by rank.

The searcher only composes: the lexical half is
:class:`~codelex.rank.chunks.ChunkLexicalIndex` (the code ranking over
chunks), the vector half the exact native top-k over the cached unit
vectors (``codelex._native.dense``), the fusion :func:`fuse` (or the original's exact
:func:`~codelex.rank.original.rank_order` semantics with the ``original``
preset), the selection :func:`~codelex.rank.original.select_from`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from codelex.defaults import (
    HYBRID_EXCERPT_LINES,
    HYBRID_LIMIT,
    HYBRID_PER_FILE,
    HYBRID_TOTAL_LINES,
    PIPELINE_DEPTH,
    VECTOR_PRIOR_EXPONENT,
)
from codelex._native.dense import VectorIndex
from codelex.query.request import Request, parse_request
from codelex.rank.chunks import ChunkCorpus, ChunkLexicalIndex
from codelex.rank.fusion import FUSIONS, Fusion, QueryRankings, fuse, fused_order
from codelex.rank.pipeline import NO_FACTS, FileFacts, analyze_query
from codelex.rank.original import ChunkMatrix, fuse_rankings, js_round4, select_from

__all__ = ["HybridHit", "HybridResult", "HybridSearcher", "related_query"]

@dataclass(frozen=True)
class HybridHit:
    """One chunk of a hybrid answer."""

    path: str
    symbol: str | None
    start_line: int
    end_line: int
    excerpt: str
    truncated: bool
    similarity: float
    vector_rank: int | None  # 1-based place in the vector ranking (None: not ranked)
    lexical_rank: int | None  # 1-based place in the lexical ranking (None: no lexical match)

    def to_dict(self) -> dict:
        out = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line}
        if self.symbol is not None:
            out["symbol"] = self.symbol
        out.update(similarity=self.similarity, excerpt=self.excerpt, truncated=self.truncated,
                   vectorRank=self.vector_rank, lexicalRank=self.lexical_rank)
        return out


@dataclass(frozen=True)
class HybridResult:
    """A hybrid answer: hits, the best raw scores (``vector_best``: the best raw similarity among the rows the
    vector half ranks), and how much of the corpus is embedded."""

    query: str
    hits: list[HybridHit]
    vector_best: float
    lexical_best: float
    mode: str  # hybrid | lexical (vectors incomplete or no embedder) | unavailable
    embedded: int
    chunks: int
    available: bool = True
    hint: str | None = None

    def to_dict(self) -> dict:
        return {"query": self.query, "available": self.available, "mode": self.mode, "hint": self.hint,
                "embedded": self.embedded, "chunks": self.chunks,
                "vectorBest": self.vector_best, "lexicalBest": self.lexical_best,
                "results": [h.to_dict() for h in self.hits]}


class HybridSearcher:
    """Ranks a :class:`ChunkCorpus` for queries (see the module docstring).

    Parameters
    ----------
    corpus : ChunkCorpus
    lexical : ChunkLexicalIndex
    vectors : array (len(corpus), d) or None
        Unit rows; None or ``present`` not all true: lexical answers only.
    present : bool array, optional
        Which rows have a real vector.
    embed_query : callable, optional
        ``text -> unit vector`` for queries.
    partial : bool, default False
        The rows without a vector will stay without one (a cap on what is
        embedded chose them): rank by vector among the rows that have one
        instead of answering lexically.

    Notes
    -----
    The vector ranking is exact: the native top-k scores every row against
    an int8 copy with a rigorous error bound and scores exactly (in double,
    dimension by dimension) only the rows that can reach the top.
    """

    def __init__(self, corpus: ChunkCorpus, lexical: ChunkLexicalIndex, vectors: np.ndarray | None = None,
                 present: np.ndarray | None = None, embed_query: Callable[[str], np.ndarray] | None = None,
                 partial: bool = False) -> None:
        self.corpus = corpus
        self.lexical = lexical
        n = len(corpus)
        if vectors is not None and present is None:
            present = np.ones(n, dtype=bool)
        self.present = present if present is not None else np.zeros(n, dtype=bool)
        self.embed_query = embed_query
        every = bool(self.present.all())
        usable = vectors is not None and n > 0 and (every or (partial and bool(self.present.any())))
        if usable and not every:
            vectors = np.where(self.present[:, None], vectors, 0).astype(np.float32)
        self.vectors = vectors
        # (a row without a vector is never ranked by vector: left out by ``allowed``)
        self._vector_rows = None if every else self.present
        self._index = VectorIndex(vectors) if usable else None
        self._matrix = ChunkMatrix(corpus.rows, np.zeros((n, 1)))

    @property
    def complete(self) -> bool:
        """Every chunk has a vector and queries can be embedded: hybrid answers."""
        return self._index is not None and self.embed_query is not None

    def vector_ranking(self, query_vector, depth: int | None = None,
                       allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, similarities)``: the best ``depth`` rows (every row when None), ties by row; exact."""
        if self._index is None:
            raise ValueError("the vectors are not complete")
        if self._vector_rows is not None:
            allowed = self._vector_rows if allowed is None else (allowed & self._vector_rows)
        if depth is not None:
            return self._index.top_k(query_vector, depth, allowed)
        scores = self._index.scores(query_vector)
        order = np.lexsort((np.arange(scores.size), -scores))
        if allowed is not None:
            order = order[allowed[order]]
        return order, scores[order]

    def prior_weights(self, facts: FileFacts = NO_FACTS, rows: np.ndarray | None = None) -> np.ndarray:
        """The weight in the vector half of each row of ``rows`` (every row when None): its file's path factor
        (``ChunkCorpus.path_factors``, at most 1) ** VECTOR_PRIOR_EXPONENT."""
        return self.corpus.path_factors(facts, rows) ** VECTOR_PRIOR_EXPONENT

    def prior_vector_ranking(self, query_vector, depth: int, allowed: np.ndarray | None = None,
                             facts: FileFacts = NO_FACTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, weighted, similarities)``: the best ``depth`` rows by similarity x :meth:`prior_weights`
        (a negative similarity is left as it is: a demotion never lifts), ties by row; exact.

        The exact top-k by similarity is read ever deeper until the ``depth``-th weighted similarity is above
        the last similarity read: as no weight exceeds 1, no row further down can reach the top then.
        """
        n = len(self.corpus)
        k = min(max(4 * depth, 64), n)
        while True:
            rows, sims = self.vector_ranking(query_vector, k, allowed)
            weighted = np.where(sims > 0, sims * self.prior_weights(facts, rows), sims)
            order = np.lexsort((rows, -weighted))
            if rows.size < k or k >= n or (rows.size >= depth and weighted[order[depth - 1]] > sims[-1]):
                break
            k = min(4 * k, n)
        order = order[:depth]
        return rows[order], weighted[order], sims[order]

    def vector_order(self, query_vector) -> tuple[np.ndarray, np.ndarray]:
        """``(order, similarity)``: every row by cosine similarity (ties by row), and each row's similarity."""
        if self._index is None:
            raise ValueError("the vectors are not complete")
        scores = self._index.scores(query_vector)
        return np.lexsort((np.arange(scores.size), -scores)), scores

    def _ranked(self, query: str, fusion: Fusion, allowed, query_vector=None, facts: FileFacts = NO_FACTS):
        """(fused rows, similarity by row for the vector-ranked ones, lexical rows, vector rows, bests)."""
        n = len(self.corpus)
        # (this searcher's corpus: per-edit upkeep may already have moved the shared index's on)
        if fusion.name == "original":  # the seed's: the raw lexical ranking of every chunk
            depth = n if fusion.depth is None or allowed is not None else max(fusion.depth, 1)
            lex_rows, lex_scores = self.lexical.ranking(query, depth, self.corpus)
            if allowed is not None:
                keep = [i for i, r in enumerate(lex_rows) if allowed[r]]
                lex_rows, lex_scores = [lex_rows[i] for i in keep], [lex_scores[i] for i in keep]
                if fusion.depth is not None:
                    lex_rows, lex_scores = lex_rows[:fusion.depth], lex_scores[:fusion.depth]
        else:  # the ranking pipeline's (codelex.rank.pipeline)
            lex_rows, lex_scores = self.lexical.pipeline_ranking(analyze_query(query), PIPELINE_DEPTH, self.corpus,
                                                                 allowed, facts)
        lexical_best = js_round4(lex_scores[0]) if lex_scores else 0.0
        if not self.complete:
            return np.asarray(lex_rows, dtype=np.int64), {}, lex_rows, [], 0.0, lexical_best
        if query_vector is None:
            query_vector = self.embed_query(query)
        if fusion.depth is None:  # (the seed's fusion, exactly: every row by similarity)
            rows, sims = self.vector_ranking(query_vector, None, allowed)
            weighted = sims
        else:
            rows, weighted, sims = self.prior_vector_ranking(query_vector, fusion.depth, allowed, facts)
        similarity = dict(zip(rows.tolist(), sims.tolist()))
        # (the best raw similarity of the rows the vector half ranks: a demoted file's better one may be left out)
        vector_best = js_round4(float(sims.max())) if sims.size else 0.0
        rankings = QueryRankings.of(query, self.corpus, rows, weighted, lex_rows, lex_scores)
        if fusion.depth is None:
            wv, wl = fusion.weights_of(rankings)
            full = np.empty(n, dtype=np.int64)
            full[:rows.size] = rows
            if rows.size < n:  # rows left out by ``allowed`` rank after the others, in row order
                full[rows.size:] = np.setdiff1d(np.arange(n), rows)
            fused = fuse(full, lex_rows, n, fusion, wv, wl)
            if allowed is not None:
                fused = fused[allowed[fused]]
        else:
            corpus_rows = self.corpus.rows
            fused = fused_order(rankings, fusion, n, lambda row: corpus_rows[row].path)
        return fused, similarity, lex_rows, rows.tolist(), vector_best, lexical_best

    def search(self, query: Request | str, *, alternatives: Sequence[Request | str] = (),
               fusion: str | Fusion = "adaptive", limit: int = HYBRID_LIMIT, per_file: int = HYBRID_PER_FILE,
               excerpt_lines: int = HYBRID_EXCERPT_LINES, total_lines: int = HYBRID_TOTAL_LINES,
               allowed: np.ndarray | None = None, query_vector=None, facts: FileFacts = NO_FACTS) -> HybridResult:
        """The best chunks for ``query`` (and its alternative phrasings, fused with :func:`fuse_rankings`): each a
        :class:`~codelex.query.Request` parsed once by the caller (a str is parsed here).

        ``query_vector``, when given, stands for the embedding of ``query``; ``facts`` (importer counts,
        translated documents) feeds the ranking pipeline's stages that read them.
        """
        fusion = FUSIONS[fusion] if isinstance(fusion, str) else fusion
        request = parse_request(query)
        allowed = self._filtered(request, allowed)
        query = request.terms
        alternatives = [parse_request(a).terms for a in alternatives]
        if not self._has_terms(query):  # empty, or stop words only: nothing to rank by
            return HybridResult(query, [], 0.0, 0.0, "hybrid" if self.complete else "lexical",
                                int(self.present.sum()), len(self.corpus))
        alternatives = [a for a in alternatives if self._has_terms(a)]
        if self.complete and query_vector is None:
            query_vector = self.embed_query(query)
        orders = []
        first = None
        for i, q in enumerate([query, *alternatives]):
            ranked = self._ranked(q, fusion, allowed, query_vector if i == 0 else None, facts)
            if i == 0:
                first = ranked
            orders.append([int(r) for r in ranked[0]])
        fused, similarity, lex_rows, vec_rows, vector_best, lexical_best = first
        order = fuse_rankings(orders) if len(orders) > 1 else orders[0]
        sims = _Similarity(similarity, self._index, query_vector, self.embed_query, query)
        picked = select_from(order, self._matrix, sims, limit=limit, per_file=per_file,
                             excerpt_lines=excerpt_lines, total_lines=total_lines)
        lex_place = {r: i + 1 for i, r in enumerate(lex_rows)}
        vec_place = {r: i + 1 for i, r in enumerate(vec_rows)}
        hits = [HybridHit(p.path, p.symbol, p.start_line, p.end_line, p.excerpt, p.truncated,
                          p.similarity if self.complete else 0.0, vec_place.get(p.row), lex_place.get(p.row))
                for p in picked]
        return HybridResult(query, hits, vector_best, lexical_best, "hybrid" if self.complete else "lexical",
                            int(self.present.sum()), len(self.corpus))

    def contention(self, query: Request | str, *, alternatives: Sequence[Request | str] = (), depth: int,
                   allowed: np.ndarray | None = None, facts: FileFacts = NO_FACTS) -> list[int]:
        """The rows the lexical ranking puts first for ``query`` and its alternatives (``depth`` of each, in
        that order, each row once), filtered as :meth:`search` filters: what a provisional hybrid answer
        embeds on demand before the vectors of every chunk are there."""
        request = parse_request(query)
        allowed = self._filtered(request, allowed)
        out: dict[int, None] = {}
        for q in (request.terms, *(parse_request(a).terms for a in alternatives)):
            if self._has_terms(q):
                rows, _ = self.lexical.pipeline_ranking(analyze_query(q), depth, self.corpus, allowed, facts)
                out.update((int(r), None) for r in rows[:depth])
        return list(out)

    def _filtered(self, request: Request, allowed: np.ndarray | None) -> np.ndarray | None:
        """``allowed`` narrowed by the request's inline filters (lang:, ext:, file: judge a chunk by its file)."""
        filtered = self.corpus.allowed(request.filters)
        if filtered is None:
            return allowed
        return filtered if allowed is None else (allowed & filtered)

    @staticmethod
    def _has_terms(query: str) -> bool:
        from codelex.text.tokenize import tokenize_line

        return bool(tokenize_line(query))

    def _others(self, row: int, same_language: bool, language_of) -> np.ndarray:
        """The rows a "related" answer may hold: every other chunk, of ``row``'s language when asked."""
        rows = self.corpus.rows
        allowed = np.ones(len(rows), dtype=bool)
        if same_language and language_of is not None:
            lang = language_of(rows[row].path)
            allowed = np.array([language_of(r.path) == lang for r in rows], dtype=bool)
        allowed[row] = False
        return allowed

    def related_lexical(self, row: int, *, limit: int = HYBRID_LIMIT, same_language: bool = True,
                        language_of: Callable[[str], str | None] | None = None) -> list[tuple[int, float]]:
        """``(row, score)`` of the chunks sharing the most telling identifiers with ``row`` (:func:`related_query`),
        the row itself left out: what :meth:`related` answers while the vectors are not there."""
        rows = self.corpus.rows
        query = related_query(rows[row].text, rows[row].symbol)
        if not self._has_terms(query):
            return []
        allowed = self._others(row, same_language, language_of)
        found, scores = self.lexical.pipeline_ranking(analyze_query(query), PIPELINE_DEPTH, self.corpus, allowed)
        return [(int(r), js_round4(float(s))) for r, s in zip(found[:limit], scores[:limit])]

    def related(self, row: int, *, limit: int = HYBRID_LIMIT, same_language: bool = True,
                language_of: Callable[[str], str | None] | None = None) -> list[tuple[int, float]]:
        """``(row, similarity)`` of the chunks nearest to ``row`` in vector space, the row itself left out."""
        if self._index is None:
            return []
        rows = self.corpus.rows
        allowed = self._others(row, same_language, language_of)
        if self._vector_rows is not None:
            if not self._vector_rows[row]:
                return []
            allowed &= self._vector_rows
        found, sims = self._index.top_k(self.vectors[row], limit, allowed)
        return [(int(r), js_round4(float(s))) for r, s in zip(found, sims)]


#: Identifiers of a chunk that make its lexical "related" query: the most frequent this many.
RELATED_TERMS = 12
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_NOT_NAMES = frozenset(
    "self this cls def class return import from none null true false let var const func function struct impl pub "
    "for while if else elif then end with and not the int str bool string void new try except catch finally raise "
    "throw async await yield static public private protected final override package use mod fn type interface "
    "lambda print len range super nil val".split())


def related_query(text: str, symbol: str | None = None) -> str:
    """The identifiers that say what a chunk is about, as a query: its symbol's name first, then the names it
    uses most (keywords and one- or two-letter names left out)."""
    counts: dict[str, int] = {}
    for name in _IDENTIFIER.findall(text):
        if name.lower() not in _NOT_NAMES:
            counts[name] = counts.get(name, 0) + 1
    ordered = sorted(counts, key=lambda n: (-counts[n], n))[:RELATED_TERMS]
    head = [symbol.rsplit(".", 1)[-1]] if symbol else []
    return " ".join(dict.fromkeys(head + ordered))


class _Similarity:
    """Similarity by row for :func:`select_from`: the vector ranking's, else computed exactly on demand."""

    def __init__(self, known: dict, index, query_vector, embed_query, query: str) -> None:
        self.known = known
        self.index = index
        self.query_vector = query_vector
        self.embed_query = embed_query
        self.query = query

    def __getitem__(self, row: int) -> float:
        found = self.known.get(row)
        if found is not None:
            return found
        if self.index is None:
            return 0.0
        if self.query_vector is None:
            self.query_vector = self.embed_query(self.query)
        return float(self.index.scores(self.query_vector, [row])[0])
