"""Everyday use: the watcher's write-to-answer latency and idle cost, and one-shot `codelex search` against `rg -l`.

Usage::

    python benchmarks/everyday_bench.py latency [--edits 100]     # a watched project on a stdlib copy
    python benchmarks/everyday_bench.py idle [--seconds 60]       # CPU of watching the Linux tree, idle
    python benchmarks/everyday_bench.py oneshot [--runs 7]        # pytest, stdlib copy, Linux: with/without server

``latency`` writes a file with a fresh identifier and polls the project's
search (no ``sync()``) until the answer holds it: the time from the write's
return to the first such answer, per edit.  ``idle`` opens a watched project
on the kernel tree and reads the process's CPU time over a quiet minute.
``oneshot`` times the whole command (``codelex search QUERY -l -q``, a fresh
process each time, median of runs) in-process (``CODELEX_NO_SERVER=1``) and
through a running server, beside ``rg -l`` for a word of the query, in one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import BENCH_DIR, prepare_kernel  # noqa: E402
from project_bench import prepare_stdlib  # noqa: E402


def _word(i: int) -> str:
    return "zqw" + "".join("abcdefghij"[int(c)] for c in str(i))


def latency(edits: int) -> str:
    from codelex import Project

    root = prepare_stdlib()
    target = root / "codelex_watch_probe.py"
    lat = []
    with Project(root, watch=True) as project:
        project.open()
        assert project.watching, project.watch_status
        for i in range(edits):
            word = _word(i)
            target.write_text(f"def {word}():\n    return {i}\n")
            t = time.perf_counter()
            while not project.search(word, limit=1).results:
                time.sleep(0.0005)
            lat.append(time.perf_counter() - t)
        status = project.watch_status
    target.unlink()
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, round(q / 100 * (len(lat) - 1)))] * 1e3  # noqa: E731
    return (f"write -> answer with the watcher ({status['backend']}, debounce {status['debounce_ms']:.0f} ms), "
            f"{edits} edits on {root}: p50 {pct(50):.1f} ms, p95 {pct(95):.1f} ms, max {lat[-1] * 1e3:.1f} ms")


def idle(seconds: float) -> str:
    from codelex import Project

    root = prepare_kernel()
    with Project(root, watch=True, build_structure=False) as project:
        t = time.perf_counter()
        project.open()
        opened = time.perf_counter() - t
        status = project.watch_status
        assert project.watching, status
        time.sleep(2)  # let the open's own writes settle
        c0, w0 = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return (f"watching the Linux tree ({status['backend']}; open {opened:.1f} s): {cpu * 1e3:.0f} ms of CPU over "
            f"{wall:.0f} s idle ({cpu / wall * 100:.2f} % of one core)")


def _time(cmd: list[str], env: dict, cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def oneshot(runs: int) -> str:
    codelex = shutil.which("codelex", path=os.path.dirname(sys.executable)) or "codelex"
    rg = shutil.which("rg")
    trees = []
    pytest_src = Path(__import__("_pytest").__file__).parent
    pytest_root = BENCH_DIR / "pytest-copy"
    if not pytest_root.exists():
        shutil.copytree(pytest_src, pytest_root / "src" / "_pytest",
                        ignore=shutil.ignore_patterns("__pycache__"))
    trees.append(("pytest (its _pytest package)", pytest_root, "fixture teardown", "teardown"))
    trees.append(("stdlib copy", prepare_stdlib(), "parse config file", "config"))
    trees.append(("Linux 6.1", prepare_kernel(), "schedule timer interrupt", "schedule_timeout"))
    runtime = Path(tempfile.mkdtemp(prefix="codelex-bench-run-"))
    os.chmod(runtime, 0o700)
    base_env = {k: v for k, v in os.environ.items() if k != "CODELEX_NO_SERVER"}
    served_env = dict(base_env, XDG_RUNTIME_DIR=str(runtime))
    local_env = dict(base_env, CODELEX_NO_SERVER="1")
    server = subprocess.Popen([codelex, "serve", "--idle-timeout", "600"], env=served_env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = ["| tree | files | `rg -l` (ms) | codelex in-process (ms) | ÷ rg | codelex with the server (ms) | ÷ rg |",
            "|---|--:|--:|--:|--:|--:|--:|"]
    try:
        while subprocess.run([codelex, "serve", "--status"], env=served_env, capture_output=True).returncode:
            time.sleep(0.1)
        for name, root, query, pattern in trees:
            cmd = [codelex, "search", query, "-l", "-q"]
            subprocess.run([codelex, "index"], env=local_env, cwd=root, capture_output=True)  # warm, saved
            subprocess.run(cmd, env=served_env, cwd=root, capture_output=True)  # the server loads this root
            files = subprocess.run([codelex, "status", "--json"], env=local_env, cwd=root, capture_output=True,
                                   text=True).stdout
            n = __import__("json").loads(files)["indexed"]
            rg_s = _time([rg, "-l", "-i", pattern], base_env, root, runs) if rg else float("nan")
            local_s = _time(cmd, local_env, root, runs)
            served_s = _time(cmd, served_env, root, runs)
            rows.append(f"| {name} | {n:,} | {rg_s * 1e3:.0f} | {local_s * 1e3:.0f} | {local_s / rg_s:.2f} | "
                        f"{served_s * 1e3:.0f} | {served_s / rg_s:.2f} |")
    finally:
        subprocess.run([codelex, "serve", "--stop"], env=served_env, capture_output=True)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(runtime, ignore_errors=True)
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("latency").add_argument("--edits", type=int, default=100)
    sub.add_parser("idle").add_argument("--seconds", type=float, default=60.0)
    sub.add_parser("oneshot").add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    if args.what == "latency":
        print(latency(args.edits))
    elif args.what == "idle":
        print(idle(args.seconds))
    else:
        print(oneshot(args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
