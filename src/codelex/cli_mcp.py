"""The ``codelex mcp`` commands: serve the MCP server on stdio, and register it with an agent client or remove
it (``install``/``uninstall``, :mod:`codelex.mcp_install`); the MCP server itself needs the ``mcp`` extra.
"""

from __future__ import annotations

import sys

from codelex.cli_common import Failure as _Failure
from codelex.defaults import EXIT_FOUND, EXIT_NONE

__all__ = ["cmd_mcp", "cmd_mcp_install", "cmd_mcp_uninstall"]


def cmd_mcp(args) -> int:
    try:
        from codelex.mcp_server import serve, serve_roots
    except ImportError as exc:
        raise _Failure(f"the MCP server needs the mcp extra: pip install 'codelex[mcp]' ({exc})") from None
    roots, problems = serve_roots(named=args.root or ())
    if problems:  # a root the user named that cannot be served: said now, not at the first tool call
        raise _Failure(f"cannot serve {problems[0]}")
    serve(roots, output_schemas=args.output_schemas)
    return EXIT_FOUND


def cmd_mcp_install(args) -> int:
    from codelex.mcp_install import install

    roots = getattr(args, "root", None) or ()
    change = _client_change(install, args, roots=roots, dry_run=args.print_only,
                            output_schemas=getattr(args, "output_schemas", False))
    if args.print_only:  # the entry on stdout (it can be pasted), where it would go on stderr
        verb = {"added": "would add", "updated": "would update", "unchanged": "already holds"}[change.action]
        print(f"codelex: {verb} MCP server {change.name!r} in {_where(change)}; nothing written", file=sys.stderr)
        sys.stdout.write(change.snippet)
        return EXIT_FOUND
    verb = {"added": "added", "updated": "updated", "unchanged": "already up to date:"}[change.action]
    print(f"codelex: {verb} MCP server {change.name!r} {'to' if change.action == 'added' else 'in'} "
          f"{_where(change)}")
    return EXIT_FOUND


def cmd_mcp_uninstall(args) -> int:
    from codelex.mcp_install import uninstall

    change = _client_change(uninstall, args)
    if change.action == "absent":
        print(f"codelex: no MCP server {change.name!r} in {_where(change)}", file=sys.stderr)
        return EXIT_NONE
    print(f"codelex: removed MCP server {change.name!r} from {_where(change)}")
    return EXIT_FOUND


def _where(change) -> str:
    from codelex.render import display_path

    return f"{display_path(str(change.path))} ({change.client.title}, {change.scope} scope)"


def _client_change(action, args, **options):
    """``action`` (install or uninstall) of args.client; a refusal that comes with the entry to add by hand
    prints it on stdout before the one-line error."""
    from codelex.errors import ClientConfigError

    try:
        return action(args.client, scope=args.scope, name=args.name, force=args.force, **options)
    except ClientConfigError as exc:
        if exc.snippet and action.__name__ == "install":
            sys.stdout.write(exc.snippet)
        raise
