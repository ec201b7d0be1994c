"""Files for a query through the ranking pipeline: the native index's candidates, reranked by file.

:func:`search_files` is what :meth:`codelex.Project.search` answers with
the ``code`` ranking: the word index retrieves candidate files (the query's
inline filters and options applied, prose stop words left out), the files
that define a name the query names join them, and
:func:`codelex.rank.pipeline.rank_units` reranks them with what the project
knows of each file: the names it defines, its path, the import graph's
counts, which documents are translations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from codelex.defaults import PIPELINE_DEPTH, PIPELINE_JOIN_DEPTH
from codelex.lexical import Hit, WordIndex
from codelex.query.options import SearchOptions
from codelex.query.parse import parse_query
from codelex.rank.pipeline import NO_FACTS, FileFacts, QueryAnalysis, Units, analyze_query, enabled, rank_units

__all__ = ["search_files"]


def search_files(index: WordIndex, query: str, options: SearchOptions | None = None, *,
                 names_of: Callable[[str], frozenset | None] | None = None,
                 facts: FileFacts = NO_FACTS) -> list[Hit]:
    """The best files of ``index`` for ``query``, best first (at most ``options.limit``).

    Parameters
    ----------
    index : WordIndex
        The project's word index (candidates, best lines, hit counts, fields).
    query : str
        The query, inline filters included.
    options : SearchOptions, optional
        Limit, filters and path priors; its ``centrality`` is ignored (``facts.importers`` stands for it).
    names_of : callable, optional
        ``names_of(path)``: the names a file defines (None when unknown).  Without it the stages have too
        little to read (a file's definitions carry most of what they add): the word index's own ranking is
        the answer.
    facts : FileFacts, optional
        What the project knows of its files: importer counts (centrality), translated documents.

    Returns
    -------
    list of Hit
        A hit's ``start_line``, ``hits`` and ``fields`` are the word index's for that file (for a file that
        joined for a definition the index did not rank for the query itself, those of its definition).
    """
    opts = SearchOptions.of(options, None)
    parsed = parse_query(query)
    analysis = analyze_query(parsed.terms)
    if (not analysis.tokens and not analysis.names) or names_of is None:
        return index.search(query, opts)  # nothing for the stages to read: the index's answer
    filters = " ".join(("-" if f.negated else "") + f"{f.key}:{f.value}" for f in parsed.filters)
    candidates = dataclasses.replace(opts, limit=max(opts.limit, PIPELINE_DEPTH), centrality={})
    native = index.search(f"{filters} {analysis.lexical}".strip(), candidates)
    joined = _definers(index, analysis, filters, candidates, names_of, {h.file for h in native}) \
        if enabled("definitions") and enabled("definers") else []
    hits = native + joined
    units = Units([h.file for h in hits], [names_of(h.file) for h in hits], chunks=False)
    out: list[Hit] = []
    for unit, score in rank_units(analysis, units, [(i, h.score) for i, h in enumerate(native)], facts=facts,
                                  path_priors=opts.demote_test_vendor):
        h = hits[unit]
        out.append(Hit(h.file, score, h.hits, h.start_line, -1, None, h.fields))
        if len(out) >= opts.limit:
            break
    return out


def _definers(index: WordIndex, analysis: QueryAnalysis, filters: str, options: SearchOptions,
              names_of: Callable[[str], frozenset | None], seen: set[str]) -> list[Hit]:
    """Files that define a name the query names but that the index did not retrieve for the whole query (the
    name is rare in their text, or the question's other words are not): each name asked of the index alone
    (whose code ranking puts its definitions first), the first :data:`PIPELINE_JOIN_DEPTH` files checked."""
    wanted = list(analysis.names) + [w for w in analysis.capitalized if w not in analysis.names]
    if analysis.kind == "symbol" or not wanted:
        return []  # (a symbol query's definitions are the index's own first answers)
    out = []
    for name in wanted[:4]:
        found = index.search(f"{filters} {name}".strip(), dataclasses.replace(options, limit=PIPELINE_JOIN_DEPTH))
        for h in found:
            if h.file not in seen and name in (names_of(h.file) or ()):
                seen.add(h.file)
                out.append(h)
    return out
