"""Docs section search: build, load and answer times on real documentation trees.

Usage::

    python benchmarks/docs_bench.py pytest fastapi linux   # any of them; default: the ones present

Corpora (never fetched by tests):

- ``pytest``: the pytest 8.3.5 sdist, unpacked (``doc/en``: Sphinx reST), at
  ``~/.cache/codelex-bench/corpora/pytest-8.3.5`` (``pip download --no-binary :all: --no-deps pytest==8.3.5``);
- ``fastapi``: fastapi's ``docs/`` (MkDocs Markdown with ``{ #id }`` heading attributes, English and
  translations) at ``~/.cache/codelex-bench/corpora/fastapi``;
- ``linux``: Linux 6.1's ``Documentation/`` (from ``apt-get download linux-source-6.1``; ``corpus.prepare_kernel``).

For each: the cold build (walk, parse, store written), a one-shot load (walk, the store mapped and
checked, nothing parsed), the served check (walk only, the index in memory), then warm answers, the
default (main language) and every language, each checked against the seed's single pass over the
same sections; and the whole command, one-shot (``CODELEX_NO_SERVER=1``) and served, timed
end to end.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

CORPORA = Path.home() / ".cache" / "codelex-bench" / "corpora"

QUERIES = {
    "pytest": ["how to use fixtures", "parametrize tests", "monkeypatch setattr", "capture stdout output",
               "skip test on windows", "tmp_path fixture", "assert rewriting", "conftest.py plugins",
               "register custom markers", "xfail strict", "fixture finalization teardown", "cache plugin",
               "doctest integration", "warnings filter", "junit xml report", "logging caplog", "test discovery",
               "ini options", "unittest support", "writing hooks"],
    "fastapi": ["dependencies with yield", "query parameters validation", "request body", "path parameters",
                "response model", "background tasks", "cors middleware", "oauth2 jwt", "sql databases",
                "testing with testclient", "static files", "handling errors", "security first steps",
                "bigger applications multiple files", "header parameters", "cookie parameters",
                "upload files", "deployment docker", "async await", "openapi schema"],
    "linux": ["how to configure the device tree", "memory barriers", "submitting patches", "power management",
              "interrupt handling", "locking rules", "dma mapping api", "kernel parameters", "write a driver",
              "rcu read side critical section", "build the kernel documentation", "cgroup memory controller",
              "tracing with ftrace", "filesystem mount options", "networking offloads", "usb gadget configfs",
              "thermal zone", "spinlock vs mutex", "module parameters", "coding style indentation"],
}


def corpus_root(name: str) -> Path | None:
    if name == "pytest":
        root = CORPORA / "pytest-8.3.5"
    elif name == "fastapi":
        root = CORPORA / "fastapi"
    elif name == "linux":
        from corpus import prepare_kernel

        root = prepare_kernel() / "Documentation"
    else:
        raise SystemExit(f"unknown corpus {name!r} (pytest, fastapi, linux)")
    return root if root.is_dir() else None


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def timed(fn, repeat: int = 1):
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def command(args, env, cwd) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "codelex", *args], env=env, cwd=cwd, capture_output=True, check=False,
                   timeout=300)
    return time.perf_counter() - t


def bench(name: str, source: Path) -> list[str]:
    from codelex.docs import DocsIndex, search

    work = Path(tempfile.mkdtemp(prefix=f"codelex-docs-{name}-"))
    try:
        root = work / name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".codelex"), symlinks=True)
        build_s, built = timed(lambda: DocsIndex.for_project(root))
        load_s, loaded = timed(lambda: DocsIndex.for_project(root), repeat=5)
        check_s, _ = timed(lambda: DocsIndex.for_project(root, previous=loaded), repeat=5)
        store = next((p for p in (root / ".codelex").glob("docs.clx")), None)
        sections = loaded.sections
        rows = []
        seed_times = []
        for label, language in (("main language (default)", None), ("every language", "all")):
            times, checked = [], 0
            for q in QUERIES[name]:
                got = loaded.search(q, 10, language=language)
                tag = None if language == "all" else (loaded.main_language or None)
                kept = [s for s in sections if tag is None or loaded.language_of(s.path) in ("", tag)]
                started = time.perf_counter()
                want = search(kept, q, 10)  # the original's docs search: one pass scoring every section
                if language is None:
                    seed_times.append(time.perf_counter() - started)
                assert [(h.section, h.score) for h in got] == [(h.section, h.score) for h in want], q
                checked += 1
                first = None
                for k in range(5):
                    t = time.perf_counter()
                    loaded.search(q, 10, language=language)
                    elapsed = time.perf_counter() - t
                    first = elapsed if first is None else first
                    times.append(elapsed)
            rows.append((label, times, checked))
        # First touch: a fresh process loads the store and answers one query (each query in its own process).
        probe = ("import sys, time; t = time.perf_counter(); from codelex.docs import DocsIndex; "
                 "i = DocsIndex.for_project(sys.argv[1]); t1 = time.perf_counter(); i.search(sys.argv[2], 10); "
                 "t2 = time.perf_counter(); print(t1 - t, t2 - t1)")
        first_load, first_query = [], []
        for q in QUERIES[name][:5]:
            out = subprocess.run([sys.executable, "-c", probe, str(root), q], capture_output=True, text=True,
                                 cwd=tempfile.gettempdir(), timeout=300, check=True).stdout.split()
            first_load.append(float(out[0]))
            first_query.append(float(out[1]))
        env = dict(os.environ)
        env.pop("CODELEX_NO_SERVER", None)
        runtime = work / "run"
        runtime.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(runtime)
        one_shot_env = dict(env, CODELEX_NO_SERVER="1")
        queries = QUERIES[name][:10]
        one_shot = [command(["docs", q, "-q", "-n", "5"], one_shot_env, root) for q in queries]
        subprocess.Popen([sys.executable, "-m", "codelex", "serve", "--idle-timeout", "60"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while subprocess.run([sys.executable, "-m", "codelex", "serve", "--status"], env=env,
                             capture_output=True).returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        command(["docs", queries[0], "-q"], env, root)  # (the server opens the root's docs)
        served = [command(["docs", q, "-q", "-n", "5"], env, root) for q in queries]
        subprocess.run([sys.executable, "-m", "codelex", "serve", "--stop"], env=env, capture_output=True)
        chars = sum(len(s.text) for s in sections)
        languages = ", ".join(f"{tag or 'neutral'} {n:,}" for tag, n in loaded.languages.items())
        out = [
            f"{name}: {loaded.files:,} documents, {len(loaded):,} sections, {chars / 1e6:.1f} M characters "
            f"(sections by language: {languages}); store {store.stat().st_size / 2**20:.1f} MiB" if store else "",
            "",
            "| | ms |",
            "|---|--:|",
            f"| cold build (walk, parse, store written) | {build_s * 1e3:.0f} |",
            f"| one-shot load (walk, store mapped and checked) | {load_s * 1e3:.1f} |",
            f"| served check (walk; index in memory) | {check_s * 1e3:.1f} |",
        ]
        out.append(f"| first touch, fresh process: import + load / first query, p50 of {len(first_load)} | "
                   f"{statistics.median(first_load) * 1e3:.0f} / {statistics.median(first_query) * 1e3:.2f} |")
        for label, times, checked in rows:
            out.append(f"| warm answer, {label}: p50 / p95 / max ({checked} queries × 5, = the seed's scoring) | "
                       f"{pct(times, 50) * 1e3:.2f} / {pct(times, 95) * 1e3:.2f} / {max(times) * 1e3:.2f} |")
        out.append(f"| the original's single pass over the same sections (main language): p50 / p95 / max | "
                   f"{pct(seed_times, 50) * 1e3:.2f} / {pct(seed_times, 95) * 1e3:.2f} / {max(seed_times) * 1e3:.2f} |")
        out.append(f"| `codelex docs` one-shot (`CODELEX_NO_SERVER=1`), p50 / max of {len(one_shot)} | "
                   f"{statistics.median(one_shot) * 1e3:.0f} / {max(one_shot) * 1e3:.0f} |")
        out.append(f"| `codelex docs` served, p50 / max of {len(served)} | "
                   f"{statistics.median(served) * 1e3:.0f} / {max(served) * 1e3:.0f} |")
        del built
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    names = argv or ["pytest", "fastapi", "linux"]
    for name in names:
        root = corpus_root(name)
        if root is None:
            print(f"({name}: no corpus at its place; skipped)\n")
            continue
        print("\n".join(bench(name, root)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
