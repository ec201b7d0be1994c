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

from collections.abc import Callable

from codelex.defaults import PIPELINE_DEPTH, PIPELINE_JOIN_DEPTH
from codelex.lexical import Hit, WordIndex
from codelex.query.request import Request, parse_request
from codelex.rank.pipeline import NO_FACTS, FileFacts, QueryAnalysis, Units, analyze_query, enabled, rank_units

__all__ = ["search_files"]


def search_files(index: WordIndex, request: Request | str, *,
                 names_of: Callable[[str], frozenset | None] | None = None,
                 facts: FileFacts = NO_FACTS) -> list[Hit]:
    """The best files of ``index`` for ``query``, best first (at most ``options.limit``).

    Parameters
    ----------
    index : WordIndex
        The project's word index (candidates, best lines, hit counts, fields).
    request : Request or str
        The query, parsed once (:func:`codelex.query.parse_request`; a str is parsed here), with its options:
        limit, filters and path priors (the options' ``centrality`` is ignored: ``facts.importers`` stands
        for it).
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
    request = parse_request(request)  # (a Request as it is)
    opts = request.options
    analysis = analyze_query(request.terms)
    if (not analysis.tokens and not analysis.names) or names_of is None:
        return index.search(request)  # nothing for the stages to read: the index's answer
    candidates = request.derive(analysis.lexical, limit=max(opts.limit, PIPELINE_DEPTH), centrality={})
    native = index.search(candidates)
    joined = _definers(index, analysis, candidates, names_of, {h.file for h in native}) \
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


def _definers(index: WordIndex, analysis: QueryAnalysis, candidates: Request,
              names_of: Callable[[str], frozenset | None], seen: set[str]) -> list[Hit]:
    """Files that define a name the query names but that the index did not retrieve for the whole query (the
    name is rare in their text, or the question's other words are not): each name asked of the index alone
    (whose code ranking puts its definitions first), the first :data:`PIPELINE_JOIN_DEPTH` files checked."""
    wanted = list(analysis.names) + [w for w in analysis.capitalized if w not in analysis.names]
    if analysis.kind == "symbol" or not wanted:
        return []  # (a symbol query's definitions are the index's own first answers)
    out = []
    for name in wanted[:4]:
        found = index.search(candidates.derive(name, limit=PIPELINE_JOIN_DEPTH))
        for h in found:
            if h.file not in seen and name in (names_of(h.file) or ()):
                seen.add(h.file)
                out.append(h)
    return out
