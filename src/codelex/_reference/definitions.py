"""Reference definition scanner: the oracle of the native one (``csrc/text/definitions.cpp``; tests only).

Line by line, ASCII identifiers (``[A-Za-z_$][A-Za-z0-9_$]*``), in this order:

1. ``#define NAME``;
2. after any modifiers (``export``, ``public``, ``static``, ``async``,
   ``pub(crate)``...), a
   definition keyword (``def``, ``class``, ``fn``, ``func``, ``struct``,
   ``defmodule``...) then a name (``a.b.c``/``a::b`` give the last part); a
   Go ``func`` may have a receiver ``(...)`` before its name; in Go files
   (the files the language registry gives the ``go`` rule set)
   ``const``, ``var`` and ``type`` count too, and a name at the start of a
   line inside a ``const (``/``var (``/``type (`` block;
3. at the start of a line, an upper-case constant (``MAX_SIZE = 3``,
   ``LIMIT: int = 3``);
4. ``const|let|var NAME = function``, ``= (...) =>``, ``= (``, ``= x =>``
   (a function bound to a name);
5. a function or method head: words (modifiers, types, ``<>[],?*&:``)
   then a name and ``(...)``, followed by ``{``, ``:``, ``->``, ``=>``,
   ``=``, ``throws``, ``const``, ``override``, ``noexcept``, ``where``, or
   by nothing when words precede the name (``static int foo(int x)``); a
   head whose parameters go on past the line counts when words precede the
   name and no ``;`` follows; the first word is not a control keyword.

Lines over 2,000 characters are passed over (minified code).
"""

from __future__ import annotations

from codelex.languages import DEFINITION_RULES, definition_rules_of

__all__ = ["CONTROL", "KEYWORDS", "MODIFIERS", "scan_definitions", "scan_line"]

KEYWORDS = frozenset(
    "def defp defmacro defmacrop defmodule defstruct defprotocol defimpl defguard defdelegate class struct enum "
    "trait interface protocol object record module namespace type typealias func fn fun function sub proc impl "
    "union mod given macro_rules".split())
MODIFIERS = frozenset(
    "export default public private protected internal static abstract final sealed open override async inline "
    "extern unsafe data case inner suspend virtual partial pub const annotation companion value actual expect lazy "
    "implicit readonly declare synchronized native transient volatile strictfp unsafe mut".split())
CONTROL = frozenset(
    "if for while switch catch return new else do try throw await yield elif except with assert del print raise "
    "match when unless until foreach lock using fixed sizeof typeof goto case delete not and or in is".split())
_GO_BLOCK = ("const", "var", "type")
MAX_LINE = 2000


