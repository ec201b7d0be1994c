"""The docs stage: rank documentation sections against a free-text question.

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

from codelex.docs.index import DocsIndex
from codelex.docs.scoring import STOP_WORDS, Hit, score, search, snippet, terms
from codelex.docs.sections import (
    Section,
    is_doc_path,
    sections_from_file,
    sections_from_markdown,
    sections_from_rst,
    slug,
)

__all__ = [
    "STOP_WORDS",
    "DocsIndex",
    "Hit",
    "Section",
    "is_doc_path",
    "score",
    "search",
    "sections_from_file",
    "sections_from_markdown",
    "sections_from_rst",
    "slug",
    "snippet",
    "terms",
]
