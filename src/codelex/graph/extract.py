"""Import references as written, per language, by fast line scanners (no project code runs).

Which files are read, and by which scanner (an import family), is the language
registry's (:mod:`codelex.languages`).  Each reference is an :class:`ImportRef`
``(lang, spec, level, names)``, ``lang`` a tag of its family (:data:`REF_FAMILY`):

- ``py``: ``import a.b`` → ``("py", "a.b", 0, ())``; ``from .x import y, z`` →
  ``("py", "x", 1, ("y", "z"))``; ``from . import m`` → ``("py", "", 1, ("m",))``;
- ``js``: the module specifier of ``import … from``, ``import '…'``,
  ``export … from``, ``require('…')`` and ``import('…')`` with a literal;
- ``go``: an import path;
- ``rs-mod``: ``mod x;`` (a module in its own file); ``rs-use``: the path of a
  ``use`` (``crate::a::b``, ``super::x``, ``other_crate::y``), one per leaf of a
  ``{…}`` group;
- ``jvm``: ``a.b.C``, ``a.b.*`` or a static import's class path;
- ``c``: ``#include "x.h"`` (level 0) or ``<x.h>`` (level 1).

Comments are skipped where they would hide or fake an import at the start of
a line; strings that merely contain import-like text are not parsed as code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from codelex.languages import import_family_of

__all__ = ["EXTRACTION_RULES", "REF_FAMILY", "ImportRef", "extract_imports", "graph_language", "triple_quoted_spans"]

#: Changes whenever what the scanners extract changes (a saved cache of references is then re-extracted).
EXTRACTION_RULES = "imports-2"


class ImportRef(NamedTuple):
    lang: str
    spec: str
    level: int = 0
    names: tuple[str, ...] = ()


#: The import family (:data:`codelex.languages.IMPORT_FAMILIES`) of each reference tag (``ImportRef.lang``).
REF_FAMILY: dict[str, str] = {"py": "python", "js": "jsts", "go": "go", "rs-mod": "rust", "rs-use": "rust",
                              "jvm": "jvm", "c": "c"}


def graph_language(path: str) -> str | None:
    """The import family of a path (``python``, ``jsts``, ``go``, ``rust``, ``jvm``, ``c``: the registry's), or None."""
    return import_family_of(path)


# --- Python ---------------------------------------------------------------------------

_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_PY_DOTTED = re.compile(r"[A-Za-z_][\w.]*")
_TRIPLE_QUOTES = ('"""', "'''")


def triple_quoted_spans(text: str) -> Iterator[tuple[int, int]]:
    """The spans of triple-quoted strings, leftmost first (as a lazy regex over either quote would match)."""
    nxt = {q: text.find(q) for q in _TRIPLE_QUOTES}
    while True:
        live = [(at, q) for q, at in nxt.items() if at >= 0]
        if not live:
            return
        start, quote = min(live)
        end = text.find(quote, start + 3)
        if end < 0:  # unterminated: this opening matches nothing; go on from the next character
            resume = start + 1
        else:
            yield start, end + 3
            resume = end + 3
        for q in _TRIPLE_QUOTES:
            if 0 <= nxt[q] < resume:
                nxt[q] = text.find(q, resume)


def _python(text: str) -> list[ImportRef]:
    # str.find on "import" is far faster than line-anchored regexes over the whole text; each line holding
    # the word is then matched in place.  Docstrings can hold example code ("import x" in a usage
    # section): a line starting inside one is not read.
    pos = text.find("import")
    if pos < 0:
        return []
    quoted = triple_quoted_spans(text)  # consumed as the lines advance: imports mostly sit at the top
    inside = (-1, -1)  # the last string starting at or before the current line
    ahead = next(quoted, None)
    out = []
    last_line = -1
    while pos >= 0:
        line = text.rfind("\n", 0, pos) + 1
        pos = text.find("import", pos + 6)
        if line == last_line:
            continue
        last_line = line
        while ahead is not None and ahead[0] <= line:
            inside, ahead = ahead, next(quoted, None)
        if inside[1] > line:
            continue
        m = _PY_IMPORT.match(text, line)
        if m is not None:
            for part in m.group(1).split(","):
                name = part.strip().split()[0] if part.strip() else ""
                if _PY_DOTTED.fullmatch(name):
                    out.append(ImportRef("py", name))
            continue
        m = _PY_FROM.match(text, line)
        if m is not None:
            level, module, names = len(m.group(1)), m.group(2), m.group(3)
            if level or module:
                items = names.strip().strip("()").replace("\\\n", " ")
                found = tuple(n.strip().split()[0] for n in items.split(",") if n.strip() and n.strip() != "*")
                out.append(ImportRef("py", module, level, tuple(n for n in found if n.isidentifier())))
    return out


# --- JavaScript / TypeScript ----------------------------------------------------------

_JS_COMMENT = re.compile(r"/\*[\s\S]*?\*/|(?<![:\"'\\])//[^\n]*")
_JS_SPEC = re.compile(
    r"""(?:^|[;\s}])(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1"""  # import x from 'y' / export ... from
    r"""|(?:^|[;\s])import\s*(['"])([^'"\n]+)\3"""  # import 'side-effect'
    r"""|\b(?:require|import)\s*\(\s*(['"])([^'"\n]+)\5\s*\)""",  # require('x'), import('x')
    re.M,
)


def _js(text: str) -> list[ImportRef]:
    text = _JS_COMMENT.sub(" ", text)
    out = []
    for m in _JS_SPEC.finditer(text):
        spec = m.group(2) or m.group(4) or m.group(6)
        if spec:
            out.append(ImportRef("js", spec))
    return out


# --- Go -------------------------------------------------------------------------------

_GO_COMMENT = re.compile(r"/\*[\s\S]*?\*/|//[^\n]*")
_GO_SINGLE = re.compile(r'^[ \t]*import[ \t]+(?:[\w.]+[ \t]+)?"([^"\n]+)"', re.M)
_GO_BLOCK = re.compile(r"^[ \t]*import[ \t]*\(([^)]*)\)", re.M)
_GO_LINE = re.compile(r'(?:^|\n)[ \t]*(?:[\w.]+[ \t]+)?"([^"\n]+)"')


_GO_DECLARATIONS = ("\nfunc ", "\ntype ", "\nvar ", "\nconst ")


def _go(text: str) -> list[ImportRef]:
    # Imports precede every declaration: only the file's head needs scanning.
    ends = [at for at in (text.find(d) for d in _GO_DECLARATIONS) if at >= 0]
    if ends:
        text = text[:min(ends)]
    text = _GO_COMMENT.sub(" ", text)
    out = [ImportRef("go", m.group(1)) for m in _GO_SINGLE.finditer(text)]
    for block in _GO_BLOCK.finditer(text):
        out.extend(ImportRef("go", m.group(1)) for m in _GO_LINE.finditer(block.group(1)))
    return out


# --- Rust -----------------------------------------------------------------------------

_RS_COMMENT = re.compile(r"/\*[\s\S]*?\*/|//[^\n]*")
_RS_MOD = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+([A-Za-z_]\w*)[ \t]*;", re.M)
_RS_USE = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t]+([^;]+);", re.M)


