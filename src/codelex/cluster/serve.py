"""Serving on Ray: shards memory-mapped in holder actors, each on several replicas, and a fan-out with a
deadline.

A :class:`Coordinator` reads the store's manifest, places each shard on
``replicas`` of its ``actors`` :class:`ShardHolder` actors by size (largest
first, onto the least loaded actors, never twice on one) and answers a
query as :func:`codelex.federation.federated_search` does (phase 1 on every
shard, the statistics merged, phase 2 on the selected shards with them, the
per-shard top-k merged: the scores of one index over the shards' files),
with one call per actor and phase, under a deadline (phase 1 within a share
of it).  Each shard is asked on one replica and, when that replica fails or
is slower than the shard's recent p95, on another (a hedged request); a
shard no replica answered in time is named in the answer as missing (the
statistics are then those of the shards that answered phase 1), never
waited on past the deadline.

A health check replaces a holder that died or stopped answering (hung), and
reloads the shards of one Ray restarted; holders check each shard file
against its record's digest before it is mapped, when its ``stat`` changes
and on a schedule, and stop serving a shard that fails (reloaded from the
store, or missing and said so: never answered from bytes that changed).

:meth:`Coordinator.reload` follows a new manifest while serving (the
health check calls it when the store's generation moves): a unit whose
content hash changed is loaded beside the old version on the same actors
and swapped in; a query started before the swap finishes on the version its
phase 1 saw (an actor keeps the previous version of each shard for
:data:`PREVIOUS_GRACE_S`).

``codelex cluster serve`` runs a :class:`Coordinator` as a detached, named
Ray actor that Ray restarts if its process dies (:func:`start_coordinator`;
it starts again from the store's manifest), which ``codelex cluster
search`` finds by name (:func:`find_coordinator`).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from codelex.cluster.ray_runtime import describe_failure, ray_module
from codelex.cluster.store import ShardStore, UnitRecord

__all__ = ["COORDINATOR_NAME", "Coordinator", "ShardHolder", "find_coordinator", "place_by_size",
           "start_coordinator", "stop_coordinator"]

#: The default name of a served store's coordinator actor (in the ``codelex`` namespace).
COORDINATOR_NAME = "codelex-coordinator"
#: How long an actor keeps a replaced shard's previous version for the queries under way on it.
PREVIOUS_GRACE_S = 30.0
#: A query's default deadline (seconds).
DEFAULT_DEADLINE_S = 5.0
#: The share of a query's deadline phase 1 (the statistics) may use, and its second round (words other
#: shards found, rare); phase 2 (the scoring) has the rest.
PHASE1_SHARE = 0.4
PHASE1_AGAIN_SHARE = 0.6
#: How long loading the shards may take (seconds) before ``serve`` reports the ones not loaded.
LOAD_TIMEOUT_S = 600.0
#: The number of holders each shard is loaded on by default (``cluster serve --replicas``; at most the actors).
DEFAULT_REPLICAS = 2
#: How often Ray restarts a holder whose process died (its shards are then reloaded by the health check).
HOLDER_RESTARTS = 3
#: The health check: every HEALTH_INTERVAL_S each holder is asked what it holds, within HEALTH_TIMEOUT_S; one
#: that misses HEALTH_MISSES checks in a row is killed and replaced.
HEALTH_INTERVAL_S = 1.0
HEALTH_TIMEOUT_S = 2.0
HEALTH_MISSES = 2
#: How often the holders check their shard files' digests (what a disk corrupts in place changes no stat).
SCRUB_INTERVAL_S = 600.0
#: A shard that failed to load on a holder is tried there again after this long (not every health check).
LOAD_RETRY_S = 15.0
#: Hedged requests: a shard's request goes to a second replica after the shard's recent p95 (of its last
#: LATENCY_WINDOW answers, once it has HEDGE_MIN_SAMPLES; HEDGE_DEFAULT_S before), never sooner than
#: HEDGE_FLOOR_S.
LATENCY_WINDOW = 128
HEDGE_MIN_SAMPLES = 8
HEDGE_DEFAULT_S = 0.25
HEDGE_FLOOR_S = 0.005
#: A holder's per-shard errors that mean the shard is not served there (so its replica leaves the routing
#: until the health check reloads it), as :func:`codelex.cluster.ray_runtime.describe_failure` words them.
SHARD_GONE_ERRORS = ("LookupError: shard", "IndexFormatError")
#: The holders' concurrency groups: health checks (never queued behind queries), and loads and scrubs (long).
CONTROL_GROUP = "control"
LOAD_GROUP = "load"


def _rss_bytes() -> int:
    """This process's resident memory (Linux ``/proc``; else the peak from ``getrusage``)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _Pinned:
    """A loaded shard's file, held by a descriptor: the bytes its index maps, whatever later happens to the
    path (a replacement by rename or a deletion leaves them intact; a write in place changes them)."""

    def __init__(self, path: Path, record: UnitRecord, file, fetched: bool) -> None:
        self.path, self.record, self.file, self.fetched = path, record, file, fetched
        self.fd = file.fileno()
        self.signature = self._signature()
        self.lock = threading.Lock()  # (one check at a time: the others wait for its verdict)
        self.failed: str | None = None

    def _signature(self) -> tuple:
        st = os.fstat(self.fd)
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def check(self, where: str, *, full: bool = False) -> None:
        """IndexFormatError when the mapped bytes changed in place and no longer match the record's digest
        (``full``: hash them whatever the ``stat`` says)."""
        from codelex.cluster.store import check_pinned
        from codelex.errors import IndexFormatError

        if self.failed is None and not full and self._signature() == self.signature:
            return
        with self.lock:
            if self.failed is not None:
                raise IndexFormatError(self.failed)
            now = self._signature()
            if now == self.signature and not full:
                return
            try:
                check_pinned(self.fd, self.record, where)
            except IndexFormatError as exc:
                self.failed = f"changed in place: {exc}"
                raise IndexFormatError(self.failed) from None
            self.signature = now

    def close(self) -> None:
        self.file.close()
        if self.fetched:  # (a private copy: its mapping outlives the name)
            self.path.unlink(missing_ok=True)


