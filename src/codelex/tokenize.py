"""Identifier-aware tokenization (the first stage after the walk).

``getUserByID`` becomes ``getuserbyid, get, user, by, id``: the whole
identifier (lowercased) first, then its camelCase / snake_case / acronym /
digit pieces of at least two characters, stopwords removed.  The native core
does the work; ``codelex._reference`` is the executable specification.
"""

from __future__ import annotations

from codelex._native import _core

STOPWORDS: frozenset[str] = frozenset(
    "the and for let var const function return if else import export from class interface "
    "type enum new this self void null true false async await public private protected "
    "static def fn func struct impl pub use mod in of as is not with".split()
)

Vocabulary = _core.Vocabulary


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
    return _core.split_identifier(identifier)


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
    return _core.tokenize_line(line)


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
    return _core.tokenize_document(content, vocabulary)


__all__ = ["STOPWORDS", "Vocabulary", "split_identifier", "tokenize_document", "tokenize_line"]
