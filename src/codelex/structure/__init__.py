"""The structure stage: definitions and function-sized chunks of source files, from tree-sitter grammars."""

from codelex.structure.extract import analyze, line_windows, structure_available
from codelex.structure.languages import GRAMMARS, grammar_for
from codelex.structure.model import (
    CHUNK_MAX_CHARS,
    CHUNK_MAX_LINES,
    DEFINITION_KINDS,
    STATUSES,
    Chunk,
    Definition,
    FileStructure,
)

__all__ = [
    "CHUNK_MAX_CHARS",
    "CHUNK_MAX_LINES",
    "DEFINITION_KINDS",
    "GRAMMARS",
    "STATUSES",
    "Chunk",
    "Definition",
    "FileStructure",
    "analyze",
    "grammar_for",
    "line_windows",
    "structure_available",
]