class ShardHolder:
    """Several shards of one store, memory-mapped in one process (run as a Ray actor).

    Every method takes and returns plain data; a failure of one shard is that shard's answer
    (``("error", reason)``), never the others'.

    Each shard's file is checked against its record's content digest before it is mapped and held open, so
    that the bytes mapped can be checked again: before a query reads a shard whenever its file's ``stat``
    changed (a write in place; a replacement by rename or a deletion leaves the mapped bytes intact), and
    in full by :meth:`scrub` on the coordinator's schedule (what a disk corrupts changes no ``stat``).  A
    shard that fails a check stops serving here at once and is reported (:meth:`info`'s ``bad``): an answer
    is never computed from bytes that are not the ones built.

    Parameters
    ----------
    store_url : str
        The shard store (see :class:`codelex.cluster.store.ShardStore`).
    cache_dir : str, optional
        Where copies of shards that cannot be mapped in place go (default: the per-user cache).
    """

    def __init__(self, store_url: str, cache_dir: str | None = None) -> None:
        self.store = ShardStore(store_url)
        self.cache_dir = cache_dir
        self.lock = threading.Lock()
        self.current: dict[str, tuple[str, object]] = {}  # name -> (content hash, WordIndex)
        self.previous: dict[str, tuple[str, object, float]] = {}  # name -> (hash, index, replaced at)
        self.files: dict[int, _Pinned] = {}  # id(index) -> its file
        self.bad: dict[str, str] = {}  # name -> why it stopped serving here

    def load(self, records: Sequence[dict]) -> dict[str, object]:
        """Load (or replace) shards; per name, ``{"files", "bytes", "seconds"}`` or ``("error", reason)``."""
        out: dict[str, object] = {}
        for data in records:
            started = time.perf_counter()
            try:
                record = UnitRecord.from_dict(data)
                index, path, file = self.store.open_shard_file(record, self.cache_dir)
            except Exception as exc:  # the one shard does not load: said, the others still do
                out[str(data.get("name") if isinstance(data, dict) else data)] = ("error", describe_failure(exc))
                continue
            pinned = _Pinned(Path(path), record, file, fetched=not self.store.local)
            with self.lock:
                old = self.current.get(record.name)
                if old is not None and old[0] != record.content_hash:
                    self._retire(self.previous.pop(record.name, None))
                    self.previous[record.name] = (old[0], old[1], time.monotonic())
                elif old is not None:
                    self._retire(old)
                self.current[record.name] = (record.content_hash, index)
                self.files[id(index)] = pinned
                self.bad.pop(record.name, None)
            out[record.name] = {"files": len(index), "bytes": record.shard_bytes,
                                "seconds": time.perf_counter() - started}
        return out

    def _retire(self, entry) -> None:
        """Forget a version no longer served (its file's descriptor closed; the lock is held)."""
        if entry is not None:
            pinned = self.files.pop(id(entry[1]), None)
            if pinned is not None:
                pinned.close()

    def drop(self, names: Sequence[str]) -> None:
        """Stop serving ``names`` (their maps are released when no query holds them)."""
        with self.lock:
            for name in names:
                self._retire(self.current.pop(name, None))
                self._retire(self.previous.pop(name, None))

    def _fail(self, name: str, index, why: str) -> None:
        """``name``'s version ``index`` failed a check: it serves no more here."""
        with self.lock:
            for table in (self.current, self.previous):
                entry = table.get(name)
                if entry is not None and entry[1] is index:
                    self._retire(table.pop(name))
            self.bad[name] = why

    def _checked(self, name: str, index) -> None:
        """Raise IndexFormatError when the bytes ``index`` maps changed in place and no longer match."""
        from codelex.errors import IndexFormatError

        pinned = self.files.get(id(index))
        if pinned is None:
            return
        try:
            pinned.check(self.store.url)
        except IndexFormatError as exc:
            self._fail(name, index, str(exc))
            raise IndexFormatError(f"shard {name!r} {exc}") from None

    def _index(self, name: str, version: str | None):
        with self.lock:
            now = time.monotonic()
            for n in [n for n, p in self.previous.items() if now - p[2] > PREVIOUS_GRACE_S]:
                self._retire(self.previous.pop(n))
            cur = self.current.get(name)
            found = None
            if cur is not None and (version is None or cur[0] == version):
                found = cur
            else:
                prev = self.previous.get(name)
                if prev is not None and prev[0] == version:
                    found = (prev[0], prev[1])
        if found is None:
            raise LookupError(f"shard {name!r} is not served here" if cur is None else
                              f"shard {name!r} was replaced during the query")
        self._checked(name, found[1])
        return found

    def _guarded(self, name: str, index, compute, *args, **kwargs):
        """``compute(*args, **kwargs)``, with a shard whose chunk check fails while it reads dropped from
        service here."""
        from codelex.errors import IndexFormatError

        try:
            return compute(*args, **kwargs)
        except IndexFormatError as exc:
            self._fail(name, index, str(exc))
            raise

    def query_stats(self, names: Sequence[str], request,
                    again: dict[str, tuple[str, tuple[str, ...]]] | None = None) -> dict[str, object]:
        """Phase 1 for each of ``names`` (``request``: the coordinator's :class:`~codelex.query.Request`):
        ``(content hash, ShardQueryStats)`` or ``("error", reason)``.

        ``again`` (name -> (content hash, words)) names the version to answer for (the coordinator's
        current one: a holder that already swapped in a newer one answers from the previous) and asks
        for the dfs of words other shards found (:func:`codelex.lexical.shards.missing_words`).
        """
        out: dict[str, object] = {}
        for name in names:
            try:
                version, words = again[name] if again and name in again else (None, ())
                version, index = self._index(name, version)
                out[name] = (version, self._guarded(name, index, index.query_stats, request, words=words))
            except Exception as exc:
                out[name] = ("error", describe_failure(exc))
        return out

    def search(self, requests: Sequence[tuple[str, str, object]], request, global_stats) -> dict[str, object]:
        """Phase 2: per ``(name, version, options)``, the shard's hits for ``request`` under those options and
        ``global_stats`` (or an error)."""
        out: dict[str, object] = {}
        for name, version, options in requests:
            try:
                _, index = self._index(name, version)
                hits = self._guarded(name, index, index.search, request.with_options(options),
                                     global_stats=global_stats)
                out[name] = ("hits", list(hits))
            except Exception as exc:
                out[name] = ("error", describe_failure(exc))
        return out

    def scrub(self) -> dict[str, str]:
        """Hash every served shard's mapped bytes against its record's digest now; the ones that fail stop
        serving here.  Returns them, name -> why."""
        from codelex.errors import IndexFormatError

        with self.lock:
            held = [(name, entry[1]) for name, entry in self.current.items()]
        failed = {}
        for name, index in held:
            pinned = self.files.get(id(index))
            if pinned is None:
                continue
            try:
                pinned.check(self.store.url, full=True)
            except IndexFormatError as exc:
                self._fail(name, index, str(exc))
                failed[name] = str(exc)
        return failed

    def info(self) -> dict:
        """The shards held (name -> content hash), the ones that failed a check (name -> why), the process id,
        node and resident memory."""
        with self.lock:
            shards = {n: v[0] for n, v in self.current.items()}
            bad = dict(self.bad)
        try:
            node = ray_module().get_runtime_context().get_node_id()
        except Exception:  # (outside Ray)
            node = None
        return {"pid": os.getpid(), "node": node, "rss_bytes": _rss_bytes(), "shards": shards, "bad": bad}

    def ping(self) -> int:
        return os.getpid()


