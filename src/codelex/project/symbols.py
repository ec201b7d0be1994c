"""Reading a file's structure: its outline, and one definition's exact source by name (:class:`SymbolQueries`:
the project's outline, read_symbol and structure status)."""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from codelex.defaults import (DEFAULT_LIMIT, MAX_IDENTIFIER_CHARS, REFERENCE_LINE_CHARS, REFERENCES_LINES,
                              REFERENCES_PER_FILE)
from codelex.errors import AmbiguousSymbolError, QueryError, SymbolNotFoundError
from codelex.project.edits import relative_path
from codelex.project.results import FileReferences, ReferenceLine, ReferencesResult, clipped
from codelex.project.service import IndexService
from codelex.structure import Definition, FileStructure

__all__ = ["Outline", "SymbolQueries", "SymbolSource", "find_definition", "outline_of", "overload_stubs"]


@dataclass(frozen=True)
class Outline:
    """A file's definitions, in source order, with their nesting.

    ``available`` is False when the file's structure could not be read with
    a grammar (``status`` and ``reason`` say why); ``definitions`` is then
    empty.
    """

    path: str
    language: str | None
    status: str
    available: bool
    reason: str | None
    definitions: tuple[Definition, ...]
    #: Each definition's signature: the text of its signature line, stripped (at most 200 characters).
    signatures: tuple[str, ...] = ()

    def children(self, index: int = -1) -> list[int]:
        """Indices of the definitions directly inside definition ``index`` (-1: the top level)."""
        return list(self._nesting[1].get(index, ()))

    @functools.cached_property
    def _nesting(self) -> tuple[list[int], dict[int, list[int]]]:
        """(each definition's depth, parent -> children in source order), in one pass.

        Parents come before their children; a parent that does not (a crafted store) is ignored.  A
        definition deeper than :data:`~codelex.structure.extract.MAX_NESTING` (a store saved before
        extraction capped nesting) is listed beside its parent, so no walk and no JSON nests without bound.
        """
        from codelex.structure.extract import MAX_NESTING

        depth: list[int] = []
        parent_of: list[int] = []
        kids: dict[int, list[int]] = {}
        for i, d in enumerate(self.definitions):
            p = d.parent if 0 <= d.parent < i else -1
            if p >= 0 and depth[p] >= MAX_NESTING:
                p = parent_of[p]
            parent_of.append(p)
            depth.append(depth[p] + 1 if p >= 0 else 0)
            kids.setdefault(p, []).append(i)
        return depth, kids

    def order(self) -> list[tuple[int, int]]:
        """``(definition index, depth)`` of every definition, parents first, children in source order
        (iterative and linear, however deep the nesting)."""
        depth, kids = self._nesting
        out: list[tuple[int, int]] = []
        stack = list(reversed(kids.get(-1, ())))
        while stack:
            i = stack.pop()
            out.append((i, depth[i]))
            stack.extend(reversed(kids.get(i, ())))
        return out

    def to_dict(self) -> dict:
        """``{path, language, status, available, reason?, definitions: [..., children: [...]]}``, nested."""
        _, kids = self._nesting
        entries: dict[int, dict] = {}
        top: list[dict] = []
        for i, _depth in self.order():
            entry = self.definitions[i].to_dict()
            if i < len(self.signatures):
                entry["signature"] = self.signatures[i]
            entries[i] = entry
        for parent, children in kids.items():
            target = top if parent < 0 else entries[parent].setdefault("children", [])
            target.extend(entries[k] for k in children)
        out = {"path": self.path, "language": self.language, "status": self.status, "available": self.available,
               "definitions": top}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class SymbolSource:
    """One definition's exact source: lines ``start_line``..``end_line`` (decorators and doc comment included)."""

    path: str
    definition: Definition
    start_line: int
    end_line: int
    text: str
    #: The lines of the ``@overload`` stubs of this definition (Python), when it is their implementation.
    overloads: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        out = {"path": self.path, "symbol": self.definition.qualified_name, "kind": self.definition.kind,
               "startLine": self.start_line, "endLine": self.end_line, "text": self.text}
        if self.overloads:
            out["overloads"] = list(self.overloads)
        return out


_REASONS = {
    "no-grammar": "no grammar for this file's language",
    "unavailable": "the structure extra is not installed: pip install 'codelex[structure]'",
    "parse-failed": "the grammar failed on this file",
    "timeout": "parsing ran over its time budget",
}


