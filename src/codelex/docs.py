"""Docs section search: rank documentation sections against a free-text question.

The scoring is the seed's (``../shared/seeds/docs-search.md``), exactly, with
integer scores: on the lowercased heading and text of a section,

- the whole trimmed query phrase (at least 3 characters) in the heading +40,
  in the text +12;
- per query term: in the heading +10; each occurrence in the text +2, for at
  most 5 occurrences;
- every term present somewhere (heading or text) +15.

Occurrences are non-overlapping substring matches.  :func:`search` keeps the
positive scores and sorts them stably (equal scores keep corpus order).
:class:`DocsIndex` gives the same answers on a large corpus without scoring
every section: a query term can only occur inside a run of word characters
and dots, so the sections holding it are found through an inverted index of
those runs, and only they are scored.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "STOP_WORDS",
    "DocsIndex",
    "Hit",
    "Section",
    "score",
    "search",
    "sections_from_file",
    "sections_from_markdown",
    "sections_from_rst",
    "snippet",
    "terms",
]

#: English function words that carry no topic (kept small on purpose: a
#: technical word like "not" or "will" may matter in a question about docs).
STOP_WORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are",
    "was", "be", "it", "its", "this", "that", "these", "those", "how", "what", "which", "do", "does", "i", "me",
    "my", "we", "you", "your", "can", "there",
})
PHRASE_IN_HEADING, PHRASE_IN_TEXT = 40, 12
TERM_IN_HEADING, TERM_OCCURRENCE, MAX_COUNTED_OCCURRENCES, ALL_TERMS = 10, 2, 5, 15
MIN_PHRASE = 3
SNIPPET_CHARS = 240

_SPLIT = re.compile(r"[^\w.]+")  # \w: letters, digits and _ (Unicode-aware)
_RUN = re.compile(r"[\w.]+")


@dataclass(frozen=True)
class Section:
    """One section of a document: its heading line and the body under it."""

    path: str
    title: str  # the document's title
    heading: str
    anchor: str
    start_line: int  # 1-based: the heading's line (1 for a preamble)
    end_line: int
    text: str  # the body, without the heading line


@dataclass(frozen=True)
class Hit:
    """A section with its score."""

    section: Section
    score: int


# --- the seed's algorithm --------------------------------------------------------------


def terms(query: str) -> list[str]:
    """Lowercase; split on anything not a letter, digit, ``_`` or ``.``; drop stop words; dedupe in order."""
    if not isinstance(query, str):
        raise TypeError(f"query must be str, not {type(query).__name__}")
    out: list[str] = []
    for term in _SPLIT.split(query.lower()):
        if term and term not in STOP_WORDS and term not in out:
            out.append(term)
    return out


def score(section: Section, query: str, words: Sequence[str]) -> int:
    """The section's score for ``query`` and its ``words`` (from :func:`terms`)."""
    heading = section.heading.lower()
    text = section.text.lower()
    return _score(heading, text, query.lower().strip(), words)


def _score(heading: str, text: str, phrase: str, words: Sequence[str]) -> int:
    total = 0
    if len(phrase) >= MIN_PHRASE:
        if phrase in heading:
            total += PHRASE_IN_HEADING
        if phrase in text:
            total += PHRASE_IN_TEXT
    present = 0
    for word in words:
        in_heading = word in heading
        occurrences = text.count(word)
        if in_heading:
            total += TERM_IN_HEADING
        total += TERM_OCCURRENCE * min(occurrences, MAX_COUNTED_OCCURRENCES)
        present += in_heading or occurrences > 0
    if words and present == len(words):
        total += ALL_TERMS
    return total


def search(sections: Sequence[Section], query: str, limit: int = 10) -> list[Hit]:
    """Score every section; positive scores, best first, equal scores in corpus order; at most ``limit``."""
    words = terms(query)
    if not words or limit <= 0:
        return []
    phrase = query.lower().strip()
    hits = []
    for section in sections:
        s = _score(section.heading.lower(), section.text.lower(), phrase, words)
        if s > 0:
            hits.append(Hit(section, s))
    hits.sort(key=lambda h: -h.score)  # stable: ties keep corpus order
    return hits[:limit]


