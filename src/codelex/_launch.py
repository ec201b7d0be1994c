"""The ``codelex`` command's entry point: a served command goes straight to the server.

Only the standard library's socket and json load before a served command
(``codelex search``) is answered by a running server (:mod:`codelex.server`);
anything else, or no usable server, goes on to :func:`codelex.cli.main`,
which parses and validates everything and works in-process.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``codelex`` console script; returns the exit status."""
    from codelex import server

    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in server.SERVED_COMMANDS and "--debug" not in args \
            and not any(a in ("-h", "--help") for a in args):
        if server.server_enabled():
            status = server.run_remote(args)
            if status is not None:
                return status
    from codelex.cli import main as cli_main

    return cli_main(args, served_tried=True)