#: A signature is cut to this many characters.
SIGNATURE_CHARS = 200


def outline_of(structure: FileStructure, content: bytes | None = None) -> Outline:
    """The outline of a file's structure; ``content`` (the file's bytes) gives the signatures' text."""
    available = structure.status == "parsed"
    signatures: tuple[str, ...] = ()
    if content is not None:
        lines = content.decode("utf-8", "replace").split("\n")
        signatures = tuple(lines[d.signature_line - 1].strip()[:SIGNATURE_CHARS] if 0 < d.signature_line <= len(lines)
                           else "" for d in structure.definitions)
    return Outline(structure.path, structure.language, structure.status, available,
                   None if available else _REASONS.get(structure.status, structure.status),
                   structure.definitions, signatures)


#: A decorator line that marks a Python overload stub: ``@overload``, ``@typing.overload``, ``@t.overload``.
_OVERLOAD = re.compile(r"\s*@\s*(?:[A-Za-z_]\w*\s*\.\s*)*overload\s*(?:#.*)?")


def overload_stubs(structure: FileStructure, lines: Sequence[str] | None) -> frozenset[int]:
    """The indices of a file's definitions that are ``@overload`` stubs (Python; ``lines`` are the file's)."""
    if lines is None or structure.language != "python":
        return frozenset()
    return frozenset(i for i, d in enumerate(structure.definitions)
                     if any(_OVERLOAD.fullmatch(lines[n - 1].rstrip("\r"))
                            for n in range(d.outer_start_line, min(d.start_line, len(lines) + 1))))


def _why_no_definitions(structure: FileStructure) -> str:
    """Why a file shows no definitions: it has none, or they could not be read (and how to fix that)."""
    if structure.status == "unavailable":  # (tree-sitter or this language's grammar is not installed)
        return ("; its definitions cannot be read: the structure extra (tree-sitter and this language's grammar) "
                "is not installed: pip install 'codelex[structure]'")
    if structure.status != "parsed":
        return f"; its definitions could not be read ({structure.status})"
    return "; the file has no definitions"


def _normalize(name: str) -> str:
    return name.strip().replace("::", ".").replace("#", ".").replace("->", ".")


