"""Reference tokenizer: the oracle of ``csrc/text`` (pure Python, tests only).

The rules follow the pi-lens word index (see README, "Tokenization"), with one
deliberate extension: non-ASCII letters, digits and combining marks are
identifier characters, and lowercasing is ``str.lower()``.  The stopwords are
the one list, :data:`codelex.defaults.STOPWORDS` (the native table is
generated from it).
"""

from __future__ import annotations

import re
import unicodedata

from codelex.defaults import STOPWORDS

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


__all__ = ["STOPWORDS", "identifiers", "split_identifier", "split_lines", "tokenize_document", "tokenize_line"]