def _is_start(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c in "_$"


def _is_cont(c: str) -> bool:
    return _is_start(c) or ("0" <= c <= "9")


def _ident(line: str, i: int) -> int:
    """End of the identifier starting at ``i`` (``i`` when there is none)."""
    if i < len(line) and _is_start(line[i]):
        i += 1
        while i < len(line) and _is_cont(line[i]):
            i += 1
    return i


def _spaces(line: str, i: int) -> int:
    while i < len(line) and line[i] in " \t":
        i += 1
    return i


def _dotted(line: str, i: int) -> str:
    """The last part of ``a.b.c`` or ``a::b`` starting at ``i``."""
    end = _ident(line, i)
    if end == i:
        return ""
    name = line[i:end]
    while True:
        if line.startswith("::", end):
            nxt = end + 2
        elif end < len(line) and line[end] == ".":
            nxt = end + 1
        else:
            return name
        stop = _ident(line, nxt)
        if stop == nxt:
            return name
        name, end = line[nxt:stop], stop


def _upper_constant(word: str) -> bool:
    return len(word) >= 2 and word[0].isupper() and all(c.isupper() or c.isdigit() or c == "_" for c in word) \
        and word[-1] != "_" and any(c.isalpha() for c in word)


def scan_line(line: str, go: bool = False, in_go_block: bool = False) -> str:
    """The name one line defines, or ""."""
    if len(line.encode("utf-8", "surrogatepass")) > MAX_LINE:
        return ""
    i = _spaces(line, 0)
    # 1. a preprocessor definition; a name inside a Go declaration block
    if i < len(line) and line[i] == "#":
        return _macro_definition(line, i)
    if in_go_block and i > 0:
        end = _ident(line, i)
        if end > i:
            return line[i:end]
    # 2. modifiers, then a definition keyword and a name
    name = _keyword_definition(line, i, go)
    if name:
        return name
    # 3. an upper-case constant at the start of a line
    if i == 0:
        name = _constant_assignment(line)
        if name:
            return name
    # 4. a function bound to a name (any other const/let/var line defines nothing)
    name = _bound_function(line, i)
    if name is not None:
        return name
    # 5. a function or method head
    return _function_head(line, i)


def _macro_definition(line: str, i: int) -> str:
    """``#define NAME``'s name (the line's ``#`` at ``i``), else ""."""
    n = len(line)
    j = _spaces(line, i + 1)
    if line.startswith("define", j) and j + 6 < n and line[j + 6] in " \t":
        k = _spaces(line, j + 6)
        return line[k:_ident(line, k)]
    return ""


def _keyword_definition(line: str, i: int, go: bool) -> str:
    """The name after the modifiers and a definition keyword from ``i`` (``pub fn name``, ``func (r) Name``,
    ``macro_rules! name``, a Go block's ``type name``), else ""."""
    n = len(line)
    j = i
    while True:
        end = _ident(line, j)
        if end == j:
            return ""
        word = line[j:end]
        if go and word in _GO_BLOCK:
            k = _spaces(line, end)
            return line[k:_ident(line, k)] if k > end else ""
        if word in MODIFIERS:
            after = end
            if word == "pub" and end < n and line[end] == "(":  # Rust's pub(crate), pub(super), pub(in path)
                close = _matching(line, end)
                if close < 0:
                    return ""
                after = close + 1
            k = _spaces(line, after)
            if k == end:  # a modifier runs into the next word (``pub(crate)fn`` does not: its ')' ends it)
                return ""
            j = k
            continue
        if word not in KEYWORDS:
            return ""
        k = end
        if word == "macro_rules":
            if k >= n or line[k] != "!":
                return ""
            k += 1
        k2 = _spaces(line, k)
        if word == "func" and k2 < n and line[k2] == "(":
            close = line.find(")", k2)
            if close < 0:
                return ""
            k2 = _spaces(line, close + 1)
        elif k2 == k:
            return ""
        return _dotted(line, k2)


def _constant_assignment(line: str) -> str:
    """``NAME = ...`` or ``NAME: type = ...`` at the start of the line, NAME upper-case, else ""."""
    n = len(line)
    end = _ident(line, 0)
    word = line[:end]
    if not _upper_constant(word):
        return ""
    k = _spaces(line, end)
    if k < n and line[k] == ":":
        eq = line.find("=", k)
        k = eq if eq >= 0 else n
    return word if k < n and line[k] == "=" and not line.startswith("==", k) else ""


def _bound_function(line: str, i: int) -> str | None:
    """For a ``[export] const|let|var name = ...`` line: the name when a function is bound to it (``function``,
    an arrow function), else ""; None for any other line."""
    j = i
    end = _ident(line, j)
    if line[j:end] == "export":
        j = _spaces(line, end)
        end = _ident(line, j)
    if line[j:end] not in ("const", "let", "var"):
        return None
    k = _spaces(line, end)
    name_end = _ident(line, k)
    if name_end > k:
        eq = line.find("=", name_end)
        if eq >= 0 and not line.startswith("==", eq) and line[name_end:eq].strip(" \t")[:1] in ("", ":"):
            r = _spaces(line, eq + 1)
            rest = line[r:]
            if rest.startswith("async ") or rest.startswith("async("):
                rest = rest[5:].lstrip(" \t")
            e2 = _ident(rest, 0)
            if rest.startswith("function") and (len(rest) == 8 or not _is_cont(rest[8])) or rest[:1] == "(" \
                    or (e2 > 0 and rest[_spaces(rest, e2):].startswith("=>")):
                return line[k:name_end]
    return ""


def _function_head(line: str, i: int) -> str:
    """The name of a function or method head from ``i`` (``Type name(params) {``, ``def name(...):``), else ""."""
    first_end = _ident(line, i)
    if first_end == i or line[i:first_end] in CONTROL or line[i:first_end] in KEYWORDS:
        return ""
    paren = line.find("(", i)
    if paren < 0:
        return ""
    k = paren
    while k > i and line[k - 1] in " \t":
        k -= 1
    start = k
    while start > i and _is_cont(line[start - 1]):
        start -= 1
    name = line[start:k]
    if not name or not _is_start(name[0]) or name in CONTROL:
        return ""
    prefix = line[i:start]
    if any(not (_is_cont(c) or c in _PREFIX_CHARS) for c in prefix):
        return ""
    close = _matching(line, paren)
    if close < 0:  # the parameters go on: a head if something (a type, a modifier) precedes the name
        return name if prefix.strip(" \t") and ";" not in line[paren:] else ""
    tail = line[close + 1:].strip(" \t\r")
    if tail.startswith("=="):
        return ""
    if tail.startswith(("{", ":")) or tail.startswith(_TAIL_WORDS):
        return name
    return name if tail == "" and prefix.strip(" \t") else ""


_PREFIX_CHARS = frozenset(" \t<>[],?*&:")
_TAIL_WORDS = ("->", "=>", "throws", "const", "override", "noexcept", "where", "=")


def _matching(line: str, paren: int) -> int:
    depth = 0
    for q in range(paren, len(line)):
        if line[q] == "(":
            depth += 1
        elif line[q] == ")":
            depth -= 1
            if depth == 0:
                return q
    return -1


def scan_definitions(path: str, text: str | bytes) -> list[tuple[str, int]]:
    """``(name, line)`` of each definition found, in order (lines 1-based)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    go = DEFINITION_RULES[definition_rules_of(path)] == "go"
    out: list[tuple[str, int]] = []
    in_block = False
    for number, line in enumerate(text.split("\n"), 1):
        if go:
            stripped = line.strip(" \t\r")
            if in_block and stripped.startswith(")"):
                in_block = False
                continue
            if stripped in ("const (", "var (", "type ("):
                in_block = True
                continue
        name = scan_line(line, go, in_block)
        if name:
            out.append((name, number))
    return out
