"""The docs index: the same answers as :func:`codelex.docs.search`, without scoring every section.

A query term only ever occurs inside a run of word characters and dots, so
an inverted index of those runs (per lowercased heading and text) plus a
C-speed substring scan over the joined run vocabulary yields exactly the
sections that can score; they are then scored by the same rules natively
(``csrc/score/docs_sections``; :func:`codelex.docs.scoring.score_lowered` is its
oracle), on the lowercased UTF-8 bytes (a substring of valid UTF-8 is found,
and counted, exactly where the decoded text holds it).

A project's index lives in the docs store (:mod:`codelex.persist.docs`,
``docs.clx`` beside the word index): mapped, not parsed, when nothing
changed; rebuilt from the unchanged files' rows and the changed files' new
sections when something did.  Sections can be narrowed by path
(:func:`codelex.query.globs.paths_predicate`) and by human language
(:mod:`codelex.locales`): by default a project with translations
answers from its main language and its neutral documents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from codelex.defaults import DEFAULT_MAX_BYTES, LEGACY_DOCS_CACHE_FILE
from codelex.locales import ALL_LANGUAGES, file_languages, language_tag
from codelex._native import text as _text
from codelex.docs.scoring import (
    ALL_TERMS, MAX_COUNTED_OCCURRENCES, MIN_PHRASE, PHRASE_IN_HEADING, PHRASE_IN_TEXT, TERM_IN_HEADING,
    TERM_OCCURRENCE, WORD_RUN, Hit, terms,
)
from codelex.docs.sections import Section, is_doc_path, sections_from_file
from codelex.errors import QueryError
from codelex.persist.container import decode_items, encode_items
from codelex.persist.docs import DocsTables, load_docs, save_docs
from codelex.query.options import check_limit

if TYPE_CHECKING:
    from codelex.ingest.admission import Admission

__all__ = ["DocsIndex"]

#: A docs query of more distinct words than this is refused (each costs a pass over the run vocabulary).
MAX_DOCS_QUERY_WORDS = 64
#: The seed's scoring rules, in the order the native scorer takes them (csrc/score/docs_sections.hpp).
_RULES = (PHRASE_IN_HEADING, PHRASE_IN_TEXT, TERM_IN_HEADING, TERM_OCCURRENCE, MAX_COUNTED_OCCURRENCES, ALL_TERMS)
_SECTION_STRINGS = ("heading", "anchor", "labels", "text", "low_heading", "low_text")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class _NewFile:
    """A file (re)parsed for this build: its sections' strings, and the runs of each section."""

    __slots__ = ("path", "title", "mtime_ns", "size", "columns", "start", "end", "runs")

    def __init__(self, path: str, mtime_ns: int, size: int, sections: Sequence[Section]) -> None:
        self.path, self.mtime_ns, self.size = path, mtime_ns, size
        self.title = sections[0].title if sections else Path(path).stem
        self.columns: dict[str, list[bytes]] = {name: [] for name in _SECTION_STRINGS}
        self.start = [s.start_line for s in sections]
        self.end = [s.end_line for s in sections]
        self.runs: list[set[str]] = []
        for s in sections:
            low_heading, low_text = s.heading.lower(), s.text.lower()
            for name, value in (("heading", s.heading), ("anchor", s.anchor), ("labels", "\n".join(s.labels)),
                                ("text", s.text), ("low_heading", low_heading), ("low_text", low_text)):
                self.columns[name].append(_utf8(value))
            self.runs.append(set(WORD_RUN.findall(low_heading)) | set(WORD_RUN.findall(low_text)))


