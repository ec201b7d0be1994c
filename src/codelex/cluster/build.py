"""Builds on Ray: one shard per unit (a repository or a subtree), each a Ray task, into a shard store.

A unit's files are the ones ``codelex index`` would index at that root (its
configuration files, ignore files and admission rules: the project's own
walk and reads, :func:`codelex.ingest.list_files` and
:func:`codelex.ingest.read_files`), and its index is
:meth:`codelex.WordIndex.build`'s.  A unit is skipped when its content hash
(its admitted paths and contents, and what shapes an index: settings, index
format, path rules, codelex's version) equals the one its last shard was
built from; when its walk's ``(path, size, mtime_ns)`` digest is unchanged
too, not one file is read.

The driver keeps at most one task per worker slot in flight, reports each
unit as it finishes, retries a failed one (an exception, or its worker
process dying) up to ``retries`` times, and reports it as failed after
that; a unit that outlives ``unit_timeout`` is cancelled and counts as a
failed attempt.  A failed unit keeps its previous shard in the manifest,
and is named in the report either way: never silently dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from codelex.cluster.store import ShardStore, UnitRecord, check_unit_name
from codelex.runtime import trusted_executable

__all__ = ["BuildEvent", "BuildReport", "Unit", "build_cluster", "build_unit", "parse_units", "unit_walk"]

#: A file whose mtime is this close to the previous build's start (or later) is indexed again in an update,
#: whatever its size and mtime say (a file system's mtime may be this coarse).
RACY_MTIME_S = 2.0
#: A git clone of a unit on shared storage may take this long (a bounded wait, as every wait).
GIT_CLONE_TIMEOUT_S = 900.0
_GIT_PREFIXES = ("git+", "git://", "ssh://", "https://", "http://")


@dataclass(frozen=True)
class Unit:
    """A repository or subtree to build one shard from.

    Attributes
    ----------
    name : str
        The shard's name, and the qualifier of its paths (``name:path``).
    source : str
        A directory, or a git URL (``git+file:///srv/git/x.git``, a path ending in ``.git``): cloned
        (depth 1, hooks off) into a temporary directory by the task that builds it.
    """

    name: str
    source: str

    @property
    def is_git(self) -> bool:
        return self.source.startswith(_GIT_PREFIXES) or self.source.rstrip("/").endswith(".git")


def parse_units(specs: Iterable[str]) -> list[Unit]:
    """Units from ``[NAME=]SOURCE`` specs (NAME defaults to the source's last component, ``.git`` dropped).

    Raises
    ------
    ValueError
        For a spec with no source, a name that cannot name a unit, or two units of one name.
    """
    units, seen = [], set()
    for spec in specs:
        name, sep, source = spec.partition("=")
        if not sep or "/" in name or ":" in name:  # (a URL or a path holding '=' has no name before it)
            name, source = "", spec
        source = source.strip()
        if not source:
            raise ValueError(f"no source in unit {spec!r}")
        if not name:
            name = source.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        check_unit_name(name)
        if name in seen:
            raise ValueError(f"two units named {name!r}: name them (NAME=SOURCE)")
        seen.add(name)
        units.append(Unit(name, source if Unit(name, source).is_git else os.path.abspath(source)))
    return units


def _settings_fingerprint(effective: dict) -> str:
    """What besides the files shapes a unit's index: its settings, the index format, path rules, the version."""
    from codelex.defaults import VERSION
    from codelex.lexical.doctable import rules_fingerprint
    from codelex.persist.lexical import FORMAT_VERSION

    keys = ("ignore", "include", "max_bytes", "max_files", "languages")
    text = json.dumps({"settings": {k: effective.get(k) for k in keys}, "format": FORMAT_VERSION,
                       "rules": rules_fingerprint(), "version": VERSION}, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class _Hashing:
    """Documents passing through, hashed as they pass (path and content, length-prefixed)."""

    def __init__(self, docs, fingerprint: str) -> None:
        self.docs = docs
        self.hash = hashlib.blake2b(fingerprint.encode(), digest_size=16)
        self.count = 0

    def __iter__(self):
        h = self.hash
        for d in self.docs:
            path = d.path.encode("utf-8", "surrogateescape")
            h.update(len(path).to_bytes(4, "little") + path + len(d.content).to_bytes(8, "little"))
            h.update(d.content)
            self.count += 1
            yield d.path, d.content, d.mtime_ns

    def hexdigest(self) -> str:
        return self.hash.hexdigest()


def _clone(url: str, into: str) -> str:
    """A depth-1 checkout of ``url`` in ``into`` (hooks off, fsmonitor off, no terminal prompt); returns it."""
    git = trusted_executable("git")  # (absolute PATH entries only: a checkout's own bin/git is never run)
    if git is None:
        raise FileNotFoundError("git is not installed (in an absolute PATH directory): a git URL unit needs it")
    target = os.path.join(into, "checkout")
    url = url.removeprefix("git+")
    argv = [git, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.file.allow=always",
            "clone", "--quiet", "--depth", "1", "--no-tags", "--single-branch", "--", url, target]
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=GIT_CLONE_TIMEOUT_S, env=env)
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "backslashreplace").strip().splitlines()[-1:] or ["failed"]
        raise RuntimeError(f"git clone {url!r}: {tail[0][:200]}")
    return target


def unit_walk(source: str | os.PathLike[str]):
    """What ``codelex index`` would index at ``source``: ``(root, options, settings, walk)``.

    The root's configuration files and the request's defaults give the options (as a
    :class:`codelex.Project` derives them), whose admission the walk asks; read the files with
    :func:`codelex.ingest.read_files` (``max_bytes=options.max_bytes``).
    """
    from codelex.ingest import list_files
    from codelex.project.config import load_config
    from codelex.project.settings import CONFIGURED, checked_root, derive, request_of

    root = checked_root(source)
    request = request_of(root, None, None, CONFIGURED, CONFIGURED, (), None, None)
    options, effective = derive(request, load_config(root))
    walk = list_files(root, max_files=options.max_files, use_git=options.use_git, admission=options.admission)
    return root, options, effective, walk


def build_unit(unit: Unit, store_url: str, *, workers: int = 1, force: bool = False) -> dict:
    """Build (or skip) one unit's shard into the store; what a Ray task runs, and runnable anywhere.

    Parameters
    ----------
    unit : Unit
    store_url : str
        The shard store's fsspec URL.
    workers : int, default 1
        Threads tokenizing (the task's CPUs).
    force : bool, default False
        Build and write even when the content hash is unchanged.

    Returns
    -------
    dict
        ``status`` (``built`` or ``unchanged``), ``record`` (the unit's :class:`UnitRecord` as a dict),
        ``skipped`` (files left out, by reason) and ``read`` (whether the files were read).
    """
    from codelex.ingest import read_files
    from codelex.lexical import WordIndex

    store = ShardStore(store_url)
    started = time.perf_counter()
    started_at = time.time()  # (the record's built_at: files written after it are read again next time)
    scratch = tempfile.mkdtemp(prefix="codelex-unit-") if unit.is_git else None
    try:
        root, options, effective, walk = unit_walk(_clone(unit.source, scratch) if scratch else unit.source)
        fingerprint = _settings_fingerprint(effective)
        stat = hashlib.blake2b(fingerprint.encode(), digest_size=16)
        for f in walk.files:
            stat.update(f"{f.path}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogateescape"))
        stat_digest = stat.hexdigest()
        previous = None if force else store.record(unit.name)
        if previous is not None and not store.has_shard(previous):
            previous = None
        skipped: dict = dict(walk.skipped)
        if previous is not None and previous.stat_digest == stat_digest and not scratch:
            return {"status": "unchanged", "record": replace(previous, source=unit.source).to_dict(),
                    "skipped": skipped, "read": False}
        max_bytes = options.max_bytes
        counter: Counter = Counter()
        index, changed = None, None
        if previous is not None:
            # One pass of reads gives the content hash and, on the previous shard, the changed files' updates
            # (not for a fresh clone, whose every mtime is new: its hash first, then a whole build if needed).
            hashing = _Hashing(read_files(root, walk.files, max_bytes=max_bytes, skipped=counter), fingerprint)
            if not scratch:
                index, changed = _updated(store, previous, fingerprint, hashing)
            for _ in hashing:  # (what the update did not read: its base was unusable, or a clone)
                pass
            if hashing.hexdigest() == previous.content_hash:
                record = replace(previous, source=unit.source, stat_digest=stat_digest)
                store.put_record(record)
                return {"status": "unchanged", "record": record.to_dict(), "skipped": skipped, "read": True}
        if index is None:
            counter = Counter()
            hashing = _Hashing(read_files(root, walk.files, max_bytes=max_bytes, skipped=counter), fingerprint)
            index = WordIndex.build(hashing, max_bytes=max_bytes, workers=max(1, workers))
        for reason, n in counter.items():
            skipped[reason] = skipped.get(reason, 0) + n
        index.metadata.update(unit=unit.name, source=unit.source, truncated=walk.truncated, settings=fingerprint)
        record = UnitRecord(name=unit.name, source=unit.source, content_hash=hashing.hexdigest(),
                            stat_digest=stat_digest, files=len(index), shard_bytes=0, shard_digest="0" * 32,
                            built_at=started_at, seconds=0.0)
        record = store.put_shard(record, index)
        record = replace(record, seconds=round(time.perf_counter() - started, 3))
        store.put_record(record)
        return {"status": "built", "record": record.to_dict(), "skipped": skipped, "read": True,
                "updated_files": changed}
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _updated(store: ShardStore, previous: UnitRecord, fingerprint: str, hashing: _Hashing):
    """``(index, files changed)``: the unit's previous shard with only its changed files updated (the index's
    own per-file updates, which rank as a full build of the same files does, at the cost of the changed
    files' postings), or ``(None, None)`` when that shard cannot serve as a base (built with other settings
    or another format, unreadable): the caller then builds the unit whole.

    Every file is read (``hashing`` gives the unit's content hash); one whose mtime and size match what the
    shard recorded, and whose mtime is older than the previous build by :data:`RACY_MTIME_S`, is not
    tokenized again (an edit that keeps a file's size and puts its mtime back, as ``touch -r`` does, is not
    seen: as by git, make or rsync).
    """
    from codelex.errors import IndexFormatError

    try:
        index = store.open_shard(previous)
    except (IndexFormatError, OSError):
        return None, None
    if index.metadata.get("settings") != fingerprint:
        return None, None
    recorded = {path: (mtime, size) for path, mtime, size in index.file_table()}
    # A file written within RACY_MTIME_S of the previous build may have changed after it was read with the
    # same size and a coarse mtime (git's "racily clean" case): indexed again, as a changed one.
    racy = int((previous.built_at - RACY_MTIME_S) * 1e9)
    seen: set[str] = set()
    changed = 0
    for path, content, mtime in hashing:
        seen.add(path)
        if recorded.get(path) != (mtime, len(content)) or mtime >= racy:
            index.update(path, content, mtime_ns=mtime)
            changed += 1
    for path in recorded.keys() - seen:  # deleted, or no longer admitted or readable
        index.remove(path)
        changed += 1
    return index, changed


