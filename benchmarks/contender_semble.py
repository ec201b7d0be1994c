"""semble (PyPI ``semble``, MIT) as a contender of the relevance benchmark, in its own venv.

The venv is made once (the only step that reaches PyPI)::

    python benchmarks/contender_semble.py --setup      # $CODELEX_BENCH_DIR/semble-venv, semble==0.7.0

Then :func:`semble_rankings` writes each corpus to a directory, runs
``benchmarks/semble_runner.py`` with that venv's interpreter (semble's own
index and ``search``; no model is downloaded: its lexical mode, alpha = 0,
weighs the vector half by zero) and returns its ranked chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(os.environ.get("CODELEX_BENCH_DIR", Path.home() / ".cache" / "codelex-bench"))
VENV = Path(os.environ.get("CODELEX_SEMBLE_VENV", BENCH_DIR / "semble-venv"))
VERSION = "0.7.0"
RUNNER = Path(__file__).with_name("semble_runner.py")


def python() -> Path | None:
    """semble's interpreter, or None when the venv was not made (``--setup``)."""
    exe = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return exe if exe.exists() else None


def setup() -> None:
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python()), "-m", "pip", "install", "-q", f"semble=={VERSION}"], check=True)


def write_corpus(docs, root: Path) -> None:
    for path, text in docs:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))


def semble_rankings(sets: dict[str, tuple[list, list[dict]]], *, top_k: int = 10, alpha: float = 0.0,
                    timeout: float = 3600.0) -> dict[str, dict] | None:
    """``{name: {"results": [[(path, start, end), ...] per query], "seconds_index", "seconds_search"}}``.

    None when semble's venv is missing.
    """
    exe = python()
    if exe is None:
        return None
    with tempfile.TemporaryDirectory(prefix="semble-contender-") as scratch:
        items = []
        for i, (name, (docs, queries)) in enumerate(sets.items()):
            root = Path(scratch) / f"set{i}"
            write_corpus(docs, root)
            items.append({"name": name, "root": str(root), "queries": [q["query"] for q in queries]})
        request, result = Path(scratch) / "request.json", Path(scratch) / "result.json"
        request.write_text(json.dumps({"sets": items, "top_k": top_k, "alpha": alpha}))
        subprocess.run([str(exe), str(RUNNER), str(request), str(result)], check=True, timeout=timeout,
                       cwd=scratch, env=dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false"))
        out = json.loads(result.read_text())["sets"]
    for entry in out.values():
        entry["results"] = [[tuple(r) for r in hits] for hits in entry["results"]]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", action="store_true", help="make the venv (pip install semble)")
    args = ap.parse_args(argv)
    if args.setup:
        setup()
    print(python() or "no semble venv: run with --setup")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
