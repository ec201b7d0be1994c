"""The side-by-side suite: every contender on one corpus, in one run, as ratios to codelex.

Each contender runs in two fresh processes: ``build`` (index the files from
disk, save, measure the build's peak RSS and, for codelex, single-file
updates) and ``serve`` (load the saved index, answer the query list, measure
the loaded process's RSS).  ``python benchmarks/compare.py suite --corpus
stdlib`` drives it and prints the table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from contenders import Codelex, all_contenders, contender_by_name  # noqa: E402
from corpus import materialize  # noqa: E402
from queries import NATURAL  # noqa: E402

FILTERED_TEMPLATES = ["lang:{lang} {q}", "-file:test {q}", "file:{dir}/ {q}"]
_IDENT = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{5,}\b")
_WORD = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]+\b")


def identifier_mix(root: Path, paths: list[str], n: int = 60, seed: int = 2) -> list[str]:
    """One to three consecutive identifiers as written in a sampled file (``return int``, ``struct device``...).

    Unlike the other sampled queries these keep common words: they stand for
    the common-term queries whose long lists decide the tail latency.
    """
    rng = random.Random(seed)
    out: list[str] = []
    attempts = 0
    while len(out) < n and attempts < 50 * n:
        attempts += 1
        found = _WORD.findall((root / paths[rng.randrange(len(paths))]).read_bytes()[:65536])
        if not found:
            continue
        i = rng.randrange(len(found))
        out.append(" ".join(w.decode() for w in found[i:i + rng.randint(1, 3)]))
    return out


def query_set(root: Path, paths: list[str], seed: int = 0, n_sampled: int = 40) -> dict[str, list[str]]:
    """Natural queries, identifiers and word pairs sampled from the corpus, and filtered variants."""
    import codelex

    rng = random.Random(seed)
    identifiers: list[str] = []
    pairs: list[str] = []
    attempts = 0
    while (len(identifiers) < n_sampled // 2 or len(pairs) < n_sampled // 2) and attempts < 20 * n_sampled:
        attempts += 1
        path = paths[rng.randrange(len(paths))]
        found = _IDENT.findall((root / path).read_bytes()[:65536])
        if not found:
            continue
        ident = rng.choice(found).decode()
        pieces = codelex.split_identifier(ident)[1:]
        if len(identifiers) < n_sampled // 2:
            identifiers.append(ident)
        elif len(pieces) >= 2:
            pairs.append(" ".join(pieces[:2]))
    top_dirs = sorted({p.split("/", 1)[0] for p in paths if "/" in p}) or ["src"]
    kinds = sorted({codelex.kinds.kind_of(p) for p in paths[:2000]} - {None}) or ["python"]
    filtered = []
    for i, q in enumerate(NATURAL[:10] + identifiers[:5]):
        template = FILTERED_TEMPLATES[i % len(FILTERED_TEMPLATES)]
        filtered.append(template.format(lang=kinds[i % len(kinds)], dir=top_dirs[i % len(top_dirs)], q=q))
    return {"natural": NATURAL, "identifier": identifiers, "pair": pairs, "mix": identifier_mix(root, paths),
            "filtered": filtered}


def _rss_now_mb(field: str = "VmRSS") -> float:
    """The process's resident memory in MiB: all of it (``VmRSS``), or one part (``RssAnon``, ``RssFile``)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if field == "VmRSS" else 0.0