def place_by_size(records: Sequence[UnitRecord], actors: int, loads: Sequence[int] | None = None,
                  replicas: int = 1) -> list[list[UnitRecord]]:
    """Shards onto ``actors`` bins, largest first, each onto the ``replicas`` least loaded bins (ties: the
    lowest): a shard's replicas are always on different bins."""
    bins: list[list[UnitRecord]] = [[] for _ in range(actors)]
    load = list(loads) if loads is not None else [0] * actors
    copies = max(1, min(int(replicas), actors))
    for record in sorted(records, key=lambda r: (-r.shard_bytes, r.name)):
        for i in sorted(range(actors), key=lambda j: (load[j], j))[:copies]:
            bins[i].append(record)
            load[i] += record.shard_bytes
    return bins


class _Fanout:
    """One phase of one query: each shard asked on one replica, a second replica asked when the first is
    slower than the shard's recent p95 (a hedge) or fails, until every shard answered or the deadline.

    ``call(actor, names)`` sends the phase's request for ``names`` to ``actor`` (an ObjectRef of a dict
    name -> answer, ``("error", why)`` for a shard that could not answer).
    """

    def __init__(self, coordinator: Coordinator, routes: dict[str, list[int]], actors: list, call,
                 deadline: float) -> None:
        self.coordinator = coordinator
        self.routes = routes  # name -> replica slots, most preferred first
        self.actors = actors
        self.call = call
        self.deadline = deadline
        self.tried: dict[str, set[int]] = {n: set() for n in routes}
        self.answers: dict[str, object] = {}
        self.why: dict[str, str] = {}
        self.pending: dict = {}  # ObjectRef -> (slot, names, sent at)
        self.hedged: set[str] = set()

    def _next_slot(self, name: str) -> int | None:
        return next((s for s in self.routes[name] if s not in self.tried[name]), None)

    def _send(self, names) -> None:
        """Ask each of ``names`` on its next untried replica, one call per actor."""
        by_slot: dict[int, list[str]] = {}
        for name in names:
            slot = self._next_slot(name)
            if slot is None:
                self.why.setdefault(name, "no replica of it is loaded")
                continue
            self.tried[name].add(slot)
            by_slot.setdefault(slot, []).append(name)
        now = time.monotonic()
        for slot, group in by_slot.items():
            try:
                ref = self.call(self.actors[slot], group)
            except Exception as exc:  # (a handle Ray already knows dead)
                for name in group:
                    self.why[name] = describe_failure(exc)
                self._send(group)
                continue
            self.pending[ref] = (slot, group, now)

    def _open(self, names) -> list[str]:
        return [n for n in names if n not in self.answers]

    def _hedgeable(self, names) -> list[str]:
        """The shards of a pending call still unanswered, not hedged yet, with a replica left to ask."""
        return [n for n in names if n not in self.answers and n not in self.hedged and self._next_slot(n) is not None]

    def run(self) -> tuple[dict[str, object], dict[str, str]]:
        """The answers by shard, and why each shard without one has none."""
        ray = ray_module()
        self._send(list(self.routes))
        while self.pending and len(self.answers) < len(self.routes):  # (a hedged call's twin is not waited on)
            now = time.monotonic()
            if now >= self.deadline:
                break
            hedge_at = min((sent + self.coordinator.hedge_delay(n) for _slot, group, sent in self.pending.values()
                            for n in self._hedgeable(group)), default=self.deadline)
            wait = max(0.0, min(self.deadline, hedge_at) - now)
            ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=wait)
            for ref in ready:
                self._collect(ref)
            now = time.monotonic()
            for ref, (slot, group, sent) in list(self.pending.items()):
                late = [n for n in self._hedgeable(group) if now - sent >= self.coordinator.hedge_delay(n)]
                if late:
                    self.hedged.update(late)
                    self._send(late)
        for ref in self.pending:  # (abandoned: a hedge's twin, or past the deadline; one not started never runs)
            try:
                ray.cancel(ref)
            except Exception:
                pass
        for name in self.routes:
            if name not in self.answers:
                self.why.setdefault(name, "no answer within the deadline")
        return self.answers, {n: w for n, w in self.why.items() if n not in self.answers}

    def _collect(self, ref) -> None:
        ray = ray_module()
        slot, group, sent = self.pending.pop(ref)
        try:
            got = ray.get(ref, timeout=max(0.1, self.deadline - time.monotonic()))
        except Exception as exc:  # the actor died or its call failed: its replica is suspect
            self.coordinator.suspect(slot, exc, self.actors[slot])
            retry = self._open(group)
            for name in retry:
                self.why[name] = describe_failure(exc)
            self._send([n for n in retry if not self._in_flight(n)])
            return
        elapsed = time.monotonic() - sent
        retry = []
        for name in group:
            if name in self.answers:
                continue
            one = got.get(name) if isinstance(got, dict) else None
            if one is None or one[0] == "error":
                self.why[name] = one[1] if one is not None else "no answer"
                self.coordinator.shard_failed(slot, name, self.why[name])
                retry.append(name)
            else:
                self.answers[name] = one
                self.coordinator.note_latency(name, elapsed)
        self._send([n for n in retry if not self._in_flight(n)])

    def _in_flight(self, name: str) -> bool:
        return any(name in group for _slot, group, _sent in self.pending.values())


