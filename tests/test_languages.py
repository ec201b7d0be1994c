"""The language registry (codelex.languages): every entry holds together, and it is the one place a language is.

Two kinds of test: consistency (each extension maps back to its kind, each
grammar is one the ``structure`` extra installs, each rule set and import
family exists in the stage that implements it, the native path table agrees)
and single source (the stages that used to keep their own tables hold none,
and a new entry reaches every stage with nothing else changed).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

import codelex
from codelex import kinds, languages
from codelex._native import text as native_text
from codelex.graph import extract as graph_extract
from codelex.graph import graph_language
from codelex.graph.resolve import Resolver
from codelex.languages import (
    DEFINITION_RULES,
    GRAMMARS,
    IMPORT_FAMILIES,
    LANGUAGES,
    Language,
    definition_rules_of,
    grammar_of,
    import_family_of,
    kind_of,
    language_of,
    tables_of,
)
from codelex.structure import languages as structure_languages

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "codelex"


def _sample_paths() -> list[str]:
    paths = [f"d/x{ext}" for lang in LANGUAGES for ext in lang.extensions]
    paths += [f"D/X{ext.upper()}" for lang in LANGUAGES for ext in lang.extensions]
    paths += ["Makefile", "GNUmakefile", "a/makefile", "CMakeLists.txt", "Dockerfile", "Dockerfile.dev", "Containerfile",
              "terragrunt.hcl", "root.hcl", ".bashrc", "x/.go", "README", "x.unknown", "a.b/c", "Dockerfile.go",
              "x.h++", "x.gO"]
    return paths


# --- consistency ----------------------------------------------------------------------


def test_kinds_are_unique_and_sorted():
    kinds_ = [lang.kind for lang in LANGUAGES]
    assert kinds_ == sorted(set(kinds_))
    tables_of(LANGUAGES)  # raises on a kind, extension or alias claimed twice, an unknown grammar...


def test_each_extension_maps_back_to_its_kind():
    for lang in LANGUAGES:
        for ext in lang.extensions:
            assert ext.startswith(".") and ext == ext.lower(), ext
            assert languages.EXTENSION_KIND[ext] == lang.kind
            assert kind_of(f"src/a{ext}") == lang.kind
            assert kind_of(f"src/A{ext.upper()}") == lang.kind
            assert language_of(f"a{ext}") is lang
    assert set(languages.EXTENSION_KIND) == {ext for lang in LANGUAGES for ext in lang.extensions}


def test_special_names_map_to_their_kind():
    assert {lang.kind for lang in LANGUAGES if lang.names} == {"cmake", "docker", "shell", "terragrunt"}
    for name, kind in [("CMakeLists.txt", "cmake"), ("Makefile", "shell"), ("GNUmakefile", "shell"),
                       ("Dockerfile", "docker"), ("Dockerfile.dev", "docker"), ("Containerfile", "docker"),
                       ("terragrunt.hcl", "terragrunt"), ("root.hcl", "terragrunt")]:
        assert kind_of(f"a/{name}") == kind
        assert re.fullmatch(languages.BY_KIND[kind].names, name)


def test_aliases_name_one_kind_each():
    for lang in LANGUAGES:
        for alias in lang.aliases:
            assert alias not in languages.BY_KIND
            assert kinds.canonical_kind(alias.upper()) == lang.kind
        assert kinds.canonical_kind(f" {lang.kind.upper()} ") == lang.kind


def test_public_kinds_are_views_of_the_registry():
    assert codelex.KINDS == {lang.kind: lang.extensions for lang in LANGUAGES}
    assert codelex.KIND_ALIASES == {a: lang.kind for lang in LANGUAGES for a in lang.aliases}
    assert codelex.NON_CODE_KINDS == {lang.kind for lang in LANGUAGES if not lang.code}
    assert codelex.CODE_KINDS == {lang.kind for lang in LANGUAGES if lang.code}
    assert kinds.kind_of is languages.kind_of and kinds.EXTENSION_KIND is languages.EXTENSION_KIND


def _structure_extra() -> list[str]:
    pyproject = REPO / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("pyproject.toml not available (tests run outside the checkout)")
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return [re.split(r"[<>=!~ ;\[]", req, maxsplit=1)[0] for req in extras["structure"]]


def test_every_grammar_module_is_installed_by_the_structure_extra():
    modules = {dist.replace("-", "_") for dist in _structure_extra() if dist.startswith("tree-sitter-")}
    assert {g.module for g in GRAMMARS.values()} <= modules
    assert modules <= {g.module for g in GRAMMARS.values()}, "a grammar package no language uses"


def test_every_grammar_is_used_and_has_node_rules():
    used = set()
    for lang in LANGUAGES:
        if isinstance(lang.grammar, str):
            used.add(lang.grammar)
        elif lang.grammar:
            assert set(lang.grammar) <= set(lang.extensions), lang.kind
            used.update(lang.grammar.values())
    assert used == set(GRAMMARS)
    assert set(structure_languages.SPECS) == set(GRAMMARS)
    assert structure_languages.GRAMMARS == tuple(sorted(GRAMMARS))
    for name, spec in structure_languages.SPECS.items():
        assert spec.name == name
        assert (spec.module, spec.function) == (GRAMMARS[name].module, GRAMMARS[name].entry)


def test_grammar_choice_is_the_registrys():
    for path in _sample_paths():
        assert structure_languages.grammar_for(path) == grammar_of(path), path
    assert grammar_of("a.c") == "c" and grammar_of("a.h") == "cpp" and grammar_of("a.m") is None
    assert grammar_of("a.tsx") == "tsx" and grammar_of("a.mjs") == "javascript" and grammar_of("a.vue") is None
    assert grammar_of("a.zsh") == "bash" and grammar_of("Makefile") is None and grammar_of("a.h++") is None


def test_definition_rule_sets_match_the_native_scanner():
    assert native_text.DEFINITION_RULE_SETS == len(DEFINITION_RULES)
    assert {lang.definitions for lang in LANGUAGES} <= set(DEFINITION_RULES)
    for path in _sample_paths():
        # The native index build picks its rule set from the path by the table generated from the registry.
        assert native_text.definition_rules_of(path) == definition_rules_of(path), path
    assert DEFINITION_RULES[definition_rules_of("a/b.go")] == "go"
    assert DEFINITION_RULES[definition_rules_of("a/b.py")] == "generic"


def test_import_families_match_the_graph():
    families = {lang.imports for lang in LANGUAGES} - {None}
    assert families == set(IMPORT_FAMILIES)
    assert set(graph_extract.REF_FAMILY.values()) == set(IMPORT_FAMILIES)
    resolver = Resolver([], lambda path: None)
    assert set(resolver._by_family) == set(IMPORT_FAMILIES)
    for path in _sample_paths():
        assert graph_language(path) == import_family_of(path), path
    assert graph_language("A.java") == graph_language("a.kt") == "jvm" and graph_language("a.hpp") == "c"


def test_every_import_family_extracts_references_of_its_own_tags():
    samples = {"python": ("a.py", "import os\nfrom . import x\n"), "jsts": ("a.ts", "import x from './y'\n"),
               "go": ("a.go", 'package a\nimport "fmt"\n'), "rust": ("a.rs", "mod m;\nuse crate::x;\n"),
               "jvm": ("A.java", "import a.b.C;\n"), "c": ("a.c", '#include "x.h"\n')}
    assert set(samples) == set(IMPORT_FAMILIES)
    for family, (path, text) in samples.items():
        refs = graph_extract.extract_imports(path, text)
        assert refs and {graph_extract.REF_FAMILY[r.lang] for r in refs} == {family}


def test_a_registry_that_does_not_hold_together_is_refused():
    base = Language("toy", (".toy",))
    for bad in [(base, base), (base, Language("toy2", (".toy",))), (Language("toy", (".TOY",)),),
                (Language("toy", (".toy",), aliases=("zig",)), languages.BY_KIND["zig"]),
                (Language("toy", (".toy",), grammar="nope"),), (Language("toy", (".toy",), grammar={".x": "python"}),),
                (Language("toy", (".toy",), definitions="nope"),), (Language("toy", (".toy",), imports="nope"),)]:
        with pytest.raises(ValueError):
            tables_of(bad)


# --- one place ------------------------------------------------------------------------

#: The modules that once kept a language table of their own.
_ONCE_TABLES = ["kinds.py", "structure/languages.py", "graph/extract.py", "text/tokenize.py",
                "_reference/definitions.py", "_reference/filters.py", "_native/text.pyx"]


def _string_constants(path: Path) -> set[str]:
    if path.suffix == ".pyx":  # Cython: its one-line string literals are enough here
        return {a or b for a, b in re.findall(r"\"([^\"\n]*)\"|'([^'\n]*)'", path.read_text(encoding="utf-8"))}
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_no_stage_lists_extensions_or_grammar_modules_of_its_own():
    if not SRC.is_dir():
        pytest.skip("sources not available (tests run outside the checkout)")
    extensions = set(languages.EXTENSION_KIND)
    grammar_modules = {g.module for g in GRAMMARS.values()}
    for rel in _ONCE_TABLES:
        found = _string_constants(SRC / rel)
        assert not found & extensions, f"{rel} names extensions {sorted(found & extensions)}: ask codelex.languages"
        assert not found & grammar_modules, f"{rel} names grammar modules: ask codelex.languages"
    for path in sorted(SRC.rglob("*.py")):
        if path.name != "languages.py" or path.parent != SRC:
            assert not _string_constants(path) & grammar_modules, path
    for path in sorted((REPO / "csrc" / "text").iterdir()):
        text = path.read_text(encoding="utf-8")
        named = sorted(ext for ext in extensions if f'"{ext}"' in text)
        assert not named, f"{path.name} names extensions {named}: the build generates that table from the registry"


def test_a_new_language_is_one_registry_entry(monkeypatch):
    """One more :class:`Language` and every stage answers for it: kind, alias, grammar, scanner rules, imports."""
    toy = Language("toy", (".toy", ".toyi"), aliases=("ty",), names=r"Toyfile", grammar={".toy": "python"},
                   definitions="go", imports="python")
    monkeypatch.setattr(languages, "LANGUAGES", LANGUAGES + (toy,))
    for name, table in tables_of(languages.LANGUAGES).items():
        monkeypatch.setattr(languages, name, table)
    assert kinds.kind_of("src/a.toy") == "toy" and kinds.kind_of("src/Toyfile") == "toy"
    assert kinds.canonical_kind("TY") == "toy"
    assert structure_languages.grammar_for("a.toy") == "python" and structure_languages.grammar_for("a.toyi") is None
    assert graph_language("a.toy") == "python"
    assert graph_extract.extract_imports("a.toy", "import os\n") == [graph_extract.ImportRef("py", "os")]
    go_block = "const (\n  Alpha = 1\n)\n"
    assert codelex.scan_definitions("a.toy", go_block) == [("Alpha", 2)]
    assert codelex.scan_definitions("a.py", go_block) == []
    from codelex import _reference

    assert _reference.scan_definitions("a.toy", go_block) == [("Alpha", 2)]
    assert _reference.filters_predicate(codelex.parse_query("lang:ty").filters)("src/a.toy")


def test_the_stages_ask_the_registry_for_test_files_reexports_hubs_twins_declarations_and_docs():
    """Test files, re-exporting files, import hubs, compiled twins, declaration files and documentation are
    language facts: each stage asks the registry, and a new entry's facts join its tables."""
    from codelex.docs.sections import is_doc_path
    from codelex.graph import from_mapping
    from codelex.ingest.rules import file_skip_reason, is_twin
    from codelex.lexical.priors import path_kind_factor

    assert languages.is_test_file("pkg/test_io.py") and languages.is_test_file("src/App.spec.tsx")
    assert languages.is_test_file("integration_test/a.go") and not languages.is_test_file("src/testament.py")
    assert path_kind_factor("pkg/test_io.py") < 1.0 and path_kind_factor("pkg/io.py") == 1.0
    assert path_kind_factor("pkg/__init__.py") < 1.0 and path_kind_factor("pkg/__init__.py", reexport=False) == 1.0
    assert file_skip_reason("types.d.ts") == "declaration" and file_skip_reason("types.ts") is None
    assert is_twin("src/a.js", {"src/a.ts"}) and not is_twin("src/a.js", {"src/b.ts"})
    assert languages.is_import_hub("src/lib.rs") and languages.is_import_hub("web/index.tsx")
    assert not languages.is_import_hub("docs/index.md") and not languages.is_import_hub("pkg/index.py")
    assert not languages.is_import_hub("src/index.rs") and not languages.is_import_hub("web/lib.rs.ts")
    graph = from_mapping({"src/a.ts": "import './index'\n", "lib/b.ts": "import '../src/index'\nimport '../src/a'\n",
                          "src/index.ts": "export * from './a'\n"})
    assert "src/index.ts" not in graph.prior_counts() and graph.prior_counts().get("src/a.ts") == 2
    assert is_doc_path("docs/guide.txt") and is_doc_path("README.rst") and not is_doc_path("notes.txt")

    toy = Language("toy", (".toy", ".toyc"), test_names=r"[^/]*_check\.toy", reexport_names=("all.toy",),
                   import_hubs=r"hub\.toy", compiled_from={".toyc": (".toy",)}, declarations=r"\.decl\.toy")
    tables = tables_of(LANGUAGES + (toy,))
    assert tables["TEST_FILE_RE"].search("src/a_check.toy") and "all.toy" in tables["REEXPORT_NAMES"]
    assert tables["COMPILED_FROM"][".toyc"] == (".toy",) and tables["DECLARATION_RE"].search("x.decl.toy")
    assert tables["_IMPORT_HUBS"]["toy"].fullmatch("hub.toy")
    with pytest.raises(ValueError):  # a compiled extension the language does not have
        tables_of((Language("toy", (".toy",), compiled_from={".x": (".toy",)}),))
