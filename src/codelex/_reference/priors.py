"""Reference priors: a path's multiplier computed directly (tests only).

The production path keeps the prior flags per slot and builds cached
multiplier arrays (:mod:`codelex.lexical.priors`); this is the oracle.
"""

from __future__ import annotations

from collections.abc import Mapping

from codelex.lexical.priors import (
    DOC_FACTOR,
    FLAG_DOC,
    FLAG_TEST_VENDOR,
    TEST_VENDOR_FACTOR,
    centrality_factor,
    prior_flags,
)


def prior_multiplier(path: str, *, demote_test_vendor: bool = True, demote_docs: bool = True,
                     centrality: Mapping[str, int] | None = None) -> float:
    """The product of every prior that applies to ``path``."""
    m = 1.0
    flags = prior_flags(path)
    if demote_test_vendor and flags & FLAG_TEST_VENDOR:
        m *= TEST_VENDOR_FACTOR
    if demote_docs and flags & FLAG_DOC:
        m *= DOC_FACTOR
    if centrality:
        m *= centrality_factor(int(centrality.get(path, 0) or 0))
    return m


__all__ = ["prior_multiplier"]
