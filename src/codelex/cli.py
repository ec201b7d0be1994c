"""The ``codelex`` command line: what each command does, given its parsed arguments (:data:`COMMANDS`).

The grammar is :mod:`codelex.cli_parser`'s, the renderings :mod:`codelex.output`'s, the cluster commands
:mod:`codelex.cli_cluster`'s.  Exit status as grep's (:mod:`codelex.defaults`): 0 with results, 1 without, 2 on
errors (one line on stderr, no traceback unless ``--debug``), 130 on Ctrl-C (a save is atomic: never torn).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from codelex.cli_cluster import cmd_cluster_index, cmd_cluster_search, cmd_cluster_serve
from codelex.cli_mcp import cmd_mcp, cmd_mcp_install, cmd_mcp_uninstall
from codelex.cli_common import EmbedProgress as _EmbedProgress
from codelex.cli_common import Failure as _Failure
from codelex.cli_common import Progress as _Progress
from codelex.cli_common import bad_max_bytes as _bad_max_bytes
from codelex.cli_common import check_query as _check_query
from codelex.cli_common import interrupt_again as _interrupt_again
from codelex.cli_common import progress_for as _progress_for
from codelex.cli_common import quiet_libraries as _quiet_libraries
from codelex.cli_common import style as _style
from codelex.cli_common import write as _write
from codelex.cli_parser import build_parser, parse
from codelex.defaults import EXIT_ERROR, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NONE

__all__ = ["main"]


def _project_root(args) -> Path:
    """The root to work on: ``--root``, else the project the current directory belongs to
    (:func:`codelex.project.discover_root`).  Sets ``args.scope``: the current directory
    relative to a discovered root ("" when they are the same; None with ``--root``)."""
    cached = getattr(args, "resolved_root", None)
    if cached is not None:
        return cached
    client_cwd = getattr(args, "cwd", None)  # a served command's: the client's directory
    if args.root is not None:
        root = Path(args.root)
        if client_cwd is not None and not root.is_absolute():
            root = Path(client_cwd) / root
        if not root.is_dir():
            raise _Failure(f"not a directory: {args.root}")
        args.scope = None
    else:
        from codelex.project.roots import discover_root

        try:
            here = Path(client_cwd or os.getcwd()).resolve()
        except OSError as exc:
            raise _Failure(f"the current directory cannot be read: {exc}") from None
        root = discover_root(here)
        args.scope = "" if root == here else here.relative_to(root).as_posix()
    args.resolved_root = root
    return root


def _size_cap(args) -> dict:
    """``--max-bytes`` when given; else the project configuration's (or the default) applies."""
    return {} if args.max_bytes is None else {"max_bytes": args.max_bytes}


def _open_project(args, progress=None):
    from codelex.project import Project

    root = _project_root(args)
    try:
        # One command in one process builds no graph in the background: it ranks with the counts saved for the
        # index's files, derived now when none are (the server, which keeps projects warm, keeps its own graph).
        graph = False if getattr(args, "no_priors", False) or getattr(args, "no_import_graph", False) else "saved"
        project = Project(root, progress=progress, import_graph=graph, **_size_cap(args))
    except (OSError, ValueError) as exc:
        raise _Failure(str(exc)) from None
    return project


def _open_ready(args, progress=None):
    project = _open_project(args, progress)
    project.open()
    if project.status == "refused":
        project.close()
        raise _Failure(f"refusing to index {project.root}: {project.status_reason}")
    if project.status != "ready":
        reason = project.status_reason
        project.close()
        raise _Failure(f"indexing {project.root} failed: {reason}")
    return project


