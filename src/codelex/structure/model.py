"""What the structure stage says about a file: its definitions and the chunks that partition it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CHUNK_MAX_CHARS",
    "CHUNK_MAX_LINES",
    "DEFINITION_KINDS",
    "STATUSES",
    "Chunk",
    "Definition",
    "FileStructure",
]

#: The kinds a definition can have (stored by index: a new kind is appended).
DEFINITION_KINDS = ("function", "method", "class", "struct", "interface", "trait", "enum", "type", "constant",
                    "module", "variable")
#: How a file's structure was obtained: ``parsed`` (a grammar), or why its chunks are line windows instead:
#: ``no-grammar`` (no grammar for its language), ``unavailable`` (the structure extra is not installed),
#: ``parse-failed`` (the grammar raised), ``timeout`` (the parse ran over its time budget), ``too-large``
#: (larger than :data:`codelex.defaults.STRUCTURE_MAX_BYTES`: a syntax tree costs ~50× the text).
STATUSES = ("parsed", "no-grammar", "unavailable", "parse-failed", "timeout", "too-large")

#: A chunk holds at most this many characters or lines, unless a single line is longer.
CHUNK_MAX_CHARS = 1500
CHUNK_MAX_LINES = 80


@dataclass(frozen=True)
class Definition:
    """One definition (function, method, class, type...) of a file; lines are 1-based, inclusive.

    Attributes
    ----------
    name : str
        The defined name (``method``).
    qualified_name : str
        With its enclosing definitions (``Outer.method``; ``Type::fn`` in
        Rust and C++; ``Type.Method`` for a Go method on ``Type``).
    kind : str
        One of :data:`DEFINITION_KINDS`.
    start_line, end_line : int
        The definition itself (its signature through its body).
    outer_start_line : int
        Where its leading decorators, attributes and doc comment begin
        (``<= start_line``).
    signature_line : int
        The line its name stands on (its signature; the text is the file's).
    doc_start_line, doc_end_line : int
        The span of its docstring or leading doc comment (0, 0 when none).
    parent : int
        Index of the enclosing definition in the file's list, or -1.
    """

    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    outer_start_line: int
    signature_line: int
    doc_start_line: int = 0
    doc_end_line: int = 0
    parent: int = -1

    def to_dict(self) -> dict:
        out = {"name": self.name, "qualifiedName": self.qualified_name, "kind": self.kind,
               "startLine": self.start_line, "endLine": self.end_line, "signatureLine": self.signature_line}
        if self.outer_start_line != self.start_line:
            out["outerStartLine"] = self.outer_start_line
        if self.doc_start_line:
            out["doc"] = {"startLine": self.doc_start_line, "endLine": self.doc_end_line}
        return out


@dataclass(frozen=True)
class Chunk:
    """A contiguous range of lines; a file's chunks partition it.

    ``definition`` is the index of the definition the chunk is about (the
    first whole definition in it, or the one it is a part of), -1 for a
    chunk of top-level statements or a line window.
    """

    start_line: int
    end_line: int
    definition: int = -1


@dataclass(frozen=True)
class FileStructure:
    """A file's definitions (in source order, nesting by :attr:`Definition.parent`) and chunks."""

    path: str
    language: str | None
    status: str
    lines: int
    definitions: tuple[Definition, ...] = ()
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)

    @property
    def parsed(self) -> bool:
        return self.status == "parsed"

    def enclosing(self, line: int) -> Definition | None:
        """The innermost definition whose span holds ``line`` (None outside every definition)."""
        best = None
        for d in self.definitions:  # parents come before their children
            if d.outer_start_line <= line <= d.end_line and (best is None or d.start_line >= best.start_line):
                best = d
        return best

    def chunk_symbol(self, chunk: Chunk) -> str | None:
        """The qualified name a chunk is about, if any."""
        return self.definitions[chunk.definition].qualified_name if chunk.definition >= 0 else None