def find_definition(structure: FileStructure, name: str, line: int | None = None, *,
                    lines: Sequence[str] | None = None) -> Definition:
    """The definition ``name`` (qualified, a qualified suffix, or bare) of a file.

    ``line`` picks one of several definitions of the same name (the one whose
    span holds that line, or that starts on it).  Without one, a name whose
    definitions are ``@overload`` stubs and one implementation, all of one
    qualified name, is that implementation (given the file's ``lines``, which
    show the decorators): the stubs say nothing the implementation's
    signature does not, and an agent asking for ``MonkeyPatch.setattr``
    wants the body.

    Raises
    ------
    SymbolNotFoundError
        No definition has that name (the message names the nearest ones).
    AmbiguousSymbolError
        Several do, and ``line`` does not pick one (the message lists them).
    """
    if not isinstance(name, str) or not name.strip():
        raise SymbolNotFoundError("Provide a symbol name.")
    defs = structure.definitions
    want = _normalize(name)
    exact = [d for d in defs if _normalize(d.qualified_name) == want]
    matches = exact or [d for d in defs if _normalize(d.qualified_name).endswith("." + want)] \
        or [d for d in defs if d.name == name.strip()]
    if not matches:
        low = want.lower()
        matches = [d for d in defs if _normalize(d.qualified_name).lower() == low or d.name.lower() == low]
    if line is not None and len(matches) > 1:
        picked = [d for d in matches if d.start_line == line] or \
            [d for d in matches if d.outer_start_line <= line <= d.end_line]
        matches = picked[-1:] if picked else matches
    if line is None and len(matches) > 1 and len({d.qualified_name for d in matches}) == 1:
        stubs = overload_stubs(structure, lines)
        bodies = [d for d in matches if defs.index(d) not in stubs]
        if len(bodies) == 1:
            return bodies[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        names = sorted({d.qualified_name for d in defs} | {d.name for d in defs})
        nearest = tuple(difflib.get_close_matches(name.strip(), names, n=5, cutoff=0.5))
        hint = f"; nearest: {', '.join(nearest)}" if nearest else "" if defs else _why_no_definitions(structure)
        raise SymbolNotFoundError(f"no definition named {name!r} in {structure.path}{hint}", nearest)
    candidates = tuple((d.qualified_name, d.start_line) for d in matches)
    listed = ", ".join(f"{q} (line {ln})" for q, ln in candidates)
    raise AmbiguousSymbolError(f"{name!r} names {len(matches)} definitions in {structure.path}: {listed}; "
                               "give a qualified name or a line", candidates)


class SymbolQueries:
    """Outlines and definitions of one root's files, through its :class:`IndexService`.

    A file's structure comes from the root's structure store, or is read on
    demand when the store does not know it (yet) or it was edited since.
    """

    def __init__(self, service: IndexService) -> None:
        self.service = service
        self.root = service.root

    def _structure(self, path: str | os.PathLike[str]):
        """``(rel, structure, content)`` of a file named from outside: contained, and read once, safely.

        The file is read through :mod:`codelex.safefs` before any structure
        (perhaps cached for that path) is consulted, so a path through a
        symbolic link or naming a FIFO is refused whatever the store holds.
        """
        from codelex.safefs import NotRegularFileError, read_bytes

        rel = relative_path(self.root, path)
        max_bytes = self.service.options.max_bytes
        try:
            content, _ = read_bytes(self.root, rel, max_bytes)
        except FileNotFoundError:
            raise FileNotFoundError(f"no such file in {self.root}: {rel}") from None
        except (NotRegularFileError, IsADirectoryError):
            raise ValueError(f"cannot read {rel}: not a regular file") from None
        except OSError as exc:
            raise ValueError(f"cannot read {rel}: {exc.strerror or exc}") from None
        if max_bytes is not None and len(content) > max_bytes:
            raise ValueError(f"cannot read the structure of {rel}: too-large")
        upkeep = self.service.structure
        upkeep.load(self.service.structure_dir())
        structure = upkeep.structure(rel)
        if structure is None:
            why = self.service.options.admission.read(rel)
            raise ValueError(f"cannot read the structure of {rel}: {why if isinstance(why, str) else 'unreadable'}")
        return rel, structure, content

    def outline(self, path: str | os.PathLike[str]) -> Outline:
        """The definitions of a file, in order, nested, with kinds and spans.

        Parameters
        ----------
        path : str or path-like
            Absolute, or relative to the root.

        Returns
        -------
        Outline
            ``available`` False (with a reason) when the file has no grammar
            or the structure extra is not installed.

        Raises
        ------
        codelex.UnsafePathError
            (a ``ValueError``) When ``path`` is outside the root or reaches
            the file through a symbolic link.
        ValueError
            When the file cannot be read (binary, too large, not a regular
            file).
        FileNotFoundError
            When there is no such file.
        """
        _, structure, content = self._structure(path)
        return outline_of(structure, content)

    def read_symbol(self, path: str | os.PathLike[str], name: str, *, line: int | None = None) -> SymbolSource:
        """The exact source of one definition of a file (decorators and doc comment included).

        Parameters
        ----------
        name : str
            A qualified name (``Outer.method``, ``Type::fn``), a qualified
            suffix (``Inner.method``) or a bare name.
        line : int, optional
            Picks one of several definitions of the same name (without one,
        an overloaded Python name is its implementation, and
        ``overloads`` lists its stubs' lines).

        Raises
        ------
        codelex.SymbolNotFoundError
            No such definition (the message names the nearest ones).
        codelex.AmbiguousSymbolError
            Several match (the message lists them with their lines).
        codelex.UnsafePathError, ValueError, FileNotFoundError
            As :meth:`outline`.
        """
        if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
            raise TypeError(f"line must be int or None, not {type(line).__name__}")
        rel, structure, content = self._structure(path)
        lines = content.decode("utf-8", "replace").split("\n")
        definition = find_definition(structure, name, line, lines=lines)
        lo, hi = definition.outer_start_line, min(definition.end_line, len(lines))
        text = "\n".join(line.rstrip("\r") for line in lines[lo - 1:hi])
        stubs = overload_stubs(structure, lines)
        overloads = () if structure.definitions.index(definition) in stubs else tuple(
            d.start_line for i, d in enumerate(structure.definitions)
            if i in stubs and d.qualified_name == definition.qualified_name)
        return SymbolSource(rel, definition, lo, hi, text, overloads)

    def wait_structure(self, timeout: float | None = None) -> bool:
        """Wait for the background structure build; True when none is running (any more)."""
        return self.service.structure.wait(timeout)

    @property
    def structure_status(self) -> dict:
        """``{status, reason, stats, save_error}`` of the structure store (``idle``, ``building``, ``ready``,
        ``failed``); ``save_error`` says why its last save failed (None when it did not)."""
        upkeep = self.service.structure
        with upkeep.lock:
            return {"status": upkeep.status, "reason": upkeep.reason, "stats": dict(upkeep.stats),
                    "save_error": upkeep.save_error}

    # --- where an identifier is used --------------------------------------------------

    def references(self, name: str, *, limit: int = DEFAULT_LIMIT, offset: int = 0, paths=None,
                   per_file: int = REFERENCES_PER_FILE, lines: int = REFERENCES_LINES) -> ReferencesResult:
        """Where the identifier ``name`` is used: the files that hold it as a whole identifier (case-insensitive,
        as the index), those that define it first, then by how much they use it, each with its lines holding it
        (a definition's own line first and marked).

        The candidates are the word index's postings of its token, never a scan of the tree; a candidate is
        read to list its lines, and left out when none holds ``name`` whole (``getUserByID`` is a candidate
        for ``user``).  One page: from candidate ``offset``, at most ``limit`` files, ``per_file`` lines a file
        and ``lines`` in all; the answer's ``next_offset`` is where the next page starts (None: no more).

        Parameters
        ----------
        name : str
            An identifier of two characters or more (``parse_query``, ``getUserByID``, ``$scope``): one-letter
            names and numbers are not indexed.
        limit, offset : int
            The page: how many files at most, from which candidate (0-based).
        paths : str or sequence of str, optional
            Globs over the root-relative paths (a bare directory: its subtree).
        per_file, lines : int
            Lines shown per file and on the page at most (a file's ``more`` counts the rest).

        Raises
        ------
        codelex.QueryError
            When ``name`` is not an identifier, or not one the index holds.
        """
        from codelex.query import paths_predicate

        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) or len(name) > MAX_IDENTIFIER_CHARS:
            raise QueryError(f"not an identifier: {name!r} (letters, digits, _ and $, not starting with a digit)")
        if len(name.strip("$_")) < 2:
            raise QueryError(f"{name!r} is too short for the word index (one-letter names are not indexed): "
                             "text_search finds it")
        service = self.service
        index, _, hint = service.available_index()
        if index is None:
            return ReferencesResult(False, name, [], 0, hint)
        keep = paths_predicate(paths) if paths else None
        hits = [h for h in index.token_files(name.lower()) if keep is None or keep(h.file)]
        names_of = service.structure.names_source(service.structure_dir(), index) if service.build_structure \
            else (lambda path: None)
        defines = {h.file for h in hits if name in (names_of(h.file) or ())}
        ordered = [h.file for h in hits if h.file in defines] + [h.file for h in hits if h.file not in defines]
        page: list[FileReferences] = []
        shown, at = 0, offset
        while at < len(ordered) and len(page) < limit and shown < lines:
            found = self._file_references(ordered[at], name, ordered[at] in defines, min(per_file, lines - shown))
            at += 1
            if found.lines:  # (a candidate for a part of a longer identifier only: not a use)
                page.append(found)
                shown += len(found.lines)
        return ReferencesResult(True, name, page, len(ordered), next_offset=at if at < len(ordered) else None)

    def _file_references(self, rel: str, name: str, defines: bool, per_file: int) -> FileReferences:
        """``rel``'s lines holding ``name`` as a whole identifier, read through the root's admission."""
        from codelex.ingest import Document

        doc = self.service.options.admission.read(rel)
        if not isinstance(doc, Document):
            return FileReferences(rel, defines, ())
        starts = set()
        if defines:
            structure = self.service.structure.structure(rel)
            starts = {d.start_line for d in structure.definitions if d.name == name} if structure else set()
        word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])", re.IGNORECASE)
        found = [ReferenceLine(n, clipped(line.strip(), REFERENCE_LINE_CHARS), n in starts)
                 for n, line in enumerate(doc.content.decode("utf-8", "replace").splitlines(), 1) if word.search(line)]
        found.sort(key=lambda r: not r.definition)  # (a definition's line first, the rest in order)
        return FileReferences(rel, defines, tuple(found[:per_file]), max(0, len(found) - per_file))

#: An identifier (what :meth:`SymbolQueries.references` takes): letters, digits, ``_`` and ``$``.
_IDENTIFIER = re.compile(r"[^\W\d]\w*|\$[\w$]*|[^\W\d][\w$]*", re.UNICODE)