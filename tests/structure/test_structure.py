"""The structure stage: definitions per language, the chunk partition, fallbacks, the store and its workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelex.structure import CHUNK_MAX_CHARS, CHUNK_MAX_LINES, FileStructure, analyze, grammar_for, line_windows
from codelex.structure.model import Chunk, Definition

pytest.importorskip("tree_sitter")

FIXTURES = Path(__file__).parent / "fixtures"

EXPECTED = {
    'Sample.java': [
        ('class', 'Outer', 3, 14),
        ('constant', 'Outer.MAX', 5, 5),
        ('method', 'Outer.Outer', 7, 7),
        ('method', 'Outer.toString', 9, 10),
        ('class', 'Outer.Inner', 11, 11),
        ('method', 'Outer.Inner.run', 11, 11),
        ('interface', 'Outer.Cb', 12, 12),
        ('method', 'Outer.Cb.call', 12, 12),
        ('enum', 'Outer.Mode', 13, 13),
        ('class', 'Point', 15, 15),
        ('interface', 'Ann', 16, 16),
    ],
    'sample.c': [
        ('function', 'foo', 2, 2),
        ('function', 'bar', 3, 3),
        ('struct', 'point', 4, 4),
        ('function', 'make', 5, 5),
        ('type', 'size_type', 6, 6),
        ('constant', 'MAX', 7, 7),
    ],
    'sample.cpp': [
        ('module', 'outer', 1, 17),
        ('module', 'outer::inner', 2, 14),
        ('class', 'outer::inner::Widget', 4, 12),
        ('method', 'outer::inner::Widget::Widget', 6, 6),
        ('method', 'outer::inner::Widget::size', 7, 7),
        ('method', 'outer::inner::Widget::resize', 8, 8),
        ('struct', 'outer::inner::Widget::Part', 9, 9),
        ('function', 'outer::inner::max', 13, 13),
        ('method', 'outer::Widget::size', 15, 15),
        ('method', 'outer::inner::Widget::grow', 16, 16),
        ('function', 'free_function', 18, 18),
        ('enum', 'Mode', 19, 19),
        ('type', 'Pair', 20, 20),
        ('type', 'Alias', 21, 21),
        ('constant', 'LIMIT', 22, 22),
        ('function', 'SQUARE', 23, 23),
    ],
    'sample.cs': [
        ('module', 'N', 1, 16),
        ('class', 'N.Foo', 3, 10),
        ('constant', 'N.Foo.Max', 5, 5),
        ('method', 'N.Foo.Foo', 6, 6),
        ('method', 'N.Foo.Bar', 7, 7),
        ('class', 'N.Foo.Inner', 9, 9),
        ('interface', 'N.IShape', 11, 11),
        ('method', 'N.IShape.Area', 11, 11),
        ('struct', 'N.P', 12, 12),
        ('enum', 'N.Color', 13, 13),
        ('class', 'N.R', 14, 14),
        ('type', 'N.D', 15, 15),
    ],
    'sample.go': [
        ('struct', 'Server', 4, 4),
        ('interface', 'Handler', 5, 5),
        ('type', 'ID', 6, 6),
        ('constant', 'Max', 7, 7),
        ('variable', 'debug', 8, 8),
        ('method', 'Server.Start', 11, 11),
        ('method', 'Server.Stop', 12, 12),
        ('function', 'main', 13, 13),
    ],
    'sample.js': [
        ('function', 'helper', 2, 2),
        ('function', 'arrow', 3, 3),
        ('class', 'Widget', 4, 4),
        ('method', 'Widget.render', 4, 4),
        ('method', 'Widget.make', 4, 4),
    ],
    'sample.kt': [
        ('class', 'Foo', 4, 10),
        ('method', 'Foo.bar', 5, 5),
        ('class', 'Foo.Inner', 7, 9),
        ('method', 'Foo.Inner.baz', 8, 8),
        ('interface', 'Shape', 12, 14),
        ('method', 'Shape.area', 13, 13),
        ('class', 'Singleton', 16, 18),
        ('method', 'Singleton.get', 17, 17),
        ('enum', 'Color', 20, 20),
        ('type', 'Id', 22, 22),
        ('constant', 'MAX', 24, 24),
        ('function', 'top', 26, 26),
    ],
    'sample.lua': [
        ('function', 'helper', 2, 2),
        ('function', 'M.public', 3, 3),
        ('method', 'M.method', 4, 4),
        ('function', 'global', 6, 6),
    ],
    'sample.php': [
        ('module', 'App', 2, 2),
        ('class', 'Foo', 4, 7),
        ('constant', 'Foo.MAX', 5, 5),
        ('method', 'Foo.bar', 6, 6),
        ('interface', 'Shape', 8, 8),
        ('method', 'Shape.area', 8, 8),
        ('trait', 'T', 9, 9),
        ('method', 'T.t', 9, 9),
        ('enum', 'Suit', 10, 10),
        ('function', 'top', 11, 11),
    ],
    'sample.py': [
        ('constant', 'MAX_SIZE', 4, 4),
        ('function', 'top', 10, 14),
        ('function', 'top.inner', 12, 13),
        ('class', 'Outer', 17, 34),
        ('constant', 'Outer.LIMIT', 19, 19),
        ('class', 'Outer.Inner', 21, 23),
        ('method', 'Outer.Inner.method', 22, 23),
        ('method', 'Outer.f', 26, 26),
        ('method', 'Outer.f', 28, 28),
        ('method', 'Outer.f', 29, 30),
        ('method', 'Outer.value', 33, 34),
    ],
    'sample.rb': [
        ('module', 'Outer', 2, 9),
        ('class', 'Outer.Foo', 4, 8),
        ('method', 'Outer.Foo.bar', 6, 6),
        ('method', 'Outer.Foo.create', 7, 7),
        ('function', 'top', 10, 10),
    ],
    'sample.rs': [
        ('struct', 'Point', 2, 2),
        ('enum', 'Color', 3, 3),
        ('trait', 'Shape', 4, 4),
        ('method', 'Shape::area', 4, 4),
        ('method', 'Shape::name', 4, 4),
        ('method', 'Point::new', 7, 7),
        ('method', 'Wrapper::area', 9, 9),
        ('module', 'inner', 10, 10),
        ('function', 'inner::helper', 10, 10),
        ('type', 'Alias', 11, 11),
        ('constant', 'MAX', 12, 12),
        ('constant', 'NAME', 13, 13),
        ('function', 'square', 14, 14),
        ('function', 'main', 15, 15),
    ],
    'sample.scala': [
        ('class', 'Foo', 3, 6),
        ('method', 'Foo.bar', 4, 4),
        ('class', 'Foo', 7, 7),
        ('method', 'Foo.apply', 7, 7),
        ('trait', 'Shape', 8, 8),
        ('method', 'Shape.area', 8, 8),
        ('class', 'P', 9, 9),
        ('enum', 'Color', 10, 10),
        ('type', 'Id', 11, 11),
        ('function', 'top', 12, 12),
    ],
    'sample.sh': [
        ('function', 'build', 2, 2),
        ('function', 'deploy', 3, 3),
    ],
    'sample.swift': [
        ('class', 'Foo', 2, 5),
        ('method', 'Foo.bar', 3, 3),
        ('method', 'Foo.init', 4, 4),
        ('struct', 'P', 6, 6),
        ('enum', 'Color', 7, 7),
        ('interface', 'Shape', 8, 8),
        ('method', 'Shape.area', 8, 8),
        ('method', 'Foo.baz', 9, 9),
        ('type', 'Id', 10, 10),
        ('function', 'top', 11, 11),
    ],
    'sample.ts': [
        ('function', 'add', 2, 2),
        ('function', 'mul', 3, 3),
        ('function', 'div', 4, 4),
        ('function', 'parse', 5, 5),
        ('function', 'parse', 6, 6),
        ('function', 'parse', 7, 7),
        ('class', 'Calc', 8, 13),
        ('method', 'Calc.compute', 10, 10),
        ('method', 'Calc.handler', 11, 11),
        ('method', 'Calc.create', 12, 12),
        ('interface', 'Shape', 14, 14),
        ('type', 'ID', 15, 15),
        ('enum', 'Color', 16, 16),
        ('module', 'NS', 17, 17),
        ('function', 'NS.inner', 17, 17),
        ('constant', 'LIMIT', 18, 18),
    ],
    'sample.tsx': [
        ('function', 'Button', 3, 3),
        ('function', 'App', 5, 7),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_definitions_per_language(name):
    structure = analyze(name, (FIXTURES / name).read_bytes())
    assert structure.status == "parsed", structure.status
    got = [(d.kind, d.qualified_name, d.start_line, d.end_line) for d in structure.definitions]
    assert got == EXPECTED[name]
    for i, d in enumerate(structure.definitions):
        assert d.outer_start_line <= d.start_line <= d.end_line
        if d.parent >= 0:
            p = structure.definitions[d.parent]
            assert p.start_line <= d.start_line and d.end_line <= p.end_line and d.parent < i
    _check_partition(structure, (FIXTURES / name).read_bytes())


def _defs(name):
    return {d.qualified_name: d for d in analyze(name, (FIXTURES / name).read_bytes()).definitions}


def test_python_decorators_docstrings_overloads_and_nesting():
    structure = analyze("sample.py", (FIXTURES / "sample.py").read_bytes())
    d = {x.qualified_name: x for x in structure.definitions}
    top = d["top"]
    assert (top.outer_start_line, top.start_line) == (8, 10)  # the leading comment and the decorator
    assert (top.doc_start_line, top.doc_end_line) == (11, 11)
    assert top.signature_line == 10
    assert d["Outer.Inner.method"].kind == "method" and d["top.inner"].kind == "function"
    overloads = [x for x in structure.definitions if x.qualified_name == "Outer.f"]
    assert [x.start_line for x in overloads] == [26, 28, 29]
    assert [x.outer_start_line for x in overloads] == [25, 27, 29]
    assert d["MAX_SIZE"].kind == "constant" and "_private" not in d


def test_qualified_names_of_receivers_impls_namespaces_and_out_of_line_methods():
    go = _defs("sample.go")
    assert go["Server.Start"].kind == "method" and go["Server.Stop"].kind == "method"
    assert go["Server"].kind == "struct" and go["Handler"].kind == "interface"
    assert (go["Server.Start"].doc_start_line, go["Server.Start"].outer_start_line) == (10, 10)
    rust = _defs("sample.rs")
    assert rust["Point::new"].kind == "method" and rust["Shape::area"].kind == "method"
    assert rust["Wrapper::area"].kind == "method"  # impl<T> Shape for Wrapper<T>
    assert rust["Point"].outer_start_line == 1 and rust["Point"].doc_start_line == 1
    cpp = _defs("sample.cpp")
    assert cpp["outer::inner::Widget::resize"].kind == "method"
    assert cpp["outer::Widget::size"].start_line == 15  # out of line: int Widget::size() const
    assert cpp["outer::inner::Widget::grow"].start_line == 16
    java = _defs("Sample.java")
    assert java["Outer.Inner.run"].kind == "method" and java["Outer.toString"].outer_start_line == 8
    assert java["Outer.toString"].signature_line == 10 and java["Outer"].signature_line == 4
    ts = _defs("sample.ts")
    assert ts["mul"].kind == "function" and ts["div"].kind == "function"  # bound to const
    assert ts["Calc.compute"].outer_start_line == 9  # its decorator
    assert [d.kind for d in analyze("x.ts", (FIXTURES / "sample.ts").read_bytes()).definitions
            if d.name == "parse"] == ["function"] * 3  # overload signatures and the implementation


def test_grammar_choice_follows_the_kinds_table():
    assert grammar_for("a.py") == "python" and grammar_for("a.pyi") == "python"
    assert grammar_for("a.ts") == "typescript" and grammar_for("a.tsx") == "tsx" and grammar_for("a.mjs") == "javascript"
    assert grammar_for("a.c") == "c" and grammar_for("a.h") == "cpp" and grammar_for("a.cc") == "cpp"
    assert grammar_for("a.kts") == "kotlin" and grammar_for("a.scala") == "scala"
    assert grammar_for("Makefile") is None and grammar_for("a.md") is None and grammar_for("a.vue") is None


def _check_partition(structure: FileStructure, content: bytes) -> None:
    lines = content.split(b"\n")
    assert structure.lines == len(lines)
    expect = 1
    for c in structure.chunks:
        assert c.start_line == expect and c.end_line >= c.start_line
        expect = c.end_line + 1
        n = c.end_line - c.start_line + 1
        size = sum(len(x) + 1 for x in lines[c.start_line - 1:c.end_line])
        assert (n <= CHUNK_MAX_LINES and size <= CHUNK_MAX_CHARS + 1) or n == 1, (c, n, size)
        assert -1 <= c.definition < len(structure.definitions)
    assert expect == structure.lines + 1


def _source(parts) -> str:
    out = []
    for kind, name, body in parts:
        if kind == "def":
            out.append(f"def {name}(x):\n" + "".join(f"    y = x + {i}  # {'w' * (i % 30)}\n" for i in range(body)))
        elif kind == "class":
            out.append(f"class {name}:\n" + "".join(
                f"    def m{i}(self):\n" + "".join(f"        return {j}\n" for j in range(body)) for i in range(3)))
        elif kind == "comment":
            out.append(f"# {name}\n" * (body % 4 + 1))
        elif kind == "long":
            out.append("x = '" + "z" * (body * 200) + "'\n")
        else:
            out.append(f"print({body})\n" * (body % 7 + 1))
    return "".join(out)


_parts = st.lists(st.tuples(st.sampled_from(["def", "class", "comment", "stmt", "long"]),
                            st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), st.integers(0, 60)), max_size=25)


@settings(max_examples=80, deadline=None)
@given(parts=_parts, trailing=st.sampled_from(["", "\n", "\n\n"]))
def test_chunks_partition_every_file(parts, trailing):
    text = (_source(parts) + trailing).encode()
    structure = analyze("gen.py", text)
    _check_partition(structure, text)
    # Every definition that fits the budget lies inside one chunk.
    for d in structure.definitions:
        n = d.end_line - d.outer_start_line + 1
        size = sum(len(x) + 1 for x in text.split(b"\n")[d.outer_start_line - 1:d.end_line])
        if n <= CHUNK_MAX_LINES and size <= CHUNK_MAX_CHARS:
            holding = [c for c in structure.chunks if c.start_line <= d.outer_start_line and d.end_line <= c.end_line]
            assert holding, d


def _no_head_in_another_chunk(structure: FileStructure) -> None:
    """A definition that labels a chunk has its first line (decorators, leading comments) in a chunk it labels."""
    labelled = {c.definition for c in structure.chunks if c.definition >= 0}
    for i in labelled:
        d = structure.definitions[i]
        holder = next(c for c in structure.chunks if c.start_line <= d.outer_start_line <= c.end_line)
        assert holder.definition == i, (d.qualified_name, holder, structure.chunk_symbol(holder))


@settings(max_examples=80, deadline=None)
@given(parts=_parts, trailing=st.sampled_from(["", "\n", "\n\n"]))
def test_no_definitions_first_line_is_in_another_chunk(parts, trailing):
    _no_head_in_another_chunk(analyze("gen.py", (_source(parts) + trailing).encode()))


@pytest.mark.parametrize("path, source", [
    ("m.py", "class A:\n    x = 1\n\n\n@decorated\nclass Big(Base):\n    \"\"\"The big class.\n\n    More.\n    \"\"\"\n\n"
             + "".join(f"    def method_{i}(self, v):\n        total = v * {i}\n        return total + {i}\n\n"
                       for i in range(60))),
    ("m.ts", "export function a() { return 1 }\n\n/** The big class. */\nexport class Big extends Base {\n"
             + "".join(f"  method{i}(v: number): number {{\n    const t = v * {i}\n    return t + {i}\n  }}\n"
                       for i in range(60)) + "}\n"),
    ("m.go", "package m\n\nfunc a() int { return 1 }\n\n// Big is big.\ntype Big struct {\n"
             + "".join(f"\tField{i} int // field {i} of the big struct\n" for i in range(120)) + "}\n"),
])
def test_a_split_definition_starts_a_chunk_under_its_own_label(path, source):
    structure = analyze(path, source.encode())
    assert structure.parsed
    _no_head_in_another_chunk(structure)
    big = next(d for d in structure.definitions if d.name == "Big")
    first = next(c for c in structure.chunks if c.start_line <= big.outer_start_line <= c.end_line)
    assert first.start_line == big.outer_start_line and structure.chunk_symbol(first) == "Big"


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=3000), grammar=st.sampled_from(["python", "typescript", "cpp", "rust", "go", "java"]))
def test_arbitrary_text_never_raises_and_still_partitions(text, grammar):
    data = text.encode("utf-8", "surrogatepass")
    structure = analyze("x", data, grammar=grammar)
    assert structure.status == "parsed"
    _check_partition(structure, data)


def test_syntax_errors_still_give_definitions():
    broken = b"def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Later:\n    def m(self): ...\n"
    structure = analyze("b.py", broken)
    names = {d.qualified_name for d in structure.definitions}
    assert {"ok", "Later", "Later.m"} <= names
    _check_partition(structure, broken)


def test_files_without_a_grammar_get_line_windows():
    text = b"".join(b"line %d\n" % i for i in range(300))
    structure = analyze("notes.md", text)
    assert structure.status == "no-grammar" and not structure.definitions and structure.language is None
    _check_partition(structure, text)
    assert all(c.definition == -1 for c in structure.chunks)
    blank = b"a\n" * 70 + b"\n" + b"b\n" * 70
    windows = line_windows(blank)
    assert windows[0].end_line == 71  # prefers to end at the blank line


def test_time_budget_and_missing_extra_fall_back_to_windows(monkeypatch):
    big = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(20000)).encode()
    slow = analyze("big.py", big, budget_s=0.0)
    assert slow.status == "timeout" and not slow.definitions
    _check_partition(slow, big)
    assert analyze("big.py", big, budget_s=None).status == "parsed"  # the parser recovers for the next file
    import codelex.structure.extract as extract

    def missing(grammar):
        raise ImportError("No module named 'tree_sitter'")

    monkeypatch.setattr(extract, "_parser", missing)
    unavailable = analyze("a.py", b"def f():\n    pass\n")
    assert unavailable.status == "unavailable" and unavailable.chunks == (Chunk(1, 3, -1),)


def test_enclosing_definition():
    structure = analyze("sample.py", (FIXTURES / "sample.py").read_bytes())
    assert structure.enclosing(13).qualified_name == "top.inner"
    assert structure.enclosing(11).qualified_name == "top"
    assert structure.enclosing(9).qualified_name == "top"  # the decorator line belongs to it
    assert structure.enclosing(23).qualified_name == "Outer.Inner.method"
    assert structure.enclosing(2) is None
    assert isinstance(structure.definitions[0], Definition)


def test_parsing_leaks_nothing_per_parse():
    """Regression (the concurrency soak's RSS growth): py-tree-sitter keeps every object a read callback
    returns, so each budgeted parse leaked its file's content."""
    import gc
    import tracemalloc

    pytest.importorskip("tree_sitter_python")
    from codelex.structure.extract import analyze

    content = b"".join(b"def handler_%d(request):\n    return request.user\n\n" % i for i in range(10))
    analyze("warm.py", content)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(400):
            analyze("leak.py", content + b"# %d\n" % i)  # a fresh object each time, as a file read gives
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 150_000, grown  # was ~1 MB (400 contents)


def test_files_past_the_structure_cap_get_line_windows_without_a_parse(monkeypatch):
    """Regression (hardening/hostile.py): an uncapped 21 MB file was parsed, peaking at 1.5 GB."""
    pytest.importorskip("tree_sitter_python")
    from codelex.structure import extract

    monkeypatch.setattr(extract, "STRUCTURE_MAX_BYTES", 1000)
    content = b"".join(b"def f%d():\n    return %d\n" % (i, i) for i in range(200))
    result = extract.analyze("big.py", content)
    assert result.status == "too-large" and not result.definitions
    assert result.chunks[0].start_line == 1 and result.chunks[-1].end_line == result.lines
    assert extract.analyze("small.py", content[:500]).status == "parsed"
