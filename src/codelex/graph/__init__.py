"""The import graph: which files import which, resolved without running project code.

:func:`~codelex.graph.extract.extract_imports` scans a file's imports as
written (Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin, C/C++);
:class:`~codelex.graph.resolve.Resolver` maps them to project files through
the project's layout and manifests; :class:`ImportGraph` keeps the edges and
importer counts up to date per edit and gives search its centrality prior.
"""

from codelex.graph.extract import ImportRef, extract_imports, graph_language
from codelex.graph.graph import ImportGraph, from_mapping, read_from
from codelex.graph.resolve import Resolver

__all__ = ["ImportGraph", "ImportRef", "Resolver", "extract_imports", "from_mapping", "graph_language", "read_from"]
