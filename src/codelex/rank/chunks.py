"""Chunks as documents: the rows hybrid search ranks, and their lexical index.

A chunk is one of the structure stage's chunks (a function, a method, a
class head, merged small neighbours, or a line window), with its text and
the qualified name of the definition it is about.

The lexical half is a :class:`~codelex.lexical.WordIndex` with one document
per chunk, ranked by the code ranking, so the field mapping is:

========  ==============================================================
body      the chunk's text
dir       the directories of the chunk's file
name      the chunk's file name without its extension
defs      the chunk's symbol (its qualified name, split into words)
========  ==============================================================

A match in the path or the symbol thus weighs more than one in the body
(the original weighs such "header" matches ×3), and a chunk whose symbol
holds every query token earns the definition boost.  The document of chunk
``i`` of file ``p`` is named ``p#i``: the dir and name fields are derived
from the part before the last ``/`` and the part before the last ``.``, so
they are the file's (for a file without an extension the chunk number is
part of its name; numbers of one digit are no token).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import xxhash

from codelex.lexical import WordIndex
from codelex.lexical.doctable import DocTable
from codelex.lexical.masks import search_mask
from codelex.query.options import SearchOptions
from codelex.rank.original import ChunkRow
from codelex.rank.pipeline import (NO_FACTS, PATH_FACTOR_STAGES, FileFacts, QueryAnalysis, Units, enabled,
                                   path_factor, rank_units)
from codelex.structure import FileStructure, line_windows
from codelex.text import scan_definitions

__all__ = ["ChunkCorpus", "ChunkLexicalIndex", "chunk_rows", "embedding_text", "text_key"]


def chunk_rows(path: str, content: str | bytes, structure: FileStructure | None = None) -> list[ChunkRow]:
    """The chunks of one file as rows (line windows when there is no structure)."""
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    parsed = structure is not None and structure.chunks
    if not parsed:
        chunks = line_windows(content.encode("utf-8", "surrogatepass")) if lines else []
        symbols = [None] * len(chunks)
    else:
        chunks = list(structure.chunks)
        symbols = [structure.chunk_symbol(c) for c in chunks]
    rows = []
    for chunk, symbol in zip(chunks, symbols):
        end = min(chunk.end_line, len(lines))  # a final newline ends the last line; it starts none
        text = "\n".join(lines[chunk.start_line - 1:end])
        if text.strip():
            if parsed and structure.parsed:  # the names whose signature stands in the chunk
                names = frozenset(d.name for d in structure.definitions if chunk.start_line <= d.signature_line <= end)
            else:  # no grammar: the native definition scanner's
                names = frozenset(name for name, _ in scan_definitions(path, text))
            rows.append(ChunkRow(path, chunk.start_line, end, text, symbol, names))
    return rows


def embedding_text(row: ChunkRow) -> str:
    """What an embedder sees of a chunk: its path and symbol on a first line, then its text."""
    head = row.path if row.symbol is None else f"{row.path} {row.symbol}"
    return f"{head}\n{row.text}"


def text_key(text: str) -> int:
    """The cache key of an embedded text (xxh3-64 of its UTF-8)."""
    return xxhash.xxh3_64_intdigest(text.encode("utf-8", "surrogatepass"))


@dataclass
class ChunkCorpus:
    """Every chunk of a set of files, in file then line order, with each chunk's embedding key."""

    rows: list[ChunkRow]
    keys: np.ndarray  # uint64, one per row
    file_rows: dict[str, tuple[int, int]]  # path -> [start, end) of its rows
    _units: Units | None = field(default=None, repr=False, compare=False)
    _table: DocTable | None = field(default=None, repr=False, compare=False)
    _factors: tuple | None = field(default=None, repr=False, compare=False)  # (key, paths, file by row, by file)

    @property
    def units(self) -> Units:
        """The rows as the ranking pipeline reads them (built once)."""
        if self._units is None:
            self._units = Units([r.path for r in self.rows], [r.names for r in self.rows], chunks=True)
        return self._units

    def path_factors(self, facts: FileFacts = NO_FACTS, rows: np.ndarray | None = None) -> np.ndarray:
        """The path factor (:func:`~codelex.rank.pipeline.path_factor`, at most 1) of each row of ``rows``
        (every row when None).  A file's is computed when a row of it is first asked for, and kept while
        ``facts`` says the same of translations and the same stages run, so a query pays for the few files
        its vector ranking reads (a file's regexes cost ~20 us: a whole corpus of 19,000 files, 0.6 s)."""
        key = (facts.translated, tuple(enabled(stage) for stage in PATH_FACTOR_STAGES))
        kept = self._factors
        if kept is None or kept[0] != key:
            paths = list(self.file_rows)
            row_file = np.empty(len(self.rows), dtype=np.int64)
            for i, (start, end) in enumerate(self.file_rows.values()):
                row_file[start:end] = i
            kept = self._factors = (key, paths, row_file, np.full(len(paths), np.nan))
        _, paths, row_file, by_file = kept
        files = row_file if rows is None else row_file[np.asarray(rows, dtype=np.int64)]
        unknown = np.unique(files[np.isnan(by_file[files])])
        if unknown.size:
            units = self.units
            for f in unknown.tolist():
                by_file[f] = min(path_factor(units, paths[f], facts), 1.0)
        return by_file[files]

    def allowed(self, filters, options: SearchOptions | None = None) -> np.ndarray | None:
        """The rows a request's inline filters and options admit, judged by their file's path as a file search
        judges it (``lang:``, ``ext:``, ``file:``, path globs); None when every row is."""
        options = options or SearchOptions()
        if not filters and options.lang is None and options.paths_predicate is None:
            return None
        if self._table is None:
            self._table = DocTable([r.path for r in self.rows])
        mask = search_mask(self._table, len(self.rows), filters, options)
        return None if mask is None else mask.view(bool)

    @classmethod
    def from_rows(cls, rows: Iterable[ChunkRow]) -> ChunkCorpus:
        rows = list(rows)
        keys = np.fromiter((text_key(embedding_text(r)) for r in rows), dtype=np.uint64, count=len(rows))
        file_rows: dict[str, tuple[int, int]] = {}
        for i, r in enumerate(rows):
            start, _ = file_rows.get(r.path, (i, i))
            file_rows[r.path] = (start, i + 1)
        return cls(rows, keys, file_rows)

    def __len__(self) -> int:
        return len(self.rows)

    def row_at(self, path: str, line: int) -> int | None:
        """The row of ``path`` whose lines hold ``line`` (None when none does)."""
        span = self.file_rows.get(path)
        if span is None:
            return None
        for i in range(*span):
            r = self.rows[i]
            if r.start_line <= line <= r.end_line:
                return i
        return None


