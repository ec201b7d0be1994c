"""The ``codelex cluster`` commands: build shards on Ray, serve them, search them (the ``cluster`` extra).

Each command's grammar is :func:`codelex.cli_parser.build_parser`'s; :data:`codelex.cli.COMMANDS` runs them.
"""

from __future__ import annotations

import json
import sys
import time

from codelex.cli_common import Failure as _Failure
from codelex.cli_common import check_query
from codelex.cli_common import write as _write
from codelex.defaults import EXIT_FOUND, EXIT_NONE, EXIT_PARTIAL

__all__ = ["cmd_cluster_index", "cmd_cluster_search", "cmd_cluster_serve"]


def _cluster_connect(args, *, start_local: bool):
    from codelex.cluster.ray_runtime import INIT_TIMEOUT_S, connect

    # (a search's whole wait is bounded by its deadline: joining the cluster too)
    deadline = getattr(args, "deadline", None)
    timeout = INIT_TIMEOUT_S if deadline is None else min(INIT_TIMEOUT_S, 10.0 + deadline)
    return connect(args.address, start_local=start_local, num_cpus=getattr(args, "num_cpus", None), timeout=timeout)


def cmd_cluster_index(args) -> int:
    from codelex.output import human_bytes

    from codelex.cluster.build import build_cluster, parse_units
    from codelex.render import display_text

    from codelex.cluster.store import ShardStore

    units = parse_units(args.units)  # (a bad spec or store: one line, exit 2, before Ray starts)
    ShardStore(args.store).require_shared()
    _cluster_connect(args, start_local=True)

    def progress(event) -> None:
        head = f"[{event.done}/{event.total}] {event.unit}"
        if event.kind == "waiting":
            line = f"codelex: warning: {event.detail}"
        elif event.kind in ("built", "unchanged"):
            r = event.record
            line = f"{head}: {event.kind}, {r.files:,} files, {human_bytes(r.shard_bytes)}"
            if event.kind == "built":
                line += f" in {r.seconds:.2f} s"
                if event.updated_files is not None:
                    line += f" ({event.updated_files:,} files updated on the previous shard)"
        elif event.kind == "retry":
            line = f"{head}: attempt {event.attempt} failed ({display_text(event.detail)}); retrying"
        else:
            line = f"{head}: FAILED after {event.attempt} attempts ({display_text(event.detail)})"
        print(line, file=sys.stderr, flush=True)

    report = build_cluster(units, args.store, retries=args.retries, unit_timeout=args.unit_timeout,
                           cpus_per_unit=args.cpus_per_unit, force=args.force, prune=args.prune,
                           progress=None if args.quiet else progress)
    if args.json:
        json.dump({"store": args.store, "generation": report.generation, "built": report.built,
                   "unchanged": report.unchanged, "failed": report.failed, "retried": report.retried,
                   "updated": report.updated,
                   "seconds": report.seconds, "units": {n: r.to_dict() for n, r in report.records.items()}},
                  sys.stdout)
        sys.stdout.write("\n")
    else:
        files = sum(r.files for r in report.records.values())
        size = sum(r.shard_bytes for r in report.records.values())
        print(f"{len(report.built)} built, {len(report.unchanged)} unchanged, {len(report.failed)} failed in "
              f"{report.seconds:.2f} s; manifest generation {report.generation}: {len(report.records)} shards, "
              f"{files:,} files, {human_bytes(size)}")
        for name, why in sorted(report.failed.items()):
            print(f"failed: {name}: {display_text(why)}")
    return EXIT_FOUND if report.ok else EXIT_NONE


def _ray_failures(command):
    """A cluster command whose Ray failures (an actor that died, a call that timed out) are one line, exit 2."""

    def run(args) -> int:
        from codelex.cluster.ray_runtime import describe_failure, ray_module

        ray = ray_module()
        try:
            return command(args)
        except ray.exceptions.RayError as exc:
            raise _Failure(describe_failure(exc)) from None

    return run


