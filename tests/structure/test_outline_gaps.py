"""Issue 33's outline gaps, each on a few lines of source: what the outline lists, and what ``show`` resolves."""

from __future__ import annotations

import textwrap

import pytest

from codelex.structure import analyze

pytest.importorskip("tree_sitter")


def _outline(path: str, source: str) -> list[tuple[str, str, int, int]]:
    structure = analyze(path, textwrap.dedent(source).lstrip("\n").encode())
    assert structure.status == "parsed", structure.status
    return [(d.kind, d.qualified_name, d.start_line, d.end_line) for d in structure.definitions]


@pytest.mark.parametrize("path", ["schemas.ts", "schemas.js"])
def test_exported_bindings_are_listed_whatever_their_value(path):
    """zod's ``schemas.ts``: 3 of 77 exported constants were listed (only UPPER_CASE names and functions)."""
    pytest.importorskip("tree_sitter_typescript" if path.endswith(".ts") else "tree_sitter_javascript")
    got = _outline(path, """
        export const ZodString = core.$constructor("ZodString", (inst, def) => {
          init(inst);
        });
        export const config = { a: 1 };
        export let counter = 0;
        export var legacy = 1, other = 2;
        export const MAX = 3;
        const helper = call();
        const LIMIT = 5;
        let x = 1;
        export const { a, b } = pair;
        export const fn = () => 1;
        function f() { const inner = 1; }
    """)
    assert got == [
        ("constant", "ZodString", 1, 3),
        ("constant", "config", 4, 4),
        ("variable", "counter", 5, 5),
        ("variable", "legacy", 6, 6),
        ("variable", "other", 6, 6),
        ("constant", "MAX", 7, 7),
        ("constant", "LIMIT", 9, 9),  # unexported: only UPPER_CASE, as Python's constants
        ("function", "fn", 12, 12),
        ("function", "f", 13, 13),
    ]


def test_typescript_exports_in_namespaces_and_ambient_declarations():
    pytest.importorskip("tree_sitter_typescript")
    got = _outline("a.ts", """
        export declare const version: string;
        namespace NS {
          export const schema = build();
          const hidden = 1;
        }
    """)
    assert got == [("constant", "version", 1, 1), ("module", "NS", 2, 5), ("constant", "NS.schema", 3, 3)]


def test_go_grouped_declarations_give_each_member_its_own_span():
    """``const ( … )`` members each spanned the whole block; package-level ``var``s were not listed."""
    pytest.importorskip("tree_sitter_go")
    source = """
        package m

        const (
        \tA = 1
        \t// B is documented.
        \tB = 2
        )
        const Single = 3
        var (
        \tx = 1
        \ty, z int
        )
        var Debug = false
        type (
        \tID int
        \tName string
        )
        func f() { var local = 1 }
    """
    assert _outline("m.go", source) == [
        ("constant", "A", 4, 4),
        ("constant", "B", 6, 6),
        ("constant", "Single", 8, 8),
        ("variable", "x", 10, 10),
        ("variable", "y", 11, 11),
        ("variable", "Debug", 13, 13),
        ("type", "ID", 15, 15),
        ("type", "Name", 16, 16),
        ("function", "f", 18, 18),
    ]
    b = next(d for d in analyze("m.go", textwrap.dedent(source).lstrip("\n").encode()).definitions if d.name == "B")
    assert (b.outer_start_line, b.doc_start_line, b.doc_end_line) == (5, 5, 5)


def test_javascript_declarators_of_one_statement_keep_their_own_lines():
    pytest.importorskip("tree_sitter_javascript")
    assert _outline("a.js", """
        export let first = 1,
          second = make(
            2);
    """) == [("variable", "first", 1, 1), ("variable", "second", 2, 3)]
