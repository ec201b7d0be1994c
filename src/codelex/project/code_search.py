"""A project's code search: function-sized chunks ranked by a vector and a lexical ranking fused.

:class:`CodeSearch` is the part of :class:`codelex.Project` that answers
:meth:`~codelex.Project.code_search` and :meth:`~codelex.Project.find_related`
(validation, configuration, the embedder's choice, the vector cache).  What
can be used now (the index, the chunks, the model, the vectors) is asked of
the root's jobs (:meth:`CodeSearch._code_readiness`, a :class:`CodeReadiness`),
never found out by running a query; the chunks and vectors themselves are
kept by :class:`codelex.project.code.CodeUpkeep`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence

from codelex.defaults import DEFAULT_EMBED_LIMIT, DEFAULT_FUSION, EMBEDDER_ENV, ON_DEMAND_EMBED
from codelex.project.edits import relative_path
from codelex.project.results import HINTS, CodeResult, generation_id, pending_note
from codelex.project.search import FileSearch
from codelex.project.service import IndexService
from codelex.query.options import SearchOptions
from codelex.query.request import Request, parse_request

__all__ = ["EARLY_FILES", "CodeReadiness", "CodeSearch"]

#: find_related needs every chunk: while the first corpus is being indexed (the structure complete), it waits
#: this long for it (a small tree's takes milliseconds) before saying that the chunks are being prepared.
RELATED_SYNC_WAIT_S = 2.0

#: While a project's chunks are prepared, code_search ranks the chunks of this many of the word index's
#: best files for the query (twice its limit when that is more): a few files' analyses, not the tree's.
EARLY_FILES = 16


def _noting(result, pending: tuple[str, ...]):
    """``result`` with a provisional ranking said in its hint (``pending``: what it is not ranked with yet)."""
    if not pending:
        return result
    note = pending_note(pending)
    return dataclasses.replace(result, hint=f"{result.hint} {note}" if result.hint else note)


def _within_budget(result, total_lines: int | None, generation: str | None = None) -> CodeResult:
    """``result``, whose hits were picked with no shared line budget, cut to ``total_lines`` as the original's
    selection cuts them (:func:`codelex.rank.original.fit_budget`), saying how many results the budget left out.

    Picking first and cutting after is what lets the answer count what the budget left out: the seed's
    ``select_from`` stops at the budget and cannot tell.  The hits are the seed's either way.
    """
    from codelex.rank.original import fit_budget

    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    fields["generation"] = generation  # (the generation the answer followed: CodeReadiness.generation)
    if total_lines is None:
        return CodeResult(**fields)
    fields["hits"], fields["omitted"] = fit_budget(result.hits, total_lines)
    fields["line_budget"] = total_lines
    return CodeResult(**fields)


def _capped_out(ready, embed_limit: int) -> bool:
    """Whether the cap has been reached: nothing more will be embedded, whatever runs in the background."""
    return ready.chunks > embed_limit and ready.embedded >= embed_limit


def _unbounded(limit: int, excerpt_lines: int) -> int:
    """A shared budget that never binds: ``limit`` excerpts of at most ``excerpt_lines`` lines each fit in it."""
    return limit * excerpt_lines


def _unavailable(query: str, why: str | None) -> CodeResult:
    return CodeResult(query, [], 0.0, 0.0, "unavailable", 0, 0, False, why)


def _check_arguments(query, alternatives, **counts: int) -> None:
    if not isinstance(query, str):
        raise TypeError(f"query must be str, not {type(query).__name__}")
    if isinstance(alternatives, str) or not all(isinstance(a, str) for a in alternatives):
        raise TypeError("alternatives must be a sequence of str")
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")


def _allowed(corpus, opts: SearchOptions):
    """The rows of ``corpus`` whose file the request's ``paths`` and ``lang`` admit (None: every row)."""
    if not opts.filters_paths:
        return None
    import numpy as np

    from codelex.kinds import kind_of

    pred = opts.paths_predicate
    return np.array([(pred is None or pred(r.path)) and (opts.lang is None or kind_of(r.path) == opts.lang)
                     for r in corpus.rows], dtype=bool)