@dataclass(frozen=True)
class BuildEvent:
    """One step of a build, as it happens: ``kind`` is ``built``, ``unchanged``, ``retry``, ``failed``, or
    ``waiting`` (before any unit: the cluster has no free CPU for a task now)."""

    kind: str
    unit: str
    done: int
    total: int
    detail: str = ""
    record: UnitRecord | None = None
    attempt: int = 1
    #: For a unit built on its previous shard: the files updated in it (None: built whole).
    updated_files: int | None = None


@dataclass
class BuildReport:
    """What a build did: the units built, left unchanged, and failed (with why), and the manifest written."""

    built: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    retried: dict[str, int] = field(default_factory=dict)
    #: The built units that were updated on their previous shard, with the files updated (the others whole).
    updated: dict[str, int] = field(default_factory=dict)
    records: dict[str, UnitRecord] = field(default_factory=dict)
    generation: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


def _slots(ray, cpus_per_unit: float) -> int:
    try:
        cpus = float(ray.cluster_resources().get("CPU", 1))
    except Exception:  # (a cluster that cannot say: one at a time still finishes)
        cpus = 1.0
    return max(1, int(cpus // max(cpus_per_unit, 0.01)))


class _BuildRun:
    """One :func:`build_cluster` run's bookkeeping: the units waiting (with their attempt), the tasks in flight,
    the report, and the events the caller's ``progress`` is given."""

    def __init__(self, ray, units: Sequence[Unit], retries: int, progress) -> None:
        self.ray = ray
        self.retries = retries
        self.progress = progress
        self.total = len(units)
        self.report = BuildReport()
        self.waiting = deque((u, 1) for u in units)
        self.inflight: dict = {}  # ObjectRef -> (unit, attempt, submitted at)

    def emit(self, kind: str, unit: str, why: str = "", **extra) -> None:
        if self.progress is not None:
            report = self.report
            done = len(report.built) + len(report.unchanged) + len(report.failed)
            self.progress(BuildEvent(kind, unit, done, self.total, why, **extra))

    def note_busy_cluster(self, cpus_per_unit: int, window: int) -> None:
        """Say so when no CPU is free now (actors holding every one: tasks queue until one frees)."""
        try:
            free = float(self.ray.available_resources().get("CPU", 0))
        except Exception:
            free = float(cpus_per_unit)
        if free < cpus_per_unit and self.progress is not None:
            self.progress(BuildEvent("waiting", "", 0, self.total,
                                     f"no free CPU on the cluster ({free:g} of {window * cpus_per_unit:g}): "
                                     "units wait until actors or other work release one"))

    def failed(self, unit: Unit, attempt: int, why: str) -> None:
        """A unit's attempt failed: retried while attempts remain, else reported failed."""
        if attempt <= self.retries:
            self.report.retried[unit.name] = attempt
            self.emit("retry", unit.name, why, attempt=attempt)
            self.waiting.appendleft((unit, attempt + 1))
            return
        self.report.failed[unit.name] = why
        self.emit("failed", unit.name, why, attempt=attempt)

    def collect(self, ref, records: dict) -> None:
        """A finished task's answer: its unit's record kept, or its failure handled."""
        from codelex.cluster.ray_runtime import describe_failure

        unit, attempt, _submitted = self.inflight.pop(ref)
        try:
            result = self.ray.get(ref, timeout=60.0)
            record = UnitRecord.from_dict(result["record"])
        except Exception as exc:  # the task's exception, its worker's death, a malformed answer
            self.failed(unit, attempt, describe_failure(exc))
            return
        records[unit.name] = record
        self.report.records[unit.name] = record
        (self.report.built if result["status"] == "built" else self.report.unchanged).append(unit.name)
        updated = result.get("updated_files")
        if isinstance(updated, int) and result["status"] == "built":
            self.report.updated[unit.name] = updated
        self.emit(result["status"], unit.name, record=record, attempt=attempt,
                  updated_files=updated if isinstance(updated, int) else None)

    def expire(self, unit_timeout: float) -> None:
        """Cancel the attempts running longer than ``unit_timeout`` (each counts as failed)."""
        now = time.monotonic()
        for ref, (unit, attempt, submitted) in list(self.inflight.items()):
            if now - submitted > unit_timeout:
                del self.inflight[ref]
                self.ray.cancel(ref, force=True)
                self.failed(unit, attempt, f"timed out after {unit_timeout:.0f} s")


def build_cluster(units: Sequence[Unit], store_url: str, *, retries: int = 2, unit_timeout: float = 6 * 3600.0,
                  cpus_per_unit: int = 1, force: bool = False, prune: bool = False,
                  progress: Callable[[BuildEvent], object] | None = None,
                  builder: Callable[..., dict] = build_unit) -> BuildReport:
    """Build ``units`` as Ray tasks into the store at ``store_url`` and write its manifest.

    Ray must be initialized (:func:`codelex.cluster.ray_runtime.connect`).

    Parameters
    ----------
    units : sequence of Unit
    store_url : str
        Where shards go: an fsspec URL every worker can reach (shared storage).
    retries : int, default 2
        Attempts after the first for a unit whose task raised or whose worker died.
    unit_timeout : float, default 6 hours
        A unit's attempt running longer is cancelled (and counts as failed).
    cpus_per_unit : int, default 1
        CPUs a task asks Ray for (and threads it tokenizes on).
    force : bool
        Rebuild every unit, changed or not.
    prune : bool
        Drop units of the previous manifest that are not in ``units`` (default: keep them).
    progress : callable, optional
        Called with a :class:`BuildEvent` as each unit finishes, is retried or fails.
    builder : callable
        What a task runs for a unit (:func:`build_unit`'s signature).

    Returns
    -------
    BuildReport
    """
    from codelex.cluster.ray_runtime import ray_module
    from codelex.errors import IndexFormatError

    ray = ray_module()
    started = time.perf_counter()
    store = ShardStore(store_url)
    store.require_shared()
    store_url = store.url
    try:
        records = {} if prune else store.manifest()
    except IndexFormatError:
        records = {}
    task = ray.remote(builder).options(num_cpus=cpus_per_unit, max_retries=0, name="codelex-build-unit")
    run = _BuildRun(ray, units, retries, progress)
    window = _slots(ray, cpus_per_unit)
    run.note_busy_cluster(cpus_per_unit, window)
    while run.waiting or run.inflight:
        while run.waiting and len(run.inflight) < window:
            unit, attempt = run.waiting.popleft()
            ref = task.remote(unit, store_url, workers=cpus_per_unit, force=force)
            run.inflight[ref] = (unit, attempt, time.monotonic())
        ready, _ = ray.wait(list(run.inflight), num_returns=1, timeout=1.0)
        for ref in ready:
            run.collect(ref, records)
        run.expire(unit_timeout)
    report = run.report
    if prune:
        # Units not built now leave; failed ones keep their last good shard, if any.
        for name in report.failed:
            previous = store.record(name)
            if previous is not None and store.has_shard(previous):
                records[name] = previous
    report.generation = store.put_manifest(records)
    report.records = dict(records)
    report.seconds = time.perf_counter() - started
    return report