def snippet(section: Section, query: str, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of the text around the first query term found (whitespace collapsed)."""
    text = section.text
    low = text.lower()
    position = -1
    for word in terms(query):
        position = low.find(word)
        if position >= 0:
            break
    if position < 0:
        start = 0
    else:
        start = max(0, position - width // 3)
    piece = text[start:start + width]
    flat = " ".join(piece.split())
    if start > 0:
        flat = "…" + flat
    if start + width < len(text):
        flat += "…"
    return flat


# --- parsing ---------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to ``-``."""
    text = unicodedata.normalize("NFC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(headings: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for heading in headings:
        base = slug(heading)
        n = seen.get(base, 0)
        out.append(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after YAML (---) or TOML (+++) front matter, else 0."""
    if lines and lines[0].strip() in ("---", "+++"):
        fence = lines[0].strip()
        for i in range(1, len(lines)):
            if lines[i].strip() in (fence, "...") :
                return i + 1
    return 0


def _assemble(path: str, lines: list[str], marks: list[tuple[int, int, str, int]]) -> list[Section]:
    """marks: (heading line index, level, heading text, lines the heading takes)."""
    stem = Path(path).stem
    title = next((h for _, level, h, _ in marks if level == 1), stem) if marks else stem
    anchors = _anchors(h for _, _, h, _ in marks)
    sections = []
    first = marks[0][0] if marks else len(lines)
    preamble = "\n".join(lines[:first]).strip("\n")
    if preamble.strip():
        sections.append(Section(path, title, title, "", 1, first, preamble))
    for k, (index, _level, heading, span) in enumerate(marks):
        end = marks[k + 1][0] if k + 1 < len(marks) else len(lines)
        body = "\n".join(lines[index + span:end]).strip("\n")
        last = end
        while last > index + span and not lines[last - 1].strip():
            last -= 1
        sections.append(Section(path, title, heading, anchors[k], index + 1, max(last, index + span), body))
    return sections


def sections_from_markdown(path: str, text: str) -> list[Section]:
    """Sections at ATX (``#``…``######``) and Setext headings, ignoring fenced code and front matter."""
    lines = _lines(text)
    start = _front_matter_end(lines)
    marks: list[tuple[int, int, str, int]] = []
    fence: str | None = None
    previous_paragraph = False
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            previous_paragraph = False
            continue
        if m:
            fence = m.group(1)
            previous_paragraph = False
            continue
        atx = _ATX.match(line)
        if atx:
            marks.append((i, len(atx.group(1)), (atx.group(2) or "").strip(), 1))
            previous_paragraph = False
            continue
        setext = _SETEXT.match(line)
        if setext and previous_paragraph and (not marks or marks[-1][0] != i - 1):
            level = 1 if setext.group(1)[0] == "=" else 2
            marks.append((i - 1, level, lines[i - 1].strip(), 2))
            previous_paragraph = False
            continue
        previous_paragraph = bool(line.strip()) and not line.startswith("    ")
    # Front matter lines stay out of every section, including the preamble.
    return _assemble(path, [""] * start + lines[start:], marks)


_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.!$%&(),/;?@\[\\\]{|}])\1{2,}[ \t]*$")


def sections_from_rst(path: str, text: str) -> list[Section]:
    """Sections at reStructuredText titles: a line underlined (optionally also overlined) by punctuation."""
    lines = _lines(text)
    marks: list[tuple[int, int, str, int]] = []
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _RST_ADORNMENT.match(line)
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _RST_ADORNMENT.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == line.strip()[0] and len(lines[i + 2].rstrip()) >= len(lines[i + 1].strip()):
            style = (line.strip()[0], True)
            if style not in styles:
                styles.append(style)
            marks.append((i, styles.index(style) + 1, lines[i + 1].strip(), 3))
            i += 3
            continue
        if line.strip() and not over and i + 1 < len(lines):
            under = _RST_ADORNMENT.match(lines[i + 1])
            if under and len(lines[i + 1].rstrip()) >= len(line.rstrip()) and not line.startswith((" ", "\t")):
                style = (lines[i + 1].strip()[0], False)
                if style not in styles:
                    styles.append(style)
                marks.append((i, styles.index(style) + 1, line.strip(), 2))
                i += 2
                continue
        i += 1
    return _assemble(path, lines, marks)


def sections_from_file(path: str, text: str) -> list[Section]:
    """By extension: ``.rst`` → reStructuredText, anything else → Markdown."""
    return sections_from_rst(path, text) if path.lower().endswith(".rst") else sections_from_markdown(path, text)


def is_doc_path(path: str) -> bool:
    """``.md``, ``.mdx``, ``.markdown``, ``.rst``, and ``.txt`` under a ``doc``/``docs``/``Documentation`` directory."""
    low = path.lower()
    if low.endswith((".md", ".mdx", ".markdown", ".rst")):
        return True
    parts = low.split("/")
    return low.endswith(".txt") and any(p in ("doc", "docs", "documentation") for p in parts[:-1])


# --- the index -------------------------------------------------------------------------


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
            for run in set(_RUN.findall(heading)) | set(_RUN.findall(text)):
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
        if not words or limit <= 0:
            return []
        phrase = query.lower().strip()
        candidates: set[int] = set()
        for word in words:
            candidates |= self._candidates(word)
        hits = []
        for i in sorted(candidates):
            heading, text = self._lower[i]
            s = _score(heading, text, phrase, words)
            if s > 0:
                hits.append(Hit(self.sections[i], s))
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    # --- a project's documentation -----------------------------------------------

    @classmethod
    def for_project(cls, root: str | os.PathLike[str], *, index_dir: str | os.PathLike[str] | None = None,
                    max_bytes: int | None = 512 * 1024) -> DocsIndex:
        """The documentation of a project, refreshed from disk and cached next to the code index.

        Files are chosen by the project walk (ignore files, excluded
        directories, no symlinks); a cache (``docs.json`` in the index
        directory) keeps the parsed sections with each file's size and
        mtime, so only changed files are parsed again.
        """
        from codelex.walk import list_files, read_file, Document

        from codelex.project import INDEX_DIR_NAME, _prepare_local_dir, _slug, _user_cache_dir

        root = Path(root).resolve()
        if index_dir is not None:
            directory = Path(index_dir)
        elif os.environ.get("CODELEX_INDEX_DIR"):
            directory = Path(os.environ["CODELEX_INDEX_DIR"]) / _slug(root)
        elif _prepare_local_dir(root / INDEX_DIR_NAME):  # created with its .gitignore, like the code index
            directory = root / INDEX_DIR_NAME
        else:
            directory = _user_cache_dir() / _slug(root)
        cache_file = directory / "docs.json"
        cached: dict = {}
        try:
            data = json.loads(cache_file.read_text(encoding="utf-8"))
            if data.get("version") == 1:
                cached = data.get("files", {})
        except (OSError, ValueError):
            cached = {}
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
                directory.mkdir(parents=True, exist_ok=True)
                tmp = directory / f".docs.json.{os.getpid()}.tmp"
                tmp.write_text(json.dumps({"version": 1, "files": files}), encoding="utf-8")
                os.replace(tmp, cache_file)
            except OSError:
                pass  # a read-only tree still answers, from memory
        return cls(sections)
