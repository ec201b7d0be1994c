"""The ranking pipeline: candidates from the native index, reranked by named stages, then selected.

Both ``search`` (files) and ``code`` (chunks) rank through here.  The
native index (:mod:`codelex.lexical`) retrieves candidates, exact and fast;
the stages below then add evidence the index cannot see, in units of the
best candidate's lexical evidence, and multiply by what a path says:

=================  ========================================================
``prose_words``    A prose question's words that name nothing in code (how,
                   are, the...) are not asked of the index
                   (:data:`~codelex.defaults.PROSE_STOPWORDS`); identifiers
                   and single-identifier queries keep every word.
``definitions``    A unit that defines the name the query names (a symbol
                   query, or an identifier inside a question: ``CamelCase``,
                   ``snake_case``, ``a::b``, a capitalised word the project
                   defines) gains; units that define it join the candidates.
``definers``       At file granularity, the files the index ranks first for
                   each such name alone join the candidates when they define
                   it (:func:`codelex.rank.search.search_files`).
``name_cover``     A unit that defines a name made of every word of a prose
                   query (``read varint`` and ``ReadVarint``) gains.
``path_words``     A prose query's words in the file's name or directory (an
                   exact name, or one made of adjacent query words, counts
                   more).
``centrality``     A file many others import gains (its importer count, on a
                   log scale, against the most imported file's).
``coherence``      A file's best chunk gains by its other matching chunks
                   (chunks only).
``path_kinds``     Test files, re-export hubs, compat/legacy copies,
                   declaration stubs and internal directories lose
                   (:func:`codelex.lexical.priors.path_kind_factor`).
``auxiliary``      Examples, samples, demos, benchmarks and documentation
                   snippets lose (:func:`~codelex.lexical.priors.auxiliary_factor`).
``prose_files``    Prose documentation (the registry's prose kinds) loses:
                   a code question's answer is the code it describes.
``translations``   A document in a translation's other language than the
                   project's main one loses more (:mod:`codelex.locales`).
``shadowing``      A file that shares its name with one in an ancestor
                   directory (a vendored or versioned copy) loses.
``near_copies``    A file that is a near-copy of one ranked above it (the
                   same text, give or take a few lines:
                   :mod:`codelex.rank.copies`) loses (files only).
``saturation``     Each further chunk of an already ranked file counts half
                   again less (chunks only).
=================  ========================================================

A file's rank is its best chunk's when the project's chunks are at hand
(:meth:`codelex.Project.search`), so the files and the chunks of one query
come from the same evidence; until they are, files rank through the same
stages at file granularity.  :data:`STAGES` names the stages;
:func:`stages_off` switches some off (ablations and tests).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import math
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from codelex.defaults import (
    PIPELINE_CENTRALITY,
    PIPELINE_COHERENCE,
    PIPELINE_COPY,
    PIPELINE_COPY_DEPTH,
    PIPELINE_DEF_STEM,
    PIPELINE_DEFINITION,
    PIPELINE_EMBEDDED_SHARE,
    PIPELINE_NAME_COVER,
    PIPELINE_NAME_ORDER_DECAY,
    PIPELINE_PATH_WORDS,
    PIPELINE_PROSE,
    PIPELINE_RANK_SHARE,
    PIPELINE_SATURATION,
    PIPELINE_SHADOWED,
    PIPELINE_TRANSLATION,
    PROSE_STOPWORDS,
    RRF_K,
)
from codelex.languages import is_prose
from codelex.lexical.priors import auxiliary_factor, path_kind_factor
from codelex.text import split_identifier
from codelex.text.tokenize import tokenize_line

__all__ = ["PATH_FACTOR_STAGES", "STAGES", "FileFacts", "QueryAnalysis", "Units", "analyze_query", "enabled", "path_factor", "rank_units",
           "stages_off"]

#: The stages, in the order they apply.
STAGES = ("prose_words", "definitions", "definers", "name_cover", "path_words", "centrality", "coherence",
          "path_kinds", "auxiliary", "prose_files", "translations", "shadowing", "near_copies", "saturation")

_off_lock = threading.Lock()
_off: frozenset[str] = frozenset()


def enabled(stage: str) -> bool:
    """Whether ``stage`` runs (every stage does unless :func:`stages_off` is in effect)."""
    return stage not in _off


@contextlib.contextmanager
def stages_off(*names: str) -> Iterator[None]:
    """Switch the named stages off for the duration (process-wide: for ablations and tests)."""
    global _off
    unknown = set(names) - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stage(s) {sorted(unknown)}; the stages are {', '.join(STAGES)}")
    with _off_lock:
        before = _off
        _off = before | frozenset(names)
    try:
        yield
    finally:
        with _off_lock:
            _off = before


# --- the query ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One identifier-like term: qualified (a::b, a.b, a->b), with an underscore, an inner or a leading capital.
_SYMBOL = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\\|->|\.)[A-Za-z_][A-Za-z0-9_]*)+|_[A-Za-z0-9_]*"
                     r"|[A-Za-z][A-Za-z0-9]*[A-Z_][A-Za-z0-9_]*|[A-Z][A-Za-z0-9]*)$")
# Identifiers inside a question: PascalCase with an inner capital, camelCase, snake_case, CONSTANT_CASE.
_EMBEDDED = re.compile(r"\b(?:[A-Z][a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*|[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]+"
                       r"|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b")
_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|->)[A-Za-z_][A-Za-z0-9_]*)+")
_SEPARATORS = re.compile(r"::|\\|->|\.")


@dataclass(frozen=True)
class QueryAnalysis:
    """What a query is (:func:`analyze_query`).

    Attributes
    ----------
    terms : str
        The query's words, its inline filters left out.
    kind : str
        ``symbol`` (one identifier-like term) or ``prose``.
    lexical : str
        What the native index is asked: ``terms`` without the prose stop words.
    names : tuple of str
        The identifiers the query names, in its order (a qualified one also by its last part).
    positions : dict of str to int
        Each word's first position in the query (a later-named identifier weighs less).
    capitalized : tuple of str
        A prose query's capitalised words: names when the project defines them.
    keywords : frozenset of str
        A prose query's content words, lower-cased (three letters or more).
    compounds : frozenset of str
        Two and three adjacent content words run together (``tostring builder`` -> ``tostringbuilder``).
    tokens : frozenset of str
        The index tokens of ``lexical``.
    """

    terms: str
    kind: str
    lexical: str
    names: tuple[str, ...]
    positions: Mapping[str, int]
    capitalized: tuple[str, ...]
    keywords: frozenset[str]
    compounds: frozenset[str]
    tokens: frozenset[str]


def _last_part(name: str) -> str:
    return _SEPARATORS.split(name)[-1]


#: Longer terms are no identifier (and a regex over them could take quadratic time).
_MAX_TERM = 256


def analyze_query(terms: str) -> QueryAnalysis:
    """Classify ``terms`` (a query without its inline filters) and pull out the evidence the stages use."""
    q = terms.strip()
    if len(q) <= _MAX_TERM and _SYMBOL.match(q):
        last = _last_part(q)
        names = (last, q) if last != q else (q,)
        return QueryAnalysis(q, "symbol", q, names, {}, (), frozenset(), frozenset(), frozenset(tokenize_line(q)))
    words = _WORD.findall(q)
    drop = enabled("prose_words")
    kept = [w for w in words if not (drop and w.islower() and w in PROSE_STOPWORDS)]
    lexical = " ".join(kept) if kept else q
    names: list[str] = []
    for term in q.split():
        if len(term) > _MAX_TERM:
            continue
        for found in _QUALIFIED.findall(term):
            names.append(_last_part(found))
        names += _EMBEDDED.findall(term)
    ordered = list(dict.fromkeys(names))  # (first mention first)
    position = {w: i for i, w in reversed(list(enumerate(words)))}
    ordered.sort(key=lambda n: position.get(n, len(words)))
    capitalized = tuple(dict.fromkeys(w for w in words if w[:1].isupper()))
    content = [w.lower() for w in words if w.lower() not in PROSE_STOPWORDS]
    keywords = frozenset(w for w in content if len(w) > 2)
    stemmed = [_word_stem(w) for w in content]
    compounds = frozenset([a + b for a, b in zip(content, content[1:])]
                          + [a + b + c for a, b, c in zip(content, content[1:], content[2:])]
                          + [a + b for a, b in zip(stemmed, stemmed[1:])]
                          + [a + b + c for a, b, c in zip(stemmed, stemmed[1:], stemmed[2:])])
    return QueryAnalysis(q, "prose", lexical, tuple(ordered), position, capitalized, keywords, compounds,
                         frozenset(tokenize_line(lexical)))


@dataclass(frozen=True)
class FileFacts:
    """What a project knows of its files beyond their words, for the stages that read it.

    Attributes
    ----------
    importers : mapping of str to int, optional
        Importer counts (:meth:`codelex.graph.ImportGraph.prior_counts`): the centrality stage.
    translated : callable, optional
        ``translated(path)``: whether a document is written in a translation's other language than the
        project's main one (:class:`codelex.locales.Translations`): the translations stage.
    copies : NearCopies, optional
        Which files are near-copies of each other (:class:`codelex.rank.copies.NearCopies`): the near_copies
        stage.
    """

    importers: Mapping[str, int] | None = None
    translated: Callable[[str], bool] | None = None
    copies: object = None


#: No facts: every stage that needs them is left out.
NO_FACTS = FileFacts()


# --- the units ranked ----------------------------------------------------------------------------------------


#: Up to this many units, who defines a name is looked up unit by unit (no index built per query).
_SCAN_UNITS = 256


@functools.lru_cache(maxsize=1 << 17)
def _name_tokens(name: str) -> frozenset[str]:
    return frozenset(tokenize_line(name))



class Units:
    """What the stages read of the units they rank (chunks or files): paths, defined names, who defines what.

    Parameters
    ----------
    paths : sequence of str
        The file of each unit.
    names : sequence of iterable of str or None
        The names each unit defines (None: not known; such a unit is never taken for a module that only
        re-exports).
    chunks : bool
        Whether the units are chunks (several per file): coherence and saturation apply.
    """

    def __init__(self, paths: Sequence[str], names: Sequence[Iterable[str]], *, chunks: bool) -> None:
        self.paths = paths
        self.names = [frozenset(n) if n is not None else frozenset() for n in names]
        self._unknown = {i for i, n in enumerate(names) if n is None}
        self.chunks = chunks
        self._defining: dict[str, list[int]] | None = None

        self._stems: dict[str, str] = {}
        self._file_stems: set[str] | None = None
        self._defining_files: set[str] | None = None

    def defining(self, name: str) -> list[int]:
        """The units that define ``name`` (for many units an index built on first use; a query's few
        candidate files are looked through instead)."""
        if len(self.names) <= _SCAN_UNITS:
            return [u for u, names in enumerate(self.names) if name in names]
        table = self._defining
        if table is None:
            table = defaultdict(list)
            for unit, names in enumerate(self.names):
                for n in names:
                    table[n].append(unit)
            self._defining = table = dict(table)
        return table.get(name, [])

    @staticmethod
    def name_tokens(name: str) -> frozenset[str]:
        """The index tokens of a defined name (``ReadVarint``: readvarint, read, varint)."""
        return _name_tokens(name)

    def names_a_file(self, name: str) -> bool:
        """Whether some unit's file is named after ``name`` (``Column`` and ``Column.kt``)."""
        if self._file_stems is None:
            self._file_stems = {self.stem(p) for p in self.paths}
        lowered = name.lower()
        return lowered in self._file_stems or lowered + "s" in self._file_stems

    def defines_anything(self, path: str) -> bool:
        """Whether any unit of ``path`` defines a name (a module that only re-exports defines none)."""
        if self._defining_files is None:
            self._defining_files = {p for i, (p, names) in enumerate(zip(self.paths, self.names))
                                    if names or i in self._unknown}
        return path in self._defining_files

    def stem(self, path: str) -> str:
        """The file name without its last extension, lower-cased (``a/ToStringBuilder.java`` -> ``tostringbuilder``)."""
        found = self._stems.get(path)
        if found is None:
            name = path.rsplit("/", 1)[-1].lower()
            dot = name.rfind(".")
            found = self._stems[path] = name[:dot] if dot > 0 else name
        return found