@dataclasses.dataclass
class CodeReadiness:
    """What a code search can use now, as the root's jobs say: no index (``index`` None, ``hint`` says why),
    the chunks being prepared (``preparing`` says why, ``loading`` how the model is), or a ``searcher`` over
    ``corpus`` with the embedder ``chosen`` (None: lexical), ``saved`` vectors counted without a model, and the
    ``hint`` an answer carries."""

    index: object = None
    hint: str | None = None
    upkeep: object = None  # the structure upkeep
    preparing: str | None = None
    loading: str | None = None
    corpus: object = None
    chosen: object = None
    saved: int | None = None
    searcher: object = None
    number: int = 0  # the index's publication number (its generation's first part)

    @property
    def generation(self) -> str:
        """The id of the word index's generation the chunks follow, and of the vectors when they rank too."""
        base = generation_id(self.number, self.index.edits)
        return f"{base}+v{self.embedded}" if self.searcher is not None and self.mode == "hybrid" else base

    @property
    def mode(self) -> str:
        return "hybrid" if self.searcher.complete else "lexical"

    @property
    def chunks(self) -> int:
        return len(self.corpus)

    @property
    def embedded(self) -> int:
        if self.chosen is None and self.saved is not None:
            return self.saved
        return int(self.searcher.present.sum())

    @property
    def preparing_hint(self) -> str:
        hint = f"the chunks of this project are being prepared in the background ({self.preparing})"
        return f"{hint}; {self.loading}" if self.loading else hint

    def annotated(self, result):
        """``result`` (the searcher's) with the vectors counted without a model and this readiness's hint."""
        if self.chosen is None and self.saved is not None:
            result = dataclasses.replace(result, embedded=self.saved)
        return dataclasses.replace(result, hint=self.hint) if self.hint is not None else result


