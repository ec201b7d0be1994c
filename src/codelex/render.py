"""Presentation: how paths, text and queries leave the process (CLI, ``--json``, MCP).

One rule for every surface:

- **Paths** are rendered by :func:`display_path`: each character that is
  printable stays as it is; a backslash becomes ``\\\\``; newline, tab and
  carriage return become ``\\n``, ``\\t``, ``\\r``; any other control or
  non-printable character, and every byte of a file name that is not valid
  UTF-8 (held as a ``surrogateescape`` code point, as :func:`os.fsdecode`
  gives it), becomes ``\\xHH`` per byte.  The form is plain, valid UTF-8,
  cannot move a terminal's cursor, and is reversible: :func:`parse_display_path`
  gives the path back, so a tool that takes a path (``codelex show``, the MCP
  tools) accepts what another printed.
- **Free text** shown to a person (a best line, an echoed query) goes through
  :func:`display_text`: the same escapes except that backslashes stay.
- **Echoed queries** are cut by :func:`echo_query` to 200 characters, with an
  ellipsis and the original length.
- :func:`wire_text` is the last guard before bytes leave: whatever lone
  surrogate is left becomes ``\\xHH``, so encoding to UTF-8 can never fail.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "ECHO_MAX_CHARS",
    "best_line_text",
    "display_path",
    "display_text",
    "echo_query",
    "error_text",
    "format_age",
    "parse_display_path",
    "wire_text",
]

#: Longest query echoed back verbatim (a longer one is cut, with its length).
ECHO_MAX_CHARS = 200

_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# Characters that need a look: anything outside printable ASCII.  Printable
# ASCII (the common case) is taken as is by one regex search.
_NEEDS_WORK = re.compile(r"[^\x20-\x5b\x5d-\x7e]")


def _escape(text: str, *, backslash: bool, keep_tab: bool, keep_breaks: bool = False) -> str:
    if _NEEDS_WORK.search(text) is None:
        return text
    out = []
    for i, ch in enumerate(text):
        o = ord(ch)
        if 0x20 <= o < 0x7F:
            out.append("\\\\" if ch == "\\" and backslash else ch)
        elif 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:  # any other lone surrogate (surrogatepass)
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
        elif (ch == "\t" and keep_tab) or (keep_breaks and (ch == "\n" or text.startswith("\r\n", i))):
            out.append(ch)  # (a lone CR is escaped: it could hide what precedes it on a terminal)
        elif ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8")))
    return "".join(out)


def display_path(path: str) -> str:
    """The reversible, printable, valid-UTF-8 form of a path (see the module docstring).

    Examples
    --------
    >>> import os
    >>> display_path(os.fsdecode(b"bad\\xff.py"))
    'bad\\\\xff.py'
    >>> display_path("\\x1b[2Jx.py")
    '\\\\x1b[2Jx.py'
    >>> parse_display_path(display_path("a\\\\b\\nc.py")) == "a\\\\b\\nc.py"
    True
    """
    return _escape(path, backslash=True, keep_tab=False)


def display_text(text: str) -> str:
    """``text`` with control characters and lone surrogates escaped (for people; not reversible)."""
    return _escape(text, backslash=False, keep_tab=True)


_ESCAPE = re.compile(r"\\(\\|n|t|r|x[0-9a-fA-F]{2})")
_UNESCAPE = {"\\": b"\\", "n": b"\n", "t": b"\t", "r": b"\r"}


def parse_display_path(text: str) -> str:
    """The path that :func:`display_path` rendered as ``text``.

    A path that needs no escapes is returned unchanged; a backslash that does
    not start one of the escapes is kept as it is.
    """
    if "\\" not in text:
        return text
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(text):
        out += text[pos:m.start()].encode("utf-8", "surrogateescape")
        code = m.group(1)
        out += _UNESCAPE[code] if code in _UNESCAPE else bytes([int(code[1:], 16)])
        pos = m.end()
    out += text[pos:].encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")


def echo_query(query: str, max_chars: int = ECHO_MAX_CHARS) -> str:
    """``query`` as it may be echoed back: at most ``max_chars`` characters, escaped for display.

    >>> echo_query("x" * 300, 10)
    'xxxxxxxxxx… (300 characters)'
    """
    if len(query) > max_chars:
        return f"{display_text(query[:max_chars])}… ({len(query):,} characters)"
    return display_text(query)


def error_text(exc: BaseException, max_chars: int = 5 * ECHO_MAX_CHARS) -> str:
    """An exception's message as it may be shown: its first line, escaped, at most ``max_chars`` characters
    (a message can quote a megabyte of input back)."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return echo_query(message, max_chars)


def wire_text(text: str) -> str:
    """``text`` as it leaves in JSON and MCP answers: always encodable as UTF-8, and as safe to print as plain output.

    Line breaks (``\\n``, ``\\r\\n``) and tabs stay (JSON escapes them); a lone
    carriage return becomes ``\\r`` as in plain output (printed, it would
    return to the line's start and hide what precedes it); every other control or
    non-printable character (C0 and C1 controls such as U+009B, bidi
    overrides such as U+202E) and every lone surrogate becomes ``\\xHH``
    per UTF-8 byte, as in :func:`display_text`.
    """
    if _WIRE_WORK.search(text) is None:  # printable ASCII and line breaks: as is (the common case)
        return text
    return _escape(text, backslash=False, keep_tab=True, keep_breaks=True)


_WIRE_WORK = re.compile(r"[^\x20-\x7e\n\t\r]|\r(?!\n)")


def format_age(seconds: float) -> str:
    """``42s``, ``7m``, ``3h`` or ``2d``: an age rounded to its largest unit."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{round(seconds)}s"
    if seconds < 3600:
        return f"{round(seconds / 60)}m"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h"
    return f"{round(seconds / 86400)}d"


def best_line_text(root: str | os.PathLike[str], path: str, line: int, max_chars: int = 200, *,
                   strip: bool = True) -> str:
    """The text of ``path``'s line ``line`` (1-based), stripped and cut to ``max_chars``; "" when unreadable.

    With ``strip=False`` only the line break is removed (editors' columns
    count the indentation).

    ``path`` is root-relative and opened through :mod:`codelex.safefs`: a
    file that became a FIFO, a device or a symbolic link since it was
    indexed (or is reached through one) gives "" at once.
    """
    from codelex.safefs import open_file

    try:
        fd, _ = open_file(root, path)
        with os.fdopen(fd, "rb") as f:
            for number, text in enumerate(f, 1):
                if number == line:
                    decoded = text.decode("utf-8", "replace")
                    return (decoded.strip() if strip else decoded.rstrip("\r\n"))[:max_chars]
    except (OSError, ValueError):  # (ValueError: UnsafePathError, an unusable path)
        pass
    return ""
