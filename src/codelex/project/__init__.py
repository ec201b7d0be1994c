"""The project lifecycle: a repository's index kept on disk and fresh, queried without waiting."""

from codelex.project.project import Project
from codelex.project.results import CodeResult, Coverage, RefreshReport, SearchResult
from codelex.project.roots import discover_root, refusal_reason

__all__ = ["CodeResult", "Coverage", "Project", "RefreshReport", "SearchResult", "discover_root", "refusal_reason"]
