"""Crash consistency: SIGKILL a writer at random points, then check the last complete state loads and answers.

Usage::

    python hardening/crash.py --trials 100            # every kind
    python hardening/crash.py --kind save --trials 20

Kinds: ``save`` (``WordIndex.save`` after updates), ``debounced``
(``PersistScheduler`` saving in its background thread while updates keep
coming), ``merge`` (updates, ``merge()``, save) and ``embeddings`` (the
vector store's ``save_embeddings``).  For each trial a child process loads
the saved state, announces that it is about to write, and writes; the parent
kills it (SIGKILL) after a random delay drawn over the measured length of
the write.  The directory must then load and answer exactly as one of the
complete states the child could have written (the old one or the new one;
for ``debounced``, any prefix of the updates), and a later save must work.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = [f"w{i}" for i in range(400)] + ["parse", "config", "getUserByID", "http_server", "café", "load", "save"]
QUERIES = ["parse config", "getUserByID", "w1 w2", "w17", "café load", "http server save", "lang:python w3",
           "file:src w5"]
KINDS = ("save", "debounced", "merge", "embeddings")


def _doc(rng: random.Random, lines: int) -> str:
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(lines))


def base_docs(n: int = 3000, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    exts = (".py", ".ts", ".go", ".rs", ".md")
    return [(f"{'src' if i % 3 else 'lib'}/m{i // 50}/f{i}{exts[i % len(exts)]}", _doc(rng, rng.randint(5, 60)))
            for i in range(n)]


def ops_for(seed: int, n: int = 12) -> list[tuple]:
    """The updates a trial applies (the same in the child and in the parent's expectation)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        path = f"{'src' if rng.random() < 0.7 else 'lib'}/m{rng.randint(0, 70)}/f{rng.randint(0, 3500)}.py"
        out.append(("remove", path) if rng.random() < 0.25 else ("update", path, _doc(rng, rng.randint(1, 40))))
    return out


def apply(index, op) -> None:
    if op[0] == "update":
        index.update(op[1], op[2])
    else:
        index.remove(op[1])


def answers(index) -> str:
    """Every query's results in both rankings, as one comparable string (scores to the last bit)."""
    import codelex

    out = {}
    for q in QUERIES:
        for ranking in codelex.RANKINGS:
            out[f"{ranking}:{q}"] = [(h.file, h.score.hex(), h.hits, h.start_line)
                                     for h in index.search(q, limit=20, ranking=ranking)]
    return json.dumps(out, sort_keys=True)


_CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import crash
import codelex
kind, directory, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "embeddings":
    import numpy as np
    from codelex.persist.embeddings import save_embeddings
    keys, vectors = crash.embedding_state(seed)
    print("READY", flush=True)
    t = time.perf_counter()
    save_embeddings(directory, "fuzz-model", keys, vectors)
else:
    index = codelex.WordIndex.load(directory)
    index.merge_ratio, index.merge_min_postings = 10.0, 1 << 60  # merges only when asked
    ops = crash.ops_for(seed)
    if kind == "debounced":
        from codelex import PersistScheduler
        saver = PersistScheduler(index, directory, debounce_ms=5)
        print("READY", flush=True)
        t = time.perf_counter()
        for op in ops:
            crash.apply(index, op)
            saver.schedule()
            time.sleep(0.002)
        saver.flush()
    else:
        for op in ops:
            crash.apply(index, op)
        if kind == "merge":
            print("READY", flush=True)
            t = time.perf_counter()
            index.merge()
        else:
            print("READY", flush=True)
            t = time.perf_counter()
        index.save(directory)
print("DONE", time.perf_counter() - t, flush=True)
"""


def embedding_state(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 60_000 + int(rng.integers(0, 20_000))
    keys = np.unique(rng.integers(0, 2**62, size=n, dtype=np.int64)).astype(np.uint64)
    return keys, rng.standard_normal((len(keys), 64)).astype(np.float32)


def _spawn(kind: str, directory: Path, seed: int) -> subprocess.Popen:
    here = str(Path(__file__).resolve().parent)
    return subprocess.Popen([sys.executable, "-c", _CHILD.format(here=here), kind, str(directory), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        raise RuntimeError(f"writer did not start: {line!r} {proc.stderr.read()[-2000:]}")


def run_kind(kind: str, trials: int, seed: int = 0) -> dict:
    import codelex
    from codelex.persist.embeddings import load_embeddings, save_embeddings

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix=f"codelex-crash-{kind}-"))
    base = work / "base"
    if kind == "embeddings":
        keys, vectors = embedding_state(10_000)
        save_embeddings(base, "fuzz-model", keys, vectors)
    else:
        codelex.WordIndex.build(base_docs()).save(base)
    original = codelex.WordIndex.load(base) if kind != "embeddings" else None
    before = answers(original) if original is not None else None

    def fresh_dir(i: int) -> Path:
        d = work / f"t{i}"
        shutil.copytree(base, d)
        return d

    # The write's length, measured once (the kill delays are drawn over it).
    probe = fresh_dir(-1)
    proc = _spawn(kind, probe, 1)
    _wait_ready(proc)
    out, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"the {kind} writer failed: {err[-2000:]}")
    window = float(out.split()[-1])
    outcomes = {"old": 0, "new": 0, "intermediate": 0, "bad": 0}
    mid_write = 0
    failures = []
    for i in range(trials):
        trial_seed = 1000 + i
        d = fresh_dir(i)
        proc = _spawn(kind, d, trial_seed)
        _wait_ready(proc)
        time.sleep(rng.uniform(0, window * 1.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if any(p.name.endswith(".tmp") for p in d.rglob("*")):
            mid_write += 1  # a temporary was left: killed inside the write itself
        try:
            if kind == "embeddings":
                got = load_embeddings(d, "fuzz-model")
                old_keys, old_vectors = embedding_state(10_000)
                new_keys, new_vectors = embedding_state(trial_seed)
                if got is not None and np.array_equal(got[0], old_keys) and np.array_equal(got[1], old_vectors):
                    outcomes["old"] += 1
                elif got is not None and np.array_equal(got[0], new_keys) and np.array_equal(got[1], new_vectors):
                    outcomes["new"] += 1
                else:
                    outcomes["bad"] += 1
                    failures.append((i, "embeddings neither old nor new"))
                save_embeddings(d, "fuzz-model", new_keys, new_vectors)  # and the next write works
                continue
            loaded = codelex.WordIndex.load(d)
            loaded.verify()
            got = answers(loaded)
            states = [before]
            replay = codelex.WordIndex.load(base)
            for op in ops_for(trial_seed):
                apply(replay, op)
                states.append(answers(replay))
            if got == states[0]:
                outcomes["old"] += 1
            elif got == states[-1]:
                outcomes["new"] += 1
            elif kind == "debounced" and got in states:
                outcomes["intermediate"] += 1
            else:
                outcomes["bad"] += 1
                failures.append((i, "answers match no complete state"))
            loaded.update("after/crash.py", "parse config")
            loaded.save(d)  # the next save works over whatever the kill left
            codelex.WordIndex.load(d)
        except Exception as exc:  # noqa: BLE001 - every failure is a finding
            outcomes["bad"] += 1
            failures.append((i, f"{type(exc).__name__}: {exc}"))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return {"kind": kind, "trials": trials, "write_ms": round(window * 1e3, 1), "killed_mid_write": mid_write,
            **outcomes, "failures": failures[:5]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", action="append", choices=KINDS)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = [run_kind(k, args.trials, args.seed) for k in (args.kind or KINDS)]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print("| kind | trials | write (ms) | killed mid-write | old state | new state | intermediate | bad |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        for r in results:
            print(f"| {r['kind']} | {r['trials']} | {r['write_ms']} | {r['killed_mid_write']} | {r['old']} | "
                  f"{r['new']} | {r['intermediate']} | {r['bad']} |")
        for r in results:
            for f in r["failures"]:
                print(f"{r['kind']} trial {f[0]}: {f[1]}", file=sys.stderr)
    return 1 if any(r["bad"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
