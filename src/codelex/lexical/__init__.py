"""The index stage: the identifier-aware BM25 word index, its filters and priors."""

from codelex.lexical.index import FileInfo, Hit, WordIndex
from codelex.lexical.priors import centrality_from_reverse_deps

__all__ = ["FileInfo", "Hit", "WordIndex", "centrality_from_reverse_deps"]
