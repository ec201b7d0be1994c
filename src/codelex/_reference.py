"""Pure-Python reference implementation: the oracle for the native core.

Small and obviously correct rather than fast.  Tests compare the compiled
module against these functions; nothing at run time falls back to them.

The rules follow the pi-lens word index (see README, "Tokenization"), with one
deliberate extension: non-ASCII letters, digits and combining marks are
identifier characters, and lowercasing is ``str.lower()``.
"""

from __future__ import annotations

import math
import re
import unicodedata

STOPWORDS = frozenset(
    "the and for let var const function return if else import export from class interface "
    "type enum new this self void null true false async await public private protected "
    "static def fn func struct impl pub use mod in of as is not with".split()
)

# --- character classes ------------------------------------------------------


def is_id_start(ch: str) -> bool:
    """``[A-Za-z_$]``, or a non-ASCII letter."""
    if ch < "\x80":
        return ch.isalpha() or ch in "_$"
    return ch.isalpha()


def is_chunk_char(ch: str) -> bool:
    """``[A-Za-z0-9]``, or a non-ASCII letter, number or combining mark."""
    if ch < "\x80":
        return ch.isalnum()
    if "\ud800" <= ch <= "\udfff":
        return False
    return ch.isalnum() or unicodedata.category(ch) in ("Mn", "Mc")


def is_id_continue(ch: str) -> bool:
    """``[A-Za-z0-9_$]``, or a non-ASCII chunk character."""
    return ch in "_$" or is_chunk_char(ch)


def char_class(ch: str) -> str:
    """One letter per class: U(pper), L(ower), A (other letter), D(igit), M(ark)."""
    if ch.isupper():
        return "U"
    if ch.islower():
        return "L"
    if ch.isalpha():
        return "A"
    if ch.isnumeric():
        return "D"
    return "M"


# The four split rules of the original, written over class letters instead of
# [A-Z]/[a-z]/[0-9] and applied in the same order with the same regex
# replacement semantics.
_SPLIT_RULES = (
    (re.compile(r"([LD])(U)"), r"\1 \2"),  # camel: ([a-z0-9])([A-Z])
    (re.compile(r"(U)(UL)"), r"\1 \2"),  # acronym: ([A-Z])([A-Z][a-z])
    (re.compile(r"([ULA])(D)"), r"\1 \2"),  # letter|digit: ([A-Za-z])([0-9])
    (re.compile(r"(D)([ULA])"), r"\1 \2"),  # digit|letter: ([0-9])([A-Za-z])
)


def _pieces(chunk: str) -> list[str]:
    classes = "".join(char_class(c) for c in chunk)
    for pattern, repl in _SPLIT_RULES:
        classes = pattern.sub(repl, classes)
    pieces, current, i = [], [], 0
    for cls in classes:
        if cls == " ":
            pieces.append("".join(current))
            current = []
        else:
            current.append(chunk[i])
            i += 1
    pieces.append("".join(current))
    return [p for p in pieces if p]


def _chunks(identifier: str) -> list[str]:
    chunks, current = [], []
    for ch in identifier:
        if is_chunk_char(ch):
            current.append(ch)
        elif current:
            chunks.append("".join(current))
            current = []
    if current:
        chunks.append("".join(current))
    return chunks


def split_identifier(identifier: str | bytes) -> list[str]:
    """Tokens of one identifier: the whole (lowercased) first, then new pieces."""
    if isinstance(identifier, bytes):
        identifier = identifier.decode("utf-8", "replace")
    if not isinstance(identifier, str):
        raise TypeError(f"identifier must be str or bytes, not {type(identifier).__name__}")
    out: list[str] = []
    whole = identifier.lower()
    if len(whole) >= 2 and whole not in STOPWORDS:
        out.append(whole)
    for chunk in _chunks(identifier):
        for piece in _pieces(chunk):
            low = piece.lower()
            if len(low) >= 2 and low not in STOPWORDS and low not in out:
                out.append(low)
    return out