def _rs_paths(tree: str, prefix: str = "") -> list[str]:
    """The leaf paths of a use tree: ``a::{b, c::d}`` → ``a::b``, ``a::c::d``."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        path = tree.split(" as ")[0].strip()
        return [prefix + path] if path else []
    head = tree[:brace].strip()
    body = tree[brace + 1: tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        part = part.strip()
        if part in ("", "self"):
            if part == "self" and head:
                out.append(prefix + head.rstrip(":"))
            continue
        out.extend(_rs_paths(part, prefix + head))
    return out


def _rust(text: str) -> list[ImportRef]:
    text = _RS_COMMENT.sub(" ", text)
    out = [ImportRef("rs-mod", m.group(1)) for m in _RS_MOD.finditer(text)]
    for m in _RS_USE.finditer(text):
        out.extend(ImportRef("rs-use", p.replace(" ", "")) for p in _rs_paths(m.group(1)))
    return out


# --- Java / Kotlin --------------------------------------------------------------------

_JVM_COMMENT = re.compile(r"/\*[\s\S]*?\*/|//[^\n]*")
_JVM_IMPORT = re.compile(r"^[ \t]*import[ \t]+(static[ \t]+)?([\w.]+(?:\.\*)?)(?:[ \t]+as[ \t]+\w+)?[ \t]*;?[ \t]*$",
                         re.M)
_JVM_PACKAGE = re.compile(r"^[ \t]*package[ \t]+([\w.]+)", re.M)


def _jvm(text: str) -> list[ImportRef]:
    text = _JVM_COMMENT.sub(" ", text)
    out = []
    for m in _JVM_IMPORT.finditer(text):
        spec = m.group(2)
        if m.group(1) and not spec.endswith(".*"):
            spec = spec.rsplit(".", 1)[0]  # a static import names a member of the class
        elif m.group(1):
            spec = spec[:-2]
        out.append(ImportRef("jvm", spec))
    return out


def jvm_package(text: str) -> str | None:
    """The ``package`` a Java or Kotlin file declares, or None."""
    m = _JVM_PACKAGE.search(_JVM_COMMENT.sub(" ", text[:20000]))
    return m.group(1) if m else None


# --- C / C++ --------------------------------------------------------------------------

# Starts with a literal '#' (the regex engine then skips to each '#' at C speed); the line's start is checked after.
_C_INCLUDE = re.compile(r'#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')


def _c(text: str) -> list[ImportRef]:
    out = []
    for m in _C_INCLUDE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].strip(" \t"):
            continue  # not a directive: '#include' inside a line (a string, a comment)
        if m.group(1) is not None:
            out.append(ImportRef("c", m.group(1), 0))
        else:
            out.append(ImportRef("c", m.group(2), 1))
    return out


_EXTRACTORS = {"python": _python, "jsts": _js, "go": _go, "rust": _rust, "jvm": _jvm, "c": _c}


#: A line that imports, in any of the scanned languages (what :func:`ref_line` looks among).
_IMPORT_LINE = re.compile(r"^\s*(?:from\s|import\b|export\b|use\s|pub(?:\([^)]*\))?\s+(?:use|mod)\s|mod\s|"
                          r"#\s*include\b|\"|.*\brequire\(|.*\bimport\()")


def ref_line(text: str, ref: ImportRef) -> tuple[int, str] | None:
    """``(line number, line)`` of the first import line of ``text`` that writes ``ref`` (its specifier, or for a
    bare relative import one of its names); None when no line shows it (a multi-line import's later line)."""
    wanted = [w for w in (ref.spec.rstrip(".*"), *ref.names) if w and w.strip(".")]
    for number, line in enumerate(text.splitlines(), 1):
        if any(w in line for w in wanted) and _IMPORT_LINE.match(line):
            return number, line
    return None


def extract_imports(path: str, text: str) -> list[ImportRef]:
    """The import references of one file, as written (an empty list for other languages)."""
    lang = graph_language(path)
    if lang is None or not text:
        return []
    return _EXTRACTORS[lang](text)
