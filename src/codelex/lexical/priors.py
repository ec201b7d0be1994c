"""Path priors: test/vendor and doc/data demotions, import-graph centrality.

Priors are multipliers on a file's BM25 score.  They are evaluated on the
project-relative path (the original used absolute paths, demoting a whole
project that happens to live under ``build/`` or ``tests/``).  Each slot
keeps its prior flags; :func:`slot_multipliers` turns them into the cached
per-slot multiplier array that native scoring consumes.
(``codelex._reference.priors`` computes the same product path by path.)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

import numpy as np

TEST_VENDOR_RE = re.compile(
    r"(^|[\\/])(tests?|__tests__|spec|specs|__mocks__|vendor|node_modules|examples?|fixtures?|\.git|dist|build"
    r"|coverage)([\\/]|$)|\.(test|spec)\.[A-Za-z]+$",
    re.IGNORECASE,
)
DOC_FILE_RE = re.compile(r"\.(md|mdx|markdown|json|json5|jsonc|txt|rst|lock|ya?ml|toml|csv)$", re.IGNORECASE)

# The ranking pipeline's path kinds (codelex.rank.pipeline): test files by name as well as by directory,
# re-export hubs and package metadata, declaration stubs (the language registry's facts), compat/legacy copies,
# internal directories; and, apart, the auxiliary code around a project's source (examples, samples, demos,
# benchmarks, docs' snippets).
COMPAT_DIR_RE = re.compile(r"(?:^|/)(?:compat|_compat|legacy)(?:/|$)")
AUXILIARY_DIR_RE = re.compile(r"(?:^|/)(?:_?examples?|samples?|demos?|docs?_src|benches|benchmarks?|bench)(?:/|$)")
INTERNAL_DIR_RE = re.compile(r"(?:^|/)(?:_?internal|detail|impl)(?:/|$)")


@functools.lru_cache(maxsize=1 << 16)
def path_kind_factor(path: str, reexport: bool = True) -> float:
    """The pipeline's multiplier for what kind of file ``path`` is (1.0 for an ordinary source file).

    ``reexport=False``: a package's ``__init__.py`` that defines names of its own is an ordinary file.
    """
    from codelex.defaults import (PIPELINE_COMPAT, PIPELINE_DECLARATIONS, PIPELINE_INTERNAL, PIPELINE_REEXPORT,
                                  PIPELINE_TEST_FILE)

    from codelex.languages import DECLARATION_RE, REEXPORT_NAMES, is_test_file

    factor = 1.0
    if is_test_file(path):
        factor *= PIPELINE_TEST_FILE
    if reexport and path.rsplit("/", 1)[-1] in REEXPORT_NAMES:
        factor *= PIPELINE_REEXPORT
    if COMPAT_DIR_RE.search(path):
        factor *= PIPELINE_COMPAT
    if DECLARATION_RE.search(path):  # (never admitted by a project's walk; a WordIndex built by hand may hold them)
        factor *= PIPELINE_DECLARATIONS
    if INTERNAL_DIR_RE.search(path):
        factor *= PIPELINE_INTERNAL
    return factor


@functools.lru_cache(maxsize=1 << 16)
def auxiliary_factor(path: str) -> float:
    """The pipeline's multiplier for code around a project's source rather than of it: examples, samples, demos,
    benchmarks and documentation snippets (``docs_src/``); 1.0 elsewhere."""
    from codelex.defaults import PIPELINE_AUXILIARY

    return PIPELINE_AUXILIARY if AUXILIARY_DIR_RE.search(path) else 1.0


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


def slot_multipliers(table, n: int, demote_test_vendor: bool, demote_docs: bool,
                     centrality: Mapping[str, int] | None) -> tuple[np.ndarray | None, float]:
    """Per-slot priors of the first ``n`` slots of ``table`` and an upper bound of them.

    ``table`` is a :class:`codelex.lexical.doctable.DocTable` (its ``flags(n)``, ``slot_of`` and ``priors``
    cache); not imported here, as the table imports this module for its path rules.

    The demotions never exceed 1; centrality boosts do, so the bound (which
    enables pruning) is the largest boost.  None when every prior is 1.
    """
    key = (bool(demote_test_vendor), bool(demote_docs))
    base = table.priors.get(key)
    if base is None or len(base) < n:
        flags = table.flags(n)
        base = np.ones(n, dtype=np.float64)
        if demote_test_vendor:
            base[(flags & FLAG_TEST_VENDOR) != 0] *= TEST_VENDOR_FACTOR
        if demote_docs:
            base[(flags & FLAG_DOC) != 0] *= DOC_FACTOR
        table.priors[key] = base
    elif len(base) > n:
        base = base[:n]
    cache = getattr(centrality, "cache", None)  # a CentralityMap: its multipliers for this table, once
    ckey = (id(table), n, key)
    if cache is not None:
        hit = cache.get(ckey)
        if hit is not None and hit[0] is table:  # (the table is held: its id cannot be reused meanwhile)
            return hit[1], hit[2]
    if centrality:
        mult = base.copy()
        slot_of = table.slot_of
        top = 1.0
        for path, count in centrality.items():
            slot = slot_of.get(path)
            if slot is not None and slot < n:
                factor = centrality_factor(int(count or 0))
                mult[slot] *= factor
                top = max(top, factor)
        if cache is not None:
            if len(cache) > 8:
                cache.clear()
            cache[ckey] = (table, mult, top)
        return mult, top
    if not demote_test_vendor and not demote_docs:
        return None, 1.0
    return base, 1.0


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
    "DOC_FACTOR",
    "auxiliary_factor",
    "path_kind_factor",
    "DOC_FILE_RE",
    "FLAG_DOC",
    "FLAG_TEST_VENDOR",
    "TEST_VENDOR_FACTOR",
    "TEST_VENDOR_RE",
    "centrality_factor",
    "centrality_from_reverse_deps",
    "prior_flags",
    "slot_multipliers",
]
