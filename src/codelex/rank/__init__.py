"""Ranking: the pipeline's stages (``pipeline``), files through it (``search``), chunks as documents (``chunks``),
fusion of the two halves (``fusion``), hybrid search (``hybrid``), the original's functions (``original``)."""

from codelex.rank.chunks import ChunkCorpus, ChunkLexicalIndex, chunk_rows, embedding_text, text_key
from codelex.rank.fusion import FUSIONS, Fusion, QueryRankings, fuse, fused_order, query_class, query_shape
from codelex.rank.hybrid import HybridHit, HybridResult, HybridSearcher
from codelex.rank.pipeline import STAGES, QueryAnalysis, analyze_query, rank_units, stages_off
from codelex.rank.search import search_files
from codelex.rank.original import (
    ChunkMatrix,
    ChunkRow,
    RankedOrder,
    Selected,
    excerpt_of,
    fit_budget,
    fuse_rankings,
    lexical_scores,
    pick_from,
    query_terms,
    rank_chunks,
    rank_order,
    select_from,
    split_identifier,
)

__all__ = [
    "FUSIONS",
    "STAGES",
    "QueryAnalysis",
    "analyze_query",
    "rank_units",
    "search_files",
    "stages_off",
    "ChunkCorpus",
    "ChunkLexicalIndex",
    "ChunkMatrix",
    "ChunkRow",
    "Fusion",
    "QueryRankings",
    "HybridHit",
    "HybridResult",
    "HybridSearcher",
    "RankedOrder",
    "Selected",
    "chunk_rows",
    "embedding_text",
    "excerpt_of",
    "fit_budget",
    "fuse",
    "fused_order",
    "fuse_rankings",
    "lexical_scores",
    "pick_from",
    "query_class",
    "query_shape",
    "query_terms",
    "rank_chunks",
    "rank_order",
    "select_from",
    "split_identifier",
    "text_key",
]
