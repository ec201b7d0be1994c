"""One file's structure: parse it, read its definitions, cut it into chunks.

Definitions are found by a tree-sitter query per grammar (C-speed matching;
Python touches only the candidate nodes), nested by their byte ranges, named
and qualified by the language's rules.  Chunks then partition the file's
lines: one per top-level definition or method (with its decorators and
leading doc comment), a definition over the budget split at its children's
boundaries, and small neighbours merged up to the budget.

A parse that fails or runs over its time budget, and a file without a
grammar, get line windows instead; the status says why.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from codelex.defaults import STRUCTURE_MAX_BYTES
from codelex.structure.languages import LanguageSpec, grammar_for, language, node_text, set_source, spec_for
from codelex.structure.model import CHUNK_MAX_CHARS, CHUNK_MAX_LINES, Chunk, Definition, FileStructure

__all__ = ["MAX_NESTING", "PARSE_BUDGET_S", "analyze", "line_windows", "structure_available"]

log = logging.getLogger("codelex")

#: A parse may take this long (wall clock) before the file falls back to line windows.
PARSE_BUDGET_S = 5.0
#: Files up to this size are parsed without the time budget (see ``_parse``).
UNBUDGETED_PARSE_BYTES = 256 * 1024
#: Definitions nest at most this deep: a deeper one is a child of its ancestor at this depth (3,000 nested
#: functions made qualified names of megabytes and outlines, JSON and the tools' walks overflow the stack).
MAX_NESTING = 64


def structure_available() -> str | None:
    """None when the structure extra is installed, else why not (a message saying how to install it)."""
    try:
        import tree_sitter  # noqa: F401
    except ImportError:
        return "the structure extra is not installed: pip install 'codelex[structure]'"
    return None


# --- lines ------------------------------------------------------------------------------


class _Lines:
    """Line arithmetic over a file's bytes: 1-based lines, sizes by prefix sums."""

    def __init__(self, content: bytes) -> None:
        starts = [0]
        find = content.find
        pos = find(b"\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find(b"\n", pos + 1)
        self.starts = starts  # byte offset of each line
        self.n = len(starts)
        self.size = len(content)
        self.content = content

    def chars(self, lo: int, hi: int) -> int:
        """Bytes of lines lo..hi (1-based, inclusive), newlines included."""
        end = self.starts[hi] if hi < self.n else self.size
        return end - self.starts[lo - 1]

    def fits(self, lo: int, hi: int) -> bool:
        return hi - lo + 1 <= CHUNK_MAX_LINES and self.chars(lo, hi) <= CHUNK_MAX_CHARS

    def text(self, line: int) -> str:
        end = self.starts[line] - 1 if line < self.n else self.size
        return self.content[self.starts[line - 1]:end].decode("utf-8", "replace").rstrip("\r")

    def starts_line(self, byte: int) -> bool:
        """Whether only whitespace precedes ``byte`` on its line."""
        line_start = self.content.rfind(b"\n", 0, byte) + 1
        return not self.content[line_start:byte].strip()


def _first_line(node) -> int:
    return node.start_point[0] + 1


def _last_line(node) -> int:
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return row  # the node ends with a newline: its last line is the one before
    return row + 1


def line_windows(lines: _Lines | bytes, lo: int = 1, hi: int | None = None, label: int = -1) -> list[Chunk]:
    """Cut lines lo..hi into windows within the budget, preferring to end at a blank line."""
    if not isinstance(lines, _Lines):
        lines = _Lines(lines)
    hi = lines.n if hi is None else hi
    out = []
    start = lo
    while start <= hi:
        end = start
        blank = 0
        while end < hi and lines.fits(start, end + 1):
            end += 1
            if not lines.text(end).strip():
                blank = end
        # End at the last blank line of a long window, so a window seldom splits a block.
        if end < hi and blank >= start + (end - start) * 3 // 4:
            end = blank
        out.append(Chunk(start, end, label))
        start = end + 1
    return out


# --- parsing ---------------------------------------------------------------------------

_local = threading.local()


def _parser(grammar: str):
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(grammar)
    if parser is None:
        import tree_sitter

        parser = parsers[grammar] = tree_sitter.Parser(language(grammar))
    return parser


_queries: dict[str, object] = {}
_queries_lock = threading.Lock()


def _query(grammar: str):
    """The grammar's definition query: its rules' node types, plus its extra patterns.

    Node types the installed grammar does not know are left out (grammar
    versions differ), so a query always compiles.
    """
    q = _queries.get(grammar)
    if q is not None:
        return q
    import tree_sitter

    spec = spec_for(grammar)
    lang = language(grammar)
    patterns = []
    conditional = {"assignment", "variable_declarator", "public_field_definition", "field_definition",
                   "declaration", "field_declaration", "var_spec"} & set(spec.rules)
    if grammar not in ("c", "cpp"):
        conditional.discard("declaration")
        conditional.discard("field_declaration")
    kinds = [t for t in spec.rules if t not in conditional and lang.id_for_node_kind(t, True)]
    if kinds:
        patterns.append("[" + " ".join(f"({t})" for t in kinds) + "] @def")
    patterns.extend(p for p in _conditional_patterns(grammar, spec) if p)
    good = []
    for p in patterns:
        try:
            tree_sitter.Query(lang, p)
            good.append(p)
        except Exception:  # a node type this grammar version lacks
            log.debug("codelex: %s: skipping query pattern %r", grammar, p)
    q = tree_sitter.Query(lang, "\n".join(good))
    with _queries_lock:
        _queries[grammar] = q
    return q


def _conditional_patterns(grammar: str, spec: LanguageSpec) -> Iterator[str]:
    """Candidates that node types alone would over-select (every assignment, every declaration)."""
    yield spec.extra_query
    if grammar in ("javascript", "typescript", "tsx"):
        fn = "[(arrow_function) (function_expression) (generator_function)]"
        yield f"(variable_declarator value: {fn}) @def"
        yield "(program (lexical_declaration (variable_declarator) @def))"
        # Exported bindings, at the top level or in a namespace (``_refine_js`` decides which are listed).
        for decl in ("lexical_declaration", "variable_declaration"):
            yield f"(export_statement ({decl} (variable_declarator) @def))"
            yield f"(export_statement (ambient_declaration ({decl} (variable_declarator) @def)))"
        yield f"(public_field_definition value: {fn}) @def"
        yield f"(field_definition value: {fn}) @def"
    if grammar in ("c", "cpp"):
        for wrapper in ("declaration", "field_declaration"):
            yield f"({wrapper} declarator: (function_declarator)) @def"
            yield f"({wrapper} declarator: (pointer_declarator declarator: (function_declarator))) @def"
            yield f"({wrapper} declarator: (reference_declarator (function_declarator))) @def"


_BARE_MACRO = re.compile(rb"^[ \t]*([A-Z_][A-Z0-9_]*(?:\([^;{}()\n]*\))?)[ \t]*\r?$", re.MULTILINE)
_WHOLE_LINE_COMMENT = (b"//", b"/*", b"*")


def _mask_bare_macros(content: bytes) -> bytes:
    """C/C++ source with each statement-like macro line blanked (same length, so node offsets still hold).

    A line holding only an upper-case name (or a call of one: ``UV_REQ_TYPE_MAP(XX)``) after a ``;``,
    ``{`` or ``}``, and not before a ``{``, is a macro that expands to declarations (libuv's
    ``struct uv_loop_s { …  UV_LOOP_PRIVATE_FIELDS };``, ``G_BEGIN_DECLS``).
    tree-sitter cannot know that: it recovers by reading the rest of the file as the struct's fields, so
    the struct was lost and every later prototype became a field (a "method").  An enum's last
    enumerator follows a comma and is kept.  Names are read from the original bytes (see ``analyze``).
    """
    out = None
    for m in _BARE_MACRO.finditer(content):
        seen = content if out is None else out  # a macro line already blanked is passed over like a blank one
        before = seen.rfind(b"\n", 0, m.start())
        prev = b""
        while before > 0:  # the previous line of code, past blank lines and whole-line comments
            line_start = seen.rfind(b"\n", 0, before) + 1
            prev = bytes(seen[line_start:before]).strip()
            if prev.endswith(b"*/") and b"/*" in prev:  # int ipc; /* a trailing comment */
                prev = prev[:prev.rindex(b"/*")].rstrip()
            if prev and not prev.startswith(_WHOLE_LINE_COMMENT):
                break
            prev = b""
            before = line_start - 1
        after = content[m.end():m.end() + 200].lstrip()
        if prev.endswith((b";", b"{", b"}")) and not after.startswith(b"{"):  # SYSCALL_DEFINE1(x)\n{ is a function
            if out is None:
                out = bytearray(content)
            out[m.start(1):m.end(1)] = b" " * (m.end(1) - m.start(1))
    return content if out is None else bytes(out)


def _parse(grammar: str, content: bytes, budget_s: float | None):
    parser = _parser(grammar)
    # py-tree-sitter (0.26.1) keeps a reference to every object a read callback returns, forever: a
    # budgeted parse (which needs the callback: the progress callback is ignored for a bytestring) leaked
    # the file's whole content (found by hardening/soak.py's RSS growth).  Small files, which parse in
    # milliseconds, go without a budget; only larger ones, rarer, pay the leak for the protection.
    if budget_s is None or len(content) <= UNBUDGETED_PARSE_BYTES:
        return parser.parse(content)
    deadline = time.monotonic() + budget_s
    step = 1 << 20

    def read(offset, _point):
        return content[offset:offset + step]

    try:
        return parser.parse(read, progress_callback=lambda *_: time.monotonic() > deadline)
    except ValueError:  # halted by the callback
        parser.reset()
        raise TimeoutError(f"parse exceeded {budget_s:g} s") from None


# --- definitions -------------------------------------------------------------------------


@dataclass
class _Candidate:
    node: object
    kind: str | None
    name: str
    qualifier: str | None
    name_line: int  # the line the name stands on (the signature)
    outer: object  # the outermost node of the definition (wrappers)
    outer_start: int  # first line, decorators and doc comments included
    doc: tuple[int, int]
    parent: int = -1


def _name(node, how: str):
    """``(name text, the node it was read from or None)``."""
    if how == "declarator":
        d = node.child_by_field_name("declarator") or node.child_by_field_name("name")
        return node_text(d), d
    target = node.child_by_field_name(how) if how else None
    if target is None and how == "init":
        return "init", None
    if target is None:
        target = node.child_by_field_name("name")
    return node_text(target), target


def _outer(node, spec: LanguageSpec):
    outer = node
    parent = node.parent
    while parent is not None and parent.type in spec.wrappers:
        # A wrapper that groups several of them (Go's ``const ( A = 1; B = 2 )``, ``export let a, b``)
        # is none of them's: each keeps its own span (the block's span made every member span the block).
        if sum(1 for c in parent.named_children if c.type == node.type) > 1:
            break
        outer = parent
        parent = parent.parent
    return outer


def _leading(outer, spec: LanguageSpec, lines: _Lines) -> tuple[int, tuple[int, int]]:
    """(first line with decorators and comments, doc comment span) of a definition's outer node."""
    start = _first_line(outer)
    n = outer
    # Decorators and attributes stand as siblings before the definition.
    while True:
        prev = n.prev_named_sibling
        if prev is None or prev.type not in spec.decorators:
            break
        n = prev
        start = _first_line(prev)
    # A first child inherits its parent's preceding siblings (Ruby: a comment before a class body).
    while n.prev_named_sibling is None and n.parent is not None and n.parent.start_byte == n.start_byte:
        n = n.parent
    doc_lo = doc_hi = 0
    prev = n.prev_named_sibling
    expect = start
    while prev is not None and prev.type in spec.comments and _last_line(prev) >= expect - 1 \
            and lines.starts_line(prev.start_byte):
        doc_lo = _first_line(prev)
        doc_hi = doc_hi or _last_line(prev)
        expect = doc_lo
        prev = prev.prev_named_sibling
    if doc_lo:
        start = min(start, doc_lo)
    return start, (doc_lo, doc_hi)


def _python_doc(node) -> tuple[int, int]:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return 0, 0
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_children and first.named_children[0].type == "string":
        return _first_line(first), _last_line(first)
    return 0, 0


def _candidates(grammar: str, tree, lines: _Lines) -> list[_Candidate]:
    spec = spec_for(grammar)
    import tree_sitter

    nodes = tree_sitter.QueryCursor(_query(grammar)).captures(tree.root_node).get("def", [])
    seen = set()
    out = []
    for node in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
        key = (node.start_byte, node.end_byte, node.type)
        if key in seen:
            continue
        seen.add(key)
        rule = spec.rules.get(node.type)
        if rule is None:
            continue
        name, name_node = _name(node, rule.name)
        kind, qualifier = rule.kind, None
        if spec.refine is not None:
            refined = spec.refine(node, kind, name)
            if refined is None:
                continue
            kind, name, qualifier = refined
        name = name.strip()
        if not name or "\n" in name:
            continue
        outer = _outer(node, spec)
        outer_start, doc = _leading(outer, spec, lines)
        if spec.docstring == "python" and node.type in ("function_definition", "class_definition"):
            doc = _python_doc(node) or doc
        name_line = _first_line(name_node) if name_node is not None else _first_line(node)
        out.append(_Candidate(node, kind, name, qualifier, name_line, outer, outer_start, doc))
    return out


def _without_defined_prototypes(grammar: str, cands: list[_Candidate]) -> list[_Candidate]:
    """C: a prototype of a function the same file defines is left out (``static void f(void);`` then its
    definition made ``show core.c:f`` ambiguous); a header's prototypes, defined elsewhere, stay.

    C only: C++ overloads share a name, so its prototypes cannot be matched to definitions by name.
    """
    if grammar != "c":
        return cands
    defined = {c.name for c in cands if c.node.type == "function_definition"}
    return [c for c in cands if not (c.node.type == "declaration" and c.name in defined)]


def _nest(cands: list[_Candidate]) -> None:
    """Each candidate's parent: the innermost enclosing one, or its ancestor at depth :data:`MAX_NESTING`."""
    stack: list[int] = []
    for i, c in enumerate(cands):
        while stack and cands[stack[-1]].node.end_byte <= c.node.start_byte:
            stack.pop()
        while stack and not (cands[stack[-1]].node.start_byte <= c.node.start_byte
                             and c.node.end_byte <= cands[stack[-1]].node.end_byte):
            stack.pop()
        c.parent = stack[min(len(stack), MAX_NESTING) - 1] if stack else -1
        stack.append(i)


def _definitions(grammar: str, cands: list[_Candidate], lines: _Lines) -> tuple[list[Definition], dict[int, int]]:
    """Emitted definitions (containers left out) and candidate index -> definition index."""
    spec = spec_for(grammar)
    sep = spec.separator
    qualified: list[str] = []
    out: list[Definition] = []
    index_of: dict[int, int] = {}
    for i, c in enumerate(cands):
        if c.parent >= 0 and cands[c.parent].node.type == "type_definition":
            # C's ``typedef struct tag { … } name;`` names the struct; it does not enclose it (the struct
            # was ``name::tag``, a method of it if C++ put one inside).
            c.parent = cands[c.parent].parent
        parent = cands[c.parent] if c.parent >= 0 else None
        prefix = qualified[c.parent] if parent is not None else ""
        own = f"{c.qualifier.replace('::', sep) if sep != '::' else c.qualifier}{sep}{c.name}" if c.qualifier \
            else c.name
        q = f"{prefix}{sep}{own}" if prefix else own
        qualified.append(q)
        if c.kind is None:
            continue
        kind = c.kind
        if kind == "function" and parent is not None and parent.kind in spec.class_kinds:
            kind = "method"
        emitted_parent = c.parent
        while emitted_parent >= 0 and cands[emitted_parent].kind is None:
            emitted_parent = cands[emitted_parent].parent
        start = _first_line(c.node)
        end = max(start, _last_line(c.outer if c.outer is not c.node else c.node))
        signature_line = c.name_line if start <= c.name_line <= end else start
        index_of[i] = len(out)
        out.append(Definition(
            name=c.name, qualified_name=q, kind=kind, start_line=start, end_line=end,
            outer_start_line=min(c.outer_start, start), signature_line=signature_line,
            doc_start_line=c.doc[0], doc_end_line=c.doc[1],
            parent=index_of.get(emitted_parent, -1),
        ))
    return out, index_of


# --- chunks ------------------------------------------------------------------------------


def _chunks(tree, cands: list[_Candidate], index_of: dict[int, int], lines: _Lines) -> list[Chunk]:
    # Every node that stands for a definition (the node itself and its wrappers) -> (definition, outer start).
    def_of: dict[tuple[int, int, str], tuple[int, int]] = {}
    for i, c in enumerate(cands):
        label = index_of.get(i, -1)
        n = c.node
        while True:
            def_of.setdefault((n.start_byte, n.end_byte, n.type), (label, c.outer_start))
            if n == c.outer or n.parent is None:
                break
            n = n.parent
    segments: list[Chunk] = []
    starts: set[int] = set()
    _split(tree.root_node, 1, lines.n, -1, def_of, lines, segments, 0, starts)
    first_line = {label: _first_line(c.node) for i, c in enumerate(cands) if (label := index_of.get(i, -1)) >= 0}
    return _merge(segments, lines, starts, first_line)


def _split(node, lo: int, hi: int, label: int, def_of, lines: _Lines, out: list[Chunk], depth: int,
           starts: set[int]) -> None:
    """Partition lines lo..hi (which ``node`` spans) at its children's boundaries until each part fits.

    ``starts`` collects the first lines of definitions too large for one chunk: each begins a chunk of
    its own (its head is never merged into the chunk before it, under another definition's label).
    """
    if lines.fits(lo, hi):
        out.append(Chunk(lo, hi, label))
        return
    if depth > 200:
        out.extend(line_windows(lines, lo, hi, label))
        return
    kids = []  # [first line, last line, node, label]
    absorb_from = hi + 1  # a kid starting at or after this line lies in a following definition's outer span
    for kid in reversed(node.named_children):
        first = _first_line(kid)
        info = def_of.get((kid.start_byte, kid.end_byte, kid.type))
        if info is None and first >= absorb_from:
            continue  # a comment or decorator that belongs to the definition after it
        start = info[1] if info is not None else first
        kids.append([start, _last_line(kid), kid, info[0] if info is not None else label])
        absorb_from = start if info is not None and info[0] >= 0 and start < first else hi + 1
    kids.reverse()
    ranges = []
    cur = lo
    for kid in kids:
        s, e = max(kid[0], cur), min(kid[1], hi)
        if s > e:
            continue
        ranges.append((s, e, kid[2], kid[3]))
        cur = e + 1
    if not ranges or (len(ranges) == 1 and ranges[0][0] == lo and ranges[0][1] == hi
                      and not ranges[0][2].named_children):
        out.extend(line_windows(lines, lo, hi, label))
        return
    cur = lo
    for s, e, kid, kid_label in ranges:
        if s > cur:
            out.append(Chunk(cur, s - 1, label))  # a header, or lines between children
        if lines.fits(s, e):
            out.append(Chunk(s, e, kid_label))
        else:
            if kid_label >= 0 and kid_label != label:
                starts.add(s)
            _split(kid, s, e, kid_label, def_of, lines, out, depth + 1, starts)
        cur = e + 1
    if cur <= hi:
        out.append(Chunk(cur, hi, label))


def _merge(segments: list[Chunk], lines: _Lines, starts: set[int] = frozenset(),
           first_line: dict[int, int] | None = None) -> list[Chunk]:
    """Merge neighbouring segments while they fit the budget together; a segment that starts a definition
    split over several chunks (``starts``) begins a new chunk, so that chunk carries that definition.

    A merged chunk is labelled by the first definition it holds the start of (``first_line``: label ->
    the definition's first line); only a chunk that starts none keeps the label of the one it is a part
    of.  (The tail of a long method merged with the two methods after it was labelled by the long one.)
    """
    first_line = first_line or {}

    def starts_in(chunk: Chunk) -> bool:
        return chunk.start_line <= first_line.get(chunk.definition, 0) <= chunk.end_line

    out: list[Chunk] = []
    for seg in segments:
        if seg.start_line > seg.end_line:
            continue
        if out and seg.start_line not in starts and lines.fits(out[-1].start_line, seg.end_line):
            prev = out[-1]
            if starts_in(prev) or (prev.definition >= 0 and not starts_in(seg)):
                label = prev.definition
            else:
                label = seg.definition if seg.definition >= 0 else prev.definition
            out[-1] = Chunk(prev.start_line, seg.end_line, label)
        else:
            out.append(seg)
    return out


# --- the entry point ------------------------------------------------------------------------


def analyze(path: str, content: bytes, *, grammar: str | None = None,
            budget_s: float | None = PARSE_BUDGET_S) -> FileStructure:
    """The structure of one file.

    Parameters
    ----------
    path : str
        Its path (chooses the grammar through its kind and extension).
    content : bytes
        Its content (UTF-8; invalid bytes are kept as they are).
    grammar : str, optional
        A grammar of :data:`codelex.structure.languages.GRAMMARS` instead of the path's.
    budget_s : float or None, default 5
        Wall-clock budget of the parse; None for no limit.

    Returns
    -------
    FileStructure
        Never raises for bad content: a syntax error still gives definitions
        (tree-sitter recovers); a grammar that fails or runs over the budget
        gives line windows, with the status saying why.
    """
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogatepass")
    lines = _Lines(content)
    grammar = grammar or grammar_for(path)
    if grammar is None:
        return FileStructure(path, None, "no-grammar", lines.n, (), tuple(line_windows(lines)))
    if len(content) > STRUCTURE_MAX_BYTES:
        return FileStructure(path, grammar, "too-large", lines.n, (), tuple(line_windows(lines)))
    try:
        tree = _parse(grammar, _mask_bare_macros(content) if grammar in ("c", "cpp") else content, budget_s)
    except ImportError:
        return FileStructure(path, grammar, "unavailable", lines.n, (), tuple(line_windows(lines)))
    except TimeoutError:
        log.info("codelex: parsing %s ran over its time budget; using line windows", path)
        return FileStructure(path, grammar, "timeout", lines.n, (), tuple(line_windows(lines)))
    except Exception as exc:  # a grammar bug must not stop a build
        log.warning("codelex: parsing %s failed (%s); using line windows", path, exc)
        return FileStructure(path, grammar, "parse-failed", lines.n, (), tuple(line_windows(lines)))
    set_source(content)
    try:
        cands = _without_defined_prototypes(grammar, _candidates(grammar, tree, lines))
        _nest(cands)
        definitions, index_of = _definitions(grammar, cands, lines)
        chunks = _chunks(tree, cands, index_of, lines)
    except Exception as exc:
        log.warning("codelex: reading the structure of %s failed (%s); using line windows", path, exc, exc_info=True)
        return FileStructure(path, grammar, "parse-failed", lines.n, (), tuple(line_windows(lines)))
    finally:
        set_source(None)
    return FileStructure(path, grammar, "parsed", lines.n, tuple(definitions), tuple(chunks))
