"""The language registry: what a language is, written once.

Each :class:`Language` says, for one kind of file (the ``lang:`` vocabulary):

- which files are of it: ``extensions`` (matched lowercased) and ``names``
  (a regular expression over the whole file name, for extensionless or
  otherwise special files: ``Makefile``, ``Dockerfile.dev``);
- what people call it: the kind name and its ``aliases`` (``py``, ``c++``);
- whether it is code (``code=False``: prose, markup and data), and whether
  it is prose documentation (``prose``: Markdown, reStructuredText), which
  a code question ranks below the code it describes;
- which tree-sitter grammar parses it (``grammar``: one name of
  :data:`GRAMMARS` for every file of the kind, a mapping extension → grammar
  where the kind spans several, or None);
- which rule set of the native definition scanner reads it
  (``definitions``: a name of :data:`DEFINITION_RULES`; the build turns the
  table into the scanner's, ``tools/gen_definition_rules.py``);
- which import family extracts and resolves its imports (``imports``: a name
  of :data:`IMPORT_FAMILIES`, or None).

Every stage asks this module: :mod:`codelex.kinds` (the public ``KINDS``
view), the structure stage's grammars, the graph's extractors and resolvers,
the native definition scanner.  Adding a language is one entry of
:data:`LANGUAGES` (plus, where it needs them, a grammar's node rules in
``structure/languages.py``, a scanner rule set or an import family).

Pure Python, standard library only: the build reads it to generate native
tables before the package exists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

__all__ = [
    "ALIASES",
    "BY_KIND",
    "DEFINITION_RULES",
    "DEFINITION_RULES_BY_EXTENSION",
    "EXTENSION_KIND",
    "GRAMMARS",
    "IMPORT_FAMILIES",
    "LANGUAGES",
    "Grammar",
    "Language",
    "canonical_kind",
    "definition_rules_of",
    "extname",
    "grammar_of",
    "import_family_of",
    "is_prose",
    "kind_of",
    "language_of",
    "tables_of",
]


class Grammar(NamedTuple):
    """A tree-sitter grammar: the Python module of its PyPI package and the function giving its language."""

    module: str
    entry: str = "language"


#: The grammars, by name (the structure stage's node rules are keyed by these names too).  Each module is
#: installed by the ``structure`` extra (``tree-sitter-python`` gives ``tree_sitter_python``).
GRAMMARS: dict[str, Grammar] = {
    "bash": Grammar("tree_sitter_bash"),
    "c": Grammar("tree_sitter_c"),
    "cpp": Grammar("tree_sitter_cpp"),
    "csharp": Grammar("tree_sitter_c_sharp"),
    "go": Grammar("tree_sitter_go"),
    "java": Grammar("tree_sitter_java"),
    "javascript": Grammar("tree_sitter_javascript"),
    "kotlin": Grammar("tree_sitter_kotlin"),
    "lua": Grammar("tree_sitter_lua"),
    "php": Grammar("tree_sitter_php", "language_php"),
    "python": Grammar("tree_sitter_python"),
    "ruby": Grammar("tree_sitter_ruby"),
    "rust": Grammar("tree_sitter_rust"),
    "scala": Grammar("tree_sitter_scala"),
    "swift": Grammar("tree_sitter_swift"),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx"),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript"),
}

#: The native definition scanner's rule sets; a rule set's id is its index here (the scanner's
#: ``DefinitionRules`` enumeration, ``csrc/text/definitions.hpp``).  ``generic`` reads any language;
#: ``go`` adds ``const``/``var``/``type`` declarations and their blocks.
DEFINITION_RULES: tuple[str, ...] = ("generic", "go")

#: The import families (``codelex.graph``): each has one extractor (``graph/extract.py``) and one resolver
#: (``graph/resolve.py``), both keyed by these names.
IMPORT_FAMILIES: tuple[str, ...] = ("c", "go", "jsts", "jvm", "python", "rust")


#: A test helper module's name, in any language (``test_helpers.rb``, ``test_helper.exs``).
TEST_HELPER_NAMES = r"test_helpers?[^/]*\.\w+"
#: Directories of tests, whatever the language (``integration_test/``, ``unit-tests/``, Kotlin's ``commonTest/``
#: and ``jvmTest/`` source sets too).
TEST_DIR_RE = re.compile(r"(?:^|/)(?:tests?|__tests__|specs?|testing|e2e|[A-Za-z0-9]+[_-]tests?|[a-z]+Tests?)(?:/|$)")
#: Directories whose plain text files (``.txt``) are documentation.
DOC_TEXT_DIRS = frozenset({"doc", "docs", "documentation"})


class Language(NamedTuple):
    """One kind of file and everything the stages need to know of it.

    (Named tuples, not dataclasses: every process that searches imports this module, and a frozen
    dataclass costs a millisecond to define.)
    """

    kind: str
    extensions: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    #: A regular expression the whole file name must match (``Dockerfile(\\.\\w+)?``), or "".
    names: str = ""
    code: bool = True
    #: Prose documentation (never code): ranked below code for a code question; translations collapse.
    prose: bool = False
    #: A grammar name for every file of the kind, or extension -> grammar (extensions not listed: none).
    grammar: str | Mapping[str, str] | None = None
    definitions: str = "generic"
    imports: str | None = None
    #: A regular expression a test file's whole name matches (``test_[^/]*\\.py``), or "": test files rank
    #: below the code they test (the ranking pipeline's ``test_files`` stage).
    test_names: str = ""
    #: File names that gather a package's names for its importers (``__init__.py``): ranked below the
    #: definitions they re-export.
    reexport_names: tuple[str, ...] = ()
    #: A regular expression of the file names an import names for what they re-export (Rust ``mod.rs``, a
    #: JS/TS ``index.*``), or "": the import graph counts no importers for them.
    import_hubs: str = ""
    #: Compiled extension -> the source extensions it is compiled from: a compiled file beside its source (same
    #: stem, same directory) is a build artifact and is not indexed.
    compiled_from: Mapping[str, tuple[str, ...]] | None = None
    #: A regular expression of the ends of file names that only declare types for other files (``.d.ts``), or
    #: "": such files are not indexed.
    declarations: str = ""

    def grammar_for_extension(self, ext: str) -> str | None:
        """The grammar a file of this kind with extension ``ext`` (lowercased) is parsed with, or None."""
        if isinstance(self.grammar, str) or self.grammar is None:
            return self.grammar
        return self.grammar.get(ext)


def _each(grammar: str, *extensions: str) -> dict[str, str]:
    return dict.fromkeys(extensions, grammar)


#: The languages, sorted by kind.
LANGUAGES: tuple[Language, ...] = (
    Language("clojure", (".clj", ".cljc", ".cljs", ".edn"), aliases=("clj", "cljs")),
    Language("cmake", (".cmake",), names=r"CMakeLists\.txt"),
    Language("csharp", (".cs",), aliases=("cs", "c#", "dotnet"), grammar="csharp", test_names=r"[^/]*Tests?\.cs"),
    Language("css", (".css", ".less", ".sass", ".scss"), aliases=("scss", "sass", "less"), code=False),
    Language("cue", (".cue",)),
    Language("cxx", (".c", ".h", ".c++", ".cc", ".cp", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp",
                     ".txx", ".c++m", ".cppm", ".cxxm", ".ixx", ".cu", ".hip", ".m", ".mm", ".cl", ".clcpp"),
             aliases=("c", "h", "c++", "cpp", "cc", "hpp", "cplusplus", "objc", "objective-c", "cuda", "cu"),
             # Objective-C (.m, .mm) and OpenCL (.cl, .clcpp) have no grammar here.
             grammar={".c": "c", **_each("cpp", ".h", ".hh", ".hpp", ".hxx", ".cc", ".cpp", ".cxx", ".c++", ".cp",
                                         ".inl", ".ipp", ".tpp", ".txx", ".cppm", ".cxxm", ".c++m", ".ixx", ".cu",
                                         ".hip")},
             imports="c", test_names=r"[^/]*_test\.(?:cpp|cc|c)|test_[^/]*\.(?:cpp|cc|c)"),
    Language("dart", (".dart",), test_names=r"[^/]*_test\.dart|test_[^/]*\.dart"),
    Language("docker", (".dockerfile",), aliases=("dockerfile",), names=r"Dockerfile(\.\w+)?|Containerfile"),
    Language("elixir", (".ex", ".exs"), aliases=("ex", "exs")),
    Language("fish", (".fish",)),
    Language("fsharp", (".fs", ".fsi", ".fsx"), aliases=("fs", "f#")),
    Language("gleam", (".gleam",)),
    Language("go", (".go",), aliases=("golang",), grammar="go", definitions="go", imports="go",
             test_names=r"[^/]*_test\.go"),
    Language("haskell", (".hs", ".lhs"), aliases=("hs",)),
    Language("helm-template", (".tpl",)),
    Language("html", (".htm", ".html"), aliases=("htm",), code=False),
    Language("java", (".java",), grammar="java", imports="jvm", test_names=r"[^/]*Tests?\.java",
             reexport_names=("package-info.java",)),
    Language("json", (".json", ".json5", ".jsonc"), code=False),
    Language("jsts", (".cjs", ".cts", ".js", ".jsx", ".mjs", ".mts", ".svelte", ".ts", ".tsx", ".vue"),
             aliases=("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "javascript", "typescript", "node", "vue",
                      "svelte"),
             # Svelte and Vue single-file components have no grammar here.
             grammar={**_each("typescript", ".ts", ".mts", ".cts"), ".tsx": "tsx",
                      **_each("javascript", ".js", ".jsx", ".mjs", ".cjs")},
             imports="jsts", test_names=r"[^/]*\.(?:test|spec)\.[jt]sx?", import_hubs=r"index\..*",
             # (CoffeeScript is no kind here, but its output yields to it all the same)
             compiled_from={".js": (".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte", ".coffee"),
                            ".mjs": (".mts", ".ts", ".tsx", ".cts", ".vue", ".svelte", ".coffee"),
                            ".cjs": (".cts", ".ts", ".tsx", ".mts"),
                            ".jsx": (".tsx", ".ts", ".mts", ".cts")},
             declarations=r"\.d\.(?:ts|mts|cts)"),
    Language("kotlin", (".kt", ".kts"), aliases=("kt", "kts"), grammar="kotlin", imports="jvm",
             test_names=r"[^/]*Tests?\.kt|[^/]*(?:Spec|Suite)\.kt"),
    Language("lua", (".lua",), grammar="lua", test_names=r"[^/]*_test\.lua|test_[^/]*\.lua|[^/]*_spec\.lua"),
    Language("markdown", (".markdown", ".md", ".mdx"), aliases=("md", "mdx"), code=False, prose=True),
    Language("nix", (".nix",)),
    Language("ocaml", (".ml", ".mli"), aliases=("ml",)),
    Language("php", (".php",), grammar="php", test_names=r"[^/]*Tests?\.php"),
    Language("powershell", (".ps1", ".psm1", ".psd1"), aliases=("ps1", "pwsh")),
    Language("prisma", (".prisma",)),
    Language("python", (".py", ".pyi"), aliases=("py", "py3", "pyi", "python3"), grammar="python", imports="python",
             test_names=r"test_[^/]*\.py|[^/]*_test\.py", reexport_names=("__init__.py",)),
    Language("restructuredtext", (".rest", ".rst"), aliases=("rst", "rest"), code=False, prose=True),
    Language("ruby", (".gemspec", ".rake", ".rb", ".ru"), aliases=("rb",), grammar="ruby",
             test_names=r"[^/]*_test\.rb|[^/]*_spec\.rb"),
    Language("rust", (".rs",), aliases=("rs",), grammar="rust", imports="rust",
             import_hubs=r"mod\.rs|lib\.rs|main\.rs"),
    Language("scala", (".scala", ".sc", ".sbt"), aliases=("scala3", "sbt"), grammar="scala",
             test_names=r"[^/]*Tests?\.scala|[^/]*(?:Spec|Suite)\.scala"),
    Language("shell", (".bash", ".sh", ".zsh"), aliases=("sh", "bash", "zsh", "make", "makefile"),
             names=r"(GNU)?[Mm]akefile",
             # Makefiles are shell here, but not bash.
             grammar=_each("bash", ".sh", ".bash", ".zsh")),
    Language("sql", (".sql",)),
    Language("swift", (".swift",), grammar="swift", test_names=r"[^/]*Tests?\.swift|[^/]*(?:Spec|Suite)\.swift"),
    Language("terraform", (".tf", ".tfvars"), aliases=("tf", "hcl")),
    Language("terragrunt", (), names=r"terragrunt\.hcl|root\.hcl"),
    Language("toml", (".toml",), code=False),
    Language("yaml", (".yaml", ".yml"), aliases=("yml",), code=False),
    Language("zig", (".zig", ".zon")),
)


def tables_of(languages: tuple[Language, ...]) -> dict[str, object]:
    """The look-up tables of a list of languages, by the module global each is (those of :data:`LANGUAGES`).

    Raises ``ValueError`` for a registry that does not hold together: a kind,
    extension or alias claimed twice, an alias that is a kind, an unknown
    grammar, rule set or import family, a grammar for an extension the kind
    does not have.
    """
    by_kind: dict[str, Language] = {}
    compiled_exts = {ext for lang in languages for ext in (lang.compiled_from or {})}
    extension_kind: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for lang in languages:
        if lang.kind in by_kind:
            raise ValueError(f"kind {lang.kind!r} registered twice")
        by_kind[lang.kind] = lang
        for ext in lang.extensions:
            if ext in extension_kind:
                raise ValueError(f"extension {ext!r} of {lang.kind!r} is {extension_kind[ext]!r}'s already")
            if not ext.startswith(".") or ext != ext.lower():
                raise ValueError(f"extension {ext!r} of {lang.kind!r}: not a lowercase '.ext'")
            extension_kind[ext] = lang.kind
        for alias in lang.aliases:
            if alias in aliases or alias != alias.lower():
                raise ValueError(f"alias {alias!r} of {lang.kind!r} is another's, or not lowercase")
            aliases[alias] = lang.kind
        grammars = [lang.grammar] if isinstance(lang.grammar, str) else list((lang.grammar or {}).values())
        if not set(grammars) <= set(GRAMMARS):
            raise ValueError(f"{lang.kind!r} names a grammar not in GRAMMARS: {sorted(set(grammars) - set(GRAMMARS))}")
        if isinstance(lang.grammar, Mapping) and not set(lang.grammar) <= set(lang.extensions):
            raise ValueError(f"{lang.kind!r} gives a grammar to extensions it does not have")
        if lang.definitions not in DEFINITION_RULES:
            raise ValueError(f"{lang.kind!r}: unknown definition rule set {lang.definitions!r}")
        if lang.prose and lang.code:
            raise ValueError(f"{lang.kind!r} is prose and code")
        if lang.imports is not None and lang.imports not in IMPORT_FAMILIES:
            raise ValueError(f"{lang.kind!r}: unknown import family {lang.imports!r}")
        for compiled, sources in (lang.compiled_from or {}).items():
            if compiled not in lang.extensions or set(sources) & compiled_exts:
                raise ValueError(f"{lang.kind!r}: {compiled!r} is compiled from a compiled extension, or is not its")
    clash = set(aliases) & set(by_kind)
    if clash:
        raise ValueError(f"aliases that are kinds: {sorted(clash)}")
    named = [lang for lang in languages if lang.names]
    tests = "|".join(lang.test_names for lang in languages if lang.test_names)
    declarations = "|".join(lang.declarations for lang in languages if lang.declarations)
    return {
        # A test file by its name, whatever its directory (a test helper module in any language too).
        "TEST_FILE_RE": re.compile(rf"(?:^|/)(?:{tests}|{TEST_HELPER_NAMES})$"),
        "REEXPORT_NAMES": frozenset(name for lang in languages for name in lang.reexport_names),
        "_IMPORT_HUBS": {lang.kind: re.compile(lang.import_hubs) for lang in languages if lang.import_hubs},
        "COMPILED_FROM": {ext: sources for lang in languages for ext, sources in (lang.compiled_from or {}).items()},
        "DECLARATION_RE": re.compile(rf"(?:{declarations or '(?!)'})$", re.IGNORECASE),
        "BY_KIND": by_kind,
        "EXTENSION_KIND": extension_kind,
        "ALIASES": aliases,
        # The special names as one expression (one match per file on the walk's hot path).
        "_SPECIAL": re.compile("|".join(f"(?P<k{i}>{lang.names})" for i, lang in enumerate(named))),
        "_SPECIAL_LANGUAGE": {f"k{i}": lang for i, lang in enumerate(named)},
        "_SPECIAL_KIND": {f"k{i}": lang.kind for i, lang in enumerate(named)},
        "DEFINITION_RULES_BY_EXTENSION": {
            ext: DEFINITION_RULES.index(lang.definitions)
            for lang in languages if lang.definitions != "generic" for ext in lang.extensions},
    }


_TABLES = tables_of(LANGUAGES)

#: Kind -> language.
BY_KIND: dict[str, Language] = _TABLES["BY_KIND"]
#: Lowercased extension (with its dot) -> kind.
EXTENSION_KIND: dict[str, str] = _TABLES["EXTENSION_KIND"]
#: Alias -> kind (kinds themselves are not listed).
ALIASES: dict[str, str] = _TABLES["ALIASES"]
_SPECIAL: re.Pattern[str] = _TABLES["_SPECIAL"]
_SPECIAL_LANGUAGE: dict[str, Language] = _TABLES["_SPECIAL_LANGUAGE"]
_SPECIAL_KIND: dict[str, str] = _TABLES["_SPECIAL_KIND"]
#: Lowercased extension -> rule set id, for the extensions whose rules are not ``generic`` (id 0).
DEFINITION_RULES_BY_EXTENSION: dict[str, int] = _TABLES["DEFINITION_RULES_BY_EXTENSION"]
#: A test file by its name (the languages' ``test_names``, and test helper modules).
TEST_FILE_RE: re.Pattern[str] = _TABLES["TEST_FILE_RE"]
#: File names that re-export a package's names (the languages' ``reexport_names``).
REEXPORT_NAMES: frozenset[str] = _TABLES["REEXPORT_NAMES"]
#: Compiled extension -> the source extensions it is compiled from (the languages' ``compiled_from``).
COMPILED_FROM: dict[str, tuple[str, ...]] = _TABLES["COMPILED_FROM"]
#: A file that only declares types (the languages' ``declarations``: ``.d.ts``), matched on its name.
DECLARATION_RE: re.Pattern[str] = _TABLES["DECLARATION_RE"]
_IMPORT_HUBS: dict[str, re.Pattern[str]] = _TABLES["_IMPORT_HUBS"]


def extname(path: str) -> str:
    """Extension of the last path segment, as Node's ``path.extname`` gives it."""
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot <= 0:  # no dot, or a leading-dot name such as ".bashrc"
        return ""
    return base[dot:]


