"""The seed's docs scoring, exactly (``../shared/seeds/docs-search.md``), with integer scores.

On the lowercased heading and text of a section:

- the whole trimmed query phrase (at least 3 characters) in the heading +40,
  in the text +12;
- per query term: in the heading +10; each occurrence in the text +2, for at
  most 5 occurrences;
- every term present somewhere (heading or text) +15.

Occurrences are non-overlapping substring matches.  :func:`search` keeps the
positive scores and sorts them stably (equal scores keep corpus order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codelex.docs.sections import Section
from codelex.query.options import check_limit

__all__ = [
    "ALL_TERMS",
    "MAX_COUNTED_OCCURRENCES",
    "MIN_PHRASE",
    "PHRASE_IN_HEADING",
    "PHRASE_IN_TEXT",
    "STOP_WORDS",
    "TERM_IN_HEADING",
    "TERM_OCCURRENCE",
    "WORD_RUN",
    "Hit",
    "score",
    "score_lowered",
    "search",
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
#: A run of word characters and dots: every occurrence of a query term lies inside one.
WORD_RUN = re.compile(r"[\w.]+")


@dataclass(frozen=True)
class Hit:
    """A section with its score."""

    section: Section
    score: int


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
    return score_lowered(heading, text, query.lower().strip(), words)


def score_lowered(heading, text, phrase, words) -> int:
    """:func:`score` on a lowercased heading and text, lowercased trimmed phrase and the query's words: all
    ``str``, or all UTF-8 ``bytes`` (the docs index's; a phrase shorter than :data:`MIN_PHRASE` characters
    then passed empty)."""
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
    limit = check_limit(limit)
    if not words or limit <= 0:
        return []
    phrase = query.lower().strip()
    hits = []
    for section in sections:
        s = score_lowered(section.heading.lower(), section.text.lower(), phrase, words)
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
