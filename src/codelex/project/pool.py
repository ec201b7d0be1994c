"""One pool of opened, watched projects: what the per-user server (:mod:`codelex.server`) and the MCP server
(:mod:`codelex.mcp_server`) keep warm, their documentation sections included (each project's docs stage,
kept by its watcher's edits).

A project is kept per ``(root, options)`` (the server's commands may cap file sizes; MCP passes none),
made watched (``Project(root, watch=True, **options)``) the first time it is asked for, or again once
closed.  Nothing is evicted while the pool lives: the server exits when idle and MCP when its client
disconnects, and both then :meth:`ProjectPool.close` it, flushing pending saves.  The pool's lock is held
only to find or make a project, never while one loads, builds or waits, so a slow root never holds another.
Which roots may be asked for is the caller's rule (the server: any root not refused; MCP: the roots it was
started for).
"""

from __future__ import annotations

import threading
from pathlib import Path

from codelex.defaults import DOCS_WAIT_S
from codelex.project import Project

__all__ = ["ProjectPool"]

class ProjectPool:
    """Opened, watched projects by ``(root, options)``, and the docs of each root (see the module docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._projects: dict[tuple, Project] = {}

    def get(self, root: Path, options: dict | None = None) -> Project:
        """The pool's project for ``root`` (made, watched, when absent or closed; nothing is opened or waited
        for: MCP's calls never block).  A project already made first follows its configuration files: a
        valid change re-lists the tree in the background, a broken file raises its
        :class:`~codelex.errors.ConfigError` (this call's error, never silently the old settings).

        Raises ``OSError`` or ``ValueError`` (a :class:`~codelex.errors.ConfigError` among them) when the
        project cannot be made or its configuration is broken.
        """
        project, fresh = self._take(root, options or {})
        if not fresh:
            project.reload_config(wait=False)
        return project

    def project(self, root: Path, options: dict | None = None) -> Project:
        """The pool's project for ``root``, opened and its index published (what the server's commands use).

        Every build runs on the project's own thread and is waited for only until it publishes its
        index: the save that follows (bounded by ``defaults.LOCK_TIMEOUT_S``, a held ``index.lock``
        included) never holds the caller.  A reused project first follows its configuration files (as
        :meth:`get`); one whose index is not ready, or that does not watch (its watcher could not start),
        is opened again, which checks its files by stat.
        """
        project, fresh = self._take(root, options or {})
        if not fresh:
            project.reload_config(wait=False)
            project.wait()
        if fresh or project.status != "ready" or not project.watching:
            project.open(wait=False)
            project.wait()
        return project

    def held(self, root: Path, options: dict | None = None) -> Project | None:
        """The pool's open project for ``root`` and ``options`` when it holds one (None: it has not opened that
        root; asking makes none)."""
        key = (root, tuple(sorted((options or {}).items())))
        with self.lock:
            project = self._projects.get(key)
        return project if project is not None and project.status != "closed" else None

    def _take(self, root: Path, options: dict) -> tuple[Project, bool]:
        key = (root, tuple(sorted(options.items())))
        with self.lock:
            project = self._projects.get(key)
            fresh = project is None or project.status == "closed"
            if fresh:
                project = Project(root, watch=True, **options)
                self._projects[key] = project
        return project, fresh

    def watch_states(self) -> dict[str, str]:
        """``{root: watcher state}`` of the projects in the pool (the server's ``serve --status``)."""
        with self.lock:
            return {str(key[0]): p.watch_status["state"] for key, p in self._projects.items()}

    def docs(self, root: Path, max_bytes=None, timeout: float | None = DOCS_WAIT_S):
        """The documentation sections of ``root`` (a :class:`~codelex.docs.DocsIndex`): those of the pool's
        project for it (:meth:`codelex.Project.docs`: read once by a job, then kept by the watcher's edits;
        concurrent cold callers wait for the one reading, at most ``timeout`` s: a ``TimeoutError`` past it).
        ``max_bytes`` given, the project of that cap.  Raises the settings' :class:`~codelex.errors.ConfigError`
        when a settings file is broken."""
        return self.get(root, {"max_bytes": max_bytes} if max_bytes is not None else None).docs(timeout)

    def close(self) -> None:
        """Close every project (flushing pending saves) and forget them; the pool stays usable."""
        with self.lock:
            projects, self._projects = list(self._projects.values()), {}
        for project in projects:
            project.close()