# --- the stages ---------------------------------------------------------------------------------------------


def _stem_is(stem: str, name: str) -> bool:
    """A file named after ``name`` (lower-cased): exactly, without underscores, or as its plural."""
    bare = stem.replace("_", "")
    return stem == name or bare == name or stem.rstrip("s") == name or bare.rstrip("s") == name


def _definitions(q: QueryAnalysis, units: Units, score: dict[int, float], allowed) -> None:
    names = list(q.names)
    if q.kind == "prose":  # a capitalised word the project defines (a sentence's first word: a file named so too)
        names += [w for w in q.capitalized if w not in names and units.defining(w)
                  and (q.positions.get(w, 0) > 0 or units.names_a_file(w))]
    if not names:
        return
    unit = PIPELINE_DEFINITION * (1.0 if q.kind == "symbol" else PIPELINE_EMBEDDED_SHARE)
    wanted = set(names)
    lowered = [n.lower() for n in names]

    def evidence(u: int) -> float:
        hit = units.names[u] & wanted
        if not hit:
            return 0.0
        first = min(q.positions.get(n, 0) for n in hit)
        named = any(_stem_is(units.stem(units.paths[u]), n) for n in lowered)
        return unit * PIPELINE_NAME_ORDER_DECAY ** min(first, 10) * (PIPELINE_DEF_STEM if named else 1.0)

    for u in list(score):
        score[u] += evidence(u)
    for n in names:  # definitions the index did not retrieve (the name is rare in their text)
        for u in units.defining(n):
            if u not in score and (allowed is None or allowed(u)):
                e = evidence(u)
                if e:
                    score[u] = e


