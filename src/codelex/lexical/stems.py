"""Word forms for the code ranking: a query token's stem variants among the vocabulary's terms.

``routes``, ``routing`` and ``route`` share the English stem ``rout``; with a
stem weight above 0, a prose query for one also counts the others, at that
weight, inside the token's own tf~ (one idf, one saturation per query
token).  Only prose gets variants (:func:`is_prose`): an identifier means
what it says.  Stemming is PyStemmer's (Snowball).  A loaded
vocabulary's sorted base is searched in place by prefix; the words added
since (all of them, for an index built in this process) are read once
(natively), sorted and extended as the vocabulary grows; a token's variants
come from a bisection among the words that share its stem's prefix, and
are cached.  Only body terms are words (the fields' terms
sit behind a prefix byte); each variant's field terms are looked up like the
token's.
"""

from __future__ import annotations

import bisect
import threading

from codelex.defaults import STEM_MAX_WORD as MAX_WORD
from codelex.defaults import STEM_MIN_WORD as MIN_WORD

__all__ = ["StemTable", "is_prose", "stemmer_available"]


def is_prose(terms: str) -> bool:
    """Whether a query's search terms read as prose: two or more words, each lower-case letters only.

    ``how are routes registered`` is prose; ``parse_config``,
    ``HTTPServer``, ``x86 bug`` and a single word are not.
    """
    words = terms.split()
    return len(words) >= 2 and all(w.isalpha() and w.islower() for w in words)


def stemmer_available() -> str | None:
    """None when PyStemmer is installed, else why not."""
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return "stem variants need PyStemmer: pip install pystemmer"
    return None


class StemTable:
    """A vocabulary's words and their stems: ``variants(token)``, the other words with ``token``'s stem.

    A word is a term of ASCII lower-case letters, 3 to 24 long.  The
    variants of a word with stem ``s`` are the words with stem ``s`` that
    begin with ``s`` less its last letter (Snowball's English stems strip
    suffixes and change at most that letter), in alphabetical order: a
    bisection in the sorted words, then stems of the few candidates.  The
    words are read once (natively) and extended as the vocabulary grows.
    """

    def __init__(self, vocabulary) -> None:
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._vocabulary = vocabulary
        # A loaded vocabulary's sorted base is searched in place (base_words);
        # only the terms added since are read into the list.
        self._base = vocabulary.base_size
        self._done = self._base
        self._words: list[str] = []
        self._stems: dict[str, str] = {}
        self._cache: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _extend(self) -> None:
        if self._done >= len(self._vocabulary):
            return
        with self._lock:
            n = len(self._vocabulary)
            if self._done >= n:
                return
            new = self._vocabulary.words(self._done, MIN_WORD, MAX_WORD)
            if len(new) < 1024:  # an edit's few new words
                for w in new:
                    bisect.insort(self._words, w)
            else:
                self._words = sorted(self._words + new)
            self._done = n
            self._cache = {}

    def _stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stemmer.stemWord(word)
        return stem

    def variants(self, token: str) -> list[str]:
        """The other words with ``token``'s stem (none unless ``token`` is a word)."""
        self._extend()
        cached = self._cache.get(token)
        if cached is not None:
            return cached
        out: list[str] = []
        if MIN_WORD <= len(token) <= MAX_WORD and token.isascii() and token.isalpha() and token.islower():
            stem = self._stem(token)
            prefix = stem[:-1] if len(stem) > 1 else stem
            words = self._words
            i = bisect.bisect_left(words, prefix)
            candidates = []
            while i < len(words) and words[i].startswith(prefix):
                candidates.append(words[i])
                i += 1
            if self._base:
                candidates = sorted(candidates + self._vocabulary.base_words(prefix, MIN_WORD, MAX_WORD))
            out = [w for w in candidates if w != token and self._stem(w) == stem]
        if len(self._cache) > 4096:
            self._cache = {}
        self._cache[token] = out
        return out
