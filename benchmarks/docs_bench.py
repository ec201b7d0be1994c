"""Docs section search latency: the seed's single pass vs :class:`codelex.docs.DocsIndex`.

Usage::

    python benchmarks/docs_bench.py            # Linux Documentation/ (fetched on first use), CPython Doc/ if present

The Linux tree comes from ``apt-get download linux-source-6.1`` (see
``benchmarks/corpus.py``); tests never fetch it.
"""

from __future__ import annotations

import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import prepare_kernel  # noqa: E402

QUERIES = [
    "how to configure the device tree", "memory barriers", "submitting patches", "power management",
    "interrupt handling", "locking rules", "dma mapping api", "kernel parameters", "write a driver",
    "rcu read side critical section", "build the kernel documentation", "cgroup memory controller",
    "tracing with ftrace", "filesystem mount options", "networking offloads", "usb gadget configfs",
    "thermal zone", "spinlock vs mutex", "module parameters", "coding style indentation",
]


def sections_of(root: Path) -> list:
    from codelex.docs import sections_from_file

    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix.lower() in (".rst", ".md", ".txt") and p.is_file() and not p.is_symlink():
            rel = p.relative_to(root).as_posix()
            out.extend(sections_from_file(rel, p.read_text("utf-8", "replace")))
    return out


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def bench(name: str, root: Path) -> str:
    from codelex.docs import DocsIndex, search

    t = time.perf_counter()
    sections = sections_of(root)
    parse_s = time.perf_counter() - t
    t = time.perf_counter()
    index = DocsIndex(sections)
    index_s = time.perf_counter() - t
    plain, indexed = [], []
    for q in QUERIES:
        a = search(sections, q, 10)
        b = index.search(q, 10)
        assert [(h.section, h.score) for h in a] == [(h.section, h.score) for h in b], q
        for out, fn in ((plain, lambda: search(sections, q, 10)), (indexed, lambda: index.search(q, 10))):
            times = []
            for _ in range(3):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
            out.append(min(times))
    chars = sum(len(s.text) for s in sections)
    return "\n".join([
        f"{name}: {len({s.path for s in sections}):,} files, {len(sections):,} sections, {chars / 1e6:.1f} M characters; "
        f"parsing {parse_s:.2f} s, DocsIndex built in {index_s:.2f} s; {len(QUERIES)} queries, top 10, "
        "identical answers checked.",
        "",
        "| | p50 (ms) | p95 (ms) |",
        "|---|--:|--:|",
        f"| single pass (the seed's `search`) | {pct(plain, 50) * 1e3:.1f} | {pct(plain, 95) * 1e3:.1f} |",
        f"| `DocsIndex.search` | {pct(indexed, 50) * 1e3:.2f} | {pct(indexed, 95) * 1e3:.2f} |",
        f"| speed-up (p50) | {pct(plain, 50) / pct(indexed, 50):.0f}× | |",
    ])


def main() -> int:
    print(bench("Linux 6.1 Documentation/", prepare_kernel() / "Documentation"))
    doc = Path(sysconfig.get_paths()["stdlib"]).parent.parent / "share" / "doc"
    cpython = next((p for p in (Path(sys.prefix) / "Doc", doc) if p.is_dir() and any(p.rglob("*.rst"))), None)
    if cpython is not None:
        print()
        print(bench("CPython docs", cpython))
    else:
        print("\n(CPython's Doc/ tree is not installed on this machine; skipped.)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
