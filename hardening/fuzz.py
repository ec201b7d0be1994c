"""Time-budgeted, coverage-guided fuzzing of the targets in ``targets.py`` with atheris.

Usage::

    python hardening/fuzz.py --seconds 600              # every target, the budget split among them
    python hardening/fuzz.py --target tokenize --seconds 60
    python hardening/fuzz.py --list

Each target runs in its own process (libFuzzer owns the process) with its kept
corpus, ``hardening/corpus/<target>/``, as the seed; new interesting inputs go
to a scratch corpus, and ``--keep`` merges the smallest of them back.  A
crash (an unexpected exception, an assertion, a sanitizer report) leaves the
input in ``hardening/crashes/`` and fails the run.  The summary gives the
executions per target and in total.  Under a sanitizer build, run with the
runtime preloaded (see HARDENING.md).  Needs ``pip install atheris``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
CRASHES = HERE / "crashes"

_CHILD = r"""
import sys
sys.path.insert(0, {here!r})
import atheris
import targets
import codelex.text, codelex.lexical, codelex.query, codelex.graph, codelex.docs.sections
import codelex.project.config, codelex.structure.extract
import types
# codelex's own functions only (instrument_imports misses editable installs' loaders; instrument_all
# would spend half a minute on numpy and the rest).
for mod in [m for n, m in list(sys.modules.items()) if n.split(".")[0] in ("codelex", "tomllib", "pathspec")] + [targets]:
    for obj in list(vars(mod).values()):
        funcs = [obj] if isinstance(obj, types.FunctionType) else \
            [f for f in vars(obj).values() if isinstance(f, types.FunctionType)] if isinstance(obj, type) else []
        for f in funcs:
            if f.__module__ == mod.__name__:
                try:
                    atheris.instrument_func(f)
                except Exception:
                    pass
name = {name!r}
fn, expected = targets.TARGETS[name], targets.EXPECTED[name]

def one(data):
    try:
        fn(data)
    except expected:
        pass

atheris.Setup(sys.argv, one)
atheris.Fuzz()
"""


def run_target(name: str, seconds: float, keep: bool, max_len: int) -> dict:
    """Fuzz one target for ``seconds``; its executions, coverage and outcome."""
    seed = CORPUS / name
    seed.mkdir(parents=True, exist_ok=True)
    CRASHES.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"codelex-fuzz-{name}-"))
    argv = [sys.executable, "-c", _CHILD.format(here=str(HERE), name=name), str(scratch), str(seed),
            f"-max_total_time={max(1, int(seconds))}", f"-max_len={max_len}", "-print_final_stats=1",
            f"-artifact_prefix={CRASHES}/{name}-", "-rss_limit_mb=4096", "-timeout=20"]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    elapsed = time.perf_counter() - started
    log = proc.stderr
    execs = _stat(log, "stat::number_of_executed_units")
    if execs is None:  # killed before the final stats: the last progress line's count
        found = re.findall(r"^#(\d+)\s", log, re.M)
        execs = int(found[-1]) if found else 0
    cov = re.findall(r"cov: (\d+)", log)
    result = {"target": name, "seconds": round(elapsed, 1), "execs": execs, "coverage": int(cov[-1]) if cov else 0,
              "corpus": len(list(scratch.iterdir())), "crashed": proc.returncode != 0}
    if result["crashed"]:
        tail = "\n".join(log.splitlines()[-40:])
        result["log_tail"] = tail
    if keep and not result["crashed"]:
        _keep_smallest(scratch, seed)
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def _stat(log: str, key: str) -> int | None:
    m = re.search(rf"{re.escape(key)}:\s*(\d+)", log)
    return int(m.group(1)) if m else None


def _keep_smallest(scratch: Path, seed: Path, limit: int = 64, max_bytes: int = 4096) -> None:
    """Keep a few of the new inputs (the smallest, they reach the same code in less time)."""
    have = {p.read_bytes() for p in seed.iterdir()}
    new = sorted((p for p in scratch.iterdir() if p.stat().st_size <= max_bytes), key=lambda p: p.stat().st_size)
    room = max(0, limit - len(have))
    for p in new[:room]:
        data = p.read_bytes()
        if data not in have:
            (seed / p.name).write_bytes(data)
            have.add(data)


def main(argv=None) -> int:
    sys.path.insert(0, str(HERE))
    import targets

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="total budget, split among the targets")
    ap.add_argument("--target", action="append", help="only this target (repeatable)")
    ap.add_argument("--keep", action="store_true", help="merge new small inputs into the kept corpus")
    ap.add_argument("--max-len", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(targets.TARGETS))
        return 0
    names = args.target or list(targets.TARGETS)
    unknown = [n for n in names if n not in targets.TARGETS]
    if unknown:
        print(f"fuzz: unknown target(s) {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    results = [run_target(n, args.seconds / len(names), args.keep, args.max_len) for n in names]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print("| target | seconds | executions | coverage | new corpus | outcome |")
        print("|---|--:|--:|--:|--:|---|")
        for r in results:
            print(f"| {r['target']} | {r['seconds']} | {r['execs']:,} | {r['coverage']:,} | {r['corpus']} | "
                  f"{'CRASH' if r['crashed'] else 'clean'} |")
        print(f"| total | {sum(r['seconds'] for r in results):.0f} | {sum(r['execs'] for r in results):,} | | | "
              f"{sum(r['crashed'] for r in results)} crashed |")
        for r in results:
            if r["crashed"]:
                print(f"\n--- {r['target']} ---\n{r['log_tail']}", file=sys.stderr)
    return 1 if any(r["crashed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
