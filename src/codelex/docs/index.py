"""The docs index: the same answers as :func:`codelex.docs.search`, without scoring every section.

A query term only ever occurs inside a run of word characters and dots, so
an inverted index of those runs (per lowercased heading and text) plus a
C-speed substring scan over the joined run vocabulary yields exactly the
sections that can score; they are then scored with the same function.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from codelex.defaults import DEFAULT_MAX_BYTES, DOCS_CACHE_FILE
from codelex.docs.scoring import WORD_RUN, Hit, score_lowered, terms
from codelex.docs.sections import Section, is_doc_path, sections_from_file
from codelex.query.options import check_limit

__all__ = ["DocsIndex"]


class DocsIndex:
    """Sections of a documentation corpus, searchable without scoring every section.

    Answers exactly as :func:`search` over the same sections (same scores,
    same order).  Candidates come from an inverted index of the runs of word
    characters and dots in each section's lowercased heading and text: every
    occurrence of a query term lies inside such a run, so a section without
    a run containing the term cannot score for it.

    Parameters
    ----------
    sections : iterable of Section
        In corpus order.
    """

    def __init__(self, sections: Iterable[Section]) -> None:
        self.sections: list[Section] = list(sections)
        self._lower = [(s.heading.lower(), s.text.lower()) for s in self.sections]
        postings: dict[str, list[int]] = {}
        for i, (heading, text) in enumerate(self._lower):
            for run in set(WORD_RUN.findall(heading)) | set(WORD_RUN.findall(text)):
                postings.setdefault(run, []).append(i)
        runs = sorted(postings)
        self._runs = runs
        self._postings = [postings[r] for r in runs]
        # All runs in one string, so that finding the runs holding a term is a
        # C-speed substring scan rather than a Python loop.
        self._blob = "\n".join(runs)
        self._starts = []
        offset = 0
        for r in runs:
            self._starts.append(offset)
            offset += len(r) + 1

    def __len__(self) -> int:
        return len(self.sections)

    def _candidates(self, word: str) -> set[int]:
        found: set[int] = set()
        blob, starts = self._blob, self._starts
        position = blob.find(word)
        while position >= 0:
            k = bisect.bisect_right(starts, position) - 1
            found.update(self._postings[k])
            position = blob.find(word, starts[k] + len(self._runs[k]) + 1)  # next run
        return found

    def search(self, query: str, limit: int = 10) -> list[Hit]:
        """As :func:`search`, over this index's sections."""
        words = terms(query)
        limit = check_limit(limit)
        if not words or limit <= 0:
            return []
        phrase = query.lower().strip()
        candidates: set[int] = set()
        for word in words:
            candidates |= self._candidates(word)
        hits = []
        for i in sorted(candidates):
            heading, text = self._lower[i]
            s = score_lowered(heading, text, phrase, words)
            if s > 0:
                hits.append(Hit(self.sections[i], s))
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    # --- a project's documentation -----------------------------------------------

    @classmethod
    def for_project(cls, root: str | os.PathLike[str], *, index_dir: str | os.PathLike[str] | None = None,
                    max_bytes: int | None = DEFAULT_MAX_BYTES) -> DocsIndex:
        """The documentation of a project, refreshed from disk and cached next to the code index.

        Files are chosen by the project walk (ignore files, excluded
        directories, no symlinks); a cache (``docs.json`` in the index
        directory) keeps the parsed sections with each file's size and
        mtime, so only changed files are parsed again.
        """
        from codelex.ingest import Document, list_files, read_file
        from codelex.persist.layout import writable_dir

        root = Path(root).resolve()
        # The code index's directory (created with its .gitignore).
        directory = writable_dir(root, Path(index_dir) if index_dir is not None else None)
        cache_file = directory / DOCS_CACHE_FILE
        cached = _load_cache(cache_file)
        walk = list_files(root, max_bytes=max_bytes, accept=is_doc_path)
        files: dict[str, dict] = {}
        sections: list[Section] = []
        changed = False
        for f in walk.files:
            entry = cached.get(f.path)
            if entry and entry.get("mtime_ns") == f.mtime_ns and entry.get("size") == f.size:
                files[f.path] = entry
            else:
                doc = read_file(str(root), f.path, max_bytes)
                if not isinstance(doc, Document):
                    continue
                text = doc.content.decode("utf-8", "replace")
                entry = {"mtime_ns": doc.mtime_ns, "size": doc.size,
                         "sections": [asdict(s) for s in sections_from_file(f.path, text)]}
                files[f.path] = entry
                changed = True
            sections.extend(Section(**s) for s in entry["sections"])
        if changed or set(files) != set(cached):
            try:
                _save_cache(directory, cache_file, files)
            except OSError:
                pass  # a read-only tree still answers, from memory
        return cls(sections)


