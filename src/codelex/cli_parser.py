"""The ``codelex`` command line's grammar: commands, options, help texts and usage errors (argparse).

:func:`build_parser` is the whole table; each command's ``func`` is its name in
:data:`codelex.cli.COMMANDS`, which runs it.  Kept apart so that the grammar
reads as one table and the command line's module holds only what commands do.
"""

from __future__ import annotations

import argparse
import re

from codelex.defaults import EXIT_ERROR, FILTER_KEYS, SHARD_FILTER_KEY

__all__ = ["PLACEHOLDERS", "HelpFormatter", "Parser", "add_color", "add_mcp_install", "build_parser", "examples",
           "parse", "positive_int", "protect_negations"]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but a text written with line breaks (an ``examples:`` epilog, a description laid out by
    hand) is kept as written; one without is wrapped to the terminal as usual."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "\n".join(indent + line if line else line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def examples(*lines: str) -> str:
    """A command's ``examples:`` epilog (as ripgrep's): real command lines, one a line."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line on stderr (exit status 2), like every other error; help laid out by
    :class:`HelpFormatter` (a command's examples as written)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        from codelex.render import display_text

        for placeholder, original in PLACEHOLDERS.items():
            message = message.replace(placeholder, original)
        self.exit(EXIT_ERROR, f"codelex: {display_text(message)} (see `{self.prog} --help`)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


#: The longest deadline a cluster search takes (seconds): every wait has a bound.
MAX_DEADLINE_S = 600.0


def deadline_seconds(text: str) -> float:
    """A finite number of seconds above 0 and at most :data:`MAX_DEADLINE_S` (never ``inf`` nor ``nan``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_DEADLINE_S:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_DEADLINE_S:g} seconds, not {text!r}")
    return value


# A query argument that is only a negated filter (``-file:test``) is the
# query, not an option: argparse would take it for an unknown flag.
_NEGATED_FILTER = re.compile(r"-(?:" + "|".join((*FILTER_KEYS, SHARD_FILTER_KEY)) + r"):", re.IGNORECASE)
_QUERY_COMMANDS = ("search", "docs", "code")


def protect_negations(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """Replace query arguments that start with ``-KEY:`` by placeholders argparse takes as positional."""
    if not any(a in _QUERY_COMMANDS for a in argv):
        return argv, {}
    out, originals = [], {}
    for i, arg in enumerate(argv):
        if _NEGATED_FILTER.match(arg) and (i == 0 or argv[i - 1] not in _VALUE_OPTIONS) and "--" not in argv[:i]:
            placeholder = f"\x00query{len(originals)}"
            originals[placeholder] = arg
            out.append(placeholder)
        else:
            out.append(arg)
    return out, originals


PLACEHOLDERS: dict[str, str] = {}  # placeholder -> original argument, for error messages

# Options that take a value (an argument right after one of these is its value, never a query).
_VALUE_OPTIONS = frozenset({"--root", "--max-bytes", "-n", "--limit", "--lang", "--path", "--color", "--alt",
                            "--embedder", "--fusion", "--per-file", "--lines", "--address", "--store", "--language",
                            "--deadline", "--name", "--actors", "--actor-cpus", "--http",
                            "--http-host"})


def add_color(parser: argparse.ArgumentParser) -> None:
    """``--color auto|always|never``, for a command that prints a listing (:func:`codelex.output.use_colour`)."""
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the listing: auto (on a terminal, unless $NO_COLOR is set; default), always, "
                             "never")