class CodeSearch:
    """Code search and related chunks of one root, through its :class:`IndexService`; the facts the ranking
    pipeline reads of the files are ``files``' (:meth:`FileSearch.ranking_facts`)."""

    def __init__(self, service: IndexService, files: FileSearch) -> None:
        self.service = service
        self.root = service.root
        self.ranking_facts = files.ranking_facts

    def _embedder(self, embedder, config: dict, *, wait: bool = True, then=None):
        """``(embedder or None, hint)``: the one asked for, else the user's (``$CODELEX_EMBEDDER``), else the
        project's configured one (a named model only), else the default.

        Without ``wait`` a model not loaded yet loads in the background (then ``then(embedder)``): None
        and a hint until it has.
        """
        from codelex.errors import EmbedderError

        if embedder is False:
            return None, None
        spec = self._spec(embedder, config)
        try:
            found = self.service.chunks.embedder(spec, wait=wait, then=then)
        except EmbedderError as exc:
            if spec is not None:
                raise  # asked for by name: a clear error
            return None, f"lexical ranking only: {exc}"
        if found is None:
            return None, "loading the embedding model in the background; lexical ranking until it has embedded " \
                         "every chunk"
        return found, None

    def _spec(self, embedder, config: dict):
        """The embedder asked for, else the user's (``$CODELEX_EMBEDDER``), else the project's, else None
        (the default)."""
        return embedder if embedder is not None else os.environ.get(EMBEDDER_ENV) or config.get("embedder")

    def _embedder_loaded(self, embedder, config: dict) -> bool:
        """Whether the embedder :meth:`_embedder` would give is at hand without loading anything."""
        code = self.service.chunks
        spec = self._spec(embedder, config)
        if not (spec is None or isinstance(spec, str)):
            return True  # an embedder object
        with code.lock:
            return spec in code.embedders

    def _saved_vectors(self, embedder, config: dict, corpus) -> tuple[int | None, str | None]:
        """``(chunks of corpus with a saved vector, None)`` for the embedder :meth:`_embedder` would give,
        without loading its model; ``(None, hint)`` when the default one cannot be used (the hint says why).

        Raises
        ------
        codelex.EmbedderError
            When an embedder asked for by name cannot be used.
        """
        from codelex.errors import EmbedderError

        spec = self._spec(embedder, config)
        try:
            return self.service.chunks.saved_vectors(spec, corpus), None
        except EmbedderError as exc:
            if spec is not None:
                raise  # asked for by name: a clear error
            return None, f"lexical ranking only: {exc}"

    def code_search(self, query: str, *, alternatives: Sequence[str] = (), limit: int = 8, per_file: int = 2,
                    excerpt_lines: int = 80, total_lines: int = 400, fusion: str | None = None,
                    embedder=None, paths=None, lang: str | None = None, wait: bool = False,
                    progress: Callable[[int, int], object] | None = None, background: bool = True):
        """Function-sized chunks for ``query``: a vector and a lexical ranking fused by rank.

        Parameters
        ----------
        query : str
        alternatives : sequence of str
            Other phrasings of the query (from the caller; codelex calls no
            language model): each is ranked, and the orders fused by
            :func:`codelex.hybrid.fuse_rankings`.
        limit, per_file, excerpt_lines, total_lines : int
            The original's selection: results, chunks per file, lines per
            excerpt, lines in all (allocated by rank).
        fusion : {"adaptive", "shape", "original"}, optional
            ``shape`` (default): weights by query shape over each ranking's
            top 100; ``original``: the seed's 0.7 / 0.3 over every chunk.
        embedder : str, Embedder or False, optional
            Default: the project configuration's, else all-MiniLM-L6-v2;
            False: the lexical ranking only.
        paths, lang
            As :meth:`search`.
        wait : bool, default False
            Wait for the structure and embed every chunk first (a first call
            on a large tree takes minutes); otherwise the answer is
            immediate, lexical until the vectors are complete
            (``mode``, ``embedded`` and ``chunks`` say how far they are).
            While the chunks of every file are being prepared (after an
            open, the structure is analyzed in the background), it ranks the
            chunks of the files the word index ranks best, and says so.
        progress : callable, optional
            ``progress(embedded, to_embed)`` while embedding with ``wait``.
        background : bool, default True
            Without ``wait``: load the model and embed the missing chunks
            on background threads (for a long-running caller); until the
            model has loaded, the answer is lexical and says how many chunks
            have a saved vector.  False starts no work that the call does
            not finish, for a caller about to exit (a thread inside a model
            when the interpreter finalizes aborts the process): the model
            loads (in the call) only when every chunk has a vector, to embed
            the query; otherwise the answer is lexical, says how many chunks
            have one, and no model is loaded.

        Returns
        -------
        codelex.project.CodeResult
            A :class:`codelex.hybrid.HybridResult` that also says how many
            results the ``total_lines`` budget left out (``omitted``; 0 when
            it cut nothing).

        Raises
        ------
        TypeError
            For arguments of the wrong type.
        codelex.QueryError
            For an unknown ``lang``.
        codelex.EmbedderError
            When the embedder asked for is missing or returns bad vectors.
        """
        _check_arguments(query, alternatives, limit=limit, per_file=per_file, excerpt_lines=excerpt_lines,
                         total_lines=total_lines)
        opts = SearchOptions(paths=paths, lang=lang)
        request, *others = [parse_request(q, opts) for q in (query, *alternatives)]  # parsed once, checked now
        config, fusion = self._code_config(fusion)
        ready = self._code_readiness(embedder, config, wait=wait, background=background, progress=progress)
        if ready.index is None:
            return _unavailable(query, ready.hint)
        how = dict(fusion=fusion, limit=limit, per_file=per_file, excerpt_lines=excerpt_lines,
                   total_lines=_unbounded(limit, excerpt_lines))
        if ready.preparing is not None:
            early = self._early_code_search(ready, request, others, **how)
            return _within_budget(early, total_lines, ready.generation)
        if self._provisional_wanted(ready, background=background, wait=wait):
            return self._provisional_code_search(ready, request, others, opts, budget=total_lines, **how)
        # Picked with no shared budget, then cut to it (_within_budget): the same hits, and the count of those
        # the budget left out.
        facts, pending = self._code_facts(ready.index)
        result = ready.searcher.search(request, alternatives=others, allowed=_allowed(ready.corpus, opts),
                                       facts=facts, **how)
        return _within_budget(_noting(ready.annotated(result), pending), total_lines, ready.generation)

    def _provisional_wanted(self, ready: CodeReadiness, *, background: bool, wait: bool) -> bool:
        """Whether to answer with a provisional hybrid ranking: a long-running caller whose model is loaded while
        the background pass has not embedded every chunk it will (not one capped out, nor a failed pass)."""
        code = self.service.chunks
        return (background and not wait and ready.chosen is not None and ready.mode == "lexical"
                and not code.embed_error and not _capped_out(ready, code.embed_limit))

    def _provisional_code_search(self, ready: CodeReadiness, request: Request, others: list[Request],
                                 opts: SearchOptions, *, budget: int, **how):
        """A hybrid answer before the vectors of every chunk are there: the chunks the lexical ranking puts in
        contention are embedded now (kept, so that the background pass and later queries reuse them), and the
        vector ranking runs over the chunks that have a vector.  It says it is provisional (``mode``)."""
        code = self.service.chunks
        corpus = ready.corpus
        directory = self.service.writable_dir()
        facts, pending = self._code_facts(ready.index)
        allowed = _allowed(corpus, opts)
        # (ON_DEMAND_EMBED in all, shared among the phrasings: alternatives never make the wait longer)
        depth = max(ON_DEMAND_EMBED // (1 + len(others)), ON_DEMAND_EMBED // 4)
        rows = ready.searcher.contention(request, alternatives=others, depth=depth, allowed=allowed, facts=facts)
        fresh = code.embed_rows(ready.chosen, directory, corpus, rows)
        searcher = code.partial_searcher(ready.chosen, directory)
        result = searcher.search(request, alternatives=others, allowed=allowed, facts=facts, **how)
        embedded = int(searcher.present.sum())
        hint = (f"provisional hybrid answer: vectors for {embedded:,} of {len(corpus):,} chunks (the lexical "
                f"ranking's best {len(rows)} embedded on demand, {fresh} of them now); the rest are embedded in "
                "the background, and answers become final once every chunk has a vector")
        result = _noting(dataclasses.replace(result, mode="provisional", hint=hint), pending)
        generation = f"{generation_id(ready.number, ready.index.edits)}+p{embedded}"
        return _within_budget(result, budget, generation)

    def _code_facts(self, index):
        """``(facts, pending)``: what the ranking pipeline reads of the project's files for chunks, as for files
        (the import graph's counts, translations: see :meth:`~codelex.project.search.FileSearch.ranking_facts`),
        and what of it is not known for the index's files yet."""
        prior, exact = self.service.graph_prior(self.service.import_graph)
        return self.ranking_facts(index, prior), () if exact else ("import graph",)

    def _code_config(self, fusion: str | None) -> tuple[dict, str]:
        """The configuration followed and read, and the fusion asked for, else configured (ValueError: unknown)."""
        from codelex.project.config import load_config
        from codelex.rank import FUSIONS

        self.service.follow_config(start=True)
        config = load_config(self.root)
        fusion = fusion or config.get("fusion", DEFAULT_FUSION)
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")
        return config, fusion

    def _code_readiness(self, embedder, config: dict, *, wait: bool, background: bool,
                        progress: Callable[[int, int], object] | None) -> CodeReadiness:
        """What a code search can use now; with ``wait``, once the index, the structure and every vector are there
        (see :meth:`code_search` for ``background``)."""
        service = self.service
        if wait and service.status in ("idle", "building"):
            service.open(wait=True)
        index, number = service.published()
        if index is None:
            why, reason, start = service.availability()
            if start:  # starts a build, or adopts a saved index at once (then answers from it)
                service.open(wait=False)
            index, number = service.published()
            if index is None:
                return CodeReadiness(hint=HINTS[why].format(reason=reason))
        upkeep, code = service.structure, service.chunks
        upkeep.load(service.structure_dir())
        if wait:
            upkeep.wait()
        analyzing = not wait and upkeep.status == "building"
        code.embed_limit = config.get("embed_limit", DEFAULT_EMBED_LIMIT)
        if code.corpus is None and not wait:
            # The first corpus reads every file and indexes every chunk (seconds on a large tree): in the
            # background, as the other builds; later syncs touch only what changed.
            preparing = "its structure is being analyzed" if analyzing else None
            if preparing is None and code.start_first_sync(lambda: index.files, *code.sources(upkeep, index)):
                preparing = "its chunks are being indexed"
            if preparing is not None:
                loading = self._embedder(embedder, config, wait=False, then=self._embed_later)[1] \
                    if background else None  # the model loads meanwhile
                return CodeReadiness(index, upkeep=upkeep, preparing=preparing, loading=loading, number=number)
        # While the structure is refreshed, the corpus it had answers (a sync now would read it half-done).
        corpus = code.corpus if analyzing else code.sync_with(upkeep, index)
        ready = CodeReadiness(index, upkeep=upkeep, corpus=corpus, number=number)
        return self._vector_readiness(ready, embedder, config, wait=wait, background=background, progress=progress)

    def _embed_later(self, chosen) -> None:
        """Once a model loaded in the background: embed what it has not."""
        self.service.chunks.start_embedding(chosen, self.service.writable_dir())

    def _vector_readiness(self, ready: CodeReadiness, embedder, config: dict, *, wait: bool, background: bool,
                          progress) -> CodeReadiness:
        """``ready`` with its embedder, saved vectors, searcher and hint; the embedding started when it should."""
        corpus = ready.corpus
        code = self.service.chunks
        saved, hint = None, None  # (chunks with a saved vector, counted without loading the model)
        if embedder is not False and not wait and (not background or not self._embedder_loaded(embedder, config)):
            # A caller that will not wait needs the model only to embed the query, and only once every chunk has
            # a vector: until then a one-shot caller never loads it (seconds, and native threads that must not
            # outlive the process), and a long-running one loads it in the background; both say how far it is.
            saved, hint = self._saved_vectors(embedder, config, corpus)
        if saved is not None and not background and (saved < min(len(corpus), code.embed_limit) or not len(corpus)):
            chosen = None
            hint = f"vectors: {saved:,} of {len(corpus):,} chunks embedded; lexical answer"
        elif saved is None and hint is not None:
            chosen = None  # the default embedder is not usable: the hint says why
        else:
            chosen, hint = self._embedder(embedder, config, wait=wait or not background, then=self._embed_later)
            if chosen is None and saved is not None and hint is not None:
                hint = (f"loading the embedding model in the background; vectors: {saved:,} of {len(corpus):,} "
                        "chunks embedded; lexical answer until every one is")
        directory = self.service.writable_dir() if chosen is not None else None
        if chosen is not None:
            cache = code.cache(chosen, directory)
            if code.unembedded(cache, corpus) and (wait or background):
                code.start_embedding(chosen, directory, wait=wait, progress=progress if wait else None)
        ready.chosen, ready.saved, ready.searcher = chosen, saved, code.searcher(chosen, directory)
        ready.hint = self._vector_hint(ready, hint, wait=wait, background=background)
        return ready

    def _vector_hint(self, ready: CodeReadiness, hint: str | None, *, wait: bool, background: bool) -> str | None:
        """What an answer says of its vectors: how far the embedding is, or how much the cap leaves out."""
        code = self.service.chunks
        if ready.mode == "lexical" and _capped_out(ready, code.embed_limit) and not code.embed_error:
            # Nothing more will be embedded: the cap, not a background run, is why the answer is lexical.
            return (f"vectors cover {ready.embedded:,} of {ready.chunks:,} chunks (embed_limit {code.embed_limit:,}); "
                    "lexical answer: set embed_limit in .codelex.toml to embed more")
        if ready.chosen is not None and ready.mode == "lexical":
            if not background and not wait:  # (a model given as an object: nothing was loaded for it)
                hint = code.embed_error or (f"vectors: {ready.embedded:,} of {ready.chunks:,} chunks embedded; "
                                            "lexical answer")
            else:
                hint = code.embed_error or (f"embedding in the background: {ready.embedded:,} of "
                                            f"{ready.chunks:,} chunks; lexical ranking until complete")
        if hint is None and ready.mode == "hybrid" and ready.embedded < ready.chunks:
            hint = (f"vectors cover {ready.embedded:,} of {ready.chunks:,} chunks (embed_limit {code.embed_limit:,}, "
                    "source files first); set embed_limit in .codelex.toml to embed more")
        return hint

    def _early_code_search(self, ready: CodeReadiness, request: Request, others: list[Request], **how):
        """A lexical answer while the corpus is prepared: the chunks of the files the word index ranks best."""
        from codelex.structure import analyze
        from codelex.structure.pool import content_hash

        upkeep = ready.upkeep
        store = upkeep.index

        def structure_for(path: str, content: bytes):
            # The stored structure when it is of this content; else the file is analyzed now (the
            # background analysis may not have reached it).
            info = store.file_info(path) if store is not None else None
            if info is not None and path not in upkeep.stale and info[0] == content_hash(content):
                return store.get(path)
            return analyze(path, content)

        wanted = min(max(EARLY_FILES, 2 * how["limit"]), 100)
        paths = [h.file for r in (request, *others) for h in ready.index.search(r.derive(limit=wanted))]
        searcher = self.service.chunks.provisional(paths, structure_for)
        facts, pending = self._code_facts(ready.index)
        result = _noting(searcher.search(request, alternatives=others, facts=facts, **how), pending)
        hint = (f"the chunks of this project are being prepared in the background ({ready.preparing}): a lexical "
                f"ranking of the chunks of the {len(searcher.corpus.file_rows)} best-matching files until then")
        if ready.loading:
            hint += f"; {ready.loading}"
        return dataclasses.replace(result, embedded=0, hint=hint)

    def prepare_code_search(self) -> None:
        """Wait for the word index and the structure, and build the chunk corpus now (not the vectors).

        A one-shot caller (the CLI) uses it; a long-running one lets
        :meth:`code_search` prepare everything in the background.
        """
        config, _ = self._code_config(None)
        service = self.service
        if service.status in ("idle", "building"):
            service.open(wait=True)
        service.structure.wait()
        service.chunks.wait_first_sync()
        index = service.index
        if index is None:
            return
        upkeep = service.structure
        upkeep.load(service.structure_dir())
        upkeep.wait()
        service.chunks.embed_limit = config.get("embed_limit", DEFAULT_EMBED_LIMIT)
        service.chunks.sync_with(upkeep, index)  # builds the corpus here

    def embedding_status(self) -> dict:
        """``{embedded, chunks, running, error}`` of the background embedding of this project's chunks."""
        return self.service.chunks.embedding_status()

    def wait_embeddings(self, timeout: float | None = None) -> bool:
        """Wait for the background embedding; True when none is running (any more)."""
        return self.service.chunks.wait_embedding(timeout)

    def find_related(self, path: str | os.PathLike[str], line: int, *, limit: int = 8, same_language: bool = True,
                     embedder=None, wait: bool = False, background: bool = True,
                     progress: Callable[[int, int], object] | None = None):
        """The chunks nearest in vector space to the chunk at ``path``:``line`` (that chunk left out).

        ``embedder``, ``wait``, ``background`` and ``progress`` are :meth:`code_search`'s.

        Returns
        -------
        codelex.project.CodeResult
            ``mode`` is ``lexical`` until every chunk is embedded: the
            chunks sharing the most telling identifiers with it
            (:func:`codelex.rank.hybrid.related_query`), with a hint saying
            how much is embedded; ``unavailable`` while the chunks are being
            prepared.  There is no shared line budget (``line_budget`` is
            None): each excerpt is cut to 80 lines.

        Raises
        ------
        FileNotFoundError, ValueError
            For a file outside the root or not indexed, or a line it does not have.
        """
        from codelex.kinds import kind_of

        if isinstance(line, bool) or not isinstance(line, int):
            raise TypeError(f"line must be an int, not {type(line).__name__}")
        rel = relative_path(self.root, path)
        config, _ = self._code_config(None)
        ready = self._code_readiness(embedder, config, wait=wait, background=background, progress=progress)
        if ready.preparing is not None and self.service.chunks.wait_first_sync(RELATED_SYNC_WAIT_S):
            ready = self._code_readiness(embedder, config, wait=wait, background=background, progress=progress)
        if ready.index is None:
            return _unavailable(rel, ready.hint)
        if ready.preparing is not None:  # the chunks are being prepared
            return CodeResult(f"{rel}:{line}", [], 0.0, 0.0, "unavailable", 0, 0, False, ready.preparing_hint)
        corpus = ready.corpus
        if rel not in corpus.file_rows:
            raise FileNotFoundError(f"not an indexed file of {self.root}: {rel}")
        row = corpus.row_at(rel, line)
        if row is None:
            raise ValueError(f"{rel} has no chunk at line {line}")
        how = dict(limit=limit, same_language=same_language, language_of=kind_of)
        if ready.mode != "hybrid":
            # Until the vectors are there: the chunks sharing its most telling identifiers, said so.
            found = self.service.chunks.searcher(None, None).related_lexical(row, **how)
            why = ready.hint or "the chunks are not embedded yet"
            return _related(ready, corpus, f"{rel}:{line}", found, False,
                            f"related by shared identifiers until the vectors are there ({why})")
        return _related(ready, corpus, f"{rel}:{line}", ready.searcher.related(row, **how), True, ready.hint)


def _related(ready: CodeReadiness, corpus, where: str, found, vector: bool, hint=None) -> CodeResult:
    """find_related's answer: the chunks ``found`` (``(row, score)``), by vector or by shared identifiers."""
    from codelex.rank import HybridHit
    from codelex.rank.original import excerpt_of

    hits = []
    for r, score in found:
        c = corpus.rows[r]
        excerpt, truncated = excerpt_of(c.text, 80)
        hits.append(HybridHit(c.path, c.symbol, c.start_line, c.end_line, excerpt, truncated,
                              score if vector else 0.0, None, None))
    best = found[0][1] if found else 0.0
    return CodeResult(where, hits, best if vector else 0.0, 0.0 if vector else best,
                      "hybrid" if vector else "lexical", ready.embedded, ready.chunks, hint=hint)