def language_of(path: str) -> Language | None:
    """The language of a file, from its special name or its lowercased extension."""
    base = path.rsplit("/", 1)[-1]
    m = _SPECIAL.fullmatch(base)
    if m is not None:
        return _SPECIAL_LANGUAGE[m.lastgroup]
    kind = EXTENSION_KIND.get(extname(base).lower())
    return BY_KIND[kind] if kind is not None else None


def kind_of(path: str) -> str | None:
    """The kind of a file (that of :func:`language_of`), or None.  On the walk's hot path: one match, one look-up."""
    base = path.rsplit("/", 1)[-1]
    m = _SPECIAL.fullmatch(base)
    if m is not None:
        return _SPECIAL_KIND[m.lastgroup]
    return EXTENSION_KIND.get(extname(base).lower())


def canonical_kind(name: str) -> str | None:
    """The kind a kind name or alias (any case, surrounding blanks ignored) stands for, or None."""
    key = name.strip().lower()
    if key in BY_KIND:
        return key
    return ALIASES.get(key)


def is_prose(path: str) -> bool:
    """Whether a file is prose documentation (its language's ``prose``: Markdown, reStructuredText)."""
    lang = language_of(path)
    return lang is not None and lang.prose


def grammar_of(path: str) -> str | None:
    """The grammar a file is parsed with (a key of :data:`GRAMMARS`), from its kind and extension, or None."""
    lang = language_of(path)
    return lang.grammar_for_extension(extname(path).lower()) if lang is not None else None


