"""Serving on Ray: shards memory-mapped in actors, several per actor, and a fan-out with a deadline.

A :class:`Coordinator` reads the store's manifest, places the shards on
``actors`` :class:`ShardHolder` actors by size (largest first, each on the
least loaded actor) and answers a query as :func:`codelex.federation.
federated_search` does (phase 1 on every shard, the statistics merged,
phase 2 on the selected shards with them, the per-shard top-k merged: the
scores of one index over the shards' files), with one call per actor and
phase instead of one per shard, under a deadline (phase 1 within half of
it, so that one slow shard leaves the others time to score): a shard whose
actor does not answer in time, or has died, is named in the answer as missing (the
statistics are then those of the shards that answered phase 1), never
waited on past the deadline.  A dead actor is replaced in the background,
and its shards answer again once reloaded.

:meth:`Coordinator.reload` follows a new manifest while serving: a unit
whose content hash changed is loaded beside the old version on the same
actor and swapped in; a query started before the swap finishes on the
version its phase 1 saw (an actor keeps the previous version of each shard
for :data:`PREVIOUS_GRACE_S`).

``codelex cluster serve`` runs a :class:`Coordinator` as a detached, named
Ray actor (:func:`start_coordinator`), which ``codelex cluster search``
finds by name (:func:`find_coordinator`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

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


def _rss_bytes() -> int:
    """This process's resident memory (Linux ``/proc``; else the peak from ``getrusage``)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class ShardHolder:
    """Several shards of one store, memory-mapped in one process (run as a Ray actor).

    Every method takes and returns plain data; a failure of one shard is that shard's answer
    (``("error", reason)``), never the others'.

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

    def load(self, records: Sequence[dict]) -> dict[str, object]:
        """Load (or replace) shards; per name, ``{"files", "bytes", "seconds"}`` or ``("error", reason)``."""
        out: dict[str, object] = {}
        for data in records:
            started = time.perf_counter()
            try:
                record = UnitRecord.from_dict(data)
                index = self.store.open_shard(record, self.cache_dir)
            except Exception as exc:  # the one shard does not load: said, the others still do
                out[str(data.get("name") if isinstance(data, dict) else data)] = ("error", describe_failure(exc))
                continue
            with self.lock:
                old = self.current.get(record.name)
                if old is not None and old[0] != record.content_hash:
                    self.previous[record.name] = (old[0], old[1], time.monotonic())
                self.current[record.name] = (record.content_hash, index)
            out[record.name] = {"files": len(index), "bytes": record.shard_bytes,
                                "seconds": time.perf_counter() - started}
        return out

    def drop(self, names: Sequence[str]) -> None:
        """Stop serving ``names`` (their maps are released when no query holds them)."""
        with self.lock:
            for name in names:
                self.current.pop(name, None)
                self.previous.pop(name, None)

    def _index(self, name: str, version: str | None):
        with self.lock:
            now = time.monotonic()
            for n in [n for n, p in self.previous.items() if now - p[2] > PREVIOUS_GRACE_S]:
                del self.previous[n]
            cur = self.current.get(name)
            if cur is not None and (version is None or cur[0] == version):
                return cur
            prev = self.previous.get(name)
            if prev is not None and prev[0] == version:
                return prev[0], prev[1]
        raise LookupError(f"shard {name!r} is not served here" if cur is None else
                          f"shard {name!r} was replaced during the query")

    def query_stats(self, names: Sequence[str], request,
                    again: dict[str, tuple[str, tuple[str, ...]]] | None = None) -> dict[str, object]:
        """Phase 1 for each of ``names`` (``request``: the coordinator's :class:`~codelex.query.Request`):
        ``(content hash, ShardQueryStats)`` or ``("error", reason)``.

        ``again`` (name -> (content hash, words)) asks those shards once more, for the dfs of words
        other shards found (:func:`codelex.lexical.shards.missing_words`), on the version asked first.
        """
        out: dict[str, object] = {}
        for name in names:
            try:
                version, words = again[name] if again else (None, ())
                version, index = self._index(name, version)
                out[name] = (version, index.query_stats(request, words=words))
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
                out[name] = ("hits", list(index.search(request.with_options(options), global_stats=global_stats)))
            except Exception as exc:
                out[name] = ("error", describe_failure(exc))
        return out

    def info(self) -> dict:
        """The shards held (name -> content hash), the process id and resident memory."""
        with self.lock:
            shards = {n: v[0] for n, v in self.current.items()}
        return {"pid": os.getpid(), "rss_bytes": _rss_bytes(), "shards": shards}

    def ping(self) -> int:
        return os.getpid()


def place_by_size(records: Sequence[UnitRecord], actors: int,
                  loads: Sequence[int] | None = None) -> list[list[UnitRecord]]:
    """Shards onto ``actors`` bins, largest first, each onto the least loaded bin (ties: the lowest)."""
    bins: list[list[UnitRecord]] = [[] for _ in range(actors)]
    load = list(loads) if loads is not None else [0] * actors
    for record in sorted(records, key=lambda r: (-r.shard_bytes, r.name)):
        i = min(range(actors), key=lambda j: (load[j], j))
        bins[i].append(record)
        load[i] += record.shard_bytes
    return bins


class Coordinator:
    """Places a store's shards on holder actors and answers queries by fan-out with a deadline.

    Usable in any Ray driver (``Coordinator(url).start(2)``) or as the detached actor
    ``codelex cluster serve`` starts.

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
    """

    def __init__(self, store_url: str, actor_cpus: float = 0.0, cache_dir: str | None = None,
                 holder: type = ShardHolder) -> None:
        self.holder = holder
        self.store_url = store_url
        self.store = ShardStore(store_url)
        self.actor_cpus = actor_cpus
        self.cache_dir = cache_dir
        self.lock = threading.RLock()
        self.actors: list = []
        self.placement: dict[str, int] = {}  # shard name -> actor slot
        self.records: dict[str, UnitRecord] = {}
        self.loaded: set[str] = set()
        self.generation = 0
        self.repairing: set[int] = set()
        self.errors: dict[str, str] = {}  # shard -> why it did not load
        self.http = None  # the HTTP endpoint's server, once started (serve_http)

    # --- lifecycle ----------------------------------------------------------------------------------

    def _new_actor(self):
        ray = ray_module()
        holder = ray.remote(self.holder).options(num_cpus=self.actor_cpus, max_concurrency=8, max_restarts=0,
                                                 scheduling_strategy="SPREAD")
        return holder.remote(self.store_url, self.cache_dir)

    def _load(self, slot_records: dict[int, list[UnitRecord]], timeout: float) -> dict[str, object]:
        """Load records onto actor slots in parallel, waiting at most ``timeout``; per shard what happened."""
        ray = ray_module()
        refs = {}
        with self.lock:
            for slot, records in slot_records.items():
                if records:
                    refs[self.actors[slot].load.remote([r.to_dict() for r in records])] = (slot, records)
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout) if refs else ([], [])
        out: dict[str, object] = {}
        for ref, (slot, records) in refs.items():
            if ref not in ready:
                out.update((r.name, ("error", f"not loaded within {timeout:.0f} s")) for r in records)
                continue
            try:
                out.update(ray.get(ref, timeout=10.0))
            except Exception as exc:
                out.update((r.name, ("error", describe_failure(exc))) for r in records)
        with self.lock:
            for name, what in out.items():
                if isinstance(what, dict):
                    self.loaded.add(name)
                    self.errors.pop(name, None)
                else:
                    self.loaded.discard(name)
                    self.errors[name] = what[1]
        return out

    def start(self, actors: int = 2, timeout: float = LOAD_TIMEOUT_S) -> dict:
        """Read the manifest, start ``actors`` holders and load the shards onto them, placed by size.

        Returns
        -------
        dict
            :meth:`status` after loading (shards that did not load are listed under ``errors``).
        """
        records = self.store.manifest()
        generation = self.store.manifest_generation()
        n = max(1, min(int(actors), max(1, len(records))))
        bins = place_by_size(list(records.values()), n)
        with self.lock:
            self.actors = [self._new_actor() for _ in range(n)]
            self.records = dict(records)
            self.placement = {r.name: i for i, b in enumerate(bins) for r in b}
            self.generation = generation
        self._load(dict(enumerate(bins)), timeout)
        return self.status()

    def reload(self, timeout: float = LOAD_TIMEOUT_S) -> dict:
        """Follow the store's current manifest while serving: new and changed shards loaded (then swapped
        in), removed ones dropped.  Returns ``{"generation", "loaded", "replaced", "dropped", "errors"}``."""
        records = self.store.manifest()
        generation = self.store.manifest_generation()
        with self.lock:
            old = dict(self.records)
            loads = [0] * len(self.actors)
            for name, slot in self.placement.items():
                if name in records and name in old:
                    loads[slot] += old[name].shard_bytes
            removed = [n for n in old if n not in records]
            changed = [r for n, r in records.items() if n in old and old[n].content_hash != r.content_hash]
            added = [r for n, r in records.items() if n not in old]
            slots: dict[int, list[UnitRecord]] = {}
            for r in changed:
                slots.setdefault(self.placement[r.name], []).append(r)
            for i, b in enumerate(place_by_size(added, len(self.actors), loads)):
                for r in b:
                    self.placement[r.name] = i
                slots.setdefault(i, []).extend(b)
            by_slot: dict[int, list[str]] = {}
            for name in removed:
                by_slot.setdefault(self.placement.pop(name), []).append(name)
                self.loaded.discard(name)
                self.errors.pop(name, None)
        for slot, names in by_slot.items():
            self.actors[slot].drop.remote(names)
        result = self._load(slots, timeout)
        with self.lock:
            self.records = dict(records)
            for name, what in result.items():  # a replacement that did not load: the old version serves on
                if not isinstance(what, dict) and name in old:
                    self.records[name] = old[name]
                    self.loaded.add(name)
                    self.errors.pop(name, None)
            self.generation = generation
        return {"generation": generation, "loaded": sorted(r.name for r in added),
                "replaced": sorted(r.name for r in changed), "dropped": sorted(removed),
                "errors": {n: w[1] for n, w in result.items() if not isinstance(w, dict)}}

    def stop(self) -> None:
        """Kill the holder actors."""
        ray = ray_module()
        with self.lock:
            actors, self.actors = self.actors, []
            self.placement, self.loaded = {}, set()
            http, self.http = self.http, None
        if http is not None:
            http.shutdown()
            http.server_close()
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # (one already dead)
                pass

    def status(self) -> dict:
        """The store, generation, shards per actor (with sizes) and each actor's pid and resident memory."""
        ray = ray_module()
        with self.lock:
            actors = list(self.actors)
            placement = dict(self.placement)
            records = dict(self.records)
            errors = dict(self.errors)
        refs = [a.info.remote() for a in actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=10.0) if refs else ([], [])
        out = []
        for slot, ref in enumerate(refs):
            info = None
            if ref in ready:
                try:
                    info = ray.get(ref, timeout=1.0)
                except Exception as exc:
                    info = {"error": describe_failure(exc)}
            names = sorted(n for n, s in placement.items() if s == slot)
            out.append({"slot": slot, "shards": names,
                        "shard_bytes": sum(records[n].shard_bytes for n in names if n in records),
                        "pid": (info or {}).get("pid"), "rss_bytes": (info or {}).get("rss_bytes"),
                        "error": (info or {"error": "no answer within 10 s"}).get("error")})
        http = self.http
        from codelex.defaults import VERSION

        return {"version": VERSION, "store": self.store_url, "generation": self.generation, "shards": len(records),
                "files": sum(r.files for r in records.values()), "actors": out, "errors": errors,
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

    # --- repair -------------------------------------------------------------------------------------

    def _repair(self, slot: int) -> None:
        """Replace the dead actor of ``slot`` and reload its shards (in the background: queries go on)."""
        with self.lock:
            if slot in self.repairing or slot >= len(self.actors):
                return
            self.repairing.add(slot)

        def run() -> None:
            try:
                with self.lock:
                    self.actors[slot] = self._new_actor()
                    records = [self.records[n] for n, s in self.placement.items() if s == slot and n in self.records]
                self._load({slot: records}, LOAD_TIMEOUT_S)
            finally:
                with self.lock:
                    self.repairing.discard(slot)

        threading.Thread(target=run, name=f"codelex-repair-{slot}", daemon=True).start()

    # --- queries ------------------------------------------------------------------------------------

    def _fan_out(self, calls: dict[int, object], deadline: float) -> tuple[dict[int, object], dict[int, str]]:
        """Wait for ``calls`` (slot -> ObjectRef) until ``deadline``: the answers, and why the others failed."""
        ray = ray_module()
        refs = {ref: slot for slot, ref in calls.items()}
        remaining = max(0.0, deadline - time.monotonic())
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=remaining) if refs else ([], [])
        answers, failures = {}, {}
        for ref, slot in refs.items():
            if ref not in ready:
                failures[slot] = "no answer within the deadline"
                continue
            try:
                answers[slot] = ray.get(ref, timeout=max(0.1, deadline - time.monotonic()))
            except Exception as exc:
                failures[slot] = describe_failure(exc)
                if type(exc).__name__ in ("ActorDiedError", "RayActorError", "ActorUnavailableError"):
                    self._repair(slot)
        return answers, failures

    @staticmethod
    def _answered(groups: dict[int, list[str]], answers: dict, failures: dict, missing: dict):
        """Each shard's answer in a fan-out's, ``(name, answer)``; a shard without one (its actor failed or
        did not answer in time, or it reported an error) is filed under ``missing`` with the reason."""
        for slot, group in groups.items():
            got = answers.get(slot)
            for name in group:
                one = got.get(name) if got is not None else None
                if one is None:
                    missing[name] = failures.get(slot, "no answer")
                elif one[0] == "error":
                    missing[name] = one[1]
                else:
                    yield name, one

    @classmethod
    def _collect(cls, groups: dict[int, list[str]], answers: dict, failures: dict, missing: dict, stats: dict,
                 versions: dict) -> None:
        """File a phase-1 fan-out's answers: each shard's statistics and version, or why it is missing."""
        for name, one in cls._answered(groups, answers, failures, missing):
            versions[name] = one[0]
            stats[name] = one[1]

    def _ask_again(self, placement: dict, actors: list, request, stats: dict, versions: dict,
                   missing: dict, deadline: float):
        """The collection's statistics from phase 1's ``stats``: the shards whose bodies lack variants that may
        be terms of their other fields asked again first (by ``deadline``), their answers replacing the first
        ones (or the shard missing); None when no shard's statistics are left."""
        from codelex.lexical.shards import merge_query_stats, missing_words

        global_stats = merge_query_stats(list(stats.values()))
        again: dict[int, dict[str, tuple[str, tuple[str, ...]]]] = {}
        for name, st in stats.items():
            words = missing_words(st, global_stats)
            if words:
                again.setdefault(placement[name], {})[name] = (versions[name], words)
        if not again:
            return global_stats
        calls = {slot: actors[slot].query_stats.remote(list(asked), request, asked) for slot, asked in again.items()}
        answers, failures = self._fan_out(calls, deadline)
        groups = {slot: list(asked) for slot, asked in again.items()}
        for name in [n for group in groups.values() for n in group]:
            stats.pop(name)  # (replaced by the second answer, or missing)
        self._collect(groups, answers, failures, missing, stats, versions)
        return merge_query_stats(list(stats.values())) if stats else None

    def search(self, query: str, options=None, *, deadline_s: float = DEFAULT_DEADLINE_S, **kwargs) -> dict:
        """Answer ``query`` over every served shard within ``deadline_s`` seconds.

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
            (served), ``answered`` (shards whose hits are in the merge), ``generation``, ``seconds``.
        """
        from codelex.federation.coordinator import merge_hits, shard_options, split_shard_filters
        from codelex.query.request import parse_request

        started = time.monotonic()
        deadline = started + float(deadline_s)
        with self.lock:
            placement = dict(self.placement)
            actors = list(self.actors)
            generation = self.generation
            missing: dict[str, str] = {n: f"not loaded: {self.errors.get(n, 'loading')}"
                                       for n in placement if n not in self.loaded}
        names = sorted(placement)
        text, selected = split_shard_filters(query, names)
        request = parse_request(text, options, kwargs)  # a bad request fails before any shard is asked; parsed once
        opts = request.options

        def answer(results: list, answered: Sequence[str] = ()) -> dict:
            return {"results": results, "missing": dict(sorted(missing.items())), "shards": len(names),
                    "answered": sorted(answered), "generation": generation,
                    "seconds": time.monotonic() - started}

        if opts.limit <= 0 or not request.tokens or not selected:
            return answer([])
        by_slot: dict[int, list[str]] = {}
        for name in names:
            if name not in missing:
                by_slot.setdefault(placement[name], []).append(name)
        # Phase 1 on every shard (filters select documents; the statistics stay global), within a share of
        # the deadline: a shard slow to answer it must not leave the others no time to score.
        calls = {slot: actors[slot].query_stats.remote(group, request) for slot, group in by_slot.items()}
        answers, failures = self._fan_out(calls, started + PHASE1_SHARE * float(deadline_s))
        stats: dict[str, object] = {}
        versions: dict[str, str] = {}
        self._collect(by_slot, answers, failures, missing, stats, versions)
        if not stats:
            return answer([])
        global_stats = self._ask_again(placement, actors, request, stats, versions, missing,
                                       started + PHASE1_AGAIN_SHARE * float(deadline_s))
        if global_stats is None:
            return answer([])
        wanted = [n for n in selected if n in stats]
        by_slot2: dict[int, list] = {}
        for name in wanted:
            by_slot2.setdefault(placement[name], []).append((name, versions[name], shard_options(opts, name)))
        calls = {slot: actors[slot].search.remote(reqs, request, global_stats) for slot, reqs in by_slot2.items()}
        answers, failures = self._fan_out(calls, deadline)
        groups2 = {slot: [name for name, _v, _o in reqs] for slot, reqs in by_slot2.items()}
        hits_of = {name: one[1] for name, one in self._answered(groups2, answers, failures, missing)}
        ordered = [(n, hits_of[n]) for n in selected if n in hits_of]
        merged = merge_hits(ordered, opts.limit)
        return answer([h.to_dict() for h in merged], [n for n, _ in ordered])


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
                      timeout: float = LOAD_TIMEOUT_S, http: tuple[str, int] | None = None) -> tuple[object, dict]:
    """Start (or, when one of ``name`` runs, reload) the detached coordinator of a store; ``(handle, status)``.

    The coordinator and its holders outlive this process (Ray detached actors) until
    :func:`stop_coordinator`.  ``http`` (host, port) also starts its HTTP endpoint
    (:meth:`Coordinator.serve_http`).
    """
    ray = ray_module()
    try:
        handle = ray.get_actor(name)
    except ValueError:
        handle = None
    if handle is not None:
        running = ray.get(handle.status.remote(), timeout=60.0)
        from codelex.defaults import VERSION

        if running.get("version") != VERSION:  # (its methods may not be this version's: never call them)
            from codelex.errors import ClusterError

            raise ClusterError(f"coordinator {name!r} runs codelex {running.get('version', 'before 0.1.0')}, this "
                               f"is {VERSION}: stop it first (`codelex cluster serve --stop`)")
        if running["store"] != store_url:
            from codelex.errors import ClusterError

            raise ClusterError(f"coordinator {name!r} serves {running['store']}: stop it first "
                               f"(`codelex cluster serve --stop`) or pass another --name")
        reloaded = ray.get(handle.reload.remote(timeout), timeout=timeout + 60.0)
        if http is not None:
            ray.get(handle.serve_http.remote(*http), timeout=60.0)
        return handle, dict(ray.get(handle.status.remote(), timeout=60.0), reload=reloaded)
    actor = ray.remote(Coordinator).options(name=name, lifetime="detached", num_cpus=0, max_concurrency=32,
                                           max_restarts=0)
    handle = actor.remote(store_url, actor_cpus)
    status = ray.get(handle.start.remote(actors, timeout), timeout=timeout + 60.0)
    if http is not None:
        status["http"] = ray.get(handle.serve_http.remote(*http), timeout=60.0)
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
