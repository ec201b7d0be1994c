"""Analyzing many files on every core, in worker processes that cannot take the caller down.

tree-sitter parses hold the GIL, so parallel parsing needs processes.  Each
worker reads its files itself (nothing but paths crosses the pipe going
out), parses them under the per-file time budget, and sends back one
columnar batch.  A worker that dies (a grammar crash) or stops answering
(a hang the budget did not catch) is killed and replaced; its files are
retried one at a time, and a file that fails alone gets line windows,
status ``parse-failed``.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import xxhash

from codelex.ingest import Document, read_file
from codelex.runtime import neutral_cwd, python_command
from codelex.structure.extract import PARSE_BUDGET_S, analyze, line_windows
from codelex.structure.model import FileStructure
from codelex.structure.store import FileRecord, encode

__all__ = ["AnalysisResult", "analyze_files", "content_hash", "recv_frame", "send_frame", "worker_main"]

log = logging.getLogger("codelex")

#: Files per message to a worker.
BATCH_FILES = 48
#: Below this many files (or bytes), analyzing in the calling process beats starting workers.
INLINE_FILES = 64
INLINE_BYTES = 2 << 20
#: A worker silent for this long beyond its files' parse budgets is presumed hung.
WORKER_SLACK_S = 30.0


def content_hash(content: bytes) -> int:
    """The content hash structures are keyed by (xxh3-64)."""
    return xxhash.xxh3_64_intdigest(content)


@dataclass
class AnalysisResult:
    """What :func:`analyze_files` found: new structures, files unchanged by hash, files it could not read."""

    batches: list = field(default_factory=list)  # StructureSnapshot, one per batch
    unchanged: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # path -> (hash, mtime, size)
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason (vanished, binary...)
    statuses: dict[str, int] = field(default_factory=dict)  # status -> files
    files: int = 0


#: Fault injection for the isolation tests, honoured in worker processes only:
#: ``crash:<path>`` exits the worker abruptly and ``hang:<path>`` stops it answering, on that file.
FAULT_ENV = "CODELEX_STRUCTURE_FAULT"
_in_worker = False


def _inject_fault(path: str) -> None:  # pragma: no cover - runs in a child process
    fault = os.environ.get(FAULT_ENV, "")
    kind, _, target = fault.partition(":")
    if target != path:
        return
    if kind == "crash":
        os._exit(70)
    if kind == "hang":
        time.sleep(3600)


def _one(root: str, path: str, expected: int | None, max_bytes: int | None, budget_s: float | None):
    if _in_worker:
        _inject_fault(path)
    doc = read_file(root, path, max_bytes)
    if not isinstance(doc, Document):
        return "skip", path, doc
    h = content_hash(doc.content)
    if expected is not None and h == expected:
        return "same", path, (h, doc.mtime_ns, doc.size)
    return "ok", path, FileRecord(analyze(path, doc.content, budget_s=budget_s), h, doc.mtime_ns, doc.size)


def _analyze_batch(root, items, max_bytes, budget_s):
    records, others = [], []
    for path, expected in items:
        kind, p, value = _one(root, path, expected, max_bytes, budget_s)
        if kind == "ok":
            records.append(value)
        else:
            others.append((kind, p, value))
    statuses: dict[str, int] = {}
    for r in records:
        statuses[r.structure.status] = statuses.get(r.structure.status, 0) + 1
    return encode(records), others, statuses


_FRAME = struct.Struct("<Q")


def send_frame(stream, obj) -> None:
    """Write one length-prefixed pickle to ``stream`` (a binary file)."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)))
    stream.write(data)
    stream.flush()