def import_family_of(path: str) -> str | None:
    """The import family (a name of :data:`IMPORT_FAMILIES`) whose scanner reads a file's imports, or None."""
    lang = language_of(path)
    return lang.imports if lang is not None else None


def definition_rules_of(path: str) -> int:
    """The id (index in :data:`DEFINITION_RULES`) of the scanner's rule set for a file.

    Chosen by the file's lowercased extension alone, as the native build
    chooses it from the path (a special name never selects one).
    """
    return DEFINITION_RULES_BY_EXTENSION.get(extname(path).lower(), 0)


def is_test_file(path: str) -> bool:
    """Whether a file is a test, by its name (:data:`TEST_FILE_RE`) or its directory (:data:`TEST_DIR_RE`)."""
    return TEST_FILE_RE.search(path) is not None or TEST_DIR_RE.search(path) is not None


def is_import_hub(path: str) -> bool:
    """Whether importers name a file for what it re-exports (its language's ``import_hubs``: ``mod.rs``, a JS/TS
    ``index.*``), not for its own text."""
    hubs = _IMPORT_HUBS.get(kind_of(path) or "")
    return hubs is not None and hubs.fullmatch(path.rsplit("/", 1)[-1]) is not None


def is_documentation(path: str) -> bool:
    """Documentation: prose (:func:`is_prose`: Markdown, reStructuredText), and ``.txt`` files under a
    documentation directory (:data:`DOC_TEXT_DIRS`)."""
    if is_prose(path):
        return True
    parts = path.lower().split("/")
    return parts[-1].endswith(".txt") and any(p in DOC_TEXT_DIRS for p in parts[:-1])
