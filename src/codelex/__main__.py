"""``python -m codelex QUERY [--root DIR]``: rank the files of a project for a query.

An interim front end until the ``codelex`` command line lands: it opens the
project (loading its saved index from ``<root>/.codelex`` and refreshing what
changed, or building it on first use) and prints the best files with their
best line.  Exit status: 0 with results, 1 without, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from codelex.errors import QueryError
from codelex.project import Project


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codelex", description=__doc__.splitlines()[0])
    parser.add_argument("query")
    parser.add_argument("--root", default=".", help="directory to index (default: .)")
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not root.is_dir():
        print(f"codelex: not a directory: {root}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    with Project(root) as project:
        project.open()
        t1 = time.perf_counter()
        if project.status != "ready":
            print(f"codelex: no index: {project.status} ({project._state.reason})", file=sys.stderr)
            return 2
        try:
            result = project.search(args.query, limit=args.limit)
        except QueryError as exc:
            print(f"codelex: {exc}", file=sys.stderr)
            return 2
        t2 = time.perf_counter()
        for rank, hit in enumerate(result.results, 1):
            try:
                text = (project.root / hit.file).read_text("utf-8", "replace").splitlines()[hit.start_line - 1]
            except (OSError, IndexError):
                text = ""
            print(f"{rank:>3}. {hit.file}:{hit.start_line}  score {hit.score:.3f}, {hit.hits} hit(s)  {text.strip()[:100]}")
        report = project.last_report
        how = f"{report.mode} ({report.reason})" if report.reason else report.mode
        print(f"{result.coverage.files} files; open {(t1 - t0) * 1e3:.0f} ms, {how}; "
              f"query {(t2 - t1) * 1e6:.0f} µs", file=sys.stderr)
        return 0 if result.results else 1


if __name__ == "__main__":
    sys.exit(main())
