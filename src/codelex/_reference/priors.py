"""Reference priors: a path's multiplier computed directly (tests only).

The production path keeps the prior flags per slot and builds cached
multiplier arrays (:mod:`codelex.lexical.priors`); this is the oracle, and
states the priors on its own (it imports nothing it checks):

- a test, vendored, example, fixture or build-output path (a directory named
  ``test``, ``tests``, ``__tests__``, ``spec``, ``specs``, ``__mocks__``,
  ``vendor``, ``node_modules``, ``example(s)``, ``fixture(s)``, ``.git``,
  ``dist``, ``build`` or ``coverage``, any case; or a ``*.test.*`` /
  ``*.spec.*`` file) is multiplied by 0.3;
- documentation and data (``.md``, ``.mdx``, ``.markdown``, ``.json``,
  ``.json5``, ``.jsonc``, ``.txt``, ``.rst``, ``.lock``, ``.yml``,
  ``.yaml``, ``.toml``, ``.csv``, any case) by 0.5;
- a file that ``c > 0`` files import by ``1 + ln(1 + c) / 4``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

TEST_VENDOR_FACTOR = 0.3
DOC_FACTOR = 0.5

_TEST_VENDOR_DIRS = frozenset({
    "test", "tests", "__tests__", "spec", "specs", "__mocks__", "vendor", "node_modules", "example", "examples",
    "fixture", "fixtures", ".git", "dist", "build", "coverage"})
_TEST_VENDOR_SUFFIX = re.compile(r"\.(test|spec)\.[A-Za-z]+", re.IGNORECASE)
_DOC_EXTENSIONS = frozenset({
    "md", "mdx", "markdown", "json", "json5", "jsonc", "txt", "rst", "lock", "yml", "yaml", "toml", "csv"})


def _is_test_or_vendor(path: str) -> bool:
    parts = re.split(r"[\\/]", path)
    if any(part.lower() in _TEST_VENDOR_DIRS for part in parts):
        return True
    last = parts[-1]
    return any(_TEST_VENDOR_SUFFIX.fullmatch(last, i) for i, c in enumerate(last) if c == ".")


def _is_doc(path: str) -> bool:
    dot = path.rfind(".")
    return dot >= 0 and path[dot + 1:].lower() in _DOC_EXTENSIONS


def _centrality(importers: int) -> float:
    return 1.0 + math.log(1 + importers) / 4 if importers > 0 else 1.0


def prior_multiplier(path: str, *, demote_test_vendor: bool = True, demote_docs: bool = True,
                     centrality: Mapping[str, int] | None = None) -> float:
    """The product of every prior that applies to ``path``."""
    m = 1.0
    if demote_test_vendor and _is_test_or_vendor(path):
        m *= TEST_VENDOR_FACTOR
    if demote_docs and _is_doc(path):
        m *= DOC_FACTOR
    if centrality:
        m *= _centrality(int(centrality.get(path, 0) or 0))
    return m


__all__ = ["DOC_FACTOR", "TEST_VENDOR_FACTOR", "prior_multiplier"]