def _name_cover(q: QueryAnalysis, units: Units, score: dict[int, float]) -> None:
    if q.kind != "prose" or not q.tokens:
        return
    probe = max(q.tokens, key=len)  # (the longest token is held by the fewest names)
    for u in list(score):
        names = units.names[u]
        if not names:
            continue
        best = 0.0
        for name in _names_holding(_lowered_names(names), probe):
            toks = _name_tokens(name)
            if probe in toks and q.tokens <= toks:
                best = max(best, len(q.tokens) / len(toks))
        if best:
            score[u] += PIPELINE_NAME_COVER * best


class _LoweredNames(NamedTuple):
    """A file's names for substring probes: lower-cased, joined by newlines (``joined``), where each starts
    there (``starts``, ascending), the names in that order, and the indexes of the names that are not ASCII."""

    joined: str
    starts: tuple[int, ...]
    names: tuple[str, ...]
    not_ascii: tuple[int, ...]


@functools.lru_cache(maxsize=1 << 12)
def _lowered_names(names) -> _LoweredNames:
    """A file's names as :class:`_LoweredNames` (cached by the set: the names source hands the same set query
    after query)."""
    ordered = tuple(names)
    starts, at = [], 0
    lows = []
    for name in ordered:
        low = name.lower()
        starts.append(at)
        lows.append(low)
        at += len(low) + 1
    return _LoweredNames("\n".join(lows), tuple(starts), ordered,
                         tuple(i for i, name in enumerate(ordered) if not name.isascii()))


