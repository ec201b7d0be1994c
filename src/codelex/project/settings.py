"""What a project was asked for, and the settings its root is indexed with as its configuration files change.

A :class:`Request` is what :class:`codelex.Project` was given (validated by
:func:`request_of`); the configuration files (:mod:`codelex.project.config`)
fill in the rest (:func:`derive`), now and whenever they change
(:func:`follow_config`: a refresh when which files are indexed changed).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from codelex.defaults import DEFAULT_MAX_BYTES
from codelex.errors import ConfigError
from codelex.project import lifecycle
from codelex.project.state import RootOptions

__all__ = ["CONFIGURED", "Configured", "Request", "checked_root", "derive", "follow_config", "request_of",
           "settings_changed", "strings"]

log = logging.getLogger("codelex")

ProgressCallback = Callable[[int, int, int], object]


class Configured:
    """The default of the settings a project's configuration files may give (:mod:`codelex.project.config`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<from the project's configuration>"


#: Stands for "as the project's configuration says, else the built-in default".
CONFIGURED = Configured()


class Request(NamedTuple):
    """What a :class:`Project` was asked for; :data:`CONFIGURED` (or None) where the configuration decides.

    Handles of one request share a root's state, whose options follow the
    configuration files (:func:`derive`).
    """

    root: Path
    index_dir: Path | None
    use_git: bool | None
    max_files: object  # int, None or CONFIGURED
    max_bytes: object
    ignore: tuple[str, ...]  # added to the configuration's
    include: tuple[str, ...] | None  # None: the configuration's
    kinds: tuple[str, ...] | None  # None: the configuration's languages


def strings(values, what: str) -> tuple[str, ...]:
    out = (values,) if isinstance(values, str) else tuple(values)
    if any(not isinstance(v, str) for v in out):
        raise TypeError(f"{what} must be str")
    return out


def request_of(root: Path, index_dir, use_git, max_files, max_bytes, ignore, include, languages) -> Request:
    """A project's arguments, checked (TypeError, ValueError) and normalized, as a :class:`Request`."""
    from codelex.project.config import check_patterns

    for name, value in (("max_files", max_files), ("max_bytes", max_bytes)):
        if value is not CONFIGURED and value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                                              or value < 0):
            raise ValueError(f"{name} must be a non-negative int or None, not {value!r}")
    ignored = strings(ignore, "ignore patterns")
    check_patterns(ignored, "ignore")
    included = strings(include, "include patterns") if include is not None else None
    check_patterns(included or (), "include")
    kinds: tuple[str, ...] | None = None
    if languages is not None:
        from codelex.query.parse import resolve_kind

        kinds = tuple(sorted({resolve_kind(k, inline=False) for k in strings(languages, "languages")}))
    explicit = Path(index_dir).expanduser().resolve() if index_dir is not None else None
    return Request(root, explicit, use_git, max_files, max_bytes, ignored, included, kinds)


def checked_root(root: str | os.PathLike[str]) -> Path:
    """``root`` resolved; NotADirectoryError or PermissionError when it cannot be a project's root."""
    resolved = Path(root).expanduser().resolve()
    if not resolved.is_dir():
        raise NotADirectoryError(f"not a directory: {root}")
    try:  # before its configuration: an unreadable root is the problem, not its pyproject.toml
        os.scandir(resolved).close()
    except OSError as exc:
        raise PermissionError(f"cannot read the project directory {resolved}: {exc.strerror or exc}") from None
    return resolved


def derive(request: Request, config: dict) -> tuple[RootOptions, dict]:
    """The options a root is indexed with, and the effective settings, from the request and the configuration."""
    max_files = config.get("max_files") if request.max_files is CONFIGURED else request.max_files
    max_bytes = config.get("max_bytes", DEFAULT_MAX_BYTES) if request.max_bytes is CONFIGURED else request.max_bytes
    patterns = tuple(config.get("ignore", ())) + request.ignore
    included = request.include if request.include is not None else tuple(config.get("include", ()))
    kinds = request.kinds
    if kinds is None and "languages" in config:
        kinds = tuple(config["languages"])
    effective = dict(config, ignore=list(patterns), include=list(included), max_bytes=max_bytes,
                     max_files=max_files, languages=list(kinds) if kinds is not None else None)
    options = RootOptions(request.root, request.index_dir, max_files, max_bytes, request.use_git, patterns, included,
                          kinds)
    return options, effective


def follow_config(state, request: Request, *, start: bool, wait: bool = False,
                  progress: ProgressCallback | None = None, structure: bool = True) -> bool:
    """Adopt the configuration files when they changed since ``state``'s options were derived from them.

    Cheap when they did not (an ``lstat`` per file).  When the options
    changed (which files are indexed) and ``start``, the tree is listed
    again: a refresh, waited for when ``wait``.  Returns whether the options
    changed; raises ConfigError for a broken file (the options held stay).
    """
    from codelex.project.config import config_signature, load_config

    signature = config_signature(state.root)
    held = state.config
    if held is not None and held[0] == signature:
        return False
    options, effective = derive(request, load_config(state.root))
    with state.lock:
        state.config = (signature, effective)
        changed = options != state.options
        if changed:
            state.options = options
            if state.index is not None:  # (edits from now on: the new cap; the refresh below lists again)
                state.index.max_bytes = options.max_bytes
        status = state.status
    if changed and start and status not in ("idle", "refused", "closed"):
        # A refresh of the index held: files now left out are removed, files now admitted are read.
        lifecycle.start(state, full=False, wait_for_it=wait, reason=None, supersede=True, progress=progress,
                        structure=structure)
    return changed


def settings_changed(state, request: Request, paths: set[str], progress: ProgressCallback | None,
                     structure: bool) -> None:
    """A watcher saw configuration or ignore files change (on its thread): follow them, list the tree again."""
    try:
        changed = follow_config(state, request, start=True, wait=True, progress=progress, structure=structure)
    except ConfigError as exc:  # the next request through the project reports it
        log.warning("codelex: %s (the previous settings stay until it is fixed)", exc)
        return
    if not changed and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in paths):
        # The walk's (or git's) own rules changed: the listing may differ.
        lifecycle.start(state, full=False, wait_for_it=True, reason=None, supersede=True, progress=progress,
                        structure=structure)