def _build_tables(entries: Sequence[_NewFile | int], old: DocsTables | None) -> DocsTables:
    """The tables for ``entries`` in order: a :class:`_NewFile`, or the index of an unchanged file in ``old``
    (whose rows, strings and runs are copied, not recomputed)."""
    strings: dict[str, list[bytes]] = {name: [] for name in ("path", "title", *_SECTION_STRINGS)}
    mtime, size, sec_ptr, start, end = [], [], [0], [], []
    run_sections: dict[bytes, list[int]] = {}  # a run -> the new sections holding it (from new files)
    old_to_new = None
    if old is not None:
        old_to_new = np.full(old.sections, -1, dtype=np.int64)
        old_str = {name: (blob.tobytes(), off.tolist()) for name, (blob, off) in old.strings.items()
                   if name != "run"}
    for entry in entries:
        first = sec_ptr[-1]
        if isinstance(entry, _NewFile):
            strings["path"].append(_utf8(entry.path))
            strings["title"].append(_utf8(entry.title))
            mtime.append(entry.mtime_ns)
            size.append(entry.size)
            for name in _SECTION_STRINGS:
                strings[name].extend(entry.columns[name])
            start.extend(entry.start)
            end.extend(entry.end)
            for k, runs in enumerate(entry.runs):
                for run in runs:
                    run_sections.setdefault(_utf8(run), []).append(first + k)
            sec_ptr.append(first + len(entry.start))
        else:
            assert old is not None and old_to_new is not None
            i = entry
            for name in ("path", "title"):
                blob, off = old_str[name]
                strings[name].append(blob[off[i]:off[i + 1]])
            mtime.append(int(old.mtime_ns[i]))
            size.append(int(old.size[i]))
            a, b = int(old.sec_ptr[i]), int(old.sec_ptr[i + 1])
            for name in _SECTION_STRINGS:
                blob, off = old_str[name]
                strings[name].extend(blob[off[j]:off[j + 1]] for j in range(a, b))
            start.extend(old.start[a:b].tolist())
            end.extend(old.end[a:b].tolist())
            old_to_new[a:b] = np.arange(first, first + (b - a))
            sec_ptr.append(first + (b - a))
    merged, runs_of_pairs, sections_of_pairs = _run_postings(old, old_to_new, run_sections)
    post_ptr = np.zeros(len(merged) + 1, dtype=np.uint64)
    np.cumsum(np.bincount(runs_of_pairs, minlength=len(merged)), out=post_ptr[1:])
    run_blob = np.frombuffer(b"".join(r + b"\n" for r in merged), dtype=np.uint8)
    run_off = np.zeros(len(merged) + 1, dtype=np.uint64)
    if merged:
        np.cumsum(np.fromiter((len(r) + 1 for r in merged), dtype=np.uint64, count=len(merged)), out=run_off[1:])
    encoded = {name: encode_items(values) for name, values in strings.items()}
    encoded["run"] = (run_blob, run_off)
    return DocsTables(encoded, np.asarray(mtime, dtype=np.int64), np.asarray(size, dtype=np.uint64),
                      np.asarray(sec_ptr, dtype=np.uint64), np.asarray(start, dtype=np.uint32),
                      np.asarray(end, dtype=np.uint32), post_ptr, sections_of_pairs.astype(np.uint32))