class ChunkLexicalIndex:
    """The chunk-level word index (see the module docstring for its field mapping), kept per file.

    Chunk ``j`` of file ``p`` is the document ``p#j``; :meth:`replace_file`
    swaps one file's chunks (an edit costs that file's postings).
    """

    def __init__(self, corpus: ChunkCorpus) -> None:
        self.corpus = corpus
        self.counts: dict[str, int] = {}
        docs = []
        for path, (start, end) in corpus.file_rows.items():
            self.counts[path] = end - start
            docs.extend(self._docs(path, corpus.rows[start:end]))
        self.index = WordIndex.build(docs, max_bytes=None)
        self.index.merge_ratio = 0.25

    @staticmethod
    def _docs(path: str, rows: Sequence[ChunkRow]):
        # The symbol is the chunk's only definition, on its first line.
        return [(f"{path}#{j}", r.text, -1, [(r.symbol, 1)] if r.symbol else []) for j, r in enumerate(rows)]

    def replace_file(self, path: str, rows: Sequence[ChunkRow]) -> None:
        """Make ``rows`` the chunks of ``path`` (none: the file is gone)."""
        old = self.counts.pop(path, 0)
        for j in range(len(rows), old):
            self.index.remove(f"{path}#{j}")
        for doc, text, _, defs in self._docs(path, rows):
            self.index.update(doc, text, definitions=defs)
        if rows:
            self.counts[path] = len(rows)

    def pipeline_ranking(self, analysis: QueryAnalysis, depth: int, corpus: ChunkCorpus | None = None,
                         allowed: np.ndarray | None = None, facts: FileFacts = NO_FACTS,
                         path_priors: bool = True) -> tuple[list[int], list[float]]:
        """``(rows, scores)``: the chunks the ranking pipeline ranks for ``analysis``, best first.

        The native chunk index retrieves ``depth`` candidates (every matching
        chunk when ``allowed`` restricts them), :func:`codelex.rank.pipeline.rank_units`
        reranks them and adds the chunks that define what the query names.
        """
        corpus = corpus or self.corpus
        if not len(corpus):
            return [], []
        rows, scores = self.ranking(analysis.lexical, len(corpus) if allowed is not None else depth, corpus)
        if allowed is not None:
            keep = [i for i, r in enumerate(rows) if allowed[r]][:depth]
            rows, scores = [rows[i] for i in keep], [scores[i] for i in keep]
        ranked = rank_units(analysis, corpus.units, list(zip(rows, scores)),
                            allowed=None if allowed is None else (lambda r: bool(allowed[r])), facts=facts,
                            path_priors=path_priors)
        return [r for r, _ in ranked], [s for _, s in ranked]

    def ranking(self, query: str, limit: int, corpus: ChunkCorpus | None = None) -> tuple[list[int], list[float]]:
        """``(rows, scores)``: the best ``limit`` chunks of ``corpus`` for ``query``, best first (code ranking)."""
        corpus = corpus or self.corpus
        if limit <= 0 or not len(corpus):
            return [], []
        rows, scores = [], []
        for h in self.index.search(query, limit=limit, ranking="code"):
            path, j = h.file.rsplit("#", 1)
            span = corpus.file_rows.get(path)
            if span is not None and span[0] + int(j) < span[1]:
                rows.append(span[0] + int(j))
                scores.append(h.score)
        return rows, scores