class Coordinator:
    """Places a store's shards on holder actors, each on ``replicas`` of them, answers queries by fan-out with
    a deadline and hedged requests, and keeps the holders healthy.

    Usable in any Ray driver (``Coordinator(url).start(2)``) or as the detached actor
    ``codelex cluster serve`` starts (then given ``actors``, so that Ray restarting the actor after its
    process died starts it again from the store's manifest: its loss is a pause).

    A background health check (every :data:`HEALTH_INTERVAL_S`) asks every holder what it holds: a holder
    that died, or does not answer :data:`HEALTH_MISSES` checks in a row (hung), is killed and replaced and
    its shards reloaded; a holder Ray restarted, or one that dropped a shard failing a check, gets its
    shards loaded again; every :data:`SCRUB_INTERVAL_S` the holders check their files' digests; and a new
    manifest generation in the store is loaded while serving (:meth:`reload`).

    Parameters
    ----------
    store_url : str
    actor_cpus : float, default 0
        CPUs each holder actor reserves.  None by default, so that builds can run on a cluster that
        serves (Ray would hold a reserved CPU from build tasks even while the actor idles); reserve
        them on a cluster that only serves, for one query's fan-out never to queue behind a build.
    cache_dir : str, optional
        Passed to the holders (:class:`ShardHolder`).
    holder : type, default ShardHolder
        The holder actors' class (a subclass, to observe or slow them in tests).
    actors : int, optional
        Start at once (in the background; :meth:`wait_started`) with this many holders.
    replicas : int, default 1
        Holders each shard is loaded on (at most ``actors``), when started at once.
    http : (str, int), optional
        Also serve HTTP there (:meth:`serve_http`), when started at once.
    health_interval : float
        Seconds between health checks (0: none; :meth:`check_health` by hand).
    watch : bool, default True
        Follow the store's manifest while serving (checked with the health).
    """

    def __init__(self, store_url: str, actor_cpus: float = 0.0, cache_dir: str | None = None,
                 holder: type = ShardHolder, *, actors: int | None = None, replicas: int = 1,
                 http: tuple[str, int] | None = None, health_interval: float = 0.0, watch: bool = True) -> None:
        self.holder = holder
        self.store = ShardStore(store_url)
        self.store_url = self.store.url
        self.actor_cpus = actor_cpus
        self.cache_dir = cache_dir
        self.lock = threading.RLock()
        self.actors: list = []
        self.placement: dict[str, list[int]] = {}  # shard name -> its replicas' actor slots
        self.ready: dict[str, set[int]] = {}  # shard name -> the slots where it is loaded
        self.records: dict[str, UnitRecord] = {}
        self.replicas = 1
        self.generation = 0
        self.repairing: set[int] = set()
        self.loading: set[tuple[int, str]] = set()  # (id of the holder, shard) loads under way
        self.misses: dict[int, int] = {}  # slot -> health checks in a row without an answer
        self.nodes: dict[int, str | None] = {}  # slot -> the node its holder runs on (from the health check)
        self.reload_lock = threading.Lock()
        self.reloading = False
        self.reload_failed: list[str] = []  # shards whose new version loaded nowhere (tried again)
        self.last_reload = time.monotonic()
        self.load_failed: dict[tuple[int, str], float] = {}  # (slot, shard) -> when its last load failed
        self.errors: dict[str, str] = {}  # shard -> why no replica of it is loaded
        self.latencies: dict[str, deque] = {}  # shard -> its recent answers' seconds
        self.hedge_after: dict[str, float] = {}  # shard -> their p95 (once there are enough)
        self.turn = 0  # rotates which replica a query asks first
        self.events: deque = deque(maxlen=200)  # (unix time, what the health check did)
        self.http = None  # the HTTP endpoint's server, once started (serve_http)
        self.started = threading.Event()
        self.start_error: str | None = None
        self.stopping = threading.Event()
        self.health_interval = float(health_interval)
        self.watch = watch
        self.last_scrub = time.monotonic()
        self.autostart = actors is not None
        if self.autostart:
            threading.Thread(target=self._start_in_background, args=(actors, replicas, http),
                             name="codelex-start", daemon=True).start()

    # --- lifecycle ----------------------------------------------------------------------------------

    def _start_in_background(self, actors: int, replicas: int, http) -> None:
        """The start given at construction.  A coordinator Ray restarted (its process died) tries again with
        a growing pause until it starts (a manifest being rewritten, a port still taken): its queries answer
        "starting" meanwhile; a first start reports its failure once (``start_coordinator`` then removes
        it)."""
        try:
            restarted = bool(ray_module().get_runtime_context().was_current_actor_reconstructed)
        except Exception:  # (outside an actor)
            restarted = False
        pause = 1.0
        try:
            while not self.stopping.is_set():
                try:
                    self.start(actors, replicas=replicas)
                    if http is not None:
                        self.serve_http(*http)
                    self.start_error = None
                    return
                except Exception as exc:
                    self.start_error = str(exc) if isinstance(exc, (ValueError, OSError, RuntimeError)) \
                        else describe_failure(exc)
                    self._kill_holders()
                    if not restarted:
                        return
                    self._event(f"start failed ({self.start_error}); trying again in {pause:.0f} s")
                    self.stopping.wait(pause)
                    pause = min(30.0, pause * 2)
        finally:
            self.started.set()

    def wait_started(self, timeout: float = LOAD_TIMEOUT_S) -> dict:
        """:meth:`status` once the start given at construction finished (ClusterError when it failed, or did
        not finish within ``timeout``)."""
        from codelex.errors import ClusterError

        if not self.started.wait(timeout):
            raise ClusterError(f"the coordinator did not start within {timeout:.0f} s")
        if self.start_error is not None:
            raise ClusterError(self.start_error)
        return self.status()

    def _new_actor(self):
        ray = ray_module()
        # Ray restarts a holder whose process died (the health check then reloads its shards); a call is never
        # retried by Ray (the fan-out asks another replica within the query's deadline instead).  Health
        # checks and loads have threads of their own: a holder busy answering is never taken for hung.
        holder = ray.remote(concurrency_groups={CONTROL_GROUP: 1, LOAD_GROUP: 2})(self.holder).options(
            num_cpus=self.actor_cpus, max_concurrency=8, max_restarts=HOLDER_RESTARTS, max_task_retries=0,
            scheduling_strategy="SPREAD")
        return holder.remote(self.store_url, self.cache_dir)

    def _load(self, slot_records: dict[int, list[UnitRecord]], timeout: float, *,
              serve: bool = True) -> dict[str, dict[int, object]]:
        """Load records onto actor slots in parallel, waiting at most ``timeout``; per (shard, slot) what
        happened, as ``{name: {slot: answer}}``.  ``serve``: the slots that loaded a shard answer for it at
        once (a reload switches them itself, all together)."""
        ray = ray_module()
        refs = {}
        with self.lock:
            for slot, records in slot_records.items():
                if slot >= len(self.actors):
                    continue
                actor = self.actors[slot]
                records = [r for r in records if (id(actor), r.name) not in self.loading]
                if records:
                    self.loading.update((id(actor), r.name) for r in records)
                    call = actor.load.options(concurrency_group=LOAD_GROUP).remote([r.to_dict() for r in records])
                    refs[call] = (slot, actor, records)
        out: dict[str, dict[int, object]] = {}
        try:
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout) if refs else ([], [])
            for ref, (slot, _actor, records) in refs.items():
                if ref not in ready:
                    for r in records:
                        out.setdefault(r.name, {})[slot] = ("error", f"not loaded within {timeout:.0f} s")
                    continue
                try:
                    got = ray.get(ref, timeout=10.0)
                except Exception as exc:
                    got = {r.name: ("error", describe_failure(exc)) for r in records}
                for r in records:
                    out.setdefault(r.name, {})[slot] = got.get(r.name, ("error", "no answer"))
        finally:
            with self.lock:
                for _slot, actor, records in refs.values():
                    self.loading.difference_update((id(actor), r.name) for r in records)
        with self.lock:
            for name, per_slot in out.items():
                for slot, what in per_slot.items():
                    if isinstance(what, dict):
                        self.load_failed.pop((slot, name), None)
                    else:
                        self.load_failed[(slot, name)] = time.monotonic()
                if not serve:
                    continue
                slots = self.ready.setdefault(name, set())
                for slot, what in per_slot.items():
                    (slots.add if isinstance(what, dict) else slots.discard)(slot)
                if slots:
                    self.errors.pop(name, None)
                else:
                    self.errors[name] = next((w[1] for w in per_slot.values() if not isinstance(w, dict)),
                                             "not loaded")
        return out

    def start(self, actors: int = 2, timeout: float = LOAD_TIMEOUT_S, *, replicas: int = 1) -> dict:
        """Read the manifest, start ``actors`` holders and load the shards onto them, each on ``replicas`` of
        them, placed by size.

        Returns
        -------
        dict
            :meth:`status` after loading (shards that did not load are listed under ``errors``).

        Raises
        ------
        codelex.IndexFormatError
            When the store has no readable manifest.
        codelex.errors.ClusterError
            When the manifest names no shard, or not one loaded (the holders are stopped first).
        """
        from codelex.errors import ClusterError

        generation, records = self.store.manifest_version()
        if not records:
            raise ClusterError(f"{self.store_url}: the manifest names no shard (run `codelex cluster index`)")
        n = max(1, min(int(actors), len(records) * max(1, int(replicas))))
        bins = place_by_size(list(records.values()), n, replicas=replicas)
        with self.lock:
            self.actors = [self._new_actor() for _ in range(n)]
            self.records = dict(records)
            self.replicas = max(1, min(int(replicas), n))
            self.placement = {}
            for i, b in enumerate(bins):
                for r in b:
                    self.placement.setdefault(r.name, []).append(i)
            self.generation = generation
        self._load(dict(enumerate(bins)), timeout)
        with self.lock:
            loaded = any(self.ready.get(n) for n in self.placement)
            errors = dict(self.errors)
        if not loaded:
            self._kill_holders()
            why = "; ".join(f"{n}: {w}" for n, w in sorted(errors.items())[:3])
            raise ClusterError(f"{self.store_url}: not one shard loaded ({why})")
        if not self.autostart:  # (a start given at construction says it is done once its endpoint runs too)
            self.started.set()
        if self.health_interval > 0:
            threading.Thread(target=self._health_loop, name="codelex-health", daemon=True).start()
        return self.status()

    def reload(self, timeout: float = LOAD_TIMEOUT_S) -> dict:
        """Follow the store's current manifest while serving: new and changed shards loaded beside the served
        ones, then all switched together with the generation (a query sees one manifest's shards), removed
        ones dropped last.  A shard whose new version loaded nowhere keeps serving its old one, and is tried
        again by the health check.  Returns ``{"generation", "loaded", "replaced", "dropped", "errors"}``."""
        from codelex.errors import ClusterError

        with self.reload_lock:
            generation, records = self.store.manifest_version()
            with self.lock:
                if not self.actors:
                    raise ClusterError("the coordinator serves nothing (its start failed): stop it and serve again")
                old = dict(self.records)
                loads = [0] * len(self.actors)
                for name, slots in self.placement.items():
                    if name in records and name in old:
                        for slot in slots:
                            loads[slot] += old[name].shard_bytes
                removed = [n for n in old if n not in records]
                changed = [r for n, r in records.items() if n in old and
                           (old[n].content_hash, old[n].shard_digest) != (r.content_hash, r.shard_digest)]
                added = [r for n, r in records.items() if n not in old]
                slots_of: dict[int, list[UnitRecord]] = {}
                for r in changed:
                    for slot in self.placement[r.name]:
                        slots_of.setdefault(slot, []).append(r)
                new_slots: dict[str, list[int]] = {}
                for i, b in enumerate(place_by_size(added, len(self.actors), loads, self.replicas)):
                    for r in b:
                        new_slots.setdefault(r.name, []).append(i)
                        slots_of.setdefault(i, []).append(r)
            result = self._load(slots_of, timeout, serve=False)
            failed: dict[str, str] = {}
            with self.lock:
                for r in changed + added:
                    per_slot = result.get(r.name, {})
                    loaded = {s for s, what in per_slot.items() if isinstance(what, dict)}
                    if r.name in new_slots:
                        self.placement[r.name] = new_slots[r.name]
                    if loaded or r.name not in old:
                        self.records[r.name] = r
                        self.ready[r.name] = loaded
                    if not loaded:
                        failed[r.name] = next((w[1] for w in per_slot.values()), "not loaded")
                        if r.name not in old:
                            self.errors[r.name] = failed[r.name]
                by_slot: dict[int, list[str]] = {}
                for name in removed:
                    for slot in self.placement.pop(name, []):
                        by_slot.setdefault(slot, []).append(name)
                    self.records.pop(name, None)
                    self.ready.pop(name, None)
                    self.errors.pop(name, None)
                self.generation = generation
                self.reload_failed = sorted(failed)
                actors = list(self.actors)
            for slot, names in by_slot.items():
                actors[slot].drop.remote(names)
            for name, why in sorted(failed.items()):
                self._event(f"generation {generation}: {name} not loaded ({why})")
            return {"generation": generation, "loaded": sorted(r.name for r in added),
                    "replaced": sorted(r.name for r in changed), "dropped": sorted(removed), "errors": failed}

    def _kill_holders(self) -> None:
        ray = ray_module()
        with self.lock:
            actors, self.actors = self.actors, []
            self.placement, self.ready = {}, {}
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # (one already dead)
                pass

    def stop(self) -> None:
        """Kill the holder actors."""
        self.stopping.set()
        with self.lock:
            http, self.http = self.http, None
        if http is not None:
            http.shutdown()
            http.server_close()
        self._kill_holders()

    def status(self) -> dict:
        """The store, generation, shards per actor (with sizes), each actor's pid and resident memory, the
        shards with fewer replicas loaded than placed (``degraded``), and the health check's recent events."""
        ray = ray_module()
        with self.lock:
            actors = list(self.actors)
            placement = {n: list(s) for n, s in self.placement.items()}
            ready = {n: set(s) for n, s in self.ready.items()}
            records = dict(self.records)
            errors = dict(self.errors)
            events = list(self.events)[-20:]
            nodes = dict(self.nodes)
        refs = [a.info.remote() for a in actors]
        answered, _ = ray.wait(refs, num_returns=len(refs), timeout=10.0) if refs else ([], [])
        out = []
        for slot, ref in enumerate(refs):
            info = None
            if ref in answered:
                try:
                    info = ray.get(ref, timeout=1.0)
                except Exception as exc:
                    info = {"error": describe_failure(exc)}
            names = sorted(n for n, s in placement.items() if slot in s)
            out.append({"slot": slot, "shards": names,
                        "shard_bytes": sum(records[n].shard_bytes for n in names if n in records),
                        "pid": (info or {}).get("pid"), "rss_bytes": (info or {}).get("rss_bytes"),
                        "error": (info or {"error": "no answer within 10 s"}).get("error")})
        http = self.http
        from codelex.defaults import VERSION

        degraded = {n: f"{len(ready.get(n, ()))} of {len(s)} replicas loaded" for n, s in placement.items()
                    if len(ready.get(n, ())) < len(s) and n not in errors}
        if len({v for v in nodes.values() if v}) > 1:  # (on a cluster of several nodes: replicas apart)
            for n, slots in placement.items():
                on = {nodes.get(s) for s in ready.get(n, ())}
                if n not in degraded and n not in errors and len(slots) > 1 and len(on) == 1:
                    degraded[n] = f"its {len(ready.get(n, ()))} replicas are on one node"
        return {"version": VERSION, "pid": os.getpid(), "store": self.store_url, "generation": self.generation,
                "shards": len(records),
                "files": sum(r.files for r in records.values()), "replicas": self.replicas, "actors": out,
                "errors": errors, "degraded": degraded, "events": events,
                "http": f"http://{http.server_address[0]}:{http.server_address[1]}/search" if http else None}

    def serve_http(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Answer ``GET /search?q=QUERY[&n=N][&deadline=S][&ranking=code|classic]`` with :meth:`search`'s
        JSON, on a thread of this process; returns the endpoint's URL (the running one's, when started).

        No authentication: the answers quote the indexed files' paths, so it listens on this host's
        loopback unless ``host`` says otherwise (then put it behind what guards the cluster's network).
        """
        with self.lock:
            if self.http is None:
                self.http = _http_server(self, host, port)
                threading.Thread(target=self.http.serve_forever, name="codelex-http", daemon=True).start()
            address = self.http.server_address
        return f"http://{address[0]}:{address[1]}/search"

    # --- health -------------------------------------------------------------------------------------

    def _event(self, what: str) -> None:
        with self.lock:
            self.events.append((round(time.time(), 3), what))

    def _health_loop(self) -> None:
        while not self.stopping.wait(self.health_interval):
            try:
                self.check_health()
            except Exception as exc:  # (the loop must outlive one bad round: said in the events)
                self._event(f"health check failed: {describe_failure(exc)}")

    def check_health(self, timeout: float | None = None) -> dict[int, str]:
        """One round of the health check (see the class); returns what it did, by slot."""
        ray = ray_module()
        timeout = HEALTH_TIMEOUT_S if timeout is None else timeout
        with self.lock:
            actors = list(self.actors)
        refs: dict = {}
        dead: dict[int, str] = {}
        for slot, actor in enumerate(actors):
            try:
                refs[actor.info.options(concurrency_group=CONTROL_GROUP).remote()] = slot
            except Exception as exc:  # (a handle Ray already knows dead)
                dead[slot] = describe_failure(exc)
        answered, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout) if refs else ([], [])
        done: dict[int, str] = {slot: self._replace(slot, why, actors[slot]) for slot, why in dead.items()}
        reload: dict[int, list[UnitRecord]] = {}
        now = time.monotonic()
        for ref, slot in refs.items():
            actor = actors[slot]
            if ref not in answered:
                with self.lock:
                    self.misses[slot] = self.misses.get(slot, 0) + 1
                    hung = self.misses[slot] >= HEALTH_MISSES
                if hung:
                    done[slot] = self._replace(slot, f"no answer to {HEALTH_MISSES} health checks in a row", actor)
                continue
            try:
                info = ray.get(ref, timeout=1.0)
            except Exception as exc:
                done[slot] = self._replace(slot, describe_failure(exc), actor)
                continue
            with self.lock:
                if slot >= len(self.actors) or self.actors[slot] is not actor:
                    continue  # (replaced since it was asked)
                self.misses[slot] = 0
                self.nodes[slot] = info.get("node")
                held = info.get("shards", {})
                for name, slots in self.placement.items():
                    record = self.records.get(name)
                    if slot not in slots or record is None:
                        continue
                    if held.get(name) == record.content_hash:
                        self.ready.setdefault(name, set()).add(slot)
                        self.errors.pop(name, None)
                        continue
                    self.ready.get(name, set()).discard(slot)
                    if info.get("bad", {}).get(name) and not self.ready.get(name):
                        self.errors[name] = info["bad"][name]
                    if ((id(actor), name) not in self.loading and slot not in self.repairing
                            and now - self.load_failed.get((slot, name), -LOAD_RETRY_S) >= LOAD_RETRY_S):
                        reload.setdefault(slot, []).append(record)
        for slot, records in reload.items():
            names = ", ".join(sorted(r.name for r in records))
            done[slot] = f"reloading {names}"
            self._event(f"actor {slot}: reloading {names} (not held: restarted, or dropped by a check)")
            threading.Thread(target=self._load, args=({slot: records}, LOAD_TIMEOUT_S), daemon=True,
                             name=f"codelex-reload-{slot}").start()
        if time.monotonic() - self.last_scrub >= SCRUB_INTERVAL_S:
            self.last_scrub = time.monotonic()
            for slot, actor in enumerate(actors):
                if slot not in done:
                    actor.scrub.options(concurrency_group=LOAD_GROUP).remote()  # (findings: ``bad``, next rounds)
        if self.watch:
            self._follow_store()
        return done

    def _follow_store(self) -> None:
        """Reload, on a thread of its own (the health check goes on meanwhile), when the store's manifest
        moved on, or a shard's new version loaded nowhere last time (every LOAD_RETRY_S)."""
        with self.lock:
            if self.reloading:
                return
            retry = bool(self.reload_failed) and time.monotonic() - self.last_reload >= LOAD_RETRY_S
        try:
            generation = self.store.manifest_generation()
        except Exception as exc:  # a manifest being written or broken: the served generation stays
            self._event(f"manifest not followed: {describe_failure(exc)}")
            return
        if generation <= self.generation and not retry:
            return
        with self.lock:
            self.reloading = True
            self.last_reload = time.monotonic()

        def run() -> None:
            try:
                if generation > self.generation:
                    self._event(f"following the store's generation {generation}")
                self.reload()
            except Exception as exc:
                self._event(f"reload failed: {describe_failure(exc)}")
            finally:
                with self.lock:
                    self.reloading = False
                    self.last_reload = time.monotonic()

        threading.Thread(target=run, name="codelex-follow", daemon=True).start()

    def shard_failed(self, slot: int, name: str, why: str) -> None:
        """``slot`` could not answer for ``name`` because the shard is not served there (gone, or it failed a
        check): it is asked no more until the health check finds the shard held there again (reloading it).
        An error of the request itself, or a shard replaced under the query, leaves the replica in service."""
        if not why.startswith(SHARD_GONE_ERRORS) or "replaced during the query" in why:
            return
        with self.lock:
            slots = self.ready.get(name)
            if slots is not None and slot in slots:
                slots.discard(slot)
                if not slots:
                    self.errors[name] = why

    def suspect(self, slot: int, exc: BaseException, actor) -> None:
        """A call to ``actor`` (of ``slot``) failed: a dead actor is replaced at once (a hung one by the
        health check; one Ray is restarting gets its shards back from it)."""
        if type(exc).__name__ in ("ActorDiedError", "RayActorError"):
            self._replace(slot, describe_failure(exc), actor)

    def _replace(self, slot: int, why: str, actor) -> str:
        """Kill ``actor``, the holder of ``slot``, and start another with its shards (in the background:
        queries go to the other replicas meanwhile); nothing when ``slot`` has another holder by now."""
        ray = ray_module()
        with self.lock:
            if (slot in self.repairing or slot >= len(self.actors) or self.actors[slot] is not actor
                    or self.stopping.is_set()):
                return "already replaced"
            self.repairing.add(slot)
            old = self.actors[slot]
            for slots in self.ready.values():
                slots.discard(slot)
        self._event(f"actor {slot}: replaced ({why})")

        def run() -> None:
            try:
                try:
                    ray.kill(old, no_restart=True)
                except Exception:  # (already gone)
                    pass
                with self.lock:
                    self.actors[slot] = self._new_actor()
                    self.misses[slot] = 0
                    records = [self.records[n] for n, s in self.placement.items() if slot in s and n in self.records]
                self._load({slot: records}, LOAD_TIMEOUT_S)
            finally:
                with self.lock:
                    self.repairing.discard(slot)

        threading.Thread(target=run, name=f"codelex-repair-{slot}", daemon=True).start()
        return f"replaced ({why})"

    # --- queries ------------------------------------------------------------------------------------

    def note_latency(self, name: str, seconds: float) -> None:
        with self.lock:
            history = self.latencies.setdefault(name, deque(maxlen=LATENCY_WINDOW))
            history.append(seconds)
            n = len(history)
            if n >= HEDGE_MIN_SAMPLES and (n < LATENCY_WINDOW or self.turn % 8 == 0):  # (the p95, kept fresh)
                ordered = sorted(history)
                self.hedge_after[name] = max(HEDGE_FLOOR_S, ordered[min(n - 1, int(0.95 * n))])

    def hedge_delay(self, name: str) -> float:
        """How long a shard's request waits before a second replica is asked: its recent p95."""
        return self.hedge_after.get(name, HEDGE_DEFAULT_S)

    def _routes(self, names) -> dict[str, list[int]]:
        """Each shard's loaded replicas, the first to ask first (rotating, so replicas share the load; one
        that missed a health check last)."""
        with self.lock:
            self.turn += 1
            turn = self.turn
            out = {}
            for name in names:
                slots = sorted(self.ready.get(name, ()))
                if slots:
                    k = turn % len(slots)
                    slots = slots[k:] + slots[:k]
                    slots.sort(key=lambda s: self.misses.get(s, 0) > 0)
                out[name] = slots
        return out

    def _phase(self, names, call, deadline: float, actors: list) -> tuple[dict[str, object], dict[str, str]]:
        return _Fanout(self, self._routes(names), actors, call, deadline).run()

    def _ask_again(self, actors: list, request, stats: dict, versions: dict, missing: dict, deadline: float):
        """The collection's statistics from phase 1's ``stats``: the shards whose bodies lack variants that may
        be terms of their other fields asked again first (by ``deadline``), their answers replacing the first
        ones (or the shard missing); None when no shard's statistics are left."""
        from codelex.lexical.shards import merge_query_stats, missing_words

        global_stats = merge_query_stats(list(stats.values()))
        again = {}
        for name, st in stats.items():
            words = missing_words(st, global_stats)
            if words:
                again[name] = (versions[name], words)
        if not again:
            return global_stats
        answers, why = self._phase(list(again), lambda actor, group: actor.query_stats.remote(
            group, request, {n: again[n] for n in group}), deadline, actors)
        for name in again:
            stats.pop(name)  # (replaced by the second answer, or missing)
            if name in answers:
                stats[name] = answers[name][1]
            else:
                missing[name] = why.get(name, "no answer")
        return merge_query_stats(list(stats.values())) if stats else None

    def search(self, query: str, options=None, *, deadline_s: float = DEFAULT_DEADLINE_S, **kwargs) -> dict:
        """Answer ``query`` over every served shard within ``deadline_s`` seconds.

        Each shard is asked on one of its replicas, and on another when the first fails or is slower than
        the shard's recent p95; the answer is exact (every shard answered, ``missing`` empty) or says which
        shards are missing and why.

        Parameters
        ----------
        query : str
            As :func:`codelex.federation.federated_search` takes it (``repo:NAME`` selects shards).
        options : SearchOptions, optional
            And keyword arguments, as :meth:`codelex.WordIndex.search` takes them.
        deadline_s : float
            A shard that has not answered both phases by then is named as missing.

        Returns
        -------
        dict
            ``results`` (hits as dicts, paths ``name:path``), ``missing`` (shard -> why), ``shards``
            (served), ``answered`` (shards whose hits are in the merge), ``partial`` (whether any shard is
            missing), ``generation``, ``seconds``.
        """
        from codelex.federation.coordinator import merge_hits, shard_options, split_shard_filters
        from codelex.query.request import parse_request

        started = time.monotonic()
        deadline = started + float(deadline_s)
        if not self.started.wait(max(0.0, PHASE1_SHARE * float(deadline_s))) or self.start_error is not None:
            # (a coordinator Ray restarted, loading its shards again: no answer can claim to be whole)
            why = self.start_error or "the coordinator is starting: its shards are not loaded yet"
            return {"results": [], "missing": {"*": why}, "shards": 0, "answered": [], "partial": True,
                    "generation": self.generation, "seconds": time.monotonic() - started}
        with self.lock:
            names = sorted(self.placement)
            actors = list(self.actors)
            generation = self.generation
            versions_asked = {n: self.records[n].content_hash for n in names if n in self.records}
            missing: dict[str, str] = {n: f"not loaded: {self.errors.get(n, 'loading')}"
                                       for n in names if not self.ready.get(n)}
        text, selected = split_shard_filters(query, names)
        request = parse_request(text, options, kwargs)  # a bad request fails before any shard is asked; parsed once
        opts = request.options

        def answer(results: list, answered: Sequence[str] = ()) -> dict:
            return {"results": results, "missing": dict(sorted(missing.items())), "shards": len(names),
                    "answered": sorted(answered), "partial": bool(missing), "generation": generation,
                    "seconds": time.monotonic() - started}

        if opts.limit <= 0 or not request.tokens or not selected:
            return answer([])
        # Phase 1 on every shard (filters select documents; the statistics stay global), within a share of
        # the deadline: a shard slow to answer it must not leave the others no time to score.
        asked = [n for n in names if n not in missing]
        # (each shard asked for the version of this generation: a holder that already swapped in a newer one
        # answers from the previous, so that one answer never mixes two manifests)
        got, unanswered = self._phase(asked, lambda actor, group: actor.query_stats.remote(
            group, request, {n: (versions_asked[n], ()) for n in group}),
            started + PHASE1_SHARE * float(deadline_s), actors)
        missing.update(unanswered)
        stats = {n: one[1] for n, one in got.items()}
        versions = {n: one[0] for n, one in got.items()}
        if not stats:
            return answer([])
        global_stats = self._ask_again(actors, request, stats, versions, missing,
                                       started + PHASE1_AGAIN_SHARE * float(deadline_s))
        if global_stats is None:
            return answer([])
        # A shard that holds none of the words in any field can score no file: it is not asked again.
        wanted = [n for n in selected if n in stats and any(any(df) for df in stats[n].dfs.values())]
        hits, unscored = self._phase(wanted, lambda actor, group: actor.search.remote(
            [(n, versions[n], shard_options(opts, n)) for n in group], request, global_stats), deadline, actors)
        missing.update(unscored)
        ordered = [(n, hits[n][1]) for n in selected if n in hits]
        merged = merge_hits(ordered, opts.limit)
        wanted_set = set(wanted)
        matchless = [n for n in selected if n in stats and n not in wanted_set]
        return answer([h.to_dict() for h in merged], [n for n, _ in ordered] + matchless)


#: The longest query the HTTP endpoint takes (characters), and its longest deadline (seconds).
HTTP_MAX_QUERY = 4096
HTTP_MAX_DEADLINE_S = 60.0


def _http_server(coordinator: Coordinator, host: str, port: int):
    """A threading HTTP server whose one route, ``/search``, asks ``coordinator`` (stdlib only: Ray Serve
    would bring FastAPI and uvicorn for one route)."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlsplit

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - (no per-request line on the actor's stderr)
            pass

        def _reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - (http.server's name)
            url = urlsplit(self.path)
            if url.path != "/search":
                self._reply(404, {"error": "not found: GET /search?q=QUERY"})
                return
            args = parse_qs(url.query, max_num_fields=8)
            try:
                query = args["q"][0]
                if len(query) > HTTP_MAX_QUERY:
                    raise ValueError(f"a query is at most {HTTP_MAX_QUERY} characters")
                limit = int(args.get("n", ["10"])[0])
                deadline = float(args.get("deadline", [str(DEFAULT_DEADLINE_S)])[0])
                if not 0 < limit <= 1000 or not 0 < deadline <= HTTP_MAX_DEADLINE_S:
                    raise ValueError(f"n must be 1-1000 and deadline 0-{HTTP_MAX_DEADLINE_S:g} s")
                ranking = args.get("ranking", [None])[0]
                extra = {"ranking": ranking} if ranking else {}
                answer = coordinator.search(query, limit=limit, deadline_s=deadline, **extra)
            except KeyError:
                self._reply(400, {"error": "missing q: GET /search?q=QUERY"})
            except (ValueError, TypeError, LookupError) as exc:  # (QueryError is a ValueError)
                self._reply(400, {"error": str(exc)[:500]})
            else:
                self._reply(200, answer)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def start_coordinator(store_url: str, *, actors: int = 2, name: str = COORDINATOR_NAME, actor_cpus: float = 0.0,
                      timeout: float = LOAD_TIMEOUT_S, http: tuple[str, int] | None = None,
                      replicas: int = DEFAULT_REPLICAS,
                      health_interval: float = HEALTH_INTERVAL_S) -> tuple[object, dict]:
    """Start (or, when one of ``name`` runs, reload) the detached coordinator of a store; ``(handle, status)``.

    The coordinator and its holders outlive this process (Ray detached actors) until
    :func:`stop_coordinator`; Ray restarts the coordinator if its process dies, and it then starts again
    from the store's manifest.  ``http`` (host, port) also starts its HTTP endpoint
    (:meth:`Coordinator.serve_http`).  A start that fails leaves nothing behind (the coordinator is
    killed before the error is raised).

    Raises
    ------
    codelex.errors.ClusterError
        When another version or store runs under ``name``, or the start failed (the store has no readable
        manifest or no shard, the actors could not start).
    """
    from codelex.errors import ClusterError

    ray = ray_module()
    store = ShardStore(store_url)
    store.require_shared()
    store_url = store.url
    try:
        handle = ray.get_actor(name)
    except ValueError:
        handle = None
    if handle is not None:
        ray.get(handle.wait_started.remote(timeout), timeout=timeout + 60.0)  # (one Ray is restarting: its start)
        running = ray.get(handle.status.remote(), timeout=60.0)
        from codelex.defaults import VERSION

        if running.get("version") != VERSION:  # (its methods may not be this version's: never call them)
            raise ClusterError(f"coordinator {name!r} runs codelex {running.get('version', 'before 0.1.0')}, this "
                               f"is {VERSION}: stop it first (`codelex cluster serve --stop`)")
        if running["store"] != store_url:
            raise ClusterError(f"coordinator {name!r} serves {running['store']}: stop it first "
                               f"(`codelex cluster serve --stop`) or pass another --name")
        reloaded = ray.get(handle.reload.remote(timeout), timeout=timeout + 60.0)
        if http is not None:
            ray.get(handle.serve_http.remote(*http), timeout=60.0)
        return handle, dict(ray.get(handle.status.remote(), timeout=60.0), reload=reloaded)
    actor = ray.remote(Coordinator).options(name=name, lifetime="detached", num_cpus=0, max_concurrency=32,
                                           max_restarts=-1, max_task_retries=0)
    handle = actor.remote(store_url, actor_cpus, actors=actors, replicas=replicas, http=http,
                          health_interval=health_interval)
    try:
        status = ray.get(handle.wait_started.remote(timeout), timeout=timeout + 60.0)
    except BaseException as exc:
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # (already gone)
            pass
        if isinstance(exc, ray.exceptions.RayTaskError) and isinstance(getattr(exc, "cause", None), ClusterError):
            raise ClusterError(f"cannot serve {store_url}: {exc.cause}") from None
        raise
    return handle, status


def find_coordinator(name: str = COORDINATOR_NAME):
    """The running coordinator's handle (ClusterError when none of that name runs)."""
    from codelex.errors import ClusterError

    ray = ray_module()
    try:
        return ray.get_actor(name)
    except ValueError:
        raise ClusterError(f"no coordinator {name!r} on this Ray cluster: start one with "
                           "`codelex cluster serve --store URL`") from None


def stop_coordinator(name: str = COORDINATOR_NAME) -> bool:
    """Stop a served store (its holders, then its coordinator); False when none of that name ran."""
    ray = ray_module()
    try:
        handle = ray.get_actor(name)
    except ValueError:
        return False
    try:
        ray.get(handle.stop.remote(), timeout=60.0)
    finally:
        ray.kill(handle, no_restart=True)
    return True