def _run_postings(old: DocsTables | None, old_to_new, run_sections: dict[bytes, list[int]]):
    """``(runs, run of each pair, section of each pair)``: the old store's postings of the sections kept
    (``old_to_new``: an old section's new number, -1 when dropped), remapped, merged with the new files' runs
    (``run_sections``), the pairs sorted by run, then section."""
    pairs_run: list[np.ndarray] = []
    pairs_section: list[np.ndarray] = []
    vocabulary: list[bytes] = []
    if old is not None and old.runs and old_to_new is not None:
        old_runs = old.strings["run"][0].tobytes().split(b"\n")[:-1]
        run_of = np.repeat(np.arange(old.runs, dtype=np.int64), np.diff(old.post_ptr).astype(np.int64))
        kept_sections = old_to_new[old.post.astype(np.int64)]
        keep = kept_sections >= 0
        used = np.unique(run_of[keep])
        vocabulary = [old_runs[k] for k in used.tolist()]
        # (old runs renumbered among the used ones, then among the merged vocabulary below)
        renumber = np.full(old.runs, -1, dtype=np.int64)
        renumber[used] = np.arange(len(used))
        pairs_run.append(renumber[run_of[keep]])
        pairs_section.append(kept_sections[keep])
    merged = sorted(set(vocabulary) | set(run_sections))
    position = {run: k for k, run in enumerate(merged)}
    if pairs_run:
        to_merged = np.fromiter((position[r] for r in vocabulary), dtype=np.int64, count=len(vocabulary))
        pairs_run[0] = to_merged[pairs_run[0]] if len(vocabulary) else pairs_run[0]
    for run, secs in run_sections.items():
        pairs_run.append(np.full(len(secs), position[run], dtype=np.int64))
        pairs_section.append(np.asarray(secs, dtype=np.int64))
    if pairs_run:
        runs_of_pairs = np.concatenate(pairs_run)
        sections_of_pairs = np.concatenate(pairs_section)
        order = np.lexsort((sections_of_pairs, runs_of_pairs))
        runs_of_pairs, sections_of_pairs = runs_of_pairs[order], sections_of_pairs[order]
    else:
        runs_of_pairs = sections_of_pairs = np.zeros(0, dtype=np.int64)
    return merged, runs_of_pairs, sections_of_pairs


def _group_by_file(sections: Iterable[Section]) -> list[_NewFile]:
    files: list[_NewFile] = []
    group: list[Section] = []
    for s in sections:
        if group and s.path != group[0].path:
            files.append(_NewFile(group[0].path, 0, 0, group))
            group = []
        group.append(s)
    if group:
        files.append(_NewFile(group[0].path, 0, 0, group))
    return files


def _read_new(admission: Admission, path: str) -> _NewFile | None:
    """``path`` read through ``admission`` and parsed into sections (None: it is left out for what it holds)."""
    from codelex.ingest import Document

    doc = admission.read(path)
    if not isinstance(doc, Document):
        return None
    text = doc.content.decode("utf-8", "replace")
    return _NewFile(path, doc.mtime_ns, doc.size, sections_from_file(path, text))


