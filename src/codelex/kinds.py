"""File kinds: the single language vocabulary of ``lang:`` filters, the ``lang``
parameter and the project walk (``KINDS`` is the source of truth)."""

from __future__ import annotations

import re

KINDS: dict[str, tuple[str, ...]] = {
    "clojure": (".clj", ".cljc", ".cljs", ".edn"),
    "cmake": (".cmake",),
    "csharp": (".cs",),
    "css": (".css", ".less", ".sass", ".scss"),
    "cue": (".cue",),
    "cxx": (".c", ".h", ".c++", ".cc", ".cp", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp",
            ".txx", ".c++m", ".cppm", ".cxxm", ".ixx", ".cu", ".hip", ".m", ".mm", ".cl", ".clcpp"),
    "dart": (".dart",),
    "docker": (".dockerfile",),
    "elixir": (".ex", ".exs"),
    "fish": (".fish",),
    "fsharp": (".fs", ".fsi", ".fsx"),
    "gleam": (".gleam",),
    "go": (".go",),
    "haskell": (".hs", ".lhs"),
    "helm-template": (".tpl",),
    "html": (".htm", ".html"),
    "java": (".java",),
    "json": (".json", ".json5", ".jsonc"),
    "jsts": (".cjs", ".cts", ".js", ".jsx", ".mjs", ".mts", ".svelte", ".ts", ".tsx", ".vue"),
    "kotlin": (".kt", ".kts"),
    "lua": (".lua",),
    "markdown": (".md", ".mdx"),
    "nix": (".nix",),
    "ocaml": (".ml", ".mli"),
    "php": (".php",),
    "powershell": (".ps1", ".psm1", ".psd1"),
    "prisma": (".prisma",),
    "python": (".py", ".pyi"),
    "ruby": (".gemspec", ".rake", ".rb", ".ru"),
    "rust": (".rs",),
    "scala": (".scala", ".sc", ".sbt"),
    "shell": (".bash", ".sh", ".zsh"),
    "sql": (".sql",),
    "swift": (".swift",),
    "terraform": (".tf", ".tfvars"),
    "terragrunt": (),
    "toml": (".toml",),
    "yaml": (".yaml", ".yml"),
    "zig": (".zig", ".zon"),
}

#: The short and common names people type for a kind (``lang:py``, ``--lang c++``): each maps to
#: one key of :data:`KINDS`.  Matched case-insensitively, like the kinds themselves.
KIND_ALIASES: dict[str, str] = {
    "py": "python", "py3": "python", "pyi": "python", "python3": "python",
    "js": "jsts", "jsx": "jsts", "mjs": "jsts", "cjs": "jsts", "ts": "jsts", "tsx": "jsts", "mts": "jsts",
    "cts": "jsts", "javascript": "jsts", "typescript": "jsts", "node": "jsts", "vue": "jsts", "svelte": "jsts",
    "rs": "rust",
    "golang": "go",
    "c": "cxx", "h": "cxx", "c++": "cxx", "cpp": "cxx", "cc": "cxx", "hpp": "cxx", "cplusplus": "cxx",
    "objc": "cxx", "objective-c": "cxx", "cuda": "cxx", "cu": "cxx",
    "cs": "csharp", "c#": "csharp", "dotnet": "csharp",
    "fs": "fsharp", "f#": "fsharp",
    "rb": "ruby",
    "sh": "shell", "bash": "shell", "zsh": "shell", "make": "shell", "makefile": "shell",
    "kt": "kotlin", "kts": "kotlin",
    "yml": "yaml",
    "md": "markdown", "mdx": "markdown",
    "tf": "terraform", "hcl": "terraform",
    "ex": "elixir", "exs": "elixir",
    "hs": "haskell",
    "ml": "ocaml",
    "ps1": "powershell", "pwsh": "powershell",
    "dockerfile": "docker",
    "scss": "css", "sass": "css", "less": "css",
    "htm": "html",
    "clj": "clojure", "cljs": "clojure",
    "scala3": "scala", "sbt": "scala",
}

NON_CODE_KINDS: frozenset[str] = frozenset({"css", "html", "json", "markdown", "toml", "yaml"})
CODE_KINDS: frozenset[str] = frozenset(KINDS) - NON_CODE_KINDS

EXTENSION_KIND: dict[str, str] = {ext: kind for kind, exts in KINDS.items() for ext in exts}

# Well-known extensionless (or otherwise special) file names.
_SPECIAL_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"CMakeLists\.txt"), "cmake"),
    (re.compile(r"(GNU)?[Mm]akefile"), "shell"),
    (re.compile(r"Dockerfile(\.\w+)?|Containerfile"), "docker"),
    (re.compile(r"terragrunt\.hcl|root\.hcl"), "terragrunt"),
)


def extname(path: str) -> str:
    """Extension of the last path segment, as Node's ``path.extname`` gives it."""
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot <= 0:  # no dot, or a leading-dot name such as ".bashrc"
        return ""
    return base[dot:]


# The special names as one expression (one match per file on the walk's hot path).
_SPECIAL = re.compile("|".join(f"(?P<k{i}>{p.pattern})" for i, (p, _) in enumerate(_SPECIAL_NAMES)))
_SPECIAL_KIND = {f"k{i}": kind for i, (_, kind) in enumerate(_SPECIAL_NAMES)}


def kind_of(path: str) -> str | None:
    """The kind of a file, from its special name or its lowercased extension."""
    base = path.rsplit("/", 1)[-1]
    m = _SPECIAL.fullmatch(base)
    if m is not None:
        return _SPECIAL_KIND[m.lastgroup]
    return EXTENSION_KIND.get(extname(base).lower())


def canonical_kind(name: str) -> str | None:
    """The :data:`KINDS` key a kind name or alias (any case, surrounding blanks ignored) stands for, or None."""
    key = name.strip().lower()
    if key in KINDS:
        return key
    return KIND_ALIASES.get(key)


def supported_kinds() -> str:
    """The kinds, sorted and comma-joined (for error messages)."""
    return ", ".join(sorted(KINDS))


__all__ = ["CODE_KINDS", "EXTENSION_KIND", "KINDS", "KIND_ALIASES", "NON_CODE_KINDS", "canonical_kind", "extname",
           "kind_of", "supported_kinds"]
