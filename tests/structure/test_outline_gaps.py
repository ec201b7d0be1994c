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


def test_c_prototype_of_a_defined_function_is_not_a_second_candidate():
    """libuv's ``core.c``: ``show core.c:uv__run_pending`` was ambiguous (its prototype, then its definition)."""
    pytest.importorskip("tree_sitter_c")
    from codelex.project.symbols import find_definition

    source = """
        static void uv__run_pending(uv_loop_t* loop);
        int uv_declared_elsewhere(void);

        static void uv__run_pending(uv_loop_t* loop) {
          (void) loop;
        }
    """
    assert _outline("core.c", source) == [
        ("function", "uv_declared_elsewhere", 2, 2),
        ("function", "uv__run_pending", 4, 6),
    ]
    structure = analyze("core.c", textwrap.dedent(source).lstrip("\n").encode())
    assert find_definition(structure, "uv__run_pending").start_line == 4


_UV_H = """
    struct uv_handle_s {
      UV_HANDLE_FIELDS
    };
    union uv_any_req {
      UV_REQ_TYPE_MAP(XX)
    };
    typedef struct uv_stdio_container_s {
      int flags;
    } uv_stdio_container_t;
    typedef struct {
      int x;
    } uv_anon_t;
    struct uv_loop_s {
      /* User data - use this for whatever. */
      void* data;
      int ipc; /* a trailing comment */
      UV_LOOP_PRIVATE_FIELDS
      UV_MORE_FIELDS
    };
    enum uv_mode { UV_A,
      UV_B
    };
    UV_EXTERN int uv_loop_init(uv_loop_t* loop);
    UV_EXTERN void* uv_loop_get_data(const uv_loop_t*);
"""


@pytest.mark.parametrize("path", ["uv.h", "uv.c"])
def test_c_structs_around_statement_like_macros(path):
    """libuv's ``uv.h``: a macro line in a struct body (``UV_HANDLE_FIELDS``) made tree-sitter read the rest
    of the file as that struct's fields, so ``struct uv_loop_s`` was missing and later prototypes were
    labelled "method"; a typedef's struct was qualified by the typedef (``uv_stdio_container_t::…``)."""
    pytest.importorskip("tree_sitter_c")
    pytest.importorskip("tree_sitter_cpp")
    assert _outline(path, _UV_H) == [
        ("struct", "uv_handle_s", 1, 3),
        ("struct", "uv_any_req", 4, 6),
        ("type", "uv_stdio_container_t", 7, 9),
        ("struct", "uv_stdio_container_s", 7, 9),
        ("type", "uv_anon_t", 10, 12),
        ("struct", "uv_loop_s", 13, 19),
        ("enum", "uv_mode", 20, 22),
        ("function", "uv_loop_init", 23, 23),
        ("function", "uv_loop_get_data", 24, 24),
    ]


def test_only_statement_like_macro_lines_are_set_aside():
    """What the parse sees: the macro lines blanked, same length; a head before ``{`` (``SYSCALL_DEFINE1(…)``)
    and an enumerator after a comma are kept."""
    from codelex.structure.extract import _mask_bare_macros

    source = b"struct s {\n  int a;\n  FIELDS\n  MORE(x)\n};\nint f(void);\nSYSCALL_DEFINE1(close, int, fd)\n{\n}\n" \
             b"enum e { A,\n  B\n};\n"
    masked = _mask_bare_macros(source)
    assert len(masked) == len(source)
    assert masked == source.replace(b"FIELDS", b" " * 6).replace(b"MORE(x)", b" " * 7)


@pytest.mark.parametrize("path", ["a.ts", "a.py"])
def test_a_chunk_is_labelled_by_a_definition_it_holds_the_start_of(path):
    """The tail of a long method merged with the two short methods after it was labelled by the long one."""
    pytest.importorskip("tree_sitter_typescript" if path.endswith(".ts") else "tree_sitter_python")
    if path.endswith(".ts"):
        source = ("class Big {\n  long(v: number): number {\n"
                  + "".join(f"    const t{i} = v * {i};\n" for i in range(100))
                  + "    return v;\n  }\n  short1() { return 1; }\n  short2() { return 2; }\n}\n")
    else:
        source = ("class Big:\n    def long(self, v):\n"
                  + "".join(f"        t{i} = v * {i}\n" for i in range(100))
                  + "        return v\n\n    def short1(self):\n        return 1\n\n"
                  + "    def short2(self):\n        return 2\n")
    structure = analyze(path, source.encode())
    assert structure.parsed
    by_name = {d.qualified_name: d for d in structure.definitions}
    for chunk in structure.chunks:
        label = structure.chunk_symbol(chunk)
        held = [q for q, d in by_name.items() if chunk.start_line <= d.start_line <= chunk.end_line]
        if held:  # a chunk that starts definitions names one of them (the first)
            assert label == held[0], (chunk, label, held)
    short1 = by_name["Big.short1"]
    holder = next(c for c in structure.chunks if c.start_line <= short1.start_line <= c.end_line)
    assert holder.start_line < by_name["Big.long"].end_line  # it does hold long's tail
    assert structure.chunk_symbol(holder) == "Big.short1"
