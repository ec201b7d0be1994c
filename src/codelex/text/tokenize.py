"""Identifier-aware tokenization (the stage after ingest and structure).

``getUserByID`` becomes ``getuserbyid, get, user, by, id``: the whole
identifier (lowercased) first, then its camelCase / snake_case / acronym /
digit pieces of at least two characters, stopwords removed.  The native core
(``csrc/text``) does the work; ``codelex._reference.tokenize`` is the
executable specification.  The stopwords are :data:`codelex.defaults.STOPWORDS`,
from which the native table is generated at build time.
"""

from __future__ import annotations

from codelex._native import text as _text
from codelex.defaults import STOPWORDS
from codelex.languages import definition_rules_of

#: Interned token strings with dense ids (the index's term dictionary).
Vocabulary = _text.Vocabulary


def split_identifier(identifier: str | bytes) -> list[str]:
    """Split one identifier into index tokens.

    Parameters
    ----------
    identifier : str or bytes
        The identifier (any text; bytes are decoded as UTF-8, ill-formed
        sequences becoming U+FFFD).

    Returns
    -------
    list of str
        The whole identifier lowercased (when it has at least two characters
        and is not a stopword), followed by each new lowercased piece of at
        least two characters that is not a stopword.  Pieces come from
        splitting on non-alphanumeric characters, then at camelCase,
        ACRONYMWord, letter/digit and digit/letter boundaries.

    Raises
    ------
    TypeError
        If ``identifier`` is neither str nor bytes.

    Examples
    --------
    >>> split_identifier("getUserByID")
    ['getuserbyid', 'get', 'user', 'by', 'id']
    >>> split_identifier("x86_64")
    ['x86_64', '86', '64']
    """
    return _text.split_identifier(identifier)


def tokenize_line(line: str | bytes) -> list[str]:
    """Tokenize every identifier of a line of text.

    Parameters
    ----------
    line : str or bytes
        Text; identifiers are runs of a letter, ``_`` or ``$`` followed by
        letters, digits, marks, ``_`` or ``$``.  In bytes, ill-formed UTF-8
        acts as a separator.

    Returns
    -------
    list of str
        The concatenation of :func:`split_identifier` over the identifiers, in
        order (repeats across identifiers are kept).

    Raises
    ------
    TypeError
        If ``line`` is neither str nor bytes.

    Examples
    --------
    >>> tokenize_line("  const userName = getUser(accountId);")
    ['username', 'user', 'name', 'getuser', 'get', 'user', 'accountid', 'account', 'id']
    """
    return _text.tokenize_line(line)


def tokenize_document(content: str | bytes, vocabulary: Vocabulary):
    """Tokenize a whole document into interned token occurrences (GIL released).

    Parameters
    ----------
    content : str or bytes
        The document; lines are split on ``\\r?\\n`` and numbered from 1.
    vocabulary : Vocabulary
        Term dictionary that new tokens are added to.

    Returns
    -------
    terms, lines : numpy.ndarray of uint32
        Occurrence ``i`` is token id ``terms[i]`` on line ``lines[i]``.
    """
    return _text.tokenize_document(content, vocabulary)


def utf8_length(content: str | bytes) -> int:
    """Bytes of ``content`` in UTF-8, as the tokenizer reads it (lone surrogates count 3 bytes).

    Raises
    ------
    TypeError
        If ``content`` is neither str nor bytes.
    """
    return _text.utf8_length(content)


__all__ = ["STOPWORDS", "Vocabulary", "split_identifier", "tokenize_document", "tokenize_line", "utf8_length"]


def scan_definitions(path: str, content: str | bytes) -> list[tuple[str, int]]:
    """The names a file defines, by the light definition scanner (any language).

    This is what the code ranking's ``defs`` field holds when no definitions
    are given: line by line, ``def``/``class``/``fn``/``func``/``struct``…
    heads, function and method heads of C-like languages, upper-case
    constants and functions bound to names (``const f = () =>``).  It needs
    no grammar and runs at about the tokenizer's speed.

    Parameters
    ----------
    path : str
        The file's path: its extension selects the rule set, as the language
        registry says (:func:`codelex.languages.definition_rules_of`; Go's
        adds ``const``, ``var`` and ``type`` declarations and blocks).
    content : str or bytes
        The file's text (bytes are read as UTF-8).

    Returns
    -------
    list of (str, int)
        ``(name, line)`` pairs in line order, lines 1-based.

    Raises
    ------
    TypeError
        If ``path`` is not str or ``content`` is neither str nor bytes.

    Examples
    --------
    >>> scan_definitions("a.py", "class Router:\\n    def add_route(self, path):\\n        pass\\n")
    [('Router', 1), ('add_route', 2)]
    """
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    return _text.scan_definitions(definition_rules_of(path), content)
