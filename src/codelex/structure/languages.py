"""The grammars, and how each language's syntax tree names its definitions.

Which grammar parses a file, and where each grammar's module is, is the
language registry's (:mod:`codelex.languages`): a file's kind, then its
extension where a kind spans several grammars (``jsts``: JavaScript,
TypeScript, TSX; ``cxx``: C, C++).  Grammars come from the per-language
packages on PyPI (``tree-sitter-python``...), imported lazily;
``tree-sitter-language-pack`` is not used (its 1.x downloads grammars at run
time).  This module holds what only the structure stage needs: how each
grammar's syntax tree names its definitions.

Each language maps definition node types to a :class:`Rule` (its kind, and
how its name is found); a few need a ``refine`` hook for what node types
alone cannot say (a Go method's receiver, a Kotlin ``interface``, a Python
constant).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from codelex import languages as registry

__all__ = ["GRAMMARS", "LanguageSpec", "Rule", "grammar_for", "language", "node_text", "set_source", "spec_for"]


@dataclass(frozen=True)
class Rule:
    """How a definition node is read.

    ``kind`` is a definition kind, or None for a container that qualifies the
    names inside it without being listed (a Rust ``impl``, a Swift
    ``extension``, a Kotlin companion object).  ``name`` says where the name
    is: a field of the node (``"name"``, ``"type"``...), ``"declarator"``
    (the C/C++ declarator chain) or ``"declarators"`` (the first variable
    declarator of a declaration).
    """

    kind: str | None
    name: str = "name"


@dataclass(frozen=True)
class LanguageSpec:
    """One grammar's definition rules (its module is the registry's: :data:`codelex.languages.GRAMMARS`)."""

    name: str
    rules: dict[str, Rule]
    separator: str = "."
    comments: frozenset[str] = frozenset({"comment"})
    #: Siblings before a definition that belong to it (decorators, annotations, attributes).
    decorators: frozenset[str] = frozenset()
    #: Parents whose span is the definition's outer span (decorated_definition, export_statement...).
    wrappers: frozenset[str] = frozenset()
    docstring: str = "comment"  # or "python": the first string of the body
    #: ``refine(node, kind, name) -> (kind, name, qualifier) | None``; None drops the candidate.
    refine: Callable | None = None
    #: Extra query patterns (each capturing ``@def``) for candidates that node types alone do not select.
    extra_query: str = ""
    #: Definitions of these kinds make the functions directly inside them methods.
    class_kinds: frozenset[str] = field(default=frozenset({"class", "struct", "interface", "trait", "enum", None}))

    @property
    def module(self) -> str:
        """The grammar's Python module (``tree_sitter_python``)."""
        return registry.GRAMMARS[self.name].module

    @property
    def function(self) -> str:
        """The module's function giving the grammar's language (``language``, ``language_tsx``)."""
        return registry.GRAMMARS[self.name].entry


_source = threading.local()


def set_source(content: bytes | None) -> None:
    """The bytes the nodes being read were parsed from (per thread).

    A tree parsed through a read callback (the time-budgeted parse) keeps no
    copy of its source, so node text is always sliced from these bytes,
    never read through ``Node.text``.
    """
    _source.content = content


def node_text(node) -> str:
    """The text of a node of the tree being read (see :func:`set_source`)."""
    if node is None:
        return ""
    return _source.content[node.start_byte:node.end_byte].decode("utf-8", "replace")


_text = node_text


def _last_segment(text: str) -> str:
    for sep in ("::", ".", ":", "\\", "#"):
        if sep in text:
            text = text.rsplit(sep, 1)[1]
    return text.strip()


# --- refinements ----------------------------------------------------------------------


def _refine_python(node, kind, name):
    if node.type == "assignment":  # module- or class-level constant: NAME = ...
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier":
            return None
        text = _text(left)
        if not (text.isupper() and any(c.isalpha() for c in text)):
            return None
        return "constant", text, None
    return kind, name, None


def _refine_go(node, kind, name):
    if node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        qualifier = None
        if receiver is not None:
            for param in receiver.named_children:
                t = param.child_by_field_name("type")
                while t is not None and t.type in ("pointer_type", "generic_type", "parenthesized_type"):
                    t = t.child_by_field_name("type") if t.type == "generic_type" else (
                        t.named_children[0] if t.named_children else None)
                if t is not None:
                    qualifier = _text(t)
                    break
        return "method", name, qualifier
    if node.type == "type_spec":
        t = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(t.type if t is not None else "", "type")
    return kind, name, None


