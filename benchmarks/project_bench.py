"""End-to-end project benchmarks: cold build from disk, warm open, refresh.

Usage::

    python benchmarks/project_bench.py stdlib          # a copy of the CPython standard library
    python benchmarks/project_bench.py kernel          # Linux 6.1 from Debian's linux-source-6.1

The kernel source is fetched with ``apt-get download linux-source-6.1`` into
``$CODELEX_BENCH_DIR`` (default ``~/.cache/codelex-bench``) on first use and
unpacked there; tests never do this.  Debian's package appends ``/*`` and
``!/debian/`` to the top-level ``.gitignore`` (its packaging repository
ignores the upstream tree); the benchmark removes those two lines so that
the tree is walked as an upstream checkout would be.

Each cold build runs in a fresh process so that its peak RSS can be read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import BENCH_DIR, prepare_kernel  # noqa: E402

_CHILD = r"""
import json, resource, sys, time
import codelex
root, index_dir, mode = sys.argv[1], sys.argv[2], sys.argv[3]
import codelex.project  # (imports are not the open: `import codelex` alone no longer loads the core)
t = time.perf_counter()
p = codelex.Project(root, index_dir=index_dir)
p.open()
seconds = time.perf_counter() - t
r = p.last_report
t = time.perf_counter()
res = p.search(sys.argv[4], limit=10)
query_s = time.perf_counter() - t
print(json.dumps({
    "seconds": seconds, "mode": r.mode, "reason": r.reason, "files": r.files, "refreshed": r.refreshed,
    "added": r.added, "dropped": r.dropped, "skipped": dict(r.skipped), "pruned_dirs": dict(r.pruned_dirs),
    "stats": p.index.stats() if p.index is not None else None, "query_s": query_s,
    "top": [h.file for h in res.results[:5]],
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
p.close()
"""


def run_open(root: Path, index_dir: Path, query: str) -> dict:
    """Open the project in a fresh interpreter; returns its report."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root), str(index_dir), "open", query],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def prepare_stdlib() -> Path:
    src = Path(sysconfig.get_paths()["stdlib"])
    dest = BENCH_DIR / "stdlib"
    if not dest.exists():
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True)
    return dest


def touch_files(root: Path, n: int) -> list[str]:
    """Bump the mtime of n files spread over the tree (as ``touch`` does)."""
    candidates = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    files = candidates[:: max(1, len(candidates) // n)][:n]
    now = time.time_ns()
    for p in files:
        os.utime(p, ns=(now, now))
    return [str(p.relative_to(root)) for p in files]


def ripgrep_seconds(root: Path, pattern: str) -> tuple[float, int] | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    best = None
    count = 0
    for _ in range(3):
        t = time.perf_counter()
        out = subprocess.run([rg, "-l", "-i", pattern, str(root)], capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        count = len(out.stdout.splitlines())
        best = elapsed if best is None else min(best, elapsed)
    return best, count


def table(name: str, root: Path, query: str, rg_pattern: str, touch: int) -> str:
    source_bytes = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    with tempfile.TemporaryDirectory() as d:
        index_dir = Path(d) / "index"
        cold = run_open(root, index_dir, query)
        warm = [run_open(root, index_dir, query) for _ in range(3)]
        warm_best = min(w["seconds"] for w in warm)
        disk = (index_dir / "index.clx").stat().st_size
        lines = [
            f"{name}: {root} ({source_bytes / 2**20:.0f} MiB in all files)",
            "",
            "| measure | value |",
            "|---|--:|",
            f"| cold build from disk (walk, read, tokenize, save) | {cold['seconds']:.2f} s |",
            f"| files indexed | {cold['files']:,} |",
            f"| files skipped, by reason | {', '.join(f'{k} {v:,}' for k, v in sorted(cold['skipped'].items()))} |",
            f"| directories pruned, by reason | {', '.join(f'{k} {v:,}' for k, v in sorted(cold['pruned_dirs'].items()))} |",
            f"| distinct tokens / (token, file) postings | {cold['stats']['tokens']:,} / {cold['stats']['term_doc_pairs']:,} |",
            f"| peak RSS of the cold build | {cold['rss_mb']:.0f} MiB |",
            f"| index on disk | {disk / 2**20:.1f} MiB |",
            f"| warm open, nothing changed (best of 3, fresh process each) | {warm_best * 1e3:.0f} ms |",
            f"| first query after a warm open: `{query}` | {warm[-1]['query_s'] * 1e3:.2f} ms |",
        ]
        if touch:
            touched = touch_files(root, touch)
            refresh = run_open(root, index_dir, query)
            lines.append(f"| open after touching {len(touched)} files ({refresh['mode']}, "
                         f"{refresh['refreshed']} refreshed) | {refresh['seconds'] * 1e3:.0f} ms |")
        rg = ripgrep_seconds(root, rg_pattern)
        if rg is not None:
            lines.append(f"| `rg -l -i '{rg_pattern}'` over the same tree (best of 3; {rg[1]:,} files) | "
                         f"{rg[0] * 1e3:.0f} ms |")
        lines.append(f"| top results for `{query}` | {', '.join(cold['top'][:3])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=["stdlib", "kernel"])
    args = parser.parse_args(argv)
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    if args.corpus == "stdlib":
        root = prepare_stdlib()
        print(table("CPython standard library (copy)", root, "parse config file", "parse.*config", touch=10))
    else:
        root = prepare_kernel()
        print(table("Linux 6.1 (Debian linux-source-6.1)", root, "schedule timer interrupt", "schedule_timeout",
                    touch=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