#: Version 3: the digest line carries this user's MAC (:mod:`codelex.persist.trust`).
_CACHE_VERSION = 3
_SECTION_FIELDS = {"path": str, "title": str, "heading": str, "anchor": str, "start_line": int, "end_line": int,
                   "text": str}


def _load_cache(cache_file: Path) -> dict:
    """The cached ``path -> {mtime_ns, size, sections}`` entries, or {} for anything not intact.

    The files part carries its xxh3 digest: a damaged cache would otherwise
    answer with damaged sections (a flipped letter in a heading is still valid JSON).
    The digest line carries this user's MAC of it: a cache this user did not
    write (committed, copied, forged with a matching digest) is never read.
    Anything that does not parse (deep nesting included) is no cache either.
    """
    import xxhash

    from codelex.persist.container import open_regular
    from codelex.persist.trust import mac_matches

    try:
        with open_regular(cache_file) as f:  # (never a FIFO or a link left where the cache should be)
            raw = f.read()
        head, sep, body = raw.partition(b"\n")
        meta = json.loads(head)
        if not sep or not isinstance(meta, dict) or meta.get("version") != _CACHE_VERSION \
                or not isinstance(meta.get("digest"), str) or not isinstance(meta.get("mac"), str) \
                or not mac_matches(_cache_mac_message(meta["digest"]), meta["mac"]) \
                or meta["digest"] != xxhash.xxh3_64_hexdigest(body):
            return {}
        files = json.loads(body)
    except (OSError, ValueError, RecursionError, MemoryError):  # (IndexFormatError is a ValueError)
        return {}
    if not isinstance(files, dict):
        return {}
    for entry in files.values():
        if not isinstance(entry, dict) or type(entry.get("mtime_ns")) is not int or type(entry.get("size")) is not int \
                or not isinstance(entry.get("sections"), list):
            return {}
        for section in entry["sections"]:
            if not isinstance(section, dict) or section.keys() != _SECTION_FIELDS.keys() or \
                    any(type(section[k]) is not t for k, t in _SECTION_FIELDS.items()):
                return {}
    return files


def _cache_mac_message(digest: str) -> bytes:
    return f"codelex docs cache\x00{_CACHE_VERSION}\x00{digest}".encode("utf-8", "surrogatepass")


def _save_cache(directory: Path, cache_file: Path, files: dict) -> None:
    """Write the cache atomically: a digest line, then the entries (fsynced before the rename)."""
    import xxhash

    from codelex.persist.container import atomic_file
    from codelex.persist.trust import MAC_HEX, mac

    body = json.dumps(files, ensure_ascii=False).encode("utf-8", "surrogateescape")
    digest = xxhash.xxh3_64_hexdigest(body)
    tag = mac(_cache_mac_message(digest)) or "0" * MAC_HEX
    head = json.dumps({"version": _CACHE_VERSION, "digest": digest, "mac": tag}).encode()
    with atomic_file(directory, cache_file.name) as f:
        f.write(head + b"\n" + body)
