"""Word forms for the code ranking: a query token's stem variants among the vocabulary's terms.

``routes``, ``routing`` and ``route`` share the English stem ``rout``; with a
stem weight above 0, a query for one also scores the others, at that
weight.  Stemming is PyStemmer's (Snowball), applied to the vocabulary once
and extended as it grows, so a query costs a dictionary lookup.  Only body
terms are stemmed; the fields' terms (behind their prefix byte) are not.
"""

from __future__ import annotations

import threading

__all__ = ["StemTable", "stemmer_available"]


def stemmer_available() -> str | None:
    """None when PyStemmer is installed, else why not."""
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return "stem variants need PyStemmer: pip install 'codelex[stems]'"
    return None


class StemTable:
    """Stems of a vocabulary's terms, grouped: ``variants(token)`` in vocabulary order."""

    def __init__(self, vocabulary) -> None:
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._vocabulary = vocabulary
        self._done = 0
        self._groups: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _extend(self) -> None:
        n = len(self._vocabulary)
        if self._done >= n:
            return
        with self._lock:
            terms = [self._vocabulary.term(i) for i in range(self._done, n)]
            body = [t for t in terms if t[:1] >= "\x04"]
            for term, stem in zip(body, self._stemmer.stemWords(body)):
                self._groups.setdefault(stem, []).append(term)
            self._done = n

    def variants(self, token: str) -> list[str]:
        """The other terms with ``token``'s stem, in vocabulary order."""
        self._extend()
        return [t for t in self._groups.get(self._stemmer.stemWord(token), ()) if t != token]