def _search_paths(args, *, scoped: bool = True) -> list[str] | None:
    """``--path`` globs, and (``scoped``) the current subtree when the root was discovered (unless
    ``--whole-project``).

    A glob given from a subdirectory is read from there (``../routing.py`` names the parent's file); one that
    leaves the project's root is a usage error, never a filter that silently matches nothing."""
    import posixpath

    scope = getattr(args, "scope", None)
    if not scope or getattr(args, "whole_project", False) or (not scoped and not args.path):
        scope = ""
        if not args.path:
            return None
    elif not args.path:
        return [scope + "/"]
    out = []
    for p in args.path:
        joined = posixpath.normpath(posixpath.join(scope, p.replace("\\", "/").lstrip("/")))
        if joined == ".." or joined.startswith("../"):
            raise _Failure(f"--path {p!r} leaves the project root")
        out.append("**" if joined == "." else joined + ("/" if p.endswith("/") else ""))
    return out


def _cmd_search(args) -> int:
    from codelex.output import Where, search_lines
    from codelex.query import SearchOptions, parse_request

    _check_query(args.query)
    _project_root(args)  # (sets args.scope; indexes nothing)
    options = SearchOptions(limit=args.limit, paths=_search_paths(args), lang=args.lang,
                            demote_test_vendor=not args.no_priors, demote_docs=not args.no_priors,
                            ranking=args.ranking,
                            # an explicit empty map: no centrality (the server's graph included)
                            centrality={} if args.no_priors or args.no_import_graph else None)
    request = parse_request(args.query, options)  # a bad query fails before any indexing; parsed once
    machine = args.json or args.jsonl or args.files_only or args.vimgrep
    progress = None if machine else _progress_for(_Progress, sys.stderr, sys.stderr.isatty(), quiet=args.quiet)
    started = time.perf_counter()
    pool = getattr(args, "pool", None)  # in the server: a warm, watched project per root
    project = _pooled(args, pool) if pool is not None else _open_ready(args, progress)
    if progress:
        progress.clear()
    report = project.last_report if pool is None else None
    if report is not None and report.save_error is not None:  # the answer stands; the next command rebuilds
        print(f"codelex: warning: {report.save_error}", file=sys.stderr)
    try:
        # (after the opening: a project that cannot be searched is said first, a query without words next)
        _check_words(args.query, request)
        opened = time.perf_counter()
        result = project.search(request)
        searched = time.perf_counter()
        root = str(project.root)
        fmt = "json" if args.json else "jsonl" if args.jsonl else "files" if args.files_only else \
            "vimgrep" if args.vimgrep else "text"
        where = Where(root, getattr(args, "scope", None))
        _write(search_lines(result, fmt, where, query=args.query, tokens=request.tokens,
                            style=_style(args) if fmt == "text" else None))
        if not args.quiet:
            from codelex.output import search_notes

            kept = None if pool is None else ("watched" if project.watching else "stat-checked")
            for line in search_notes(result, project.last_report if pool is None else None, kept,
                                     args.scope if not args.whole_project else None, machine,
                                     (opened - started) * 1e3, (searched - opened) * 1e3):
                print(line, file=sys.stderr)
        if pool is None:
            _let_structure_finish(project)
    finally:
        if pool is None:
            project.close()
    return EXIT_FOUND if result.results else EXIT_NONE


#: After a one-shot search has answered, how long it lets a structure refresh under way finish (files changed
#: since the store was complete): once it has, the next command of the unchanged tree starts none at all.
STRUCTURE_GRACE_S = 5.0


