"""Admission: which files of one root are indexed, and why the others are not, decided in one place.

An :class:`Admission` is built from a root's options (the caller's ignore
and include patterns, the kinds to index, the size cap) and holds every rule
(:mod:`codelex.ingest.rules`: directories, names, lockfiles, bundles,
declarations, the build-artifact twin, contents) and the repository's
``.gitignore`` files.  The walk (:func:`codelex.ingest.list_files`), per-edit
upkeep and the file watcher (:mod:`codelex.project.edits`) all ask it, and
every file left out gets one of the walk's reason names
(:attr:`codelex.ingest.WalkResult.skipped`), wherever it was decided:

- from the path alone: ``excluded-dir``, ``generated`` (a directory),
  ``ignored`` (a ``.gitignore`` rule or the caller's patterns),
  ``unsupported``, ``lockfile``, ``minified``, ``declaration``,
  ``not-included`` (the include patterns or kinds);
- from the files beside it: ``build-artifact`` (``util.js`` beside
  ``util.ts``);
- on reading (:meth:`Admission.read`, through :mod:`codelex.safefs`):
  ``symlink``, ``not-a-file``, ``vanished``, ``unreadable``, ``too-large``,
  ``binary``, ``generated``.

The walk meets paths in tree order and keeps its own ``.gitignore`` chain
(:meth:`Admission.chain`); a single path (an edit, a watcher's event) is
judged by :meth:`Admission.path_reason` and :meth:`Admission.reason`, which
read the ignore files above it on demand.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Container, Iterable

from codelex.defaults import DEFAULT_MAX_BYTES
from codelex.ingest.rules import TWIN_COMPILED, content_skip_reason, dir_reason, file_skip_reason, twin_sources
from codelex.languages import extname, language_of

__all__ = ["Admission", "is_code"]


def is_code(path: str) -> bool:
    """Whether the registry says ``path`` is code (not prose, markup or data): a capped listing keeps code first."""
    language = language_of(path)
    return language is None or language.code


def _strings(values: Iterable[str], what: str) -> tuple[str, ...]:
    out = tuple(values)
    if any(not isinstance(v, str) for v in out):
        raise TypeError(f"{what} patterns must be str")
    return out


class Admission:
    """The rules that decide which files of a root are indexed (see the module docstring).

    Parameters
    ----------
    root : str or path-like, optional
        The root; needed to judge single paths (its ``.gitignore`` files,
        the files beside a path) and to read.
    ignore : iterable of str
        Gitignore-style patterns, relative to the root, applied after (and
        so overriding) the repository's own ignore files.
    include : iterable of str
        Gitignore-style patterns: when given, only matching files are
        indexed (the others are ``not-included``).
    kinds : iterable of str, optional
        Only files of these kinds (:data:`codelex.KINDS` keys) are indexed.
    max_bytes : int or None
        Larger files are ``too-large``.
    accept : callable, optional
        ``accept(path) -> bool`` replaces the rules on file names (kinds,
        lockfiles, bundles, twins), e.g. to list documentation files.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, ignore: Iterable[str] = (),
                 include: Iterable[str] = (), kinds: Iterable[str] | None = None,
                 max_bytes: int | None = DEFAULT_MAX_BYTES, accept: Callable[[str], bool] | None = None) -> None:
        self.root = os.fspath(root) if root is not None else None
        self.ignore = _strings(ignore, "ignore")
        self.include = _strings(include, "include")
        self.kinds = frozenset(kinds) if kinds is not None else None
        self.max_bytes = max_bytes
        self.accept = accept
        self._selective = self.kinds is not None or bool(self.include)
        self._extra: object = False  # compiled on first use (False: not yet)
        self._included: object = False
        self._oracle = None

    @classmethod
    def of_options(cls, options) -> Admission:
        """The admission of a project root's options (:class:`codelex.project.state.RootOptions`)."""
        return cls(options.root, ignore=options.ignore, include=options.include, kinds=options.kinds,
                   max_bytes=options.max_bytes)

    def documentation(self) -> Admission:
        """The admission of the documentation of the same root, for docs search: the same ignore and include
        patterns and size cap, with documentation's file names (:func:`codelex.languages.is_documentation`:
        prose, and ``.txt`` under a docs directory) in place of the code kinds (``languages`` picks those)."""
        from codelex.languages import is_documentation

        return Admission(self.root, ignore=self.ignore, include=self.include, max_bytes=self.max_bytes,
                         accept=is_documentation)

    # --- what a listing record holds for -------------------------------------------------

    @property
    def key(self) -> str | None:
        """Fingerprint of what decides a walk's candidates (None with ``accept``: such walks are not recorded)."""
        if self.accept is not None:
            return None
        import hashlib

        from codelex.defaults import VERSION
        from codelex.kinds import KINDS

        text = "\0".join([VERSION, *sorted(KINDS), "--", *self.ignore, "-+", *self.include, "-k",
                          *(sorted(self.kinds) if self.kinds is not None else ["*"])])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    # --- ignore files and patterns ----------------------------------------------------

    @property
    def extra(self):
        """The caller's ignore patterns, compiled (None without any)."""
        if self._extra is False:
            from codelex.ingest.ignore import compile_lines

            self._extra = compile_lines(self.ignore) if self.ignore else None
        return self._extra

    @property
    def included(self):
        """The include patterns, compiled (None without any: every file is included)."""
        if self._included is False:
            from codelex.ingest.ignore import compile_lines

            self._included = compile_lines(self.include) if self.include else None
        return self._included

    def chain(self):
        """A walk's ignore chain: the ``.gitignore`` files from the root down, then the caller's patterns."""
        from codelex.ingest.ignore import IgnoreChain

        return IgnoreChain(self.extra)

    def ignored_by_patterns(self, rel: str) -> bool:
        """Whether the caller's ignore patterns exclude ``rel`` or one of its directories."""
        if not self.ignore:
            return False
        from codelex.ingest.ignore import ignored_by

        return ignored_by(self.extra, rel)

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether ``rel`` is ignored, by the caller's patterns or a ``.gitignore`` above it (read on demand)."""
        if self.ignored_by_patterns(rel + "/" if is_dir else rel):
            return True
        if self.root is None:
            return False
        if self._oracle is None:
            from codelex.ingest.ignore import GitignoreOracle

            self._oracle = GitignoreOracle(self.root)
        return self._oracle.ignored(rel, is_dir)

    # --- the rules, one step each (the walk takes them in this order) ------------------

    @staticmethod
    def dir_reason(name: str) -> str | None:
        """Why a directory named ``name`` is not entered: ``excluded``, ``generated`` (as ``pruned_dirs``
        counts them) or None."""
        return dir_reason(name)

    @staticmethod
    def dirs_reason(directory: str) -> str | None:
        """Why a file under ``directory`` (root-relative) is left out for one of its directories:
        ``excluded-dir``, ``generated`` or None."""
        if not directory:
            return None
        for part in directory.split("/"):
            reason = dir_reason(part)
            if reason is not None:
                return "excluded-dir" if reason == "excluded" else reason
        return None

    def name_reason(self, rel: str, present: Container[str]) -> str | None:
        """The rules on a file's own path (its directories and ignore files passed): ``unsupported``,
        ``lockfile``, ``minified``, ``declaration``, ``build-artifact`` (a source file with the same stem is
        ``present`` beside it) or ``not-included``."""
        if self.accept is not None:
            reason = None if self.accept(rel) else "unsupported"
        else:
            reason = file_skip_reason(rel.rsplit("/", 1)[-1])
            if reason is None and present and self.twin(rel, present):
                reason = "build-artifact"
        if reason is None and self._selective and not self.selected(rel):
            reason = "not-included"
        return reason

    def twin(self, rel: str, present: Container[str]) -> bool:
        """Whether ``rel`` is a compiled file whose source (same stem, same directory) is ``present``."""
        sources = twin_sources(rel)
        if not sources:
            return False
        stem = rel[: -len(extname(rel))]
        return any(stem + ext in present for ext in sources)

    def selected(self, rel: str) -> bool:
        """Whether the kinds and include patterns let ``rel`` in."""
        if self.kinds is not None:
            from codelex.kinds import kind_of

            if kind_of(rel) not in self.kinds:
                return False
        if self.include:
            from codelex.ingest.ignore import ignored_by

            return ignored_by(self.included, rel)
        return True

    def size_reason(self, size: int) -> str | None:
        """``too-large`` past the cap, else None."""
        return "too-large" if self.max_bytes is not None and size > self.max_bytes else None

    def too_large(self, sizes):
        """:meth:`size_reason` over a numpy array of sizes: a bool array, True where it says ``too-large``."""
        return sizes > self.max_bytes if self.max_bytes is not None else sizes < sizes.dtype.type(0)

    @staticmethod
    def content_reason(data: bytes) -> str | None:
        """``binary`` or ``generated`` from a content's first bytes, else None."""
        return content_skip_reason(data)

    # --- one path (an edit, a watcher's event) -----------------------------------------

    def path_reason(self, rel: str, is_dir: bool = False, present: Container[str] = ()) -> str | None:
        """Why ``rel`` is left out before it is read, in the walk's order of rules, or None.

        A directory: its own or an ancestor's name, then the ignore files.  A
        file: its directories, the ignore files, then its name (the twin rule
        only with ``present``, the files the walk would see beside it).
        """
        if is_dir:
            reason = self.dirs_reason(rel)
            return "ignored" if reason is None and self.ignored(rel, True) else reason
        reason = self.dirs_reason(rel.rpartition("/")[0])
        if reason is None and self.ignored(rel):
            reason = "ignored"
        return reason if reason is not None else self.name_reason(rel, present)

    def admits(self, rel: str, is_dir: bool = False) -> bool:
        """Whether :meth:`path_reason` lets ``rel`` through (what a watcher asks of each event), the rules on
        the path itself first and the ignore files, which may need reading, last."""
        if is_dir:
            return self.dirs_reason(rel) is None and not self.ignored(rel, True)
        return (self.dirs_reason(rel.rpartition("/")[0]) is None and self.name_reason(rel, ()) is None
                and not self.ignored(rel))

    def reason(self, rel: str, indexed: Container[str] = ()) -> str | None:
        """Why the file ``rel`` is left out before it is read, the twin rule asked of the files beside it on
        disk (as the walk sees them) or in ``indexed``; None: it is read (:meth:`read`) and judged on its
        content."""
        return self.path_reason(rel, present=_Beside(self, indexed) if self.accept is None else ())

    def twins_of(self, rel: str) -> list[str]:
        """The compiled files whose admission depends on ``rel`` (``util.js`` and the like for ``util.ts``)."""
        ext = extname(rel)
        if self.accept is not None or not ext:
            return []
        stem, ext = rel[: -len(ext)], ext.lower()
        return [stem + compiled for compiled, sources in TWIN_COMPILED.items() if ext in sources]

    def present(self, rel: str) -> bool:
        """Whether the walk would see ``rel``: a regular file (not through a link) that no ignore rule hides."""
        if self.root is None:
            return False
        try:
            st = os.lstat(os.path.join(self.root, rel))
        except (OSError, ValueError):
            return False
        return stat.S_ISREG(st.st_mode) and not self.ignored(rel)

    def read(self, rel: str):
        """Read ``rel`` once, as every stage needs it: a :class:`codelex.ingest.Document`, or why it is left out
        (``symlink``, ``not-a-file``, ``vanished``, ``unreadable``, ``too-large``, ``binary``, ``generated``).

        Through :mod:`codelex.safefs`: no symbolic link in any component, regular files only, opened without
        blocking, inside the root.
        """
        from codelex.ingest.reading import read_file

        return read_file(self.root, rel, self.max_bytes)


class _Beside:
    """The files the twin rule looks for beside an edited path: on disk as the walk sees them, or indexed."""

    __slots__ = ("admission", "indexed")

    def __init__(self, admission: Admission, indexed: Container[str]) -> None:
        self.admission = admission
        self.indexed = indexed

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and (rel in self.indexed or self.admission.present(rel))
