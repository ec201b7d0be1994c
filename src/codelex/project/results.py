"""What a project answers: search results (with the unavailable contract), code search answers with what their
line budget left out, a file's importers and an identifier's references, coverage, refresh reports."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from codelex.lexical import Hit
from codelex.rank import HybridResult

__all__ = ["HINTS", "CodeResult", "Coverage", "clipped", "FileReferences", "ImportSite", "ImportersResult", "ReferenceLine",
           "ReferencesResult", "RefreshReport", "SearchResult", "generation_id", "pending_note"]

#: Why a query could not be answered, and what to do (``unavailable_reason`` -> hint).
HINTS = {
    "building": "The codelex index for this project is being built in the background; retry the query shortly.",
    "refused": "codelex refused to index this directory for safety: {reason}. Open a project directory instead.",
    "last-build-failed": "The last codelex index build failed: {reason}. A retry is now running in the background.",
}


def pending_note(pending) -> str:
    """What an answer ranked before everything it reads is known says of itself (``pending``: what is not)."""
    return (f"Provisional ranking: the {' and the '.join(pending)} of the indexed files "
            f"{'is' if len(pending) == 1 else 'are'} not known yet; a later query may rank these files otherwise.")


@dataclass(frozen=True)
class Coverage:
    """How much of the project the index covers."""

    files: int
    truncated: bool


@dataclass(frozen=True)
class SearchResult:
    """The answer of :meth:`Project.search`.

    Attributes
    ----------
    available : bool
        False while no index exists yet (or the root was refused); the query
        then returns at once with ``unavailable_reason`` (``building``,
        ``refused`` or ``last-build-failed``) and a ``hint``.
    results : list of Hit
    coverage : Coverage
    generated_at : float or None
        Unix time at which the index was last built or refreshed.
    pending : tuple of str
        What the ranking would also read but is not known for the index's
        files yet (``"import graph"``: its counts are being derived); empty
        when the answer is the one every later query of the same files gets.
    generation : str or None
        The generation of the word index the answer ranked against, whole:
        ``"N.E"``, the N-th index this process published with E edits
        applied to it (None when unavailable).  Two answers with the same
        generation ranked the same files' same contents.
    """

    available: bool
    query: str
    results: list[Hit]
    coverage: Coverage
    generated_at: float | None = None
    unavailable_reason: str | None = None
    hint: str | None = None
    pending: tuple[str, ...] = ()
    generation: str | None = None

    @property
    def provisional(self) -> bool:
        """Whether the ranking waits for something (:attr:`pending`): a later query of the same files may rank
        them otherwise."""
        return bool(self.pending)

    def to_dict(self) -> dict:
        """The original's wire shape (camelCase keys; optional keys only when set)."""
        out: dict = {
            "available": self.available,
            "query": self.query,
            "results": [h.to_dict() for h in self.results],
            "coverage": {"files": self.coverage.files, "truncated": self.coverage.truncated},
        }
        if self.generated_at is not None:
            out["snapshotGeneratedAt"] = self.generated_at
        if self.unavailable_reason is not None:
            out["unavailableReason"] = self.unavailable_reason
        if self.hint is not None:
            out["hint"] = self.hint
        if self.pending:
            out["provisional"] = True
            out["pending"] = list(self.pending)
        if self.generation is not None:
            out["generation"] = self.generation
        return out


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis saying so (a minified line in an answer)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def generation_id(number: int, edits: int) -> str:
    """The id of a word index's generation: ``"N.E"``, its publication number in this process and its edits."""
    return f"{number}.{edits}"


@dataclass(frozen=True)
class CodeResult(HybridResult):
    """The answer of :meth:`Project.code_search` and :meth:`Project.find_related`: a hybrid answer that says
    what its shared line budget cut.

    Attributes
    ----------
    omitted : int
        How many more results the answer would hold (up to ``limit``) had the
        shared line budget (``total_lines``) not run out first: 0 when the
        budget left nothing out.  Excerpts the budget shortened are
        head-truncated (their ``truncated`` is set), as every excerpt longer
        than ``excerpt_lines``.
    line_budget : int or None
        The shared line budget the answer was cut to (None: no shared budget,
        as :meth:`Project.find_related`, whose excerpts are only cut one by
        one).
    generation : str or None
        The word index's generation the chunks followed (see
        :attr:`SearchResult.generation`), with ``+vK`` when K chunks' vectors
        ranked too (a hybrid answer).

    Notes
    -----
    ``to_dict`` adds ``omitted``, ``lineBudget`` and ``generation`` to the
    hybrid answer's keys.  The budget is the original's (``select_from``): results share
    ``total_lines`` in rank order, so a few long excerpts can leave fewer
    than ``limit`` results; this says so instead of answering short silently.
    """

    omitted: int = 0
    line_budget: int | None = None
    generation: str | None = None

    @property
    def cut_excerpts(self) -> int:
        """How many excerpts are head-truncated (by ``excerpt_lines`` or by the budget)."""
        return sum(1 for h in self.hits if h.truncated)

    def to_dict(self) -> dict:
        """The hybrid answer's keys, with ``omitted`` and ``lineBudget``."""
        out = dict(super().to_dict(), omitted=self.omitted, lineBudget=self.line_budget)
        if self.generation is not None:
            out["generation"] = self.generation
        return out


@dataclass(frozen=True)
class ImportSite:
    """A file that imports another, and the line that does (None when no single line shows it)."""

    file: str
    line: int | None
    text: str | None


@dataclass(frozen=True)
class ImportersResult:
    """The answer of :meth:`Project.import_sites`: the files importing ``path`` (sorted), from the import graph;
    unavailable (``hint`` says why) while the index or the graph is being built."""

    available: bool
    path: str
    importers: list[ImportSite]
    hint: str | None = None


@dataclass(frozen=True)
class ReferenceLine:
    """One line holding an identifier; ``definition`` when a definition of that name starts there."""

    line: int
    text: str
    definition: bool = False


@dataclass(frozen=True)
class FileReferences:
    """One file's lines holding an identifier (at most the per-file cap; ``more`` past it); ``defines`` when the
    file defines that name."""

    file: str
    defines: bool
    lines: tuple[ReferenceLine, ...]
    more: int = 0


@dataclass(frozen=True)
class ReferencesResult:
    """The answer of :meth:`Project.references`: one page of the files that use ``name`` (those that define it
    first, then by how much they use it), among ``total`` candidate files (the index's postings of its token;
    a candidate holding it only inside a longer identifier is left out); ``next_offset``: the candidate the
    next page starts from (None: no more).  Unavailable while no index exists (``hint`` says why)."""

    available: bool
    name: str
    files: list[FileReferences]
    total: int
    hint: str | None = None
    next_offset: int | None = None


@dataclass
class RefreshReport:
    """What an open, refresh or rebuild did.

    ``mode`` is ``incremental`` or ``full``; ``reason`` says why a full build
    ran (``no-index``, ``unreadable-index: ...``, ``untrusted-index`` (a saved index this user's key did not
    sign: committed, copied or forged), ``file-set-churn``,
    ``stale-document-churn``, ``options-changed`` or ``requested``).
    """

    mode: str
    reason: str | None = None
    files: int = 0
    refreshed: int = 0
    added: int = 0
    dropped: int = 0
    reused: int = 0
    skipped: Counter = field(default_factory=Counter)
    pruned_dirs: Counter = field(default_factory=Counter)
    truncated: bool = False
    seconds: float = 0.0
    saved: bool = False
    save_error: str | None = None  # why the index built or refreshed could not be saved
