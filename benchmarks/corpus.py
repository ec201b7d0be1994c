"""Benchmark corpora, read fully into memory before any timing."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path


def stdlib_files() -> list[Path]:
    """Every ``.py`` file under the running interpreter's stdlib, except site-packages."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        for name in sorted(filenames):
            if name.endswith(".py"):
                out.append(Path(dirpath) / name)
    return out


def stdlib_corpus() -> list[tuple[str, bytes]]:
    """``(relative path, bytes)`` for the stdlib corpus (1,790 files on 3.11.7)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in stdlib_files()]