def _let_structure_finish(project) -> None:
    """The answer is out: give a structure refresh under way (none when the store covers the tree) a bounded
    while to finish and save, rather than stop it at once (then every later command would start it again)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    project.wait_structure(STRUCTURE_GRACE_S)


def _check_words(query: str, request) -> None:
    """A search or code query with nothing to search for (no tokens; only filters, say): one line, exit 2."""
    _check_query(query, request.tokens, filters_only=bool(request.filters) and not request.terms.strip())


def _pooled(args, pool):
    """The server's project for this command's root (opened and ready, or a one-line failure)."""
    root = _project_root(args).resolve()
    from codelex.project import refusal_reason

    refused = refusal_reason(root)
    if refused:
        raise _Failure(f"refusing to index {root}: {refused}")
    try:
        project = pool.project(root, _size_cap(args))
    except (OSError, ValueError) as exc:
        raise _Failure(str(exc)) from None
    if project.status != "ready":
        raise _Failure(f"indexing {project.root} {project.status}: {project.status_reason}")
    return project


def _verify_saved(project) -> int:
    """``codelex index --verify``: every checksum of every saved file in the index directory, now, and that
    this user wrote each (a committed or copied file's checksums match whatever it holds: it is reported)."""
    from codelex.errors import IndexFormatError
    from codelex.output import human_bytes
    from codelex.persist.lexical import saved_files, verify_saved_file
    from codelex.render import display_path

    directory = project.index_dir
    started = time.perf_counter()
    files = saved_files(directory)
    if not files:
        raise _Failure(f"no saved index in {display_path(str(directory))}: run `codelex index` first")
    for file in files:
        try:
            verify_saved_file(directory, file)
        except (IndexFormatError, OSError) as exc:
            raise _Failure(f"{display_path(str(file))}: {exc}") from None
    total = sum(file.stat().st_size for file in files)
    print(f"verified {len(files)} file{'s' if len(files) != 1 else ''} ({human_bytes(total)}) in "
          f"{time.perf_counter() - started:.2f} s: {display_path(str(directory))}")
    return EXIT_FOUND


def _cmd_index(args) -> int:
    progress = _progress_for(_Progress, sys.stderr, sys.stderr.isatty(), quiet=args.json)
    project = _open_project(args, progress)
    if args.verify:
        try:
            return _verify_saved(project)
        finally:
            project.close()
    try:
        started = time.perf_counter()
        (project.rebuild if args.rebuild else project.open)()
        if progress:
            progress.clear()
        if project.status != "ready":
            raise _Failure(f"indexing {project.root} {project.status}: {project.status_reason}")
        summary = _index_summary(args, project, time.perf_counter() - started)
    finally:
        project.close()
    if args.json:
        json.dump(summary, sys.stdout)
        sys.stdout.write("\n")
    else:
        from codelex.output import index_lines

        _write(index_lines(summary))
    return EXIT_FOUND


def _index_summary(args, project, elapsed: float) -> dict:
    """What ``codelex index`` did, as its JSON summary: the build, then the structure finished and the ranking's
    counts settled (each a failure when what it made could not be saved)."""
    from codelex.defaults import INDEX_FILE
    from codelex.output import report_data
    from codelex.render import display_path

    report = project.last_report
    if report is not None and report.save_error is not None:  # built, but nothing on disk: a failure
        raise _Failure(f"{report.save_error}; the {len(project.index):,} files indexed were not kept")
    structure_started = time.perf_counter()
    if not args.no_structure:
        project.wait_structure()  # `index` is the build command: it finishes the structure too
    structure = project.structure_status
    structure_s = time.perf_counter() - structure_started
    pending = project.settle_ranking()  # the import graph's counts for these files, saved for every surface
    if structure.get("save_error"):  # analyzed, but nothing on disk: a failure, as the word index's
        raise _Failure(f"{structure['save_error']}; the structure of the {len(project.index):,} files "
                       "indexed was not kept")
    index_file = project.index_dir / INDEX_FILE
    summary = {
        "root": display_path(str(project.root)), "index_dir": display_path(str(project.index_dir)),
        "mode": report.mode, "reason": report.reason, "files": len(project.index), "refreshed": report.refreshed,
        "added": report.added, "dropped": report.dropped, "skipped": dict(report.skipped),
        "pruned_dirs": dict(report.pruned_dirs), "truncated": report.truncated, "seconds": elapsed,
        "index_bytes": index_file.stat().st_size if index_file.is_file() else None,
        "structure": dict(structure, seconds=structure_s), "pending": list(pending), "report": report_data(report),
    }
    if args.json:
        summary["stale"] = project.check()["stale"]
    return summary


def _cmd_status(args) -> int:
    from codelex import server
    from codelex.output import check_data, status_lines

    held = getattr(args, "pool", None) and args.pool.held(_project_root(args).resolve(), _size_cap(args))
    project = held or _open_project(args)
    args.held = held
    try:
        info = project.check()
    finally:
        _release(args, project)
    if args.json:
        json.dump(check_data(info, str(project.root)), sys.stdout)
        sys.stdout.write("\n")
    else:
        _write(status_lines(info, str(project.root), server.freshness(project.root)))
    return EXIT_FOUND if info["indexed"] is not None else EXIT_NONE


def _cmd_docs(args) -> int:
    from codelex.docs import terms
    from codelex.output import docs_lines
    from codelex.render import echo_query

    _check_query(args.query, terms(args.query), why="only stop words or punctuation")
    root = _project_root(args)
    from codelex.project import refusal_reason

    refused = refusal_reason(root.resolve())
    if refused:
        raise _Failure(f"refusing to index {root.resolve()}: {refused}")
    language = args.language
    if args.deprecated_lang is not None:  # (--lang is a programming language everywhere else)
        print("codelex: warning: docs --lang is deprecated; use --language", file=sys.stderr)
        language = args.deprecated_lang
    started = time.perf_counter()
    pool = getattr(args, "pool", None)  # in the server: the root's docs kept in memory by the watcher's edits
    if pool is not None:
        index = pool.docs(root.resolve(), args.max_bytes)
    else:
        project = _open_project(args)  # (its documentation stage alone: no word index is opened)
        try:
            index = project.docs()
        finally:
            project.close()
    opened = time.perf_counter()
    # (docs are the project's whatever the current subdirectory; a --path given there is read from there)
    hits = index.search(args.query, args.limit, paths=_search_paths(args, scoped=False), language=language)
    searched = time.perf_counter()
    fmt = "json" if args.json else "text"
    _write(docs_lines(hits, fmt, query=args.query, sections=len(index), style=_style(args) if fmt == "text" else None,
                      language=index.language_of))
    if not args.json:
        from codelex.output import docs_scope_note

        note = docs_scope_note(index.languages, index.main_language, language, args.path,
                               remedy="--language TAG or --language all")
        if not hits:
            print(f'codelex: no documentation section matched "{echo_query(args.query)}"{note}; try other words, '
                  f"or `codelex search` for code", file=sys.stderr)
        elif not args.quiet:
            print(f"{len(hits)} of {len(index):,} sections{note}; docs loaded in {(opened - started) * 1e3:.0f} ms, "
                  f"query {(searched - opened) * 1e3:.2f} ms", file=sys.stderr)
    return EXIT_FOUND if hits else EXIT_NONE


def _structure_project(args, file_arg: str):
    """(project, FILE relative to its root) for the outline and show commands (no index is built).

    FILE is placed under the root by the one containment rule
    (:func:`codelex.safefs.contained_relative`, lexical, never following a
    link), as MCP's tools place theirs; the project then opens it without
    following one.
    """
    from codelex.project import refusal_reason
    from codelex.render import parse_display_path
    from codelex.safefs import contained_relative

    root = _project_root(args)
    here = getattr(args, "cwd", None) or os.getcwd()
    path = file_arg
    if not os.path.lexists(os.path.join(here, path)) and os.path.lexists(os.path.join(here, parse_display_path(path))):
        path = parse_display_path(file_arg)  # the escaped form codelex prints
    resolved_root = root.resolve()
    refused = refusal_reason(resolved_root)
    if refused:
        raise _Failure(f"refusing to index {resolved_root}: {refused}")
    rel = contained_relative(os.path.abspath(os.path.join(here, root)), os.path.join(here, path))
    return _project_for_command(args, resolved_root, build_structure=False), rel


def _project_for_command(args, root, **options):
    """The project a command that builds no index reads (``status``, ``outline``, ``show``): in the server, its
    warm, watched project of that root when it has one (nothing opened or waited for; asking opens none);
    else a new one, which :func:`_release` closes (never the server's)."""
    from codelex.project import Project

    pool = getattr(args, "pool", None)
    held = pool.held(root, _size_cap(args)) if pool is not None else None
    if held is not None:
        args.held = held
        return held
    try:
        return Project(root, **options, **_size_cap(args))
    except (OSError, ValueError) as exc:
        raise _Failure(str(exc)) from None


def _release(args, project) -> None:
    """Close a command's project unless it is the server's (kept warm for the next command)."""
    if getattr(args, "held", None) is not project:
        project.close()


def _cmd_outline(args) -> int:
    from codelex.output import outline_lines
    from codelex.render import display_path

    project, path = _structure_project(args, args.file)
    try:
        outline = project.outline(path)
    finally:
        _release(args, project)
    if not args.json and not outline.available:
        raise _Failure(f"no outline for {display_path(outline.path)}: {outline.reason}")
    _write(outline_lines(outline, "json" if args.json else "text", style=None if args.json else _style(args)))
    return EXIT_FOUND if outline.definitions else EXIT_NONE


def _cmd_show(args) -> int:
    from codelex.output import overloads_note, scoped_path, source_lines

    file_arg, sep, symbol = args.target.rpartition(":")
    if not sep or not file_arg or not symbol:
        raise _Failure(f"expected FILE:SYMBOL, not {args.target!r}")
    import dataclasses

    project, path = _structure_project(args, file_arg)
    try:
        source = project.read_symbol(path, symbol, line=args.line)
        root = str(project.root)
    finally:
        _release(args, project)
    # Its heading names the file as search does: from the current directory (issue 33: root-relative).
    source = dataclasses.replace(source, path=scoped_path(root, getattr(args, "scope", None), source.path))
    _write(source_lines(source, style=_style(args)))
    note = overloads_note(source, "--line N to read one")
    if note and not getattr(args, "quiet", False):
        print(f"codelex: {note}", file=sys.stderr)
    return EXIT_FOUND


def _code_embedder(args):
    """The embedder spec of ``code`` and ``related``: ``--lexical`` (none), ``--embedder``, else the client's
    ``$CODELEX_EMBEDDER`` when served (the server's own environment is not the client's), else None (the
    project's configuration, else the default).  A relative model folder is the client's directory's."""
    if getattr(args, "lexical", False):
        return False
    spec = args.embedder
    served = getattr(args, "pool", None) is not None
    if spec is None and served:
        spec = getattr(args, "client_embedder", None) or None
    cwd = getattr(args, "cwd", None)
    if isinstance(spec, str) and cwd:
        kind, sep, rest = spec.partition(":")
        if sep and kind in ("st", "sentence-transformers", "model2vec") and rest and not os.path.isabs(rest):
            spec = f"{kind}:{os.path.join(cwd, rest)}"
    return spec


def _print_code_result(result, args) -> None:
    """A chunks answer (``code``, ``related``) on standard output (:func:`codelex.output.code_lines`)."""
    from codelex.output import code_lines

    _write(code_lines(result, "json" if args.json else "text", style=None if args.json else _style(args)))


def _embed_progress(args):
    """How far the embedding of ``--wait`` is (neither ``--json`` nor ``-q``): a bar on a terminal, else a plain
    line now and then (:func:`codelex.cli_common.progress_for`); on this process's stderr, or, in the server,
    on the client's (the heartbeats carry it: :func:`run_served`)."""
    if not args.wait or args.json or args.quiet:
        return None
    stream = getattr(args, "progress_stream", None)
    if stream is not None:
        return _progress_for(_EmbedProgress, stream, getattr(args, "stderr_tty", False))
    return _progress_for(_EmbedProgress, sys.stderr, sys.stderr.isatty())


def _code_project(args):
    """The project ``code`` and ``related`` work on, its chunks ready: the server's warm one, else opened here.

    In-process, nothing is left running when the command ends: the model loads only when the answer needs
    it (:meth:`codelex.Project.code_search` with ``background=False``), and embedding happens only with
    ``--wait``, in this thread.
    """
    if args.quiet:
        _quiet_libraries()
    pool = getattr(args, "pool", None)
    project = _pooled(args, pool) if pool is not None else _open_ready(args, None)
    try:
        project.prepare_code_search()  # the chunks (built in the background otherwise)
    except BaseException:
        if pool is None:
            project.close()
        raise
    return project, pool is not None


def _close_one_shot(project) -> None:
    """Close a one-shot command's project, and stop the thread a model library left behind: tqdm starts a
    monitor thread with its first bar, even a disabled one (model2vec makes one per encode call)."""
    project.close()
    tqdm = sys.modules.get("tqdm")
    monitor = getattr(getattr(tqdm, "tqdm", None), "monitor", None)
    if monitor is not None:
        try:
            monitor.exit()
        except Exception:  # (a library's internals: never the command's failure)
            pass


def _cmd_code(args) -> int:
    from codelex.query import SearchOptions, parse_request
    from codelex.render import display_text

    _check_query(args.query)
    progress = _embed_progress(args)
    project, served = _code_project(args)
    try:
        # (before any embedding, which --wait does first: minutes for a large tree)
        _check_words(args.query, parse_request(args.query, SearchOptions(paths=args.path or None, lang=args.lang)))
        # In the server the model stays loaded and missing vectors are embedded in its background; a one-shot
        # process (background=False) starts nothing that would outlive it.
        result = project.code_search(args.query, alternatives=args.alt or (), limit=args.limit,
                                     per_file=args.per_file, total_lines=args.lines, fusion=args.fusion,
                                     embedder=_code_embedder(args), paths=args.path or None, lang=args.lang,
                                     wait=args.wait, progress=progress, background=served)
        if progress:
            progress.clear()
        _print_code_result(result, args)
        if not args.json and not args.quiet:
            note = f"{len(result.hits)} chunk(s) of {result.chunks:,}; {display_text(result.hint or result.mode)}"
            if result.mode == "lexical" and result.hint and not args.lexical and not args.wait \
                    and "embed_limit" not in result.hint:  # (--wait given, or the cap: waiting changes nothing)
                note += " (`codelex code --wait` embeds every chunk now)"
            print(note, file=sys.stderr)
    finally:
        if not served:
            _close_one_shot(project)
    if not result.available:
        raise _Failure(result.hint or "not available")
    return EXIT_FOUND if result.hits else EXIT_NONE


def _cmd_related(args) -> int:
    file_arg, sep, line = args.target.rpartition(":")
    if not sep or not file_arg or not line.isdigit() or int(line) < 1:
        raise _Failure(f"expected FILE:LINE, not {args.target!r}")
    progress = _embed_progress(args)
    project, served = _code_project(args)
    try:
        here = Path(getattr(args, "cwd", None) or os.getcwd())
        path = here / file_arg
        result = project.find_related(path.resolve() if path.exists() else file_arg, int(line), limit=args.limit,
                                      same_language=not args.any_language, embedder=_code_embedder(args),
                                      wait=args.wait,
                                      progress=progress, background=served)
        if progress:
            progress.clear()
        if not result.available:
            why = result.hint or "the chunks are not embedded yet"
            raise _Failure(why if args.wait else f"{why} (`codelex related --wait` embeds them first)")
        _print_code_result(result, args)
    finally:
        if not served:
            _close_one_shot(project)
    return EXIT_FOUND if result.hits else EXIT_NONE


def _cmd_serve(args) -> int:
    from codelex import server
    from codelex.defaults import VERSION

    if not server.server_enabled():
        raise _Failure("the server needs Unix sockets (POSIX), and CODELEX_NO_SERVER unset")
    if args.stop or args.status:
        try:
            answer = server.request({"version": VERSION, "op": "stop" if args.stop else "ping"}, timeout=5)
        except server.Unresponsive as exc:
            pid = server.holder_pid()
            raise _Failure(f"{exc}: a server{f' (pid {pid})' if pid and pid > 0 else ''} holds the socket but "
                           f"does not answer (stopped?); `kill` it to start another") from None
        if answer is None:
            pid = server.holder_pid()
            if pid is not None:
                raise _Failure(f"a server{f' (pid {pid})' if pid > 0 else ''} holds the socket but does not answer")
            print("codelex: no server is running", file=sys.stderr)
            return EXIT_NONE
        if args.status:
            json.dump({k: answer[k] for k in ("pid", "python", "prefix", "install", "requests", "roots", "watch")
                       if k in answer}, sys.stdout)
            sys.stdout.write("\n")
        return EXIT_FOUND
    _quiet_libraries()  # a model library's bar would land in the answer of the request that loads the model
    from codelex.defaults import EMBEDDER_ENV

    os.environ.pop(EMBEDDER_ENV, None)  # each client's own $CODELEX_EMBEDDER comes with its request
    return EXIT_FOUND if server.serve(run_served, args.idle_timeout) == 0 else EXIT_NONE


def serve_main() -> None:
    """The entry point of a server started on demand (:func:`codelex.server.spawn_server`)."""
    sys.exit(main(["serve"]))


def main(argv: Sequence[str] | None = None, *, served_tried: bool = False) -> int:
    """Run a ``codelex`` command line in-process (after :mod:`codelex._launch` found no server for it,
    when ``served_tried``); returns the exit status."""
    sys.unraisablehook = _interrupt_again
    for stream in (sys.stdout, sys.stderr):  # a stray lone surrogate must never crash a write
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    parser = build_parser()
    raw_argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(parser, raw_argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if _bad_max_bytes(args):
        return EXIT_ERROR
    from codelex import server

    if args.command in server.SERVED_COMMANDS and not args.debug:
        if server.server_enabled():
            status = None if served_tried else server.run_remote(raw_argv)
            if status is not None:
                return status
            if server.socket_path() is not None and server.holder_pid() is None:
                server.spawn_server()  # for the next command; this one works in-process
    return _dispatch(args)


@functools.cache
def _served_parser() -> argparse.ArgumentParser:
    """The server's parser, built once (argparse takes about 2 ms to build it, half a request's time)."""
    return build_parser()


def run_served(argv: list[str], *, cwd: str, tty: bool, env: dict, pool, stderr_tty: bool = False,
               progress_stream=None) -> int:
    """Run a client's command line in the server (its output goes to the current sys.stdout/stderr).

    ``stderr_tty`` says whether the client's stderr is a terminal; a progress bar (``code --wait``) is then
    drawn on ``progress_stream``, which the server's heartbeats carry to the client.
    """
    args = parse(_served_parser(), argv, in_process=False)
    from codelex.server import SERVED_COMMANDS

    if args.command not in SERVED_COMMANDS:
        print(f"codelex: the server does not run `{args.command}`", file=sys.stderr)
        return EXIT_ERROR
    if _bad_max_bytes(args):
        return EXIT_ERROR
    args.cwd, args.pool = cwd, pool
    args.stderr_tty, args.progress_stream = stderr_tty, progress_stream
    args.client_embedder = env.get("CODELEX_EMBEDDER")
    if getattr(args, "color", None) == "auto":
        args.color = "always" if tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb" else "never"
    return _dispatch(args)


#: What each command of :func:`codelex.cli_parser.build_parser` runs (its ``func``).
COMMANDS = {
    "search": _cmd_search, "index": _cmd_index, "status": _cmd_status, "docs": _cmd_docs, "outline": _cmd_outline,
    "show": _cmd_show, "code": _cmd_code, "related": _cmd_related, "serve": _cmd_serve, "mcp": cmd_mcp,
    "mcp_install": cmd_mcp_install, "mcp_uninstall": cmd_mcp_uninstall,
    "cluster_index": cmd_cluster_index, "cluster_serve": cmd_cluster_serve, "cluster_search": cmd_cluster_search,
}


def _dispatch(args) -> int:
    from codelex.errors import CodelexError

    try:
        return COMMANDS[args.func](args)
    except KeyboardInterrupt:
        print("\ncodelex: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `codelex search x | head -1`: the reader has gone; quietly, as rg
        from codelex.server import quiet_stdout

        quiet_stdout()
        return EXIT_FOUND
    except (_Failure, CodelexError, OSError, ValueError, TypeError, LookupError) as exc:
        if args.debug:
            raise
        from codelex.render import error_text

        print(f"codelex: {error_text(exc)}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