def _names_holding(lowered: _LoweredNames, probe: str) -> list[str]:
    """The names whose lower-cased form holds ``probe`` (found by searching the joined string, so a header's
    thousands of names cost a few string searches), and every name that is not ASCII (its tokens need not be
    pieces of its lower-cased form)."""
    found = set(lowered.not_ascii)
    joined, starts = lowered.joined, lowered.starts
    i = joined.find(probe)
    while i >= 0:
        k = bisect.bisect_right(starts, i) - 1
        found.add(k)
        i = joined.find(probe, starts[k + 1]) if k + 1 < len(starts) else -1
    return [lowered.names[k] for k in found]


@functools.lru_cache(maxsize=1 << 16)
def _word_stem(word: str) -> str:
    """A lower-case word's Snowball stem (``utility`` and ``utils``: ``util``), the word itself without
    PyStemmer (a dependency)."""
    stemmer = _stemmer()
    return stemmer.stemWord(word) if stemmer is not None else word


@functools.lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def _path_words_of(path: str) -> tuple[str, frozenset[str], frozenset[str], frozenset[str]]:
    """``(stem, stem forms, compacts, words)`` of a path: its name without the extension, the forms a query
    word may take for it, the name's words run together (as written, and as word stems: ``ArrayUtils`` gives
    ``arrayutils`` and ``arrayutil``, which a query's ``array utility`` makes too), and its name's and
    directory's words, lower-cased (cached: the same files come back query after query)."""
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    written = base[:dot] if dot > 0 else base
    stem = written.lower()
    parent = path.rsplit("/", 2)[-2] if "/" in path else ""
    words = [t.lower() for t in split_identifier(written)]
    parts = {stem, *words}
    if parent:
        parts |= {parent.lower(), *(t.lower() for t in split_identifier(parent))}
    bare = stem.replace("_", "")
    stems = frozenset({stem, bare, stem.rstrip("s"), bare.rstrip("s")})
    compact = frozenset({stem.replace("_", "").replace("-", ""), "".join(_word_stem(w) for w in words if w.isalpha())})
    return stem, stems, compact, frozenset(parts)


