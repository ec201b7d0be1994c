"""Path priors: test/vendor and doc/data demotions, import-graph centrality.

Priors are multipliers on a file's BM25 score.  They are evaluated on the
project-relative path (the original used absolute paths, demoting a whole
project that happens to live under ``build/`` or ``tests/``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

TEST_VENDOR_RE = re.compile(
    r"(^|[\\/])(tests?|__tests__|spec|specs|__mocks__|vendor|node_modules|examples?|fixtures?|\.git|dist|build"
    r"|coverage)([\\/]|$)|\.(test|spec)\.[A-Za-z]+$",
    re.IGNORECASE,
)
DOC_FILE_RE = re.compile(r"\.(md|mdx|markdown|json|json5|jsonc|txt|rst|lock|ya?ml|toml|csv)$", re.IGNORECASE)

TEST_VENDOR_FACTOR = 0.3
DOC_FACTOR = 0.5

FLAG_TEST_VENDOR = 1
FLAG_DOC = 2


def prior_flags(path: str) -> int:
    """Bit set of the demotions that apply to ``path``."""
    flags = 0
    if TEST_VENDOR_RE.search(path):
        flags |= FLAG_TEST_VENDOR
    if DOC_FILE_RE.search(path):
        flags |= FLAG_DOC
    return flags


def centrality_factor(importers: int) -> float:
    """``1 + ln(1 + c) / 4`` for ``c > 0`` importing files, else 1."""
    return 1.0 + math.log(1 + importers) / 4 if importers > 0 else 1.0


def prior_multiplier(path: str, *, demote_test_vendor: bool = True, demote_docs: bool = True,
                     centrality: Mapping[str, int] | None = None) -> float:
    """The product of every prior that applies to ``path`` (reference form)."""
    m = 1.0
    flags = prior_flags(path)
    if demote_test_vendor and flags & FLAG_TEST_VENDOR:
        m *= TEST_VENDOR_FACTOR
    if demote_docs and flags & FLAG_DOC:
        m *= DOC_FACTOR
    if centrality:
        m *= centrality_factor(int(centrality.get(path, 0) or 0))
    return m


def centrality_from_reverse_deps(reverse_deps: Mapping[str, object] | None, normalize=None) -> dict[str, int]:
    """Importer counts from a ``file -> importers`` mapping; files with none are left out."""
    out: dict[str, int] = {}
    if not reverse_deps:
        return out
    for path, importers in reverse_deps.items():
        n = len(importers) if importers is not None else 0  # type: ignore[arg-type]
        if n > 0:
            key = normalize(path) if normalize else path
            out[key] = out.get(key, 0) + n
    return out


__all__ = [
    "DOC_FILE_RE",
    "TEST_VENDOR_RE",
    "centrality_factor",
    "centrality_from_reverse_deps",
    "prior_flags",
    "prior_multiplier",
]
