"""The import graph of a project: resolved edges, importer counts, kept up to date per edit."""

from __future__ import annotations

import posixpath
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from codelex.graph.extract import ImportRef, extract_imports, graph_language
from codelex.graph.resolve import MANIFESTS, Resolver
from codelex.languages import is_import_hub
from codelex.runtime import collector_paused

__all__ = ["ImportGraph"]

#: Module files that mostly re-export their children (see ImportGraph.prior_counts).


class ImportGraph:
    """Which project files each file imports, and how many import each.

    Build one with :meth:`build` from the project's files and a reader;
    :meth:`update` re-extracts one edited file and moves the counts of the
    files it touches; :meth:`remove` drops one.  A change to a manifest
    (``go.mod``, ``Cargo.toml``, ``tsconfig.json``, ``package.json``, or a Java
    file's ``package``) re-resolves everything.  Thread-safe.

    Attributes
    ----------
    refs : int
        Import references seen; ``resolved`` of them reached a project file,
        ``unresolved`` did not (third-party packages, system headers).
    """

    def __init__(self, files: Iterable[str], read: Callable[[str], str | None]) -> None:
        self._lock = threading.RLock()
        self._read = read
        self._files = set(files)
        self._refs: dict[str, list[ImportRef]] = {}
        self._out: dict[str, tuple[str, ...]] = {}
        self._in: dict[str, set[str]] = defaultdict(set)
        self._unresolved: dict[str, int] = {}
        self._resolver = Resolver(self._files, read)
        self._version = 0
        self._map = None  # (version, CentralityMap)

    @classmethod
    def build(cls, files: Iterable[str], read: Callable[[str], str | None],
              known: Mapping[str, list[ImportRef]] | None = None) -> ImportGraph:
        """The graph of ``files`` (root-relative paths), reading each with ``read(path)``.

        ``known`` gives references already extracted (a cache whose files
        have not changed): those files are not read.
        """
        graph = cls(files, read)
        with graph._lock, collector_paused():
            for path in sorted(graph._files):
                if graph_language(path) is None:
                    continue
                refs = known.get(path) if known else None
                if refs is None:
                    text = read(path)
                    refs = extract_imports(path, text) if text else []
                graph._refs[path] = list(refs)
            graph._relink_all()
        return graph

    def references(self) -> dict[str, list[ImportRef]]:
        """Every file's references as extracted (what a cache saves)."""
        with self._lock:
            return {path: list(refs) for path, refs in self._refs.items()}

    # --- queries --------------------------------------------------------------

    def imports(self, path: str) -> list[str]:
        """The project files ``path`` imports, sorted."""
        with self._lock:
            return sorted(self._out.get(path, ()))

    def importers(self, path: str) -> list[str]:
        """The project files that import ``path``, sorted."""
        with self._lock:
            return sorted(self._in.get(path, ()))

    def refs_to(self, importer: str, target: str) -> list[ImportRef]:
        """The references of ``importer``, as written, that resolve to the project file ``target``."""
        with self._lock:
            if target not in self._out.get(importer, ()):
                return []
            return [ref for ref in self._refs.get(importer, ()) if target in self._resolver.resolve(importer, ref)]

    def centrality(self) -> dict[str, int]:
        """Importer counts of every file imported at least once (what search's centrality prior takes)."""
        with self._lock:
            return {path: len(src) for path, src in self._in.items() if src}

    def prior_counts(self) -> dict[str, int]:
        """The importer counts the ranking's centrality prior takes (what :meth:`centrality_map` holds).

        Raw file counts overrate three kinds of file, which measured against
        the relevance sets cost more than the prior gained: a package whose
        many files all import one module counts once (importers are counted
        as distinct importing directories); a re-export hub (Rust ``mod.rs``,
        ``lib.rs``, ``main.rs``; JS/TS ``index.*``) is imported for what it
        re-exports, not for its own text, and gets no count; and a Go import
        names a whole package, so its count is shared among the package's
        non-test files (at least 1 each).
        """
        with self._lock:
            go_package_files: dict[str, int] = defaultdict(int)
            for path in self._files:
                if path.endswith(".go") and not path.endswith("_test.go"):
                    go_package_files[posixpath.dirname(path)] += 1
            counts = {}
            for path, sources in self._in.items():
                if not sources or is_import_hub(path):
                    continue
                count = len({posixpath.dirname(s) for s in sources})
                if path.endswith(".go"):
                    count = max(1, round(count / max(1, go_package_files.get(posixpath.dirname(path), 1))))
                counts[path] = count
            return counts

    def centrality_map(self):
        """:meth:`prior_counts` as a :class:`codelex.query.CentralityMap`, the same object until the graph changes."""
        from codelex.query import CentralityMap

        with self._lock:
            if self._map is None or self._map[0] != self._version:
                self._map = (self._version, CentralityMap(self.prior_counts()))
            return self._map[1]

    @property
    def refs(self) -> int:
        with self._lock:
            return sum(len(r) for r in self._refs.values())

    @property
    def unresolved(self) -> int:
        with self._lock:
            return sum(self._unresolved.values())

    @property
    def resolved(self) -> int:
        return self.refs - self.unresolved

    @property
    def edges(self) -> int:
        with self._lock:
            return sum(len(t) for t in self._out.values())

    def stats(self) -> dict:
        with self._lock:
            return {"files": len(self._refs), "refs": self.refs, "resolved": self.resolved,
                    "unresolved": self.unresolved, "edges": self.edges}

    # --- upkeep ---------------------------------------------------------------

    def update(self, path: str, text: str | None = None) -> None:
        """``path`` was created or edited (``text``: its content; read when None)."""
        with self._lock:
            new_file = path not in self._files
            self._files.add(path)
            if text is None:
                text = self._read(path)
            if graph_language(path) is not None:
                self._refs[path] = extract_imports(path, text) if text else []
            if posixpath.basename(path) in MANIFESTS or graph_language(path) == "jvm" or new_file:
                # What other files resolve to may have changed: a new file can be the target of imports
                # that did not resolve before, a manifest or a package line changes the rules.
                self._resolver = Resolver(self._files, self._read)
                self._relink_all()
            else:
                self._link(path)

    def remove(self, path: str) -> None:
        """``path`` is gone: its edges, and the edges to it, with it."""
        with self._lock:
            if path not in self._files:
                return
            self._files.discard(path)
            self._refs.pop(path, None)
            self._resolver = Resolver(self._files, self._read)
            self._relink_all()

    def _unlink(self, path: str) -> None:
        for target in self._out.pop(path, ()):
            sources = self._in.get(target)
            if sources is not None:
                sources.discard(path)
                if not sources:
                    del self._in[target]
        self._unresolved.pop(path, None)

    def _link(self, path: str) -> None:
        self._version += 1
        self._unlink(path)
        targets: list[str] = []
        missing = 0
        for ref in self._refs.get(path, ()):
            found = self._resolver.resolve(path, ref)
            if found:
                targets.extend(found)
            else:
                missing += 1
        unique = tuple(dict.fromkeys(t for t in targets if t in self._files and t != path))
        if unique:
            self._out[path] = unique
            for target in unique:
                self._in[target].add(path)
        if missing:
            self._unresolved[path] = missing

    def _relink_all(self) -> None:
        self._version += 1
        self._out.clear()
        self._in.clear()
        self._unresolved.clear()
        for path in self._refs:
            self._link(path)


def read_from(root: str, cap: int | None) -> Callable[[str], str | None]:
    """A reader of root-relative paths (None for missing, unreadable or larger than ``cap`` files).

    Sources and manifests alike are read through :mod:`codelex.safefs`:
    regular files only, never through a symbolic link, never blocking.
    """
    from codelex.safefs import read_bytes

    def read(path: str) -> str | None:
        try:
            data, _ = read_bytes(root, path, cap)
        except (OSError, ValueError):  # (ValueError: UnsafePathError, an unusable path)
            return None
        if cap is not None and len(data) > cap:
            return None
        return data.decode("utf-8", "surrogateescape")

    return read


def from_mapping(files: Mapping[str, str]) -> ImportGraph:
    """The graph of in-memory files (``path -> content``); tests and tools."""
    return ImportGraph.build(files.keys(), files.get)