@functools.lru_cache(maxsize=1 << 16)
def _word_in(kw: str, parts: frozenset[str]) -> bool:
    if kw in parts:
        return True
    for p in parts:  # a word form: one starts the other (three letters at least)
        if len(p) >= 3 and len(kw) >= 3 and (p.startswith(kw) or kw.startswith(p)):
            return True
    return False


def _path_words(q: QueryAnalysis, units: Units, score: dict[int, float]) -> None:
    if q.kind != "prose" or not q.keywords:
        return
    seen: dict[str, float] = {}
    n = len(q.keywords)
    for u in list(score):
        path = units.paths[u]
        share = seen.get(path)
        if share is None:
            stem, stems, compact, parts = _path_words_of(path)
            found = 0.0
            for kw in q.keywords:
                if _word_in(kw, parts):
                    found += 1
                if kw in stems:
                    found += 1
            if not compact.isdisjoint(q.compounds):
                found += 1
            share = seen[path] = found / n
        if share >= 0.1:
            score[u] += PIPELINE_PATH_WORDS * share


def _coherence(units: Units, lexical: Mapping[int, float], score: dict[int, float]) -> None:
    file_sum: dict[str, float] = defaultdict(float)
    best: dict[str, int] = {}
    for u, s in lexical.items():
        path = units.paths[u]
        file_sum[path] += s
        if path not in best or s > lexical[best[path]]:
            best[path] = u
    if not file_sum:
        return
    top = max(file_sum.values())
    for path, u in best.items():
        score[u] += PIPELINE_COHERENCE * file_sum[path] / top


_HUBS = frozenset({"mod.rs", "lib.rs", "__init__.py", "index.ts", "index.js", "index.tsx", "index.jsx",
                   "package.scala"})


def _shadowed(paths: Iterable[str]) -> set[str]:
    """Files whose name a file in an ancestor directory also has (``pydantic/v1/fields.py`` under
    ``pydantic/fields.py``); module hubs (``mod.rs``, ``index.ts``...) are named so everywhere."""
    distinct = set(paths)
    names = [p.rsplit("/", 1)[-1] for p in distinct]
    if len(set(names)) == len(names):
        return set()  # (every name once: the common case, at once)
    by_name: dict[str, list[str]] = defaultdict(list)
    for p, name in zip(distinct, names):
        by_name[name].append(p)
    out = set()
    for name, group in by_name.items():
        if len(group) < 2 or name in _HUBS:
            continue
        for a in group:
            prefix = a.rsplit("/", 1)[0] + "/" if "/" in a else ""
            out.update(b for b in group if b != a and b.startswith(prefix))
    return out


def _centrality(units: Units, score: dict[int, float], importers: Mapping[str, int]) -> None:
    top = _most_imported(importers)
    if top <= 0:
        return
    scale = PIPELINE_CENTRALITY / math.log1p(top)
    for u in score:
        count = importers.get(units.paths[u], 0)
        if count > 0:
            score[u] += scale * math.log1p(count)


def _most_imported(importers: Mapping[str, int]) -> int:
    cache = getattr(importers, "cache", None)  # a CentralityMap keeps derived values once
    if cache is not None and "most" in cache:
        return cache["most"]
    top = max(importers.values(), default=0)
    if cache is not None:
        cache["most"] = top
    return top


def _near_copies(units: Units, ranked: list[tuple[int, float]], copies) -> list[tuple[int, float]]:
    """Among the first :data:`PIPELINE_COPY_DEPTH` files, each near-copy of a file ranked above it (that is not a
    copy itself) loses; the rest keep their places."""
    kept: list[str] = []
    out = []
    for i, (u, s) in enumerate(ranked):
        if i < PIPELINE_COPY_DEPTH:
            path = units.paths[u]
            if any(copies.same(k, path) for k in kept):
                s *= PIPELINE_COPY
            else:
                kept.append(path)
        out.append((u, s))
    out.sort(key=lambda t: (-t[1], t[0]))
    return out


