"""The ``paths`` parameter: minimatch-style globs over the stored, ``/``-separated paths."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from codelex.defaults import WINDOWS


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a minimatch-style glob (``**``, ``*``, ``?``, ``[...]``, ``{a,b}``; dot files match)."""
    i, n, out = 0, len(pattern), []
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                if j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")  # "**/" also matches zero directories
                    j += 1
                else:
                    out.append(".*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:  # unbalanced brace: treat the pattern literally
        return re.compile(re.escape(pattern), re.IGNORECASE if WINDOWS else 0)
    return re.compile("".join(out), re.IGNORECASE if WINDOWS else 0)


def paths_predicate(patterns: Iterable[str] | None):
    """``path -> bool`` for the ``paths`` parameter (None when it selects everything).

    A file matches a pattern when the glob matches its path, or the path lies
    under it (a bare directory scopes its whole subtree).
    """
    if patterns is None:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    cleaned = []
    for pat in patterns:
        if not isinstance(pat, str):
            raise TypeError(f"paths must be strings, not {type(pat).__name__}")
        pat = pat.strip().replace("\\", "/")
        while pat.startswith("./"):
            pat = pat[2:]
        pat = pat.rstrip("/")
        if pat:
            cleaned.append(pat)
    if not cleaned:
        return None
    regexes = [(glob_regex(p), glob_regex(p + "/**")) for p in cleaned]

    def predicate(path: str) -> bool:
        return any(a.fullmatch(path) or b.fullmatch(path) for a, b in regexes)

    return predicate


__all__ = ["glob_regex", "paths_predicate"]
