"""File kinds: the language vocabulary of ``lang:`` filters, the ``lang`` parameter
and the project walk, as views of the language registry (:mod:`codelex.languages`,
the source of truth)."""

from __future__ import annotations

from codelex.languages import ALIASES, LANGUAGES, canonical_kind, extname, kind_of
from codelex.languages import EXTENSION_KIND as EXTENSION_KIND

#: Kind -> its extensions: a view of the language registry (:mod:`codelex.languages`), where kinds are defined.
KINDS: dict[str, tuple[str, ...]] = {lang.kind: lang.extensions for lang in LANGUAGES}

#: The short and common names people type for a kind (``lang:py``, ``--lang c++``): each maps to
#: one key of :data:`KINDS`.  Matched case-insensitively, like the kinds themselves.
KIND_ALIASES: dict[str, str] = ALIASES

NON_CODE_KINDS: frozenset[str] = frozenset(lang.kind for lang in LANGUAGES if not lang.code)
CODE_KINDS: frozenset[str] = frozenset(KINDS) - NON_CODE_KINDS


def supported_kinds() -> str:
    """The kinds, sorted and comma-joined (for error messages)."""
    return ", ".join(sorted(KINDS))


__all__ = ["CODE_KINDS", "EXTENSION_KIND", "KINDS", "KIND_ALIASES", "NON_CODE_KINDS", "canonical_kind", "extname",
           "kind_of", "supported_kinds"]
