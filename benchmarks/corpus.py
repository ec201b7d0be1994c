"""Benchmark corpora: the stdlib, the Linux kernel, and synthetic code.

Each corpus is materialized once as a directory holding exactly the files
every contender indexes (so that ripgrep scans the same set), plus a
``files.json`` manifest, under ``$CODELEX_BENCH_DIR`` (default
``~/.cache/codelex-bench``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))


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


def prepare_kernel() -> Path:
    """The Linux 6.1 tree from Debian's linux-source-6.1, fetched and unpacked on first use.

    Debian appends ``/*`` and ``!/debian/`` to the top-level ``.gitignore``
    (its packaging repository ignores the upstream tree); those two lines are
    removed so that the tree reads as an upstream checkout.
    """
    dest = BENCH_DIR / "kernel"
    tree = dest / "linux-source-6.1"
    if tree.exists():
        return tree
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", "linux-source-6.1"], cwd=dest, check=True)
    deb = next(dest.glob("linux-source-6.1_*.deb"))
    subprocess.run(f"dpkg-deb --fsys-tarfile {deb.name} | tar -x --wildcards '*.tar.xz'", shell=True, cwd=dest,
                   check=True)
    subprocess.run(["tar", "-xJf", "usr/src/linux-source-6.1.tar.xz"], cwd=dest, check=True)
    ignore = tree / ".gitignore"
    debian = ("# Debian packaging: ignore everything at the top level, since it isn't\n"
              "# included in our repository\n#\n/*\n!/debian/\n")
    ignore.write_text(ignore.read_text().replace(debian, ""))
    shutil.rmtree(dest / "usr")
    deb.unlink()
    return tree


# --- synthetic code ------------------------------------------------------------------

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "ber", "con", "dat", "fig", "get", "han",
              "jet", "kin", "lex", "mod", "nod", "par", "que", "ren", "set", "tok", "ush", "val", "wid", "yel"]
_KEYWORDS = ["def", "return", "if", "for", "in", "class", "import", "self", "None", "True", "while", "else"]


def write_synthetic(directory: Path, n_files: int, seed: int = 7) -> list[str]:
    """n_files code-like files whose identifiers follow a Zipf law (deterministic)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_words = 20_000
    words = ["".join(rng.choice(_SYLLABLES, size=rng.integers(1, 4))) for _ in range(n_words)]
    n_idents = 200_000
    parts = rng.integers(0, n_words, size=(n_idents, 3))
    shapes = rng.integers(0, 3, size=n_idents)
    lengths = rng.integers(1, 4, size=n_idents)

    def ident(i: int) -> str:
        ws = [words[j] for j in parts[i, : lengths[i]]]
        if shapes[i] == 0:
            return "_".join(ws)
        if shapes[i] == 1:
            return ws[0] + "".join(w.capitalize() for w in ws[1:])
        return "".join(w.capitalize() for w in ws)

    exts = [".py", ".ts", ".go", ".rs", ".java"]
    names = [ident(i) for i in range(n_idents)]  # the same strings, built once
    paths = []
    for f in range(n_files):
        rel = f"pkg{f // 1000:04d}/mod{f:07d}{exts[f % len(exts)]}"
        n_lines = int(rng.integers(10, 120))
        ids = np.minimum(rng.zipf(1.15, size=n_lines * 5), n_idents) - 1
        lines = []
        for li in range(n_lines):
            toks = [names[i] for i in ids[li * 5: li * 5 + int(rng.integers(2, 6))].tolist()]
            kw = _KEYWORDS[li % len(_KEYWORDS)]
            lines.append(f"    {kw} {toks[0]}({', '.join(toks[1:])})")
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        paths.append(rel)
    return paths


# --- materialization -------------------------------------------------------------------


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def materialize(name: str) -> tuple[Path, list[str]]:
    """``(directory, relative paths)`` of a corpus: ``stdlib``, ``linux`` or ``synthetic:N``."""
    if name == "stdlib":
        tag = f"stdlib-{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    elif name == "linux":
        tag = "linux-6.1"
    elif name.startswith("synthetic:"):
        tag = f"synthetic-{int(name.split(':', 1)[1])}"
    else:
        raise ValueError(f"unknown corpus {name!r}: stdlib, linux or synthetic:N")
    directory = BENCH_DIR / "corpora" / tag
    manifest = directory.parent / f"{directory.name}.files.json"
    if manifest.exists():
        return directory, json.loads(manifest.read_text())
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    if name == "stdlib":
        src = Path(sysconfig.get_paths()["stdlib"])
        paths = []
        for p in stdlib_files():
            rel = p.relative_to(src).as_posix()
            _link_or_copy(p, directory / rel)
            paths.append(rel)
    elif name == "linux":
        from codelex.ingest import Document, list_files, read_file

        tree = prepare_kernel()
        paths = []
        for f in list_files(tree).files:  # what codelex indexes: admitted paths whose contents pass too
            if isinstance(read_file(str(tree), f.path, 512 * 1024), Document):
                _link_or_copy(tree / f.path, directory / f.path)
                paths.append(f.path)
    else:
        paths = write_synthetic(directory, int(name.split(":", 1)[1]))
    manifest.write_text(json.dumps(paths))
    return directory, paths