def _latencies(search, queries: list[str], reps: int) -> list[float]:
    out = []
    for q in queries:
        search(q)  # warm-up
        times = []
        for _ in range(reps):
            t = time.perf_counter_ns()
            search(q)
            times.append(time.perf_counter_ns() - t)
        times.sort()
        out.append(times[len(times) // 2] / 1e9)
    return out


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def run_build(name: str, corpus: str, workdir: Path) -> dict:
    root, paths = materialize(corpus)
    c = contender_by_name(name, corpus)
    t = time.perf_counter()
    c.build(root, paths, workdir)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    c.save(workdir)
    save_s = time.perf_counter() - t
    from contenders import dir_bytes

    out = {"build_s": build_s, "save_s": save_s, "index_bytes": dir_bytes(workdir),
           "source_bytes": sum((root / p).stat().st_size for p in paths), "files": len(paths)}
    if isinstance(c, Codelex):
        rng = random.Random(1)
        times = []
        for i, p in enumerate(rng.sample(paths, min(50, len(paths)))):
            data = (root / p).read_bytes()
            lines = data.split(b"\n")
            edited = b"\n".join(lines[: len(lines) // 2] + [b"edited_value_%d = 1" % i] + lines[len(lines) // 2:])
            t = time.perf_counter_ns()
            c.update(root, paths, p, edited, workdir)
            times.append((time.perf_counter_ns() - t) / 1e6)
        out["update_ms_p50"] = pct(times, 50)
        out["update_ms_p95"] = pct(times, 95)
    out["build_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_serve(name: str, corpus: str, workdir: Path, queries: dict[str, list[str]]) -> dict:
    from contenders import Ripgrep

    c = contender_by_name(name, corpus)
    root, _ = materialize(corpus)
    c.import_modules()
    base = _rss_now_mb()
    t = time.perf_counter()
    c.load(workdir)
    load_s = time.perf_counter() - t
    rss_after_load = _rss_now_mb() - base
    if isinstance(c, Ripgrep):
        c.root = root  # it scans the corpus directory on every query
    reps = 1 if isinstance(c, Ripgrep) else 15
    plain = queries["natural"] + queries["identifier"] + queries["pair"]
    lat = _latencies(c.search, plain, reps)
    mix = _latencies(c.search, queries.get("mix", []), reps)
    out = {"load_s": load_s, "query_p50_s": pct(lat, 50), "query_p95_s": pct(lat, 95),
           "mix_p50_s": pct(mix, 50), "mix_p95_s": pct(mix, 95), "rss_after_load_mb": rss_after_load}
    if c.filters:
        out["filtered_p50_s"] = pct(_latencies(c.search, queries["filtered"], reps), 50)
    out["loaded_rss_mb"] = _rss_now_mb()
    out["loaded_rss_delta_mb"] = out["loaded_rss_mb"] - base
    # File-backed pages (a mapped index) are page cache the kernel can drop and refault; anonymous ones are not.
    out["loaded_rss_anon_mb"] = _rss_now_mb("RssAnon")
    out["loaded_rss_file_mb"] = _rss_now_mb("RssFile")
    return out


def run_contender(name: str, corpus: str, workdir: Path, queries_file: Path, timeout: float) -> dict:
    """Both phases of one contender, each in a fresh interpreter."""
    result: dict = {"contender": name}
    for phase in ("build", "serve"):
        cmd = [sys.executable, __file__, "one", "--contender", name, "--corpus", corpus, "--phase", phase,
               "--workdir", str(workdir), "--queries", str(queries_file)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            result["error"] = f"{phase}: timed out after {timeout:.0f} s"
            return result
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            result["error"] = f"{phase}: {tail}"
            return result
        result.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    one = sub.add_parser("one")
    one.add_argument("--contender", required=True)
    one.add_argument("--corpus", required=True)
    one.add_argument("--phase", choices=("build", "serve"), required=True)
    one.add_argument("--workdir", required=True, type=Path)
    one.add_argument("--queries", required=True, type=Path)
    args = parser.parse_args(argv)
    queries = json.loads(args.queries.read_text())
    if args.phase == "build":
        out = run_build(args.contender, args.corpus, args.workdir)
    else:
        out = run_serve(args.contender, args.corpus, args.workdir, queries)
    print(json.dumps(out))
    return 0


__all__ = ["all_contenders", "query_set", "run_contender"]

if __name__ == "__main__":
    sys.exit(main())