def _serve(args) -> int:
    from codelex.output import human_bytes

    from codelex.cluster.serve import start_coordinator, stop_coordinator
    from codelex.render import display_text

    if not args.stop and not args.status and not args.store:
        raise _Failure("cluster serve needs --store URL (or --stop, --status)")
    ray = _cluster_connect(args, start_local=False)
    if args.stop:
        stopped = stop_coordinator(args.name)
        print(f"stopped {args.name}" if stopped else f"no coordinator {args.name!r} runs", file=sys.stderr)
        return EXIT_FOUND if stopped else EXIT_NONE
    if args.status:
        from codelex.cluster.serve import find_coordinator

        status = ray.get(find_coordinator(args.name).status.remote(), timeout=60.0)
    else:
        started = time.perf_counter()
        http = (args.http_host, args.http) if args.http is not None else None
        _, status = start_coordinator(args.store, actors=args.actors, name=args.name, actor_cpus=args.actor_cpus,
                                      http=http, replicas=args.replicas)
        status["seconds"] = time.perf_counter() - started
        if "reload" in status and (len(status["actors"]) != args.actors or status["replicas"] != args.replicas):
            print(f"codelex: note: {args.name} runs {len(status['actors'])} actors, {status['replicas']} replicas "
                  "each: --actors and --replicas apply when it starts (stop it to change them)", file=sys.stderr)
    if args.json:
        json.dump(status, sys.stdout)
        sys.stdout.write("\n")
        return EXIT_FOUND if not status["errors"] and status["shards"] else EXIT_NONE
    reload = status.get("reload")
    if reload is not None:
        print(f"reloaded generation {reload['generation']}: {len(reload['loaded'])} loaded, "
              f"{len(reload['replaced'])} replaced, {len(reload['dropped'])} dropped")
    how = f" in {status['seconds']:.2f} s" if "seconds" in status else ""
    print(f"{args.name}: {status['shards']} shards, {status['files']:,} files of {display_text(status['store'])} "
          f"(generation {status['generation']}) on {len(status['actors'])} actors, "
          f"{status.get('replicas', 1)} replicas each{how}")
    if status.get("http"):
        print(f"  http: {status['http']}?q=QUERY")
    for a in status["actors"]:
        state = f"error: {display_text(a['error'])}" if a["error"] else \
            f"pid {a['pid']}, rss {human_bytes(a['rss_bytes'])}"
        print(f"  actor {a['slot']}: {len(a['shards'])} shards, {human_bytes(a['shard_bytes'])} ({state}): "
              + ", ".join(a["shards"]))
    for name, why in sorted(status.get("degraded", {}).items()):
        print(f"  degraded: {name}: {display_text(why)}")
    for name, why in sorted(status["errors"].items()):
        print(f"  not loaded: {name}: {display_text(why)}")
    return EXIT_FOUND if not status["errors"] and status["shards"] else EXIT_NONE


def _search(args) -> int:
    from codelex.cluster.serve import find_coordinator
    from codelex.query import SearchOptions, parse_request
    from codelex.render import display_path, display_text

    check_query(args.query)
    options = SearchOptions(limit=args.limit, ranking=args.ranking)
    request = parse_request(args.query, options)  # (a malformed query: one line, exit 2, before Ray starts)
    ray = _cluster_connect(args, start_local=False)
    coordinator = find_coordinator(args.name)
    # (as search's: after what says the cluster cannot answer, before the fan-out)
    check_query(args.query, request.tokens, filters_only=bool(request.filters) and not request.terms.strip())
    budget = time.monotonic() + args.deadline + 10.0
    while True:
        try:
            answer = ray.get(coordinator.search.remote(args.query, options, deadline_s=args.deadline),
                             timeout=max(0.1, budget - time.monotonic()))
            break
        except ray.exceptions.GetTimeoutError:
            raise _Failure(f"the coordinator {args.name!r} did not answer within "
                           f"{args.deadline + 10.0:.0f} s") from None
        except ray.exceptions.RayTaskError as exc:  # the request's own error (a bad repo: filter...)
            cause = exc.cause if isinstance(getattr(exc, "cause", None), Exception) else exc
            raise _Failure(str(cause).strip().splitlines()[-1] if str(cause).strip() else
                           type(cause).__name__) from None
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            # The coordinator's process died and Ray restarts it: asked again until the deadline.
            if time.monotonic() + 0.5 >= budget:
                raise
            time.sleep(0.5)
    if args.json:
        json.dump(answer, sys.stdout)
        sys.stdout.write("\n")
    else:
        _write(f"{i}. {display_path(h['file'])}:{h['startLine']}  {h['score']:.4f}"
               for i, h in enumerate(answer["results"], 1))
        if not args.quiet:
            print(f"{len(answer['results'])} results from {len(answer['answered'])} of {answer['shards']} shards "
                  f"(generation {answer['generation']}) in {answer['seconds'] * 1e3:.1f} ms", file=sys.stderr)
    if not args.json or not args.quiet:
        for name, why in answer["missing"].items():
            print(f"codelex: missing shard {name}: {display_text(why)}", file=sys.stderr)
    if answer["missing"] and not args.allow_partial:
        print(f"codelex: partial answer: {len(answer['missing'])} of {answer['shards']} shards missing "
              "(--allow-partial accepts it)", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_FOUND if answer["results"] else EXIT_NONE


#: ``codelex cluster serve`` and ``cluster search``, with Ray's failures told in one line.
cmd_cluster_serve = _ray_failures(_serve)
cmd_cluster_search = _ray_failures(_search)