def _as_text(text: str | bytes, what: str) -> str:
    if isinstance(text, bytes):
        # Ill-formed bytes become U+FFFD, which is a separator.
        return text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")
    return text


def identifiers(line: str) -> list[str]:
    """Identifier runs: an id-start character followed by id-continue characters."""
    runs, i, n = [], 0, len(line)
    while i < n:
        if is_id_start(line[i]):
            j = i + 1
            while j < n and is_id_continue(line[j]):
                j += 1
            runs.append(line[i:j])
            i = j
        else:
            i += 1
    return runs


def tokenize_line(line: str | bytes) -> list[str]:
    """Tokens of every identifier of the text, without de-duplication across them."""
    line = _as_text(line, "line")
    out: list[str] = []
    for ident in identifiers(line):
        out.extend(split_identifier(ident))
    return out


def split_lines(text: str | bytes) -> list[str]:
    """Lines split on ``\\r?\\n``, as the index numbers them (from 1)."""
    return re.split(r"\r?\n", _as_text(text, "content"))


def tokenize_document(text: str | bytes) -> list[tuple[int, str]]:
    """Every token occurrence of a document as ``(line, token)``, in text order."""
    return [(no, tok) for no, line in enumerate(split_lines(text), 1) for tok in tokenize_line(line)]


# --- index and BM25 ---------------------------------------------------------

K1 = 1.2
B = 0.75


class ReferenceIndex:
    """Dictionary-based word index: postings token -> file -> set of lines."""

    def __init__(self, docs=()):
        self.postings: dict[str, dict[str, set[int]]] = {}
        self.doc_len: dict[str, int] = {}
        for path, content in docs:
            self.update(path, content)

    def update(self, path: str, content: str | bytes) -> None:
        self.remove(path)
        length = 0
        for line_no, token in tokenize_document(content):
            length += 1
            self.postings.setdefault(token, {}).setdefault(path, set()).add(line_no)
        self.doc_len[path] = length

    def remove(self, path: str) -> bool:
        if path not in self.doc_len:
            return False
        del self.doc_len[path]
        for token in list(self.postings):
            files = self.postings[token]
            if files.pop(path, None) is not None and not files:
                del self.postings[token]
        return True

    @property
    def total_tokens(self) -> int:
        return sum(self.doc_len.values())

    def idf(self, token: str) -> float:
        n = len(self.doc_len) or 1
        df = len(self.postings.get(token, {}))
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def search(self, terms: str, *, limit=20, allowed=None, multiplier=None):
        """BM25 over ``terms``; returns ``[(path, score, hits, best_line)]``.

        ``allowed(path)`` filters files after df is taken (df stays global);
        ``multiplier(path)`` is the prior applied to a file's score.
        """
        tokens = list(dict.fromkeys(tokenize_line(terms)))
        if not tokens or limit <= 0:
            return []
        n = len(self.doc_len) or 1
        avgdl = self.total_tokens / n or 1.0
        scores: dict[str, float] = {}
        hits: dict[str, int] = {}
        line_weight: dict[str, dict[int, float]] = {}
        for token in tokens:
            files = self.postings.get(token)
            if not files:
                continue
            idf = self.idf(token)
            for path, lines in files.items():
                if allowed is not None and not allowed(path):
                    continue
                tf = len(lines)
                dl = self.doc_len.get(path, avgdl)
                score = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
                scores[path] = scores.get(path, 0.0) + score
                hits[path] = hits.get(path, 0) + tf
                weights = line_weight.setdefault(path, {})
                for line in lines:
                    weights[line] = weights.get(line, 0.0) + idf
        results = []
        for path, score in scores.items():
            if multiplier is not None:
                score *= multiplier(path)
            weights = line_weight[path]
            best = min(weights, key=lambda ln: (-weights[ln], ln))
            results.append((path, score, hits[path], best))
        results.sort(key=lambda r: (-r[1], r[0]))
        return results[:limit]