def build_parser() -> argparse.ArgumentParser:
    """The command line's grammar: every command, its options and help; ``func`` names the command run."""
    from codelex.defaults import DEFAULT_MAX_BYTES, DEFAULT_RANKING, RANKINGS, VERSION

    parser = Parser(
        prog="codelex",
        description="Rank the files of a codebase for a query (identifier-aware BM25, kept fresh on disk).",
        epilog=examples('codelex search "parse config file"', 'codelex code "retry a failed request with backoff"',
                        'codelex docs "how do I configure the cache"', "codelex search --help"),
    )
    parser.add_argument("--version", action="version", version=f"codelex {VERSION}",
                        help="print codelex's version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                help="what to do (`codelex COMMAND --help` for its options and examples)")

    common = Parser(add_help=False)
    common.add_argument("--root", default=None,
                        help="the project directory (default: the nearest directory up from here holding an "
                             "index, else the git work tree's root, else .)")
    common.add_argument("--max-bytes", type=int, default=None, metavar="N",
                        help=f"skip files larger than N bytes (default: the project's max_bytes setting, else "
                             f"{DEFAULT_MAX_BYTES})")
    # Accepted after the command too; SUPPRESS keeps a --debug given before it.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")

    s = sub.add_parser("search", parents=[common], help="rank files for a query",
                       description="Rank files for QUERY. Inline filters: lang:KIND, file:TEXT (a substring of "
                                   "the path), path:GLOB (a glob, or a directory and all under it), ext:EXT, "
                                   "negated with a leading '-' (-path:tests).",
                       epilog=examples('codelex search "parse config file"',
                                       'codelex search "lang:python -path:tests authenticate user" -n 5',
                                       "codelex search retry_backoff --path 'src/**' -l",
                                       'codelex search "http handler" --json'))
    s.add_argument("query", help="the words to look for, with any inline filters (quote it)")
    s.add_argument("-n", "--limit", type=positive_int, default=10, help="number of results (default: 10)")
    s.add_argument("--lang", help="only files of this kind (see codelex.KINDS)")
    s.add_argument("--path", action="append", metavar="GLOB", help="only paths matching GLOB (repeatable)")
    out = s.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON document")
    out.add_argument("--jsonl", action="store_true", help="print one JSON object per hit, one per line")
    out.add_argument("-l", "--files-only", action="store_true", help="print only the paths, one per line")
    out.add_argument("--vimgrep", action="store_true", help="print path:line:column:text, one hit per line")
    s.add_argument("-w", "--whole-project", action="store_true",
                   help="from a subdirectory, search the whole project (default: that subtree only)")
    s.add_argument("--no-priors", action="store_true",
                   help="do not demote tests, vendored code and docs, nor boost much-imported files")
    s.add_argument("--no-import-graph", action="store_true",
                   help="do not boost files that many others import (the centrality prior)")
    s.add_argument("--ranking", choices=RANKINGS, default=DEFAULT_RANKING,
                   help="code: BM25F over bodies, paths and definitions (default); classic: BM25 over bodies")
    add_color(s)
    s.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    s.set_defaults(func="search")

    i = sub.add_parser("index", parents=[common], help="build or refresh the index and summarize it",
                       description="Build the project's index under .codelex/ (or refresh it: only changed files "
                                   "are read again), wait for the structure (definitions, chunks), and say what "
                                   "was indexed and skipped. Other commands build it on demand; this one does it "
                                   "now.",
                       epilog=examples("codelex index", "codelex index --root ~/src/project --rebuild",
                                       "codelex index --verify", "codelex index --json"))
    i.add_argument("--rebuild", action="store_true", help="build from scratch")
    i.add_argument("--no-structure", action="store_true",
                   help="do not wait for the structure (definitions, chunks) to be analyzed")
    i.add_argument("--json", action="store_true", help="print the summary as one JSON document")
    i.add_argument("--verify", action="store_true",
                   help="check every checksum of the saved index now (loading checks large arrays lazily)")
    i.set_defaults(func="index")

    st = sub.add_parser("status", parents=[common], help="where the index is, its age, whether it is stale",
                        description="Say where the project's index is, how many files it holds, how old it is, "
                                    "whether files changed since (stale), and who keeps it fresh (the codelex "
                                    "server's watcher, or a check at each command). Builds nothing. Exit 1 when "
                                    "there is no index yet.",
                        epilog=examples("codelex status", "codelex status --root ~/src/project --json"))
    st.add_argument("--json", action="store_true", help="print the status as one JSON document")
    st.set_defaults(func="status")

    d = sub.add_parser("docs", parents=[common], help="rank documentation sections for a question",
                       description="Rank the sections of the project's documentation (.md, .mdx, .rst, docs/*.txt).",
                       epilog=examples('codelex docs "how do I configure the cache"',
                                       'codelex docs "installation" --language de',
                                       'codelex docs "release process" --path docs/ --json'))
    d.add_argument("query", help="the question or words to look for (quote it)")
    d.add_argument("-n", "--limit", type=positive_int, default=5, help="number of sections (default: 5)")
    d.add_argument("--path", action="append", metavar="GLOB",
                   help="only documents matching this glob or under this directory (repeatable)")
    human = d.add_mutually_exclusive_group()
    human.add_argument("--language", metavar="TAG",
                       help="only documents in this human language (e.g. de, pt-br) and neutral ones; 'all' for "
                            "every language (default: the project's main language when its docs have "
                            "translations)")
    human.add_argument("--lang", metavar="TAG", dest="deprecated_lang",
                       help="deprecated: use --language (--lang is a programming language in search and code)")
    d.add_argument("--json", action="store_true", help="print one JSON document")
    add_color(d)
    d.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    d.set_defaults(func="docs")

    o = sub.add_parser("outline", parents=[common], help="the definitions of a file, nested",
                       description="List the definitions of FILE (functions, methods, classes, types, constants) "
                                   "with their kinds and line spans.",
                       epilog=examples("codelex outline src/app/server.py", "codelex outline src/lib.rs --json"))
    o.add_argument("file", metavar="FILE", help="the source file (a path from the current directory)")
    o.add_argument("--json", action="store_true", help="print one JSON document")
    add_color(o)
    o.set_defaults(func="outline")

    sh = sub.add_parser("show", parents=[common], help="the source of one definition, with line numbers",
                        description="Print the source of SYMBOL in FILE (a qualified name such as Outer.method, "
                                    "or a bare name), decorators and doc comment included.",
                        epilog=examples("codelex show src/app/server.py:Server.handle_request",
                                        "codelex show src/util.py:parse --line 120"))
    sh.add_argument("target", metavar="FILE:SYMBOL", help="the file and the definition's name, e.g. src/a.py:Cls.run")
    sh.add_argument("--line", type=positive_int, help="pick one of several definitions of the same name")
    add_color(sh)
    sh.set_defaults(func="show")

    c = sub.add_parser("code", parents=[common], help="function-sized chunks for a query (hybrid: vectors + words)",
                       description="Rank the project's chunks (functions, methods, classes) for QUERY by fusing an "
                                   "embedding ranking with the lexical one. Until every chunk is embedded the "
                                   "answer is lexical; --wait embeds them first, saying how far it is.",
                       epilog=examples('codelex code "retry a failed HTTP request with backoff"',
                                       'codelex code "where is the config file parsed" --alt "load settings" -n 5',
                                       'codelex code "token refresh" --wait --json',
                                       "codelex code parse_config --lexical --lang python"))
    c.add_argument("query", help="what the code does, in words or identifiers (quote it)")
    c.add_argument("-n", "--limit", type=positive_int, default=8, help="number of chunks (default: 8)")
    c.add_argument("--per-file", type=positive_int, default=2, help="chunks per file (default: 2)")
    c.add_argument("--lines", type=positive_int, default=400, help="lines in all excerpts (default: 400)")
    c.add_argument("--alt", action="append", metavar="PHRASE", help="another phrasing of the query (repeatable)")
    c.add_argument("--embedder", metavar="SPEC", help="minilm-int8 (default), minilm, onnx:PATH, st:PATH or model2vec:PATH")
    c.add_argument("--lexical", action="store_true", help="no embeddings: the lexical ranking only")
    c.add_argument("--fusion", choices=("adaptive", "shape", "original"), default=None,
                   help="how the embedding and word rankings are mixed. adaptive (default): weighted by the "
                        "kind of query (prose or identifiers) and by how far the two rankings agree; shape: by the "
                        "kind of query alone; original: the same fixed mix for every query, mostly the embedding "
                        "ranking, over every chunk")
    c.add_argument("--wait", action="store_true", help="embed every chunk first")
    c.add_argument("--lang", help="only files of this kind (see codelex.KINDS)")
    c.add_argument("--path", action="append", metavar="GLOB", help="only paths matching GLOB (repeatable)")
    c.add_argument("--json", action="store_true", help="print one JSON document")
    add_color(c)
    c.add_argument("-q", "--quiet", action="store_true",
                   help="no summary line nor progress on stderr (the model libraries' bars included)")
    c.set_defaults(func="code")

    r = sub.add_parser("related", parents=[common], help="the chunks most like the one at FILE:LINE",
                       description="The chunks nearest in embedding space to the chunk at FILE:LINE "
                                   "(same language unless --any-language).",
                       epilog=examples("codelex related src/app/server.py:42",
                                       "codelex related src/auth.py:10 --any-language -n 5",
                                       "codelex related src/auth.py:10 --wait --json"))
    r.add_argument("target", metavar="FILE:LINE", help="a line inside the chunk to start from, e.g. src/auth.py:42")
    r.add_argument("-n", "--limit", type=positive_int, default=8, help="number of chunks (default: 8)")
    r.add_argument("--embedder", metavar="SPEC",
                   help="minilm-int8 (default), minilm, onnx:PATH, st:PATH or model2vec:PATH")
    r.add_argument("--any-language", action="store_true", help="chunks of every language (default: the same one)")
    r.add_argument("--wait", action="store_true", help="embed every chunk first")
    r.add_argument("--json", action="store_true", help="print one JSON document")
    add_color(r)
    r.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr (the model libraries' bars "
                                                              "included)")
    r.set_defaults(func="related")

    sv = sub.add_parser("serve", help="keep warm, watched indexes for one-shot commands (started on demand)",
                        description="A per-user background server: `codelex search`, `code` and `related` talk to "
                                    "it over a Unix socket (owner-only) and fall back to working in-process when it "
                                    "is absent. "
                                    "Started on demand; exits when idle. CODELEX_NO_SERVER=1 disables it.",
                        epilog=examples("codelex serve --status", "codelex serve --stop",
                                        "codelex serve --idle-timeout 3600"))
    sv.add_argument("--idle-timeout", type=float, default=900.0, metavar="S",
                    help="exit after S seconds without a request (default: 900)")
    sv.add_argument("--stop", action="store_true", help="ask the running server to exit")
    sv.add_argument("--status", action="store_true", help="print the running server's pid and roots")
    sv.set_defaults(func="serve")

    cl = sub.add_parser("cluster", help="build and serve sharded indexes on Ray (pip install 'codelex[ray]')",
                        description="One shard per repository or subtree, built as Ray tasks into a shard store "
                                    "(an fsspec URL: a directory, NFS, s3://...), served by Ray actors.",
                        epilog=examples("codelex cluster index --store /mnt/shards api=~/src/api web=~/src/web",
                                        "codelex cluster serve --store /mnt/shards --http 8080",
                                        'codelex cluster search "connection pool timeout" --json'))
    csub = cl.add_subparsers(dest="cluster_command", metavar="COMMAND", required=True,
                             help="index, serve or search (`codelex cluster COMMAND --help`)")
    ray_opts = Parser(add_help=False)
    ray_opts.add_argument("--address", default=None,
                          help="the Ray cluster (auto, host:6379, ray://host:10001; default $RAY_ADDRESS)")
    ray_opts.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    ci = csub.add_parser("index", parents=[ray_opts], help="build one shard per unit as Ray tasks",
                         description="Build a shard per UNIT ([NAME=]PATH or a git URL on shared storage) into "
                                     "--store, skipping units whose content did not change. Exit 0 when every "
                                     "unit is in the store, 1 when some failed (named), 2 on bad input.",
                         epilog=examples("codelex cluster index --store /mnt/shards api=~/src/api web=~/src/web",
                                         "codelex cluster index --store s3://bucket/shards --address auto --prune "
                                         "api=/shared/api",
                                         "codelex cluster index --store /mnt/shards --force --json /shared/linux"))
    ci.add_argument("units", nargs="+", metavar="UNIT", help="[NAME=]PATH, or a git URL on shared storage")
    ci.add_argument("--store", required=True, metavar="URL", help="where shards go (every worker must reach it)")
    ci.add_argument("--retries", type=int, default=2, help="attempts after the first for a failed unit (default: 2)")
    ci.add_argument("--unit-timeout", type=float, default=6 * 3600.0, metavar="S",
                    help="cancel a unit's attempt after S seconds (default: 6 h)")
    ci.add_argument("--cpus-per-unit", type=positive_int, default=1, metavar="N",
                    help="CPUs (threads) each unit's build uses (default: 1)")
    ci.add_argument("--num-cpus", type=positive_int, default=None, metavar="N",
                    help="CPUs of the private local Ray started when no cluster is given")
    ci.add_argument("--force", action="store_true", help="rebuild every unit, changed or not")
    ci.add_argument("--prune", action="store_true", help="drop the manifest's units not named here")
    ci.add_argument("--json", action="store_true", help="print the build's report as one JSON document")
    ci.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    ci.set_defaults(func="cluster_index")
    cs = csub.add_parser("serve", parents=[ray_opts], help="load a store's shards into Ray actors (or reload)",
                         description="Start a detached coordinator that loads the shards of --store into actors "
                                     "(each shard on --replicas of them, placed by size) on a running Ray cluster. "
                                     "It replaces actors that die or hang and follows the store's new manifests "
                                     "(changed shards are replaced while serving); run again to follow one now. "
                                     "A serve that fails leaves nothing behind.",
                         epilog=examples("codelex cluster serve --store /mnt/shards --actors 4",
                                         "codelex cluster serve --store /mnt/shards --http 8080",
                                         "codelex cluster serve --status", "codelex cluster serve --stop"))
    cs.add_argument("--store", metavar="URL", help="the shard store built by `codelex cluster index`")
    cs.add_argument("--actors", type=positive_int, default=2, help="holder actors (default: 2)")
    cs.add_argument("--replicas", type=positive_int, default=2, metavar="N",
                    help="holders each shard is loaded on, placed apart (default: 2, at most --actors): a "
                         "query goes to another replica when one fails or is slow")
    cs.add_argument("--actor-cpus", type=float, default=0.0, metavar="N",
                    help="CPUs each actor reserves (default: 0, so builds still run beside it)")
    cs.add_argument("--name", default="codelex-coordinator", help="the coordinator's name (several stores)")
    cs.add_argument("--http", type=int, default=None, metavar="PORT",
                    help="also answer GET /search?q=QUERY on PORT (0: any free port)")
    cs.add_argument("--http-host", default="127.0.0.1", metavar="HOST",
                    help="the address the HTTP endpoint listens on (default: 127.0.0.1; it has no authentication)")
    cs.add_argument("--stop", action="store_true", help="stop the coordinator and its actors")
    cs.add_argument("--status", action="store_true", help="print the coordinator's shards and actors")
    cs.add_argument("--json", action="store_true", help="print the coordinator's status as one JSON document")
    cs.set_defaults(func="cluster_serve")
    cq = csub.add_parser("search", parents=[ray_opts], help="rank the served shards' files for QUERY",
                         description="Fan QUERY out to the served shards with the collection's statistics; a "
                                     "shard that no replica answers within --deadline is named as missing, and "
                                     "such a partial answer exits 3 unless --allow-partial. repo:NAME selects "
                                     "shards.",
                         epilog=examples('codelex cluster search "connection pool timeout"',
                                         'codelex cluster search "repo:api retry backoff" --deadline 2 --json',
                                         'codelex cluster search "parse config" --name other-store -n 20'))
    cq.add_argument("query", help="the words to look for, with any inline filters (quote it)")
    cq.add_argument("-n", "--limit", type=positive_int, default=10, help="number of results (default: 10)")
    cq.add_argument("--deadline", type=deadline_seconds, default=5.0, metavar="S",
                    help=f"seconds, above 0 and at most {MAX_DEADLINE_S:g} (default: 5)")
    cq.add_argument("--ranking", choices=RANKINGS, default=DEFAULT_RANKING,
                    help="code: BM25F over bodies, paths and definitions (default); classic: BM25 over bodies")
    cq.add_argument("--name", default="codelex-coordinator",
                    help="the coordinator to ask (`cluster serve --name`; default: codelex-coordinator)")
    cq.add_argument("--allow-partial", action="store_true",
                    help="exit 0 (or 1) on an answer some shards are missing from; by default such an answer "
                         "exits 3")
    cq.add_argument("--json", action="store_true", help="print one JSON document")
    cq.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    cq.set_defaults(func="cluster_search")

    m = sub.add_parser("mcp", help="run the MCP server on stdio",
                       description="Serve the project of the current directory, and the roots named with --root "
                                   "(or $CODELEX_MCP_ROOTS, os.pathsep-separated), to an MCP client on stdio; a "
                                   "tool's cwd must lie inside one of them.",
                       epilog=examples("codelex mcp", "codelex mcp --root ~/src/other-project",
                                       "codelex mcp install claude", "codelex mcp install --help"))
    m.add_argument("--root", action="append", metavar="DIR",
                   help="another project to serve (repeatable)")
    m.add_argument("--output-schemas", action="store_true",
                   help="publish each tool's answer schema (outputSchema) in the tool list, for clients that "
                        "check answers against it (off: it doubles the list an agent's context starts with)")
    m.set_defaults(func="mcp")
    add_mcp_install(m)
    return parser


def _mcp_client(text: str):
    """An MCP client's name or alias (``codelex mcp install CLIENT``): the :mod:`codelex.mcp_install` entry."""
    from codelex.errors import ClientConfigError
    from codelex.mcp_install import client_named

    try:
        return client_named(text)
    except ClientConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_mcp_install(mcp: argparse.ArgumentParser) -> None:
    """``codelex mcp install|uninstall CLIENT``: register (or remove) this installation's MCP server with a client;
    plain ``codelex mcp`` still serves."""
    from codelex.mcp_install import CLIENTS, SCOPES

    names = ", ".join(f"{c.name} ({c.title}{'; ' + ', '.join(c.aliases) if c.aliases else ''})" for c in CLIENTS)
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION",
                                 help="install or uninstall (without one, `codelex mcp` serves)")
    shared = Parser(add_help=False)
    shared.add_argument("client", type=_mcp_client, metavar="CLIENT", help=f"one of: {names}")
    shared.add_argument("--scope", choices=SCOPES, default=None,
                        help="user: every project (the user's configuration); project: the project of the "
                             "current directory (default: the client's usual one; Windsurf has user only)")
    shared.add_argument("--name", default="codelex", help="the server's name in the client's configuration "
                                                          "(default: codelex)")
    shared.add_argument("--force", action="store_true",
                        help="replace or remove the entry named --name even when it is not codelex's (another "
                             "server's; refused without --force)")
    shared.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    i = actions.add_parser(
        "install", parents=[shared], help="register this codelex's MCP server with an agent client",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Add codelex's MCP server to CLIENT's configuration file (or update the entry of the same "
                    "name), as\nthe client documents it. The command registered is this interpreter with "
                    "`-P -m codelex mcp`,\nso the client runs the codelex installed here. Other entries and the "
                    "rest of the file are kept\nexactly; a file codelex cannot edit safely is left alone and "
                    "the entry to add by hand is printed.",
        epilog=examples("codelex mcp install claude", "codelex mcp install vscode --scope project",
                        "codelex mcp install cursor --root ~/src/other-project --print"))
    i.add_argument("--root", action="append", metavar="DIR", default=argparse.SUPPRESS,
                   help="another project for the server to serve (repeatable; passed on as `codelex mcp --root`)")
    i.add_argument("--print", action="store_true", dest="print_only",
                   help="print the configuration that would be written, write nothing")
    i.set_defaults(func="mcp_install")
    u = actions.add_parser(
        "uninstall", parents=[shared], help="remove codelex's MCP server from an agent client",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Remove the entry named --name (default: codelex) from CLIENT's configuration file; "
                    "nothing else\nchanges. Exit 1 when there was no such entry.",
        epilog=examples("codelex mcp uninstall claude --scope user", "codelex mcp uninstall cursor --name codelex-work"))
    u.set_defaults(func="mcp_uninstall")


def parse(parser: argparse.ArgumentParser, argv: list[str], *, in_process: bool = True) -> argparse.Namespace:
    """``argv`` parsed by ``parser``: a query that is only a negated filter (``-file:test``) is kept as the query
    (its usage errors quote it back only ``in_process``: the server's parser is shared by its clients)."""
    argv, originals = protect_negations(list(argv))
    if in_process:
        PLACEHOLDERS.update(originals)
    args = parser.parse_args(argv)
    if originals and isinstance(getattr(args, "query", None), str):
        args.query = originals.get(args.query, args.query)
    return args
