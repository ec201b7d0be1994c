"""Files for a query through the ranking pipeline: the native index's candidates, by chunk or by file.

:func:`search_files` is what :meth:`codelex.Project.search` answers with
the ``code`` ranking: the word index retrieves candidate files (the query's
inline filters and options applied, prose stop words left out), and
:func:`codelex.rank.pipeline.rank_units` reranks either the project's chunks
(a file ranks as its best chunk) or, until those are indexed, the candidate
files themselves, with the same stages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from codelex.defaults import PIPELINE_DEPTH
from codelex.lexical import Hit, WordIndex
from codelex.query.options import SearchOptions
from codelex.query.parse import parse_query
from codelex.rank.chunks import ChunkCorpus, ChunkLexicalIndex
from codelex.rank.pipeline import Units, analyze_query, rank_units

__all__ = ["search_files"]


def search_files(index: WordIndex, query: str, options: SearchOptions | None = None, *,
                 chunks: tuple[ChunkCorpus, ChunkLexicalIndex] | None = None,
                 names_of: Callable[[str], frozenset] | None = None,
                 importers: Mapping[str, int] | None = None) -> list[Hit]:
    """The best files of ``index`` for ``query``, best first (at most ``options.limit``).

    Parameters
    ----------
    index : WordIndex
        The project's word index (candidates, best lines, hit counts, fields).
    query : str
        The query, inline filters included.
    options : SearchOptions, optional
        Limit, filters and path priors; its ``centrality`` is ignored (``importers`` stands for it).
    chunks : (ChunkCorpus, ChunkLexicalIndex), optional
        The project's chunks: a file ranks as its best chunk (:attr:`Hit.score` is that chunk's).
    names_of : callable, optional
        ``names_of(path)``: the names a candidate file defines (None when unknown), for file granularity.
        Without it and without ``chunks`` the stages have too little to read (a file's definitions carry
        most of what they add): the word index's own ranking is the answer.
    importers : mapping of str to int, optional
        Importer counts (the centrality stage).

    Returns
    -------
    list of Hit
        A hit's ``start_line``, ``hits`` and ``fields`` are the word index's for that file (a file added
        for a definition the index did not rank starts at its chunk).
    """
    opts = SearchOptions.of(options, None)
    parsed = parse_query(query)
    analysis = analyze_query(parsed.terms)
    if (not analysis.tokens and not analysis.names) or (chunks is None and names_of is None):
        return index.search(query, opts)  # nothing for the stages to read: the index's answer
    filters = " ".join(("-" if f.negated else "") + f"{f.key}:{f.value}" for f in parsed.filters)
    depth = max(opts.limit, PIPELINE_DEPTH)
    native = index.search(f"{filters} {analysis.lexical}".strip(),
                          dataclasses.replace(opts, limit=depth, centrality={}))
    out: list[Hit] = []
    if chunks is not None and any(_lags(index, chunks[0], h.file) for h in native):
        # The chunks (read from disk) do not stand for a candidate as the index holds it: a file they lack,
        # or content an editor handed in without a save (mtime unknown).  Files rank by themselves.
        chunks = None
        if names_of is None:
            return index.search(query, opts)
    if chunks is not None:
        corpus, lexical = chunks
        by_file = {h.file: h for h in native}
        rows, scores = lexical.pipeline_ranking(analysis, depth, corpus, corpus.allowed(parsed.filters, opts),
                                                importers, opts.demote_test_vendor)
        seen = set()
        for row, score in zip(rows, scores):
            r = corpus.rows[row]
            if r.path in seen or r.path not in index:
                continue
            seen.add(r.path)
            found = by_file.get(r.path)
            if found is not None:
                out.append(Hit(r.path, score, found.hits, found.start_line, -1, None, found.fields))
            else:  # a definition the word index did not rank: its chunk's first line
                out.append(Hit(r.path, score, 0, r.start_line))
            if len(out) >= opts.limit:
                break
        return out
    units = Units([h.file for h in native], [names_of(h.file) for h in native], chunks=False)
    for unit, score in rank_units(analysis, units, [(i, h.score) for i, h in enumerate(native)],
                                  importers=importers, path_priors=opts.demote_test_vendor):
        h = native[unit]
        out.append(Hit(h.file, score, h.hits, h.start_line, -1, None, h.fields))
        if len(out) >= opts.limit:
            break
    return out


def _lags(index: WordIndex, corpus: ChunkCorpus, path: str) -> bool:
    """Whether the chunks do not stand for ``path`` as the index holds it: content an editor handed in
    without a save (its mtime unknown), or words the chunks lack altogether (a file they do not hold)."""
    info = index.file_info(path)
    return info.mtime_ns < 0 or (path not in corpus.file_rows and info.tokens > 0)