def _refine_js(node, kind, name):
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is not None and value.type in ("arrow_function", "function_expression", "function",
                                                "generator_function"):
            return "function", name, None
        target = node.child_by_field_name("name")
        decl = node.parent
        if target is None or target.type != "identifier" or decl is None \
                or decl.type not in ("lexical_declaration", "variable_declaration"):
            return None  # a destructuring pattern names no one thing
        keyword = _text(decl.children[0]) if decl.children else ""
        holder = decl.parent
        if holder is not None and holder.type == "ambient_declaration":  # export declare const X: T
            holder = holder.parent
        # What a module exports is its interface, whatever its value (zod's ``export const ZodString =
        # core.$constructor(...)``): every exported binding is listed, a ``const`` as a constant.
        if holder is not None and holder.type == "export_statement":
            return ("constant" if keyword == "const" else "variable"), name, None
        # Unexported, only an UPPER_CASE top-level const (as Python's constants): a module's other
        # ``const``s are mostly imports and locals (``const fs = require("fs")``).
        if keyword == "const" and holder is not None and holder.type == "program" \
                and name.isupper() and any(c.isalpha() for c in name):
            return "constant", name, None
        return None
    if node.type in ("public_field_definition", "field_definition"):
        value = node.child_by_field_name("value")
        if value is None or value.type not in ("arrow_function", "function_expression", "function"):
            return None
        return "method", name, None
    return kind, name, None


def _declarator_name(node):
    """The identifier a C/C++ declarator declares, and its scope (``Foo`` in ``Foo::bar``)."""
    d = node.child_by_field_name("declarator")
    while d is not None:
        if d.type in ("identifier", "field_identifier", "type_identifier", "operator_name", "destructor_name",
                      "primitive_type"):
            return _text(d), None
        if d.type == "qualified_identifier":
            text = _text(d)
            if "::" in text:
                scope, _, last = text.rpartition("::")
                return last, scope
            return text, None
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type.endswith(("identifier", "declarator"))]
            nxt = named[0] if named else None
        d = nxt
    return None, None


def _refine_c(node, kind, name):
    if node.type in ("function_definition", "declaration", "field_declaration"):
        # A declaration is a definition here only when it declares a function (headers are declarations).
        if node.type != "function_definition":
            d = node.child_by_field_name("declarator")
            while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
                d = d.child_by_field_name("declarator")
            if d is None or d.type != "function_declarator":
                return _c_tag_type(node)
        name, scope = _declarator_name(node)
        if not name:
            return None
        return ("method" if scope else kind), name, scope
    if node.type in ("struct_specifier", "union_specifier", "class_specifier", "enum_specifier"):
        if node.child_by_field_name("body") is None or node.child_by_field_name("name") is None:
            return None  # a reference (struct foo *p) or an anonymous type
    if node.type == "type_definition":
        d = node.child_by_field_name("declarator")
        while d is not None and d.type not in ("type_identifier", "primitive_type"):
            d = d.child_by_field_name("declarator")
        return ("type", _text(d), None) if d is not None else None
    return kind, name, None


def _c_tag_type(node):
    """``struct Foo { ... };`` as a declaration: the struct is the definition (read on its own node)."""
    return None


def _keyword(node) -> str:
    for child in node.children:
        if not child.is_named:
            return _text(child)
        if child.type == "modifiers":
            continue
        break
    return ""


def _refine_kotlin(node, kind, name):
    if node.type == "class_declaration":
        words = {_text(c) for c in node.children if not c.is_named}
        mods = next((c for c in node.children if c.type == "modifiers"), None)
        if "interface" in words:
            return "interface", name, None
        if mods is not None and "enum" in _text(mods).split():
            return "enum", name, None
        return "class", name, None
    if node.type == "property_declaration":
        mods = next((c for c in node.children if c.type == "modifiers"), None)
        if mods is None or "const" not in _text(mods).split():
            return None
        var = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        ident = next((c for c in var.named_children if c.type in ("identifier", "simple_identifier")), None) \
            if var is not None else None
        return ("constant", _text(ident), None) if ident is not None else None
    return kind, name, None


def _refine_swift(node, kind, name):
    if node.type == "class_declaration":
        word = next((_text(c) for c in node.children if not c.is_named and _text(c) in
                     ("class", "struct", "enum", "extension", "actor")), "class")
        if word == "extension":
            return None if not name else (None, name, None)
        return {"struct": "struct", "enum": "enum"}.get(word, "class"), name, None
    return kind, name, None


def _refine_lua(node, kind, name):
    target = node.child_by_field_name("name")
    if target is not None and target.type in ("dot_index_expression", "method_index_expression"):
        field_ = target.child_by_field_name("field") or target.child_by_field_name("method")
        table = target.child_by_field_name("table")
        return ("method" if target.type == "method_index_expression" else "function"), _text(field_), _text(table)
    return kind, name, None


def _refine_ruby(node, kind, name):
    if node.type == "singleton_method":
        return "method", name, None
    if "::" in name:
        scope, _, last = name.rpartition("::")
        return kind, last, scope.replace("::", ".")
    return kind, name, None


