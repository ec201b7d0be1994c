"""How long until a project is searchable in hybrid mode, from nothing (word index, structure, every vector).

    python benchmarks/hybrid_ready.py [SOURCE_DIR]   # default: a copy of the stdlib in $CODELEX_BENCH_DIR

Copies SOURCE_DIR to a temporary directory, opens it as a Project, waits for the structure, then
calls code_search(..., wait=True) (which embeds every chunk with the default embedder); then the
first hybrid answer after reopening. Takes tens of minutes with MiniLM on two cores.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import codelex


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    source = Path(argv[0]) if argv else Path(sysconfig.get_paths()["stdlib"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
        t0 = time.perf_counter()
        p = codelex.Project(root, use_git=False)
        p.open()
        t_index = time.perf_counter() - t0
        p.wait_structure()
        t_structure = time.perf_counter() - t0
        r = p.code_search("parse config file", wait=True)
        t_all = time.perf_counter() - t0
        p.close()
        t = time.perf_counter()
        p = codelex.Project(root, use_git=False)
        p.prepare_code_search()
        again = p.code_search("parse config file")
        t_reopen = time.perf_counter() - t
        p.close()
    print(f"{source}: word index {t_index:.1f} s, structure {t_structure:.1f} s, hybrid searchable "
          f"{t_all:.1f} s ({r.chunks:,} chunks, mode {r.mode}); reopened: first hybrid answer in "
          f"{t_reopen:.1f} s (mode {again.mode})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
