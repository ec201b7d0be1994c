"""The docs stage: rank documentation sections against a free-text question.

Sections come from Markdown and reStructuredText (:mod:`codelex.docs.sections`);
they are scored with the seed's integer scoring, exactly
(:mod:`codelex.docs.scoring`); :class:`DocsIndex` gives the same answers on a
large corpus without scoring every section (:mod:`codelex.docs.index`).
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