def path_factor(units: Units, path: str, facts: FileFacts = NO_FACTS) -> float:
    """What a path says of a file, as a multiplier (1.0 for an ordinary source file): its kind (tests,
    re-export hubs, compat copies...), auxiliary code (examples, benchmarks), prose, a translation.  The
    lexical ranking multiplies a unit's score by it; the vector half of hybrid search ranks by similarity
    times it (``HybridSearcher``), so both halves demote the same files."""
    factor = 1.0
    if enabled("path_kinds"):
        factor *= path_kind_factor(path, reexport=not units.defines_anything(path))
    if enabled("auxiliary"):
        factor *= auxiliary_factor(path)
    if is_prose(path):
        if enabled("prose_files"):
            factor *= PIPELINE_PROSE
        if facts.translated is not None and enabled("translations") and facts.translated(path):
            factor *= PIPELINE_TRANSLATION
    return factor


#: The stages :func:`path_factor` reads: what a cache of its values must be keyed on (with the facts).
PATH_FACTOR_STAGES = ("path_kinds", "auxiliary", "prose_files", "translations")


def _path_factors(units: Units, score: dict[int, float], facts: FileFacts) -> None:
    factors: dict[str, float] = {}
    for u in score:
        path = units.paths[u]
        factor = factors.get(path)
        if factor is None:
            factor = factors[path] = path_factor(units, path, facts)
        score[u] *= factor


def rank_units(q: QueryAnalysis, units: Units, candidates: Sequence[tuple[int, float]], *,
               allowed: Callable[[int], bool] | None = None, facts: FileFacts = NO_FACTS,
               path_priors: bool = True) -> list[tuple[int, float]]:
    """Rerank ``candidates`` (``(unit, lexical score)``, best first, as the native index ranked them).

    Returns every unit with evidence, best first (ties by unit), as
    ``(unit, score)``; with chunks, each further chunk of a file is already
    discounted (saturation).  ``allowed(unit)`` filters units the stages
    add (the candidates are filtered already); ``facts`` is what the project
    knows of its files (importer counts, translations: :class:`FileFacts`);
    ``path_priors=False`` leaves out what a path says (path kinds, auxiliary
    code, prose, translations, shadowing), as a search without priors asks.
    """
    importers = facts.importers
    score: dict[int, float] = {}
    if candidates:
        top = candidates[0][1] or 1.0
        rank, previous = 0, None
        for i, (u, s) in enumerate(candidates):
            if s != previous:  # equal scores share their best rank: a tie stays a tie
                rank, previous = i, s
            score[u] = PIPELINE_RANK_SHARE * (RRF_K + 1) / (RRF_K + rank + 1) + (1 - PIPELINE_RANK_SHARE) * s / top
    lexical = dict(score)
    if units.chunks and enabled("coherence"):
        _coherence(units, lexical, score)
    if enabled("definitions"):
        _definitions(q, units, score, allowed)
    if enabled("name_cover"):
        _name_cover(q, units, score)
    if enabled("path_words"):
        _path_words(q, units, score)
    if importers and enabled("centrality"):
        _centrality(units, score, importers)
    if path_priors:
        _path_factors(units, score, facts)
    if path_priors and enabled("shadowing"):
        shadowed = _shadowed(units.paths[u] for u in score)
        if shadowed:
            for u in score:
                if units.paths[u] in shadowed:
                    score[u] *= PIPELINE_SHADOWED
    ranked = sorted(score.items(), key=lambda t: (-t[1], t[0]))
    if path_priors and not units.chunks and facts.copies is not None and enabled("near_copies"):
        ranked = _near_copies(units, ranked, facts.copies)
    if not (units.chunks and enabled("saturation")):
        return ranked
    seen: dict[str, int] = defaultdict(int)
    out = []
    for u, s in ranked:
        path = units.paths[u]
        out.append((u, s * PIPELINE_SATURATION ** seen[path]))
        seen[path] += 1
    out.sort(key=lambda t: (-t[1], t[0]))
    return out