def _refine_rust(node, kind, name):
    if node.type == "impl_item":
        t = node.child_by_field_name("type")
        while t is not None and t.type in ("generic_type", "reference_type", "scoped_type_identifier"):
            inner = t.child_by_field_name("type") or t.child_by_field_name("name")
            if inner is None or inner == t:
                break
            t = inner
        return (None, _text(t), None) if t is not None else None
    return kind, name, None


def _refine_csharp(node, kind, name):
    if node.type == "field_declaration":
        mods = {_text(c) for c in node.children if c.type == "modifier"}
        if "const" not in mods and not {"static", "readonly"} <= mods:
            return None
        var = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        decl = next((c for c in var.named_children if c.type == "variable_declarator"), None) if var else None
        ident = decl.child_by_field_name("name") if decl is not None else None
        if ident is None and decl is not None:
            ident = next((c for c in decl.named_children if c.type == "identifier"), None)
        return ("constant", _text(ident), None) if ident is not None else None
    return kind, name, None


def _refine_java(node, kind, name):
    if node.type == "field_declaration":
        mods = next((c for c in node.children if c.type == "modifiers"), None)
        words = set(_text(mods).split()) if mods is not None else set()
        if not {"static", "final"} <= words:
            return None
        decl = node.child_by_field_name("declarator")
        return ("constant", _text(decl.child_by_field_name("name")), None) if decl is not None else None
    return kind, name, None


def _refine_php(node, kind, name):
    if node.type == "const_declaration":
        el = next((c for c in node.named_children if c.type == "const_element"), None)
        ident = next((c for c in el.named_children if c.type == "name"), None) if el is not None else None
        return ("constant", _text(ident), None) if ident is not None else None
    return kind, name, None


def _refine_scala(node, kind, name):
    if node.type == "val_definition":
        pattern = node.child_by_field_name("pattern")
        text = _text(pattern)
        if pattern is None or pattern.type != "identifier" or not text[:1].isupper():
            return None
        return "constant", text, None
    return kind, name, None


R = Rule
_C_RULES = {
    "function_definition": R("function", "declarator"),
    "declaration": R("function", "declarator"),
    "struct_specifier": R("struct"),
    "union_specifier": R("struct"),
    "enum_specifier": R("enum"),
    "type_definition": R("type", "declarator"),
    "preproc_def": R("constant"),
    "preproc_function_def": R("function"),
}

