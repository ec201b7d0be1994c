"""How far a project's stages are, and waiting for one: the one place a caller waits, never a sleep loop.

:func:`wait_until` waits for a stage to be ready (``index``, ``structure``,
``embeddings``, each including the ones before it) on the stages' own jobs,
and says how it went (:class:`Readiness`); :func:`project_status` is what a
project's stages say of themselves at one moment (:class:`ProjectStatus`),
which the surfaces render (:mod:`codelex.output`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["READINESS", "ProjectStatus", "Readiness", "project_status", "wait_until"]

#: What :func:`wait_until` can wait for, each including the ones before it.
READINESS = ("index", "structure", "embeddings")
#: How long a wait for the structure lets an idle structure job begin once the index is there: the job starts
#: within the index's build, so idle after it means no structure is being built (``build_structure=False``).
STRUCTURE_START_S = 1.0
#: While waiting for the embeddings, how long each wait on the embedding job lasts before the code search is
#: asked again (a model loading in the background starts the embedding when it is loaded).
EMBEDDING_LOOK_S = 0.25
#: An exception's message says why, in its first line, at most this long (a message can quote its input back).
BLOCKED_MAX_CHARS = 1000
#: The start of a code search's hint when its ranking cannot become hybrid by waiting (no usable model; the
#: embedding cap reached): :meth:`codelex.Project.code_search`'s words.
NOT_BY_WAITING = ("lexical ranking only", "vectors cover")


@dataclass(frozen=True)
class Readiness:
    """What a wait found: whether ``what`` is ready, after ``waited`` seconds; ``blocked`` says why waiting
    cannot make it so (no usable embedding model, an embedding error, the embedding cap; raw text, which a
    surface escapes as it shows it)."""

    what: str
    ready: bool
    waited: float
    blocked: str | None = None


def wait_until(project, what: str = "index", timeout: float | None = None) -> Readiness:
    """Wait, at most ``timeout`` seconds (None: as long as it takes), until ``what`` is ready.

    Parameters
    ----------
    project : codelex.Project
    what : {"index", "structure", "embeddings"}
        ``index``: the word index built (and the import graph its ranking
        reads, within :data:`~codelex.project.graph_upkeep.GRAPH_WAIT_S`);
        ``structure``: the definitions too; ``embeddings``: until
        ``code_search`` ranks by embeddings as well (asking starts the work:
        the chunks, the model's load, the embedding, in the background),
        answering at once when waiting cannot make it so.
    timeout : float, optional

    Returns
    -------
    Readiness

    Raises
    ------
    ValueError
        For an unknown ``what``.
    """
    if what not in READINESS:
        raise ValueError(f"what must be one of {', '.join(READINESS)}, not {what!r}")
    began = time.monotonic()
    deadline = None if timeout is None else began + max(0.0, timeout)

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    project.wait(left())
    ready = project.index is not None and project.status == "ready"
    if what != "index":
        structure = project.service.structure
        start_s = STRUCTURE_START_S if deadline is None else min(left(), STRUCTURE_START_S)
        structure.build.wait_until(lambda: structure.status != "idle", start_s)
        structure.wait(left())
        ready = ready and structure.status == "ready"
    blocked = None
    if what == "embeddings":
        # (asked only when there is time to wait: asking starts the work)
        vectors, blocked = _await_vectors(project, left) if project.index is not None and left() != 0 \
            else (False, None)
        ready = ready and vectors
    return Readiness(what, ready, time.monotonic() - began, blocked)


def _await_vectors(project, left) -> tuple[bool, str | None]:
    """Wait (within ``left()`` seconds) until ``code_search`` ranks by embeddings as well: ``(ready, why_not)``."""
    from codelex.errors import CodelexError

    looked = False
    while True:
        # (a probe restarts a failed embedding, clearing its error: the error of the last start is read first)
        error = project.embedding_status()["error"] if looked else None
        if error:
            return False, error
        looked = True
        try:
            probe = project.code_search("index status", limit=1, excerpt_lines=1, total_lines=1)
        except (ValueError, TypeError, CodelexError, OSError) as exc:
            return False, (str(exc).splitlines() or [type(exc).__name__])[0][:BLOCKED_MAX_CHARS]
        if probe.mode == "hybrid":
            return True, None
        error = project.embedding_status()["error"]
        if error:
            return False, error
        if probe.available and probe.hint and probe.hint.startswith(NOT_BY_WAITING) \
                and not project.embedding_status()["running"]:
            return False, probe.hint
        remaining = left()
        if remaining is not None and remaining <= 0:
            return False, None
        # On the work under way (the structure, the chunks' preparation, a model's load, the embedding), each
        # look bounded: one ending may start the next, which the next probe finds.
        look = EMBEDDING_LOOK_S if remaining is None else min(EMBEDDING_LOOK_S, remaining)
        began = time.monotonic()
        structure = project.service.structure
        if structure.status == "building":
            structure.wait(look)
        else:
            project.service.chunks.wait_progress(look)
        # Nothing ran (the probe's start of it is a moment away), or a run ended at once (closed, cancelled):
        # the rest of the look, so that the probes never spin.
        spent = time.monotonic() - began
        if spent < look / 10:
            time.sleep(look - spent)


@dataclass(frozen=True)
class ProjectStatus:
    """What a project's stages say of themselves at one moment (see :func:`project_status`)."""

    root: str
    status: str
    reason: str | None
    has_index: bool
    files: int
    truncated: bool
    age: float | None  # seconds since the index was built or refreshed (None: never)
    watching: bool
    watch: dict
    structure: dict
    graph: dict
    embedding: dict


def project_status(project) -> ProjectStatus:
    """The project's stages, as they are now (nothing waited for, nothing started)."""
    coverage = project.coverage
    generated = project.generated_at
    return ProjectStatus(
        root=str(project.root), status=project.status, reason=project.status_reason,
        has_index=project.index is not None, files=coverage.files, truncated=coverage.truncated,
        age=None if generated is None else max(0.0, time.time() - generated), watching=project.watching,
        watch=project.watch_status, structure=project.structure_status, graph=project.graph_status,
        embedding=project.embedding_status())