class DocsIndex:
    """Sections of a documentation corpus, searchable without scoring every section.

    Answers exactly as :func:`~codelex.docs.search` over the same sections
    (same scores, same order), among the sections its filters keep.
    Candidates come from an inverted index of the runs of word characters and
    dots in each section's lowercased heading and text: every occurrence of a
    query term lies inside such a run, so a section without a run containing
    the term cannot score for it.

    Parameters
    ----------
    sections : iterable of Section
        In corpus order (a file's sections together).
    tables : DocsTables, optional
        Instead of ``sections``: a docs store's tables (:func:`codelex.persist.docs.load_docs`).
    """

    def __init__(self, sections: Iterable[Section] = (), *, tables: DocsTables | None = None) -> None:
        if tables is None:
            tables = _build_tables(_group_by_file(sections), None)
        self._tables = tables
        self.paths: list[str] = [p.decode("utf-8", "surrogatepass")
                                 for p in decode_items(*tables.strings["path"], "docs store")]
        self._file_of = np.repeat(np.arange(tables.files, dtype=np.int64),
                                  np.diff(tables.sec_ptr).astype(np.int64))
        self._runs = tables.strings["run"][0].tobytes()
        self._run_off = tables.strings["run"][1]
        self._file_languages, self.main_language = file_languages(self.paths)
        self._masks: dict[tuple, np.ndarray | None] = {}
        self._sections: list[Section] | None = None

    # --- what it holds ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._tables.sections

    @property
    def files(self) -> int:
        """The number of documents."""
        return self._tables.files

    @property
    def sections(self) -> list[Section]:
        """Every section, in corpus order (made on first use)."""
        if self._sections is None:
            self._sections = [self.section(i) for i in range(len(self))]
        return self._sections

    def _string(self, name: str, i: int) -> str:
        blob, off = self._tables.strings[name]
        return blob[int(off[i]):int(off[i + 1])].tobytes().decode("utf-8", "surrogatepass")

    def section(self, i: int) -> Section:
        """The ``i``-th section (corpus order)."""
        f = int(self._file_of[i])
        labels = self._string("labels", i)
        return Section(self.paths[f], self._string("title", f), self._string("heading", i),
                       self._string("anchor", i), int(self._tables.start[i]), int(self._tables.end[i]),
                       self._string("text", i), tuple(labels.split("\n")) if labels else ())

    @property
    def stamp(self) -> str:
        """A digest of the documents this index holds (paths, sizes, mtimes): it changes with any of them."""
        import xxhash

        t = self._tables
        h = xxhash.xxh3_64(t.strings["path"][0].tobytes())
        h.update(t.mtime_ns.tobytes())
        h.update(t.size.tobytes())
        return h.hexdigest()

    def language_of(self, path: str) -> str:
        """The human language of a document (``""``: neutral; see :mod:`codelex.locales`)."""
        return self._file_languages.get(path, "")

    @property
    def languages(self) -> dict[str, int]:
        """Sections per language tag (``""``: neutral documents), most first."""
        counts: dict[str, int] = {}
        sec_ptr = self._tables.sec_ptr
        for f, path in enumerate(self.paths):
            tag = self._file_languages.get(path, "")
            counts[tag] = counts.get(tag, 0) + int(sec_ptr[f + 1] - sec_ptr[f])
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    # --- searching --------------------------------------------------------------------------------------

    def _language_choice(self, language: str | None) -> str | None:
        """The tag a search keeps (None: every language)."""
        if language is None:
            return self.main_language or None
        if not isinstance(language, str):
            raise TypeError(f"language must be str, not {type(language).__name__}")
        if language.strip().lower() in (ALL_LANGUAGES, "*"):
            return None
        tag = language_tag(language.strip())
        known = set(self._file_languages.values())
        if tag is None or (known and tag not in known):
            listed = ", ".join(sorted(known)) if known else "none: no translations"
            shown = language if len(language) <= 40 else language[:40] + "..."
            raise QueryError(f"unknown documentation language {shown!r} (this project's: {listed}; "
                             f"'{ALL_LANGUAGES}' for every one)")
        return tag

    def _mask(self, paths, language: str | None) -> np.ndarray | None:
        """Which sections a search keeps (None: all), cached per filter."""
        from codelex.query.globs import paths_predicate

        tag = self._language_choice(language)
        key = (tag, tuple([paths] if isinstance(paths, str) else paths) if paths is not None else None)
        if key in self._masks:
            return self._masks[key]
        keep_path = paths_predicate(paths)
        if tag is None and keep_path is None:
            mask = None
        else:
            keep_file = np.fromiter(
                ((tag is None or self._file_languages.get(p, "") in ("", tag))
                 and (keep_path is None or keep_path(p)) for p in self.paths), dtype=bool, count=len(self.paths))
            mask = keep_file[self._file_of] if len(self._file_of) else np.zeros(0, dtype=bool)
        if len(self._masks) < 64:
            self._masks[key] = mask
        return mask

    def _candidates(self, word: bytes) -> np.ndarray | None:
        """The sections with a run containing ``word`` (None: so many runs do that it is every section)."""
        runs = self._runs
        # (a short word may lie in most runs: a C-speed count first, as the walk below is a Python loop)
        if len(word) <= 3 and runs.count(word) > self._tables.runs // 4:
            return None
        ends = []
        position = runs.find(word)
        while position >= 0:
            end = runs.find(b"\n", position)  # the run's end: the next occurrence is looked for past it
            ends.append(end)
            position = runs.find(word, end + 1)
        if not ends:
            return np.zeros(0, dtype=np.uint32)
        run_ids = np.searchsorted(self._run_off, np.asarray(ends, dtype=np.uint64), side="right") - 1
        starts = self._tables.post_ptr[run_ids].astype(np.int64)
        lengths = self._tables.post_ptr[run_ids + 1].astype(np.int64) - starts
        total = int(lengths.sum())
        # every posting of every run found, gathered at once: start + (position within the run)
        firsts = np.cumsum(lengths) - lengths
        gather = np.arange(total, dtype=np.int64) - np.repeat(firsts - starts, lengths)
        return self._tables.post[gather]

    def search(self, query: str, limit: int = 10, *, paths: str | Iterable[str] | None = None,
               language: str | None = None) -> list[Hit]:
        """The best sections for ``query``, as :func:`~codelex.docs.search` scores them.

        Parameters
        ----------
        query : str
            Free text; see :func:`~codelex.docs.terms`.
        limit : int, default 10
            At most this many hits (``<= 0``: none).
        paths : str or iterable of str, optional
            Globs (``docs/**/*.md``) or directories: only sections of matching documents.
        language : str, optional
            A language tag (``de``, ``pt-br``): only that language's documents and the neutral ones.  By
            default, a project with translations answers from its main language (:attr:`main_language`) and
            its neutral documents; ``"all"`` searches every language.

        Returns
        -------
        list of Hit
            Best first; equal scores in corpus order.

        Raises
        ------
        codelex.QueryError
            For a language the project's documents are not in, or a bad glob.
        """
        words = terms(query)
        if len(words) > MAX_DOCS_QUERY_WORDS:
            raise QueryError(f"the query has {len(words)} distinct words; at most {MAX_DOCS_QUERY_WORDS} are searched "
                             "at once")
        limit = check_limit(limit)
        mask = self._mask(paths, language)
        if not words or limit <= 0:
            return []
        phrase = query.lower().strip()
        # (the phrase rule counts characters: a phrase too short for it is passed empty, which it skips)
        phrase_bytes = _utf8(phrase) if len(phrase) >= MIN_PHRASE else b""
        needles = [_utf8(w) for w in words]
        found = [self._candidates(word) for word in needles]
        if any(f is None for f in found):
            candidates = np.arange(len(self), dtype=np.uint32)
        else:
            candidates = np.unique(np.concatenate(found))
        if mask is not None:
            candidates = candidates[mask[candidates]]
        # Which words each candidate may hold (its runs say so): the scorer looks for no other.
        may_hold = np.ones((len(candidates), len(needles)), dtype=bool)
        for w, holders in enumerate(found):
            if holders is not None:
                may_hold[:, w] = np.isin(candidates, holders, assume_unique=False)
        headings, heading_off = self._tables.strings["low_heading"]
        texts, text_off = self._tables.strings["low_text"]
        scores = _text.docs_section_scores(headings, heading_off, texts, text_off, candidates, needles, phrase_bytes,
                                           _RULES, may_hold)
        positive = scores > 0
        candidates, scores = candidates[positive], scores[positive]
        # best first; ties in corpus order, as the stable sort of the plain search
        best = np.lexsort((candidates, -scores.astype(np.int64)))[:limit]
        return [Hit(self.section(int(candidates[k])), int(scores[k])) for k in best]

    # --- a project's documentation -----------------------------------------------------------------------

    def holds(self, walk) -> bool:
        """Whether the listed files (``path``, ``size``, ``mtime_ns`` each, in walk order) are this index's,
        unchanged."""
        t = self._tables
        if len(walk) != t.files:
            return False
        mtime, size = t.mtime_ns.tolist(), t.size.tolist()
        return all(f.path == self.paths[i] and f.mtime_ns == mtime[i] and f.size == size[i]
                   for i, f in enumerate(walk))

    def updated(self, admission: Admission, paths: Iterable[str]) -> DocsIndex:
        """This index with ``paths`` (root-relative) read again through ``admission`` (the project's
        documentation admission): a changed file parsed again, a new one added, a vanished or no longer
        admitted one dropped; the other files' rows are copied, not parsed.  Returns ``self`` when none of
        ``paths`` is or becomes documentation."""
        wanted = set(paths)
        where = {p: i for i, p in enumerate(self.paths)}
        fresh: dict[str, _NewFile | None] = {}
        for path in wanted:
            admitted = admission.reason(path) is None
            if not admitted and path not in where:
                continue
            fresh[path] = _read_new(admission, path) if admitted else None
        if not fresh:
            return self
        entries: list[_NewFile | int] = []
        for path in sorted(set(self.paths) | {p for p, f in fresh.items() if f is not None}):
            if path in fresh:
                if fresh[path] is not None:
                    entries.append(fresh[path])  # type: ignore[arg-type]
            else:
                entries.append(where[path])
        return DocsIndex(tables=_build_tables(entries, self._tables))

    @classmethod
    def for_project(cls, root: str | os.PathLike[str], *, index_dir: str | os.PathLike[str] | None = None,
                    max_bytes: int | None = DEFAULT_MAX_BYTES, ignore: Iterable[str] = (),
                    previous: DocsIndex | None = None, admission: Admission | None = None,
                    use_git: bool | None = None, save: bool = True) -> DocsIndex:
        """The documentation of a project, brought in line with the disk and kept in its docs store.

        Files are chosen by the project walk (ignore files, excluded
        directories, no symlinks); the store (``docs.clx`` in the index
        directory) keeps the parsed sections and the search tables with each
        file's size and mtime, so only changed files are parsed again and an
        unchanged tree is mapped, not rebuilt.

        Parameters
        ----------
        root : path-like
            The project's root.
        index_dir : path-like, optional
            Where the store lives (default: the code index's directory).
        max_bytes : int or None
            Larger documents are skipped.
        ignore : iterable of str
            Gitignore-style patterns the project's settings add (``.codelexignore``, ``ignore = [...]``): as
            the code index, the docs leave those files out.
        previous : DocsIndex, optional
            An index of this root already in memory (a server's): returned as it is when nothing changed.
        admission : Admission, optional
            The project's documentation admission
            (:meth:`codelex.ingest.Admission.documentation`), which decides
            and reads every file; it stands for ``max_bytes`` and ``ignore``.
        use_git : bool or None
            As :func:`codelex.ingest.list_files` takes it.
        save : bool, default True
            Keep the result in the docs store.

        Returns
        -------
        DocsIndex
        """
        from codelex.ingest import list_files
        from codelex.persist.layout import writable_dir

        root = Path(root).resolve()
        if admission is None:
            from codelex.ingest import Admission

            admission = Admission(root, max_bytes=max_bytes, ignore=tuple(ignore), accept=is_doc_path)
        walk = list_files(root, admission=admission, use_git=use_git).files
        if previous is not None and previous.holds(walk):
            return previous
        directory = writable_dir(root, Path(index_dir) if index_dir is not None else None)
        old = load_docs(directory)
        if old is not None:
            stored = cls(tables=old)
            if stored.holds(walk):
                return stored
            where = {p: i for i, p in enumerate(stored.paths)}
        else:
            where = {}
        entries: list[_NewFile | int] = []
        for f in walk:
            i = where.get(f.path)
            if old is not None and i is not None and int(old.mtime_ns[i]) == f.mtime_ns \
                    and int(old.size[i]) == f.size:
                entries.append(i)
                continue
            new = _read_new(admission, f.path)
            if new is not None:
                entries.append(new)
        tables = _build_tables(entries, old)
        if not save:
            return cls(tables=tables)
        try:
            save_docs(directory, tables)
            legacy = directory / LEGACY_DOCS_CACHE_FILE
            if legacy.is_file() and not legacy.is_symlink():
                legacy.unlink()
        except OSError:
            pass  # a read-only tree still answers, from memory
        return cls(tables=tables)