SPECS: dict[str, LanguageSpec] = {
    "python": LanguageSpec(
        "python",
        {"function_definition": R("function"), "class_definition": R("class"), "assignment": R("constant", "left")},
        decorators=frozenset(), wrappers=frozenset({"decorated_definition"}), docstring="python",
        refine=_refine_python,
        extra_query="(module (expression_statement (assignment) @def))\n"
                    "(class_definition body: (block (expression_statement (assignment) @def)))",
    ),
    "javascript": LanguageSpec(
        "javascript",
        {"function_declaration": R("function"), "generator_function_declaration": R("function"),
         "class_declaration": R("class"), "method_definition": R("method"), "variable_declarator": R("function"),
         "field_definition": R("method", "property")},
        decorators=frozenset({"decorator"}),
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
        refine=_refine_js,
    ),
    "typescript": LanguageSpec(
        "typescript",
        {"function_declaration": R("function"), "generator_function_declaration": R("function"),
         "class_declaration": R("class"), "abstract_class_declaration": R("class"),
         "method_definition": R("method"), "abstract_method_signature": R("method"),
         "variable_declarator": R("function"), "public_field_definition": R("method"),
         "interface_declaration": R("interface"), "type_alias_declaration": R("type"),
         "enum_declaration": R("enum"), "internal_module": R("module"), "module": R("module"),
         "function_signature": R("function")},
        decorators=frozenset({"decorator"}),
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration", "ambient_declaration"}),
        refine=_refine_js,
    ),
    "go": LanguageSpec(
        "go",
        {"function_declaration": R("function"), "method_declaration": R("method"), "type_spec": R("type"),
         "type_alias": R("type"), "const_spec": R("constant"), "var_spec": R("variable")},
        wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration", "var_spec_list"}),
        refine=_refine_go,
        # Package-level variables only (a function's are its locals).
        extra_query="(source_file (var_declaration (var_spec) @def))\n"
                    "(source_file (var_declaration (var_spec_list (var_spec) @def)))",
    ),
    "rust": LanguageSpec(
        "rust",
        {"function_item": R("function"), "function_signature_item": R("function"), "struct_item": R("struct"),
         "enum_item": R("enum"), "union_item": R("struct"), "trait_item": R("trait"), "impl_item": R(None, "type"),
         "mod_item": R("module"), "type_item": R("type"), "const_item": R("constant"), "static_item": R("constant"),
         "macro_definition": R("function")},
        separator="::", comments=frozenset({"line_comment", "block_comment"}),
        decorators=frozenset({"attribute_item"}), refine=_refine_rust,
    ),
    "java": LanguageSpec(
        "java",
        {"class_declaration": R("class"), "interface_declaration": R("interface"), "enum_declaration": R("enum"),
         "record_declaration": R("class"), "annotation_type_declaration": R("interface"),
         "method_declaration": R("method"), "constructor_declaration": R("method"),
         "field_declaration": R("constant")},
        comments=frozenset({"line_comment", "block_comment"}), refine=_refine_java,
    ),
    "kotlin": LanguageSpec(
        "kotlin",
        {"class_declaration": R("class"), "object_declaration": R("class"), "function_declaration": R("function"),
         "property_declaration": R("constant"), "type_alias": R("type", "type"), "companion_object": R(None)},
        comments=frozenset({"line_comment", "block_comment", "multiline_comment", "comment"}),
        refine=_refine_kotlin,
    ),
    "scala": LanguageSpec(
        "scala",
        {"class_definition": R("class"), "object_definition": R("class"), "trait_definition": R("trait"),
         "enum_definition": R("enum"), "function_definition": R("function"), "function_declaration": R("function"),
         "type_definition": R("type"), "val_definition": R("constant", "pattern")},
        comments=frozenset({"comment", "block_comment"}), refine=_refine_scala,
    ),
    "swift": LanguageSpec(
        "swift",
        {"class_declaration": R("class"), "protocol_declaration": R("interface"),
         "function_declaration": R("function"), "protocol_function_declaration": R("function"),
         "init_declaration": R("method", "init"), "typealias_declaration": R("type")},
        comments=frozenset({"comment", "multiline_comment"}), refine=_refine_swift,
    ),
    "csharp": LanguageSpec(
        "csharp",
        {"class_declaration": R("class"), "interface_declaration": R("interface"), "struct_declaration": R("struct"),
         "enum_declaration": R("enum"), "record_declaration": R("class"), "delegate_declaration": R("type"),
         "method_declaration": R("method"), "constructor_declaration": R("method"),
         "namespace_declaration": R("module"), "file_scoped_namespace_declaration": R("module"),
         "field_declaration": R("constant")},
        decorators=frozenset({"attribute_list"}), refine=_refine_csharp,
    ),
    "ruby": LanguageSpec(
        "ruby",
        {"class": R("class"), "module": R("module"), "method": R("function"), "singleton_method": R("method")},
        refine=_refine_ruby,
    ),
    "php": LanguageSpec(
        "php",
        {"class_declaration": R("class"), "interface_declaration": R("interface"), "trait_declaration": R("trait"),
         "enum_declaration": R("enum"), "function_definition": R("function"), "method_declaration": R("method"),
         "namespace_definition": R("module"), "const_declaration": R("constant")},
        decorators=frozenset({"attribute_list"}), refine=_refine_php,
    ),
    "lua": LanguageSpec(
        "lua", {"function_declaration": R("function")}, refine=_refine_lua,
    ),
    "bash": LanguageSpec("bash", {"function_definition": R("function")}),
    "c": LanguageSpec("c", dict(_C_RULES), refine=_refine_c),
    "cpp": LanguageSpec(
        "cpp",
        dict(_C_RULES, class_specifier=R("class"), namespace_definition=R("module"),
             # A function, made a method by the class that encloses it (a field_declaration is also what
             # tree-sitter's recovery makes of a prototype after a broken struct: it was labelled "method").
             field_declaration=R("function", "declarator"), alias_declaration=R("type"),
             concept_definition=R("type")),
        separator="::", wrappers=frozenset({"template_declaration"}), refine=_refine_c,
    ),
}
SPECS["tsx"] = LanguageSpec(**{**SPECS["typescript"].__dict__, "name": "tsx"})

#: The languages with a grammar (every grammar of the registry has its rules here).
GRAMMARS = tuple(sorted(SPECS))


def grammar_for(path: str) -> str | None:
    """The grammar a file is parsed with, from its kind (and extension), or None (the registry's answer)."""
    return registry.grammar_of(path)


def spec_for(grammar: str) -> LanguageSpec:
    return SPECS[grammar]


_languages: dict[str, object] = {}
_lock = threading.Lock()


def language(grammar: str):
    """The tree-sitter ``Language`` of a grammar (imported on first use).

    Raises
    ------
    ImportError
        When tree-sitter or the grammar's package is not installed.
    """
    lang = _languages.get(grammar)
    if lang is None:
        with _lock:
            lang = _languages.get(grammar)
            if lang is None:
                import tree_sitter

                where = registry.GRAMMARS[grammar]
                lang = tree_sitter.Language(getattr(importlib.import_module(where.module), where.entry)())
                _languages[grammar] = lang
    return lang
