"""``python -m codelex QUERY [--root DIR]``: index a directory and rank its files.

An interim front end until the ``codelex`` command line lands: it lists the
files of a git work tree (``git ls-files``) or walks the directory, keeps
files of a known kind up to 512 KiB, builds the index in memory and prints the
best files with their best line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from codelex.errors import QueryError
from codelex.index import WordIndex
from codelex.kinds import kind_of

MAX_BYTES = 512 * 1024
_PRUNE = {".git", "node_modules", "build", "dist", "__pycache__", ".venv", "venv", ".tox", ".codelex", "target"}


def _list_files(root: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=True, timeout=60,
        ).stdout
        return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})
    except (OSError, subprocess.SubprocessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in _PRUNE)
            rel = Path(dirpath).relative_to(root)
            files.extend((rel / f).as_posix() for f in sorted(filenames))
        return files


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
    docs = []
    for rel in _list_files(root):
        if kind_of(rel) is None:
            continue
        path = root / rel
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        docs.append((rel, data))
    index = WordIndex.build(docs)
    t1 = time.perf_counter()
    try:
        hits = index.search(args.query, limit=args.limit)
    except QueryError as exc:
        print(f"codelex: {exc}", file=sys.stderr)
        return 2
    t2 = time.perf_counter()
    for rank, hit in enumerate(hits, 1):
        try:
            line = (root / hit.file).read_text("utf-8", "replace").splitlines()[hit.start_line - 1].strip()
        except (OSError, IndexError):
            line = ""
        print(f"{rank:>3}. {hit.file}:{hit.start_line}  score {hit.score:.3f}, {hit.hits} hit(s)  {line[:100]}")
    print(f"{len(index)} files indexed in {(t1 - t0) * 1e3:.0f} ms; query {(t2 - t1) * 1e6:.0f} µs", file=sys.stderr)
    return 0 if hits else 1


if __name__ == "__main__":
    sys.exit(main())