def recv_frame(stream):
    """Read one frame written by :func:`send_frame`; EOFError at the end of the stream."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        raise EOFError
    (n,) = _FRAME.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


def worker_main() -> None:  # pragma: no cover - runs in a child process
    """The worker loop (run by :func:`codelex.runtime.python_command` in an isolated interpreter): batches in on stdin, batches out on stdout."""
    import signal

    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the frame stream
    try:
        max_bytes, budget_s = recv_frame(inp)
        while True:
            msg = recv_frame(inp)
            if msg is None:
                return
            root, items = msg
            send_frame(out, _analyze_batch(root, items, max_bytes, budget_s))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        return


def _failed_structure(root: str, path: str, max_bytes: int | None):
    """A file whose analysis killed its worker: line windows, status parse-failed."""
    doc = read_file(root, path, max_bytes)
    if not isinstance(doc, Document):
        return None
    structure = FileStructure(path, None, "parse-failed", doc.content.count(b"\n") + 1, (),
                              tuple(line_windows(doc.content)))
    return FileRecord(structure, content_hash(doc.content), doc.mtime_ns, doc.size)


class _Worker:
    """One worker process: a fresh, isolated interpreter running :func:`worker_main` (no fork, no ``__main__``)."""

    def __init__(self, max_bytes, budget_s) -> None:
        # Isolated, from a neutral directory, with this process's import path: nothing of the checkout
        # being analyzed (a codelex/, json.py or numpy/ at its top) is ever imported.
        self.proc = subprocess.Popen(python_command("codelex.structure.pool:worker_main"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, cwd=neutral_cwd(), close_fds=True)
        send_frame(self.proc.stdin, (max_bytes, budget_s))
        self.batch: list | None = None
        self.deadline = 0.0

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, root, batch, budget_s) -> None:
        self.batch = batch
        self.deadline = time.monotonic() + WORKER_SLACK_S + (budget_s or PARSE_BUDGET_S) * len(batch)
        send_frame(self.proc.stdin, (root, batch))

    def recv(self):
        return recv_frame(self.proc.stdout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(5)
        except Exception:  # already gone
            pass
        self._close()

    def stop(self) -> None:
        try:
            send_frame(self.proc.stdin, None)
            self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.kill()
        self._close()

    def _close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


def analyze_files(root: str | os.PathLike[str], files: list[tuple[str, int | None]], *, workers: int | None = None,
                  max_bytes: int | None = None, budget_s: float | None = PARSE_BUDGET_S,
                  progress: Callable[[int, int], object] | None = None,
                  should_continue: Callable[[], bool] | None = None, inline: bool | None = None) -> AnalysisResult:
    """Analyze ``files`` (``(path, expected content hash or None)``) of ``root``.

    A file whose content hash equals the expected one is reported as
    unchanged, not parsed again.  Parameters ``workers`` (default: one per
    CPU), ``inline`` (default: in this process for a small job),
    ``progress(done, total)`` and ``should_continue()`` (polled between
    batches; False stops early and returns what was done).
    """
    root = os.path.abspath(root)  # workers run elsewhere (see _Worker)
    result = AnalysisResult(files=len(files))
    if not files:
        return result
    if inline is None:
        total = 0
        for path, _ in files[:INLINE_FILES + 1]:
            try:
                total += os.stat(os.path.join(root, path)).st_size
            except OSError:
                pass
        inline = len(files) <= INLINE_FILES and total <= INLINE_BYTES
    if workers is None:
        workers = os.cpu_count() or 1
    batches = [files[i:i + BATCH_FILES] for i in range(0, len(files), BATCH_FILES)]
    if inline or workers <= 1 and len(batches) == 1:
        for i, batch in enumerate(batches):
            if should_continue is not None and not should_continue():
                break
            _collect(result, _analyze_batch(root, batch, max_bytes, budget_s))
            if progress is not None:
                progress(min((i + 1) * BATCH_FILES, len(files)), len(files))
        return result
    _run_pool(root, batches, result, workers, max_bytes, budget_s, progress, should_continue, len(files))
    return result


def _collect(result: AnalysisResult, answer) -> None:
    snapshot, others, statuses = answer
    if snapshot.n_files:
        result.batches.append(snapshot)
    for status, n in statuses.items():
        result.statuses[status] = result.statuses.get(status, 0) + n
    for kind, path, value in others:
        if kind == "same":
            result.unchanged[path] = value
        else:
            result.skipped[path] = value


def _run_pool(root, batches, result, workers, max_bytes, budget_s, progress, should_continue, total) -> None:
    # (multiprocessing loads socket, tempfile and more: only a pool's run needs it, never a one-shot search)
    from multiprocessing.connection import wait as wait_for

    queue = list(batches)
    queue.reverse()
    pool = [_Worker(max_bytes, budget_s) for _ in range(min(workers, len(batches)))]
    done = 0
    try:
        idle = list(pool)
        busy: list[_Worker] = []
        while queue or busy:
            stopping = should_continue is not None and not should_continue()
            while idle and queue and not stopping:
                w = idle.pop()
                try:
                    w.send(root, queue.pop(), budget_s)
                except (OSError, ValueError):
                    _replace(w, pool, idle, max_bytes, budget_s, queue, result, root)
                    continue
                busy.append(w)
            if not busy:
                break
            ready = wait_for(busy, timeout=1.0)
            now = time.monotonic()
            for w in ready:
                busy.remove(w)
                try:
                    answer = w.recv()
                except (EOFError, OSError, pickle.UnpicklingError):  # the worker died: a grammar crash
                    _replace(w, pool, idle, max_bytes, budget_s, queue, result, root)
                    continue
                _collect(result, answer)
                done += len(w.batch)
                w.batch = None
                idle.append(w)
                if progress is not None:
                    progress(done, total)
            for w in list(busy):
                if w not in ready and (now > w.deadline or not w.alive()):
                    busy.remove(w)
                    log.warning("codelex: a structure worker stopped answering; replacing it")
                    _replace(w, pool, idle, max_bytes, budget_s, queue, result, root)
            if stopping and not busy:
                break
    finally:
        for w in pool:
            w.stop()


def _replace(w: _Worker, pool, idle, max_bytes, budget_s, queue, result, root) -> None:
    batch = w.batch or []
    w.kill()
    pool.remove(w)
    fresh = _Worker(max_bytes, budget_s)
    pool.append(fresh)
    idle.append(fresh)
    if len(batch) > 1:
        queue.extend([item] for item in batch)  # retry alone, to find the file at fault
    elif batch:
        path = batch[0][0]
        log.warning("codelex: analyzing %s took its worker down; using line windows", path)
        record = _failed_structure(root, path, max_bytes)
        if record is not None:
            result.batches.append(encode([record]))
            result.statuses["parse-failed"] = result.statuses.get("parse-failed", 0) + 1
