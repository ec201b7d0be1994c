"""Structure stage benchmarks: parse-and-chunk throughput, stored size, and what it adds to builds and edits.

Usage::

    python benchmarks/structure_bench.py stdlib            # the CPython standard library
    python benchmarks/structure_bench.py kernel [--mb N]   # Linux 6.1's C sources (fetched once; see corpus.py)

Reported:

- throughput of :func:`codelex.structure.analyze` (parse, definitions and
  chunks) in one process, MB/s per core, with the definitions and chunks
  found and the statuses;
- the structure store's size on disk (``structure.clx``) against the word
  index's;
- a cold project build (walk, read, tokenize, save) on all cores, without
  and with the structure (the background build waited for), each in a fresh
  process, and the time until the word index answers in both cases;
- a per-edit update of a 50 KB file through ``Project.on_edit``: the
  synchronous cost with and without structure upkeep, and the time the
  background analysis of that file takes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import prepare_kernel  # noqa: E402
from project_bench import prepare_stdlib  # noqa: E402

_CHILD = r"""
import json, sys, time
import codelex
root, index_dir, structure = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
t = time.perf_counter()
p = codelex.Project(root, index_dir=index_dir, build_structure=structure)
p.open()
ready = time.perf_counter() - t
p.wait_structure()
total = time.perf_counter() - t
status = p.structure_status
p.close()
print(json.dumps({"index_ready_s": ready, "total_s": total, "structure": status}))
"""


def _corpus(name: str, mb: float | None) -> tuple[Path, list[Path]]:
    if name == "stdlib":
        root = Path(sysconfig.get_paths()["stdlib"])
        files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    else:
        root = prepare_kernel()
        files = sorted(p for p in root.rglob("*") if p.suffix in (".c", ".h") and p.is_file()
                       and not p.is_symlink())
    if mb is not None:
        out, total = [], 0
        for p in files:
            size = p.stat().st_size
            if total + size > mb * 1e6:
                break
            out.append(p)
            total += size
        files = out
    return root, files


def throughput(root: Path, files: list[Path]) -> dict:
    from codelex.structure import analyze

    data = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]
    nbytes = sum(len(d) for _, d in data)
    statuses: dict[str, int] = {}
    defs = chunks = 0
    t = time.perf_counter()
    for path, content in data:
        s = analyze(path, content)
        statuses[s.status] = statuses.get(s.status, 0) + 1
        defs += len(s.definitions)
        chunks += len(s.chunks)
    seconds = time.perf_counter() - t
    return {"files": len(data), "mb": nbytes / 1e6, "seconds": seconds, "mb_per_s": nbytes / 1e6 / seconds,
            "definitions": defs, "chunks": chunks, "statuses": statuses}


def project_builds(root: Path) -> dict:
    out = {}
    for structure in (False, True):
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.run([sys.executable, "-c", _CHILD, str(root), d, "1" if structure else "0"],
                                  capture_output=True, text=True, check=True)
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            files = {f: os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".clx")}
            result["sizes"] = files
            out["with" if structure else "without"] = result
    return out


def per_edit(root: Path, repeat: int = 30) -> dict:
    import codelex
    from codelex.structure import analyze

    big = next(p for p in sorted(root.rglob("*.py" if any(root.rglob("*.py")) else "*.c"))
               if 45_000 <= p.stat().st_size <= 60_000)
    rel = big.relative_to(root).as_posix()
    content = big.read_text(encoding="utf-8", errors="surrogateescape")
    out = {"file": rel, "bytes": len(content.encode("utf-8", "surrogateescape"))}
    with tempfile.TemporaryDirectory() as d:
        with codelex.Project(root, index_dir=d, debounce_ms=60_000) as p:
            p.open()
            p.wait_structure()
            for upkeep in (True, False):
                times = []
                for i in range(repeat):
                    text = content + f"\n# edit {i} {upkeep}\n"
                    if not upkeep:  # the word index alone, as before the structure stage
                        t = time.perf_counter()
                        p.index.update(rel, text)
                        times.append(time.perf_counter() - t)
                    else:
                        t = time.perf_counter()
                        p.on_edit(rel, text)
                        times.append(time.perf_counter() - t)
                out["on_edit_ms" if upkeep else "index_update_ms"] = statistics.median(times) * 1e3
            data = content.encode("utf-8", "surrogateescape")
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                analyze(rel, data)
                times.append(time.perf_counter() - t)
            out["background_analysis_ms"] = statistics.median(times) * 1e3
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", choices=["stdlib", "kernel"])
    parser.add_argument("--mb", type=float, help="only the first N MB of the corpus's files (throughput)")
    parser.add_argument("--no-builds", action="store_true", help="skip the project builds")
    args = parser.parse_args(argv)
    root, files = _corpus(args.corpus, args.mb)
    result = {"corpus": args.corpus, "root": str(root), "throughput": throughput(root, files)}
    print(json.dumps(result["throughput"]), flush=True)
    if not args.no_builds:
        # A copy of the standard library outside any git work tree (the installed one may sit in one).
        project_root = prepare_stdlib() if args.corpus == "stdlib" else root
        result["builds"] = project_builds(project_root)
        print(json.dumps(result["builds"]), flush=True)
        if args.corpus == "stdlib":
            result["per_edit"] = per_edit(project_root)
            print(json.dumps(result["per_edit"]), flush=True)
    out = Path(__file__).parent / "results" / f"structure-{args.corpus}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
