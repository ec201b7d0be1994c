"""The ``paths`` parameter: minimatch-style globs over the stored, ``/``-separated paths.

``*`` matches within one path component, ``**`` across components (``**/``
also matches no directory at all), ``?`` one character other than ``/``,
``[...]`` (``[!...]`` or ``[^...]`` negated; a ``]`` first is a member) one
character of a class, ``{a,b}`` either alternative (nested; an unbalanced
brace makes the whole pattern literal).  Dot files match.  On Windows
matching folds case.

Matching takes time linear in the path's length whatever the pattern: a
glob is never handed to a backtracking regex in a form that can backtrack
more than a bounded number of times per character.  Braces are expanded
(at most :data:`MAX_GLOB_ALTERNATIVES` alternatives); each alternative is
cut at its ``**`` into blocks, and, where committing to the earliest match
of a block provably never loses a match (the block ends with ``/``, or the
next one starts with ``*``: what a later match could reach, the earlier one
reaches too), each block is matched inside an atomic group, as CPython's
``fnmatch.translate`` does for ``*`` since 3.9.  The rare pattern where
that does not hold (``**a**/b``, a class that matches ``/``) is matched by
a bit-parallel simulation of the pattern's automaton over the path's
positions instead.  Patterns are capped: :data:`~codelex.defaults.MAX_GLOB_CHARS`
characters each and :data:`~codelex.defaults.MAX_PATH_GLOBS` of them; a bad
one (over a cap, a reversed range such as ``[z-a]``) is a
:class:`~codelex.errors.QueryError`.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable

from codelex.defaults import MAX_GLOB_CHARS, MAX_PATH_GLOBS, WINDOWS
from codelex.errors import QueryError

#: A pattern whose braces expand to more alternatives than this is refused.
MAX_GLOB_ALTERNATIVES = 256
#: Braces nested deeper than this are refused.
MAX_BRACE_DEPTH = 32

# Tokens of one alternative: a one-character matcher (its regex, and whether it can match "/"), STAR (any run of
# characters other than "/") or JUMP ("(?:.*/)?": nothing, or anything that ends with "/"; "**" is JUMP STAR).
_STAR = "STAR"
_JUMP = "JUMP"
_SLASH = ("/", True)
_ATOMIC = sys.version_info >= (3, 11)


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 200 else pattern[:200] + "...")


def _escape_class_char(ch: str) -> str:
    return "\\" + ch if ch.isascii() and not ch.isalnum() else ch


def _class(pattern: str, body: str) -> str:
    """The regex of a ``[...]`` body, every member escaped (``[[:alpha:]]`` is the members ``[:alph`` then
    a ``]``, as it always was, without Python's nested-set warnings)."""
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    parts, k = [], 0
    while k < len(body):
        c = body[k]
        if k + 2 < len(body) and body[k + 1] == "-":
            hi = body[k + 2]
            if hi < c:
                raise QueryError(f"bad glob {_shown(pattern)}: bad character range {c}-{hi}")
            parts.append(f"{_escape_class_char(c)}-{_escape_class_char(hi)}")
            k += 3
        else:
            parts.append(_escape_class_char(c))
            k += 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _parse(pattern: str) -> list:
    """The pattern as a sequence whose items are tokens or alternations (lists of sequences)."""
    root: list = []
    stack: list[tuple[list, list]] = []  # (the alternation's sequences, the sequence that holds it)
    seq = root
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    seq.append(_JUMP)
                    i += 1
                else:
                    seq.extend((_JUMP, _STAR))
                continue
            seq.append(_STAR)
        elif c == "?":
            seq.append(("[^/]", False))
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                seq.append((re.escape(c), False))
            else:
                regex = _class(pattern, pattern[i + 1:j])
                seq.append((regex, bool(re.fullmatch(regex, "/", re.IGNORECASE if WINDOWS else 0))))
                i = j + 1
                continue
        elif c == "{":
            if len(stack) >= MAX_BRACE_DEPTH:
                raise QueryError(f"bad glob {_shown(pattern)}: braces nested more than {MAX_BRACE_DEPTH} deep")
            alternation: list = [[]]
            stack.append((alternation, seq))
            seq.append(alternation)
            seq = alternation[0]
        elif c == "}" and stack:
            _, seq = stack.pop()  # back to the sequence that holds the alternation
        elif c == "," and stack:
            alternation = stack[-1][0]
            alternation.append([])
            seq = alternation[-1]
        else:
            seq.append(_SLASH if c == "/" else (re.escape(c), False))
        i += 1
    if stack:  # an unbalanced brace: the whole pattern is literal
        return [_SLASH if c == "/" else (re.escape(c), False) for c in pattern]
    return root


def _expand(pattern: str, seq: list) -> list[list]:
    """Every alternative of ``seq`` as a flat token list (braces nest at most MAX_BRACE_DEPTH deep)."""
    out: list[list] = [[]]
    for item in seq:
        if isinstance(item, list):
            options = [alt for sub in item for alt in _expand(pattern, sub)]
            if len(out) * len(options) > MAX_GLOB_ALTERNATIVES:
                raise QueryError(f"bad glob {_shown(pattern)}: its braces expand to more than "
                                 f"{MAX_GLOB_ALTERNATIVES} alternatives")
            out = [a + b for a in out for b in options]
        else:
            for alt in out:
                alt.append(item)
    return out


def _normalise(tokens: list) -> list:
    """Adjacent STARs, or adjacent JUMPs, are one."""
    out: list = []
    for t in tokens:
        if t in (_STAR, _JUMP) and out and out[-1] == t:
            continue
        out.append(t)
    return out


# --- the regex form, where committing to a block's earliest match is exact ------------------------------------------


class _NotExact(Exception):
    pass


def _atomic(body: str, counter: list[int]) -> str:
    if _ATOMIC:
        return f"(?>{body})"
    counter[0] += 1  # (Python 3.10: a lookahead never backtracks once it matched; the backreference consumes it)
    name = f"_a{counter[0]}"
    return f"(?=(?P<{name}>{body}))(?P={name})"


def _block_regex(block: list, counter: list[int]) -> str:
    """A block (one-character matchers and STARs, no JUMP): its STARs but the last committed (exact: a STAR
    cannot cross "/", and no member of the block but a literal "/" can match one)."""
    runs: list[str] = [""]
    for t in block:
        if t == _STAR:
            runs.append("")
        else:
            runs[-1] += t[0]
    out = runs[0]
    for j, fixed in enumerate(runs[1:], 1):
        part = "[^/]*?" + fixed
        out += part if j == len(runs) - 1 else _atomic(part, counter)
    return out


def _regex_of(tokens: list) -> str:
    """The linear-time regex of one alternative; _NotExact when the atomic form could lose a match."""
    if sum(t in (_STAR, _JUMP) for t in tokens) <= 1:  # one unbounded token: nothing to backtrack into
        return "".join("[^/]*" if t == _STAR else "(?:.*/)?" if t == _JUMP else t[0] for t in tokens)
    if any(t not in (_STAR, _JUMP) and t[1] and t is not _SLASH for t in tokens):
        raise _NotExact  # a class that matches "/": blocks no longer span a fixed number of components
    blocks: list[list] = [[]]
    for t in tokens:
        if t == _JUMP:
            blocks.append([])
        else:
            blocks[-1].append(t)
    k = len(blocks) - 1
    counter = [0]
    out = []
    for i, block in enumerate(blocks):
        jump = "" if i == 0 else "(?:.*/)?" if i == k else "(?:.*?/)??"
        body = jump + _block_regex(block, counter)
        if i == k:
            out.append(body)
            break
        # Committing to the earliest end of (jump, block i) is exact when the continuation from any later end
        # can start from it too: block i ends with "/" (the next jump reaches every later component), or the
        # next block starts with STAR (the jump then STAR reach every later position), or block 0 has one end.
        nxt = blocks[i + 1]
        if not ((block and block[-1] is _SLASH) or (nxt and nxt[0] == _STAR)
                or (i == 0 and _STAR not in block)):
            raise _NotExact
        out.append(_atomic(body, counter) if (i > 0 or _STAR in block) else body)
    return "".join(out)


# --- the automaton form, for the rest --------------------------------------------------------------------------------


class _Automaton:
    """One alternative matched by a bit-parallel simulation over the path's positions (bit j: j characters
    consumed): one big-integer operation per token, whatever the path's length."""

    def __init__(self, tokens: list, flags: int) -> None:
        self.tokens = [t if t in (_STAR, _JUMP) else re.compile(t[0], flags) for t in tokens]

    def fullmatch(self, path: str) -> bool:
        n = len(path)
        every = (1 << n) - 1
        slashes = 0
        for m in re.finditer("/", path):
            slashes |= 1 << m.start()
        others = every & ~slashes
        masks: dict = {}
        reach = 1
        for t in self.tokens:
            if t == _STAR:  # every position to the end of each run of non-"/" characters a reached one is in
                seeds = reach & others
                reach |= (others + seeds) ^ others
            elif t == _JUMP:  # the position after every "/" at or after the first reached position
                low = reach & -reach
                reach |= (slashes & ~(low - 1)) << 1
            else:
                mask = masks.get(t)
                if mask is None:
                    mask = 0
                    for m in t.finditer(path):
                        mask |= 1 << m.start()
                    masks[t] = mask
                reach = (reach & mask) << 1
            if not reach:
                return False
        return bool(reach >> n & 1)


class Glob:
    """A compiled glob: ``fullmatch(path)`` is truthy when the whole path matches (in time linear in its length)."""

    __slots__ = ("pattern", "_regex", "_automata", "fullmatch")

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise TypeError(f"a glob must be str, not {type(pattern).__name__}")
        if len(pattern) > MAX_GLOB_CHARS + len("/**"):  # (paths_predicate adds "/**" to a pattern of the cap)
            raise QueryError(f"bad glob {_shown(pattern)}: longer than {MAX_GLOB_CHARS} characters")
        self.pattern = pattern
        flags = re.DOTALL | (re.IGNORECASE if WINDOWS else 0)
        regexes, automata = [], []
        for alternative in _expand(pattern, _parse(pattern)):
            tokens = _normalise(alternative)
            try:
                regexes.append(_regex_of(tokens))
            except _NotExact:
                automata.append(_Automaton(tokens, flags))
        try:
            self._regex = re.compile("(?:" + "|".join(regexes) + ")", flags) if regexes else None
        except (re.error, RecursionError, OverflowError) as exc:  # (a regex of the escaped parts: not expected)
            raise QueryError(f"bad glob {_shown(pattern)}: {exc}") from None
        self._automata = tuple(automata)
        # (the compiled regex's own method when it says everything: a predicate runs once per indexed path)
        self.fullmatch = self._regex.fullmatch if self._regex is not None and not automata else self._fullmatch

    def _fullmatch(self, path: str) -> bool:
        if self._regex is not None and self._regex.fullmatch(path):
            return True
        return any(a.fullmatch(path) for a in self._automata)

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> Glob:
    """Compile a minimatch-style glob (``**``, ``*``, ``?``, ``[...]``, ``{a,b}``; dot files match).

    Returns a :class:`Glob`, whose ``fullmatch(path)`` runs in time linear
    in the path's length (see the module docstring).

    Raises
    ------
    codelex.QueryError
        For a pattern over :data:`~codelex.defaults.MAX_GLOB_CHARS`
        characters, a reversed range (``[z-a]``), braces nested too deeply
        or expanding to too many alternatives.
    """
    return Glob(pattern)


def literal_glob(path: str) -> str:
    """A glob matching ``path`` literally: its glob characters (``*``, ``?``, ``[``, ``{``) each in a class of
    its own (``[[]``), so a directory named ``[ab]`` or ``{a,b}`` scopes itself, not ``a`` or ``b``."""
    return "".join(f"[{c}]" if c in "*?[{" else c for c in path)


def paths_predicate(patterns: Iterable[str] | None):
    """``path -> bool`` for the ``paths`` parameter (None when it selects everything).

    A file matches a pattern when the glob matches its path, or the path lies
    under it (a bare directory scopes its whole subtree).

    Raises
    ------
    TypeError
        For a pattern that is not a string.
    codelex.QueryError
        For more than :data:`~codelex.defaults.MAX_PATH_GLOBS` patterns, or a bad one (:func:`glob_regex`).
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
        if len(pat) > MAX_GLOB_CHARS:
            raise QueryError(f"bad glob {_shown(pat)}: longer than {MAX_GLOB_CHARS} characters")
        if pat:
            cleaned.append(pat)
        if len(cleaned) > MAX_PATH_GLOBS:
            raise QueryError(f"too many path globs (at most {MAX_PATH_GLOBS})")
    if not cleaned:
        return None
    globs = [(glob_regex(p), glob_regex(p + "/**")) for p in cleaned]

    def predicate(path: str) -> bool:
        return any(a.fullmatch(path) or b.fullmatch(path) for a, b in globs)

    return predicate


__all__ = ["Glob", "MAX_BRACE_DEPTH", "MAX_GLOB_ALTERNATIVES", "glob_regex", "literal_glob", "paths_predicate"]
